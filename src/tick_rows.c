/*
 * tick_rows.c
 *		The tick's lock and update of the tickets it decided on, row by row
 *		at their addresses, without statements.
 *
 * A tick knows where each ticket it read is (its tid).  Through SPI, the
 * lock (SELECT ... FOR UPDATE SKIP LOCKED by ctid) and the update of the
 * matched tickets (UPDATE ... FROM unnest(...) by ctid) each build
 * arrays, a tid scan, a hash join and a tuple store: about a third of a
 * large tick's time.  Here the lock is table_tuple_lock on each address,
 * as the statement's row mark does (the version the tick's snapshot sees,
 * then the newest version of the row if it was updated since, skipping a
 * row another transaction holds), and the update is the executor's
 * single-row update that logical replication's apply uses: the table's
 * constraints, its indexes (partial ones included) and the replica
 * identity check are applied as by an UPDATE.
 *
 * Only an UPDATE statement fires triggers and follows rules and row
 * security, so the tick uses these functions only when
 * matchmaker.tickets has none of them (open_tickets); otherwise it runs
 * its statements.
 */
#include "matchmaker.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/*
 * Open matchmaker.tickets (RowShareLock, as a row mark takes it, or
 * RowExclusiveLock for the update); NULL, with nothing held beyond the
 * table's lock, when its rows must be written by statements (triggers,
 * rules, row security, not a plain table).
 */
static Relation
open_tickets(LOCKMODE lockmode)
{
	Oid			relid = RangeVarGetRelidExtended(makeRangeVar("matchmaker", "tickets", -1),
												 lockmode, 0, NULL, NULL);
	Relation	rel = table_open(relid, NoLock);

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->rd_rel->relispartition ||
		rel->trigdesc != NULL || rel->rd_rules != NULL || rel->rd_rel->relrowsecurity)
	{
		table_close(rel, NoLock);
		return NULL;
	}
	return rel;
}

/*
 * Lock the tickets ids[i] at tids[i], FOR UPDATE SKIP LOCKED, with a fresh
 * snapshot (after the tick's own writes).  locked[i] says whether ticket i
 * was locked and still waits; tids[i] is then the address of the version
 * locked.  A ticket the snapshot does not see at its address (ended, or
 * changed before the snapshot), one another transaction holds, and one no
 * longer waiting are not locked.  Returns false, having done nothing, when
 * the rows must be locked by a statement (see open_tickets).
 */
bool
mm_rows_lock(const int64 *ids, ItemPointer tids, int n, bool *locked)
{
	Relation	rel = open_tickets(RowShareLock);
	Snapshot	snapshot;
	TupleTableSlot *slot;
	AttrNumber	att_id;
	AttrNumber	att_state;
	CommandId	cid;

	if (rel == NULL)
		return false;
	att_id = mm_rel_column(rel, "id", false);
	att_state = mm_rel_column(rel, "state", false);
	CommandCounterIncrement();
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	cid = GetCurrentCommandId(true);
	slot = table_slot_create(rel, NULL);
	for (int i = 0; i < n; i++)
	{
		TM_FailureData tmfd;
		bool		isnull;
		text	   *state;

		CHECK_FOR_INTERRUPTS();
		locked[i] = false;
		if (!table_tuple_fetch_row_version(rel, &tids[i], snapshot, slot))
			continue;
		if (table_tuple_lock(rel, &tids[i], snapshot, slot, cid, LockTupleExclusive,
							 LockWaitSkip, TUPLE_LOCK_FLAG_FIND_LAST_VERSION, &tmfd) != TM_Ok)
			continue;
		if (DatumGetInt64(slot_getattr(slot, att_id, &isnull)) != ids[i] || isnull)
			continue;
		state = DatumGetTextPP(slot_getattr(slot, att_state, &isnull));
		if (isnull || VARSIZE_ANY_EXHDR(state) != 7 || memcmp(VARDATA_ANY(state), "waiting", 7) != 0)
			continue;
		tids[i] = slot->tts_tid;
		locked[i] = true;
	}
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snapshot);
	table_close(rel, NoLock);
	return true;
}

/*
 * Mark the n tickets at tids[i] (each locked by this transaction, at the
 * version mm_rows_lock locked) with state, matched_at = at, match_id[i],
 * team[i] and, when roles is not NULL, role roles[i] (text).  Returns
 * false, having done nothing, when the rows must be written by a statement
 * (see open_tickets).
 */
bool
mm_rows_mark(const ItemPointerData *tids, int n, const char *state, TimestampTz at,
			 const int64 *match_id, const int32 *team, const Datum *roles)
{
	Relation	rel = open_tickets(RowExclusiveLock);
	EState	   *estate;
	RangeTblEntry *rte;
	ResultRelInfo *rri;
	TupleTableSlot *old;
	TupleTableSlot *new;
	TupleDesc	desc;
	AttrNumber	att_state;
	AttrNumber	att_matched_at;
	AttrNumber	att_match_id;
	AttrNumber	att_team;
	AttrNumber	att_role = InvalidAttrNumber;
	Datum		state_datum = CStringGetTextDatum(state);

	if (rel == NULL)
		return false;
	desc = RelationGetDescr(rel);
	att_state = mm_rel_column(rel, "state", false);
	att_matched_at = mm_rel_column(rel, "matched_at", false);
	att_match_id = mm_rel_column(rel, "match_id", false);
	att_team = mm_rel_column(rel, "team", false);
	if (roles != NULL)
		att_role = mm_rel_column(rel, "role", false);

	estate = CreateExecutorState();
	rte = makeNode(RangeTblEntry);
	rte->rtekind = RTE_RELATION;
	rte->relid = RelationGetRelid(rel);
	rte->relkind = rel->rd_rel->relkind;
	rte->rellockmode = RowExclusiveLock;
	ExecInitRangeTable(estate, list_make1(rte));
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	estate->es_output_cid = GetCurrentCommandId(true);
	estate->es_snapshot = RegisterSnapshot(GetTransactionSnapshot());
	ExecOpenIndices(rri, false);

	old = table_slot_create(rel, &estate->es_tupleTable);
	new = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	for (int i = 0; i < n; i++)
	{
		ItemPointerData tid = tids[i];

		CHECK_FOR_INTERRUPTS();
		if (!table_tuple_fetch_row_version(rel, &tid, SnapshotAny, old))
			elog(ERROR, "ticket at (%u,%u) to mark is gone",
				 ItemPointerGetBlockNumber(&tid), ItemPointerGetOffsetNumber(&tid));
		slot_getallattrs(old);
		ExecClearTuple(new);
		memcpy(new->tts_values, old->tts_values, sizeof(Datum) * desc->natts);
		memcpy(new->tts_isnull, old->tts_isnull, sizeof(bool) * desc->natts);
		new->tts_values[att_state - 1] = state_datum;
		new->tts_isnull[att_state - 1] = false;
		new->tts_values[att_matched_at - 1] = TimestampTzGetDatum(at);
		new->tts_isnull[att_matched_at - 1] = false;
		new->tts_values[att_match_id - 1] = Int64GetDatum(match_id[i]);
		new->tts_isnull[att_match_id - 1] = false;
		new->tts_values[att_team - 1] = Int32GetDatum(team[i]);
		new->tts_isnull[att_team - 1] = false;
		if (roles != NULL)
		{
			new->tts_values[att_role - 1] = roles[i];
			new->tts_isnull[att_role - 1] = false;
		}
		ExecStoreVirtualTuple(new);
		ExecSimpleRelationUpdate(rri, estate, NULL, old, new);
		ResetPerTupleExprContext(estate);
	}
	ExecCloseIndices(rri);
	ExecResetTupleTable(estate->es_tupleTable, true);
	UnregisterSnapshot(estate->es_snapshot);
	FreeExecutorState(estate);
	table_close(rel, NoLock);
	return true;
}
