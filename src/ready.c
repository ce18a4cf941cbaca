/*
 * ready.c
 *		Ready checks (params.accept_timeout): a match of such a queue forms
 *		as a proposal (a row of matchmaker.proposals, its tickets
 *		'proposed'); it becomes a match when every player accepts, and
 *		dissolves on a decline, a cancel or its timeout.  Every step is one
 *		transaction with its event.
 *
 * Concurrency: every change of a proposal locks its row FOR UPDATE first,
 * then its tickets: accept, cancel (of a proposed ticket) and the tick
 * that enforces the timeout (which takes the row FOR UPDATE SKIP LOCKED,
 * so it never waits for a client).  So the answers to one proposal are
 * applied one after the other, each seeing those before it (READ
 * COMMITTED: every statement reads what committed before it), and exactly
 * one of them, or the timeout, ends the proposal.  A tick forming matches
 * locks only waiting tickets, never a proposed one.
 */
#include "matchmaker.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

/* Proposals a tick dissolves for their timeout at most (the rest next tick). */
#define MM_READY_EXPIRE_BATCH	1000

/* Whether the installed schema has ready checks (0.3.0 on). */
bool
mm_ready_available(void)
{
	return mm_table_exists("proposals");
}

/* Refuse to propose matches before ALTER EXTENSION matchmaker UPDATE. */
void
mm_ready_require(const MMQueue *queue)
{
	if (!mm_ready_available())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" has ready checks (params.accept_timeout), which this version of the extension's tables cannot hold",
						queue->name),
				 errhint("Run ALTER EXTENSION matchmaker UPDATE, or remove accept_timeout from the queue's params.")));
}

/* Run a prepared plan, or fail with what it was for. */
static void
ready_run(SPIPlanPtr plan, Datum *values, int expect, const char *what)
{
	if (SPI_execute_plan(plan, values, NULL, false, 0) != expect)
		elog(ERROR, "could not %s", what);
}

/*
 * Lock proposal id FOR UPDATE (SKIP LOCKED when skip); returns whether it
 * is still pending, and its accept_by into *accept_by when not NULL.
 */
static bool
lock_proposal(int64 id, bool skip, TimestampTz *accept_by)
{
	static SPIPlanPtr plans[2];
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};
	bool		isnull;

	mm_keep_plan(&plans[skip],
				 skip ?
				 "SELECT accept_by FROM matchmaker.proposals WHERE id OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'proposed' FOR UPDATE SKIP LOCKED" :
				 "SELECT accept_by FROM matchmaker.proposals WHERE id OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'proposed' FOR UPDATE",
				 1, argtypes);
	ready_run(plans[skip], values, SPI_OK_SELECT, "lock a proposal");
	if (SPI_processed == 0)
		return false;
	if (accept_by != NULL)
		*accept_by = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return true;
}

/*
 * Dissolve proposal id of queue (its row locked by the caller) at now for
 * reason: "declined" (ticket declined), "cancelled" (ticket was cancelled
 * by the caller) or "timeout" (the tickets that did not accept).  Those
 * end 'declined' (a cancelled one stays cancelled); the others wait again
 * with their enqueue time, so the next tick may group them at once (it is
 * woken for them).  Sends {"event": "declined", "queue", "match",
 * "reason", "declined": [...], "requeued": [...]}.
 */
static void
dissolve(const char *queue, const char *channel, int64 id, const char *reason,
		 int64 ticket, TimestampTz now)
{
	static SPIPlanPtr lock_plan;
	static SPIPlanPtr decline_plan;
	static SPIPlanPtr requeue_plan;
	static SPIPlanPtr proposal_plan;
	Oid			argtypes[3] = {INT8OID, TIMESTAMPTZOID, TEXTOID};
	Oid			listtypes[2] = {INT8ARRAYOID, TIMESTAMPTZOID};
	Oid			locktypes[2] = {INT8OID, INT8OID};
	Datum		values[3];
	int64	   *declined;
	int64	   *requeued;
	int			nd = 0;
	int			nr = 0;
	bool		timeout = strcmp(reason, "timeout") == 0;
	StringInfoData payload;
	int			head;

	/* the proposal's tickets still proposed, with their answers */
	mm_keep_plan(&lock_plan,
				 "SELECT id, accepted IS TRUE, party FROM matchmaker.tickets "
				 "WHERE match_id OPERATOR(pg_catalog.=) $1 AND (state OPERATOR(pg_catalog.=) 'proposed' "
				 "OR id OPERATOR(pg_catalog.=) $2) "
				 "ORDER BY id FOR UPDATE",
				 2, locktypes);
	values[0] = Int64GetDatum(id);
	values[1] = Int64GetDatum(ticket);
	ready_run(lock_plan, values, SPI_OK_SELECT, "lock a proposal's tickets");
	declined = palloc(sizeof(int64) * (SPI_processed + 1));
	requeued = palloc(sizeof(int64) * (SPI_processed + 1));
	if (!timeout)
		declined[nd++] = ticket;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int64		t = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
		bool		accepted = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

		if (timeout ? !accepted : t == ticket)
		{
			if (timeout)
				declined[nd++] = t;
		}
		else
			requeued[nr++] = t;
	}
	/* a party answers as one: a member declined (or silent) declines its party */
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int64		t = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
		Datum		party = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 3, &isnull);
		bool		out = false;

		if (isnull)
			continue;
		for (int d = 0; d < nd && !out; d++)
			out = declined[d] == t;
		if (!out)
			continue;
		for (uint64 q = 0; q < SPI_processed; q++)
		{
			bool		qnull;
			Datum		qp = SPI_getbinval(SPI_tuptable->vals[q], SPI_tuptable->tupdesc, 3, &qnull);
			int64		qt = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[q], SPI_tuptable->tupdesc, 1, &qnull));

			if (qnull || DatumGetInt64(qp) != DatumGetInt64(party))
				continue;
			for (int i = 0; i < nr; i++)
				if (requeued[i] == qt)
				{
					requeued[i] = requeued[--nr];
					declined[nd++] = qt;
					break;
				}
		}
	}
	SPI_freetuptable(SPI_tuptable);

	/* the two by arrays of ids, rare: planned for each call's arrays and table */
	mm_keep_custom_plan(&decline_plan,
				 "UPDATE matchmaker.tickets SET state = 'declined', ended_at = $2, matched_at = NULL, "
				 "accepted = COALESCE(accepted, false) "
				 "WHERE id OPERATOR(pg_catalog.=) ANY ($1) AND state OPERATOR(pg_catalog.=) 'proposed'",
				 2, listtypes);
	mm_keep_custom_plan(&requeue_plan,
				 "UPDATE matchmaker.tickets SET state = 'waiting', match_id = NULL, team = NULL, "
				 "matched_at = NULL, accepted = NULL "
				 "WHERE id OPERATOR(pg_catalog.=) ANY ($1) AND state OPERATOR(pg_catalog.=) 'proposed'",
				 1, listtypes);
	values[0] = mm_int8_array(declined, nd);
	values[1] = TimestampTzGetDatum(now);
	ready_run(decline_plan, values, SPI_OK_UPDATE, "end the declined tickets");
	values[0] = mm_int8_array(requeued, nr);
	ready_run(requeue_plan, values, SPI_OK_UPDATE, "requeue a proposal's tickets");
	if (SPI_processed != (uint64) nr)
		elog(ERROR, "requeued %llu tickets, expected %d", (unsigned long long) SPI_processed, nr);

	mm_keep_plan(&proposal_plan,
				 "UPDATE matchmaker.proposals SET state = 'dissolved', ended_at = $2, reason = $3 "
				 "WHERE id OPERATOR(pg_catalog.=) $1",
				 3, argtypes);
	values[0] = Int64GetDatum(id);
	values[1] = TimestampTzGetDatum(now);
	values[2] = CStringGetTextDatum(reason);
	ready_run(proposal_plan, values, SPI_OK_UPDATE, "dissolve a proposal");

	for (int i = 0; i < nr; i++)
		mm_arrival_on_commit(queue);

	initStringInfo(&payload);
	mm_event_start(&payload, "declined", queue);
	appendStringInfo(&payload, ", \"match\": " INT64_FORMAT ", \"reason\": \"%s\"", id, reason);
	head = payload.len;
	mm_event_ids(&payload, "declined", declined, nd);
	mm_event_ids(&payload, "requeued", requeued, nr);
	mm_event_finish(&payload, head, channel);
}

/*
 * Make proposal id of queue (locked, every ticket accepted) a match: its
 * row goes into matches with the same id and columns, its tickets become
 * 'matched'.  Sends {"event": "ready", "queue", "match", "tickets": [...]},
 * and "filters" (the match's filter values) when the queue has filters,
 * "relaxed" (the filters its players waived) when some were.
 */
static void
make_ready(const char *queue, const char *channel, int64 id, TimestampTz now)
{
	static SPIPlanPtr match_plan;
	static SPIPlanPtr tickets_plan;
	Oid			argtypes[2] = {INT8OID, TIMESTAMPTZOID};
	Datum		values[2] = {Int64GetDatum(id), TimestampTzGetDatum(now)};
	int64	   *members;
	int			n;
	StringInfoData payload;
	int			head;
	char	   *filters;
	char	   *relaxed;

	mm_keep_plan(&match_plan,
				 "WITH p AS (UPDATE matchmaker.proposals SET state = 'ready', ended_at = $2 "
				 "WHERE id OPERATOR(pg_catalog.=) $1 RETURNING *) "
				 "INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost, filters, relaxed) "
				 "SELECT id, queue, created_at, bots, cost, criteria_cost, wait_cost, filters, relaxed FROM p "
				 "RETURNING filters::pg_catalog.text, pg_catalog.to_jsonb(relaxed)::pg_catalog.text",
				 2, argtypes);
	ready_run(match_plan, values, SPI_OK_INSERT_RETURNING, "make a proposal a match");
	if (SPI_processed != 1)
		elog(ERROR, "proposal " INT64_FORMAT " is missing", id);
	filters = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	relaxed = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	mm_keep_plan(&tickets_plan,
				 "UPDATE matchmaker.tickets SET state = 'matched' "
				 "WHERE match_id OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'proposed' "
				 "RETURNING id",
				 1, argtypes);
	ready_run(tickets_plan, values, SPI_OK_UPDATE_RETURNING, "mark a ready match's tickets");
	members = mm_spi_ids(1, &n);

	initStringInfo(&payload);
	mm_event_start(&payload, "ready", queue);
	appendStringInfo(&payload, ", \"match\": " INT64_FORMAT, id);
	head = payload.len;
	mm_event_ids(&payload, "tickets", members, n);
	if (filters != NULL)
		appendStringInfo(&payload, ", \"filters\": %s", filters);
	if (relaxed != NULL)
		appendStringInfo(&payload, ", \"relaxed\": %s", relaxed);
	mm_event_finish(&payload, head, channel);
}

/*
 * Dissolve the proposals of queue whose ready check timed out at now
 * (those another transaction holds are left for a later tick).  Returns
 * how many it dissolved; *pending tells whether proposals_pending held an
 * entry of the queue at all (when not, and the tick proposes nothing, no
 * proposal of the queue is pending at its end: only its ticks, which its
 * row serialises, propose).
 */
int
mm_ready_expire(const MMQueue *queue, TimestampTz now, bool *pending)
{
	static SPIPlanPtr plan;
	Oid			argtypes[3] = {TEXTOID, TIMESTAMPTZOID, INT4OID};
	Datum		values[3];
	int64	   *ids;
	int			n;

	*pending = false;
	if (!mm_ready_available() ||
		!mm_index_has_queue("proposals", "proposals_pending", queue->name, RowShareLock))
		return 0;
	*pending = true;
	mm_keep_plan(&plan,
				 "SELECT id FROM matchmaker.proposals WHERE queue OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'proposed' AND accept_by OPERATOR(pg_catalog.<=) $2 "
				 "ORDER BY accept_by LIMIT $3 FOR UPDATE SKIP LOCKED",
				 3, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(MM_READY_EXPIRE_BATCH);
	ready_run(plan, values, SPI_OK_SELECT, "read the timed-out proposals");
	ids = mm_spi_ids(1, &n);
	for (int i = 0; i < n; i++)
		dissolve(queue->name, queue->channel, ids[i], "timeout", 0, now);
	return n;
}

/*
 * When the next pending proposal of queue times out after now; DT_NOEND
 * when none.  A proposal already past its accept_by is one the tick could
 * not lock (a client holds it, in a transaction still open): it is not a
 * deadline, or the worker would tick the queue over and over until that
 * client ends; the queue's next regular tick dissolves it.
 */
TimestampTz
mm_ready_next_deadline(const MMQueue *queue, TimestampTz now)
{
	static SPIPlanPtr plan;
	Oid			argtypes[2] = {TEXTOID, TIMESTAMPTZOID};
	Datum		values[2];
	bool		isnull;
	Datum		d;

	if (!mm_ready_available() ||
		!mm_index_has_queue("proposals", "proposals_pending", queue->name, RowShareLock))
		return DT_NOEND;
	mm_keep_plan(&plan,
				 "SELECT pg_catalog.min(accept_by) FROM matchmaker.proposals "
				 "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'proposed' "
				 "AND accept_by OPERATOR(pg_catalog.>) $2",
				 2, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	ready_run(plan, values, SPI_OK_SELECT, "read the next ready check timeout");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? DT_NOEND : DatumGetTimestampTz(d);
}

/*
 * Lock the proposed ticket's proposal and then the ticket; returns the
 * proposal's id when both are still pending, else 0.  A proposal found
 * timed out (accept_by before now) is dissolved here, as the tick would.
 */
static int64
lock_pending(int64 ticket, const char *queue, const char *channel, TimestampTz now)
{
	static SPIPlanPtr read_plan;
	static SPIPlanPtr lock_plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(ticket)};
	bool		isnull;
	int64		id;
	TimestampTz accept_by;

	mm_keep_plan(&read_plan,
				 "SELECT match_id FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'proposed'",
				 1, argtypes);
	ready_run(read_plan, values, SPI_OK_SELECT, "read a proposed ticket");
	if (SPI_processed == 0)
		return 0;
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!lock_proposal(id, false, &accept_by))
		return 0;
	if (accept_by <= now)
	{
		dissolve(queue, channel, id, "timeout", 0, now);
		return 0;
	}
	/* the proposal's changes all lock it first: the ticket is still in it */
	mm_keep_plan(&lock_plan,
				 "SELECT 1 FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'proposed' FOR UPDATE",
				 1, argtypes);
	ready_run(lock_plan, values, SPI_OK_SELECT, "lock a proposed ticket");
	if (SPI_processed != 1)
		elog(ERROR, "ticket " INT64_FORMAT " left pending proposal " INT64_FORMAT, ticket, id);
	return id;
}

/*
 * Record a player's answer for a ticket of queue (SPI connected, owner
 * checked): accepted, the match becomes ready once all have accepted;
 * declined, it dissolves.  A ticket no longer proposed keeps its state.
 * Returns the ticket's state after the answer.
 */
char *
mm_ready_answer(int64 ticket, const char *queue, bool accepted)
{
	static SPIPlanPtr accept_plan;
	static SPIPlanPtr state_plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(ticket)};
	TimestampTz now = GetCurrentTimestamp();
	char	   *channel = mm_queue_channel(queue);
	int64		id = lock_pending(ticket, queue, channel, now);
	bool		isnull;

	if (id != 0 && !accepted)
		dissolve(queue, channel, id, "declined", ticket, now);
	else if (id != 0)
	{
		mm_keep_plan(&accept_plan,
					 "WITH a AS (UPDATE matchmaker.tickets SET accepted = true WHERE id OPERATOR(pg_catalog.=) $1) "
					 "SELECT pg_catalog.count(*) FROM matchmaker.tickets t, "
					 "(SELECT match_id FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1) m "
					 "WHERE t.match_id OPERATOR(pg_catalog.=) m.match_id AND t.state OPERATOR(pg_catalog.=) 'proposed' "
					 "AND t.accepted IS NOT TRUE AND t.id OPERATOR(pg_catalog.<>) $1",
					 1, argtypes);
		ready_run(accept_plan, values, SPI_OK_SELECT, "record an acceptance");
		if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) == 0)
			make_ready(queue, channel, id, now);
	}
	mm_keep_plan(&state_plan,
				 "SELECT state FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	ready_run(state_plan, values, SPI_OK_SELECT, "read a ticket's state");
	/* a drop_queue that committed while this call waited took the ticket */
	if (SPI_processed == 0)
		mm_ticket_not_found(ticket);
	return TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Cancel a proposed ticket of queue (SPI connected, owner checked): it
 * ends 'cancelled' and its proposal dissolves.  Returns false when the
 * ticket is not (or no longer) in a pending proposal.
 */
bool
mm_ready_cancel(int64 ticket, const char *queue)
{
	static SPIPlanPtr cancel_plan;
	Oid			argtypes[2] = {INT8OID, TIMESTAMPTZOID};
	Datum		values[2];
	TimestampTz now = GetCurrentTimestamp();
	char	   *channel = mm_queue_channel(queue);
	int64		id = lock_pending(ticket, queue, channel, now);

	if (id == 0)
		return false;
	mm_keep_plan(&cancel_plan,
				 "UPDATE matchmaker.tickets SET state = 'cancelled', ended_at = $2, matched_at = NULL "
				 "WHERE id OPERATOR(pg_catalog.=) $1",
				 2, argtypes);
	values[0] = Int64GetDatum(ticket);
	values[1] = TimestampTzGetDatum(now);
	ready_run(cancel_plan, values, SPI_OK_UPDATE, "cancel a proposed ticket");
	dissolve(queue, channel, id, "cancelled", ticket, now);
	return true;
}
