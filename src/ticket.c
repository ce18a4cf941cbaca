/*
 * ticket.c
 *		Tickets: enqueue and cancel, the calls a game backend makes.
 *
 * enqueue is the hot path: it runs two prepared statements (the queue's
 * lookup and an INSERT ... ON CONFLICT DO NOTHING on the partial unique
 * index of waiting tickets), takes no lock that serialises clients and
 * scans no waiting tickets.
 */
#include "matchmaker.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(mm_enqueue);
PG_FUNCTION_INFO_V1(mm_cancel);

/* Longest player identifier, in bytes. */
#define MM_MAX_PLAYER_LEN	256

/* Lock matchmaker.tickets ROW EXCLUSIVE, the lock an INSERT takes anyway. */
static void
lock_tickets_table(void)
{
	Oid			nsp = get_namespace_oid("matchmaker", false);
	Oid			rel = get_relname_relid("tickets", nsp);

	if (!OidIsValid(rel))
		elog(ERROR, "table matchmaker.tickets does not exist");
	LockRelationOid(rel, RowExclusiveLock);
}

/*
 * matchmaker.enqueue(queue, player, rating, attributes) returns the ticket
 * id.  While the player's ticket in that queue waits, a repeated call
 * returns the same id and changes nothing (the first call's rating and
 * attributes stand).
 */
Datum
mm_enqueue(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr insert_plan;
	static SPIPlanPtr existing_plan;
	char	   *queue_name = mm_text_arg(fcinfo, 0, "queue");
	text	   *player;
	double		rating;
	Jsonb	   *attributes;
	MMQueue    *queue;
	Oid			argtypes[4] = {TEXTOID, TEXTOID, FLOAT8OID, JSONBOID};
	Datum		values[4];
	int64		id = 0;
	bool		found = false;

	mm_require_arg(fcinfo, 1, "player");
	mm_require_arg(fcinfo, 2, "rating");
	mm_require_arg(fcinfo, 3, "attributes");
	player = PG_GETARG_TEXT_PP(1);
	rating = PG_GETARG_FLOAT8(2);
	attributes = PG_GETARG_JSONB_P(3);

	if (VARSIZE_ANY_EXHDR(player) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("player must not be empty"),
				 errhint("Pass the game's identifier of the player.")));
	if (VARSIZE_ANY_EXHDR(player) > MM_MAX_PLAYER_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("player is too long"),
				 errdetail("The player identifier has %d bytes; at most %d are allowed.",
						   (int) VARSIZE_ANY_EXHDR(player), MM_MAX_PLAYER_LEN),
				 errhint("Pass the player's account id rather than a display name.")));
	if (!JB_ROOT_IS_OBJECT(attributes) || JB_ROOT_IS_SCALAR(attributes))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("attributes must be a JSON object"),
				 errhint("Pass '{}' when the player has no attributes.")));

	SPI_connect();

	/*
	 * Take the tickets table's insert lock before looking the queue up, so
	 * that a concurrent drop_queue (which locks the table against inserts)
	 * either finishes first, and the queue is seen gone, or waits for us.
	 */
	lock_tickets_table();
	queue = palloc0(sizeof(MMQueue));
	if (!mm_load_queue(queue_name, MM_LOCK_NONE, queue))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("queue \"%s\" does not exist", queue_name),
				 errhint("Create it with matchmaker.create_queue(), or see the queues in matchmaker.queues.")));
	(void) mm_normalise_rating(queue, rating, "rating");

	values[0] = CStringGetTextDatum(queue_name);
	values[1] = PointerGetDatum(player);
	values[2] = Float8GetDatum(rating);
	values[3] = JsonbPGetDatum(attributes);

	mm_keep_plan(&insert_plan,
			  "INSERT INTO matchmaker.tickets (queue, player, rating, attributes, enqueued_at) "
			  "VALUES ($1, $2, $3, $4, pg_catalog.clock_timestamp()) "
			  "ON CONFLICT (queue, player) WHERE state OPERATOR(pg_catalog.=) 'waiting' DO NOTHING "
			  "RETURNING id", 4, argtypes);
	mm_keep_plan(&existing_plan,
			  "SELECT id FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
			  "AND player OPERATOR(pg_catalog.=) $2 AND state OPERATOR(pg_catalog.=) 'waiting'",
			  2, argtypes);

	/*
	 * Insert, or find the waiting ticket that stopped the insert.  That
	 * ticket can be matched or cancelled in between, so try again then; in
	 * READ COMMITTED each statement sees what has committed before it.
	 */
	for (int attempt = 0; attempt < 10 && !found; attempt++)
	{
		bool		isnull;

		if (SPI_execute_plan(insert_plan, values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
			elog(ERROR, "could not insert ticket");
		if (SPI_processed > 0)
			mm_wake_on_commit(queue_name);
		else if (SPI_execute_plan(existing_plan, values, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not look up the waiting ticket");
		if (SPI_processed > 0)
		{
			id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
			found = true;
		}
	}
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not enqueue player in queue \"%s\"", queue_name),
				 errdetail("The player's waiting ticket kept changing while enqueue ran."),
				 errhint("Retry the call.")));
	SPI_finish();
	PG_RETURN_INT64(id);
}

/*
 * matchmaker.cancel(ticket): end a waiting ticket as cancelled.  Returns
 * false when the ticket is no longer waiting (matched, expired or already
 * cancelled); a ticket id that never existed is an error.
 *
 * The ticket's queue row is locked FOR KEY SHARE first: a tick of that
 * queue holds it FOR UPDATE, so a cancel waits for a running tick (and then
 * finds the ticket matched) or the tick waits for the cancel (and then
 * does not see the ticket waiting).
 */
Datum
mm_cancel(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr lock_plan;
	static SPIPlanPtr cancel_plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1];
	bool		cancelled;
	bool		isnull;
	char	   *queue_name;

	mm_require_arg(fcinfo, 0, "ticket");
	values[0] = Int64GetDatum(PG_GETARG_INT64(0));

	SPI_connect();
	mm_keep_plan(&lock_plan,
				 "SELECT q.name FROM matchmaker.queues q "
				 "WHERE q.name OPERATOR(pg_catalog.=) "
				 "(SELECT t.queue FROM matchmaker.tickets t WHERE t.id OPERATOR(pg_catalog.=) $1) "
				 "FOR KEY SHARE",
				 1, argtypes);
	if (SPI_execute_plan(lock_plan, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the ticket's queue");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("ticket %lld does not exist", (long long) DatumGetInt64(values[0])),
				 errhint("Pass an id returned by matchmaker.enqueue().")));

	queue_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	mm_keep_plan(&cancel_plan,
				 "UPDATE matchmaker.tickets SET state = 'cancelled', ended_at = pg_catalog.clock_timestamp() "
				 "WHERE id OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting'",
				 1, argtypes);
	if (SPI_execute_plan(cancel_plan, values, NULL, false, 0) != SPI_OK_UPDATE)
		elog(ERROR, "could not cancel ticket");
	cancelled = SPI_processed > 0;
	if (cancelled)
		mm_wake_on_commit(queue_name);
	SPI_finish();
	PG_RETURN_BOOL(cancelled);
}
