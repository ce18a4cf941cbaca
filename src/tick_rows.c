/*
 * tick_rows.c
 *		Writes without statements: a tick's checks, locks and updates of
 *		the tickets it matches, tuple by tuple at the addresses it read
 *		them at, and the rows of its matches, inserted in batches; and
 *		enqueue's insert of a ticket.
 *
 * A tick makes sure of the tickets it decided on as FOR UPDATE SKIP LOCKED
 * would, then updates them; through SPI each is a statement over arrays of
 * addresses (a tid scan, a join with the arrays, a tuple formed per row for
 * the result), which cost about a fifth of a tick on a large pool on top
 * of the heap and index work itself (bench/README.md).  Here each ticket is
 * fetched at its address with a fresh snapshot, as the statement's tid
 * scan would fetch it, and either locked without waiting (the tickets a
 * tick ends, and those it matches when it must lock them first) or checked
 * without a lock: still waiting, its xmax no other live transaction's
 * (mm_ticket_rows_check).  A checked ticket is then updated where it is
 * (mm_ticket_rows_try_update: nothing written when it changed since),
 * which spares the lock's own write and WAL record; a locked one is
 * updated as it is.  The new version's index entries are made by the
 * executor's own routine, its constraints checked as an UPDATE checks
 * them.
 *
 * The matches' rows go in as COPY puts rows in: many to a heap call,
 * one WAL record per page, their index entries and constraints as an
 * INSERT makes and checks them.  enqueue's ticket goes in as its
 * INSERT ... ON CONFLICT DO NOTHING would put it (mm_ticket_insert).
 *
 * Only when that is exactly what the statements would do: the table is a
 * plain table without triggers or rules, no row security applies to the
 * caller, who has the privileges the statement needs on the whole table,
 * no column is a stored generated one, the columns written have the types
 * the extension gave them, and (for inserts) every other column has no
 * default and no domain type, so null is what the INSERT would have put
 * there.  Otherwise mm_ticket_rows_open returns NULL, mm_match_rows_insert
 * false, mm_ticket_insert MM_TICKET_INSERT_STATEMENT, and the caller runs
 * its statements.  Each check, lock and update
 * checks for interrupts, as the statement's scan does, so that a cancel or a
 * timeout ends a large tick at once.
 */
#include "matchmaker.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/* Matches inserted per heap call. */
#define MATCH_ROWS_BATCH	1000

struct MMTicketRows
{
	Relation	rel;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;		/* the version fetched, locked or updated */
	TupleTableSlot *newslot;	/* the new version */
	Snapshot	snapshot;		/* for the locks: a statement's, taken at open */
	AttrNumber	att_id;
	AttrNumber	att_state;
	int			ncolumns;
	AttrNumber	att[MM_TICKET_ROWS_MAX_COLUMNS];
	int			natts;
};

/* The type the extension gives each column a tick writes. */
static Oid
column_type(const char *name)
{
	static const struct
	{
		const char *name;
		Oid			type;
	}			types[] = {
		{"state", TEXTOID}, {"matched_at", TIMESTAMPTZOID}, {"match_id", INT8OID},
		{"team", INT4OID}, {"role", TEXTOID}, {"ended_at", TIMESTAMPTZOID},
		{"id", INT8OID}, {"queue", TEXTOID}, {"created_at", TIMESTAMPTZOID}, {"bots", INT4OID},
		{"cost", FLOAT8OID}, {"criteria_cost", FLOAT8OID}, {"wait_cost", FLOAT8OID},
		{"player", TEXTOID}, {"rating", FLOAT8OID}, {"attributes", JSONBOID},
		{"enqueued_at", TIMESTAMPTZOID}, {"enqueued_by", OIDOID}, {"enqueued_by_name", TEXTOID},
	};

	for (int i = 0; i < (int) lengthof(types); i++)
		if (strcmp(types[i].name, name) == 0)
			return types[i].type;
	elog(ERROR, "no direct write of column \"%s\"", name);
	return InvalidOid;			/* keep the compiler quiet */
}

/*
 * Open table of the extension for a write (RowExclusiveLock); NULL when a
 * statement must make it: not a plain table (or a partition, whose
 * constraint the statement checks), triggers, rules, stored generated
 * columns (the statement computes them), row security for the caller, or
 * the caller lacks one of the privileges in perms on the whole table.
 */
static Relation
open_for_write(const char *table, AclMode perms)
{
	Oid			relid;
	Relation	rel;
	Oid			user = GetUserId();
	bool		ok;

	relid = RangeVarGetRelidExtended(makeRangeVar("matchmaker", (char *) table, -1),
									 RowExclusiveLock, 0, NULL, NULL);
	rel = table_open(relid, NoLock);
	ok = rel->rd_rel->relkind == RELKIND_RELATION && !rel->rd_rel->relispartition &&
		rel->trigdesc == NULL && rel->rd_rules == NULL &&
		(rel->rd_att->constr == NULL || !rel->rd_att->constr->has_generated_stored) &&
		check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED;
	for (AclMode bit = 1; ok && bit != 0 && bit <= perms; bit <<= 1)
		if ((perms & bit) != 0 && pg_class_aclcheck(relid, user, bit) != ACLCHECK_OK)
			ok = false;
	if (!ok)
	{
		table_close(rel, NoLock);
		return NULL;
	}
	return rel;
}

/*
 * The executor's state for writes to rel: one range table entry, and its
 * indexes open unless the caller opens them (indices false).
 */
static ResultRelInfo *
begin_writes(Relation rel, AclMode perms, Bitmapset *cols, CmdType cmd, bool indices,
			 EState **estate)
{
	RangeTblEntry *rte = makeNode(RangeTblEntry);
	ResultRelInfo *rri = makeNode(ResultRelInfo);

	/*
	 * As the statement's: the index routine reads from it which columns
	 * an update changes (its hint to an index of an unchanged key), the
	 * constraint check what to report.
	 */
	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	rte->requiredPerms = perms;
	if (cmd == CMD_UPDATE)
		rte->updatedCols = cols;
	else
		rte->insertedCols = cols;
	*estate = CreateExecutorState();
	ExecInitRangeTable(*estate, list_make1(rte));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	/* what the statement checks first: a table a publication of its changes can replicate */
	CheckValidResultRel(rri, cmd);
	if (indices)
		ExecOpenIndices(rri, false);
	return rri;
}

/* Column name's number when it has type, else InvalidAttrNumber. */
static AttrNumber
typed_column(Relation rel, const char *name, Oid type)
{
	AttrNumber	att = mm_rel_column(rel, name, true);

	if (att == InvalidAttrNumber ||
		TupleDescAttr(RelationGetDescr(rel), att - 1)->atttypid != type)
		return InvalidAttrNumber;
	return att;
}

/*
 * Open matchmaker.tickets to lock its rows and write columns[0 ..
 * ncolumns); NULL when statements must do it (see above).
 */
MMTicketRows *
mm_ticket_rows_open(const char *const *columns, int ncolumns)
{
	Relation	rel;
	MMTicketRows *r;
	Bitmapset  *cols = NULL;

	Assert(ncolumns <= MM_TICKET_ROWS_MAX_COLUMNS);
	rel = open_for_write("tickets", ACL_SELECT | ACL_UPDATE);
	if (rel == NULL)
		return NULL;
	r = palloc0(sizeof(MMTicketRows));
	r->rel = rel;
	r->natts = RelationGetDescr(rel)->natts;
	r->att_id = typed_column(rel, "id", INT8OID);
	r->att_state = typed_column(rel, "state", TEXTOID);
	r->ncolumns = ncolumns;
	for (int i = 0; i < ncolumns; i++)
	{
		r->att[i] = typed_column(rel, columns[i], column_type(columns[i]));
		cols = bms_add_member(cols, r->att[i] - FirstLowInvalidHeapAttributeNumber);
	}
	for (int i = -2; i < ncolumns; i++)
	{
		AttrNumber	att = i == -2 ? r->att_id : i == -1 ? r->att_state : r->att[i];

		if (att == InvalidAttrNumber)
		{
			table_close(rel, NoLock);
			pfree(r);
			return NULL;
		}
	}
	/* for locks alone, no executor state */
	if (ncolumns > 0)
	{
		r->rri = begin_writes(rel, ACL_SELECT | ACL_UPDATE, cols, CMD_UPDATE, true, &r->estate);
		r->newslot = table_slot_create(rel, NULL);
	}
	r->slot = table_slot_create(rel, NULL);

	/* the locks' snapshot: a statement's, after the transaction's own writes */
	CommandCounterIncrement();
	r->snapshot = RegisterSnapshot(GetTransactionSnapshot());
	return r;
}

/* Whether the version in slot is ticket id, waiting. */
static bool
is_waiting(MMTicketRows *r, TupleTableSlot *slot, int64 id)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, r->att_id, &isnull);
	text	   *state;

	if (isnull || DatumGetInt64(d) != id)
		return false;
	d = slot_getattr(slot, r->att_state, &isnull);
	if (isnull)
		return false;
	state = DatumGetTextPP(d);
	return VARSIZE_ANY_EXHDR(state) == 7 && memcmp(VARDATA_ANY(state), "waiting", 7) == 0;
}

/*
 * Lock ticket id, read at *tid, FOR UPDATE SKIP LOCKED: true when it is
 * locked and still waiting, *tid then the address of the version locked
 * (a newer one when it was updated since the snapshot and still waits).
 * False, with nothing changed, when the snapshot does not see it there (it
 * was updated or removed since it was read), another transaction holds or
 * is changing it, it was updated or deleted since the snapshot, or it no
 * longer waits.
 */
bool
mm_ticket_rows_lock(MMTicketRows *r, ItemPointer tid, int64 id)
{
	TM_FailureData tmfd;
	TM_Result	res;
	ItemPointerData at = *tid;

	CHECK_FOR_INTERRUPTS();
	/* as a tid scan: only a version the statement's snapshot sees */
	if (!table_tuple_fetch_row_version(r->rel, &at, r->snapshot, r->slot))
		return false;
	if (!is_waiting(r, r->slot, id))
	{
		ExecClearTuple(r->slot);
		return false;
	}
	ExecClearTuple(r->slot);
	res = table_tuple_lock(r->rel, &at, r->snapshot, r->slot,
						   GetCurrentCommandId(true), LockTupleExclusive, LockWaitSkip,
						   TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd);
	if (res != TM_Ok || !is_waiting(r, r->slot, id))
	{
		ExecClearTuple(r->slot);
		return false;
	}
	*tid = r->slot->tts_tid;
	ExecClearTuple(r->slot);
	return true;
}

/*
 * Form in r->newslot the new version of the ticket whose current version
 * is in r->slot: the columns given at open take values[i] (null when
 * nulls[i]); values NULL: the version in r->slot unchanged.  Checks the
 * table's constraints on it, as an UPDATE does.
 */
static void
form_new_version(MMTicketRows *r, const Datum *values, const bool *nulls)
{
	slot_getallattrs(r->slot);
	ExecClearTuple(r->newslot);
	memcpy(r->newslot->tts_values, r->slot->tts_values, sizeof(Datum) * r->natts);
	memcpy(r->newslot->tts_isnull, r->slot->tts_isnull, sizeof(bool) * r->natts);
	for (int i = 0; values != NULL && i < r->ncolumns; i++)
	{
		r->newslot->tts_values[r->att[i] - 1] = nulls[i] ? (Datum) 0 : values[i];
		r->newslot->tts_isnull[r->att[i] - 1] = nulls[i];
	}
	/* a dropped column is null in the new version, as an UPDATE writes it */
	for (int i = 0; i < r->natts; i++)
		if (TupleDescAttr(r->newslot->tts_tupleDescriptor, i)->attisdropped)
		{
			r->newslot->tts_values[i] = (Datum) 0;
			r->newslot->tts_isnull[i] = true;
		}
	ExecStoreVirtualTuple(r->newslot);
	if (r->rel->rd_att->constr != NULL)
		ExecConstraints(r->rri, r->newslot, r->estate);
}

/* The new version's index entries, when the update was not HOT. */
static void
finish_update(MMTicketRows *r, bool update_indexes)
{
	if (update_indexes)
		ExecInsertIndexTuples(r->rri, r->newslot, r->estate, true, false, NULL, NIL);
	ExecClearTuple(r->slot);
	ExecClearTuple(r->newslot);
	ResetPerTupleExprContext(r->estate);
}

/*
 * Fetch into r->slot the version of ticket id at *tid, which this
 * transaction locked or wrote: an error when it is not there (it cannot
 * be).
 */
static void
fetch_own_version(MMTicketRows *r, ItemPointer tid, int64 id)
{
	bool		isnull;

	CHECK_FOR_INTERRUPTS();
	if (!table_tuple_fetch_row_version(r->rel, tid, SnapshotAny, r->slot) ||
		DatumGetInt64(slot_getattr(r->slot, r->att_id, &isnull)) != id || isnull)
		elog(ERROR, "ticket " INT64_FORMAT " is not where this transaction left it", id);
}

/*
 * Update ticket id, locked by this transaction at *tid: the columns given
 * at open take values[i] (null when nulls[i]).
 */
void
mm_ticket_rows_update(MMTicketRows *r, ItemPointer tid, int64 id,
					  const Datum *values, const bool *nulls)
{
	bool		update_indexes;

	Assert(r->rri != NULL);
	fetch_own_version(r, tid, id);
	form_new_version(r, values, nulls);
	simple_table_tuple_update(r->rel, tid, r->newslot, r->snapshot, &update_indexes);
	finish_update(r, update_indexes);
}

/*
 * Whether a transaction other than this one holds or is changing the
 * version in r->slot (its xmax: a lock or an update not yet ended).  A
 * MultiXact (several lockers) counts as held while a member other than
 * this transaction runs.
 */
static bool
held_by_other(MMTicketRows *r)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) r->slot;
	HeapTupleHeader tup;
	uint16		infomask;
	TransactionId xmax;

	LockBuffer(bslot->buffer, BUFFER_LOCK_SHARE);
	tup = bslot->base.tuple->t_data;
	infomask = tup->t_infomask;
	xmax = HeapTupleHeaderGetRawXmax(tup);
	LockBuffer(bslot->buffer, BUFFER_LOCK_UNLOCK);
	if ((infomask & HEAP_XMAX_INVALID) != 0 || !TransactionIdIsValid(xmax))
		return false;
	if ((infomask & HEAP_XMAX_IS_MULTI) != 0)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers((MultiXactId) xmax, &members, false,
											  HEAP_XMAX_IS_LOCKED_ONLY(infomask));
		bool		held = false;

		/* this transaction's own locks among them do not count */
		for (int i = 0; i < n && !held; i++)
			held = !TransactionIdIsCurrentTransactionId(members[i].xid) &&
				TransactionIdIsInProgress(members[i].xid);
		if (n > 0)
			pfree(members);
		return held;
	}
	if (TransactionIdIsCurrentTransactionId(xmax))
		return false;
	return TransactionIdIsInProgress(xmax);
}

/*
 * Fetch ticket id, read at *tid, into r->slot when the snapshot taken at
 * open sees it there, it still waits, and no other transaction holds or is
 * changing it; else false, the slot empty.
 */
static bool
fetch_checked(MMTicketRows *r, ItemPointer tid, int64 id)
{
	CHECK_FOR_INTERRUPTS();
	if (!table_tuple_fetch_row_version(r->rel, tid, r->snapshot, r->slot))
		return false;
	if (!is_waiting(r, r->slot, id) || held_by_other(r))
	{
		ExecClearTuple(r->slot);
		return false;
	}
	return true;
}

/*
 * Whether ticket id, read at *tid, is there for mm_ticket_rows_try_update
 * (fetch_checked).  Nothing written.
 */
bool
mm_ticket_rows_check(MMTicketRows *r, ItemPointer tid, int64 id)
{
	if (!fetch_checked(r, tid, id))
		return false;
	ExecClearTuple(r->slot);
	return true;
}

/*
 * For tests (matchmaker.test_pause_ticket): wait until the advisory lock
 * on id (as pg_advisory_lock(id) takes it) is free, whatever lock_timeout
 * the tick set.
 */
static void
test_pause(int64 id)
{
	LOCKTAG		tag;
	int			timeout = LockTimeout;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) id >> 32), (uint32) id, 1);
	LockTimeout = 0;
	PG_TRY();
	{
		(void) LockAcquire(&tag, ShareLock, false, false);
		LockRelease(&tag, ShareLock, false);
	}
	PG_FINALLY();
	{
		LockTimeout = timeout;
	}
	PG_END_TRY();
}

/*
 * Update ticket id, read at *tid, without a lock taken before (as
 * FOR UPDATE SKIP LOCKED and then UPDATE, in one pass): true when it was
 * still waiting and is updated, *tid then the new version's address.
 * False, with nothing written, when the snapshot taken at open does not see
 * it there, it no longer waits, another transaction holds or is changing
 * it, or one changed it since the snapshot.  The update itself waits for a
 * transaction that took the ticket in the instant between the check and the
 * update (the caller bounds that wait with lock_timeout).
 */
bool
mm_ticket_rows_try_update(MMTicketRows *r, ItemPointer tid, int64 id,
						  const Datum *values, const bool *nulls)
{
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	TM_Result	res;
	bool		update_indexes;

	Assert(r->rri != NULL);
	if (!fetch_checked(r, tid, id))
		return false;
	if (mm_test_pause_ticket != 0 && id == mm_test_pause_ticket)
		test_pause(id);
	form_new_version(r, values, nulls);
	res = table_tuple_update(r->rel, tid, r->newslot, GetCurrentCommandId(true), r->snapshot,
							 InvalidSnapshot, true, &tmfd, &lockmode, &update_indexes);
	if (res != TM_Ok)
	{
		ExecClearTuple(r->slot);
		ExecClearTuple(r->newslot);
		return false;
	}
	*tid = r->newslot->tts_tid;
	finish_update(r, update_indexes);
	return true;
}

/*
 * Undo mm_ticket_rows_try_update of ticket id: its version before, still
 * at old_tid, written again over the new one at *tid (then the address of
 * the version written).  A CommandCounterIncrement must come between
 * the update and its undo (a version cannot be updated in the command
 * that wrote it).
 */
void
mm_ticket_rows_undo(MMTicketRows *r, ItemPointer old_tid, ItemPointer tid, int64 id)
{
	bool		update_indexes;

	fetch_own_version(r, old_tid, id);
	form_new_version(r, NULL, NULL);
	simple_table_tuple_update(r->rel, tid, r->newslot, r->snapshot, &update_indexes);
	*tid = r->newslot->tts_tid;
	finish_update(r, update_indexes);
}

/* Release what open took; the table stays locked until the transaction ends. */
void
mm_ticket_rows_close(MMTicketRows *r)
{
	ExecDropSingleTupleTableSlot(r->slot);
	if (r->rri != NULL)
	{
		ExecDropSingleTupleTableSlot(r->newslot);
		ExecCloseIndices(r->rri);
		FreeExecutorState(r->estate);
	}
	UnregisterSnapshot(r->snapshot);
	table_close(r->rel, NoLock);
	/* what the next statement reads includes these writes */
	CommandCounterIncrement();
	pfree(r);
}

/*
 * Whether null is what an INSERT of the columns cols (as bits of
 * attnum - FirstLowInvalidHeapAttributeNumber) puts in every other column
 * of rel: not so with a default, a generated or identity column, or a
 * domain (its own default, its constraints on the null).
 */
static bool
others_null(Relation rel, Bitmapset *cols)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && !bms_is_member(a->attnum - FirstLowInvalidHeapAttributeNumber, cols) &&
			(a->atthasdef || a->attgenerated != '\0' || a->attidentity != '\0' ||
			 get_typtype(a->atttypid) == TYPTYPE_DOMAIN))
			return false;
	}
	return true;
}

/*
 * Insert the rows of the matches of res, of queue made at now, their ids
 * ids[j], the other columns null; false, with nothing written, when a
 * statement must do it (see above).
 */
bool
mm_match_rows_insert(const char *queue, TimestampTz now, const MMResult *res, const int64 *ids)
{
	int			n = res->nmatches;
	static const char *const columns[] = {"id", "queue", "created_at", "bots", "cost",
	"criteria_cost", "wait_cost"};
	AttrNumber	att[lengthof(columns)];
	Relation	rel;
	TupleDesc	desc;
	Bitmapset  *cols = NULL;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot **slots;
	BulkInsertState bistate;
	CommandId	cid;
	Datum		queue_datum;
	int			nslots;

	rel = open_for_write("matches", ACL_INSERT);
	if (rel == NULL)
		return false;
	desc = RelationGetDescr(rel);
	for (int c = 0; c < (int) lengthof(columns); c++)
	{
		att[c] = typed_column(rel, columns[c], column_type(columns[c]));
		if (att[c] == InvalidAttrNumber)
		{
			table_close(rel, NoLock);
			return false;
		}
		cols = bms_add_member(cols, att[c] - FirstLowInvalidHeapAttributeNumber);
	}
	if (!others_null(rel, cols))
	{
		table_close(rel, NoLock);
		return false;
	}

	rri = begin_writes(rel, ACL_INSERT, cols, CMD_INSERT, true, &estate);
	/*
	 * as many slots as one batch fills: each holds a reference to the
	 * descriptor in the resource owner, which a tick of a few matches
	 * should not pay a thousand times
	 */
	nslots = Min(MATCH_ROWS_BATCH, n);
	slots = palloc(sizeof(TupleTableSlot *) * Max(nslots, 1));
	for (int k = 0; k < nslots; k++)
		slots[k] = table_slot_create(rel, NULL);
	bistate = GetBulkInsertState();
	cid = GetCurrentCommandId(true);
	queue_datum = CStringGetTextDatum(queue);
	for (int start = 0; start < n; start += MATCH_ROWS_BATCH)
	{
		int			m = Min(MATCH_ROWS_BATCH, n - start);

		for (int k = 0; k < m; k++)
		{
			TupleTableSlot *slot = slots[k];
			int			j = start + k;

			ExecClearTuple(slot);
			memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
			slot->tts_values[att[0] - 1] = Int64GetDatum(ids[j]);
			slot->tts_values[att[1] - 1] = queue_datum;
			slot->tts_values[att[2] - 1] = TimestampTzGetDatum(now);
			slot->tts_values[att[3] - 1] = Int32GetDatum(res->matches[j].bots);
			slot->tts_values[att[4] - 1] = Float8GetDatum(res->matches[j].cost.total);
			slot->tts_values[att[5] - 1] = Float8GetDatum(res->matches[j].cost.criteria);
			slot->tts_values[att[6] - 1] = Float8GetDatum(res->matches[j].cost.wait);
			for (int c = 0; c < (int) lengthof(columns); c++)
				slot->tts_isnull[att[c] - 1] = false;
			ExecStoreVirtualTuple(slot);
			if (desc->constr != NULL)
				ExecConstraints(rri, slot, estate);
		}
		table_multi_insert(rel, slots, m, cid, 0, bistate);
		for (int k = 0; k < m; k++)
		{
			if (rri->ri_NumIndices > 0)
				list_free(ExecInsertIndexTuples(rri, slots[k], estate, false, false, NULL, NIL));
			ResetPerTupleExprContext(estate);
		}
		CHECK_FOR_INTERRUPTS();
	}
	FreeBulkInsertState(bistate);
	for (int k = 0; k < nslots; k++)
		ExecDropSingleTupleTableSlot(slots[k]);
	pfree(slots);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	/* what the next statement reads includes these rows */
	CommandCounterIncrement();
	return true;
}

/*
 * enqueue's insert of a waiting ticket.  Its statement is
 *
 *   INSERT INTO matchmaker.tickets (queue, player, rating, attributes,
 *     enqueued_at, enqueued_by, enqueued_by_name) VALUES (...)
 *   ON CONFLICT (queue, player) WHERE state = 'waiting' DO NOTHING
 *
 * and per call the executor's start (its plan's nodes, projections and
 * indexes) and the parse of the CHECK constraints' stored text cost about
 * as much as the insert itself.  mm_ticket_insert does what that
 * statement does: the id from the column's default sequence, the
 * constraints checked, the pre-check of the arbiter index the planner
 * inferred for the statement, then the speculative insert, its index
 * entries, and again from the pre-check when another transaction's insert
 * of the same player won meanwhile.  What it learns of the table once (the
 * columns, the default's sequence, the constraints and the indexes'
 * predicates and expressions parsed and planned, what the executor needs
 * of each index, the arbiter) is kept until a relcache invalidation of the
 * table, of one of its indexes or of a relation a planned expression
 * names, or a change to a function or a type a planned expression depends
 * on (it may have inlined the one, or dropped a cast to a domain of the
 * other).  A constraint whose planning could evaluate or drop what changes
 * without an invalidation is planned at each call instead (replan).
 * Privileges, row security and triggers are checked on every call
 * (open_for_write).
 */
#define TICKET_INSERT_COLUMNS 9
enum
{
	TI_ID, TI_QUEUE, TI_PLAYER, TI_RATING, TI_ATTRIBUTES, TI_STATE, TI_ENQUEUED_AT,
	TI_ENQUEUED_BY, TI_ENQUEUED_BY_NAME
};
static const char *const ticket_insert_columns[TICKET_INSERT_COLUMNS] = {
	"id", "queue", "player", "rating", "attributes", "state", "enqueued_at",
	"enqueued_by", "enqueued_by_name"
};

static struct
{
	bool		valid;
	Oid			relid;
	Oid			seq;			/* of id's default, nextval(seq) */
	List	   *arbiter;		/* index oids, as the statement's plan has them */
	int			ncheck;
	Expr	  **checks;			/* the CHECK constraints' expressions, planned (see replan) */
	bool	   *replan;			/* per check: kept unplanned, planned at each call */
	int			nindex;
	Oid		   *index_oids;		/* the table's indexes, as ExecOpenIndices opens them */
	IndexInfo **indexes;		/* as it builds them, with predicates and expressions planned */
	List	   *deps;			/* PlanInvalItems of the planned expressions */
	List	   *relations;		/* relations they name (an inlined function's) */
	bool		user_code;		/* they call a user's function or cast to a domain */
	AttrNumber	att[TICKET_INSERT_COLUMNS];
	Bitmapset  *cols;
	MemoryContext cxt;
}			ticket_insert;
static uint64 ticket_insert_generation = 0;
static int	ticket_insert_depth = 0;	/* mm_ticket_insert calls in progress */
static bool ticket_insert_callback_set = false;

/* Forget what mm_ticket_insert learnt. */
static void
ticket_insert_forget(void)
{
	ticket_insert.valid = false;
	ticket_insert_generation++;
}

/*
 * A relcache invalidation of the tickets table, of one of its indexes (an
 * index made ready for inserts changes only its own entry), or of all.
 */
static void
ticket_insert_invalidate(Datum arg, Oid relid)
{
	bool		ours = relid == InvalidOid || relid == ticket_insert.relid;

	for (int i = 0; !ours && ticket_insert.valid && i < ticket_insert.nindex; i++)
		ours = ticket_insert.index_oids[i] == relid;
	if (!ours && ticket_insert.valid)
		ours = list_member_oid(ticket_insert.relations, relid);
	if (ours)
		ticket_insert_forget();
}

/*
 * A function or a type changed: forget what was learnt when a planned
 * expression depends on it (it inlined the function, or took a cast to a
 * domain then without constraints for none), when every entry changed, or
 * while learning.  When the planned expressions call a user's function or
 * cast to a domain (an index's, as the relcache has it), any change does:
 * planning records no dependency on a function it evaluated to a constant,
 * nor on the domain under a domain it cast to.
 */
static void
ticket_insert_catalog_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	ListCell   *lc;

	if (!ticket_insert.valid || hashvalue == 0 || ticket_insert.user_code)
	{
		ticket_insert_forget();
		return;
	}
	foreach(lc, ticket_insert.deps)
	{
		PlanInvalItem *item = lfirst_node(PlanInvalItem, lc);

		if (item->cacheId == cacheid && item->hashValue == hashvalue)
		{
			ticket_insert_forget();
			return;
		}
	}
}

/*
 * A function not built in, or one written in SQL: planning inlines it,
 * parsing its body with the catalogs of the moment (the casts it names).
 */
static bool
is_user_function(Oid func, void *context)
{
	HeapTuple	proc;
	bool		sql = false;

	if (func >= FirstNormalObjectId)
		return true;
	proc = SearchSysCache1(PROCOID, ObjectIdGetDatum(func));
	if (HeapTupleIsValid(proc))
	{
		sql = ((Form_pg_proc) GETSTRUCT(proc))->prolang == SQLlanguageId;
		ReleaseSysCache(proc);
	}
	return sql;
}

/*
 * Whether node calls a function not built in or written in SQL, or casts
 * to a domain.
 */
static bool
has_user_code(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, CoerceToDomain) || check_functions_in_node(node, is_user_function, NULL))
		return true;
	return expression_tree_walker(node, has_user_code, context);
}

/* Any function. */
static bool
is_function(Oid func, void *context)
{
	return true;
}

/*
 * Whether node calls a function on constants alone, which planning would
 * evaluate once (constant folding).
 */
static bool
has_foldable_call(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, is_function, NULL) && !contain_var_clause(node))
		return true;
	return expression_tree_walker(node, has_foldable_call, context);
}

/*
 * expr planned as ExecPrepareExpr would plan it, its dependencies on
 * functions and types added to ticket_insert.deps and on relations to
 * ticket_insert.relations (in the current memory context).
 */
static Expr *
plan_learnt(Expr *expr)
{
	List	   *relations = NIL;
	List	   *items = NIL;
	Expr	   *planned;

	ticket_insert.user_code |= has_user_code((Node *) expr, NULL);
	planned = expression_planner_with_deps(expr, &relations, &items);
	ticket_insert.deps = list_concat(ticket_insert.deps, items);
	ticket_insert.relations = list_concat(ticket_insert.relations, relations);
	return planned;
}

/* Column att's default expression, or NULL without one. */
static Node *
column_default(Relation rel, AttrNumber att)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;

	for (int i = 0; constr != NULL && i < constr->num_defval; i++)
		if (constr->defval[i].adnum == att)
			return stringToNode(constr->defval[i].adbin);
	return NULL;
}

/* The sequence of a default nextval('seq'), or InvalidOid for any other default. */
static Oid
default_sequence(Relation rel, AttrNumber att)
{
	Node	   *expr = column_default(rel, att);
	FuncExpr   *f;
	Const	   *c;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return InvalidOid;
	f = (FuncExpr *) expr;
	if (f->funcid != F_NEXTVAL || list_length(f->args) != 1 || !IsA(linitial(f->args), Const))
		return InvalidOid;
	c = linitial_node(Const, f->args);
	if (c->consttype != REGCLASSOID || c->constisnull)
		return InvalidOid;
	return DatumGetObjectId(c->constvalue);
}

/* Whether column att's default is the text constant value. */
static bool
default_is_text(Relation rel, AttrNumber att, const char *value)
{
	Node	   *expr = column_default(rel, att);
	Const	   *c;
	char	   *str;
	bool		same;

	if (expr == NULL || !IsA(expr, Const))
		return false;
	c = (Const *) expr;
	if (c->consttype != TEXTOID || c->constisnull)
		return false;
	str = TextDatumGetCString(c->constvalue);
	same = strcmp(str, value) == 0;
	pfree(str);
	return same;
}

/*
 * The table's indexes as ExecOpenIndices would open them for a
 * speculative insert (BuildIndexInfo, and for unique ones
 * BuildSpeculativeIndexInfo), in the current memory context, with their
 * predicates and expressions planned as ExecPrepareQual and
 * ExecPrepareExprList would plan them on every call.
 */
static void
ticket_insert_learn_indexes(Relation rel)
{
	List	   *oids = RelationGetIndexList(rel);
	int			i = 0;
	ListCell   *lc;

	ticket_insert.nindex = list_length(oids);
	ticket_insert.index_oids = palloc(sizeof(Oid) * Max(ticket_insert.nindex, 1));
	ticket_insert.indexes = palloc(sizeof(IndexInfo *) * Max(ticket_insert.nindex, 1));
	foreach(lc, oids)
	{
		Relation	index = index_open(lfirst_oid(lc), RowExclusiveLock);
		IndexInfo  *ii = BuildIndexInfo(index);

		if (ii->ii_Unique)
			BuildSpeculativeIndexInfo(index, ii);
		if (ii->ii_Predicate != NIL)
			ii->ii_Predicate = (List *) plan_learnt((Expr *) ii->ii_Predicate);
		if (ii->ii_Expressions != NIL)
			ii->ii_Expressions = (List *) plan_learnt((Expr *) ii->ii_Expressions);
		ticket_insert.index_oids[i] = lfirst_oid(lc);
		ticket_insert.indexes[i++] = ii;
		index_close(index, NoLock);
	}
	list_free(oids);
}

/*
 * Open the table's indexes into rri as ExecOpenIndices(rri, true) would,
 * from what ticket_insert_learn_indexes kept: each index's IndexInfo is a
 * copy, its predicate's and expressions' states made for this call (in
 * the executor's memory).  False, with nothing open, when an index's
 * readiness for inserts is not what was learnt (the caller opens them
 * itself, and the next call learns again).
 */
static bool
ticket_insert_open_indices(ResultRelInfo *rri, EState *estate)
{
	int			n = ticket_insert.nindex;
	RelationPtr descs;
	IndexInfo **infos;
	MemoryContext old;

	if (n == 0)
		return true;
	old = MemoryContextSwitchTo(estate->es_query_cxt);
	descs = palloc(sizeof(Relation) * n);
	infos = palloc(sizeof(IndexInfo *) * n);
	for (int i = 0; i < n; i++)
	{
		descs[i] = index_open(ticket_insert.index_oids[i], RowExclusiveLock);
		if (!ticket_insert.valid ||
			descs[i]->rd_index->indisready != ticket_insert.indexes[i]->ii_ReadyForInserts)
		{
			for (int j = 0; j <= i; j++)
				index_close(descs[j], RowExclusiveLock);
			pfree(descs);
			pfree(infos);
			MemoryContextSwitchTo(old);
			ticket_insert_forget();
			return false;
		}
	}
	for (int i = 0; i < n; i++)
	{
		IndexInfo  *ii = palloc(sizeof(IndexInfo));
		ListCell   *lc;

		memcpy(ii, ticket_insert.indexes[i], sizeof(IndexInfo));
		ii->ii_Context = CurrentMemoryContext;
		ii->ii_AmCache = NULL;
		ii->ii_PredicateState = ii->ii_Predicate != NIL ? ExecInitQual(ii->ii_Predicate, NULL) : NULL;
		ii->ii_ExpressionsState = NIL;
		foreach(lc, ii->ii_Expressions)
			ii->ii_ExpressionsState = lappend(ii->ii_ExpressionsState,
											  ExecInitExpr((Expr *) lfirst(lc), NULL));
		infos[i] = ii;
	}
	MemoryContextSwitchTo(old);
	rri->ri_NumIndices = n;
	rri->ri_IndexRelationDescs = descs;
	rri->ri_IndexRelationInfo = infos;
	return true;
}

/*
 * Learn rel's shape for mm_ticket_insert (statement: the INSERT it stands
 * for, prepared and kept): false when the statement must make the insert.
 */
static bool
ticket_insert_learn(Relation rel, SPIPlanPtr statement)
{
	TupleDesc	desc = RelationGetDescr(rel);
	uint64		generation = ticket_insert_generation;
	Bitmapset  *cols = NULL;
	AttrNumber	att[TICKET_INSERT_COLUMNS];
	Oid			seq;
	CachedPlan *plan;
	List	   *arbiter = NIL;
	MemoryContext old;

	ticket_insert.valid = false;
	for (int c = 0; c < TICKET_INSERT_COLUMNS; c++)
	{
		att[c] = typed_column(rel, ticket_insert_columns[c], column_type(ticket_insert_columns[c]));
		if (att[c] == InvalidAttrNumber)
			return false;
		cols = bms_add_member(cols, att[c] - FirstLowInvalidHeapAttributeNumber);
	}
	/*
	 * The statement leaves id and state to their defaults: nextval of a
	 * sequence, and 'waiting'.  The other columns it does not name are null.
	 */
	if (TupleDescAttr(desc, att[TI_ID] - 1)->attidentity != '\0' ||
		(seq = default_sequence(rel, att[TI_ID])) == InvalidOid ||
		!default_is_text(rel, att[TI_STATE], "waiting") ||
		!others_null(rel, cols))
		return false;
	/* a relation whose pg_constraint rows are missing: the statement reports it */
	if ((desc->constr != NULL ? desc->constr->num_check : 0) != rel->rd_rel->relchecks)
		return false;

	/* the arbiter the planner inferred for the statement */
	plan = SPI_plan_get_cached_plan(statement);
	if (plan == NULL)
		return false;
	if (list_length(plan->stmt_list) == 1)
	{
		PlannedStmt *stmt = linitial_node(PlannedStmt, plan->stmt_list);

		if (IsA(stmt->planTree, ModifyTable) &&
			((ModifyTable *) stmt->planTree)->onConflictAction == ONCONFLICT_NOTHING &&
			list_length(stmt->resultRelations) == 1 && linitial_int(stmt->resultRelations) == 1 &&
			rt_fetch(1, stmt->rtable)->relid == RelationGetRelid(rel))
			arbiter = ((ModifyTable *) stmt->planTree)->arbiterIndexes;
	}
	if (arbiter == NIL)
	{
		ReleaseCachedPlan(plan, CurrentResourceOwner);
		return false;
	}

	if (ticket_insert.cxt == NULL)
		ticket_insert.cxt = AllocSetContextCreate(TopMemoryContext, "matchmaker ticket insert",
												  ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(ticket_insert.cxt);
	old = MemoryContextSwitchTo(ticket_insert.cxt);
	ticket_insert.arbiter = list_copy(arbiter);
	ReleaseCachedPlan(plan, CurrentResourceOwner);
	ticket_insert.ncheck = desc->constr != NULL ? desc->constr->num_check : 0;
	ticket_insert.checks = palloc(sizeof(Expr *) * Max(ticket_insert.ncheck, 1));
	ticket_insert.replan = palloc(sizeof(bool) * Max(ticket_insert.ncheck, 1));
	/* as ExecPrepareExpr would plan them on every call */
	ticket_insert.deps = NIL;
	ticket_insert.relations = NIL;
	ticket_insert.user_code = false;
	for (int i = 0; i < ticket_insert.ncheck; i++)
	{
		Expr	   *check = stringToNode(desc->constr->check[i].ccbin);

		/*
		 * A check calling a user's function or one written in SQL, casting
		 * to a domain or calling a function on constants is planned at each
		 * call, as the statement plans it: what planning evaluates or
		 * inlines may change without an invalidation (a function declared
		 * immutable that reads a table, a text search configuration, a cast
		 * an inlined body names).
		 */
		ticket_insert.replan[i] = has_user_code((Node *) check, NULL) ||
			has_foldable_call((Node *) check, NULL);
		ticket_insert.checks[i] = ticket_insert.replan[i] ? check : plan_learnt(check);
	}
	ticket_insert_learn_indexes(rel);
	ticket_insert.cols = bms_copy(cols);
	MemoryContextSwitchTo(old);
	memcpy(ticket_insert.att, att, sizeof(att));
	ticket_insert.seq = seq;
	ticket_insert.relid = RelationGetRelid(rel);
	/* an invalidation while learning: learn again next time */
	ticket_insert.valid = generation == ticket_insert_generation;
	return true;
}

/* An error's context: the statement the insert stands for, as SPI would name it. */
static void
ticket_insert_context(void *arg)
{
	errcontext("SQL statement \"%s\"", (const char *) arg);
}

/*
 * mm_ticket_insert's insert into rel (open, locked, its shape learnt);
 * closes rel.
 */
static MMTicketInsert
ticket_insert_run(Relation rel, const Datum *values, int64 *id)
{
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *slot;
	TupleDesc	desc = RelationGetDescr(rel);
	const AttrNumber *att = ticket_insert.att;
	CommandId	cid;
	MMTicketInsert result;

	/*
	 * As SPI runs the statement: under a snapshot of its own, taken before
	 * the command counter moves, so that what a constraint's function
	 * reads includes what this transaction wrote before.
	 */
	PushActiveSnapshot(GetTransactionSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();
	rri = begin_writes(rel, ACL_INSERT | ACL_SELECT, ticket_insert.cols, CMD_INSERT, false, &estate);
	if (!ticket_insert_open_indices(rri, estate))
		ExecOpenIndices(rri, true);
	if (ticket_insert.ncheck > 0)
	{
		/* as ExecConstraints would prepare them: planned once, or now (replan) */
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

		rri->ri_ConstraintExprs = palloc(sizeof(ExprState *) * ticket_insert.ncheck);
		for (int i = 0; i < ticket_insert.ncheck; i++)
			rri->ri_ConstraintExprs[i] =
				ExecInitExpr(ticket_insert.replan[i] ?
							 expression_planner(copyObject(ticket_insert.checks[i])) :
							 ticket_insert.checks[i], NULL);
		MemoryContextSwitchTo(old);
	}

	/* the row as the statement's VALUES and defaults make it, in that order */
	slot = table_slot_create(rel, NULL);
	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	*id = nextval_internal(ticket_insert.seq, true);
	slot->tts_values[att[TI_ID] - 1] = Int64GetDatum(*id);
	slot->tts_values[att[TI_QUEUE] - 1] = values[0];
	slot->tts_values[att[TI_PLAYER] - 1] = values[1];
	slot->tts_values[att[TI_RATING] - 1] = values[2];
	slot->tts_values[att[TI_ATTRIBUTES] - 1] = values[3];
	slot->tts_values[att[TI_STATE] - 1] = CStringGetTextDatum("waiting");
	slot->tts_values[att[TI_ENQUEUED_AT] - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	slot->tts_values[att[TI_ENQUEUED_BY] - 1] = values[4];
	slot->tts_values[att[TI_ENQUEUED_BY_NAME] - 1] = values[5];
	for (int c = 0; c < TICKET_INSERT_COLUMNS; c++)
		slot->tts_isnull[att[c] - 1] = false;
	ExecStoreVirtualTuple(slot);
	/* as the executor's: a constraint may read tableoid */
	slot->tts_tableOid = RelationGetRelid(rel);
	if (desc->constr != NULL)
		ExecConstraints(rri, slot, estate);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData conflict;
		uint32		token;
		bool		lost = false;

		CHECK_FOR_INTERRUPTS();
		/* a waiting ticket of the player, committed or waited for: nothing to insert */
		if (!ExecCheckIndexConstraints(rri, slot, estate, &conflict, ticket_insert.arbiter))
		{
			result = MM_TICKET_WAITING;
			break;
		}
		if (mm_test_pause_ticket != 0 && *id == mm_test_pause_ticket)
			test_pause(*id);

		/*
		 * The insert, which others wait for by its token rather than for
		 * the transaction; a conflict its index entries meet after all
		 * takes it back, and the check runs again.
		 */
		token = SpeculativeInsertionLockAcquire(GetCurrentTransactionId());
		table_tuple_insert_speculative(rel, slot, cid, 0, NULL, token);
		list_free(ExecInsertIndexTuples(rri, slot, estate, false, true, &lost,
										ticket_insert.arbiter));
		table_tuple_complete_speculative(rel, slot, token, !lost);
		SpeculativeInsertionLockRelease(GetCurrentTransactionId());
		if (!lost)
		{
			result = MM_TICKET_INSERTED;
			break;
		}
		ResetPerTupleExprContext(estate);
	}
	ExecDropSingleTupleTableSlot(slot);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	PopActiveSnapshot();
	/* what the next statement reads includes the ticket */
	CommandCounterIncrement();
	return result;
}

/*
 * Insert a waiting ticket of values (queue, player, rating, attributes,
 * the owner's oid and name) as statement, enqueue's INSERT ... ON
 * CONFLICT (queue, player) WHERE state = 'waiting' DO NOTHING, would:
 * MM_TICKET_INSERTED with its id in *id, MM_TICKET_WAITING when the
 * player's ticket waits already (nothing inserted), or
 * MM_TICKET_INSERT_STATEMENT, with nothing done, when the statement must
 * do it (see open_for_write and ticket_insert_learn; and in a
 * transaction that may not write).
 */
MMTicketInsert
mm_ticket_insert(SPIPlanPtr statement, const Datum *values, int64 *id)
{
	Relation	rel;
	TupleDesc	desc;
	volatile MMTicketInsert result = MM_TICKET_INSERT_STATEMENT;
	ErrorContextCallback context;

	/* a transaction that may not write (or a standby's), a parallel worker: the statement's error */
	if (XactReadOnly || IsInParallelMode())
		return MM_TICKET_INSERT_STATEMENT;
	if (!ticket_insert_callback_set)
	{
		CacheRegisterRelcacheCallback(ticket_insert_invalidate, (Datum) 0);
		CacheRegisterSyscacheCallback(PROCOID, ticket_insert_catalog_changed, (Datum) 0);
		CacheRegisterSyscacheCallback(TYPEOID, ticket_insert_catalog_changed, (Datum) 0);
		ticket_insert_callback_set = true;
	}
	/* the statement's RETURNING reads the ticket: SELECT as well */
	rel = open_for_write("tickets", ACL_INSERT | ACL_SELECT);
	if (rel == NULL)
		return MM_TICKET_INSERT_STATEMENT;
	desc = RelationGetDescr(rel);
	/*
	 * Errors carry the statement's context line, as through SPI, also
	 * while learning (planning runs a constraint's function on constants).
	 */
	context.callback = ticket_insert_context;
	context.arg = unconstify(char *, ((CachedPlanSource *) linitial(SPI_plan_get_plan_sources(statement)))->query_string);
	context.previous = error_context_stack;
	error_context_stack = &context;

	/*
	 * Learning again frees what was learnt, which an insert or a learning
	 * in progress below this one still reads: a constraint's function that
	 * enqueues runs in the insert, and an immutable one is run by planning
	 * (constant folding) while learning.  Then this one is left to the
	 * statement.
	 */
	ticket_insert_depth++;
	PG_TRY();
	{
		if (!(ticket_insert.valid && ticket_insert.relid == RelationGetRelid(rel) &&
			  ticket_insert.ncheck == (desc->constr != NULL ? desc->constr->num_check : 0)) &&
			(ticket_insert_depth > 1 || !ticket_insert_learn(rel, statement)))
			table_close(rel, NoLock);
		else
			result = ticket_insert_run(rel, values, id);
	}
	PG_FINALLY();
	{
		ticket_insert_depth--;
	}
	PG_END_TRY();
	error_context_stack = context.previous;
	return result;
}
