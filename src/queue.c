/*
 * queue.c
 *		Queues: create_queue, alter_queue, drop_queue, the validation of
 *		their settings (their params: params.c), and loading a queue for
 *		matching.
 */
#include "matchmaker.h"

#include <math.h>

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "storage/sinval.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mm_create_queue);
PG_FUNCTION_INFO_V1(mm_alter_queue);
PG_FUNCTION_INFO_V1(mm_drop_queue);

/* Largest match: the team split and the tick's arrays are sized for it. */
#define MM_MAX_PLAYERS	1000

/* Bounds of the intervals, in seconds. */
#define MM_MAX_MAX_WAIT	(365.0 * SECS_PER_DAY)
#define MM_MIN_TICK		0.001
#define MM_MAX_TICK		((double) SECS_PER_DAY)

/* The settings of a queue, as create_queue and alter_queue take them. */
typedef struct QueueSettings
{
	char	   *name;
	int32		team_size;
	int32		teams;
	char	   *algorithm;
	Interval   *max_wait;
	double		rating_min;
	double		rating_max;
	Interval   *tick;
	Jsonb	   *params;
} QueueSettings;

/* Seconds in an interval, counting a month as 30 days like extract(epoch). */
double
mm_interval_seconds(const Interval *iv)
{
	return (double) iv->time / USECS_PER_SEC +
		(double) iv->day * SECS_PER_DAY +
		(double) iv->month * DAYS_PER_MONTH * SECS_PER_DAY;
}

/* An interval as text, for messages. */
static char *
interval_text(Interval *iv)
{
	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(iv)));
}

/* Refuse a name for a new queue that is empty, too long or hard to read back. */
static void
validate_name(const char *name)
{
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue name must not be empty"),
				 errhint("Name the queue after its game mode, for example 'duel'.")));
	if (strlen(name) > NAMEDATALEN - 1)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("queue name is too long"),
				 errdetail("The name has %zu bytes; at most %d are allowed.",
						   strlen(name), NAMEDATALEN - 1),
				 errhint("Use a shorter name.")));
	for (const unsigned char *c = (const unsigned char *) name; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("queue name must not contain control characters"),
					 errdetail("Byte %d is 0x%02x.", (int) (c - (const unsigned char *) name) + 1, *c),
					 errhint("Name the queue after its game mode, for example 'duel'.")));
	if (name[0] == ' ' || name[strlen(name) - 1] == ' ')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue name must not begin or end with a space"),
				 errdetail("Got \"%s\".", name),
				 errhint("Name the queue after its game mode, for example 'duel'.")));
}

/* Refuse settings out of their domain; fill cfg from them. */
static void
validate_settings(QueueSettings *s, MMConfig *cfg, MMCriteria *criteria)
{
	double		max_wait = mm_interval_seconds(s->max_wait);
	double		tick = mm_interval_seconds(s->tick);
	bool		wait_factor_set;
	MMStatus	st;

	if (s->team_size < 1 || s->teams < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least 1", s->team_size < 1 ? "team_size" : "teams"),
				 errdetail("Got %d.", s->team_size < 1 ? s->team_size : s->teams),
				 errhint("A one-on-one queue has team_size 1 and teams 2.")));
	if ((int64) s->team_size * s->teams < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a match needs at least 2 players"),
				 errdetail("team_size %d times teams %d is %d.",
						   s->team_size, s->teams, s->team_size * s->teams),
				 errhint("A one-on-one queue has team_size 1 and teams 2.")));
	if ((int64) s->team_size * s->teams > MM_MAX_PLAYERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a match can have at most %d players", MM_MAX_PLAYERS),
				 errdetail("team_size %d times teams %d is %lld.",
						   s->team_size, s->teams, (long long) s->team_size * s->teams),
				 errhint("Use fewer or smaller teams.")));
	if (mm_algorithm_parse(s->algorithm, &cfg->algorithm) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown matchmaking algorithm \"%s\"", mm_shorten(s->algorithm)),
				 errhint("Valid algorithms are greedy, periodic, multi_queue, difference_wait, window, cluster and optimize.")));
	if (!(max_wait > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_wait must be positive"),
				 errdetail("Got %s.", interval_text(s->max_wait)),
				 errhint("max_wait is how long a player may wait before on_timeout applies, for example '2 minutes'.")));
	if (!(max_wait <= MM_MAX_MAX_WAIT))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_wait must be at most 365 days"),
				 errdetail("Got %s.", interval_text(s->max_wait)),
				 errhint("max_wait is how long a player may wait before on_timeout applies, for example '2 minutes'.")));
	if (!(tick >= MM_MIN_TICK && tick <= MM_MAX_TICK))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(tick > 0 ? "tick must be between 1 millisecond and 1 day" : "tick must be positive"),
				 errdetail("Got %s.", interval_text(s->tick)),
				 errhint("tick is how often the queue's timers are checked, for example '1 second'.")));
	if (!isfinite(s->rating_min) || !isfinite(s->rating_max) ||
		!(s->rating_min < s->rating_max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rating range must be finite with rating_min below rating_max"),
				 errdetail("Got rating_min %s and rating_max %s.",
						   mm_float_text(s->rating_min), mm_float_text(s->rating_max)),
				 errhint("Use the lowest and highest rating your game gives, for example 0 and 3000.")));
	/* ratings are normalised by the width, which must not overflow */
	if (!isfinite(s->rating_max - s->rating_min))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rating range is too wide"),
				 errdetail("rating_max %s minus rating_min %s is not a finite number.",
						   mm_float_text(s->rating_max), mm_float_text(s->rating_min)),
				 errhint("Use the lowest and highest rating your game gives, for example 0 and 3000.")));

	cfg->teams = s->teams;
	cfg->team_size = s->team_size;
	cfg->max_wait = max_wait;
	cfg->arrival_rate = 0;
	cfg->rate_last = NAN;
	cfg->rate_gaps = 0;
	cfg->recent = NULL;
	cfg->nrecent = 0;
	cfg->density = NULL;
	mm_parse_params(s->params, cfg, criteria, &wait_factor_set);
	st = mm_config_check(cfg);
	if (st != MM_OK)
		mm_status_error(st, "checking the queue's configuration", NULL,
						"queue configuration failed the core's check");
}

/* The error for a queue that does not exist. */
static void
queue_not_found(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("queue \"%s\" does not exist", mm_shorten(name)),
			 errhint("Create it with matchmaker.create_queue(), or see the queues in matchmaker.queues.")));
}

/* The columns of matchmaker.queues that a queue's settings are read from, in this order, and their types. */
static const char *const queue_columns[] = {
	"team_size", "teams", "algorithm", "max_wait", "rating_min", "rating_max", "tick", "params", "created_at"
};
static const Oid queue_column_types[] = {
	INT4OID, INT4OID, TEXTOID, INTERVALOID, FLOAT8OID, FLOAT8OID, INTERVALOID, JSONBOID, TIMESTAMPTZOID
};
#define MM_QUEUE_COLUMNS lengthof(queue_columns)

static void queue_from_row(const char *name, Datum *values, MMQueue *queue);
static bool queues_invalidate(Relation rel);
static Oid queue_rows_relid;

/* Refuse column i of queue name's row when it is null or of another type than the settings need. */
static void
check_queue_column(const char *name, int i, Oid type, bool isnull)
{
	if (type != queue_column_types[i])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("column %s of matchmaker.queues has type %s, not %s",
						queue_columns[i], format_type_be(type), format_type_be(queue_column_types[i])),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("queue \"%s\" has no %s", mm_shorten(name), queue_columns[i]),
				 errhint("Set it with matchmaker.alter_queue(), or drop the queue and create it again.")));
}

/*
 * Whether the direct read of read_queue_row may serve the caller: it has
 * SELECT on the table, or on the columns read, and no row security
 * applies (else the read goes through a query, which applies it).
 */
static bool
direct_read_allowed(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			user = GetUserId();

	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		return false;
	if (pg_class_aclcheck(relid, user, ACL_SELECT) == ACLCHECK_OK)
		return true;
	if (pg_attribute_aclcheck(relid, mm_rel_column(rel, "name", false), user, ACL_SELECT) != ACLCHECK_OK)
		return false;
	for (int i = 0; i < (int) MM_QUEUE_COLUMNS; i++)
		if (pg_attribute_aclcheck(relid, mm_rel_column(rel, queue_columns[i], false), user,
								  ACL_SELECT) != ACLCHECK_OK)
			return false;
	return true;
}

/*
 * Read queue name's row into values (copied into the current memory
 * context), through the table's primary key, as a statement of the
 * transaction would see it now: 1 when found, 0 when not, -1 when the
 * caller's privileges or the table's row security need a query instead.
 * Enqueue reads its queue at every call: this costs a fraction of a
 * prepared SELECT's executor start and end.  With lock MM_LOCK_UPDATE or
 * MM_LOCK_SKIP the row is locked as SELECT ... FOR UPDATE [SKIP LOCKED]
 * locks it (the tick locks its queue's row at every tick): the newest
 * version of the row, waited for or, with MM_LOCK_SKIP, 0 when another
 * transaction holds it; a row deleted meanwhile is not found.  Any other
 * outcome of the lock, or a transaction that may not write (read-only, a
 * standby), returns -1, for the query to meet it as it would.
 */
static int
read_queue_row(const char *name, Datum *values, bool *cacheable, MMQueueLock lock)
{
	Oid			relid;
	Oid			indexid;
	Relation	rel;
	Relation	index;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	IndexScanDesc scan;
	ScanKeyData key;
	int			result;

	/* the query refuses a lock where nothing may be written (read-only, which a standby's are) */
	if (lock != MM_LOCK_NONE && XactReadOnly)
		return -1;
	relid = RangeVarGetRelidExtended(makeRangeVar("matchmaker", "queues", -1),
									 lock == MM_LOCK_NONE ? AccessShareLock : RowShareLock,
									 0, NULL, NULL);
	rel = table_open(relid, NoLock);
	/* FOR UPDATE needs UPDATE on the table, or on a column (the query checks those) */
	if (!direct_read_allowed(rel) ||
		(lock != MM_LOCK_NONE &&
		 pg_class_aclcheck(relid, GetUserId(), ACL_UPDATE) != ACLCHECK_OK))
	{
		table_close(rel, NoLock);
		return -1;
	}
	if (cacheable != NULL)
	{
		*cacheable = queues_invalidate(rel);
		queue_rows_relid = relid;
	}
	indexid = RelationGetPrimaryKeyIndex(rel);
	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("matchmaker.queues has no primary key"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	index = index_open(indexid, AccessShareLock);
	if (IndexRelationGetNumberOfKeyAttributes(index) != 1 ||
		index->rd_index->indkey.values[0] != mm_rel_column(rel, "name", false))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the primary key of matchmaker.queues is not its name"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));

	/* what a statement run now would see, the transaction's own writes included */
	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, index, snapshot, 1, 0);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[0], F_TEXTEQ, CStringGetTextDatum(name));
	index_rescan(scan, &key, 1, NULL, 0);
	result = index_getnext_slot(scan, ForwardScanDirection, slot) ? 1 : 0;
	if (result == 1 && lock != MM_LOCK_NONE)
	{
		ItemPointerData tid = slot->tts_tid;
		TM_FailureData tmfd;
		TM_Result	locked;

		/* the lock stores the version it locked in the slot */
		ExecClearTuple(slot);
		locked = table_tuple_lock(rel, &tid, snapshot, slot, GetCurrentCommandId(true),
								  LockTupleExclusive,
								  lock == MM_LOCK_SKIP ? LockWaitSkip : LockWaitBlock,
								  TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS | TUPLE_LOCK_FLAG_FIND_LAST_VERSION,
								  &tmfd);
		if (locked == TM_Ok && tmfd.traversed)
		{
			/* a newer version: the query would check its name again */
			bool		isnull;
			Datum		d = slot_getattr(slot, mm_rel_column(rel, "name", false), &isnull);

			if (isnull || strcmp(TextDatumGetCString(d), name) != 0)
				result = 0;
		}
		else if (locked == TM_WouldBlock || locked == TM_Deleted)
			result = 0;
		else if (locked != TM_Ok)
			result = -1;
	}
	if (result == 1)
	{
		TupleDesc	desc = RelationGetDescr(rel);

		for (int i = 0; i < (int) MM_QUEUE_COLUMNS; i++)
		{
			AttrNumber	att = mm_rel_column(rel, queue_columns[i], false);
			Form_pg_attribute form = TupleDescAttr(desc, att - 1);
			bool		isnull;
			Datum		d = slot_getattr(slot, att, &isnull);

			check_queue_column(name, i, form->atttypid, isnull);
			values[i] = datumCopy(d, form->attbyval, form->attlen);
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	index_close(index, AccessShareLock);
	table_close(rel, NoLock);
	return result;
}

/*
 * The settings of the queues this backend enqueued into, parsed from
 * their rows, by name, so that an enqueue reads no table for its queue
 * and parses nothing.  The triggers queues_changed (each
 * row written) and queues_truncated of matchmaker.queues invalidate the
 * table's relation cache entry (whoever writes it, in any session, with
 * any session_replication_role and in logical replication's apply: they
 * fire ALWAYS, and apply fires row triggers); every backend then drops
 * this cache when it takes in that invalidation, at commit of the writer
 * for the others (an enqueue takes in pending invalidations first) and at
 * once for the writer itself, whose rollback drops it again.  Without those
 * triggers as created (before ALTER EXTENSION UPDATE to 0.3.0, disabled or
 * changed) nothing is cached.  queue_rows_generation counts the drops: a row read while one
 * happened is not kept.  A backend keeps at most MM_QUEUE_ROWS_MAX rows: the
 * one that would go beyond drops the others first, so a session that
 * enqueues into ever new queues holds a bounded cache.
 */
#define MM_QUEUE_ROWS_MAX 256

typedef struct QueueRowEntry
{
	char		name[NAMEDATALEN];	/* the hash key */
	MMQueue		queue;			/* the row's settings, parsed (queue_copy) */
} QueueRowEntry;

static HTAB *queue_rows;
static MemoryContext queue_rows_cxt;
static uint64 queue_rows_generation;
static bool queue_rows_callback_set;

PG_FUNCTION_INFO_V1(mm_queues_changed);

/* Drop the cache when matchmaker.queues (or every relation) is invalidated. */
static void
queue_rows_invalidate(Datum arg, Oid relid)
{
	if (relid != InvalidOid && relid != queue_rows_relid)
		return;
	queue_rows_generation++;
	if (queue_rows_cxt != NULL)
	{
		MemoryContextReset(queue_rows_cxt);
		queue_rows = NULL;
	}
}

/*
 * Drop the cache when a function changes: whether the triggers run
 * mm_queues_changed was checked when the rows were read, and a trigger's
 * function replaced since would no longer drop it.
 */
static void
queue_rows_proc_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	queue_rows_invalidate(arg, InvalidOid);
}

/*
 * Whether trigger t is name, on exactly the events, at the level given,
 * enabled ALWAYS, without a WHEN condition or a column list, and runs this
 * library's mm_queues_changed.
 */
static bool
is_invalidating_trigger(const Trigger *t, const char *name, int16 events, bool row)
{
	HeapTuple	proc;
	bool		ours = false;

	if (strcmp(t->tgname, name) != 0 || t->tgenabled != TRIGGER_FIRES_ALWAYS ||
		TRIGGER_FOR_ROW(t->tgtype) != row || !TRIGGER_FOR_AFTER(t->tgtype) ||
		(t->tgtype & TRIGGER_TYPE_EVENT_MASK) != events ||
		t->tgqual != NULL || t->tgnattr != 0)
		return false;
	proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(t->tgfoid));
	if (HeapTupleIsValid(proc))
	{
		bool		isnull;
		Datum		src = SysCacheGetAttr(PROCOID, proc, Anum_pg_proc_prosrc, &isnull);

		ours = ((Form_pg_proc) GETSTRUCT(proc))->prolang == ClanguageId && !isnull &&
			strcmp(TextDatumGetCString(src), "mm_queues_changed") == 0;
		ReleaseSysCache(proc);
	}
	return ours;
}

/*
 * Whether matchmaker.queues has its two invalidating triggers:
 * queues_changed for each row inserted, updated or deleted (logical
 * replication's apply fires row triggers only) and queues_truncated for a
 * TRUNCATE.
 */
static bool
queues_invalidate(Relation rel)
{
	TriggerDesc *trig = rel->trigdesc;
	bool		rows = false;
	bool		truncate = false;

	if (trig == NULL)
		return false;
	for (int i = 0; i < trig->numtriggers; i++)
	{
		const Trigger *t = &trig->triggers[i];

		rows |= is_invalidating_trigger(t, "queues_changed",
										TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE,
										true);
		truncate |= is_invalidating_trigger(t, "queues_truncated", TRIGGER_TYPE_TRUNCATE, false);
	}
	return rows && truncate;
}

/*
 * matchmaker.queues_changed(), the triggers queues_changed (each row) and
 * queues_truncated of matchmaker.queues: every backend's cache of queue
 * rows is dropped (see QueueRowEntry).
 */
Datum
mm_queues_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("matchmaker.queues_changed() must be called as a trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

/*
 * Copy src's settings into dst, its strings into the current memory
 * context (every pointer of an MMQueue is one of these strings).
 */
static void
queue_copy(const MMQueue *src, MMQueue *dst)
{
	const MMCriteria *c = &src->criteria;

	*dst = *src;
	dst->name = pstrdup(src->name);
	for (int i = 0; i < MM_MAX_CRITERIA; i++)
		dst->criteria.attribute[i] = c->attribute[i] ? pstrdup(c->attribute[i]) : NULL;
	for (int i = 0; i < MM_MAX_FILTERS; i++)
		dst->criteria.filter[i] = c->filter[i] ? pstrdup(c->filter[i]) : NULL;
	for (int i = 0; i < MM_MAX_ROLES; i++)
		dst->criteria.role[i] = c->role[i] ? pstrdup(c->role[i]) : NULL;
	dst->criteria.exclude = c->exclude ? pstrdup(c->exclude) : NULL;
	dst->channel = src->channel ? pstrdup(src->channel) : NULL;
}

/*
 * Load queue name's settings for an enqueue, from this backend's cache
 * when it holds them (see QueueRowEntry): as mm_load_queue with
 * MM_LOCK_NONE.  The caller holds the queue's enqueue lock, so a
 * drop_queue has either committed, and its invalidation is taken in here,
 * or waits for the caller.
 */
bool
mm_load_queue_cached(const char *name, MMQueue *queue)
{
	QueueRowEntry *entry = NULL;
	Datum		values[MM_QUEUE_COLUMNS];
	uint64		generation;
	bool		cacheable = false;
	int			found;

	if (strlen(name) >= NAMEDATALEN)
		return mm_load_queue(name, MM_LOCK_NONE, queue);
	AcceptInvalidationMessages();
	if (queue_rows != NULL)
		entry = hash_search(queue_rows, name, HASH_FIND, NULL);
	if (entry != NULL)
	{
		queue_copy(&entry->queue, queue);
		return true;
	}

	generation = queue_rows_generation;
	found = read_queue_row(name, values, &cacheable, MM_LOCK_NONE);
	if (found < 0)
		return mm_load_queue(name, MM_LOCK_NONE, queue);
	if (found == 0)
		return false;
	queue_from_row(name, values, queue);
	if (cacheable && generation == queue_rows_generation)
	{
		MemoryContext old;

		if (!queue_rows_callback_set)
		{
			CacheRegisterRelcacheCallback(queue_rows_invalidate, (Datum) 0);
			CacheRegisterSyscacheCallback(PROCOID, queue_rows_proc_changed, (Datum) 0);
			queue_rows_callback_set = true;
		}
		if (queue_rows_cxt == NULL)
			queue_rows_cxt = AllocSetContextCreate(TopMemoryContext, "matchmaker queue rows",
												   ALLOCSET_SMALL_SIZES);
		else if (queue_rows != NULL && hash_get_num_entries(queue_rows) >= MM_QUEUE_ROWS_MAX)
		{
			MemoryContextReset(queue_rows_cxt);
			queue_rows = NULL;
		}
		old = MemoryContextSwitchTo(queue_rows_cxt);
		if (queue_rows == NULL)
		{
			HASHCTL		ctl = {0};

			ctl.keysize = NAMEDATALEN;
			ctl.entrysize = sizeof(QueueRowEntry);
			ctl.hcxt = queue_rows_cxt;
			queue_rows = hash_create("matchmaker queue rows", 16, &ctl,
									 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
		}
		entry = hash_search(queue_rows, name, HASH_ENTER, NULL);
		queue_copy(queue, &entry->queue);
		MemoryContextSwitchTo(old);
	}
	return true;
}

/*
 * Load a queue's settings (SPI connected; the result lives in the current
 * memory context).  MM_LOCK_NONE reads the row as it is now, MM_LOCK_UPDATE
 * locks it FOR UPDATE, which serialises ticks and changes of one queue;
 * MM_LOCK_SKIP does the same but skips a row another transaction holds.
 * The row is read and locked without a statement when read_queue_row may
 * (the tick of a busy queue runs many times a second); else by a query.
 * Returns false when the queue does not exist (or, with MM_LOCK_SKIP, is
 * locked).
 */
bool
mm_load_queue(const char *name, MMQueueLock lock, MMQueue *queue)
{
	static const char *const sql[3] = {
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1",
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE SKIP LOCKED"
	};
	static SPIPlanPtr plans[3];
	Datum		values[MM_QUEUE_COLUMNS];
	int			direct = -1;

	direct = read_queue_row(name, values, NULL, lock);
	if (direct == 0)
		return false;
	if (direct < 0)
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		key[1];

		mm_keep_plan(&plans[lock], sql[lock], 1, argtypes);
		key[0] = CStringGetTextDatum(name);
		if (SPI_execute_plan(plans[lock], key, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not look up queue \"%s\"", name);
		if (SPI_processed == 0)
			return false;
		for (int i = 0; i < (int) MM_QUEUE_COLUMNS; i++)
		{
			bool		isnull;

			values[i] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, i + 1, &isnull);
			check_queue_column(name, i, SPI_gettypeid(SPI_tuptable->tupdesc, i + 1), isnull);
		}
	}

	queue_from_row(name, values, queue);
	return true;
}

/* Fill queue from the values of its row (queue_columns, checked). */
static void
queue_from_row(const char *name, Datum *values, MMQueue *queue)
{
	char	   *algo;
	Jsonb	   *params;

	queue->name = pstrdup(name);
	queue->cfg.team_size = DatumGetInt32(values[0]);
	queue->cfg.teams = DatumGetInt32(values[1]);
	algo = TextDatumGetCString(values[2]);
	if (mm_algorithm_parse(algo, &queue->cfg.algorithm) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("queue \"%s\" has unknown algorithm \"%s\"", name, algo)));
	queue->cfg.max_wait = mm_interval_seconds(DatumGetIntervalP(values[3]));
	queue->rating_min = DatumGetFloat8(values[4]);
	queue->rating_max = DatumGetFloat8(values[5]);
	queue->tick_seconds = mm_interval_seconds(DatumGetIntervalP(values[6]));
	queue->cfg.arrival_rate = 0;
	queue->cfg.rate_last = NAN;
	queue->cfg.rate_gaps = 0;
	queue->cfg.recent = NULL;
	queue->cfg.nrecent = 0;
	queue->cfg.density = NULL;
	queue->created_at = DatumGetTimestampTz(values[8]);
	params = DatumGetJsonbP(values[7]);
	mm_parse_params(params, &queue->cfg, &queue->criteria, &queue->wait_factor_set);
	mm_tune_read(params, &queue->tune);
	queue->channel = mm_channel_read(params);
}

/*
 * The NOTIFY channel a queue names in params.channel, or NULL (also for a
 * queue that no longer exists): for events sent outside a tick.
 */
char *
mm_queue_channel(const char *queue)
{
	static SPIPlanPtr plan;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(queue)};
	bool		isnull;
	Datum		d;

	mm_keep_plan(&plan,
				 "SELECT params OPERATOR(pg_catalog.->>) 'channel' FROM matchmaker.queues "
				 "WHERE name OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	if (SPI_execute_plan(plan, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the channel of queue \"%s\"", queue);
	if (SPI_processed == 0)
		return NULL;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? NULL : TextDatumGetCString(d);
}

/* Load a queue named by a text argument, or raise "does not exist". */
MMQueue *
mm_get_queue(text *name, MMQueueLock lock)
{
	MMQueue    *queue = palloc0(sizeof(MMQueue));
	char	   *cname = text_to_cstring(name);

	if (!mm_load_queue(cname, lock, queue))
		queue_not_found(cname);
	return queue;
}

/* The current settings of a queue into s (SPI connected, row locked). */
static bool
load_settings(const char *name, QueueSettings *s)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;

	if (SPI_execute_with_args("SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params "
							  "FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up queue \"%s\"", name);
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	s->name = pstrdup(name);
	s->team_size = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	s->teams = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	s->algorithm = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
	s->max_wait = DatumGetIntervalP(SPI_getbinval(tup, desc, 4, &isnull));
	s->rating_min = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
	s->rating_max = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
	s->tick = DatumGetIntervalP(SPI_getbinval(tup, desc, 7, &isnull));
	s->params = DatumGetJsonbP(SPI_getbinval(tup, desc, 8, &isnull));
	return true;
}

/* The error for a queue name in use. */
static void
duplicate_queue(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("queue \"%s\" already exists", name),
			 errhint("Change it with matchmaker.alter_queue(), or pick another name.")));
}

/* Write a queue's settings (insert or update) through SPI. */
static void
store_settings(QueueSettings *s, bool insert)
{
	Oid			argtypes[9] = {TEXTOID, INT4OID, INT4OID, TEXTOID, INTERVALOID,
	FLOAT8OID, FLOAT8OID, INTERVALOID, JSONBOID};
	Datum		values[9];
	int			rc;

	values[0] = CStringGetTextDatum(s->name);
	values[1] = Int32GetDatum(s->team_size);
	values[2] = Int32GetDatum(s->teams);
	values[3] = CStringGetTextDatum(s->algorithm);
	values[4] = IntervalPGetDatum(s->max_wait);
	values[5] = Float8GetDatum(s->rating_min);
	values[6] = Float8GetDatum(s->rating_max);
	values[7] = IntervalPGetDatum(s->tick);
	values[8] = JsonbPGetDatum(s->params);

	if (insert)
		rc = SPI_execute_with_args("INSERT INTO matchmaker.queues "
								   "(name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params) "
								   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (name) DO NOTHING",
								   9, argtypes, values, NULL, false, 0);
	else
		rc = SPI_execute_with_args("UPDATE matchmaker.queues SET team_size = $2, teams = $3, algorithm = $4, "
								   "max_wait = $5, rating_min = $6, rating_max = $7, tick = $8, params = $9 "
								   "WHERE name OPERATOR(pg_catalog.=) $1",
								   9, argtypes, values, NULL, false, 0);
	if (insert && rc == SPI_OK_INSERT && SPI_processed == 0)
		duplicate_queue(s->name);
	if (rc != (insert ? SPI_OK_INSERT : SPI_OK_UPDATE) || SPI_processed != 1)
		elog(ERROR, "could not store queue \"%s\"", s->name);
}

/*
 * matchmaker.create_queue(name, team_size, teams, algorithm, max_wait,
 *						   rating_min, rating_max, tick, params)
 */
Datum
mm_create_queue(PG_FUNCTION_ARGS)
{
	QueueSettings s;
	MMConfig	cfg;
	MMCriteria	criteria;
	static const char *const argnames[] = {"name", "team_size", "teams", "algorithm",
	"max_wait", "rating_min", "rating_max", "tick", "params"};

	for (int i = 0; i < 9; i++)
		mm_require_arg(fcinfo, i, argnames[i]);

	s.name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	s.team_size = PG_GETARG_INT32(1);
	s.teams = PG_GETARG_INT32(2);
	s.algorithm = text_to_cstring(PG_GETARG_TEXT_PP(3));
	s.max_wait = PG_GETARG_INTERVAL_P(4);
	s.rating_min = PG_GETARG_FLOAT8(5);
	s.rating_max = PG_GETARG_FLOAT8(6);
	s.tick = PG_GETARG_INTERVAL_P(7);
	s.params = PG_GETARG_JSONB_P(8);
	validate_name(s.name);
	validate_settings(&s, &cfg, &criteria);

	SPI_connect();
	store_settings(&s, true);	/* raises duplicate_queue when the name is taken */
	mm_queues_changed_on_commit();
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * The number of a queue's waiting (or proposed, which may wait again) tickets
 * whose rating lies outside
 * [lo, hi] (SPI connected).
 */
static int64
waiting_outside(const char *name, double lo, double hi)
{
	Oid			argtypes[3] = {TEXTOID, FLOAT8OID, FLOAT8OID};
	Datum		values[3] = {CStringGetTextDatum(name), Float8GetDatum(lo), Float8GetDatum(hi)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) ANY ('{waiting,proposed}') "
							  "AND (rating OPERATOR(pg_catalog.<) $2 OR rating OPERATOR(pg_catalog.>) $3)",
							  3, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count waiting tickets");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* The error context of a wait for a queue's lock (mm_lock_queue_key). */
typedef struct QueueLockWait
{
	const char *name;
	uint16		kind;
} QueueLockWait;

static void
queue_lock_wait_context(void *arg)
{
	QueueLockWait *w = arg;

	errcontext("waiting for the %s lock of queue \"%s\"",
			   w->kind == MM_LOCK_KIND_PARTY ? "party" : "enqueue", mm_shorten(w->name));
}

/*
 * The lock enqueue takes on its queue (share) and drop_queue (exclusive),
 * until the end of the transaction: an advisory lock of this database on
 * a hash of the queue's name, with its own kind (so no SQL advisory lock
 * can clash with it).  Two queues whose names share a hash only make a
 * drop_queue wait for the other queue's enqueues as well.  extra, for
 * other kinds, hashes a second key.  Without wait, false when it is held
 * in a conflicting mode (and nothing is taken).  A wait that ends in an
 * error (lock_timeout, a cancel, a deadlock) names the lock and the queue
 * in the error's context.
 */
bool
mm_lock_queue_key(const char *name, uint16 kind, uint32 extra, LOCKMODE mode, bool wait)
{
	LOCKTAG		tag;
	uint32		key = DatumGetUInt32(hash_any((const unsigned char *) name, strlen(name)));
	ErrorContextCallback context;
	QueueLockWait w;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, key, extra, kind);
	if (LockAcquire(&tag, mode, false, true) != LOCKACQUIRE_NOT_AVAIL)
		return true;
	if (!wait)
		return false;
	w.name = name;
	w.kind = kind;
	context.callback = queue_lock_wait_context;
	context.arg = &w;
	context.previous = error_context_stack;
	error_context_stack = &context;
	(void) LockAcquire(&tag, mode, false, false);
	error_context_stack = context.previous;
	return true;
}

/*
 * Send the "dropped" event of a queue being dropped (SPI connected): the
 * tickets that were waiting or proposed and the open backfill requests,
 * which end with it.  Only with 0.3.0's tables (0.2.0's listeners read
 * every payload as a match).
 */
static void
notify_dropped(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	char	   *channel;
	int64	   *tickets;
	int64	   *requests;
	int			ntickets;
	int			nrequests;
	StringInfoData payload;
	int			head;

	if (!mm_table_exists("backfills"))
		return;
	channel = mm_queue_channel(name);
	if (SPI_execute_with_args("SELECT id FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's waiting tickets");
	tickets = mm_spi_ids(1, &ntickets);
	if (SPI_execute_with_args("SELECT id FROM matchmaker.backfills WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "AND state OPERATOR(pg_catalog.=) 'open'",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's open backfill requests");
	requests = mm_spi_ids(1, &nrequests);
	initStringInfo(&payload);
	mm_event_start(&payload, "dropped", name);
	head = payload.len;
	mm_event_ids(&payload, "tickets", tickets, ntickets);
	mm_event_ids(&payload, "requests", requests, nrequests);
	mm_event_finish(&payload, head, channel);
}

/* Remove a queue's provisional groups (SPI connected). */
static void
clear_groups(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	if (SPI_execute_with_args("DELETE FROM matchmaker.provisional_groups WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove the provisional groups of queue \"%s\"", name);
}

/* Whether a queue has any ticket or match (SPI connected). */
static bool
queue_has_history(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	if (SPI_execute_with_args("SELECT 1 FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "UNION ALL SELECT 1 FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1 LIMIT 1",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the tickets of queue \"%s\"", name);
	return SPI_processed > 0;
}

/* What makes a waiting ticket's attributes unusable for a queue, or NULL. */
typedef const char *(*AttributesProblem) (const MMQueue *queue, Jsonb *attributes);

/*
 * How many of the queue's tickets that sql reads (id, attributes; $1 the
 * queue's name) have a problem problem_of finds, with the first one's id
 * and problem (SPI connected).
 */
static int64
count_bad_attributes(const MMQueue *queue, const char *sql, AttributesProblem problem_of,
					 int64 *first_id, const char **first_problem)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(queue->name)};
	int64		bad = 0;

	if (SPI_execute_with_args(sql, 1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the waiting tickets of queue \"%s\"", queue->name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		const char *problem = problem_of(queue, DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[i],
																			 SPI_tuptable->tupdesc, 2, &isnull)));

		if (problem != NULL && bad++ == 0)
		{
			*first_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
			*first_problem = problem;
		}
	}
	return bad;
}

static const char *
filters_problem(const MMQueue *queue, Jsonb *attributes)
{
	StringInfoData buf;
	const char *problem;

	initStringInfo(&buf);
	problem = mm_filter_value(queue, attributes, &buf);
	pfree(buf.data);
	return problem;
}

/*
 * Refuse filters that a waiting ticket of the queue has no value of (SPI
 * connected, the queue's row locked): tick could not match it.
 */
static void
check_waiting_filters(const char *name, const MMConfig *cfg, const MMCriteria *criteria)
{
	MMQueue		queue;
	int64		bad;
	int64		first_id = 0;
	const char *first_problem = NULL;

	if (criteria->nfilters == 0 && criteria->exclude == NULL)
		return;
	memset(&queue, 0, sizeof(queue));
	queue.name = (char *) name;
	queue.cfg = *cfg;
	queue.criteria = *criteria;
	bad = count_bad_attributes(&queue,
							   "SELECT id, attributes FROM matchmaker.tickets "
							   "WHERE queue OPERATOR(pg_catalog.=) $1 "
							   "AND state OPERATOR(pg_catalog.=) ANY ('{waiting,proposed}') ORDER BY id",
							   filters_problem, &first_id, &first_problem);
	if (bad > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket without a value of the new filters",
							   "queue \"%s\" has %lld waiting tickets without a value of the new filters",
							   bad, name, (long long) bad),
				 errdetail("Ticket %lld: %s.", (long long) first_id, first_problem),
				 errhint("Change the filters once those tickets have left the queue, or cancel them.")));
}

/*
 * Refuse new criteria that a waiting ticket of the queue does not satisfy
 * (SPI connected, the queue's row locked): tick could not match it.
 */
static void
check_waiting_criteria(const char *name, const MMConfig *cfg, const MMCriteria *criteria)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	MMQueue		queue;
	int64		bad = 0;
	int64		first_id = 0;
	int			first_d = 0;
	MMCriterionProblem first_problem = MM_CRITERION_OK;
	double		first_got = NAN;

	if (cfg->criteria.n == 0)
		return;
	memset(&queue, 0, sizeof(queue));
	queue.name = (char *) name;
	queue.cfg = *cfg;
	queue.criteria = *criteria;
	if (SPI_execute_with_args("SELECT id, attributes FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) ANY ('{waiting,proposed}') "
							  "ORDER BY id",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the waiting tickets of queue \"%s\"", name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		double		crit[MM_MAX_CRITERIA];
		MMCriterionProblem problem;
		double		got;
		int			d = mm_criteria_read(&queue,
										 DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull)),
										 crit, &problem, &got);

		if (d > 0 && bad++ == 0)
		{
			first_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
			first_d = d;
			first_problem = problem;
			first_got = got;
		}
	}
	if (bad > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket without a valid value of the new criteria",
							   "queue \"%s\" has %lld waiting tickets without a valid value of the new criteria",
							   bad, name, (long long) bad),
				 first_problem == MM_CRITERION_OUTSIDE ?
				 errdetail("Ticket %lld has \"%s\" %s, outside %s to %s.", (long long) first_id,
						   mm_shorten(criteria->attribute[first_d]), mm_float_text(first_got),
						   mm_float_text(criteria->lo[first_d]), mm_float_text(criteria->hi[first_d])) :
				 errdetail("Ticket %lld has %s \"%s\".", (long long) first_id,
						   first_problem == MM_CRITERION_MISSING ? "no" : "a value that is not a number for",
						   mm_shorten(criteria->attribute[first_d])),
				 errhint("Change the criteria once those tickets have left the queue, or cancel them.")));
}

/*
 * Refuse a change to optimize, or of an optimize queue's game shape, while
 * a waiting party (the tickets of one role naming one "party", as a tick
 * counts them) has more players than a team of team_size: it could never
 * be placed.  enqueue counted them only for optimize and the old shape.
 */
static void
check_waiting_parties(const char *name, int32 team_size)
{
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum		values[2] = {CStringGetTextDatum(name), Int32GetDatum(team_size)};
	int64		bad;
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) OVER (), party, members FROM "
							  "(SELECT attributes OPERATOR(pg_catalog.->>) 'party' AS party, pg_catalog.count(*) AS members "
							  " FROM matchmaker.tickets "
							  " WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) ANY ('{waiting,proposed}') "
							  " AND pg_catalog.jsonb_typeof(attributes OPERATOR(pg_catalog.->) 'party') OPERATOR(pg_catalog.=) 'string' "
							  " GROUP BY enqueued_by, attributes OPERATOR(pg_catalog.->>) 'party' "
							  " HAVING pg_catalog.count(*) OPERATOR(pg_catalog.>) $2) p "
							  "ORDER BY members DESC, party LIMIT 1",
							  2, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count the waiting parties of queue \"%s\"", name);
	if (SPI_processed == 0)
		return;
	bad = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg_plural("queue \"%s\" has %lld waiting party larger than a team",
						   "queue \"%s\" has %lld waiting parties larger than a team",
						   bad, name, (long long) bad),
			 errdetail("Party \"%s\" has %lld players waiting; a team has %d.",
					   mm_shorten(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2)),
					   (long long) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull)),
					   team_size),
			 errhint("Change the algorithm or the game shape once those tickets have left the queue, or cancel them.")));
}

static const char *
optimize_problem(const MMQueue *queue, Jsonb *attributes)
{
	JsonbValue *party;
	JsonbValue *ping;

	return mm_optimize_attributes_problem(attributes, &party, &ping);
}

/*
 * Refuse a change to optimize while a waiting ticket of the queue has a
 * "party" or "ping" attribute optimize cannot use (SPI connected, the
 * queue's row locked): enqueue checked them only for the old algorithm.
 */
static void
check_waiting_optimize(const char *name)
{
	MMQueue		queue;
	int64		bad;
	int64		first_id = 0;
	const char *first_problem = NULL;

	memset(&queue, 0, sizeof(queue));
	queue.name = (char *) name;
	bad = count_bad_attributes(&queue,
							   "SELECT id, attributes FROM matchmaker.tickets "
							   "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) ANY ('{waiting,proposed}') "
							   "AND (attributes OPERATOR(pg_catalog.?) 'party' OR attributes OPERATOR(pg_catalog.?) 'ping') "
							   "ORDER BY id",
							   optimize_problem, &first_id, &first_problem);
	if (bad > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket whose attributes optimize cannot use",
							   "queue \"%s\" has %lld waiting tickets whose attributes optimize cannot use",
							   bad, name, (long long) bad),
				 errdetail("Ticket %lld: %s.", (long long) first_id, first_problem),
				 errhint("Change the algorithm once those tickets have left the queue, or cancel them.")));
}

/* matchmaker.alter_queue(name, ...): NULL arguments leave a setting unchanged. */
Datum
mm_alter_queue(PG_FUNCTION_ARGS)
{
	QueueSettings s;
	MMConfig	cfg;
	MMCriteria	criteria;
	char	   *name = mm_text_arg(fcinfo, 0, "name");
	int64		outside;
	int32		old_team_size;
	int32		old_teams;
	char	   *old_algorithm;

	/* its checks after the queue's lock must see what committed meanwhile */
	mm_require_read_committed("alter_queue");
	SPI_connect();
	if (!load_settings(name, &s))
		queue_not_found(name);
	old_team_size = s.team_size;
	old_teams = s.teams;
	old_algorithm = pstrdup(s.algorithm);

	if (!PG_ARGISNULL(1))
		s.team_size = PG_GETARG_INT32(1);
	if (!PG_ARGISNULL(2))
		s.teams = PG_GETARG_INT32(2);
	if (!PG_ARGISNULL(3))
		s.algorithm = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (!PG_ARGISNULL(4))
		s.max_wait = PG_GETARG_INTERVAL_P(4);
	if (!PG_ARGISNULL(5))
		s.rating_min = PG_GETARG_FLOAT8(5);
	if (!PG_ARGISNULL(6))
		s.rating_max = PG_GETARG_FLOAT8(6);
	if (!PG_ARGISNULL(7))
		s.tick = PG_GETARG_INTERVAL_P(7);
	if (!PG_ARGISNULL(8))
		s.params = PG_GETARG_JSONB_P(8);
	validate_name(s.name);
	validate_settings(&s, &cfg, &criteria);

	if ((s.team_size != old_team_size || s.teams != old_teams) && queue_has_history(name))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot change the game shape of queue \"%s\"", name),
				 errdetail("The queue has tickets or matches of %d teams of %d.", old_teams, old_team_size),
				 errhint("Create a new queue for the new game shape.")));

	outside = waiting_outside(name, s.rating_min, s.rating_max);
	if (outside > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket outside the new rating range",
							   "queue \"%s\" has %lld waiting tickets outside the new rating range",
							   outside, name, (long long) outside),
				 errdetail("The new range is %s to %s.", mm_float_text(s.rating_min), mm_float_text(s.rating_max)),
				 errhint("Narrow the range once those tickets have left the queue, or cancel them.")));
	check_waiting_criteria(name, &cfg, &criteria);
	check_waiting_filters(name, &cfg, &criteria);
	if (cfg.algorithm == MM_ALGO_OPTIMIZE && strcmp(old_algorithm, s.algorithm) != 0)
		check_waiting_optimize(name);
	if (cfg.algorithm == MM_ALGO_OPTIMIZE &&
		(strcmp(old_algorithm, s.algorithm) != 0 || s.team_size != old_team_size || s.teams != old_teams))
		check_waiting_parties(name, s.team_size);

	store_settings(&s, false);
	if (strcmp(old_algorithm, "difference_wait") == 0 && strcmp(s.algorithm, "difference_wait") != 0)
		clear_groups(name);
	mm_queues_changed_on_commit();
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * matchmaker.drop_queue(name, force): remove a queue with its tickets,
 * matches, proposals and backfill requests.  Refused while tickets wait (or are in a pending
 * proposal), unless force.
 */
Datum
mm_drop_queue(PG_FUNCTION_ARGS)
{
	char	   *name = mm_text_arg(fcinfo, 0, "name");
	bool		force;
	QueueSettings s;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int64		waiting;
	bool		isnull;

	mm_require_arg(fcinfo, 1, "force");
	force = PG_GETARG_BOOL(1);
	/* its checks after the queue's locks must see what committed meanwhile */
	mm_require_read_committed("drop_queue");
	values[0] = CStringGetTextDatum(name);

	SPI_connect();
	/*
	 * The queue's row (waiting for a tick or an alter of the queue), then
	 * the queue's enqueue lock: every enqueue that read the queue's row
	 * before it was deleted has ended once this returns, so its ticket is
	 * seen below and none can be added after.
	 */
	if (!load_settings(name, &s))
		queue_not_found(name);
	(void) mm_lock_queue_key(name, MM_LOCK_KIND_ENQUEUE, 0, ExclusiveLock, true);

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count waiting tickets");
	waiting = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (waiting > 0 && !force)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket",
							   "queue \"%s\" has %lld waiting tickets",
							   waiting, name, (long long) waiting),
				 errhint("Cancel them first, or drop the queue with matchmaker.drop_queue('%s', force => true).", name)));

	notify_dropped(name);
	clear_groups(name);
	if ((mm_table_exists("tunings") &&
		 SPI_execute_with_args("DELETE FROM matchmaker.tunings WHERE queue OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE) ||
		SPI_execute_with_args("DELETE FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args("DELETE FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		(mm_table_exists("backfills") &&
		 SPI_execute_with_args("DELETE FROM matchmaker.backfills WHERE queue OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE) ||
		(mm_table_exists("proposals") &&
		 SPI_execute_with_args("DELETE FROM matchmaker.proposals WHERE queue OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE) ||
		(mm_table_exists("queue_buckets") &&
		 SPI_execute_with_args("DELETE FROM matchmaker.queue_buckets WHERE queue OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE) ||
		(mm_table_exists("queue_bands") &&
		 SPI_execute_with_args("DELETE FROM matchmaker.queue_bands WHERE queue OPERATOR(pg_catalog.=) $1",
							   1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE) ||
		SPI_execute_with_args("DELETE FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not drop queue \"%s\"", name);
	mm_queues_changed_on_commit();
	SPI_finish();
	PG_RETURN_VOID();
}
