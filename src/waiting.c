/*
 * waiting.c
 *		Read a queue's waiting tickets for a tick, through the index
 *		tickets_waiting; and whether a queue has entries in an index led by
 *		the queue (proposals, backfill requests), without the executor.
 *
 * A tick reads every waiting ticket of its queue.  Through SPI, the
 * statement's plan depends on the table's statistics: on a tickets table
 * that has grown since its last ANALYZE (a new install, a burst, a
 * TRUNCATE) the planner can pick a sequential scan of the whole history,
 * once per tick.  The partial unique index tickets_waiting (queue, player)
 * WHERE state IN ('waiting', 'proposed') holds exactly the rows a tick
 * wants, whatever the statistics say, so the scan walks it with an
 * equality key on queue, checking each tuple for state 'waiting' and the
 * caller's enqueued_at bounds.  It fetches the tuples in index order (an
 * index scan, not a bitmap one): that way the scan marks the entries of
 * tickets matched long ago as dead, as the executor's index scans do, and
 * the next tick skips them; collecting the addresses to fetch them in heap
 * order would read a large pool faster but walk every dead entry of the
 * queue's history at every tick until the next VACUUM.  The table is locked before its index and
 * columns are looked up (an ALTER EXTENSION UPDATE may have rebuilt or
 * extended them meanwhile).  The snapshot is taken as a READ COMMITTED
 * statement would take it, after the tick's own earlier writes.
 */
#include "matchmaker.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

struct MMWaitingScan
{
	Relation	rel;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	Relation	index;
	IndexScanDesc scan;
	ScanKeyData key;
	TimestampTz until;
	TimestampTz ahead;
	/* the columns read, by number in the table as it is now */
	AttrNumber	att_id;
	AttrNumber	att_player;
	AttrNumber	att_rating;
	AttrNumber	att_attributes;
	AttrNumber	att_state;
	AttrNumber	att_enqueued_at;
	AttrNumber	att_party;		/* InvalidAttrNumber before 0.3.0 */
};

/*
 * The number of column name of a table of the extension as it is now, or
 * InvalidAttrNumber when missing_ok and it has none.
 */
AttrNumber
mm_rel_column(Relation rel, const char *name, bool missing_ok)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	if (!missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("matchmaker.%s has no column \"%s\"", RelationGetRelationName(rel), name),
				 errhint("Update the extension with ALTER EXTENSION matchmaker UPDATE.")));
	return InvalidAttrNumber;
}

/*
 * Open table of the extension and its index, whose first key column must
 * be the text column queue.  The table is locked first (in lockmode): its
 * index and columns are then what they stay.
 */
static void
open_by_queue(const char *table, const char *index, LOCKMODE lockmode, Relation *rel_out,
			  Relation *index_out)
{
	Oid			relid;
	Oid			indexid;
	Relation	rel;
	Relation	ind;

	relid = RangeVarGetRelidExtended(makeRangeVar("matchmaker", (char *) table, -1),
									 lockmode, 0, NULL, NULL);
	indexid = get_relname_relid(index, get_rel_namespace(relid));
	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index matchmaker.%s is missing", index),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	rel = table_open(relid, NoLock);
	ind = index_open(indexid, AccessShareLock);
	if (ind->rd_index->indrelid != relid ||
		IndexRelationGetNumberOfKeyAttributes(ind) < 1 ||
		ind->rd_index->indkey.values[0] != mm_rel_column(rel, "queue", false))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index matchmaker.%s does not lead with the queue", index),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	*rel_out = rel;
	*index_out = ind;
}

/*
 * Whether index of table (led by its queue column) holds an entry of
 * queue.  It reads the index alone, without the executor: false means no
 * row of the queue is in the index, so no statement would see one (a
 * tick skips its queries of proposals and backfill requests for a queue
 * that has none).  An entry of a dead row counts: the query it lets run
 * then finds nothing and marks the entry dead.  The table is locked in
 * lockmode, the mode of the statements skipped, so that the tick's
 * transaction holds the same locks either way.
 */
bool
mm_index_has_queue(const char *table, const char *index, const char *queue, LOCKMODE lockmode)
{
	Relation	rel;
	Relation	ind;
	Snapshot	snapshot;
	IndexScanDesc scan;
	ScanKeyData key;
	bool		found;

	open_by_queue(table, index, lockmode, &rel, &ind);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan = index_beginscan(rel, ind, snapshot, 1, 0);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   ind->rd_indcollation[0], F_TEXTEQ, CStringGetTextDatum(queue));
	index_rescan(scan, &key, 1, NULL, 0);
	found = index_getnext_tid(scan, ForwardScanDirection) != NULL;
	index_endscan(scan);
	UnregisterSnapshot(snapshot);
	index_close(ind, AccessShareLock);
	table_close(rel, NoLock);
	return found;
}

/* Open the scan of queue's waiting tickets enqueued at or before until, or after ahead. */
MMWaitingScan *
mm_waiting_begin(const char *queue, TimestampTz until, TimestampTz ahead)
{
	MMWaitingScan *scan = palloc0(sizeof(MMWaitingScan));

	open_by_queue("tickets", "tickets_waiting", AccessShareLock, &scan->rel, &scan->index);
	scan->att_id = mm_rel_column(scan->rel, "id", false);
	scan->att_player = mm_rel_column(scan->rel, "player", false);
	scan->att_rating = mm_rel_column(scan->rel, "rating", false);
	scan->att_attributes = mm_rel_column(scan->rel, "attributes", false);
	scan->att_state = mm_rel_column(scan->rel, "state", false);
	scan->att_enqueued_at = mm_rel_column(scan->rel, "enqueued_at", false);
	scan->att_party = mm_rel_column(scan->rel, "party", true);
	scan->until = until;
	scan->ahead = ahead;

	/* the tick's own writes so far are seen, as by a statement */
	CommandCounterIncrement();
	scan->snapshot = RegisterSnapshot(GetTransactionSnapshot());

	scan->slot = table_slot_create(scan->rel, NULL);
	scan->scan = index_beginscan(scan->rel, scan->index, scan->snapshot, 1, 0);
	ScanKeyEntryInitialize(&scan->key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   scan->index->rd_indcollation[0], F_TEXTEQ, CStringGetTextDatum(queue));
	index_rescan(scan->scan, &scan->key, 1, NULL, 0);
	return scan;
}

/*
 * The next waiting ticket, or false at the end.  Its by-reference values
 * point into the current tuple: use or copy them before the next call.
 */
bool
mm_waiting_next(MMWaitingScan *scan, MMWaitingRow *row)
{
	TupleTableSlot *slot = scan->slot;

	while (index_getnext_slot(scan->scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		text	   *state;
		TimestampTz enqueued_at;

		CHECK_FOR_INTERRUPTS();
		state = DatumGetTextPP(slot_getattr(slot, scan->att_state, &isnull));
		if (isnull || VARSIZE_ANY_EXHDR(state) != 7 || memcmp(VARDATA_ANY(state), "waiting", 7) != 0)
			continue;
		enqueued_at = DatumGetTimestampTz(slot_getattr(slot, scan->att_enqueued_at, &isnull));
		if (enqueued_at > scan->until && enqueued_at <= scan->ahead)
			continue;
		row->id = DatumGetInt64(slot_getattr(slot, scan->att_id, &isnull));
		row->tid = slot->tts_tid;
		row->rating = DatumGetFloat8(slot_getattr(slot, scan->att_rating, &isnull));
		row->enqueued_at = enqueued_at;
		row->party = -1;
		if (scan->att_party != InvalidAttrNumber)
		{
			Datum		party = slot_getattr(slot, scan->att_party, &isnull);

			if (!isnull)
				row->party = DatumGetInt64(party);
		}
		row->attributes = slot_getattr(slot, scan->att_attributes, &isnull);
		row->player = slot_getattr(slot, scan->att_player, &isnull);
		return true;
	}
	return false;
}

/* Close the scan (the table's lock stays until the transaction ends). */
void
mm_waiting_end(MMWaitingScan *scan)
{
	index_endscan(scan->scan);
	ExecDropSingleTupleTableSlot(scan->slot);
	UnregisterSnapshot(scan->snapshot);
	index_close(scan->index, AccessShareLock);
	table_close(scan->rel, NoLock);
	pfree(scan);
}
