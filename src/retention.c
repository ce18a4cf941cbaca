/*
 * retention.c
 *		Removing what has ended: matches and their tickets, dissolved
 *		proposals and their declined or cancelled tickets, tickets that
 *		ended unmatched (cancelled, expired, invalid), and tunings, older
 *		than a cut-off.
 *
 * The workers call mm_purge for each queue they run, every
 * MM_PURGE_EVERY seconds while matchmaker.retention is set, in a
 * transaction of its own after the tick (worker.c); matchmaker.purge()
 * calls it by hand.  Each call removes at most max_rows rows of each kind,
 * oldest first, along index ranges, so it holds few locks for a short
 * time: the rows it removes have ended, and nothing else writes them; it
 * skips rows another transaction has locked (a backfill() holding its
 * match, a purge() by hand left open), so it never waits for a client.
 * It takes the queue's enqueue lock in share mode, as enqueue does, so a
 * drop_queue (which deletes the same rows in another order) runs before
 * or after it, never interleaved: the workers skip the queue while a
 * drop_queue holds that lock, purge() waits.
 * What it removes goes together, so check() holds after every call: a
 * match with its tickets, backfill requests and ready proposal; a
 * dissolved proposal with the tickets that point to it.  A match with an
 * open backfill request, or with a player who joined it after the cut-off
 * (a backfill), is kept: its game still runs.
 */
#include "matchmaker.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mm_purge_sql);

/* Run one purge statement; returns the rows it removed (its one column). */
static int64
purge_step(SPIPlanPtr plan, Datum *values, const char *what)
{
	bool		isnull;
	Datum		d;

	if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not remove %s", what);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 0 : DatumGetInt64(d);
}

/* Whether the installed tables are 0.3.0's (their indexes serve the removal). */
static bool
retention_available(void)
{
	return mm_table_exists("queue_buckets");
}

/* See the header comment; returns the rows removed (0 before 0.3.0's tables). */
int64
mm_purge(const char *queue, TimestampTz before, int max_rows, bool wait)
{
	static SPIPlanPtr plans[4];
	static SPIPlanPtr lock_plan;
	Oid			argtypes[4] = {TEXTOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID};
	Datum		values[4];
	int64		removed = 0;
	int64	   *locked;
	int			nlocked;

	/* before ALTER EXTENSION UPDATE to 0.3.0 (no indexes for it): nothing */
	if (!retention_available())
		return 0;
	if (!mm_lock_queue_key(queue, MM_LOCK_KIND_ENQUEUE, 0, ShareLock, wait))
		return 0;

	/*
	 * Matches, with their tickets, backfill requests and ready proposals:
	 * first lock the oldest without an open request or a recent player
	 * (skipping those a backfill() holds), then, with a fresh snapshot,
	 * remove those of them that still have neither.  A backfill() that
	 * comes after the lock waits for this transaction and then finds the
	 * match gone; one that came before it has committed its request,
	 * which the second statement sees.
	 */
	mm_keep_plan(&lock_plan,
				 "SELECT x.id FROM matchmaker.matches x "
				 "WHERE x.queue OPERATOR(pg_catalog.=) $1 AND x.created_at OPERATOR(pg_catalog.<) $2 "
				 "AND NOT EXISTS (SELECT 1 FROM matchmaker.backfills b WHERE b.match_id OPERATOR(pg_catalog.=) x.id "
				 "AND b.state OPERATOR(pg_catalog.=) 'open') "
				 "AND NOT EXISTS (SELECT 1 FROM matchmaker.tickets t WHERE t.match_id OPERATOR(pg_catalog.=) x.id "
				 "AND t.matched_at OPERATOR(pg_catalog.>=) $2) "
				 "ORDER BY x.created_at LIMIT $3 FOR UPDATE OF x SKIP LOCKED",
				 3, argtypes);
	mm_keep_plan(&plans[0],
				 "WITH m AS (SELECT x.id FROM matchmaker.matches x "
				 "WHERE x.id OPERATOR(pg_catalog.=) ANY ($4) "
				 "AND NOT EXISTS (SELECT 1 FROM matchmaker.backfills b WHERE b.match_id OPERATOR(pg_catalog.=) x.id "
				 "AND b.state OPERATOR(pg_catalog.=) 'open') "
				 "AND NOT EXISTS (SELECT 1 FROM matchmaker.tickets t WHERE t.match_id OPERATOR(pg_catalog.=) x.id "
				 "AND t.matched_at OPERATOR(pg_catalog.>=) $2)), "
				 "t AS (DELETE FROM matchmaker.tickets WHERE match_id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM m)) RETURNING 1), "
				 "b AS (DELETE FROM matchmaker.backfills WHERE match_id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM m)) RETURNING 1), "
				 "p AS (DELETE FROM matchmaker.proposals WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM m)) RETURNING 1), "
				 "d AS (DELETE FROM matchmaker.matches WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM m)) RETURNING 1) "
				 "SELECT (SELECT pg_catalog.count(*) FROM t) OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM b) "
				 "OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM p) OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM d)",
				 4, argtypes);
	/* dissolved proposals, with their declined and cancelled tickets */
	mm_keep_plan(&plans[1],
				 "WITH p AS (SELECT x.id FROM matchmaker.proposals x "
				 "WHERE x.queue OPERATOR(pg_catalog.=) $1 AND x.state OPERATOR(pg_catalog.=) 'dissolved' "
				 "AND x.ended_at OPERATOR(pg_catalog.<) $2 ORDER BY x.ended_at LIMIT $3 FOR UPDATE SKIP LOCKED), "
				 "t AS (DELETE FROM matchmaker.tickets WHERE match_id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM p)) "
				 "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['declined', 'cancelled']) RETURNING 1), "
				 "d AS (DELETE FROM matchmaker.proposals WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM p)) RETURNING 1) "
				 "SELECT (SELECT pg_catalog.count(*) FROM t) OPERATOR(pg_catalog.+) (SELECT pg_catalog.count(*) FROM d)",
				 3, argtypes);
	/* tickets that ended unmatched */
	mm_keep_plan(&plans[2],
				 "WITH d AS (DELETE FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY("
				 "SELECT x.id FROM matchmaker.tickets x WHERE x.queue OPERATOR(pg_catalog.=) $1 "
				 "AND x.match_id IS NULL AND x.state OPERATOR(pg_catalog.=) ANY (ARRAY['cancelled', 'expired', 'invalid']) "
				 "AND x.ended_at OPERATOR(pg_catalog.<) $2 ORDER BY x.ended_at LIMIT $3 FOR UPDATE SKIP LOCKED)) RETURNING 1) "
				 "SELECT pg_catalog.count(*) FROM d",
				 3, argtypes);
	/* tunings */
	mm_keep_plan(&plans[3],
				 "WITH d AS (DELETE FROM matchmaker.tunings WHERE id OPERATOR(pg_catalog.=) ANY (ARRAY("
				 "SELECT x.id FROM matchmaker.tunings x WHERE x.queue OPERATOR(pg_catalog.=) $1 "
				 "AND x.tuned_at OPERATOR(pg_catalog.<) $2 ORDER BY x.tuned_at LIMIT $3 FOR UPDATE SKIP LOCKED)) RETURNING 1) "
				 "SELECT pg_catalog.count(*) FROM d",
				 3, argtypes);
	values[0] = CStringGetTextDatum(queue);
	values[1] = TimestampTzGetDatum(before);
	values[2] = Int32GetDatum(max_rows);
	if (SPI_execute_plan(lock_plan, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not lock old matches");
	locked = mm_spi_ids(1, &nlocked);
	if (nlocked > 0)
	{
		Datum	   *ids = palloc(sizeof(Datum) * nlocked);

		for (int i = 0; i < nlocked; i++)
			ids[i] = Int64GetDatum(locked[i]);
		values[3] = PointerGetDatum(construct_array(ids, nlocked, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		removed += purge_step(plans[0], values, "old matches");
	}
	removed += purge_step(plans[1], values, "old proposals");
	removed += purge_step(plans[2], values, "old tickets");
	removed += purge_step(plans[3], values, "old tunings");
	return removed;
}

/*
 * matchmaker.purge(queue text, before timestamptz, max_rows int): what the
 * workers do under matchmaker.retention, by hand; returns the rows removed.
 */
Datum
mm_purge_sql(PG_FUNCTION_ARGS)
{
	char	   *queue;
	TimestampTz before;
	int32		max_rows;
	int64		removed;
	MMQueue		q;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("queue, before and max_rows must not be null")));
	queue = text_to_cstring(PG_GETARG_TEXT_PP(0));
	before = PG_GETARG_TIMESTAMPTZ(1);
	max_rows = PG_GETARG_INT32(2);
	if (before > GetCurrentTransactionStartTimestamp())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("before must not be later than now()"),
				 errdetail("Rows that end after the cut-off are those of games still being matched or played."),
				 errhint("Pass a time in the past, such as now() - interval '7 days'.")));
	if (max_rows < 1 || max_rows > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_rows must be between 1 and 1000000, not %d", max_rows),
				 errhint("Remove a large history in several calls, each a short transaction.")));
	mm_require_read_committed("purge");
	SPI_connect();
	if (!retention_available())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("removing old rows needs version 0.3.0 of the extension's tables"),
				 errhint("Run ALTER EXTENSION matchmaker UPDATE.")));
	if (!mm_load_queue(queue, MM_LOCK_NONE, &q))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("queue \"%s\" does not exist", mm_shorten(queue)),
				 errhint("See the queues in matchmaker.queues.")));
	removed = mm_purge(queue, before, max_rows, true);
	SPI_finish();
	PG_RETURN_INT64(removed);
}
