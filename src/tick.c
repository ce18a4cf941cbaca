/*
 * tick.c
 *		matchmaker.tick: load a queue's waiting tickets, run the core's step
 *		on them, and write what it decided (matches, the tickets' new states,
 *		difference_wait's provisional groups, one NOTIFY per match), all in
 *		the caller's transaction.
 *
 * Concurrency: the queue's row is locked FOR UPDATE first, so two ticks of
 * one queue (and a tick and an alter_queue or drop_queue of it) run one
 * after the other.  The tick then reads the waiting tickets (a fresh
 * snapshot in READ COMMITTED) without locking them, runs the core's step,
 * and makes sure only of the tickets it is about to match or end, as
 * FOR UPDATE SKIP LOCKED: it locks those it ends, and checks those it
 * matches without locking them when it can update them without statements
 * (tick_rows.c; mark_unlocked).  A ticket it cannot lock or that fails the
 * check (a cancel holds it, in a transaction still open) or that stopped
 * waiting since it was read (a cancel committed) is left out, and the step
 * runs again without it, a bounded number of times (the last locks its
 * matched tickets too); then the matches that need a ticket still missing
 * are left for the next tick.  So a tick never waits for a client (but for
 * at most MM_UNLOCKED_WAIT_MS, see mark_unlocked) and never skips a whole
 * queue because of one ticket.  enqueue takes no lock a tick waits for; a
 * ticket committed after the tick's read waits for the next tick.
 *
 * Data: a waiting ticket the queue's current settings cannot use (a rating
 * outside the range, attributes lacking a criterion or with a party or ping
 * optimize cannot use, an enqueued_at infinite or absurdly far from the
 * current time, however it got there) is ended in state 'invalid'
 * with its reason, with a NOTIFY of its own, and the rest of the queue is
 * matched.
 */
#include "matchmaker.h"

#include <math.h>

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "access/xact.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mm_tick);

/* Most keys (equal filters) whose own arrival rate an auto tick measures. */
#define MM_KEY_RATES_MAX	256

/* Steps a tick runs at most when tickets it decided on could not be locked. */
#define MM_LOCK_ATTEMPTS	3

/*
 * The longest a tick waits for a ticket a transaction took between its
 * check and its update (mark_unlocked), in milliseconds; at most half its
 * deadlock_timeout, so that a client with that setting (the server's)
 * that then waits for a ticket the tick updated finds the tick gone before
 * it would detect a deadlock.
 */
#define MM_UNLOCKED_WAIT_MS	50

/*
 * The plausible enqueued_at of a waiting ticket, around the transaction's
 * start (now(), as check() has it; not the tick's now, which a caller may
 * choose far off): at most the largest max_wait ahead (a clock a little ahead is normal, a
 * ticket cannot be meant to wait longer than any queue lets it), at most a
 * century behind (every ticket times out within the largest max_wait, so
 * only a row written by hand is that old; and within a few centuries the
 * arrival in seconds, a double, keeps the microseconds).
 */
#define MM_ENQUEUED_AHEAD_MAX	((int64) 365 * USECS_PER_DAY)
#define MM_ENQUEUED_BEHIND_MAX	((int64) 36525 * USECS_PER_DAY)

/*
 * Ticket ids: those a tick leaves out (could not lock), those it ends as
 * invalid (with their reasons).
 */
typedef struct IdList
{
	int64	   *ids;
	char	  **reasons;		/* NULL for a plain list */
	int			n;
	int			cap;
} IdList;

static void
idlist_add(IdList *l, int64 id, char *reason)
{
	if (l->n == l->cap)
	{
		l->cap = Max(16, l->cap * 2);
		l->ids = l->ids ? repalloc(l->ids, sizeof(int64) * l->cap) : palloc(sizeof(int64) * l->cap);
		l->reasons = l->reasons ? repalloc(l->reasons, sizeof(char *) * l->cap) :
			palloc(sizeof(char *) * l->cap);
	}
	l->ids[l->n] = id;
	l->reasons[l->n] = reason;
	l->n++;
}

/* Whether id is in sorted[0 .. n). */
static bool
id_in(const int64 *sorted, int n, int64 id)
{
	return n > 0 && bsearch(&id, sorted, n, sizeof(int64), mm_int64_cmp) != NULL;
}

/*
 * Seconds from origin to t (in doubles: exact for times within centuries of
 * 2000, and no overflow for a tick's now near the end of time).
 */
static double
seconds_since(TimestampTz t, TimestampTz origin)
{
	return ((double) t - (double) origin) / USECS_PER_SEC;
}

/* The timestamp s seconds after origin. */
static TimestampTz
seconds_after(double s, TimestampTz origin)
{
	return origin + (TimestampTz) llround(s * USECS_PER_SEC);
}

/* Order tickets by arrival, then id, as the core expects. */
static int
ticket_arrival_cmp(const void *a, const void *b)
{
	const MMTicket *x = a;
	const MMTicket *y = b;

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Order (id, index) pairs by id, for lookups. */
static int
id_index_cmp(const void *a, const void *b)
{
	int64		x = ((const int64 *) a)[0];
	int64		y = ((const int64 *) b)[0];

	return (x > y) - (x < y);
}

/*
 * Why the queue's current settings cannot use a waiting ticket (its
 * rating and attributes), or NULL when they can; crit gets its criteria.
 */
static char *
ticket_problem(MMQueue *queue, double rating, Jsonb *attributes, double *crit, uint8 *roles)
{
	if (isnan(rating) || isinf(rating) ||
		rating < queue->rating_min || rating > queue->rating_max)
		return psprintf("rating %s is outside the queue's rating range %s to %s",
						mm_float_text(rating), mm_float_text(queue->rating_min),
						mm_float_text(queue->rating_max));
	if (attributes != NULL && (!JB_ROOT_IS_OBJECT(attributes) || JB_ROOT_IS_SCALAR(attributes)))
		return pstrdup("attributes are not a JSON object");
	if (queue->cfg.criteria.n > 0)
	{
		MMCriterionProblem problem;
		double		got;
		int			d = mm_criteria_read(queue, attributes, crit, &problem, &got);

		if (d > 0)
		{
			const char *key = mm_shorten(queue->criteria.attribute[d]);

			if (problem == MM_CRITERION_OUTSIDE)
				return psprintf("attribute \"%s\" %s is outside the criterion's range %s to %s",
								key, mm_float_text(got), mm_float_text(queue->criteria.lo[d]),
								mm_float_text(queue->criteria.hi[d]));
			return psprintf(problem == MM_CRITERION_MISSING ?
							"attributes lack \"%s\", a criterion of the queue" :
							"attribute \"%s\" is not a number", key);
		}
	}
	if (mm_filters_any(queue))
	{
		StringInfoData buf;
		const char *problem;

		initStringInfo(&buf);
		problem = mm_filter_value(queue, attributes, &buf);
		pfree(buf.data);
		if (problem != NULL)
			return pstrdup(problem);
	}
	if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
	{
		JsonbValue *party;
		JsonbValue *ping;
		const char *problem = mm_optimize_attributes_problem(attributes, &party, &ping);

		if (problem != NULL)
			return pstrdup(problem);
	}
	{
		const char *problem = mm_roles_problem(queue, attributes, roles);

		if (problem != NULL)
			return pstrdup(problem);
	}
	return NULL;
}

/* A party's ticket: its party id and pool index. */
typedef struct PartyRow
{
	int64		party;
	int			i;
} PartyRow;

static int
party_row_cmp(const void *l, const void *r)
{
	const PartyRow *a = l;
	const PartyRow *b = r;

	if (a->party != b->party)
		return a->party < b->party ? -1 : 1;
	return (a->i > b->i) - (a->i < b->i);
}

/* A party some of whose tickets were left out (reason NULL) or ended invalid. */
typedef struct Skipped
{
	int64		party;
	char	   *reason;
} Skipped;

/* By party, a reason (invalid) before none (left out). */
static int
skipped_cmp(const void *l, const void *r)
{
	const Skipped *a = l;
	const Skipped *b = r;

	if (a->party != b->party)
		return a->party < b->party ? -1 : 1;
	return (a->reason == NULL) - (b->reason == NULL);
}

/*
 * Parties (enqueue_party) in a tick's pool, read with their tickets:
 * a party plays whole, so when one of its tickets is left out (it could
 * not be locked) the others wait with it, and when one is invalid the
 * others end invalid with it; a party larger than the queue's teams or
 * whose players cannot take different places of one team (after an
 * alter_queue) ends invalid.  The others get party numbers from 0 and,
 * outside optimize, the party's rating (params.party_rating).  party_of
 * and roles are by row; skipped holds the parties of the rows left out
 * (reason NULL) or ended invalid.
 */
static void
settle_parties(MMQueue *queue, MMPool *pool, const int64 *party_of, const uint8 *roles,
			   IdList *skipped, IdList *invalid)
{
	int			n = pool->ntickets;
	PartyRow   *pr = palloc(sizeof(PartyRow) * Max(n, 1));
	bool	   *drop = palloc0(sizeof(bool) * Max(n, 1));
	int			m = 0;
	int32		next = 0;
	int			w = 0;
	Skipped    *sk;
	int			ns;

	for (int i = 0; i < n; i++)
		if (party_of[pool->tickets[i].crow] >= 0)
		{
			pr[m].party = party_of[pool->tickets[i].crow];
			pr[m++].i = i;
		}
	if (m == 0)
		return;
	qsort(pr, m, sizeof(PartyRow), party_row_cmp);
	sk = palloc(sizeof(Skipped) * Max(skipped->n, 1));
	for (int j = 0; j < skipped->n; j++)
	{
		sk[j].party = skipped->ids[j];
		sk[j].reason = skipped->reasons[j];
	}
	ns = skipped->n;
	qsort(sk, ns, sizeof(Skipped), skipped_cmp);
	for (int b = 0; b < m;)
	{
		int			e = b + 1;
		char	   *reason = NULL;
		bool		out = false;

		while (e < m && pr[e].party == pr[b].party)
			e++;
		/* skipped sorted by party, an invalid member's reason first */
		{
			int			lo = 0;
			int			hi = ns;

			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (sk[mid].party < pr[b].party)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < ns && sk[lo].party == pr[b].party)
			{
				out = true;
				if (sk[lo].reason != NULL)
					reason = psprintf("a player of its party is invalid: %s", sk[lo].reason);
			}
		}
		if (reason == NULL && !out && e - b > queue->cfg.team_size)
			reason = psprintf("its party of %d players is larger than a team of %d",
							  e - b, queue->cfg.team_size);
		if (reason == NULL && !out && roles != NULL)
		{
			uint8		masks[1000];

			for (int j = b; j < e; j++)
				masks[j - b] = roles[pool->tickets[pr[j].i].crow];
			if (!mm_party_fits(&queue->cfg, e - b, masks))
				reason = pstrdup("its party's players cannot take different places of one team");
		}
		for (int j = b; j < e; j++)
		{
			if (reason != NULL)
				idlist_add(invalid, pool->tickets[pr[j].i].id, reason);
			if (reason != NULL || out)
				drop[pr[j].i] = true;
			else
				pool->tickets[pr[j].i].party = next;
		}
		if (reason == NULL && !out)
			next++;
		b = e;
	}
	for (int i = 0; i < n; i++)
		if (!drop[i])
			pool->tickets[w++] = pool->tickets[i];
	pool->ntickets = w;
	/* optimize rates each player at its own rating */
	if (queue->cfg.algorithm != MM_ALGO_OPTIMIZE && w > 0)
	{
		int32	   *party = palloc(sizeof(int32) * w);
		double	   *rating = palloc(sizeof(double) * w);
		int		   *order = palloc(sizeof(int) * w);

		for (int i = 0; i < w; i++)
		{
			party[i] = pool->tickets[i].party;
			rating[i] = pool->tickets[i].rating;
		}
		mm_party_ratings(queue, w, party, rating, order);
		for (int i = 0; i < w; i++)
			pool->tickets[i].rating = rating[i];
		pfree(party);
		pfree(rating);
		pfree(order);
	}
	pfree(pr);
	pfree(drop);
	pfree(sk);
}

/*
 * What makes a waiting ticket's enqueued_at unusable at the current time
 * now (see MM_ENQUEUED_AHEAD_MAX), or NULL when it is usable.
 */
static char *
enqueued_at_problem(TimestampTz enqueued_at, TimestampTz now)
{
	int64		ahead;

	if (TIMESTAMP_NOT_FINITE(enqueued_at))
		return psprintf("enqueued_at %s is not a finite time", timestamptz_to_str(enqueued_at));
	/* both finite: the difference overflows only when it is huge */
	if (pg_sub_s64_overflow(enqueued_at, now, &ahead))
		ahead = enqueued_at > now ? PG_INT64_MAX : PG_INT64_MIN;
	if (ahead > MM_ENQUEUED_AHEAD_MAX)
		return psprintf("enqueued_at %s is more than 365 days after the current time",
						timestamptz_to_str(enqueued_at));
	if (ahead < -MM_ENQUEUED_BEHIND_MAX)
		return psprintf("enqueued_at %s is more than 100 years before the current time",
						timestamptz_to_str(enqueued_at));
	return NULL;
}

/*
 * Where the tickets a tick read are (their ids, and the tuple each was
 * read from, found by a hash of the id): the tick locks and updates them
 * by ctid, a tuple fetch each, rather than by id, an index descent each
 * (tick_rows.c, else statements by ctid).  A ticket locked FOR UPDATE
 * keeps its ctid until this transaction updates it; one updated by
 * another transaction since it was read is not found at its old ctid by
 * the lock's fresh snapshot, so it is not locked and waits for a later
 * tick, as by id.  Reset at each tick; filled by load_tickets.
 */
typedef struct TidPair
{
	int64		id;
	ItemPointerData tid;
} TidPair;

typedef struct TidMap
{
	int			n;
	int			cap;
	TidPair    *pairs;
	/* open addressing on the ids: 1 + index into pairs, 0 empty; built at the first lookup */
	int32	   *slots;
	uint32		mask;			/* number of slots - 1, or 0 before they are built */
} TidMap;

static TidMap tick_tids;

static inline uint32
tid_hash(int64 id)
{
	return murmurhash32((uint32) id ^ (uint32) ((uint64) id >> 32));
}

/* Empty the map (its memory went with the previous tick's). */
static void
tids_reset(void)
{
	memset(&tick_tids, 0, sizeof(tick_tids));
}

static void
tids_add(int64 id, ItemPointer tid)
{
	if (tick_tids.n == tick_tids.cap)
	{
		tick_tids.cap = Max(tick_tids.cap * 2, 1024);
		tick_tids.pairs = tick_tids.pairs == NULL ? palloc(sizeof(TidPair) * tick_tids.cap) :
			repalloc_huge(tick_tids.pairs, sizeof(TidPair) * tick_tids.cap);
	}
	tick_tids.pairs[tick_tids.n].id = id;
	tick_tids.pairs[tick_tids.n].tid = *tid;
	tick_tids.n++;
	if (tick_tids.slots != NULL)
		pfree(tick_tids.slots);
	tick_tids.slots = NULL;
	tick_tids.mask = 0;
}

/* Index the pairs by id: at least twice as many slots as pairs. */
static void
tids_index(void)
{
	uint32		size = 16;

	while (size < (uint32) tick_tids.n * 2)
		size *= 2;
	tick_tids.slots = palloc_extended(sizeof(int32) * size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	tick_tids.mask = size - 1;
	for (int i = 0; i < tick_tids.n; i++)
	{
		uint32		h = tid_hash(tick_tids.pairs[i].id) & tick_tids.mask;

		/* an id read twice keeps its first entry, as the search of a sorted map found one */
		while (tick_tids.slots[h] != 0 && tick_tids.pairs[tick_tids.slots[h] - 1].id != tick_tids.pairs[i].id)
			h = (h + 1) & tick_tids.mask;
		if (tick_tids.slots[h] == 0)
			tick_tids.slots[h] = i + 1;
	}
}

/* The entry of id, or NULL when the tick did not read it. */
static TidPair *
tids_find(int64 id)
{
	uint32		h;

	if (tick_tids.n == 0)
		return NULL;
	if (tick_tids.slots == NULL)
		tids_index();
	for (h = tid_hash(id) & tick_tids.mask; tick_tids.slots[h] != 0; h = (h + 1) & tick_tids.mask)
		if (tick_tids.pairs[tick_tids.slots[h] - 1].id == id)
			return &tick_tids.pairs[tick_tids.slots[h] - 1];
	return NULL;
}

/*
 * The map's entries of ids[0 .. n), or NULL when this tick did not read
 * one of them.
 */
static TidPair **
tids_lookup(const int64 *ids, int n)
{
	TidPair   **at = palloc(sizeof(TidPair *) * Max(n, 1));

	for (int i = 0; i < n; i++)
		if ((at[i] = tids_find(ids[i])) == NULL)
		{
			pfree(at);
			return NULL;
		}
	return at;
}

/*
 * The tids of ids[0 .. n) as a tid[] datum, or (Datum) 0 when one of them
 * was not read by this tick (then the caller goes by id).
 */
static Datum
tids_of(const int64 *ids, int n)
{
	TidPair   **at = tids_lookup(ids, n);
	Datum	   *d;
	ArrayType  *a;

	if (at == NULL)
		return (Datum) 0;
	d = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
		d[i] = PointerGetDatum(&at[i]->tid);
	a = construct_array(d, n, TIDOID, sizeof(ItemPointerData), false, TYPALIGN_SHORT);
	pfree(d);
	pfree(at);
	return PointerGetDatum(a);
}

/*
 * The positions of the entries at[0 .. n) (tids_lookup) in the order of
 * their tuples' blocks: writing them in that order visits each heap
 * page once and the primary key's pages in order (the ids of a queue's
 * tickets grow with their addresses), as a statement's tid scan does.  A
 * counting sort over the blocks the tuples span (a queue's waiting tickets
 * are in the table's recent blocks), else a sort.
 */
typedef struct TidOrder
{
	ItemPointerData tid;
	int			pos;
} TidOrder;

static int
tid_order_cmp(const void *a, const void *b)
{
	const TidOrder *x = a;
	const TidOrder *y = b;
	int			c = ItemPointerCompare(unconstify(ItemPointerData *, &x->tid),
									   unconstify(ItemPointerData *, &y->tid));

	return c != 0 ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

static int *
tids_order(TidPair *const *at, int n)
{
	BlockNumber *block = palloc(sizeof(BlockNumber) * Max(n, 1));
	int		   *pos = palloc(sizeof(int) * Max(n, 1));
	BlockNumber lo = InvalidBlockNumber;
	BlockNumber hi = 0;

	for (int i = 0; i < n; i++)
	{
		block[i] = ItemPointerGetBlockNumberNoCheck(&at[i]->tid);
		lo = Min(lo, block[i]);
		hi = Max(hi, block[i]);
	}
	if (n > 0 && hi - lo < (BlockNumber) n * 4 + 1024)
	{
		int		   *start = palloc0(sizeof(int) * (hi - lo + 2));

		for (int i = 0; i < n; i++)
			start[block[i] - lo + 1]++;
		for (BlockNumber b = 1; b <= hi - lo + 1; b++)
			start[b] += start[b - 1];
		for (int i = 0; i < n; i++)
			pos[start[block[i] - lo]++] = i;
		pfree(start);
	}
	else if (n > 0)
	{
		TidOrder   *o = palloc(sizeof(TidOrder) * n);

		for (int i = 0; i < n; i++)
		{
			o[i].tid = at[i]->tid;
			o[i].pos = i;
		}
		qsort(o, n, sizeof(TidOrder), tid_order_cmp);
		for (int i = 0; i < n; i++)
			pos[i] = o[i].pos;
		pfree(o);
	}
	pfree(block);
	return pos;
}

/* A rating of the tickets table, normalised to the queue's range. */
static double
normalised_rating(const MMQueue *queue, double rating)
{
	rating = (rating - queue->rating_min) / (queue->rating_max - queue->rating_min);
	return Min(Max(rating, 0.0), 1.0);
}

/*
 * Load a queue's waiting tickets into pool (times in seconds
 * relative to now, ratings normalised), sorted by arrival, leaving out
 * the ids in left_out (sorted) and the tickets the settings cannot use,
 * which go to invalid with their reasons.
 */
static void
load_tickets(MMQueue *queue, TimestampTz now, MMPool *pool,
			 const int64 *left_out, int nleft_out, IdList *invalid, MMFilterDict *dict)
{
	/* tickets.party is there from 0.3.0 on, as proposals (ready checks) are */
	int			has_party = mm_ready_available() ? 1 : 0;
	int64	   *party_of = NULL;	/* each row's party, -1 alone */
	uint8	   *roles = NULL;	/* with roles: each row's mask */
	IdList		skipped = {0};	/* parties of rows left out or invalid (reason NULL: left out) */
	MMWaitingScan *scan;
	MMWaitingRow r;
	int			cap = 1024;
	int			nc = queue->cfg.criteria.n;
	int			nf = queue->criteria.nfilters;
	bool		read_attributes = nc > 0 || nf > 0 || queue->criteria.exclude != NULL ||
		queue->cfg.algorithm == MM_ALGO_OPTIMIZE || queue->cfg.roles.n > 0;
	bool		excl = queue->criteria.exclude != NULL;
	char	  **players = NULL;		/* with a block list: each row's player */
	char	 ***blocks = NULL;		/* and the players it blocks */
	int		   *nblocks = NULL;
	double	   *criteria = NULL;
	char	  **fvalues = NULL;		/* with filters: the rows' combined values */
	int		   *flens = NULL;
	int32	   *fstart = NULL;		/* row r's are fvalues[fstart[r] .. fstart[r + 1]) */
	int			nfv = 0;
	int			fcap = 1024;
	StringInfoData fbuf;
	double		crit[MM_MAX_CRITERIA];
	TimestampTz clock = GetCurrentTransactionStartTimestamp();
	int			nrows;

	/*
	 * A ticket enqueued after now (committed between the caller reading
	 * the clock and this read, or a clock a little ahead) waits for the
	 * next tick, so that no match is made before one of its tickets
	 * arrived; one too far ahead of the current time (infinity included)
	 * is read, to be ended as invalid.  A queue with criteria (or
	 * optimize, for party and ping) reads the attributes too.
	 */
	pool->tickets = palloc(sizeof(MMTicket) * cap);
	party_of = palloc(sizeof(int64) * cap);
	if (queue->cfg.roles.n > 0)
		roles = palloc(sizeof(uint8) * cap);
	if (nc > 0)
		criteria = palloc(sizeof(double) * cap * nc);
	if (nf > 0)
	{
		fvalues = palloc(sizeof(char *) * fcap);
		flens = palloc(sizeof(int) * fcap);
		fstart = palloc(sizeof(int32) * (cap + 1));
		initStringInfo(&fbuf);
	}
	if (excl)
	{
		players = palloc(sizeof(char *) * cap);
		blocks = palloc(sizeof(char **) * cap);
		nblocks = palloc(sizeof(int) * cap);
	}
	pool->ntickets = 0;
	tids_reset();
	scan = mm_waiting_begin(queue->name, now, clock + MM_ENQUEUED_AHEAD_MAX);
	while (mm_waiting_next(scan, &r))
	{
		int			row = pool->ntickets;
		MMTicket   *t;
		double		rating;
		int64		id = r.id;
		TimestampTz enqueued_at;
		char	   *problem;
		int64		party = r.party;
		uint8		mask = 0;

		if (pool->ntickets + 1 > cap)
		{
			cap *= 2;
			pool->tickets = repalloc_huge(pool->tickets, sizeof(MMTicket) * cap);
			party_of = repalloc_huge(party_of, sizeof(int64) * cap);
			if (roles != NULL)
				roles = repalloc_huge(roles, sizeof(uint8) * cap);
			if (nc > 0)
				criteria = repalloc_huge(criteria, sizeof(double) * cap * nc);
			if (nf > 0)
				fstart = repalloc_huge(fstart, sizeof(int32) * (cap + 1));
			if (excl)
			{
				players = repalloc_huge(players, sizeof(char *) * cap);
				blocks = repalloc_huge(blocks, sizeof(char **) * cap);
				nblocks = repalloc_huge(nblocks, sizeof(int) * cap);
			}
		}
		t = &pool->tickets[row];
		tids_add(id, &r.tid);
		if (id_in(left_out, nleft_out, id))
		{
			if (party >= 0)
				idlist_add(&skipped, party, NULL);
			continue;
		}
		rating = r.rating;
		enqueued_at = r.enqueued_at;
		problem = enqueued_at_problem(enqueued_at, clock);
		if (problem == NULL)
			problem = ticket_problem(queue, rating,
									 read_attributes ? DatumGetJsonbP(r.attributes) : NULL,
									 crit, &mask);
		if (problem != NULL)
		{
			idlist_add(invalid, id, problem);
			if (party >= 0)
				idlist_add(&skipped, party, problem);
			continue;
		}
		party_of[row] = party;
		if (roles != NULL)
			roles[row] = mask;
		pool->ntickets++;
		t->id = id;
		/* inside the range (checked above): the clamp is for rounding only */
		t->rating = normalised_rating(queue, rating);
		t->arrival = seconds_since(enqueued_at, now);
		t->group = -1;
		t->party = -1;
		t->attr = -1;
		/* rows stay where they are read; the sort below moves tickets only */
		t->crow = row;
		if (nc > 0)
			memcpy(criteria + (Size) row * nc, crit, sizeof(double) * nc);
		if (nf > 0)
		{
			int			lens[MM_FILTER_COMBOS_MAX];
			int			nc;
			int			at = 0;

			/* ticket_problem accepted the attributes; keep the values at their size */
			resetStringInfo(&fbuf);
			(void) mm_filter_values(queue, DatumGetJsonbP(r.attributes),
									&fbuf, lens, &nc);
			if (nfv + nc > fcap)
			{
				while (nfv + nc > fcap)
					fcap *= 2;
				fvalues = repalloc_huge(fvalues, sizeof(char *) * fcap);
				flens = repalloc_huge(flens, sizeof(int) * fcap);
			}
			fstart[row] = nfv;
			for (int c = 0; c < nc; c++)
			{
				fvalues[nfv] = palloc(Max(lens[c], 1));
				memcpy(fvalues[nfv], fbuf.data + at, lens[c]);
				flens[nfv++] = lens[c];
				at += lens[c];
			}
		}
		if (excl)
		{
			/* ticket_problem accepted the block list */
			JsonbValue	names[MM_EXCLUDE_MAX];
			int			nn;

			players[row] = TextDatumGetCString(r.player);
			(void) mm_exclude_names(queue, DatumGetJsonbP(r.attributes),
									names, &nn);
			nblocks[row] = nn;
			blocks[row] = palloc(sizeof(char *) * Max(nn, 1));
			for (int j = 0; j < nn; j++)
				blocks[row][j] = pnstrdup(names[j].val.string.val, names[j].val.string.len);
		}
	}
	mm_waiting_end(scan);
	nrows = pool->ntickets;
	if (has_party)
		settle_parties(queue, pool, party_of, roles, &skipped, invalid);
	qsort(pool->tickets, pool->ntickets, sizeof(MMTicket), ticket_arrival_cmp);
	pool->criteria = criteria;
	pool->ncrows = nc > 0 ? nrows : 0;
	pool->roles = roles;
	pool->nrole_rows = roles != NULL ? nrows : 0;
	if (excl)
	{
		int32	   *player;
		int32	   *start;
		int32	   *block;

		mm_exclude_rows(players, blocks, nblocks, nrows, &player, &start, &block);
		pool->player = player;
		pool->block_start = start;
		pool->block = block;
		pool->nblock_rows = nrows;
		pool->block_key = palloc(sizeof(int32) * Max(nrows, 1));
		pool->held = palloc0(sizeof(uint8) * Max(nrows, 1));
	}
	if (nf > 0 && !queue->criteria.any_intersect && !queue->criteria.any_relax)
	{
		pool->key = mm_filter_number(fvalues, flens, nrows, dict);
		pool->nkeys = nrows;
	}
	else if (nf > 0)
	{
		/*
		 * Intersect filters, or filters that relax: a row's combined values
		 * are its candidate keys (ascending: its values are, and so are the
		 * keys of sorted values); each step assigns one, and this
		 * assignment is the first step's.
		 */
		fstart[nrows] = nfv;
		pool->cand = mm_filter_number(fvalues, flens, nfv, dict);
		pool->cand_start = fstart;
		pool->ncand_rows = nrows;
		pool->ncand_keys = Max(dict->n, 1);
		pool->cand_key = palloc(sizeof(int32) * Max(nrows, 1));
		pool->cand_count = palloc0(sizeof(int32) * pool->ncand_keys);
		pool->key = pool->cand_key;
		pool->nkeys = nrows;
		if (queue->criteria.any_relax)
		{
			pool->nfilters = nf;
			pool->key_values = mm_filter_key_values(queue, dict);
			pool->relax_after = mm_filter_relax_seconds(queue);
		}
		if (mm_filter_assign(pool, 0.0) != MM_OK)
			elog(ERROR, "could not assign the filter values of queue \"%s\"", queue->name);
	}
}

/*
 * The pairs of waiting tickets whose players met in one of the last
 * `last` matches of either player within the queue's history window:
 * for window's rematch avoidance as opponents only (on different teams,
 * or in the same match of a one-team queue); for optimize's opponent
 * variation (last = 1) both ways, with the relation (1: teammates).
 */
static void
load_met_pairs(MMQueue *queue, TimestampTz now, MMPool *pool, int last, bool teammates)
{
	static SPIPlanPtr plan;
	Oid			argtypes[5] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID, BOOLOID};
	Datum		values[5];
	MMMetPair  *met;

	mm_keep_plan(&plan,
				 "WITH w AS (SELECT id, player FROM matchmaker.tickets "
				 "  WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
				 "  AND enqueued_at OPERATOR(pg_catalog.<=) $3), "
				 "h AS (SELECT t.player, t.team, t.match_id, pg_catalog.row_number() OVER "
				 "  (PARTITION BY t.player ORDER BY m.created_at DESC, m.id DESC) AS recency "
				 "  FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id "
				 "  WHERE m.queue OPERATOR(pg_catalog.=) $1 AND m.created_at OPERATOR(pg_catalog.>) $2 "
				 "  AND m.created_at OPERATOR(pg_catalog.<=) $3 AND t.player IN (SELECT player FROM w)), "
				 "met AS (SELECT h.player AS p1, o.player AS p2, "
				 "  CASE WHEN o.team OPERATOR(pg_catalog.=) h.team THEN 1 ELSE 0 END AS relation FROM h "
				 "  JOIN matchmaker.tickets o ON o.match_id OPERATOR(pg_catalog.=) h.match_id "
				 "  WHERE h.recency OPERATOR(pg_catalog.<=) $4 AND o.player OPERATOR(pg_catalog.<>) h.player "
				 "  AND ($5 OR o.team OPERATOR(pg_catalog.<>) h.team OR "
				 "       (SELECT q.teams FROM matchmaker.queues q WHERE q.name OPERATOR(pg_catalog.=) $1) "
				 "       OPERATOR(pg_catalog.=) 1)) "
				 "SELECT LEAST(w1.id, w2.id), GREATEST(w1.id, w2.id), pg_catalog.max(met.relation) FROM met "
				 "JOIN w w1 ON w1.player OPERATOR(pg_catalog.=) met.p1 "
				 "JOIN w w2 ON w2.player OPERATOR(pg_catalog.=) met.p2 "
				 "GROUP BY 1, 2",
				 5, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(seconds_after(-mm_history_window(queue, now), now));
	values[2] = TimestampTzGetDatum(now);
	values[3] = Int32GetDatum(last);
	values[4] = BoolGetDatum(teammates);
	if (SPI_execute_plan(plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the players' recent opponents");
	pool->nmet = (int) SPI_processed;
	if (pool->nmet == 0)
		return;
	met = palloc(sizeof(MMMetPair) * pool->nmet);
	for (int i = 0; i < pool->nmet; i++)
	{
		bool		isnull;

		met[i].a = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		met[i].b = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
		met[i].relation = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull));
	}
	qsort(met, pool->nmet, sizeof(MMMetPair), mm_met_pair_cmp);
	pool->met = met;
}

/* The pool index of the ticket with this id (byid: (id, index) pairs sorted by id), or -1. */
static int
pool_index_of(const int64 *byid, int n, int64 id)
{
	int			lo = 0;
	int			hi = n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (byid[2 * mid] == id)
			return (int) byid[2 * mid + 1];
		if (byid[2 * mid] < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* The pool's (id, index) pairs sorted by id, for pool_index_of. */
static int64 *
pool_by_id(const MMPool *pool)
{
	int64	   *byid = palloc(sizeof(int64) * 2 * Max(pool->ntickets, 1));

	for (int i = 0; i < pool->ntickets; i++)
	{
		byid[2 * i] = pool->tickets[i].id;
		byid[2 * i + 1] = i;
	}
	qsort(byid, pool->ntickets, 2 * sizeof(int64), id_index_cmp);
	return byid;
}

/*
 * optimize's per-ticket data from the tickets' attributes: "party" (a
 * premade's name, per role: the members, tickets of one role naming one
 * party, share a party number) and "ping" (an
 * object of region names and milliseconds), as the pool's party numbers
 * and ping lists.  Only the tickets in the pool count, whose shapes
 * load_tickets checked; the query reads the others without failing.
 */
static void
load_optimize_data(MMQueue *queue, TimestampTz now, MMPool *pool)
{
	static SPIPlanPtr party_plan;
	static SPIPlanPtr ping_plan;
	Oid			argtypes[2] = {TEXTOID, TIMESTAMPTZOID};
	Datum		values[2];
	int64	   *byid = pool_by_id(pool);
	int			nrows = 0;
	int			last_ticket = -1;
	int32	   *ping_start;
	int32	   *ping_region;
	float	   *ping_ms;
	int			w = 0;
	int32		offset = 0;

	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	/* the parties of enqueue_party (settle_parties) come first */
	for (int i = 0; i < pool->ntickets; i++)
		offset = Max(offset, pool->tickets[i].party + 1);

	mm_keep_plan(&party_plan,
				 "SELECT id, pg_catalog.dense_rank() OVER (ORDER BY enqueued_by, attributes OPERATOR(pg_catalog.->>) 'party') "
				 "OPERATOR(pg_catalog.-) 1 FROM matchmaker.tickets "
				 "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
				 "AND enqueued_at OPERATOR(pg_catalog.<=) $2 "
				 "AND pg_catalog.jsonb_typeof(attributes OPERATOR(pg_catalog.->) 'party') OPERATOR(pg_catalog.=) 'string'",
				 2, argtypes);
	if (SPI_execute_plan(party_plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tickets' parties");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int			i = pool_index_of(byid, pool->ntickets,
									  DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull)));

		if (i >= 0)
			pool->tickets[i].party = offset + (int32) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r],
																				   SPI_tuptable->tupdesc, 2, &isnull));
	}

	/* one row per (ticket, region), tickets in id order, regions numbered by name */
	mm_keep_plan(&ping_plan,
				 "WITH p AS (SELECT t.id, e.key AS region, "
				 "  CASE WHEN pg_catalog.jsonb_typeof(e.value) OPERATOR(pg_catalog.=) 'number' "
				 "  THEN e.value::pg_catalog.numeric END AS ms "
				 "  FROM matchmaker.tickets t, "
				 "  pg_catalog.jsonb_each(CASE WHEN pg_catalog.jsonb_typeof(t.attributes OPERATOR(pg_catalog.->) 'ping') "
				 "  OPERATOR(pg_catalog.=) 'object' THEN t.attributes OPERATOR(pg_catalog.->) 'ping' END) e "
				 "  WHERE t.queue OPERATOR(pg_catalog.=) $1 AND t.state OPERATOR(pg_catalog.=) 'waiting' "
				 "  AND t.enqueued_at OPERATOR(pg_catalog.<=) $2 "
				 "  AND t.attributes OPERATOR(pg_catalog.?) 'ping') "
				 "SELECT id, pg_catalog.dense_rank() OVER (ORDER BY region) OPERATOR(pg_catalog.-) 1, ms "
				 "FROM p ORDER BY id, 2",
				 2, argtypes);
	if (SPI_execute_plan(ping_plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the tickets' pings");
	pool->nregions = 0;
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int			region = (int) DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 2, &isnull));

		pool->nregions = Max(pool->nregions, region + 1);
	}
	if (SPI_processed == 0 || pool->nregions == 0)
		return;
	/* lists of the known pings (MMPool.ping_start): memory O(pings), not tickets x regions */
	ping_start = palloc(sizeof(int32) * ((Size) pool->ntickets + 1));
	ping_region = palloc(sizeof(int32) * (Size) SPI_processed);
	ping_ms = palloc(sizeof(float) * (Size) SPI_processed);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int			i = pool_index_of(byid, pool->ntickets, DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull)));
		int			region = (int) DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		Datum		d;
		double		ms;

		if (i < 0)
			continue;
		if (i != last_ticket)
		{
			/* a new ticket (rows come by id, then region): its own list */
			pool->tickets[i].attr = nrows;
			ping_start[nrows++] = w;
			last_ticket = i;
		}
		d = SPI_getbinval(tup, desc, 3, &isnull);
		if (isnull)
			continue;			/* not a number: unknown, as if absent */
		/* as enqueue checked it: a value below float8's least is 0 ms */
		ms = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
		ping_region[w] = region;
		ping_ms[w++] = (float) ms;
	}
	ping_start[nrows] = w;
	pool->ping_start = ping_start;
	pool->ping_region = ping_region;
	pool->ping_ms = ping_ms;
	pool->nping_rows = nrows;
}

/*
 * How far back a queue's history is read for its "auto" parameters: the
 * last 10 * max_wait, at most an hour, at least max_wait, and no further
 * back than the queue's creation when that is longer ago than max_wait.
 */
double
mm_history_window(const MMQueue *queue, TimestampTz now)
{
	double		window = Min(10 * queue->cfg.max_wait, 3600.0);
	double		age = seconds_since(now, queue->created_at);

	return Max(Min(window, age), queue->cfg.max_wait);
}

/*
 * The cluster algorithm's "auto" shift: the mean wait of the real players
 * matched within the history window, from the matches' wait costs (a
 * match's wait cost is its players' waits over max_wait, plus one per
 * computer player); 0 without history.
 */
static double
measure_mean_wait(MMQueue *queue, TimestampTz now)
{
	static SPIPlanPtr plan;
	Oid			argtypes[5] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, FLOAT8OID, INT4OID};
	Datum		values[5];
	bool		isnull;
	Datum		d;

	mm_keep_plan(&plan,
				 "SELECT pg_catalog.sum((wait_cost OPERATOR(pg_catalog.-) bots) OPERATOR(pg_catalog.*) $4) "
				 "OPERATOR(pg_catalog./) pg_catalog.sum($5 OPERATOR(pg_catalog.-) bots) "
				 "FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1 "
				 "AND created_at OPERATOR(pg_catalog.>) $2 AND created_at OPERATOR(pg_catalog.<=) $3 "
				 "AND bots OPERATOR(pg_catalog.<) $5",
				 5, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(seconds_after(-mm_history_window(queue, now), now));
	values[2] = TimestampTzGetDatum(now);
	values[3] = Float8GetDatum(queue->cfg.max_wait);
	values[4] = Int32GetDatum(mm_config_k(&queue->cfg));
	if (SPI_execute_plan(plan, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not measure the mean wait");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return 0.0;
	return Max(DatumGetFloat8(d), 0.0);
}

/*
 * The arrival rate (players per second) over the last window: players of
 * the queue's recent matches plus the waiting tickets that arrived in it.
 * The window is ten times max_wait (at most an hour), cut to the queue's
 * age so a new queue is not measured over time it did not exist, but never
 * shorter than max_wait.
 */
static double
measure_arrival_rate(MMQueue *queue, TimestampTz now, MMPool *pool)
{
	static SPIPlanPtr plan;
	Oid			argtypes[4] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID};
	Datum		values[4];
	double		window = mm_history_window(queue, now);
	int64		recent = 0;
	bool		isnull;

	mm_keep_plan(&plan,
				 "SELECT COALESCE(pg_catalog.sum($4 OPERATOR(pg_catalog.-) bots), 0)::pg_catalog.int8 "
				 "FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1 "
				 "AND created_at OPERATOR(pg_catalog.>) $2 AND created_at OPERATOR(pg_catalog.<=) $3",
				 4, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(seconds_after(-window, now));
	values[2] = TimestampTzGetDatum(now);
	values[3] = Int32GetDatum(mm_config_k(&queue->cfg));
	if (SPI_execute_plan(plan, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not measure the arrival rate");
	recent = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	for (int i = 0; i < pool->ntickets; i++)
		if (pool->tickets[i].arrival > -window)
			recent++;
	return Min(recent / window, MM_RATE_MAX);
}

/* Order doubles ascending (for qsort). */
static int
double_cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* An arrival: its time (seconds relative to now) and normalised rating. */
typedef struct Arrival
{
	double		at;
	double		rating;
} Arrival;

/* Order arrivals by time (for qsort). */
static int
arrival_cmp(const void *a, const void *b)
{
	double		x = ((const Arrival *) a)->at;
	double		y = ((const Arrival *) b)->at;

	return (x > y) - (x < y);
}

/*
 * How many of its latest arrivals auto reads for the queue's settings:
 * MM_DENSITY_ARRIVALS when it estimates where ratings lie (k = 2, the
 * rating the only criterion), else the MM_RATE_ARRIVALS of the rate.
 */
static int
recent_arrivals(const MMQueue *queue)
{
	return mm_config_k(&queue->cfg) == 2 && queue->cfg.criteria.n == 0 ?
		Max(MM_DENSITY_ARRIVALS, MM_RATE_ARRIVALS) : MM_RATE_ARRIVALS;
}

/*
 * The rate of the latest keep of n ascending arrival times (t + n - keep)
 * into cfg's arrival_rate, rate_last and rate_gaps, as mm_simulate sets
 * them.
 */
static void
set_rate(const double *t, int n, int keep, double *rate, double *last, int *gaps)
{
	*rate = mm_arrival_rate(t + n - keep, keep);
	*last = n > 0 ? t[n - 1] : NAN;
	*gaps = *rate > 0 ? keep - 1 : 0;
}

/*
 * From arrivals a[0 .. n), sorted by time: the rate over the latest
 * MM_RATE_ARRIVALS (set_rate) into cfg and, when want is more
 * than MM_RATE_ARRIVALS, the latest want ratings ascending into cfg's
 * recent (palloc'd; NULL and 0 otherwise).
 */
static void
rate_and_ratings(const Arrival *a, int n, int want, MMConfig *cfg)
{
	int			keep = Min(n, MM_RATE_ARRIVALS);
	double	   *times = palloc(sizeof(double) * Max(keep, 1));

	for (int i = 0; i < keep; i++)
		times[i] = a[n - keep + i].at;
	set_rate(times, keep, keep, &cfg->arrival_rate, &cfg->rate_last, &cfg->rate_gaps);
	pfree(times);
	cfg->recent = NULL;
	cfg->nrecent = 0;
	if (want > MM_RATE_ARRIVALS && n > 0)
	{
		int			m = Min(n, want);
		double	   *r = palloc(sizeof(double) * m);

		for (int i = 0; i < m; i++)
			r[i] = a[n - m + i].rating;
		qsort(r, m, sizeof(double), double_cmp);
		cfg->recent = r;
		cfg->nrecent = m;
	}
}

/*
 * auto's arrival rate and recent ratings: over the latest arrivals, as the
 * simulator measures them (mm_arrival_rate, MMConfig.recent).  They are
 * read from the waiting tickets and the players of the queue's last
 * matches (as many as the arrivals wanted, recent_arrivals), which hold
 * every recently matched arrival unless many matches of older players
 * came after it (the measure then reaches further back).  Cancelled and
 * expired tickets are not counted.
 */
static void
measure_recent(MMQueue *queue, TimestampTz now, MMPool *pool)
{
	static SPIPlanPtr plan;
	Oid			argtypes[3] = {TEXTOID, TIMESTAMPTZOID, INT4OID};
	Datum		values[3];
	int			want = recent_arrivals(queue);
	Arrival    *a;
	int			n = 0;

	mm_keep_plan(&plan,
				 "SELECT t.enqueued_at, t.rating FROM matchmaker.tickets t "
				 "WHERE t.match_id OPERATOR(pg_catalog.=) ANY (ARRAY("
				 "SELECT m.id FROM matchmaker.matches m WHERE m.queue OPERATOR(pg_catalog.=) $1 "
				 "AND m.created_at OPERATOR(pg_catalog.<=) $2 "
				 "ORDER BY m.created_at DESC LIMIT $3)) "
				 "ORDER BY t.enqueued_at DESC LIMIT $3",
				 3, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(want);
	if (SPI_execute_plan(plan, values, NULL, true, want) != SPI_OK_SELECT)
		elog(ERROR, "could not measure the arrival rate");

	a = palloc(sizeof(Arrival) * (SPI_processed + pool->ntickets + 1));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		bool		rnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		Datum		r = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &rnull);

		if (isnull || rnull)
			continue;
		a[n].at = seconds_since(DatumGetTimestampTz(d), now);
		a[n].rating = normalised_rating(queue, DatumGetFloat8(r));
		n++;
	}
	for (int i = 0; i < pool->ntickets; i++)
		if (pool->tickets[i].arrival <= 0)
		{
			a[n].at = pool->tickets[i].arrival;
			a[n].rating = pool->tickets[i].rating;
			n++;
		}
	qsort(a, n, sizeof(Arrival), arrival_cmp);
	rate_and_ratings(a, n, want, &queue->cfg);
	/* made once for the tick's steps and deadlines (every key's too) */
	queue->cfg.density = queue->cfg.recent != NULL ? palloc0(sizeof(MMDensity)) : NULL;
	pfree(a);
}

/* Keys measured first: more waiting tickets first, then lower keys. */
static int
waiting_desc_cmp(const void *a, const void *b, void *arg)
{
	const int  *waiting = arg;
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	if (waiting[x] != waiting[y])
		return waiting[y] - waiting[x];
	return (x > y) - (x < y);
}

/*
 * The keys measure_key_rates measures into sel (palloc'd), returning how
 * many: those with at least two waiting tickets (a sub-pool of one forms
 * no group, so its rate does not matter), at most MM_KEY_RATES_MAX, those
 * with the most waiting tickets first.
 */
static int
measured_keys(const MMPool *pool, const MMFilterDict *dict, int **sel)
{
	int		   *waiting = palloc0(sizeof(int) * dict->n);
	int			nsel = 0;

	*sel = palloc(sizeof(int) * dict->n);
	for (int i = 0; i < pool->ntickets; i++)
		waiting[pool->key[pool->tickets[i].crow]]++;
	for (int k = 0; k < dict->n; k++)
		if (waiting[k] >= 2)
			(*sel)[nsel++] = k;
	if (nsel > MM_KEY_RATES_MAX)
	{
		qsort_arg(*sel, nsel, sizeof(int), waiting_desc_cmp, waiting);
		nsel = MM_KEY_RATES_MAX;
	}
	pfree(waiting);
	return nsel;
}

/*
 * With equal filters, auto's rate of each key (pool->key_rate): as
 * measure_recent, over the latest MM_RATE_ARRIVALS arrivals of the key,
 * read from its waiting tickets and the players of the key's last matches
 * (matches.filters, an index scan per key), so a sub-pool is matched at
 * the pace of its own players, as a queue of its own would be.  The recent
 * ratings stay the queue's (measure_recent): a key's own would cost 200
 * rows a key at every tick.  Only the keys of measured_keys are measured;
 * the others use the queue's rate.
 */
static void
measure_key_rates(MMQueue *queue, TimestampTz now, MMPool *pool, const MMFilterDict *dict)
{
	static SPIPlanPtr plan;
	Oid			argtypes[4] = {TEXTOID, TEXTARRAYOID, TIMESTAMPTZOID, INT4OID};
	Datum		values[4];
	Datum	   *keys;
	int		   *count;
	bool	   *measured;
	double	   *times;
	double	   *rate = palloc(sizeof(double) * dict->n);
	double	   *rate_last = palloc(sizeof(double) * dict->n);
	int		   *rate_gaps = palloc0(sizeof(int) * dict->n);
	int			total;
	int		   *sel;
	int			nsel = measured_keys(pool, dict, &sel);

	for (int k = 0; k < dict->n; k++)
	{
		rate[k] = -1;			/* not measured: the queue's (mm_key_config) */
		rate_last[k] = NAN;
	}
	pool->key_rate = rate;
	pool->nkey_rates = dict->n;
	pool->key_rate_last = rate_last;
	pool->key_rate_gaps = rate_gaps;
	if (nsel == 0)
	{
		pfree(sel);
		return;
	}
	keys = palloc(sizeof(Datum) * nsel);
	count = palloc0(sizeof(int) * (dict->n + 1));
	measured = palloc0(sizeof(bool) * dict->n);

	mm_keep_plan(&plan,
				 "SELECT k.i::pg_catalog.int4, x.enqueued_at "
				 "FROM pg_catalog.unnest($2) WITH ORDINALITY AS k(f, i), LATERAL ("
				 "SELECT t.enqueued_at FROM matchmaker.tickets t "
				 "WHERE t.match_id OPERATOR(pg_catalog.=) ANY (ARRAY("
				 "SELECT m.id FROM matchmaker.matches m WHERE m.queue OPERATOR(pg_catalog.=) $1 "
				 "AND m.filters OPERATOR(pg_catalog.=) k.f::pg_catalog.jsonb "
				 "AND m.created_at OPERATOR(pg_catalog.<=) $3 "
				 "ORDER BY m.created_at DESC LIMIT $4)) "
				 "ORDER BY t.enqueued_at DESC LIMIT $4) x",
				 4, argtypes);
	for (int j = 0; j < nsel; j++)
	{
		keys[j] = CStringGetTextDatum(mm_filter_json(queue, dict->values[sel[j]], dict->lens[sel[j]]));
		measured[sel[j]] = true;
	}
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = PointerGetDatum(construct_array(keys, nsel, TEXTOID, -1, false, TYPALIGN_INT));
	values[2] = TimestampTzGetDatum(now);
	values[3] = Int32GetDatum(MM_RATE_ARRIVALS);
	if (SPI_execute_plan(plan, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not measure the arrival rates of the queue's filter values");

	/* each measured key's arrival times, grouped: history rows, then its waiting tickets */
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int32		k = sel[DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull)) - 1];

		count[k + 1]++;
	}
	for (int i = 0; i < pool->ntickets; i++)
		if (pool->tickets[i].arrival <= 0 && measured[pool->key[pool->tickets[i].crow]])
			count[pool->key[pool->tickets[i].crow] + 1]++;
	for (int k = 0; k < dict->n; k++)
		count[k + 1] += count[k];
	total = count[dict->n];
	times = palloc(sizeof(double) * Max(total, 1));
	{
		int		   *at = palloc(sizeof(int) * dict->n);

		memcpy(at, count, sizeof(int) * dict->n);
		for (uint64 r = 0; r < SPI_processed; r++)
		{
			bool		isnull;
			HeapTuple	tup = SPI_tuptable->vals[r];
			int32		k = sel[DatumGetInt32(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull)) - 1];
			Datum		d = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull);

			times[at[k]++] = seconds_since(DatumGetTimestampTz(d), now);
		}
		for (int i = 0; i < pool->ntickets; i++)
			if (pool->tickets[i].arrival <= 0 && measured[pool->key[pool->tickets[i].crow]])
				times[at[pool->key[pool->tickets[i].crow]]++] = pool->tickets[i].arrival;
		pfree(at);
	}
	/* each key's rate over its latest MM_RATE_ARRIVALS, as mm_arrival_rate measures it */
	for (int j = 0; j < nsel; j++)
	{
		int			k = sel[j];
		double	   *kt = times + count[k];
		int			n = count[k + 1] - count[k];
		int			keep = Min(n, MM_RATE_ARRIVALS);

		qsort(kt, n, sizeof(double), double_cmp);
		set_rate(kt, n, keep, &rate[k], &rate_last[k], &rate_gaps[k]);
	}
	SPI_freetuptable(SPI_tuptable);
	pfree(times);
	pfree(count);
	pfree(measured);
	pfree(keys);
	pfree(sel);
}

/*
 * Load difference_wait's provisional groups into the pool.  A group whose
 * members are not all waiting any more (cancelled) or whose size is no
 * longer k is dissolved: its members wait
 * ungrouped and the step regroups them.
 */
static void
load_groups(MMQueue *queue, TimestampTz now, MMPool *pool)
{
	static SPIPlanPtr plan;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int64	   *byid;				/* (id, pool index) pairs sorted by id */
	int			k = mm_config_k(&queue->cfg);

	pool->ngroups = 0;
	pool->ngroups_cap = Max(pool->ntickets, 1);
	pool->groups = palloc(sizeof(MMGroup) * pool->ngroups_cap);

	mm_keep_plan(&plan,
				 "SELECT tickets, formed_at, finalize_at FROM matchmaker.provisional_groups "
				 "WHERE queue OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	if (SPI_execute_plan(plan, values, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not load provisional groups");
	if (SPI_processed == 0 || pool->ntickets == 0)
		return;

	byid = pool_by_id(pool);

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		ArrayType  *arr = DatumGetArrayTypeP(SPI_getbinval(tup, desc, 1, &isnull));
		Datum	   *ids;
		int			nids;
		int		   *members = palloc(sizeof(int) * Max(k, 1));
		bool		complete;
		MMGroup    *g;

		deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &ids, NULL, &nids);
		complete = (nids == k);
		for (int m = 0; complete && m < nids; m++)
		{
			int			hit = pool_index_of(byid, pool->ntickets, DatumGetInt64(ids[m]));

			if (hit < 0 || pool->tickets[hit].group != -1)
				complete = false;
			else
				members[m] = hit;
		}
		if (!complete)
			continue;

		g = &pool->groups[pool->ngroups];
		/* the step takes the spread from the members' ratings: the stored q is for operators */
		g->q = 0.0;
		g->formed_at = seconds_since(DatumGetTimestampTz(SPI_getbinval(tup, desc, 2, &isnull)), now);
		g->finalize_at = seconds_since(DatumGetTimestampTz(SPI_getbinval(tup, desc, 3, &isnull)), now);
		for (int m = 0; m < nids; m++)
			pool->tickets[members[m]].group = pool->ngroups;
		pool->ngroups++;
	}
}

/*
 * A one-dimensional SQL array from n C values: int64 for INT8OID, int for
 * INT4OID, double for FLOAT8OID, and for TIMESTAMPTZOID doubles that are
 * seconds relative to now.
 */
static Datum
sql_array(Oid elemtype, const void *v, int n, TimestampTz now)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	ArrayType  *a;

	for (int i = 0; i < n; i++)
	{
		switch (elemtype)
		{
			case INT8OID:
				d[i] = Int64GetDatum(((const int64 *) v)[i]);
				break;
			case INT4OID:
				d[i] = Int32GetDatum(((const int *) v)[i]);
				break;
			case FLOAT8OID:
				d[i] = Float8GetDatum(((const double *) v)[i]);
				break;
			case TIMESTAMPTZOID:
				d[i] = TimestampTzGetDatum(seconds_after(((const double *) v)[i], now));
				break;
			default:
				elog(ERROR, "no array of type %u", elemtype);
		}
	}
	if (elemtype == INT4OID)
		a = construct_array(d, n, elemtype, 4, true, TYPALIGN_INT);
	else
		a = construct_array(d, n, elemtype, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	pfree(d);
	return PointerGetDatum(a);
}

/* Run a kept plan that must succeed with the given SPI result code. */
static void
run_plan(SPIPlanPtr plan, Datum *values, int expect, const char *what)
{
	if (SPI_execute_plan(plan, values, NULL, false, 0) != expect)
		elog(ERROR, "could not %s", what);
}

/* The same for a statement by arrays of ids or ctids (see mm_execute_by_key). */
static void
run_by_key(SPIPlanPtr plan, Datum *values, int expect, const char *what)
{
	if (mm_execute_by_key(plan, values) != expect)
		elog(ERROR, "could not %s", what);
}

/*
 * Take n match ids, in order, from the matches' sequence: nextval's own
 * code and permission check, without a statement per tick.
 */
static int64 *
next_match_ids(int n)
{
	Oid			seq = RangeVarGetRelid(makeRangeVar("matchmaker", "matches_id_seq", -1), NoLock, false);
	int64	   *ids = palloc(sizeof(int64) * Max(n, 1));

	for (int j = 0; j < n; j++)
		ids[j] = nextval_internal(seq, true);
	return ids;
}

/*
 * Insert the step's match rows, with the ids match_ids: into matches, or
 * with accept_by (not 0) into proposals, awaiting their ready checks.
 */
static void
insert_matches(MMQueue *queue, TimestampTz now, MMResult *res, const int64 *match_ids,
			   TimestampTz accept_by, char **filters, char **relaxed)
{
	static SPIPlanPtr plans[3];
	Oid			argtypes[10] = {TEXTOID, TIMESTAMPTZOID, INT8ARRAYOID, INT4ARRAYOID,
	FLOAT8ARRAYOID, FLOAT8ARRAYOID, FLOAT8ARRAYOID, TIMESTAMPTZOID, TEXTARRAYOID, TEXTARRAYOID};
	Datum		values[10];
	char		nulls[10] = "          ";
	int			nm = res->nmatches;
	int		   *bots = palloc(sizeof(int) * Max(nm, 1));
	double	   *cost = palloc(sizeof(double) * Max(nm, 1));
	double	   *criteria = palloc(sizeof(double) * Max(nm, 1));
	double	   *wait = palloc(sizeof(double) * Max(nm, 1));
	bool		proposed = accept_by != 0;
	/* matches.filters is there from 0.3.0 on, as proposals (ready checks) are */
	int			which = proposed ? 1 : mm_ready_available() ? 0 : 2;

	for (int j = 0; j < nm; j++)
	{
		bots[j] = res->matches[j].bots;
		cost[j] = res->matches[j].cost.total;
		criteria[j] = res->matches[j].cost.criteria;
		wait[j] = res->matches[j].cost.wait;
	}
	if (proposed)
		mm_keep_generic_plan(&plans[1],
					 "INSERT INTO matchmaker.proposals (id, queue, created_at, bots, cost, criteria_cost, wait_cost, accept_by, filters, relaxed) "
					 "SELECT m.id, $1, $2, m.bots, m.cost, m.criteria_cost, m.wait_cost, $8, m.filters::pg_catalog.jsonb, "
					 "CASE WHEN m.relaxed IS NOT NULL THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(m.relaxed::pg_catalog.jsonb)) END "
					 "FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
					 "pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($9), pg_catalog.unnest($10)) "
					 "AS m(id, bots, cost, criteria_cost, wait_cost, filters, relaxed)",
					 10, argtypes);
	else if (which == 0)
		mm_keep_generic_plan(&plans[0],
					 "INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost, filters, relaxed) "
					 "SELECT m.id, $1, $2, m.bots, m.cost, m.criteria_cost, m.wait_cost, m.filters::pg_catalog.jsonb, "
					 "CASE WHEN m.relaxed IS NOT NULL THEN ARRAY(SELECT pg_catalog.jsonb_array_elements_text(m.relaxed::pg_catalog.jsonb)) END "
					 "FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
					 "pg_catalog.unnest($6), pg_catalog.unnest($7), pg_catalog.unnest($9), pg_catalog.unnest($10)) "
					 "AS m(id, bots, cost, criteria_cost, wait_cost, filters, relaxed)",
					 10, argtypes);
	else
		mm_keep_generic_plan(&plans[2],
					 "INSERT INTO matchmaker.matches (id, queue, created_at, bots, cost, criteria_cost, wait_cost) "
					 "SELECT m.id, $1, $2, m.bots, m.cost, m.criteria_cost, m.wait_cost "
					 "FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4), pg_catalog.unnest($5), "
					 "pg_catalog.unnest($6), pg_catalog.unnest($7)) AS m(id, bots, cost, criteria_cost, wait_cost)",
					 7, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	values[2] = sql_array(INT8OID, match_ids, nm, 0);
	values[3] = sql_array(INT4OID, bots, nm, 0);
	values[4] = sql_array(FLOAT8OID, cost, nm, 0);
	values[5] = sql_array(FLOAT8OID, criteria, nm, 0);
	values[6] = sql_array(FLOAT8OID, wait, nm, 0);
	values[7] = TimestampTzGetDatum(accept_by);
	/* without filters the column is null (ROWS FROM pads the empty unnest) */
	if (filters == NULL)
	{
		values[8] = (Datum) 0;
		nulls[8] = 'n';
	}
	else
	{
		Datum	   *d = palloc(sizeof(Datum) * Max(nm, 1));

		/* a key's matches come together and share its string: one text each */
		for (int j = 0; j < nm; j++)
			d[j] = j > 0 && filters[j] == filters[j - 1] ? d[j - 1] : CStringGetTextDatum(filters[j]);
		values[8] = PointerGetDatum(construct_array(d, nm, TEXTOID, -1, false, TYPALIGN_INT));
	}
	/* the filters each match's players waived, null for none */
	if (relaxed == NULL)
	{
		values[9] = (Datum) 0;
		nulls[9] = 'n';
	}
	else
	{
		Datum	   *d = palloc(sizeof(Datum) * Max(nm, 1));
		bool	   *dn = palloc(sizeof(bool) * Max(nm, 1));
		int			dims[1] = {nm};
		int			lbs[1] = {1};

		for (int j = 0; j < nm; j++)
		{
			dn[j] = relaxed[j] == NULL;
			d[j] = dn[j] ? (Datum) 0 : CStringGetTextDatum(relaxed[j]);
		}
		values[9] = PointerGetDatum(construct_md_array(d, dn, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT));
	}
	if (SPI_execute_plan(plans[which], values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not insert matches");
	/* the match rows are written: free their columns before the next statement */
	for (int i = 2; i < 7; i++)
		pfree(DatumGetPointer(values[i]));
	pfree(bots);
	pfree(cost);
	pfree(criteria);
	pfree(wait);
}

/*
 * mark_matched through tick_rows.c, the members' map entries at[0 .. n):
 * false, with nothing written, when mm_ticket_rows_open refused (a
 * statement must do it).  role_values: the members' roles (text), or NULL.
 *
 * match_of NULL: the members are locked.  Else they are not (see
 * mark_unlocked), match_of[i] is the match of member i, and each is updated
 * only when it still waits and nobody holds it; a match with a member that
 * could not be is broken[match], its members already updated written back
 * as they were (they wait for a later tick).
 */
static bool
mark_matched_rows(TimestampTz now, TidPair *const *at, const int64 *ids, const int64 *match,
				  const int *teams, int n, bool proposed, const Datum *role_values,
				  const int *match_of, bool *broken)
{
	static const char *const columns[] = {"state", "matched_at", "match_id", "team", "role"};
	MMTicketRows *rows;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, role_values == NULL};
	int		   *order;
	ItemPointerData *read_at = NULL;
	bool	   *updated = NULL;
	bool		any_broken = false;

	rows = mm_ticket_rows_open(columns, role_values != NULL ? 5 : 4);
	if (rows == NULL)
		return false;
	if (match_of != NULL)
	{
		read_at = palloc(sizeof(ItemPointerData) * Max(n, 1));
		updated = palloc0(sizeof(bool) * Max(n, 1));
	}
	values[0] = CStringGetTextDatum(proposed ? "proposed" : "matched");
	values[1] = TimestampTzGetDatum(now);
	order = tids_order(at, n);
	for (int k = 0; k < n; k++)
	{
		int			i = order[k];

		values[2] = Int64GetDatum(match[i]);
		values[3] = Int32GetDatum(teams[i]);
		if (role_values != NULL)
			values[4] = role_values[i];
		if (match_of == NULL)
			mm_ticket_rows_update(rows, &at[i]->tid, ids[i], values, nulls);
		else if (!broken[match_of[i]])
		{
			read_at[i] = at[i]->tid;
			updated[i] = mm_ticket_rows_try_update(rows, &at[i]->tid, ids[i], values, nulls);
			if (!updated[i])
				broken[match_of[i]] = any_broken = true;
		}
	}
	if (any_broken)
	{
		/* an undo updates a version this command wrote */
		CommandCounterIncrement();
		for (int k = 0; k < n; k++)
		{
			int			i = order[k];

			if (updated[i] && broken[match_of[i]])
				mm_ticket_rows_undo(rows, &read_at[i], &at[i]->tid, ids[i]);
		}
	}
	mm_ticket_rows_close(rows);
	pfree(order);
	if (match_of != NULL)
	{
		pfree(read_at);
		pfree(updated);
	}
	return true;
}

/*
 * The members' ticket ids and, when match_out is not NULL, their match ids
 * (from match_ids), in the order of res->members.
 */
static void
member_arrays(MMPool *pool, MMResult *res, const int64 *match_ids, int64 **ids_out,
			  int64 **match_out, int *n_out)
{
	int			n = 0;
	int64	   *ids;
	int64	   *match = NULL;

	for (int j = 0; j < res->nmatches; j++)
		n += res->matches[j].nmembers;
	ids = palloc(sizeof(int64) * Max(n, 1));
	if (match_out != NULL)
		match = palloc(sizeof(int64) * Max(n, 1));
	for (int j = 0; j < res->nmatches; j++)
		for (int m = 0; m < res->matches[j].nmembers; m++)
		{
			int			slot = res->matches[j].first + m;

			ids[slot] = pool->tickets[res->members[slot]].id;
			if (match != NULL)
				match[slot] = match_ids[j];
		}
	*ids_out = ids;
	if (match_out != NULL)
		*match_out = match;
	*n_out = n;
}

/* The text datums of the members' roles (indices into queue's roles), or NULL without roles. */
static Datum *
role_datums(MMQueue *queue, const int *roles, int n)
{
	Datum	   *names;

	if (roles == NULL)
		return NULL;
	names = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
		names[i] = CStringGetTextDatum(queue->criteria.role[roles[i]]);
	return names;
}

/*
 * Mark the matches' members matched (proposed, when their matches await
 * ready checks), with their match and team, and with roles (indices into
 * the queue's, per member, or NULL) their roles; the members are locked.
 * Returns the members' ticket ids, in the order of res->members.
 */
static int64 *
mark_matched(TimestampTz now, MMQueue *queue, MMPool *pool, MMResult *res,
			 const int64 *match_ids, bool proposed, const int *roles)
{
	static SPIPlanPtr plan[2];
	static SPIPlanPtr role_plan[2];
	Oid			argtypes[6] = {TIMESTAMPTZOID, INT8ARRAYOID, INT8ARRAYOID, INT4ARRAYOID, TEXTOID,
	TEXTARRAYOID};
	Datum		values[6];
	bool		by_tid;
	int			nmembers;
	int64	   *member_ids;
	int64	   *member_match;
	Datum	   *role_values;
	TidPair   **at;

	member_arrays(pool, res, match_ids, &member_ids, &member_match, &nmembers);
	role_values = role_datums(queue, roles, nmembers);

	/* by address without a statement, when it can be */
	if ((at = tids_lookup(member_ids, nmembers)) != NULL)
	{
		bool		done = mark_matched_rows(now, at, member_ids, member_match, res->teams, nmembers,
											 proposed, role_values, NULL, NULL);

		pfree(at);
		if (done)
		{
			pfree(member_match);
			return member_ids;
		}
	}

	/*
	 * Else by a statement: by ctid (see TidMap), else by id; never by a
	 * scan of the table (mm_execute_by_key).
	 */
	values[1] = tids_of(member_ids, nmembers);
	by_tid = values[1] != (Datum) 0;
	if (by_tid)
		argtypes[1] = TIDARRAYOID;
	else
		values[1] = sql_array(INT8OID, member_ids, nmembers, 0);
	if (roles != NULL)
		mm_keep_generic_plan(&role_plan[by_tid],
							 psprintf("UPDATE matchmaker.tickets AS t SET state = $5, matched_at = $1, "
									  "match_id = u.match_id, team = u.team, role = u.role "
									  "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4), "
									  "pg_catalog.unnest($6)) AS u(id, match_id, team, role) "
									  "WHERE t.%s OPERATOR(pg_catalog.=) u.id AND t.%s OPERATOR(pg_catalog.=) ANY ($2)",
									  by_tid ? "ctid" : "id", by_tid ? "ctid" : "id"),
							 6, argtypes);
	else
		mm_keep_generic_plan(&plan[by_tid],
							 psprintf("UPDATE matchmaker.tickets AS t SET state = $5, matched_at = $1, "
									  "match_id = u.match_id, team = u.team "
									  "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3), pg_catalog.unnest($4)) AS u(id, match_id, team) "
									  "WHERE t.%s OPERATOR(pg_catalog.=) u.id AND t.%s OPERATOR(pg_catalog.=) ANY ($2)",
									  by_tid ? "ctid" : "id", by_tid ? "ctid" : "id"),
							 5, argtypes);
	values[0] = TimestampTzGetDatum(now);
	values[2] = sql_array(INT8OID, member_match, nmembers, 0);
	values[3] = sql_array(INT4OID, res->teams, nmembers, 0);
	values[4] = CStringGetTextDatum(proposed ? "proposed" : "matched");
	values[5] = roles != NULL ?
		PointerGetDatum(construct_array(role_values, nmembers, TEXTOID, -1, false, TYPALIGN_INT)) :
		(Datum) 0;
	run_by_key(roles != NULL ? role_plan[by_tid] : plan[by_tid], values, SPI_OK_UPDATE, "mark matched tickets");
	if (SPI_processed != (uint64) nmembers)
		elog(ERROR, "marked %llu tickets matched, expected %d",
			 (unsigned long long) SPI_processed, nmembers);
	for (int i = 1; i < 4; i++)
		pfree(DatumGetPointer(values[i]));
	pfree(member_match);
	return member_ids;
}

/*
 * Keep in res only the matches j with keep[j], their members and teams,
 * and in parallel their match_ids[j] and their members' roles (when not
 * NULL).  Dropping one voids the step's next deadline (res->deadline):
 * its players wait on.
 */
static void
keep_matches(MMResult *res, const bool *keep, int64 *match_ids, int *roles)
{
	int			nm = 0;
	int			slot = 0;

	for (int j = 0; j < res->nmatches; j++)
	{
		MMMatch		match = res->matches[j];

		if (!keep[j])
			continue;
		for (int m = 0; m < match.nmembers; m++)
		{
			res->members[slot + m] = res->members[match.first + m];
			res->teams[slot + m] = res->teams[match.first + m];
			if (roles != NULL)
				roles[slot + m] = roles[match.first + m];
		}
		match.first = slot;
		slot += match.nmembers;
		if (match_ids != NULL)
			match_ids[nm] = match_ids[j];
		res->matches[nm++] = match;
	}
	if (nm < res->nmatches)
		res->deadline = NAN;
	res->nmatches = nm;
}

/*
 * Whether the transaction may take one more subtransaction id for
 * mark_unlocked: so that a transaction of many ticks does not overflow its
 * cache of them (which slows every snapshot of the server), not when it
 * has half as many as the cache holds (PGPROC_MAX_CACHED_SUBXIDS).
 */
static bool
subtransactions_left(void)
{
	return !MyProc->subxidStatus.overflowed &&
		MyProc->subxidStatus.count < PGPROC_MAX_CACHED_SUBXIDS / 2;
}

/*
 * When every member of res's matches was read by this tick and
 * matchmaker.tickets takes writes without statements (tick_rows.c), check
 * the members without locking them (mm_ticket_rows_check: still waiting,
 * held by no other transaction), those that fail to missing, and return
 * true: mark_unlocked then writes them.  Else false, nothing checked: the
 * members are to be locked.
 */
static bool
check_members(MMPool *pool, MMResult *res, IdList *missing)
{
	MMTicketRows *rows;
	int			n;
	int64	   *ids;
	TidPair   **at;
	int		   *order;

	member_arrays(pool, res, NULL, &ids, NULL, &n);
	if ((at = tids_lookup(ids, n)) == NULL || (rows = mm_ticket_rows_open(NULL, 0)) == NULL)
	{
		if (at != NULL)
			pfree(at);
		pfree(ids);
		return false;
	}
	order = tids_order(at, n);
	for (int k = 0; k < n; k++)
		if (!mm_ticket_rows_check(rows, &at[order[k]]->tid, ids[order[k]]))
			idlist_add(missing, ids[order[k]], NULL);
	mm_ticket_rows_close(rows);
	pfree(order);
	pfree(at);
	pfree(ids);
	return true;
}

/* mark_matched_rows's arguments, for mark_call. */
typedef struct MarkArgs
{
	TimestampTz now;
	TidPair   **at;
	int64	   *ids;
	int64	   *match;
	int		   *teams;
	int			n;
	bool		proposed;
	Datum	   *role_values;
	int		   *match_of;
	bool	   *broken;
	bool		done;			/* its result */
} MarkArgs;

/* mark_matched_rows unlocked, its waits bounded (see mark_unlocked); run in a subtransaction. */
static void
mark_call(void *arg)
{
	MarkArgs   *a = arg;
	int			level = NewGUCNestLevel();
	int			wait = Max(Min(MM_UNLOCKED_WAIT_MS, DeadlockTimeout / 2), 1);

	if (LockTimeout == 0 || LockTimeout > wait)
		(void) set_config_option("lock_timeout", psprintf("%d", wait),
								 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	a->done = mark_matched_rows(a->now, a->at, a->ids, a->match, a->teams, a->n, a->proposed,
								a->role_values, a->match_of, a->broken);
	AtEOXact_GUC(true, level);
}

/*
 * Mark the matches' members matched as mark_matched does, the members not
 * locked before: each is updated only when it still waits and no other
 * transaction holds it (as FOR UPDATE SKIP LOCKED and the UPDATE would,
 * in one pass, without the lock's own write).  A match with a member that
 * could not be is dropped from res (with its match_ids and roles), its
 * members already updated written back as they were: they wait for a
 * later tick.
 *
 * A transaction can still take a ticket in the instant between the check
 * and the update; the update then waits for it, at most
 * MM_UNLOCKED_WAIT_MS (lock_timeout, within a subtransaction of the
 * tick): past that, or when that transaction waits in turn for a ticket
 * updated here (a deadlock the tick detects), the subtransaction is
 * rolled back and false returned, nothing written, as when tick_rows.c
 * refuses the table; the caller then locks the members first.  The
 * subtransaction takes an XID of its own (see subtransactions_left).
 */
static bool
mark_unlocked(TimestampTz now, MMQueue *queue, MMPool *pool, MMResult *res, int64 *match_ids,
			  bool proposed, int *roles)
{
	MarkArgs	args;
	ErrorData  *failure;
	int			nmembers;
	int64	   *ids;
	int64	   *match;
	int		   *match_of;
	bool	   *broken;
	bool	   *keep;
	Datum	   *role_values;
	TidPair   **at;
	ItemPointerData *read_at;
	bool		done;

	member_arrays(pool, res, match_ids, &ids, &match, &nmembers);
	if ((at = tids_lookup(ids, nmembers)) == NULL)
		return false;
	role_values = role_datums(queue, roles, nmembers);
	match_of = palloc(sizeof(int) * Max(nmembers, 1));
	for (int j = 0; j < res->nmatches; j++)
		for (int m = 0; m < res->matches[j].nmembers; m++)
			match_of[res->matches[j].first + m] = j;
	broken = palloc0(sizeof(bool) * Max(res->nmatches, 1));
	/* the addresses read, for a rollback */
	read_at = palloc(sizeof(ItemPointerData) * Max(nmembers, 1));
	for (int i = 0; i < nmembers; i++)
		read_at[i] = at[i]->tid;

	args.now = now;
	args.at = at;
	args.ids = ids;
	args.match = match;
	args.teams = res->teams;
	args.n = nmembers;
	args.proposed = proposed;
	args.role_values = role_values;
	args.match_of = match_of;
	args.broken = broken;
	args.done = false;
	failure = mm_in_subtransaction(mark_call, &args);
	done = args.done;
	if (failure != NULL)
	{
		if (failure->sqlerrcode != ERRCODE_LOCK_NOT_AVAILABLE &&
			failure->sqlerrcode != ERRCODE_T_R_DEADLOCK_DETECTED)
			ReThrowError(failure);
		FreeErrorData(failure);
		done = false;
	}

	if (!done)
	{
		/* nothing written: the tickets are where the tick read them */
		for (int i = 0; i < nmembers; i++)
			at[i]->tid = read_at[i];
	}
	else
	{
		keep = palloc(sizeof(bool) * Max(res->nmatches, 1));
		for (int j = 0; j < res->nmatches; j++)
			keep[j] = !broken[j];
		keep_matches(res, keep, match_ids, roles);
		pfree(keep);
	}
	pfree(read_at);
	pfree(broken);
	pfree(match_of);
	pfree(at);
	pfree(ids);
	pfree(match);
	return done;
}

/*
 * One event per match, sent when the transaction commits:
 * {"event": "matched", "queue": q, "match": id, "tickets": [...]}, or
 * "proposed" with "accept_by" when the match awaits its ready check; with
 * filters (params.filters), "filters": the values its players share, and
 * "relaxed": the filters some of them waived (optional_after), if any.
 */
static void
notify_matches(MMQueue *queue, MMResult *res, const int64 *match_ids, const int64 *member_ids,
			   TimestampTz accept_by, char **filters, char **relaxed, const int *roles)
{
	StringInfoData payload;
	char		when[MAXDATELEN + 1];
	int			utc = 0;

	initStringInfo(&payload);
	/* in UTC, whatever the session's time zone */
	if (accept_by != 0)
		JsonEncodeDateTime(when, TimestampTzGetDatum(accept_by), TIMESTAMPTZOID, &utc);
	for (int j = 0; j < res->nmatches; j++)
	{
		int			head;

		mm_event_start(&payload, accept_by != 0 ? "proposed" : "matched", queue->name);
		appendStringInfo(&payload, ", \"match\": " INT64_FORMAT, match_ids[j]);
		if (accept_by != 0)
			appendStringInfo(&payload, ", \"accept_by\": \"%s\"", when);
		head = payload.len;
		mm_event_ids(&payload, "tickets", member_ids + res->matches[j].first,
					 res->matches[j].nmembers);
		if (roles != NULL)
		{
			appendStringInfoString(&payload, ", \"roles\": [");
			for (int i = 0; i < res->matches[j].nmembers; i++)
			{
				if (i > 0)
					appendStringInfoString(&payload, ", ");
				escape_json(&payload, queue->criteria.role[roles[res->matches[j].first + i]]);
			}
			appendStringInfoChar(&payload, ']');
		}
		if (filters != NULL)
			appendStringInfo(&payload, ", \"filters\": %s", filters[j]);
		if (relaxed != NULL && relaxed[j] != NULL)
			appendStringInfo(&payload, ", \"relaxed\": %s", relaxed[j]);
		mm_event_finish(&payload, head, queue->channel);
	}
}

static int64 *lock_tickets(const int64 *ids, int n, int *nlocked);
static void keep_locked_matches(MMPool *pool, MMResult *res, const int64 *locked, int nlocked,
								int64 *match_ids, int *roles);

/*
 * Write the matches of a step: match rows with ids taken in order from the
 * sequence (proposals, when the queue has ready checks), the members'
 * ticket rows, and one event per match.
 */
static void
write_matches(MMQueue *queue, TimestampTz now, MMPool *pool, MMResult *res,
			  const MMFilterDict *dict, bool unlocked)
{
	int64	   *match_ids;
	int64	   *member_ids;
	TimestampTz accept_by = 0;
	char	  **filters = NULL;
	char	  **relaxed = NULL;
	int		   *roles = NULL;

	if (res->nmatches == 0)
		return;
	if (queue->cfg.accept_timeout > 0)
	{
		mm_ready_require(queue);
		accept_by = seconds_after(queue->cfg.accept_timeout, now);
		if (!IS_VALID_TIMESTAMP(accept_by))
			accept_by = END_TIMESTAMP - 1;
	}
	/* with roles, each player's: the teams the step formed can take them */
	if (queue->cfg.roles.n > 0)
	{
		int			nmembers = 0;

		for (int j = 0; j < res->nmatches; j++)
			nmembers += res->matches[j].nmembers;
		roles = palloc(sizeof(int) * Max(nmembers, 1));
		if (mm_assign_roles(&queue->cfg, pool, res, roles) != MM_OK)
			elog(ERROR, "could not give the players of queue \"%s\" their roles", queue->name);
	}
	match_ids = next_match_ids(res->nmatches);

	/*
	 * Not locked before (unlocked), the members' rows first: the matches
	 * whose members cannot all be written are dropped here
	 * (mark_unlocked; the tickets table has no trigger then, so no foreign
	 * key to the matches).  When that cannot run, the members are locked
	 * now and the matches of those that cannot be are dropped
	 * (keep_locked_matches; the expiries stand, their tickets locked).
	 */
	if (unlocked && !mark_unlocked(now, queue, pool, res, match_ids, accept_by != 0, roles))
	{
		int64	   *ids;
		int64	   *locked;
		int			n;
		int			nlocked;

		member_arrays(pool, res, NULL, &ids, NULL, &n);
		locked = lock_tickets(ids, n, &nlocked);
		keep_locked_matches(pool, res, locked, nlocked, match_ids, roles);
		pfree(ids);
		if (locked != NULL)
			pfree(locked);
		unlocked = false;
	}
	if (res->nmatches == 0)
		return;

	/* with filters, each match's values: those of its first member (all agree) */
	if (queue->criteria.nfilters > 0)
	{
		char	  **of_key = palloc0(sizeof(char *) * Max(dict->n, 1));

		filters = palloc(sizeof(char *) * res->nmatches);
		for (int j = 0; j < res->nmatches; j++)
		{
			int32		key = pool->key[pool->tickets[res->members[res->matches[j].first]].crow];

			if (of_key[key] == NULL)
				of_key[key] = mm_filter_json(queue, dict->values[key], dict->lens[key]);
			filters[j] = of_key[key];
		}
	}
	/* with filters that relax, those each match's players waived (the events carry them before 0.3.0's column) */
	if (queue->criteria.any_relax)
	{
		relaxed = palloc(sizeof(char *) * res->nmatches);
		for (int j = 0; j < res->nmatches; j++)
		{
			const MMMatch *m = &res->matches[j];
			int32		key = pool->key[pool->tickets[res->members[m->first]].crow];
			uint32		mask = 0;

			for (int i = 0; i < m->nmembers; i++)
				mask |= mm_filter_waived(pool, pool->tickets[res->members[m->first + i]].crow, key);
			relaxed[j] = mm_filter_mask_array(queue, mask);
		}
	}
	/* without ready checks and filters, in batches without a statement when it can be (tick_rows.c) */
	if (accept_by != 0 || filters != NULL || relaxed != NULL ||
		!mm_match_rows_insert(queue->name, now, res, match_ids))
		insert_matches(queue, now, res, match_ids, accept_by, filters, relaxed);
	/* locked, the members' rows after the matches' (as a foreign key to them would need) */
	if (unlocked)
	{
		int			n;

		member_arrays(pool, res, NULL, &member_ids, NULL, &n);
	}
	else
		member_ids = mark_matched(now, queue, pool, res, match_ids, accept_by != 0, roles);
	notify_matches(queue, res, match_ids, member_ids, accept_by, filters, relaxed, roles);
}

/*
 * End the tickets the step expired, each with its event:
 * {"event": "expired", "queue": q, "ticket": id}.
 */
static void
write_expired(MMQueue *queue, TimestampTz now, MMPool *pool, MMResult *res)
{
	static SPIPlanPtr plan;
	StringInfoData payload;
	Oid			argtypes[2] = {TIMESTAMPTZOID, INT8ARRAYOID};
	Datum		values[2];
	int64	   *ids;

	if (res->nexpired == 0)
		return;
	ids = palloc(sizeof(int64) * res->nexpired);
	for (int i = 0; i < res->nexpired; i++)
		ids[i] = pool->tickets[res->expired[i]].id;
	mm_keep_generic_plan(&plan,
				 "UPDATE matchmaker.tickets SET state = 'expired', ended_at = $1 "
				 "WHERE id OPERATOR(pg_catalog.=) ANY ($2)",
				 2, argtypes);
	values[0] = TimestampTzGetDatum(now);
	values[1] = sql_array(INT8OID, ids, res->nexpired, 0);
	run_by_key(plan, values, SPI_OK_UPDATE, "mark expired tickets");
	if (SPI_processed != (uint64) res->nexpired)
		elog(ERROR, "marked %llu tickets expired, expected %d",
			 (unsigned long long) SPI_processed, res->nexpired);
	initStringInfo(&payload);
	for (int i = 0; i < res->nexpired; i++)
	{
		mm_event_start(&payload, "expired", queue->name);
		appendStringInfo(&payload, ", \"ticket\": " INT64_FORMAT, ids[i]);
		mm_event_finish(&payload, payload.len, queue->channel);
	}
}

/*
 * Replace the queue's provisional groups with those the step left.  The
 * members of group g are the pool tickets whose group field is g.
 */
static void
write_groups(MMQueue *queue, TimestampTz now, MMPool *pool)
{
	static SPIPlanPtr delete_plan;
	static SPIPlanPtr insert_plan;
	Oid			argtypes[6] = {TEXTOID, INT8ARRAYOID, INT4OID, FLOAT8ARRAYOID,
	TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID};
	Datum		values[6];
	int			k = mm_config_k(&queue->cfg);
	int			ng = pool->ngroups;
	int64	   *ids;
	int		   *fill;
	double	   *q;
	double	   *formed;
	double	   *finalize;

	mm_keep_plan(&delete_plan,
				 "DELETE FROM matchmaker.provisional_groups WHERE queue OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	run_plan(delete_plan, values, SPI_OK_DELETE, "clear provisional groups");
	if (ng == 0)
		return;

	ids = palloc0(sizeof(int64) * ng * k);
	fill = palloc0(sizeof(int) * ng);
	q = palloc(sizeof(double) * ng);
	formed = palloc(sizeof(double) * ng);
	finalize = palloc(sizeof(double) * ng);
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			g = pool->tickets[i].group;

		if (g < 0)
			continue;
		if (g >= ng || fill[g] >= k)
			elog(ERROR, "provisional group %d is inconsistent", g);
		ids[(int64) g * k + fill[g]++] = pool->tickets[i].id;
	}
	for (int g = 0; g < ng; g++)
	{
		if (fill[g] != k)
			elog(ERROR, "provisional group %d has %d members, expected %d", g, fill[g], k);
		q[g] = pool->groups[g].q;
		formed[g] = pool->groups[g].formed_at;
		finalize[g] = pool->groups[g].finalize_at;
	}

	mm_keep_plan(&insert_plan,
				 "INSERT INTO matchmaker.provisional_groups (queue, tickets, q, formed_at, finalize_at) "
				 "SELECT $1, $2[(g.n OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.*) $3 OPERATOR(pg_catalog.+) 1 : "
				 "g.n OPERATOR(pg_catalog.*) $3], $4[g.n], $5[g.n], $6[g.n] "
				 "FROM pg_catalog.generate_series(1, pg_catalog.cardinality($4)) AS g(n)",
				 6, argtypes);
	values[1] = sql_array(INT8OID, ids, ng * k, 0);
	values[2] = Int32GetDatum(k);
	values[3] = sql_array(FLOAT8OID, q, ng, 0);
	values[4] = sql_array(TIMESTAMPTZOID, formed, ng, now);
	values[5] = sql_array(TIMESTAMPTZOID, finalize, ng, now);
	run_plan(insert_plan, values, SPI_OK_INSERT, "store provisional groups");
}

/*
 * Whether matchmaker.tickets has the column end_reason (0.3.0 on): until
 * ALTER EXTENSION matchmaker UPDATE, a tick cannot end an invalid ticket
 * and raises the old error instead.
 */
static bool
tickets_have_end_reason(void)
{
	Oid			nsp = get_namespace_oid("matchmaker", false);
	Oid			rel = get_relname_relid("tickets", nsp);

	return OidIsValid(rel) && get_attnum(rel, "end_reason") != InvalidAttrNumber;
}

/*
 * End the tickets the queue's settings cannot use in state 'invalid' with
 * their reasons, each with an event of its own:
 * {"event": "invalid", "queue": q, "ticket": id, "reason": text}.
 */
static void
write_invalid(MMQueue *queue, TimestampTz now, IdList *invalid)
{
	static SPIPlanPtr plan;
	Oid			argtypes[3] = {TIMESTAMPTZOID, INT8ARRAYOID, TEXTARRAYOID};
	Datum		values[3];
	Datum	   *reasons;
	StringInfoData payload;

	if (invalid->n == 0)
		return;
	if (!tickets_have_end_reason())
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("ticket %lld of queue \"%s\" cannot be matched: %s",
						(long long) invalid->ids[0], queue->name, invalid->reasons[0]),
				 errhint("Run ALTER EXTENSION matchmaker UPDATE: from version 0.3.0 on, a tick ends such tickets.")));
	reasons = palloc(sizeof(Datum) * invalid->n);
	for (int i = 0; i < invalid->n; i++)
		reasons[i] = CStringGetTextDatum(invalid->reasons[i]);
	mm_keep_generic_plan(&plan,
				 "UPDATE matchmaker.tickets AS t SET state = 'invalid', ended_at = $1, end_reason = u.reason "
				 "FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS u(id, reason) "
				 "WHERE t.id OPERATOR(pg_catalog.=) u.id AND t.id OPERATOR(pg_catalog.=) ANY ($2)",
				 3, argtypes);
	values[0] = TimestampTzGetDatum(now);
	values[1] = sql_array(INT8OID, invalid->ids, invalid->n, 0);
	values[2] = PointerGetDatum(construct_array(reasons, invalid->n, TEXTOID, -1, false, TYPALIGN_INT));
	run_by_key(plan, values, SPI_OK_UPDATE, "end invalid tickets");
	if (SPI_processed != (uint64) invalid->n)
		elog(ERROR, "ended %llu invalid tickets, expected %d",
			 (unsigned long long) SPI_processed, invalid->n);

	initStringInfo(&payload);
	for (int i = 0; i < invalid->n; i++)
	{
		mm_event_start(&payload, "invalid", queue->name);
		appendStringInfo(&payload, ", \"ticket\": " INT64_FORMAT ", \"reason\": ", invalid->ids[i]);
		escape_json(&payload, invalid->reasons[i]);
		mm_event_finish(&payload, payload.len, queue->channel);
	}
}

/*
 * Lock the tickets among ids[0 .. n) that still wait, FOR UPDATE SKIP
 * LOCKED (a fresh snapshot: a ticket cancelled since the pool was read,
 * or held by a cancel not yet committed, is not returned).  Returns the
 * ids locked, sorted, and their number in *nlocked.
 */
static int64 *
lock_tickets(const int64 *ids, int n, int *nlocked)
{
	static SPIPlanPtr plan;
	static SPIPlanPtr tid_plan;
	Oid			argtypes[1] = {INT8ARRAYOID};
	Oid			tid_argtypes[1] = {TIDARRAYOID};
	Datum		values[1];
	int64	   *locked;
	bool		by_tid;
	TidPair   **at;

	*nlocked = 0;
	if (n == 0)
		return NULL;
	/* by address without a statement, when it can be (see tick_rows.c) */
	if ((at = tids_lookup(ids, n)) != NULL)
	{
		MMTicketRows *rows = mm_ticket_rows_open(NULL, 0);

		if (rows != NULL)
		{
			int		   *order = tids_order(at, n);

			locked = palloc(sizeof(int64) * n);
			for (int j = 0; j < n; j++)
				if (mm_ticket_rows_lock(rows, &at[order[j]]->tid, ids[order[j]]))
					locked[(*nlocked)++] = ids[order[j]];
			mm_ticket_rows_close(rows);
			pfree(order);
			pfree(at);
			qsort(locked, *nlocked, sizeof(int64), mm_int64_cmp);
			return locked;
		}
		pfree(at);
	}
	values[0] = tids_of(ids, n);
	by_tid = values[0] != (Datum) 0;
	/*
	 * By ctid (a tid scan), else by id (the primary key), with no other
	 * condition, so that no plan can prefer another index (see
	 * mm_execute_by_key); the state is checked here.  A ticket updated
	 * meanwhile but still waiting is locked in its new version, whose ctid
	 * the map takes for the update that follows.
	 */
	if (by_tid)
		mm_keep_generic_plan(&tid_plan,
							 "SELECT id, state OPERATOR(pg_catalog.=) 'waiting', ctid FROM matchmaker.tickets "
							 "WHERE ctid OPERATOR(pg_catalog.=) ANY ($1) "
							 "FOR UPDATE SKIP LOCKED",
							 1, tid_argtypes);
	else
	{
		mm_keep_generic_plan(&plan,
							 "SELECT id, state OPERATOR(pg_catalog.=) 'waiting' FROM matchmaker.tickets "
							 "WHERE id OPERATOR(pg_catalog.=) ANY ($1) "
							 "FOR UPDATE SKIP LOCKED",
							 1, argtypes);
		values[0] = sql_array(INT8OID, ids, n, 0);
	}
	if (mm_execute_by_key(by_tid ? tid_plan : plan, values) != SPI_OK_SELECT)
		elog(ERROR, "could not lock the tickets");
	locked = palloc(sizeof(int64) * Max(SPI_processed, 1));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));

		if (!DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull)))
			continue;
		if (by_tid)
		{
			TidPair    *at = tids_find(id);

			if (at == NULL)
				continue;
			at->tid = *(ItemPointer) DatumGetPointer(SPI_getbinval(tup, desc, 3, &isnull));
		}
		locked[(*nlocked)++] = id;
	}
	SPI_freetuptable(SPI_tuptable);
	pfree(DatumGetPointer(values[0]));
	qsort(locked, *nlocked, sizeof(int64), mm_int64_cmp);
	return locked;
}

/*
 * Lock what a step decided on: the tickets it matches (unless members is
 * false: mark_unlocked checks them as it writes them) or expires, and the
 * invalid ones.  Invalid tickets that cannot be locked are dropped from
 * invalid (a later tick ends them).  The matched or expired tickets that
 * could not be locked go to missing.
 */
static void
lock_decided(MMPool *pool, MMResult *res, bool members, IdList *invalid, IdList *missing,
			 int64 **locked_out, int *nlocked_out)
{
	int			nmembers = 0;
	int			n = 0;
	int64	   *ids;
	int64	   *locked;
	int			nlocked;
	int			kept = 0;

	for (int j = 0; j < res->nmatches && members; j++)
		nmembers += res->matches[j].nmembers;
	ids = palloc(sizeof(int64) * Max(nmembers + res->nexpired + invalid->n, 1));
	for (int m = 0; m < nmembers; m++)
		ids[n++] = pool->tickets[res->members[m]].id;
	for (int e = 0; e < res->nexpired; e++)
		ids[n++] = pool->tickets[res->expired[e]].id;
	for (int i = 0; i < invalid->n; i++)
		ids[n++] = invalid->ids[i];
	locked = lock_tickets(ids, n, &nlocked);
	for (int i = 0; i < nmembers + res->nexpired; i++)
		if (!id_in(locked, nlocked, ids[i]))
			idlist_add(missing, ids[i], NULL);
	for (int i = 0; i < invalid->n; i++)
		if (id_in(locked, nlocked, invalid->ids[i]))
		{
			invalid->ids[kept] = invalid->ids[i];
			invalid->reasons[kept] = invalid->reasons[i];
			kept++;
		}
	invalid->n = kept;
	pfree(ids);
	*locked_out = locked;
	*nlocked_out = nlocked;
}

/*
 * Keep in res only the matches whose members are all in locked (sorted):
 * the others wait for a later tick.  match_ids and roles, when not NULL,
 * run parallel (see keep_matches).
 */
static void
keep_locked_matches(MMPool *pool, MMResult *res, const int64 *locked, int nlocked,
					int64 *match_ids, int *roles)
{
	bool	   *keep = palloc(sizeof(bool) * Max(res->nmatches, 1));

	for (int j = 0; j < res->nmatches; j++)
	{
		keep[j] = true;
		for (int m = 0; m < res->matches[j].nmembers && keep[j]; m++)
			keep[j] = id_in(locked, nlocked, pool->tickets[res->members[res->matches[j].first + m]].id);
	}
	keep_matches(res, keep, match_ids, roles);
	pfree(keep);
}

/* The same, and only the expiries of tickets in locked. */
static void
keep_locked(MMPool *pool, MMResult *res, const int64 *locked, int nlocked)
{
	int			ne = 0;

	keep_locked_matches(pool, res, locked, nlocked, NULL, NULL);
	for (int e = 0; e < res->nexpired; e++)
		if (id_in(locked, nlocked, pool->tickets[res->expired[e]].id))
			res->expired[ne++] = res->expired[e];
	if (ne < res->nexpired)
		res->deadline = NAN;
	res->nexpired = ne;
}

/*
 * For crash tests: when matchmaker.test_hold_tick names the queue and the
 * tick made matches, wait here, everything written and nothing committed,
 * until the process is interrupted (cancelled, terminated or killed).
 */
static void
hold_tick(MMQueue *queue, int nmatches)
{
	if (nmatches == 0 || mm_test_hold_tick == NULL ||
		strcmp(mm_test_hold_tick, queue->name) != 0)
		return;
	ereport(LOG,
			(errmsg("matchmaker: holding the tick of queue \"%s\" before commit with %d new matches",
					queue->name, nmatches),
			 errdetail("matchmaker.test_hold_tick names the queue; the tick waits until its process is interrupted.")));
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*
 * Load what the queue's algorithm needs into pool: the waiting tickets,
 * the measured "auto" parameters (into queue->cfg), the recent opponents,
 * optimize's parties and pings, difference_wait's provisional groups.
 * prev_step is when the worker last ran the queue (0: unknown).  The
 * tickets in left_out (sorted) are left out; those the settings cannot
 * use go to invalid.
 */
static void
load_pool(MMQueue *queue, TimestampTz now, TimestampTz prev_step, MMPool *pool,
		  const int64 *left_out, int nleft_out, IdList *invalid, MMFilterDict *dict)
{
	memset(pool, 0, sizeof(MMPool));
	/* times are seconds relative to now; the recheck grid is on Unix time */
	pool->epoch = (double) now / USECS_PER_SEC +
		(double) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;
	load_tickets(queue, now, pool, left_out, nleft_out, invalid, dict);
	if ((queue->cfg.algorithm == MM_ALGO_PERIODIC && queue->cfg.periodic.batch == 0) ||
		(queue->cfg.algorithm == MM_ALGO_MULTI_QUEUE && queue->cfg.multi_queue.ranges == 0))
		queue->cfg.arrival_rate = measure_arrival_rate(queue, now, pool);
	if (queue->cfg.algorithm == MM_ALGO_AUTO)
	{
		measure_recent(queue, now, pool);
		/* each equal filter value's own rate (see simulate's sim_key_rates) */
		if (pool->key != NULL && pool->cand == NULL && dict->n > 0 && mm_ready_available())
			measure_key_rates(queue, now, pool, dict);
	}
	if (queue->cfg.algorithm == MM_ALGO_CLUSTER && queue->cfg.cluster.shift_auto)
		queue->cfg.cluster.shift = Min(measure_mean_wait(queue, now), 1e9);
	if (queue->cfg.algorithm == MM_ALGO_WINDOW && queue->cfg.window.rematch_last > 0)
		load_met_pairs(queue, now, pool, queue->cfg.window.rematch_last, false);
	if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
	{
		load_met_pairs(queue, now, pool, 1, true);
		load_optimize_data(queue, now, pool);
		/*
		 * optimize holds rounds at the recheck instants after its previous
		 * step: the worker knows when that was; a manual tick holds the
		 * round of the last instant.
		 */
		pool->stepped_at = prev_step != 0 ? seconds_since(prev_step, now) : -INFINITY;
	}
	if (queue->cfg.algorithm == MM_ALGO_DIFFERENCE_WAIT)
		load_groups(queue, now, pool);
	else
	{
		pool->ngroups_cap = Max(pool->ntickets, 1);
		pool->groups = palloc(sizeof(MMGroup) * pool->ngroups_cap);
	}
}

/*
 * What the worker learns from a tick that made res (info->wrote,
 * next_deadline and need_arrivals); compacts the pool.  proposals_seen:
 * whether the queue had pending proposals when the tick began.
 */
static void
tick_info(MMQueue *queue, TimestampTz now, MMPool *pool, MMResult *res, bool proposals_seen,
		  MMTickInfo *info)
{
	double		due;
	unsigned int failures;
	int			k = mm_config_k(&queue->cfg);

	info->wrote = res->nmatches > 0 || res->nexpired > 0 ||
		queue->cfg.algorithm == MM_ALGO_DIFFERENCE_WAIT;
	mm_pool_compact(pool, res);
	/* the step's own when it found one (auto) and all it decided stands */
	failures = mm_alloc_failures;
	due = isnan(res->deadline) ? mm_next_deadline(&queue->cfg, pool) : res->deadline;
	/* worked out without the memory it needed, it may come late: as the step would, fail */
	if (mm_alloc_failures != failures)
		mm_status_error(MM_ERR_NOMEM, psprintf("finding the next deadline of queue \"%s\"", queue->name),
						NULL, NULL);
	/* a group due already (one the last lock attempt left) is due now */
	info->next_deadline = isfinite(due) ? seconds_after(due, now) :
		due < 0 ? now : DT_NOEND;
	/* and when the next ready check times out, if one may be pending */
	if (proposals_seen || (res->nmatches > 0 && queue->cfg.accept_timeout > 0))
		info->next_deadline = Min(info->next_deadline, mm_ready_next_deadline(queue, now));

	/*
	 * greedy (without patience) and periodic only match once k, or a
	 * batch, wait: until then an arrival needs no tick (a cancel never
	 * does), only the timers do.  The batch is the one this tick used.
	 * optimize matches at its rounds and timeouts only: once k wait, its
	 * timers (the next round) cover them; before, the k-th arrival sets
	 * the next round as a timer.
	 */
	info->need_arrivals = 0;
	if (queue->cfg.algorithm == MM_ALGO_GREEDY &&
		queue->cfg.greedy.team_policy == MM_TEAMS_GREEDY)
		info->need_arrivals = Max(k - pool->ntickets, 1);
	else if (queue->cfg.algorithm == MM_ALGO_PERIODIC)
		info->need_arrivals = Max((queue->cfg.periodic.batch > 0 ? queue->cfg.periodic.batch :
								   mm_auto_batch(&queue->cfg)) - pool->ntickets, 1);
	else if (queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
		info->need_arrivals = pool->ntickets >= k ? PG_INT32_MAX : k - pool->ntickets;
}

/*
 * Run one queue's algorithm at time now (SPI connected) and write the
 * outcome.  Returns the number of matches made, or -1 when lock is
 * MM_LOCK_SKIP and another transaction holds the queue.  info, when not
 * NULL, gives when the worker last ran the queue and gets what it needs
 * to know after the tick (see MMTickInfo): whether the tick changed any
 * row besides locking the queue's (matches, expiries or difference_wait's
 * provisional groups), when the queue's next timer falls due without new
 * arrivals (a timeout or a provisional group's finalisation; DT_NOEND when
 * none is pending), and how many arrivals it needs before it can match.
 *
 * A tick needs READ COMMITTED: it must see the tickets as they are once it
 * holds the queue's row, not as a snapshot taken before it waited for it.
 */
int
mm_tick_queue(const char *name, TimestampTz now, MMQueueLock lock,
			  MMTickInfo *info)
{
	MMQueue    *queue = palloc0(sizeof(MMQueue));
	MMPool		pool;
	MMResult	res;
	int			n;
	MMStatus	st;
	IdList		left_out = {0};
	IdList		invalid = {0};
	MMFilterDict filter_dict = {0};
	int			dissolved;
	bool		proposals_seen;
	bool		backfilled = false;
	TimestampTz backfill_expiry = DT_NOEND;
	bool		unlocked = false;
	bool		may_check = true;

	mm_require_read_committed("tick");
	tids_reset();
	if (!mm_load_queue(name, lock, queue))
	{
		if (lock == MM_LOCK_SKIP)
			return -1;
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("queue \"%s\" does not exist", mm_shorten(name)),
				 errhint("Create it with matchmaker.create_queue(), or see the queues in matchmaker.queues.")));
	}

	/*
	 * Proposals whose ready check timed out dissolve first: their players
	 * who accepted wait again and can be grouped at once.
	 */
	dissolved = mm_ready_expire(queue, now, &proposals_seen);

	/*
	 * Step, then lock what the step decided on; when a ticket could not be
	 * locked, step again without it (see the header comment).
	 */
	for (int attempt = 1;; attempt++)
	{
		int64	   *locked;
		int			nlocked;
		int			before;

		invalid.n = 0;
		if (left_out.n > 0)
			qsort(left_out.ids, left_out.n, sizeof(int64), mm_int64_cmp);
		load_pool(queue, now, info != NULL ? info->prev_step : 0, &pool,
				  left_out.ids, left_out.n, &invalid, &filter_dict);
		/* open backfill requests take their players before new matches form */
		if (attempt == 1)
			backfilled = mm_backfill_tick(queue, now, &pool,
										  queue->criteria.nfilters > 0 ? &filter_dict : NULL,
										  &backfill_expiry);

		n = Max(pool.ntickets, 1);
		res.matches = palloc(sizeof(MMMatch) * n);
		res.members = palloc(sizeof(int) * n);
		res.teams = palloc(sizeof(int) * n);
		res.expired = palloc(sizeof(int) * n);
		res.nmatches = 0;
		res.nexpired = 0;

		st = mm_step(&queue->cfg, &pool, 0.0, &res);
		if (st != MM_OK)
			mm_status_error(st, psprintf("matching queue \"%s\"", name), NULL, NULL);

		/*
		 * The members checked, not locked, when tick_rows.c can write them
		 * (mark_unlocked) and no step of this tick found one that failed;
		 * the last step locks them, so that its matches stand.
		 */
		before = left_out.n;
		unlocked = may_check && attempt < MM_LOCK_ATTEMPTS && res.nmatches > 0 &&
			subtransactions_left() && check_members(&pool, &res, &left_out);
		if (unlocked && left_out.n > before)
		{
			/*
			 * A member failed the check: lock the others now, as without
			 * it, so that the next step finds them held (under a steady
			 * stream of cancels, checks alone would fail again at each
			 * step).
			 */
			ereport(DEBUG1,
					(errmsg_internal("matchmaker: %d of the tickets step %d of queue \"%s\" matches failed their check; locking them",
									 left_out.n - before, attempt, name)));
			left_out.n = before;
			unlocked = may_check = false;
		}
		lock_decided(&pool, &res, !unlocked, &invalid, &left_out, &locked, &nlocked);
		if (left_out.n > before)
			ereport(DEBUG1,
					(errmsg_internal("matchmaker: step %d of queue \"%s\" left out %d tickets it decided on (held by other transactions, or changed since read)",
									 attempt, name, left_out.n - before)));
		if (left_out.n == before)
			break;
		if (attempt == MM_LOCK_ATTEMPTS)
		{
			keep_locked(&pool, &res, locked, nlocked);
			break;
		}
	}

	write_matches(queue, now, &pool, &res, &filter_dict, unlocked);
	write_expired(queue, now, &pool, &res);
	write_invalid(queue, now, &invalid);
	mm_stats_record(queue, now, &pool, &res);
	if (queue->cfg.algorithm == MM_ALGO_DIFFERENCE_WAIT)
		write_groups(queue, now, &pool);
	/* the decisions above used the queue's settings; a tuning changes the next tick's */
	mm_tune_queue(queue, now);
	hold_tick(queue, res.nmatches);

	if (info != NULL)
	{
		tick_info(queue, now, &pool, &res, proposals_seen, info);
		info->wrote = info->wrote || invalid.n > 0 || dissolved > 0 || backfilled;
		/* an open backfill request: any arrival may fill it, and it expires */
		info->next_deadline = Min(info->next_deadline, backfill_expiry);
		if (backfill_expiry != DT_NOEND)
			info->need_arrivals = 0;
	}
	return res.nmatches;
}

/*
 * matchmaker.tick(queue, now): run the queue's algorithm on its waiting
 * tickets at time now (default clock_timestamp()).
 */
Datum
mm_tick(PG_FUNCTION_ARGS)
{
	char	   *name = mm_text_arg(fcinfo, 0, "queue");
	TimestampTz now;
	int			made;

	mm_require_arg(fcinfo, 1, "now");
	now = PG_GETARG_TIMESTAMPTZ(1);
	if (TIMESTAMP_NOT_FINITE(now))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("now must be a finite timestamp"),
				 errhint("Omit now to use the current time.")));

	SPI_connect();
	made = mm_tick_queue(name, now, MM_LOCK_UPDATE, NULL);
	SPI_finish();
	PG_RETURN_INT32(made);
}
