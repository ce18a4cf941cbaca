/*
 * waiting.c
 *		Read a queue's waiting tickets for a tick, through the index
 *		tickets_waiting.
 *
 * A tick reads every waiting ticket of its queue.  Through SPI, the
 * statement's plan depends on the table's statistics: on a tickets table
 * that has grown since its last ANALYZE (a new install, a burst, a
 * TRUNCATE) the planner can pick a sequential scan of the whole history,
 * once per tick.  The partial unique index tickets_waiting (queue, player)
 * WHERE state IN ('waiting', 'proposed') holds exactly the rows a tick
 * wants, whatever the statistics say, so the scan walks it with an
 * equality key on queue, collects the heap addresses, sorts them and
 * fetches the tuples in heap order (as a bitmap heap scan would: no random
 * access over a large pool), checking each for state 'waiting' and the
 * caller's enqueued_at bounds.  The table is locked before its index and
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
	IndexFetchTableData *fetch;
	ItemPointerData *tids;		/* the index's entries for the queue, in heap order */
	int			ntids;
	int			next;
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

static AttrNumber
column(Relation rel, const char *name, bool missing_ok)
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
				 errmsg("matchmaker.tickets has no column \"%s\"", name),
				 errhint("Update the extension with ALTER EXTENSION matchmaker UPDATE.")));
	return InvalidAttrNumber;
}

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* Open the scan of queue's waiting tickets enqueued at or before until, or after ahead. */
MMWaitingScan *
mm_waiting_begin(const char *queue, TimestampTz until, TimestampTz ahead)
{
	MMWaitingScan *scan = palloc0(sizeof(MMWaitingScan));
	Oid			relid;
	Oid			indexid;
	Relation	index;
	IndexScanDesc iscan;
	ScanKeyData key;
	ItemPointer tid;
	int			cap = 1024;

	/* lock the table first: its index and columns are then what they stay */
	relid = RangeVarGetRelidExtended(makeRangeVar("matchmaker", "tickets", -1),
									 AccessShareLock, 0, NULL, NULL);
	indexid = get_relname_relid("tickets_waiting", get_rel_namespace(relid));
	if (!OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("index matchmaker.tickets_waiting is missing"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	scan->rel = table_open(relid, NoLock);
	index = index_open(indexid, AccessShareLock);
	if (index->rd_index->indrelid != relid ||
		IndexRelationGetNumberOfKeyAttributes(index) < 1 ||
		index->rd_index->indkey.values[0] != column(scan->rel, "queue", false))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index matchmaker.tickets_waiting does not lead with the queue"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	scan->att_id = column(scan->rel, "id", false);
	scan->att_player = column(scan->rel, "player", false);
	scan->att_rating = column(scan->rel, "rating", false);
	scan->att_attributes = column(scan->rel, "attributes", false);
	scan->att_state = column(scan->rel, "state", false);
	scan->att_enqueued_at = column(scan->rel, "enqueued_at", false);
	scan->att_party = column(scan->rel, "party", true);
	scan->until = until;
	scan->ahead = ahead;

	/* the tick's own writes so far are seen, as by a statement */
	CommandCounterIncrement();
	scan->snapshot = RegisterSnapshot(GetTransactionSnapshot());

	/* the queue's index entries (one per heap tuple), then in heap order */
	iscan = index_beginscan(scan->rel, index, scan->snapshot, 1, 0);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   index->rd_indcollation[0], F_TEXTEQ, CStringGetTextDatum(queue));
	index_rescan(iscan, &key, 1, NULL, 0);
	scan->tids = palloc(sizeof(ItemPointerData) * cap);
	while ((tid = index_getnext_tid(iscan, ForwardScanDirection)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (scan->ntids == cap)
		{
			cap *= 2;
			scan->tids = repalloc_huge(scan->tids, sizeof(ItemPointerData) * cap);
		}
		scan->tids[scan->ntids++] = *tid;
	}
	index_endscan(iscan);
	index_close(index, AccessShareLock);
	qsort(scan->tids, scan->ntids, sizeof(ItemPointerData), tid_cmp);
	scan->slot = table_slot_create(scan->rel, NULL);
	scan->fetch = table_index_fetch_begin(scan->rel);
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

	while (scan->next < scan->ntids)
	{
		ItemPointerData tid = scan->tids[scan->next++];
		bool		call_again = false;
		bool		all_dead = false;
		bool		isnull;
		text	   *state;
		TimestampTz enqueued_at;

		CHECK_FOR_INTERRUPTS();
		/* one entry twice (it cannot be, in a unique btree) is read once */
		if (scan->next > 1 && ItemPointerEquals(&tid, &scan->tids[scan->next - 2]))
			continue;
		/* an MVCC snapshot sees at most one member of a HOT chain */
		if (!table_index_fetch_tuple(scan->fetch, &tid, scan->snapshot, slot, &call_again, &all_dead))
			continue;
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
	table_index_fetch_end(scan->fetch);
	ExecDropSingleTupleTableSlot(scan->slot);
	UnregisterSnapshot(scan->snapshot);
	table_close(scan->rel, NoLock);
	pfree(scan->tids);
	pfree(scan);
}
