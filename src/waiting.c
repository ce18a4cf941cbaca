/*
 * waiting.c
 *		Read a queue's waiting tickets for a tick, straight from the index
 *		tickets_waiting.
 *
 * A tick reads every waiting ticket of its queue.  Through SPI, the
 * statement's plan depends on the table's statistics: on a tickets table
 * that has grown since its last ANALYZE (a new install, a burst, a
 * TRUNCATE) the planner can pick a sequential scan of the whole history,
 * once per tick.  The partial unique index tickets_waiting (queue, player)
 * WHERE state IN ('waiting', 'proposed') holds exactly the rows a tick
 * wants, whatever the statistics say, so the scan walks it: an equality
 * key on queue, the tuples checked for state 'waiting' and for the
 * caller's enqueued_at bounds.  The snapshot is taken as a READ COMMITTED
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
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

struct MMWaitingScan
{
	Relation	rel;
	Relation	index;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	IndexScanDesc scan;
	ScanKeyData key;
	TimestampTz until;
	TimestampTz ahead;
};

/* The columns a tick reads, by number in the table as installed (an upgrade appends). */
static Oid	cached_relid = InvalidOid;
static AttrNumber att_id;
static AttrNumber att_player;
static AttrNumber att_rating;
static AttrNumber att_attributes;
static AttrNumber att_state;
static AttrNumber att_enqueued_at;
static AttrNumber att_party;		/* InvalidAttrNumber before 0.3.0 */

static AttrNumber
column(Oid relid, const char *name, bool missing_ok)
{
	AttrNumber	att = get_attnum(relid, name);

	if (att == InvalidAttrNumber && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("matchmaker.tickets has no column \"%s\"", name),
				 errhint("Update the extension with ALTER EXTENSION matchmaker UPDATE.")));
	return att;
}

/* Open the scan of queue's waiting tickets enqueued at or before until, or after ahead. */
MMWaitingScan *
mm_waiting_begin(const char *queue, TimestampTz until, TimestampTz ahead)
{
	MMWaitingScan *scan = palloc0(sizeof(MMWaitingScan));
	Oid			nsp = get_namespace_oid("matchmaker", false);
	Oid			relid = get_relname_relid("tickets", nsp);
	Oid			indexid = get_relname_relid("tickets_waiting", nsp);

	if (!OidIsValid(relid) || !OidIsValid(indexid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("matchmaker.tickets or its index tickets_waiting is missing"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	if (relid != cached_relid)
	{
		att_id = column(relid, "id", false);
		att_player = column(relid, "player", false);
		att_rating = column(relid, "rating", false);
		att_attributes = column(relid, "attributes", false);
		att_state = column(relid, "state", false);
		att_enqueued_at = column(relid, "enqueued_at", false);
		att_party = column(relid, "party", true);
		cached_relid = relid;
	}
	scan->until = until;
	scan->ahead = ahead;
	scan->rel = table_open(relid, AccessShareLock);
	scan->index = index_open(indexid, AccessShareLock);
	if (scan->index->rd_index->indrelid != relid ||
		IndexRelationGetNumberOfKeyAttributes(scan->index) < 1 ||
		scan->index->rd_index->indkey.values[0] != column(relid, "queue", false))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("index matchmaker.tickets_waiting does not lead with the queue"),
				 errhint("Reinstall the extension: DROP EXTENSION matchmaker; CREATE EXTENSION matchmaker.")));
	/* the tick's own writes so far are seen, as by a statement */
	CommandCounterIncrement();
	scan->snapshot = RegisterSnapshot(GetTransactionSnapshot());
	scan->slot = table_slot_create(scan->rel, NULL);
	scan->scan = index_beginscan(scan->rel, scan->index, scan->snapshot, 1, 0);
	ScanKeyEntryInitialize(&scan->key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   scan->index->rd_indcollation[0], F_TEXTEQ,
						   CStringGetTextDatum(queue));
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
		state = DatumGetTextPP(slot_getattr(slot, att_state, &isnull));
		if (isnull || VARSIZE_ANY_EXHDR(state) != 7 || memcmp(VARDATA_ANY(state), "waiting", 7) != 0)
			continue;
		enqueued_at = DatumGetTimestampTz(slot_getattr(slot, att_enqueued_at, &isnull));
		if (enqueued_at > scan->until && enqueued_at <= scan->ahead)
			continue;
		row->id = DatumGetInt64(slot_getattr(slot, att_id, &isnull));
		row->rating = DatumGetFloat8(slot_getattr(slot, att_rating, &isnull));
		row->enqueued_at = enqueued_at;
		row->party = -1;
		if (att_party != InvalidAttrNumber)
		{
			Datum		party = slot_getattr(slot, att_party, &isnull);

			if (!isnull)
				row->party = DatumGetInt64(party);
		}
		row->attributes = slot_getattr(slot, att_attributes, &isnull);
		row->player = slot_getattr(slot, att_player, &isnull);
		return true;
	}
	return false;
}

/* Close the scan. */
void
mm_waiting_end(MMWaitingScan *scan)
{
	index_endscan(scan->scan);
	ExecDropSingleTupleTableSlot(scan->slot);
	UnregisterSnapshot(scan->snapshot);
	index_close(scan->index, AccessShareLock);
	table_close(scan->rel, AccessShareLock);
	pfree(scan);
}
