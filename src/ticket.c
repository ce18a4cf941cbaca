/*
 * ticket.c
 *		Tickets: enqueue and cancel, the calls a game backend makes.
 *
 * enqueue is the hot path: it reads the queue's row (kept between calls,
 * queue.c) and inserts the ticket as INSERT ... ON CONFLICT DO NOTHING on
 * the partial unique index of waiting tickets would, without the statement
 * when it can (tick_rows.c); it takes no lock that serialises clients (the
 * queue's enqueue lock is shared by all of them; only drop_queue takes it
 * exclusively) and scans no waiting tickets.  cancel updates its ticket's
 * row only.
 */
#include "matchmaker.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/*
 * Version 0.1.0's SQL functions call mm_enqueue and mm_cancel, which know
 * nothing of ticket owners (that version's tickets table has no
 * enqueued_by column); 0.2.0's call the _0_2 entry points and
 * mm_ticket_status (enqueued_by a regrole); 0.3.0's the _0_3 ones
 * (enqueued_by an oid, with the role's name in enqueued_by_name).  All
 * stay so that a database keeps working between installing a new library
 * and ALTER EXTENSION matchmaker UPDATE.
 */
PG_FUNCTION_INFO_V1(mm_enqueue);
PG_FUNCTION_INFO_V1(mm_enqueue_0_2);
PG_FUNCTION_INFO_V1(mm_enqueue_0_3);
PG_FUNCTION_INFO_V1(mm_cancel);
PG_FUNCTION_INFO_V1(mm_cancel_0_2);
PG_FUNCTION_INFO_V1(mm_cancel_0_3);
PG_FUNCTION_INFO_V1(mm_enqueue_party);
PG_FUNCTION_INFO_V1(mm_accept);
PG_FUNCTION_INFO_V1(mm_ticket_status);
PG_FUNCTION_INFO_V1(mm_ticket_status_0_3);

/*
 * What the tickets table records of a ticket's owner, by version: nothing
 * (0.1.0), the role's oid as a regrole (0.2.0), or the role's oid and its
 * name (0.3.0 on).  Used as an index into the kept plans.
 */
typedef enum MMOwnership
{
	MM_OWNER_NONE = 0,			/* no owner: anyone may act on a ticket */
	MM_OWNER_OID,				/* enqueued_by regrole */
	MM_OWNER_NAMED				/* enqueued_by oid and enqueued_by_name */
} MMOwnership;

#define MM_OWNERSHIPS 3

/* Longest player identifier, in bytes. */
#define MM_MAX_PLAYER_LEN	256

/*
 * The owner of the ticket in row of the current SPI result: its oid at
 * column oid_col and, with MM_OWNER_NAMED, its name at the next column
 * (else *name is NULL).
 */
static Oid
ticket_owner(MMOwnership ownership, HeapTuple row, TupleDesc desc, int oid_col, char **name)
{
	bool		isnull;
	Oid			owner = DatumGetObjectId(SPI_getbinval(row, desc, oid_col, &isnull));

	*name = NULL;
	if (ownership == MM_OWNER_NAMED)
	{
		Datum		d = SPI_getbinval(row, desc, oid_col + 1, &isnull);

		*name = isnull ? pstrdup("") : TextDatumGetCString(d);
	}
	return owner;
}

/*
 * Refuse a party that already has a team's worth of other players waiting
 * in the queue (it could never be placed), after mm_optimize_attributes
 * checked the shapes of "party" and "ping".  A party is named per role
 * (with owner, from 0.2.0 on: the tickets of that role only), so one role
 * can neither join nor block another's premade.  The count runs under a
 * transaction-level lock on (queue, role, party), which only the same
 * role's enqueues into the same party of the queue also take: concurrent
 * members are counted one after the other, each seeing those committed
 * before it (a fresh snapshot), so a party never grows past a team.
 */
static void
check_optimize_attributes(const MMQueue *queue, text *player, Jsonb *attributes,
						  bool owned, Oid role)
{
	static SPIPlanPtr party_plan[2];
	JsonbValue *party;
	JsonbValue *ping;

	mm_optimize_attributes(attributes, &party, &ping);
	if (party != NULL)
	{
		Oid			argtypes[4] = {TEXTOID, TEXTOID, TEXTOID, OIDOID};
		Datum		values[4];
		bool		isnull;
		int64		members;
		uint32		key;

		key = hash_bytes_extended((const unsigned char *) party->val.string.val,
								  party->val.string.len, (uint64) role);
		(void) mm_lock_queue_key(queue->name, MM_LOCK_KIND_PARTY, key, ExclusiveLock, true);
		if (owned)
			mm_keep_plan(&party_plan[1],
						 "SELECT pg_catalog.count(*) FROM matchmaker.tickets "
						 "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
						 "AND attributes OPERATOR(pg_catalog.->>) 'party' OPERATOR(pg_catalog.=) $2 "
						 "AND player OPERATOR(pg_catalog.<>) $3 "
						 "AND enqueued_by::pg_catalog.oid OPERATOR(pg_catalog.=) $4",
						 4, argtypes);
		else
			mm_keep_plan(&party_plan[0],
						 "SELECT pg_catalog.count(*) FROM matchmaker.tickets "
						 "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
						 "AND attributes OPERATOR(pg_catalog.->>) 'party' OPERATOR(pg_catalog.=) $2 "
						 "AND player OPERATOR(pg_catalog.<>) $3",
						 3, argtypes);
		values[0] = CStringGetTextDatum(queue->name);
		values[1] = PointerGetDatum(cstring_to_text_with_len(party->val.string.val, party->val.string.len));
		values[2] = PointerGetDatum(player);
		values[3] = ObjectIdGetDatum(role);
		if (SPI_execute_plan(party_plan[owned], values, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not count the party's waiting members");
		members = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (members >= queue->cfg.team_size)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("party \"%s\" already has %lld players waiting in queue \"%s\"",
							mm_shorten(pnstrdup(party->val.string.val, party->val.string.len)),
							(long long) members, queue->name),
					 errdetail("A party plays in one team, of %d players.", queue->cfg.team_size),
					 errhint("Split the premade into parties of at most %d.", queue->cfg.team_size)));
	}
}

/* Refuse an empty or overlong player and attributes that are not an object. */
static void
check_ticket_args(text *player, Jsonb *attributes)
{
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
}

/*
 * The queue a ticket enters (SPI connected), once the rating and the
 * attributes are seen to fit it.
 */
static MMQueue *
queue_for_ticket(const char *queue_name, text *player, double rating, Jsonb *attributes,
				 bool owned, Oid role, bool check_roles)
{
	MMQueue    *queue;

	/*
	 * Take the queue's enqueue lock (shared with every other enqueue of the
	 * queue) before looking the queue up, so that a concurrent drop_queue
	 * (which takes it exclusively) either finishes first, and the queue is
	 * seen gone, or waits for this transaction.  alter_queue does not take
	 * it: a ticket checked against the old settings that commits after an
	 * alter is ended by the next tick if the new settings cannot use it.
	 */
	(void) mm_lock_queue_key(queue_name, MM_LOCK_KIND_ENQUEUE, 0, ShareLock, true);
	queue = palloc0(sizeof(MMQueue));
	if (!mm_load_queue_cached(queue_name, queue))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("queue \"%s\" does not exist", mm_shorten(queue_name)),
				 errhint("Create it with matchmaker.create_queue(), or see the queues in matchmaker.queues.")));
	(void) mm_normalise_rating(queue, rating, "rating");
	if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
		check_optimize_attributes(queue, player, attributes, owned, role);
	if (queue->cfg.criteria.n > 0)
	{
		double		crit[MM_MAX_CRITERIA];

		mm_criteria_values(queue, attributes, crit, "the player's");
	}
	mm_filter_require(queue, attributes, "the player's");
	if (check_roles)
	{
		uint8		mask;
		const char *problem = mm_roles_problem(queue, attributes, &mask);

		if (problem != NULL)
			mm_roles_error(queue, problem, "the player's");
	}
	return queue;
}

/* Refuse a player whose waiting ticket belongs to a role the caller may not act for. */
static void
refuse_other_role(const char *player, const char *queue_name)
{
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("player \"%s\" already waits in queue \"%s\" with a ticket of another role",
					player, queue_name),
			 errhint("Enqueue a player from one role only, or cancel the waiting ticket from the role that enqueued it.")));
}

/*
 * Insert the player's waiting ticket (values: queue, player, rating,
 * attributes, and as ownership records them the calling role's oid and
 * name), or find the one that waits already; returns its id.
 */
static int64
insert_ticket(Datum *values, MMOwnership ownership, const MMCaller *caller,
			  const char *queue_name, text *player)
{
	static SPIPlanPtr insert_plan[MM_OWNERSHIPS];
	static SPIPlanPtr existing_plan[MM_OWNERSHIPS];
	Oid			argtypes[6] = {TEXTOID, TEXTOID, FLOAT8OID, JSONBOID, OIDOID, TEXTOID};
	int64		id = 0;
	bool		found = false;

	if (ownership == MM_OWNER_NAMED)
	{
		mm_keep_plan(&insert_plan[MM_OWNER_NAMED],
					 "INSERT INTO matchmaker.tickets (queue, player, rating, attributes, enqueued_at, "
					 "enqueued_by, enqueued_by_name) "
					 "VALUES ($1, $2, $3, $4, pg_catalog.clock_timestamp(), $5, $6) "
					 "ON CONFLICT (queue, player) WHERE state OPERATOR(pg_catalog.=) 'waiting' DO NOTHING "
					 "RETURNING id, enqueued_by, enqueued_by_name", 6, argtypes);
		mm_keep_plan(&existing_plan[MM_OWNER_NAMED],
					 "SELECT id, enqueued_by, enqueued_by_name FROM matchmaker.tickets "
					 "WHERE queue OPERATOR(pg_catalog.=) $1 "
					 "AND player OPERATOR(pg_catalog.=) $2 "
					 "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
					 2, argtypes);
	}
	else if (ownership == MM_OWNER_OID)
	{
		argtypes[4] = REGROLEOID;
		mm_keep_plan(&insert_plan[MM_OWNER_OID],
					 "INSERT INTO matchmaker.tickets (queue, player, rating, attributes, enqueued_at, enqueued_by) "
					 "VALUES ($1, $2, $3, $4, pg_catalog.clock_timestamp(), $5) "
					 "ON CONFLICT (queue, player) WHERE state OPERATOR(pg_catalog.=) 'waiting' DO NOTHING "
					 "RETURNING id, enqueued_by", 5, argtypes);
		mm_keep_plan(&existing_plan[MM_OWNER_OID],
					 "SELECT id, enqueued_by FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
					 "AND player OPERATOR(pg_catalog.=) $2 "
					 "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
					 2, argtypes);
	}
	else
	{
		mm_keep_plan(&insert_plan[0],
					 "INSERT INTO matchmaker.tickets (queue, player, rating, attributes, enqueued_at) "
					 "VALUES ($1, $2, $3, $4, pg_catalog.clock_timestamp()) "
					 "ON CONFLICT (queue, player) WHERE state OPERATOR(pg_catalog.=) 'waiting' DO NOTHING "
					 "RETURNING id", 4, argtypes);
		mm_keep_plan(&existing_plan[0],
					 "SELECT id FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
					 "AND player OPERATOR(pg_catalog.=) $2 "
					 "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
					 2, argtypes);
	}

	/*
	 * Insert, or find the waiting ticket that stopped the insert.  That
	 * ticket can be matched or cancelled in between, so try again then; in
	 * READ COMMITTED each statement sees what has committed before it.
	 */
	for (int attempt = 0; attempt < 10 && !found; attempt++)
	{
		bool		isnull;
		MMTicketInsert how = MM_TICKET_INSERT_STATEMENT;

		/* the statement's insert without the statement, when it can be (tick_rows.c) */
		if (ownership == MM_OWNER_NAMED)
			how = mm_ticket_insert(insert_plan[ownership], values, &id);
		if (how == MM_TICKET_INSERTED)
		{
			mm_arrival_on_commit(queue_name);
			found = true;
			continue;
		}
		if (how == MM_TICKET_INSERT_STATEMENT &&
			SPI_execute_plan(insert_plan[ownership], values, NULL, false, 1) != SPI_OK_INSERT_RETURNING)
			elog(ERROR, "could not insert ticket");
		if (how == MM_TICKET_INSERT_STATEMENT && SPI_processed > 0)
			mm_arrival_on_commit(queue_name);
		else if (SPI_execute_plan(existing_plan[ownership], values, NULL, false, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not look up the waiting ticket");
		if (SPI_processed > 0)
		{
			Oid			owner;
			char	   *owner_name;

			id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
			found = true;
			if (ownership == MM_OWNER_NONE)
				continue;
			owner = ticket_owner(ownership, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &owner_name);
			if (!mm_caller_owns(caller, owner, owner_name))
				refuse_other_role(text_to_cstring(player), queue_name);
		}
	}
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not enqueue player in queue \"%s\"", queue_name),
				 errdetail("The player's waiting ticket kept changing while enqueue ran."),
				 errhint("Retry the call.")));
	return id;
}

/*
 * Whether the tickets table records the owner's name (0.3.0 on), looked up
 * once the table is locked as the insert will lock it: an enqueue of 0.2.0
 * that waited for ALTER EXTENSION UPDATE to 0.3.0 then records the name
 * the updated table requires, rather than failing on it.
 */
static bool
tickets_record_owner_name(void)
{
	Oid			rel = RangeVarGetRelidExtended(makeRangeVar("matchmaker", "tickets", -1),
											   RowExclusiveLock, 0, NULL, NULL);

	return get_attnum(rel, "enqueued_by_name") != InvalidAttrNumber;
}

/*
 * matchmaker.enqueue(queue, player, rating, attributes) returns the ticket
 * id.  While the player's ticket in that queue waits, a repeated call
 * returns the same id and changes nothing (the first call's rating and
 * attributes stand).  With an ownership (0.2.0 on), the ticket records
 * the calling role (from 0.3.0 on, its oid and name), and a repeated call
 * from a role that may not act for the waiting ticket's owner is refused
 * rather than handed its id.
 */
static Datum
enqueue_internal(FunctionCallInfo fcinfo, MMOwnership ownership)
{
	char	   *queue_name = mm_text_arg(fcinfo, 0, "queue");
	text	   *player;
	double		rating;
	Jsonb	   *attributes;
	Datum		values[6];
	bool		owned = ownership != MM_OWNER_NONE;
	int64		id;
	MMCaller	caller = {GetUserId(), 0};

	mm_require_arg(fcinfo, 1, "player");
	mm_require_arg(fcinfo, 2, "rating");
	/* it waits for drop_queue and for its party's lock, then checks */
	mm_require_read_committed("enqueue");
	mm_require_arg(fcinfo, 3, "attributes");
	player = PG_GETARG_TEXT_PP(1);
	rating = PG_GETARG_FLOAT8(2);
	attributes = PG_GETARG_JSONB_P(3);
	check_ticket_args(player, attributes);

	if (owned)
		mm_act_as_owner(&caller);
	SPI_connect();
	(void) queue_for_ticket(queue_name, player, rating, attributes, owned, caller.role, true);

	values[0] = CStringGetTextDatum(queue_name);
	values[1] = PointerGetDatum(player);
	values[2] = Float8GetDatum(rating);
	values[3] = JsonbPGetDatum(attributes);
	values[4] = ObjectIdGetDatum(caller.role);
	values[5] = (Datum) 0;
	if (ownership == MM_OWNER_OID && tickets_record_owner_name())
		ownership = MM_OWNER_NAMED;
	if (ownership == MM_OWNER_NAMED)
		values[5] = CStringGetTextDatum(GetUserNameFromId(caller.role, false));
	id = insert_ticket(values, ownership, &caller, queue_name, player);
	SPI_finish();
	if (owned)
		mm_act_as_caller(&caller);
	PG_RETURN_INT64(id);
}

/* 0.1.0's matchmaker.enqueue: tickets without an owner. */
Datum
mm_enqueue(PG_FUNCTION_ARGS)
{
	return enqueue_internal(fcinfo, MM_OWNER_NONE);
}

/* 0.2.0's matchmaker.enqueue: the ticket records the calling role's oid. */
Datum
mm_enqueue_0_2(PG_FUNCTION_ARGS)
{
	return enqueue_internal(fcinfo, MM_OWNER_OID);
}

/* matchmaker.enqueue from 0.3.0 on: the ticket records the calling role's oid and name. */
Datum
mm_enqueue_0_3(PG_FUNCTION_ARGS)
{
	return enqueue_internal(fcinfo, MM_OWNER_NAMED);
}

/* Order text Datums bytewise (for qsort: finding a repeated player). */
static int
text_datum_cmp(const void *l, const void *r)
{
	text	   *a = DatumGetTextPP(*(const Datum *) l);
	text	   *b = DatumGetTextPP(*(const Datum *) r);
	int			la = VARSIZE_ANY_EXHDR(a);
	int			lb = VARSIZE_ANY_EXHDR(b);
	int			c = memcmp(VARDATA_ANY(a), VARDATA_ANY(b), Min(la, lb));

	return c != 0 ? c : (la > lb) - (la < lb);
}

/*
 * The party's members' roles (queue with roles): attributes.roles is one
 * list of role names for every member, or a list of n such lists, one per
 * member.  Fills masks and, for per-member lists, lists[i] with member
 * i's list as jsonb (else NULL).
 */
static void
party_roles(const MMQueue *queue, Jsonb *attributes, int n, uint8 *masks, Datum *lists)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&attributes->root, "roles", 5, NULL);
	bool		nested = false;
	const char *problem;

	for (int i = 0; i < n; i++)
		lists[i] = (Datum) 0;
	if (v != NULL && v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data) &&
		JsonContainerSize(v->val.binary.data) > 0)
	{
		JsonbValue *first = getIthJsonbValueFromContainer(v->val.binary.data, 0);

		nested = first != NULL && first->type == jbvBinary && JsonContainerIsArray(first->val.binary.data);
	}
	if (!nested)
	{
		problem = mm_roles_value_problem(queue, v, &masks[0]);
		if (problem != NULL)
			mm_roles_error(queue, problem, "the party's");
		for (int i = 1; i < n; i++)
			masks[i] = masks[0];
		return;
	}
	if (JsonContainerSize(v->val.binary.data) != (uint32) n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("attribute \"roles\" has %d lists for a party of %d players",
						(int) JsonContainerSize(v->val.binary.data), n),
				 errdetail("%s", mm_roles_detail(queue)),
				 errhint("Give one list of roles per player, in the order of players, or one list for all.")));
	for (int i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(v->val.binary.data, i);

		problem = mm_roles_value_problem(queue, e, &masks[i]);
		if (problem != NULL)
			mm_roles_error(queue, problem, psprintf("player %d of the party:", i + 1));
		lists[i] = JsonbPGetDatum(JsonbValueToJsonb(e));
	}
}

/*
 * matchmaker.enqueue_party(queue, players, ratings, attributes): the
 * members' tickets, all or nothing, at one instant, each naming the party
 * (tickets.party: the first member's ticket id).  While the same party
 * waits, a repeated call returns its ids; a player waiting otherwise is an
 * error.  A party larger than a team, or (with roles) one whose players
 * cannot take distinct places of one team, is refused.
 */
Datum
mm_enqueue_party(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr insert_plan;
	static SPIPlanPtr existing_plan;
	char	   *queue_name = mm_text_arg(fcinfo, 0, "queue");
	ArrayType  *pa;
	ArrayType  *ra;
	Jsonb	   *attributes;
	Datum	   *pd;
	bool	   *pn;
	Datum	   *rd;
	bool	   *rn;
	Datum	   *sorted;
	int			n;
	int			nr;
	MMQueue    *queue;
	uint8	   *masks;
	Datum	   *lists;
	bool	   *lnulls;
	int64	   *ids;
	Datum	   *out;
	MMCaller	caller = {GetUserId(), 0};
	Oid			argtypes[8] = {TEXTOID, TEXTARRAYOID, FLOAT8ARRAYOID, JSONBOID, OIDOID, INT4OID,
	TEXTOID, JSONBARRAYOID};
	Datum		values[8];
	char		nulls[8] = "        ";
	bool		isnull;

	mm_require_arg(fcinfo, 1, "players");
	mm_require_arg(fcinfo, 2, "ratings");
	mm_require_read_committed("enqueue_party");
	mm_require_arg(fcinfo, 3, "attributes");
	pa = PG_GETARG_ARRAYTYPE_P(1);
	ra = PG_GETARG_ARRAYTYPE_P(2);
	attributes = PG_GETARG_JSONB_P(3);
	if (ARR_NDIM(pa) > 1 || ARR_NDIM(ra) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("players and ratings must be one-dimensional arrays")));
	n = ArrayGetNItems(ARR_NDIM(pa), ARR_DIMS(pa));
	nr = ArrayGetNItems(ARR_NDIM(ra), ARR_DIMS(ra));
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("players must not be empty"),
				 errhint("Pass the party's players, for example ARRAY['ann', 'bob'].")));
	if (n != nr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("players and ratings must have the same length"),
				 errdetail("Got %d players and %d ratings.", n, nr)));
	/* no team holds more: refused before anything is read */
	if (n > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a party of %d players is larger than any team", n),
				 errhint("A party plays in one team, of at most 1000 players.")));
	deconstruct_array(pa, TEXTOID, -1, false, TYPALIGN_INT, &pd, &pn, &n);
	deconstruct_array(ra, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &rd, &rn, &nr);
	for (int i = 0; i < n; i++)
	{
		if (pn[i] || rn[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s %d of the party is null", pn[i] ? "player" : "rating", i + 1)));
		check_ticket_args(DatumGetTextPP(pd[i]), attributes);
	}
	sorted = palloc(sizeof(Datum) * n);
	memcpy(sorted, pd, sizeof(Datum) * n);
	qsort(sorted, n, sizeof(Datum), text_datum_cmp);
	for (int i = 1; i < n; i++)
		if (text_datum_cmp(&sorted[i - 1], &sorted[i]) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("player \"%s\" is in the party twice", TextDatumGetCString(sorted[i]))));
	if (getKeyJsonValueFromContainer(&attributes->root, "party", 5, NULL) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("enqueue_party takes no attribute \"party\""),
				 errdetail("The players enqueued together are the party."),
				 errhint("Leave \"party\" out of the attributes.")));

	mm_act_as_owner(&caller);
	SPI_connect();
	queue = queue_for_ticket(queue_name, DatumGetTextPP(pd[0]), DatumGetFloat8(rd[0]), attributes,
							 true, caller.role, false);
	for (int i = 1; i < n; i++)
		(void) mm_normalise_rating(queue, DatumGetFloat8(rd[i]), "rating");
	if (n > queue->cfg.team_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a party of %d players is larger than a team of queue \"%s\"", n, queue->name),
				 errdetail("A party plays in one team, of %d players.", queue->cfg.team_size),
				 errhint("Split the party into parties of at most %d.", queue->cfg.team_size)));
	masks = palloc0(n);
	lists = palloc(sizeof(Datum) * n);
	lnulls = palloc(sizeof(bool) * n);
	if (queue->cfg.roles.n > 0)
	{
		party_roles(queue, attributes, n, masks, lists);
		if (!mm_party_fits(&queue->cfg, n, masks))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the party's players cannot take %d different places of one team of queue \"%s\"",
							n, queue->name),
					 errdetail("%s", mm_roles_detail(queue)),
					 errhint("Let some players list more roles, or enqueue them apart.")));
	}
	else
		for (int i = 0; i < n; i++)
			lists[i] = (Datum) 0;
	if (queue->criteria.exclude != NULL)
	{
		JsonbValue	names[MM_EXCLUDE_MAX];
		int			nn;

		(void) mm_exclude_names(queue, attributes, names, &nn);
		for (int j = 0; j < nn; j++)
			for (int i = 0; i < n; i++)
			{
				text	   *p = DatumGetTextPP(pd[i]);

				if ((int) VARSIZE_ANY_EXHDR(p) == names[j].val.string.len &&
					memcmp(VARDATA_ANY(p), names[j].val.string.val, names[j].val.string.len) == 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("the party's block list names its own player \"%s\"",
									TextDatumGetCString(pd[i])),
							 errhint("A party plays together; leave its players out of \"%s\".",
									 mm_shorten(queue->criteria.exclude))));
			}
	}

	/* one instant for all, ids in the players' order, the first names the party */
	mm_keep_plan(&insert_plan,
				 "WITH ids AS (SELECT pg_catalog.nextval('matchmaker.tickets_id_seq') AS id, o "
				 "  FROM pg_catalog.generate_series(1, $6) AS o ORDER BY o), "
				 "c AS (SELECT pg_catalog.clock_timestamp() AS t) "
				 "INSERT INTO matchmaker.tickets (id, queue, player, rating, attributes, enqueued_at, "
				 "enqueued_by, enqueued_by_name, party) "
				 "SELECT i.id, $1, p.player, p.rating, "
				 "CASE WHEN p.roles IS NULL THEN $4 ELSE $4 OPERATOR(pg_catalog.||) "
				 "pg_catalog.jsonb_build_object('roles', p.roles) END, c.t, $5, $7, "
				 "CASE WHEN $6 OPERATOR(pg_catalog.>) 1 THEN (SELECT pg_catalog.min(id) FROM ids) END "
				 "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($8)) "
				 "WITH ORDINALITY AS p(player, rating, roles, o) "
				 "JOIN ids i ON i.o OPERATOR(pg_catalog.=) p.o CROSS JOIN c "
				 "ORDER BY p.o "
				 "ON CONFLICT (queue, player) WHERE state OPERATOR(pg_catalog.=) 'waiting' DO NOTHING "
				 "RETURNING id, player",
				 8, argtypes);
	mm_keep_plan(&existing_plan,
				 "SELECT id, player, party, enqueued_by, enqueued_by_name, "
				 "(SELECT pg_catalog.count(*) FROM matchmaker.tickets m "
				 " WHERE m.party OPERATOR(pg_catalog.=) t.party "
				 " AND m.state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])) "
				 "FROM matchmaker.tickets t WHERE queue OPERATOR(pg_catalog.=) $1 "
				 "AND player OPERATOR(pg_catalog.=) ANY ($2) "
				 "AND state OPERATOR(pg_catalog.=) ANY (ARRAY['waiting', 'proposed'])",
				 2, argtypes);
	values[0] = CStringGetTextDatum(queue_name);
	values[1] = PointerGetDatum(pa);
	values[2] = PointerGetDatum(ra);
	values[3] = JsonbPGetDatum(attributes);
	values[4] = ObjectIdGetDatum(caller.role);
	values[5] = Int32GetDatum(n);
	values[6] = CStringGetTextDatum(GetUserNameFromId(caller.role, false));
	for (int i = 0; i < n; i++)
		lnulls[i] = lists[i] == (Datum) 0;
	{
		int			dims[1] = {n};
		int			lbs[1] = {1};

		values[7] = PointerGetDatum(construct_md_array(lists, lnulls, 1, dims, lbs, JSONBOID, -1,
													   false, TYPALIGN_INT));
	}
	if (SPI_execute_plan(insert_plan, values, nulls, false, 0) != SPI_OK_INSERT_RETURNING)
		elog(ERROR, "could not insert the party's tickets");
	ids = palloc(sizeof(int64) * n);
	if (SPI_processed == (uint64) n)
	{
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			char	   *who = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

			for (int i = 0; i < n; i++)
				if (strcmp(who, TextDatumGetCString(pd[i])) == 0)
					ids[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull));
		}
		for (int i = 0; i < n; i++)
			mm_arrival_on_commit(queue_name);
	}
	else
	{
		/* the same party waits already (its ids), or a player waits otherwise (an error) */
		uint64		inserted = SPI_processed;
		int64		party = -1;
		bool		same = inserted == 0;

		if (SPI_execute_plan(existing_plan, values, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not look up the party's waiting tickets");
		same = same && SPI_processed == (uint64) n;
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			char	   *who = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
			Datum		pdatum = SPI_getbinval(tup, desc, 3, &isnull);
			int64		count = DatumGetInt64(SPI_getbinval(tup, desc, 6, &isnull));
			char	   *owner_name;
			Oid			owner = ticket_owner(MM_OWNER_NAMED, tup, desc, 4, &owner_name);

			if (!mm_caller_owns(&caller, owner, owner_name))
				refuse_other_role(who, queue_name);
			if (isnull || (party >= 0 && DatumGetInt64(pdatum) != party) || count != n)
				same = false;
			else
				party = DatumGetInt64(pdatum);
			for (int i = 0; i < n; i++)
				if (strcmp(who, TextDatumGetCString(pd[i])) == 0)
					ids[i] = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
			if (!same)
				ereport(ERROR,
						(errcode(ERRCODE_UNIQUE_VIOLATION),
						 errmsg("player \"%s\" already waits in queue \"%s\"", who, queue_name),
						 errdetail("A party enters a queue all together or not at all."),
						 errhint("Cancel the player's waiting ticket, or enqueue the party without the player.")));
		}
		if (!same)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not enqueue the party in queue \"%s\"", queue_name),
					 errdetail("A player's waiting ticket changed while enqueue_party ran."),
					 errhint("Retry the call.")));
	}
	SPI_finish();
	mm_act_as_caller(&caller);
	out = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		out[i] = Int64GetDatum(ids[i]);
	PG_RETURN_ARRAYTYPE_P(construct_array(out, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/*
 * matchmaker.cancel(ticket): end a waiting ticket as cancelled.  Returns
 * false when the ticket is no longer waiting (matched, expired or already
 * cancelled); a ticket id that never existed is an error, and so is a
 * ticket of a role the caller may not act for (0.2.0 on; from 0.3.0 on
 * also a ticket whose role is gone or renamed, see caller_owns).
 *
 * cancel locks nothing but its ticket's row (the UPDATE's own lock): a
 * client idle in its transaction after a cancel holds no lock on the
 * queue.  A tick writes a ticket it matches or expires only when no other
 * transaction holds it (as FOR UPDATE SKIP LOCKED; see tick.c): when the
 * tick gets there first, the cancel waits for it and then finds the ticket
 * matched (false); when the cancel does, the tick leaves the ticket out
 * (a tick waits for a cancel only when the cancel takes the ticket in the
 * instant between the tick's check and its update, and then at most
 * MM_UNLOCKED_WAIT_MS).  A difference_wait
 * provisional group that holds the ticket stays until the next tick of
 * the queue dissolves it (matchmaker.provisional shows only groups whose
 * tickets all wait), so that no tick waits for the canceller's row lock on
 * it.
 */
static Datum
cancel_internal(FunctionCallInfo fcinfo, MMOwnership ownership)
{
	static SPIPlanPtr lookup_plan[MM_OWNERSHIPS];
	static SPIPlanPtr cancel_plan;
	static SPIPlanPtr party_cancel_plan;
	Oid			argtypes[1] = {INT8OID};
	int64	   *ended = NULL;
	int			nended = 0;
	Datum		values[1];
	bool		cancelled;
	bool		isnull;
	char	   *queue_name;
	int64		ticket;
	MMCaller	caller = {GetUserId(), 0};
	bool		owned = ownership != MM_OWNER_NONE;

	mm_require_arg(fcinfo, 0, "ticket");
	ticket = PG_GETARG_INT64(0);
	values[0] = Int64GetDatum(ticket);

	if (owned)
		mm_act_as_owner(&caller);
	SPI_connect();
	if (ownership == MM_OWNER_NAMED)
		mm_keep_plan(&lookup_plan[MM_OWNER_NAMED],
					 "SELECT t.queue, t.enqueued_by, t.enqueued_by_name FROM matchmaker.tickets t "
					 "WHERE t.id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
	else if (ownership == MM_OWNER_OID)
		mm_keep_plan(&lookup_plan[MM_OWNER_OID],
					 "SELECT t.queue, t.enqueued_by FROM matchmaker.tickets t "
					 "WHERE t.id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
	else
		mm_keep_plan(&lookup_plan[MM_OWNER_NONE],
					 "SELECT t.queue FROM matchmaker.tickets t WHERE t.id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
	if (SPI_execute_plan(lookup_plan[ownership], values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the ticket");
	if (SPI_processed == 0)
		mm_ticket_not_found(ticket);
	if (owned)
	{
		char	   *owner_name;
		Oid			owner = ticket_owner(ownership, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
										 &owner_name);

		if (!mm_caller_owns(&caller, owner, owner_name))
			ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to cancel ticket %lld", (long long) ticket),
					 errdetail("The ticket was enqueued by another role."),
					 errhint("Cancel a ticket from the role that enqueued it, or from a role that has its privileges.")));
	}

	queue_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	/* from 0.3.0 on, with the ticket's party: cancelling one member cancels them all */
	if (ownership == MM_OWNER_NAMED)
		mm_keep_plan(&party_cancel_plan,
					 "UPDATE matchmaker.tickets SET state = 'cancelled', ended_at = pg_catalog.clock_timestamp() "
					 "WHERE state OPERATOR(pg_catalog.=) 'waiting' AND (id OPERATOR(pg_catalog.=) $1 "
					 "OR party OPERATOR(pg_catalog.=) (SELECT p.party FROM matchmaker.tickets p "
					 "WHERE p.id OPERATOR(pg_catalog.=) $1)) RETURNING id",
					 1, argtypes);
	else
		mm_keep_plan(&cancel_plan,
					 "UPDATE matchmaker.tickets SET state = 'cancelled', ended_at = pg_catalog.clock_timestamp() "
					 "WHERE id OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' RETURNING id",
					 1, argtypes);

	/*
	 * A waiting ticket, or (0.3.0 on) one in a pending proposal; a tick can
	 * propose the ticket, and a dissolved proposal requeue it, between the
	 * two, so try both a few times.
	 */
	cancelled = false;
	for (int attempt = 0; attempt < 3 && !cancelled; attempt++)
	{
		if (SPI_execute_plan(ownership == MM_OWNER_NAMED ? party_cancel_plan : cancel_plan,
							 values, NULL, false, 0) != SPI_OK_UPDATE_RETURNING)
			elog(ERROR, "could not cancel ticket");
		cancelled = SPI_processed > 0;
		if (cancelled)
		{
			ended = palloc(sizeof(int64) * SPI_processed);
			for (uint64 r = 0; r < SPI_processed; r++)
				ended[nended++] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc,
															  1, &isnull));
		}
		if (!cancelled && ownership == MM_OWNER_NAMED && mm_ready_available())
			cancelled = mm_ready_cancel(ticket, queue_name);
		else if (!cancelled)
			break;
	}
	if (cancelled)
	{
		StringInfoData payload;
		int			head;

		mm_wake_on_commit(queue_name);
		if (ownership == MM_OWNER_NAMED)
		{
			initStringInfo(&payload);
			mm_event_start(&payload, "cancelled", queue_name);
			appendStringInfo(&payload, ", \"ticket\": " INT64_FORMAT, ticket);
			head = payload.len;
			/* a party's: every member it ended */
			if (nended > 1)
			{
				qsort(ended, nended, sizeof(int64), mm_int64_cmp);
				mm_event_ids(&payload, "tickets", ended, nended);
			}
			mm_event_finish(&payload, head, mm_queue_channel(queue_name));
		}
	}
	SPI_finish();
	if (owned)
		mm_act_as_caller(&caller);
	PG_RETURN_BOOL(cancelled);
}

/*
 * matchmaker.accept(ticket, accepted): a player's answer to the ready check
 * of its proposed ticket (see ready.c); returns the ticket's state after
 * it: 'proposed' (others have yet to answer), 'matched' (the match is
 * ready), 'declined', or the state the ticket already had (a ticket not
 * in a pending proposal keeps it: an answer after the match dissolved or
 * became ready changes nothing).  Only the ticket's role (or one with its
 * privileges) may answer.
 */
Datum
mm_accept(PG_FUNCTION_ARGS)
{
	static SPIPlanPtr lookup_plan;
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1];
	int64		ticket;
	bool		accepted;
	bool		isnull;
	char	   *queue_name;
	char	   *owner_name;
	char	   *state;
	Oid			owner;
	MMCaller	caller = {GetUserId(), 0};
	MemoryContext outer = CurrentMemoryContext;

	mm_require_arg(fcinfo, 0, "ticket");
	mm_require_arg(fcinfo, 1, "accepted");
	/* it waits for the proposal's lock, then reads what committed meanwhile */
	mm_require_read_committed("accept");
	ticket = PG_GETARG_INT64(0);
	accepted = PG_GETARG_BOOL(1);
	values[0] = Int64GetDatum(ticket);

	mm_act_as_owner(&caller);
	SPI_connect();
	mm_keep_plan(&lookup_plan,
				 "SELECT t.queue, t.enqueued_by, t.enqueued_by_name FROM matchmaker.tickets t "
				 "WHERE t.id OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	if (SPI_execute_plan(lookup_plan, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the ticket");
	if (SPI_processed == 0)
		mm_ticket_not_found(ticket);
	owner = ticket_owner(MM_OWNER_NAMED, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &owner_name);
	if (!mm_caller_owns(&caller, owner, owner_name))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to answer for ticket %lld", (long long) ticket),
				 errdetail("The ticket was enqueued by another role."),
				 errhint("Answer a ready check from the role that enqueued the ticket, or from a role that has its privileges.")));
	queue_name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	state = MemoryContextStrdup(outer, mm_ready_answer(ticket, queue_name, accepted));
	SPI_finish();
	mm_act_as_caller(&caller);
	PG_RETURN_TEXT_P(cstring_to_text(state));
}

/* 0.1.0's matchmaker.cancel: any caller may cancel any ticket. */
Datum
mm_cancel(PG_FUNCTION_ARGS)
{
	return cancel_internal(fcinfo, MM_OWNER_NONE);
}

/* 0.2.0's matchmaker.cancel: only the ticket's role (or one with its privileges). */
Datum
mm_cancel_0_2(PG_FUNCTION_ARGS)
{
	return cancel_internal(fcinfo, MM_OWNER_OID);
}

/* matchmaker.cancel from 0.3.0 on: the same, while that role exists under its recorded name. */
Datum
mm_cancel_0_3(PG_FUNCTION_ARGS)
{
	return cancel_internal(fcinfo, MM_OWNER_NAMED);
}

/*
 * The median wait of the real players matched in a queue over its history
 * window (that of the "auto" parameters) whose rating lies in [lo, hi] and
 * who waited longer than waited seconds; false when there are none.  A
 * query over the history: only before 0.3.0's statistics tables.
 */
static bool
median_recent_wait(const MMQueue *queue, TimestampTz now, double lo, double hi,
				   double waited, double *median)
{
	static SPIPlanPtr plan;
	Oid			argtypes[6] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, FLOAT8OID, FLOAT8OID, FLOAT8OID};
	Datum		values[6];
	bool		isnull;
	Datum		d;

	mm_keep_plan(&plan,
				 "SELECT pg_catalog.percentile_cont(0.5) WITHIN GROUP "
				 "(ORDER BY pg_catalog.date_part('epoch', t.matched_at OPERATOR(pg_catalog.-) t.enqueued_at)) "
				 "FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id "
				 "WHERE m.queue OPERATOR(pg_catalog.=) $1 "
				 "AND m.created_at OPERATOR(pg_catalog.>) $2 AND m.created_at OPERATOR(pg_catalog.<=) $3 "
				 "AND t.rating OPERATOR(pg_catalog.>=) $4 AND t.rating OPERATOR(pg_catalog.<=) $5 "
				 "AND pg_catalog.date_part('epoch', t.matched_at OPERATOR(pg_catalog.-) t.enqueued_at) "
				 "OPERATOR(pg_catalog.>) $6",
				 6, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now - (TimestampTz) (mm_history_window(queue, now) * USECS_PER_SEC));
	values[2] = TimestampTzGetDatum(now);
	values[3] = Float8GetDatum(lo);
	values[4] = Float8GetDatum(hi);
	values[5] = Float8GetDatum(waited);
	if (SPI_execute_plan(plan, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's recent waits");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return false;
	*median = DatumGetFloat8(d);
	return true;
}

/* Seconds as an interval datum. */
static Datum
seconds_interval(double s)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = (TimeOffset) llround(s * USECS_PER_SEC);
	return IntervalPGetDatum(iv);
}

/*
 * A waiting ticket's expected remaining wait and, for a periodic queue,
 * when its current period ends at the latest (for an optimize queue, when
 * its next round is held); into out[7] and out[8].
 * The estimate comes from the waits the ticks record per tenth of the
 * rating range (mm_stats_expected_wait).  Before 0.3.0's tables it is the
 * median wait of the players matched recently within a tenth of the
 * rating range of this one who waited longer than it has so far (of all
 * such recent players when none is that close in rating), less what it
 * has waited, at most the time it has left to max_wait; that time left
 * when nobody recent waited longer; NULL without recent matches.
 */
static void
estimate_wait(const char *queue_name, double rating, TimestampTz enqueued_at,
			  Datum *out, bool *nulls)
{
	static SPIPlanPtr oldest_plan;
	MMQueue    *queue = palloc0(sizeof(MMQueue));
	TimestampTz now = GetCurrentTimestamp();
	double		band;
	double		waited = (double) (now - enqueued_at) / USECS_PER_SEC;
	double		left;
	double		median;

	if (!mm_load_queue(queue_name, MM_LOCK_NONE, queue))
		return;
	band = (queue->rating_max - queue->rating_min) / 10;
	left = Max(queue->cfg.max_wait - Max(waited, 0), 0);
	if (mm_table_exists("queue_bands"))
	{
		/* 0.3.0 on: from the statistics the ticks keep (stats.c) */
		if (mm_stats_expected_wait(queue, now, rating, waited, &median))
		{
			out[7] = seconds_interval(median);
			nulls[7] = false;
		}
	}
	else if (median_recent_wait(queue, now, rating - band, rating + band, waited, &median) ||
			 median_recent_wait(queue, now, -INFINITY, INFINITY, waited, &median))
	{
		out[7] = seconds_interval(Min(Max(median - waited, 0), left));
		nulls[7] = false;
	}
	else if (median_recent_wait(queue, now, -INFINITY, INFINITY, -INFINITY, &median))
	{
		/* everyone recent was matched sooner: at the latest at max_wait */
		out[7] = seconds_interval(left);
		nulls[7] = false;
	}
	if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
	{
		/* the next round: the next multiple of the round period on Unix time */
		double		unix_now = (double) now / USECS_PER_SEC +
			(double) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
		double		next = (floor(unix_now / queue->cfg.recheck) + 1) * queue->cfg.recheck;

		out[8] = TimestampTzGetDatum(now + (TimestampTz) llround((next - unix_now) * USECS_PER_SEC));
		nulls[8] = false;
	}
	if (queue->cfg.algorithm == MM_ALGO_PERIODIC)
	{
		Oid			argtypes[2] = {TEXTOID, INTERVALOID};
		Datum		values[2];
		bool		isnull;
		Datum		d;

		mm_keep_plan(&oldest_plan,
					 "SELECT pg_catalog.min(enqueued_at) OPERATOR(pg_catalog.+) $2 FROM matchmaker.tickets "
					 "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting'",
					 2, argtypes);
		values[0] = CStringGetTextDatum(queue_name);
		values[1] = seconds_interval(queue->cfg.max_wait);
		if (SPI_execute_plan(oldest_plan, values, NULL, true, 1) != SPI_OK_SELECT)
			elog(ERROR, "could not read the queue's oldest ticket");
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
		{
			out[8] = d;
			nulls[8] = false;
		}
	}
}

/*
 * matchmaker.ticket_status(ticket): one ticket's queue, player, state,
 * when it was enqueued, how long it has waited (until now while it waits,
 * else until it was matched or ended), its match and team, and while it
 * waits the expected remaining wait and (periodic queues) the latest end
 * of the current period.  Readable by the role that enqueued the ticket
 * (or one with its privileges; from 0.3.0 on while that role exists under
 * its recorded name) and by members of matchmaker_admin.
 */
static Datum
ticket_status_internal(FunctionCallInfo fcinfo, MMOwnership ownership)
{
	static SPIPlanPtr plan[MM_OWNERSHIPS];
	Oid			argtypes[1] = {INT8OID};
	Datum		values[1];
	TupleDesc	tupdesc;
	HeapTupleHeader result;
	Datum		out[9];
	bool		nulls[9];
	bool		isnull;
	int64		ticket;
	Oid			owner;
	char	   *owner_name;
	Oid			admin;
	MMCaller	caller;

	mm_require_arg(fcinfo, 0, "ticket");
	ticket = PG_GETARG_INT64(0);
	values[0] = Int64GetDatum(ticket);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	mm_act_as_owner(&caller);
	SPI_connect();
	if (ownership == MM_OWNER_NAMED)
		mm_keep_plan(&plan[MM_OWNER_NAMED],
					 "SELECT queue, player, state, enqueued_at, "
					 "COALESCE(matched_at, ended_at, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.-) enqueued_at, "
					 "match_id, team, enqueued_by, enqueued_by_name, rating "
					 "FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
	else
		mm_keep_plan(&plan[MM_OWNER_OID],
					 "SELECT queue, player, state, enqueued_at, "
					 "COALESCE(matched_at, ended_at, pg_catalog.clock_timestamp()) OPERATOR(pg_catalog.-) enqueued_at, "
					 "match_id, team, enqueued_by, rating "
					 "FROM matchmaker.tickets WHERE id OPERATOR(pg_catalog.=) $1",
					 1, argtypes);
	if (SPI_execute_plan(plan[ownership], values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read ticket");
	if (SPI_processed == 0)
		mm_ticket_not_found(ticket);
	owner = ticket_owner(ownership, SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 8, &owner_name);
	admin = get_role_oid("matchmaker_admin", true);
	if (!mm_caller_owns(&caller, owner, owner_name) &&
		!(OidIsValid(admin) && has_privs_of_role(caller.role, admin)))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to read ticket %lld", (long long) ticket),
				 errdetail("The ticket was enqueued by another role."),
				 errhint("Read a ticket from the role that enqueued it, or as a member of matchmaker_admin.")));

	/* The row is built in SPI's memory and copied out before SPI_finish. */
	{
		HeapTuple	row = SPI_copytuple(SPI_tuptable->vals[0]);
		TupleDesc	desc = SPI_tuptable->tupdesc;

		for (int i = 0; i < 7; i++)
			out[i] = SPI_getbinval(row, desc, i + 1, &nulls[i]);
		nulls[7] = nulls[8] = true;
		out[7] = out[8] = (Datum) 0;
		if (strcmp(TextDatumGetCString(out[2]), "waiting") == 0)
			estimate_wait(TextDatumGetCString(out[0]),
						  DatumGetFloat8(SPI_getbinval(row, desc,
													   ownership == MM_OWNER_NAMED ? 10 : 9, &isnull)),
						  DatumGetTimestampTz(out[3]), out, nulls);
	}
	tupdesc = BlessTupleDesc(tupdesc);
	result = SPI_returntuple(heap_form_tuple(tupdesc, out, nulls), tupdesc);
	SPI_finish();
	mm_act_as_caller(&caller);
	PG_RETURN_HEAPTUPLEHEADER(result);
}

/* 0.2.0's matchmaker.ticket_status: enqueued_by a regrole. */
Datum
mm_ticket_status(PG_FUNCTION_ARGS)
{
	return ticket_status_internal(fcinfo, MM_OWNER_OID);
}

/* matchmaker.ticket_status from 0.3.0 on: enqueued_by an oid with enqueued_by_name. */
Datum
mm_ticket_status_0_3(PG_FUNCTION_ARGS)
{
	return ticket_status_internal(fcinfo, MM_OWNER_NAMED);
}
