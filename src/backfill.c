/*
 * backfill.c
 *		Backfill of running matches: a game server asks for replacements
 *		(matchmaker.backfill), each tick of the queue fills the open
 *		requests from its waiting tickets before it forms new matches, and a
 *		request ends filled, expired or cancelled (cancel_backfill), each
 *		step with its event.
 *
 * The choice is eq. 1 over the completed game: the match's players still
 * in it (its matched tickets, of the request's team when it names one)
 * are fixed members, so a waiting ticket whose rating lies within theirs
 * adds no spread; a ticket outside adds its distance to the nearest of
 * them.  A request takes the tickets that add the least spread, the
 * longest waiting first among equals, one slot at a time.  Tickets in a
 * difference_wait provisional group are not taken; optimize queues, which
 * score parties, pings and hosts their own way, take no backfill.
 *
 * Concurrency: the tick takes the open requests FOR UPDATE SKIP LOCKED
 * (a cancel_backfill in a transaction still open holds its request, which
 * waits for the next tick) and the tickets it fills FOR UPDATE SKIP
 * LOCKED like those it matches, so a tick never waits for a client.
 */
#include "matchmaker.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mm_backfill);
PG_FUNCTION_INFO_V1(mm_cancel_backfill);

/* Picks a request makes at most when a client holds tickets it picked. */
#define MM_BACKFILL_LOCK_ATTEMPTS	3

/*
 * The open requests one tick takes at most, oldest first: each costs a
 * query and a pass over the pool, and the tick must stay short.
 */
#define MM_BACKFILL_PER_TICK	256

/* The longest a backfill request may stay open. */
#define MM_BACKFILL_MAX_EXPIRES	((int64) USECS_PER_DAY)

/* Whether the installed schema has backfill (0.3.0 on). */
static bool
backfill_available(void)
{
	return mm_table_exists("backfills");
}

/* Refuse backfill before ALTER EXTENSION matchmaker UPDATE. */
static void
require_backfill(void)
{
	if (!backfill_available())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("backfill needs version 0.3.0 of the extension's tables"),
				 errhint("Run ALTER EXTENSION matchmaker UPDATE.")));
}

/* Run a prepared plan, or fail with what it was for. */
static void
backfill_run(SPIPlanPtr plan, Datum *values, int expect, const char *what)
{
	if (SPI_execute_plan(plan, values, NULL, false, 0) != expect)
		elog(ERROR, "could not %s", what);
}

/* Whether the calling role is a member of matchmaker_admin (or a superuser). */
static bool
caller_is_admin(const MMCaller *caller)
{
	Oid			admin = get_role_oid("matchmaker_admin", true);

	return superuser_arg(caller->role) ||
		(OidIsValid(admin) && has_privs_of_role(caller->role, admin));
}

/*
 * matchmaker.backfill(match_id, slots, team, expires): ask for slots
 * waiting players to join a running match (on team, or on the team with
 * the fewest players); returns the request's id.  The caller must own a
 * ticket of the match (or be matchmaker_admin).
 */
Datum
mm_backfill(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr match_plan;
	static SPIPlanPtr owner_plan;
	static SPIPlanPtr insert_plan;
	static SPIPlanPtr open_plan;
	Oid			argtypes[7] = {INT8OID, TEXTOID, INT4OID, INT4OID, TIMESTAMPTZOID, OIDOID, TEXTOID};
	Datum		values[7];
	int64		match_id;
	int32		slots;
	bool		has_team = !PG_ARGISNULL(2);
	int32		team = has_team ? PG_GETARG_INT32(2) : 0;
	Interval   *expires;
	int64		expires_us;
	MMCaller	caller = {GetUserId(), 0};
	MMQueue    *queue = palloc0(sizeof(MMQueue));
	char	   *queue_name;
	bool		isnull;
	int64		id;
	int			k;

	mm_require_arg(fcinfo, 0, "match_id");
	mm_require_arg(fcinfo, 1, "slots");
	mm_require_arg(fcinfo, 3, "expires");
	match_id = PG_GETARG_INT64(0);
	slots = PG_GETARG_INT32(1);
	expires = PG_GETARG_INTERVAL_P(3);
	/* months and days count as 30 and 1 days, as interval comparison does; no overflow */
	if (pg_mul_s64_overflow((int64) expires->month * DAYS_PER_MONTH + expires->day, USECS_PER_DAY,
							&expires_us) ||
		pg_add_s64_overflow(expires_us, expires->time, &expires_us) ||
		expires_us <= 0 || expires_us > MM_BACKFILL_MAX_EXPIRES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("expires must be a positive interval of at most 1 day"),
				 errhint("A backfill request stays open this long; ask again for a longer wait.")));

	mm_require_read_committed("backfill");
	mm_act_as_owner(&caller);
	SPI_connect();
	require_backfill();
	/*
	 * The match's row is locked for the rest of the transaction, so that
	 * backfill requests for one match count each other's places (below);
	 * nothing else locks or updates a match's row.
	 */
	mm_keep_plan(&match_plan,
				 "SELECT queue FROM matchmaker.matches WHERE id OPERATOR(pg_catalog.=) $1 FOR NO KEY UPDATE",
				 1, argtypes);
	values[0] = Int64GetDatum(match_id);
	backfill_run(match_plan, values, SPI_OK_SELECT, "look up the match");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("match %lld does not exist", (long long) match_id),
				 errhint("Pass the id of a match from its \"matched\" or \"ready\" event (a proposal is not a match until it is ready).")));
	queue_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	/* the caller must own one of the match's tickets, or be an admin */
	if (!caller_is_admin(&caller))
	{
		bool		owns = false;

		mm_keep_plan(&owner_plan,
					 "SELECT enqueued_by, enqueued_by_name FROM matchmaker.tickets "
					 "WHERE match_id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
		backfill_run(owner_plan, values, SPI_OK_SELECT, "read the match's players");
		for (uint64 r = 0; r < SPI_processed && !owns; r++)
		{
			Oid			owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
			char	   *name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

			owns = mm_caller_owns(&caller, owner, name);
		}
		if (!owns)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to backfill match %lld", (long long) match_id),
					 errdetail("None of the match's tickets was enqueued by the calling role."),
					 errhint("Ask from the role that enqueued the match's players, or as a member of matchmaker_admin.")));
	}

	/* the queue: its game shape bounds slots and team */
	if (!mm_load_queue(queue_name, MM_LOCK_NONE, queue))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the queue of match %lld no longer exists", (long long) match_id),
				 errhint("A match of a dropped queue takes no backfill.")));
	if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" uses algorithm \"optimize\", which takes no backfill", queue_name),
				 errhint("optimize scores parties, pings and hosts over whole rounds; enqueue the replacements in a queue of another algorithm.")));
	if (queue->criteria.exclude != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" has an exclude filter, and backfill does not check block lists", queue_name),
				 errhint("Enqueue the replacements in a queue without one, or start a new match.")));
	if (queue->cfg.roles.n > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" has roles, and backfill does not fill roles", queue_name),
				 errhint("Enqueue the replacements in a queue without roles, or start a new match.")));
	k = mm_config_k(&queue->cfg);
	if (slots < 1 || slots > k)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slots must be from 1 to %d (the players per match)", k),
				 errdetail("Got %d.", slots),
				 errhint("Ask for the places the players who left the match freed.")));
	if (has_team && (team < 1 || team > queue->cfg.teams))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("team must be from 1 to %d, or NULL", queue->cfg.teams),
				 errdetail("Got %d.", team),
				 errhint("Pass NULL to fill the team with the fewest players.")));
	if (has_team && slots > queue->cfg.team_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("slots must be at most %d (the players per team) for one team", queue->cfg.team_size),
				 errdetail("Got %d.", slots),
				 errhint("Ask once per team, or pass team => NULL.")));

	/*
	 * A request frees the places of players who left.  The match's players
	 * (its matched tickets, those who left included: the match cannot
	 * tell) less the places its requests freed (open ones, and the filled
	 * places of the others) are the players still in it, which bound a new
	 * request: so a match never holds more than k players still in it,
	 * however often it asks.  And at most a whole match (a whole team) of
	 * places is open at once.
	 */
	mm_keep_plan(&open_plan,
				 "SELECT COALESCE(sum(slots OPERATOR(pg_catalog.-) filled) "
				 "  FILTER (WHERE state OPERATOR(pg_catalog.=) 'open'), 0)::int4, "
				 "COALESCE(sum(slots OPERATOR(pg_catalog.-) filled) FILTER (WHERE team OPERATOR(pg_catalog.=) $3 "
				 "  AND state OPERATOR(pg_catalog.=) 'open'), 0)::int4, "
				 "COALESCE(sum(CASE WHEN state OPERATOR(pg_catalog.=) 'open' THEN slots ELSE filled END), 0)::int4, "
				 "(SELECT pg_catalog.count(*) FROM matchmaker.tickets WHERE match_id OPERATOR(pg_catalog.=) $1 "
				 "  AND state OPERATOR(pg_catalog.=) 'matched')::int4 "
				 "FROM matchmaker.backfills WHERE match_id OPERATOR(pg_catalog.=) $1",
				 3, argtypes);
	values[2] = Int32GetDatum(team);
	backfill_run(open_plan, values, SPI_OK_SELECT, "count the match's open places");
	{
		int			open = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		int			team_open = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
		int			freed = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
		int			players = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));

		if (freed + slots > players)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("match %lld has %d players still in it, fewer than the %d places asked for",
							(long long) match_id, Max(players - freed, 0), slots),
					 errdetail("It has %d players; its requests freed the places of %d who left.", players, freed),
					 errhint("Ask for the places of players who left and were not asked for yet.")));

		if (has_team && team_open + slots > queue->cfg.team_size)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("team %d of match %lld would have more open places than players", team, (long long) match_id),
					 errdetail("Its open requests ask for %d places in team %d; %d more would pass %d, the players per team.",
							   team_open, team, slots, queue->cfg.team_size),
					 errhint("Wait until the open requests fill or expire, or end them with matchmaker.cancel_backfill().")));
		if (open + slots > k)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("match %lld would have more open places than players", (long long) match_id),
					 errdetail("Its open requests ask for %d places; %d more would pass %d, the players per match.",
							   open, slots, k),
					 errhint("Wait until the open requests fill or expire, or end them with matchmaker.cancel_backfill().")));
	}

	mm_keep_plan(&insert_plan,
				 "INSERT INTO matchmaker.backfills (match_id, queue, team, slots, created_at, expires_at, "
				 "requested_by, requested_by_name) "
				 "VALUES ($1, $2, $3, $4, pg_catalog.clock_timestamp(), $5, $6, $7) RETURNING id",
				 7, argtypes);
	values[1] = CStringGetTextDatum(queue_name);
	values[2] = Int32GetDatum(team);
	values[3] = Int32GetDatum(slots);
	values[4] = TimestampTzGetDatum(GetCurrentTimestamp() + expires_us);
	values[5] = ObjectIdGetDatum(caller.role);
	values[6] = CStringGetTextDatum(GetUserNameFromId(caller.role, false));
	{
		char		nulls[7] = "       ";

		if (!has_team)
			nulls[2] = 'n';
		if (SPI_execute_plan(insert_plan, values, nulls, false, 1) != SPI_OK_INSERT_RETURNING)
			elog(ERROR, "could not insert the backfill request");
	}
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	mm_arrival_on_commit(queue_name);
	SPI_finish();
	mm_act_as_caller(&caller);
	PG_RETURN_INT64(id);
}

/*
 * Send {"event": "backfill_ended", "queue", "request", "match", "reason",
 * "filled"}.
 */
static void
notify_ended(const char *queue, const char *channel, int64 id, int64 match_id,
			 const char *reason, int filled)
{
	StringInfoData payload;

	initStringInfo(&payload);
	mm_event_start(&payload, "backfill_ended", queue);
	appendStringInfo(&payload, ", \"request\": " INT64_FORMAT ", \"match\": " INT64_FORMAT
					 ", \"reason\": \"%s\", \"filled\": %d",
					 id, match_id, reason, filled);
	mm_event_finish(&payload, payload.len, channel);
}

/*
 * matchmaker.cancel_backfill(request): close an open request; false when
 * it is no longer open.  For the role that asked (or matchmaker_admin).
 */
Datum
mm_cancel_backfill(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr read_plan;
	static SPIPlanPtr cancel_plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1];
	int64		id;
	MMCaller	caller = {GetUserId(), 0};
	bool		isnull;
	bool		cancelled;
	char	   *queue_name;

	mm_require_arg(fcinfo, 0, "request");
	id = PG_GETARG_INT64(0);
	values[0] = Int64GetDatum(id);
	mm_act_as_owner(&caller);
	SPI_connect();
	require_backfill();
	mm_keep_plan(&read_plan,
				 "SELECT queue, requested_by, requested_by_name FROM matchmaker.backfills "
				 "WHERE id OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	backfill_run(read_plan, values, SPI_OK_SELECT, "look up the backfill request");
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("backfill request %lld does not exist", (long long) id),
				 errhint("Pass an id returned by matchmaker.backfill().")));
	queue_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (!caller_is_admin(&caller) &&
		!mm_caller_owns(&caller,
						DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)),
						TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull))))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to cancel backfill request %lld", (long long) id),
				 errdetail("The request was made by another role."),
				 errhint("Cancel a request from the role that made it, or as a member of matchmaker_admin.")));
	mm_keep_plan(&cancel_plan,
				 "UPDATE matchmaker.backfills SET state = 'cancelled', ended_at = pg_catalog.clock_timestamp() "
				 "WHERE id OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'open' "
				 "RETURNING match_id, filled",
				 1, argtypes);
	backfill_run(cancel_plan, values, SPI_OK_UPDATE_RETURNING, "cancel the backfill request");
	cancelled = SPI_processed > 0;
	if (cancelled)
		notify_ended(queue_name, mm_queue_channel(queue_name), id,
					 DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)),
					 "cancelled",
					 DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)));
	SPI_finish();
	mm_act_as_caller(&caller);
	PG_RETURN_BOOL(cancelled);
}

/* One open request as the tick sees it. */
typedef struct Request
{
	int64		id;
	int64		match_id;
	int			team;			/* 0: the team with the fewest players */
	int			open;			/* slots still open; -1: expired at this tick */
	int			filled;			/* slots filled before this tick */
	TimestampTz expires_at;
} Request;

/* Whether id is in sorted[0 .. n). */
static bool
id_in_sorted(const int64 *sorted, int n, int64 id)
{
	return n > 0 && bsearch(&id, sorted, n, sizeof(int64), mm_int64_cmp) != NULL;
}

/*
 * With intersect filters or filters that relax, the key of the values the
 * match was formed with
 * (matches.filters), -1 when no waiting ticket has them or the match has
 * none (formed before the queue's filters).
 */
static int32
match_filters_key(const MMQueue *queue, int64 match_id, const MMFilterDict *dict)
{
	static SPIPlanPtr plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(match_id)};
	StringInfoData buf;
	bool		isnull;
	Datum		filters;
	int32		key = -1;

	mm_keep_plan(&plan,
				 "SELECT filters FROM matchmaker.matches WHERE id OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	backfill_run(plan, values, SPI_OK_SELECT, "read the match's filter values");
	if (SPI_processed == 1)
	{
		filters = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		initStringInfo(&buf);
		if (!isnull && mm_filter_value(queue, DatumGetJsonbP(filters), &buf) == NULL)
			key = mm_filter_find(dict, buf.data, buf.len);
	}
	SPI_freetuptable(SPI_tuptable);
	return key;
}

/*
 * The match's players still in it (its matched tickets; of team when not
 * 0), as normalised ratings: their lowest and highest into lo and hi, and
 * into count[t - 1] how many team t has.  Returns how many there are.
 */
static int
fixed_members(const MMQueue *queue, int64 match_id, int team, double *lo, double *hi,
			  int *count, const MMFilterDict *dict, int32 *key)
{
	static SPIPlanPtr plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(match_id)};
	int			n = 0;

	memset(count, 0, sizeof(int) * queue->cfg.teams);

	mm_keep_plan(&plan,
				 "SELECT rating, team, attributes FROM matchmaker.tickets WHERE match_id OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'matched' ORDER BY id",
				 1, argtypes);
	backfill_run(plan, values, SPI_OK_SELECT, "read the match's players");
	*lo = INFINITY;
	*hi = -INFINITY;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		double		rating = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
		int			t = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

		if (!isnull && t >= 1 && t <= queue->cfg.teams)
			count[t - 1]++;
		if (team != 0 && t != team)
			continue;
		rating = (rating - queue->rating_min) / (queue->rating_max - queue->rating_min);
		rating = Min(Max(rating, 0.0), 1.0);
		*lo = Min(*lo, rating);
		*hi = Max(*hi, rating);
		n++;
	}
	/* with filters, the key of the match's first player (-1: no waiting ticket has it) */
	*key = 0;
	if (dict != NULL && !queue->criteria.any_intersect && !queue->criteria.any_relax &&
		SPI_processed > 0)
	{
		StringInfoData buf;
		bool		isnull;
		Datum		attributes = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull);

		initStringInfo(&buf);
		*key = (!isnull && mm_filter_value(queue, DatumGetJsonbP(attributes), &buf) == NULL)
			? mm_filter_find(dict, buf.data, buf.len) : -1;
	}
	SPI_freetuptable(SPI_tuptable);
	if (dict != NULL && (queue->criteria.any_intersect || queue->criteria.any_relax))
		*key = match_filters_key(queue, match_id, dict);
	return n;
}

/* The team (1-based) with the fewest of count's players, the first among equals. */
static int
fewest_team(const int *count, int teams)
{
	int			fewest = 1;

	for (int t = 1; t < teams; t++)
		if (count[t] < count[fewest - 1])
			fewest = t + 1;
	return fewest;
}

/*
 * Expire the queue's open requests (the MM_BACKFILL_PER_TICK oldest that no
 * client holds) past expires_at at now, and fill the
 * others from pool (the waiting tickets the tick loaded), oldest request
 * first; the tickets filled are removed from pool.  Returns whether it
 * changed anything.  *next_expiry gets the earliest expires_at of the
 * requests still open (DT_NOEND for none).
 */
bool
mm_backfill_tick(const MMQueue *queue, TimestampTz now, MMPool *pool,
				 const MMFilterDict *dict, TimestampTz *next_expiry)
{
	static SPIPlanPtr open_plan;
	static SPIPlanPtr expire_plan;
	static SPIPlanPtr fill_plan;
	static SPIPlanPtr count_plan;
	static SPIPlanPtr lock_plan;
	Oid			argtypes[6] = {TEXTOID, TIMESTAMPTZOID, INT8OID, INT8ARRAYOID, INT4OID, INT8OID};
	Datum		values[6];
	Request    *requests;
	int			nreq;
	bool	   *taken;
	bool		wrote = false;
	int		   *idx;
	int64	   *filled;
	int		   *skipped;
	int		   *count;			/* a match's players per team */

	*next_expiry = DT_NOEND;
	if (!backfill_available() ||
		!mm_index_has_queue("backfills", "backfills_open", queue->name, RowShareLock))
		return false;
	mm_keep_plan(&open_plan,
				 "SELECT id, match_id, COALESCE(team, 0), slots OPERATOR(pg_catalog.-) filled, slots, expires_at "
				 "FROM matchmaker.backfills WHERE queue OPERATOR(pg_catalog.=) $1 "
				 "AND state OPERATOR(pg_catalog.=) 'open' ORDER BY created_at, id "
				 "LIMIT " CppAsString2(MM_BACKFILL_PER_TICK) " FOR UPDATE SKIP LOCKED",
				 1, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	backfill_run(open_plan, values, SPI_OK_SELECT, "read the open backfill requests");
	if (SPI_processed == 0)
		return false;
	requests = palloc(sizeof(Request) * SPI_processed);
	nreq = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Request    *q = &requests[nreq];
		q->expires_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 6, &isnull));
		q->id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		q->match_id = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		q->team = DatumGetInt32(SPI_getbinval(tup, desc, 3, &isnull));
		q->open = DatumGetInt32(SPI_getbinval(tup, desc, 4, &isnull));
		q->filled = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull)) - q->open;
		if (q->expires_at <= now)
			q->open = -1;		/* expired: ended below, with its event */
		nreq++;
	}
	SPI_freetuptable(SPI_tuptable);

	mm_keep_plan(&expire_plan,
				 "UPDATE matchmaker.backfills SET state = 'expired', ended_at = $2 "
				 "WHERE id OPERATOR(pg_catalog.=) $3",
				 3, argtypes);
	/* the two by arrays of ids, rare: planned for each call's arrays and table */
	mm_keep_custom_plan(&lock_plan,
				 "SELECT id FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) ANY ($4) "
				 "AND state OPERATOR(pg_catalog.=) 'waiting' ORDER BY id FOR UPDATE SKIP LOCKED",
				 4, argtypes);
	mm_keep_custom_plan(&fill_plan,
				 "UPDATE matchmaker.tickets SET state = 'matched', matched_at = $2, match_id = $3, "
				 "team = $5, backfill_id = $6 "
				 "WHERE id OPERATOR(pg_catalog.=) ANY ($4) AND state OPERATOR(pg_catalog.=) 'waiting'",
				 6, argtypes);
	mm_keep_plan(&count_plan,
				 "UPDATE matchmaker.backfills SET filled = filled OPERATOR(pg_catalog.+) $5, "
				 "state = CASE WHEN filled OPERATOR(pg_catalog.+) $5 OPERATOR(pg_catalog.>=) slots "
				 "THEN 'filled' ELSE state END, "
				 "ended_at = CASE WHEN filled OPERATOR(pg_catalog.+) $5 OPERATOR(pg_catalog.>=) slots "
				 "THEN $2 END "
				 "WHERE id OPERATOR(pg_catalog.=) $6",
				 6, argtypes);
	values[1] = TimestampTzGetDatum(now);

	taken = palloc0(sizeof(bool) * Max(pool->ntickets, 1));
	idx = palloc(sizeof(int) * Max(mm_config_k(&queue->cfg), 1));
	filled = palloc(sizeof(int64) * Max(mm_config_k(&queue->cfg), 1));
	skipped = palloc(sizeof(int) * Max(mm_config_k(&queue->cfg), 1) * MM_BACKFILL_LOCK_ATTEMPTS);
	count = palloc(sizeof(int) * queue->cfg.teams);
	for (int r = 0; r < nreq; r++)
	{
		Request    *q = &requests[r];
		double		lo;
		double		hi;
		int			team;
		int32		key;
		int64	   *locked;
		int			nlocked;
		int			nfilled;
		int			nskipped;
		StringInfoData payload;
		int			head;

		if (q->open < 0)
		{
			values[2] = Int64GetDatum(q->id);
			backfill_run(expire_plan, values, SPI_OK_UPDATE, "expire a backfill request");
			notify_ended(queue->name, queue->channel, q->id, q->match_id, "expired", q->filled);
			wrote = true;
			continue;
		}
		/*
		 * A queue switched to optimize, or given an exclude filter (backfill
		 * does not check block lists), takes no players; its requests expire.
		 */
		if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE || queue->criteria.exclude != NULL)
			continue;
		(void) fixed_members(queue, q->match_id, q->team, &lo, &hi, count, dict, &key);
		if (key < 0)
			continue;			/* no waiting player shares the match's filter values */

		/*
		 * A request for a team fills its slots at once; one without a team
		 * a slot at a time, each into the team with the fewest players.
		 */
		while (q->open > 0)
		{
			int			want = q->team != 0 ? q->open : 1;

			team = q->team != 0 ? q->team : fewest_team(count, queue->cfg.teams);

			/*
			 * Pick, lock FOR UPDATE SKIP LOCKED, and pick again for the
			 * slots whose tickets a client holds (or ended), a few times;
			 * those stay in the pool for the step.
			 */
			nfilled = 0;
			nskipped = 0;
			for (int attempt = 0; attempt < MM_BACKFILL_LOCK_ATTEMPTS && nfilled < want; attempt++)
			{
				int			n = queue->cfg.roles.n > 0 ? 0 :
					mm_backfill_pick(pool, taken, lo, hi, key, want - nfilled, idx);
				int64	   *ids;

				if (n == 0)
					break;
				ids = palloc(sizeof(int64) * n);
				for (int i = 0; i < n; i++)
					ids[i] = pool->tickets[idx[i]].id;
				values[3] = mm_int8_array(ids, n);
				backfill_run(lock_plan, values, SPI_OK_SELECT, "lock the tickets of a backfill");
				locked = mm_spi_ids(1, &nlocked);
				for (int i = 0; i < n; i++)
				{
					if (id_in_sorted(locked, nlocked, ids[i]))
						filled[nfilled++] = ids[i];
					else
						skipped[nskipped++] = idx[i];
				}
				/* widen the range by what was taken, for the next pick */
				for (int i = 0; i < n; i++)
					if (id_in_sorted(locked, nlocked, ids[i]))
					{
						double		r = pool->tickets[idx[i]].rating;

						lo = isfinite(lo) ? Min(lo, r) : r;
						hi = isfinite(hi) ? Max(hi, r) : r;
					}
			}
			/* the tickets a client held wait on, for the step */
			for (int i = 0; i < nskipped; i++)
				taken[skipped[i]] = false;
			if (nfilled == 0)
				break;
			qsort(filled, nfilled, sizeof(int64), mm_int64_cmp);
			values[2] = Int64GetDatum(q->match_id);
			values[3] = mm_int8_array(filled, nfilled);
			values[4] = Int32GetDatum(team);
			values[5] = Int64GetDatum(q->id);
			backfill_run(fill_plan, values, SPI_OK_UPDATE, "fill a backfill request");
			if (SPI_processed != (uint64) nfilled)
				elog(ERROR, "filled %llu tickets, expected %d", (unsigned long long) SPI_processed, nfilled);
			values[4] = Int32GetDatum(nfilled);
			backfill_run(count_plan, values, SPI_OK_UPDATE, "count a backfill's tickets");
			wrote = true;

			initStringInfo(&payload);
			mm_event_start(&payload, "backfilled", queue->name);
			appendStringInfo(&payload, ", \"match\": " INT64_FORMAT ", \"request\": " INT64_FORMAT
							 ", \"team\": %d, \"open\": %d",
							 q->match_id, q->id, team, q->open - nfilled);
			head = payload.len;
			mm_event_ids(&payload, "tickets", filled, nfilled);
			mm_event_finish(&payload, head, queue->channel);
			q->open -= nfilled;
			count[team - 1] += nfilled;
		}
	}

	/* the requests still open time out next */
	for (int r = 0; r < nreq; r++)
		if (requests[r].open > 0)
			*next_expiry = Min(*next_expiry, requests[r].expires_at);

	/* the filled tickets leave the pool, in order */
	{
		int			w = 0;

		for (int i = 0; i < pool->ntickets; i++)
			if (!taken[i])
				pool->tickets[w++] = pool->tickets[i];
		pool->ntickets = w;
	}
	return wrote;
}
