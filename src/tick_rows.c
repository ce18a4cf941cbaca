/*
 * tick_rows.c
 *		A tick's writes without statements: the checks, locks and updates
 *		of the tickets it matches, tuple by tuple at the addresses it read
 *		them at, and the rows of its matches, inserted in batches.
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
 * INSERT makes and checks them.
 *
 * Only when that is exactly what the statements would do: the table is a
 * plain table without triggers or rules, no row security applies to the
 * caller, who has the privileges the statement needs on the whole table,
 * no column is a stored generated one, the columns written have the types
 * the extension gave them, and (for matches) every other column has no
 * default and no domain type, so null is what the INSERT would have put
 * there.  Otherwise mm_ticket_rows_open returns NULL, mm_match_rows_insert
 * false, and the caller runs its statements.  Each check, lock and update
 * checks for interrupts, as the statement's scan does, so that a cancel or a
 * timeout ends a large tick at once.
 */
#include "matchmaker.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

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

/* The executor's state for writes to rel: one range table entry, its indexes open. */
static ResultRelInfo *
begin_writes(Relation rel, AclMode perms, Bitmapset *cols, CmdType cmd, EState **estate)
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
		r->rri = begin_writes(rel, ACL_SELECT | ACL_UPDATE, cols, CMD_UPDATE, &r->estate);
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
	/*
	 * null must be what the INSERT would put in every other column: not so
	 * with a default, a generated or identity column, or a domain (its own
	 * default, its constraints on the null)
	 */
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && !bms_is_member(a->attnum - FirstLowInvalidHeapAttributeNumber, cols) &&
			(a->atthasdef || a->attgenerated != '\0' || a->attidentity != '\0' ||
			 get_typtype(a->atttypid) == TYPTYPE_DOMAIN))
		{
			table_close(rel, NoLock);
			return false;
		}
	}

	rri = begin_writes(rel, ACL_INSERT, cols, CMD_INSERT, &estate);
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
