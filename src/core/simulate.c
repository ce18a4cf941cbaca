/*
 * simulate.c
 *		Event-driven simulation of a queue over a stream of arrivals.
 *
 * Virtual time jumps from event to event: each group of arrivals sharing
 * one arrival time, and every deadline (mm_next_deadline) before the next
 * arrival.  At each event exactly one mm_step runs, as it would live, and
 * the matched and expired tickets leave the pool.  The pool only holds
 * the tickets still waiting, so a step costs O(pool), not O(stream).
 *
 * With leaving players (MMStreamData.leaves_after) the simulation also
 * runs backfill as a tick does: a player's departure is an event that
 * opens a request for one place in its team; every step first fills the
 * open requests, oldest first, from the pool (mm_backfill_pick, the
 * match's players so far as fixed members, those who left included, as a
 * live match does not know who left), and drops those past their expiry.
 *
 * Inside the simulation a ticket's id is its index in the arrival array:
 * the pool order (arrival, then id) is then the same as with the real ids,
 * so every decision is too.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pool and result arrays' initial room. */
#define SIM_INITIAL_CAP 64

/* A player leaving its match at a time (a heap entry). */
typedef struct SimLeave
{
	double		at;
	int64_t		seq;			/* order among equal times: the order pushed */
	int64_t		match_no;
	int			team;
} SimLeave;

/* An open backfill request for one place. */
typedef struct SimRequest
{
	int64_t		match_no;
	int			team;
	double		expires_at;
} SimRequest;

/* Everything one simulation run owns. */
typedef struct Sim
{
	MMConfig	cfg;			/* the caller's, with cluster's auto shift kept current */
	const MMArrival *arrivals;
	MMOutcome  *outcomes;
	MMSimSummary sum;
	double		wait_sum;
	int64_t		leavers;		/* real players matched or expired */
	double		matched_wait;	/* waits of the matched real players */
	int64_t		matched;
	uint64_t	steps;			/* for mm_interrupt */
	int			seen;			/* arrivals so far */
	int			n;				/* arrivals in all */
	MMPool		pool;
	MMResult	res;
	bool		stepped;		/* the pool is as the last step left it */
	double		cand_deadline;	/* intersect filters: the last step's (mm_step_checked) */
	int32_t    *cand_keep;		/* intersect filters: the keys the last step gave */
	double	   *key_horizon;	/* pool.key_horizon's entries, or NULL */
	int32_t    *key_next;		/* with key_horizon, per arrival: its key's next, -1 none */
	bool		plain;			/* mm_pool_plain, for every step */
	int			cap;			/* room of every array below */
	bool	   *taken;			/* backfill's marks on the pool */

	/* backfill, when leaves_after is not NULL */
	const double *leaves_after;
	double	   *span;			/* per match and team: lo, hi of its players' ratings */
	int32_t    *match_key;		/* per match: its players' key (equal filters) */
	int64_t		span_games;		/* matches span has room for */
	SimLeave   *leaves;			/* min-heap by (at, seq) */
	int64_t		nleaves;
	int64_t		leaves_cap;
	int64_t		leave_seq;
	SimRequest *reqs;			/* open requests, oldest first */
	int64_t		nreqs;
	int64_t		reqs_cap;

	/* auto with equal filters: each key's rate over its own latest arrivals */
	const int32_t *key;			/* each arrival's key (data->key) */
	double	   *key_rate;		/* per key (nkey_rates) */
	double	   *key_rate_last;	/* per key: the arrival time its rate ends at */
	int		   *key_rate_gaps;	/* per key: the gaps its rate was measured over */
	int32_t    *key_last;		/* per key: its latest arrival so far, -1 none */
	int32_t    *key_prev;		/* per arrival: its key's arrival before it, -1 none */
	int			measured;		/* arrivals the key rates count */

	/* auto: the latest arrivals' ratings, ascending (cfg.recent) */
	double		recent[MM_DENSITY_ARRIVALS];
	int			sampled;		/* arrivals recent has taken in */
	MMDensity	density;		/* cfg.density: made once per sample */
} Sim;

/* Make room for at least need tickets in the pool and the result. */
static MMStatus
sim_reserve(Sim *s, int need)
{
	int			cap = s->cap;
	void	   *p;

	if (need <= cap)
		return MM_OK;
	if (cap < SIM_INITIAL_CAP)
		cap = SIM_INITIAL_CAP;
	while (cap < need)
		cap = cap > (1 << 29) ? need : cap * 2;

#define SIM_GROW(field, type) \
	do { \
		p = mm_realloc((field), sizeof(type) * (size_t) cap); \
		if (p == NULL) \
			return MM_ERR_NOMEM; \
		(field) = p; \
	} while (0)

	SIM_GROW(s->pool.tickets, MMTicket);
	SIM_GROW(s->pool.groups, MMGroup);
	SIM_GROW(s->res.matches, MMMatch);
	SIM_GROW(s->res.members, int);
	SIM_GROW(s->res.teams, int);
	SIM_GROW(s->res.expired, int);
	if (s->leaves_after != NULL)
		SIM_GROW(s->taken, bool);
#undef SIM_GROW

	s->cap = cap;
	s->pool.ngroups_cap = cap;
	return MM_OK;
}

/*
 * Put x into the ascending v[0 .. *n); a full window (MM_DENSITY_ARRIVALS)
 * gives up old, a value it holds, in the same move: only the values
 * between the two places shift.
 */
void
mm_window_push(double *v, int *n, double x, double old)
{
	int			at = mm_sorted_position(v, *n, x);
	int			out;

	/* the place freed: old's (v[out] == old), or the one past the end */
	out = *n < MM_DENSITY_ARRIVALS ? (*n)++ : mm_sorted_position(v, *n, old);
	if (at <= out)
	{
		memmove(&v[at + 1], &v[at], sizeof(double) * (out - at));
		v[at] = x;
	}
	else
	{
		memmove(&v[out], &v[out + 1], sizeof(double) * (at - 1 - out));
		v[at - 1] = x;
	}
}

/*
 * auto's recent ratings: the latest MM_DENSITY_ARRIVALS arrivals' so far,
 * kept sorted as arrivals come (each one in, the oldest out), as a tick
 * reads them.
 */
static void
sim_sample_ratings(Sim *s)
{
	for (; s->sampled < s->seen; s->sampled++)
	{
		mm_window_push(s->recent, &s->cfg.nrecent, s->arrivals[s->sampled].rating,
					   s->sampled >= MM_DENSITY_ARRIVALS ?
					   s->arrivals[s->sampled - MM_DENSITY_ARRIVALS].rating : 0.0);
		s->density.valid = false;
		s->density.lookups = 0;
	}
	s->cfg.recent = s->recent;
	s->cfg.density = &s->density;
}

/*
 * auto's measured arrival rate: over the last MM_RATE_ARRIVALS arrivals
 * so far, as a tick measures it (mm_arrival_rate).
 */
static MMStatus
sim_measure(Sim *s)
{
	int			from;

	if (s->cfg.algorithm != MM_ALGO_AUTO)
		return MM_OK;
	from = s->seen > MM_RATE_ARRIVALS ? s->seen - MM_RATE_ARRIVALS : 0;
	s->cfg.arrival_rate = mm_arrival_rate_of(s->arrivals + from, s->seen - from);
	s->cfg.rate_last = s->seen > 0 ? s->arrivals[s->seen - 1].arrival : NAN;
	s->cfg.rate_gaps = s->cfg.arrival_rate > 0 ? s->seen - from - 1 : 0;
	sim_sample_ratings(s);

	/* with keys, the rate of each key that had arrivals since */
	for (; s->key_rate != NULL && s->measured < s->seen; s->measured++)
	{
		int			i = s->measured;
		int32_t		k = s->key[i];
		int			first = i;
		int			count = 1;

		s->key_prev[i] = s->key_last[k];
		s->key_last[k] = i;
		while (count < MM_RATE_ARRIVALS && s->key_prev[first] >= 0)
		{
			first = s->key_prev[first];
			count++;
		}
		s->key_rate[k] = count < MM_RATE_MIN ? 0.0 :
			mm_arrival_rate_span(s->arrivals[first].arrival, s->arrivals[i].arrival, count);
		s->key_rate_last[k] = s->arrivals[i].arrival;
		s->key_rate_gaps[k] = count < MM_RATE_MIN ? 0 : count - 1;
	}
	return MM_OK;
}

/* The largest of the n keys (n > 0) into *maxkey; MM_ERR_ARGUMENT for a negative one. */
static MMStatus
sim_max_key(const int32_t *key, int n, int32_t *maxkey)
{
	*maxkey = -1;
	for (int i = 0; i < n; i++)
	{
		if (key[i] < 0)
			return MM_ERR_ARGUMENT;
		*maxkey = key[i] > *maxkey ? key[i] : *maxkey;
	}
	return MM_OK;
}

/*
 * periodic's batch and multi_queue's ranges "auto" follow the arrival
 * rate, which only auto's simulation measures as it goes (sim_measure):
 * for the others the rate is the caller's, the same at every step, so
 * they are worked out here once instead of at every step.
 */
static void
sim_fix_sizes(MMConfig *cfg)
{
	int			rd[MM_MAX_CRITERIA];

	if (cfg->algorithm == MM_ALGO_PERIODIC && cfg->periodic.batch <= 0)
		cfg->periodic.batch = mm_auto_batch(cfg);
	else if (cfg->algorithm == MM_ALGO_MULTI_QUEUE)
	{
		mm_criteria_ranges(cfg, rd);
		cfg->multi_queue.ranges = rd[0];
		for (int d = 1; d <= cfg->criteria.n; d++)
			cfg->criteria.ranges[d] = rd[d];
	}
}

/*
 * With equal filters and auto, the per-key rates: key_rate and the chains
 * of each key's arrivals.  MM_OK without them.
 */
static MMStatus
sim_key_rates(Sim *s, const int32_t *key, int n)
{
	int32_t		maxkey;

	if (key == NULL || s->cfg.algorithm != MM_ALGO_AUTO || n == 0)
		return MM_OK;
	/*
	 * Intersect filters and filters that relax: a player's key is only
	 * given as it waits, so every sub-pool uses the queue's rate, as a tick
	 * does.
	 */
	if (s->pool.cand != NULL)
		return MM_OK;
	if (sim_max_key(key, n, &maxkey) != MM_OK)
		return MM_ERR_ARGUMENT;
	s->key = key;
	s->key_rate = mm_malloc_array((size_t) maxkey + 1, sizeof(double));
	s->key_last = mm_malloc_array((size_t) maxkey + 1, sizeof(int32_t));
	s->key_prev = mm_malloc_array((size_t) n, sizeof(int32_t));
	s->key_rate_last = mm_malloc_array((size_t) maxkey + 1, sizeof(double));
	s->key_rate_gaps = mm_malloc_array((size_t) maxkey + 1, sizeof(int));
	if (s->key_rate == NULL || s->key_last == NULL || s->key_prev == NULL ||
		s->key_rate_last == NULL || s->key_rate_gaps == NULL)
		return MM_ERR_NOMEM;
	for (int32_t k = 0; k <= maxkey; k++)
	{
		s->key_rate[k] = 0.0;
		s->key_last[k] = -1;
		s->key_rate_last[k] = NAN;
		s->key_rate_gaps[k] = 0;
	}
	s->pool.key_rate = s->key_rate;
	s->pool.nkey_rates = maxkey + 1;
	s->pool.key_rate_last = s->key_rate_last;
	s->pool.key_rate_gaps = s->key_rate_gaps;
	return MM_OK;
}

/*
 * Equal filters: pool.key_due, so that a step between arrivals runs only
 * the sub-pools due (filters.c).  Not with what changes a sub-pool
 * between its own steps or hands a step its previous time: intersect
 * filters and relaxing ones (keys given as tickets wait), block lists,
 * backfill, cluster's auto shift, optimize.  With auto an arrival
 * changes every key's recent ratings, otherwise only its own key's pool.
 */
static MMStatus
sim_key_due(Sim *s, const int32_t *key, int n)
{
	int32_t		maxkey;

	if (key == NULL || n == 0 || s->pool.cand != NULL || s->pool.block != NULL ||
		s->leaves_after != NULL || s->cfg.algorithm == MM_ALGO_OPTIMIZE ||
		(s->cfg.algorithm == MM_ALGO_CLUSTER && s->cfg.cluster.shift_auto))
		return MM_OK;
	if (sim_max_key(key, n, &maxkey) != MM_OK)
		return MM_ERR_ARGUMENT;
	s->pool.key_due = mm_malloc_array((size_t) maxkey + 1, sizeof(double));
	if (s->pool.key_due == NULL)
		return MM_ERR_NOMEM;
	s->pool.nkey_due = maxkey + 1;
	for (int32_t k = 0; k <= maxkey; k++)
		s->pool.key_due[k] = NAN;
	return MM_OK;
}

/*
 * cluster's "auto" shift: the mean wait before a match so far, which only
 * a step's matches change.
 */
static void
sim_shift(Sim *s)
{
	if (s->cfg.algorithm == MM_ALGO_CLUSTER && s->cfg.cluster.shift_auto)
		s->cfg.cluster.shift = s->matched > 0 ? s->matched_wait / s->matched : 0.0;
}

bool		mm_sim_step_every_key = false;

/*
 * auto with equal filters, where a key's step reads nothing that other
 * keys' arrivals change (every shape but pairs on the rating alone): each
 * sub-pool's horizon is its own key's next arrival (pool.key_horizon), so
 * that the other keys' arrivals do not step it.  key_next chains each
 * arrival to its key's next.
 */
static MMStatus
sim_key_horizons(Sim *s, const int32_t *key, int n)
{
	int32_t    *last;

	if (s->pool.key_due == NULL || s->cfg.algorithm != MM_ALGO_AUTO || mm_sim_step_every_key ||
		(mm_config_k(&s->cfg) == 2 && s->cfg.criteria.n == 0))
		return MM_OK;
	s->key_horizon = mm_malloc_array((size_t) s->pool.nkey_due, sizeof(double));
	s->key_next = mm_malloc_array((size_t) n, sizeof(int32_t));
	last = mm_malloc_array((size_t) s->pool.nkey_due, sizeof(int32_t));
	if (s->key_horizon == NULL || s->key_next == NULL || last == NULL)
	{
		mm_free(last);
		return MM_ERR_NOMEM;
	}
	for (int k = 0; k < s->pool.nkey_due; k++)
	{
		s->key_horizon[k] = 0.0;
		last[k] = -1;
	}
	for (int i = n - 1; i >= 0; i--)
	{
		s->key_next[i] = last[key[i]];
		last[key[i]] = i;
	}
	mm_free(last);
	s->pool.key_horizon = s->key_horizon;
	return MM_OK;
}

/* Grow an array of backfill's to hold need entries. */
static MMStatus
sim_grow(void **array, int64_t *cap, int64_t need, size_t size)
{
	int64_t		c = *cap < SIM_INITIAL_CAP ? SIM_INITIAL_CAP : *cap;
	void	   *p;

	if (need <= *cap)
		return MM_OK;
	while (c < need)
		c *= 2;
	p = mm_realloc(*array, size * (size_t) c);
	if (p == NULL)
		return MM_ERR_NOMEM;
	*array = p;
	*cap = c;
	return MM_OK;
}

/* The span of match match_no's team (1-based both), for a new match cleared. */
static MMStatus
sim_span(Sim *s, int64_t match_no, int team, double **span)
{
	int			teams = s->cfg.teams;

	if (match_no > s->span_games)
	{
		int64_t		old = s->span_games;
		int64_t		cap = old;
		MMStatus	st = sim_grow((void **) &s->span, &cap, match_no * teams * 2,
								  sizeof(double));

		if (st != MM_OK)
			return st;
		s->span_games = cap / (teams * 2);
		for (int64_t i = old * teams * 2; i < s->span_games * teams * 2; i += 2)
		{
			s->span[i] = INFINITY;
			s->span[i + 1] = -INFINITY;
		}
		cap = old;
		st = sim_grow((void **) &s->match_key, &cap, s->span_games, sizeof(int32_t));
		if (st != MM_OK)
			return st;
	}
	*span = &s->span[((match_no - 1) * teams + (team - 1)) * 2];
	return MM_OK;
}

/*
 * A real player of pool index idx joined match match_no's team at now:
 * note its rating in the match's span, and its departure when it leaves.
 */
static MMStatus
sim_joined(Sim *s, int idx, int64_t match_no, int team, double now)
{
	const MMTicket *t = &s->pool.tickets[idx];
	double		after;
	double		at;
	double	   *span;
	MMStatus	st;
	int64_t		i;

	if (s->leaves_after == NULL)
		return MM_OK;
	st = sim_span(s, match_no, team, &span);
	if (st != MM_OK)
		return st;
	span[0] = fmin(span[0], t->rating);
	span[1] = fmax(span[1], t->rating);
	s->match_key[match_no - 1] = s->pool.key != NULL ? s->pool.key[t->crow] : 0;
	after = s->leaves_after[t->id];
	if (!(after > 0.0))
		return MM_OK;			/* NAN: stays */
	st = sim_grow((void **) &s->leaves, &s->leaves_cap, s->nleaves + 1, sizeof(SimLeave));
	if (st != MM_OK)
		return st;
	/* a departure always lies after the step that placed it; sift it up */
	at = fmax(now + after, nextafter(now, INFINITY));
	i = s->nleaves++;
	while (i > 0 && s->leaves[(i - 1) / 2].at > at)
	{
		s->leaves[i] = s->leaves[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->leaves[i].at = at;
	s->leaves[i].seq = s->leave_seq++;
	s->leaves[i].match_no = match_no;
	s->leaves[i].team = team;
	return MM_OK;
}

/* Whether heap entry a comes before b. */
static bool
leave_before(const SimLeave *a, const SimLeave *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

/* Remove the heap's first departure. */
static void
sim_leave_pop(Sim *s)
{
	SimLeave	last = s->leaves[--s->nleaves];
	int64_t		i = 0;

	for (;;)
	{
		int64_t		c = 2 * i + 1;

		if (c >= s->nleaves)
			break;
		if (c + 1 < s->nleaves && leave_before(&s->leaves[c + 1], &s->leaves[c]))
			c++;
		if (!leave_before(&s->leaves[c], &last))
			break;
		s->leaves[i] = s->leaves[c];
		i = c;
	}
	if (s->nleaves > 0)
		s->leaves[i] = last;
}

/* The next instant backfill needs a step at: a departure or an expiry. */
static double
sim_backfill_deadline(const Sim *s)
{
	double		d = s->nleaves > 0 ? s->leaves[0].at : INFINITY;

	for (int64_t r = 0; r < s->nreqs; r++)
		d = fmin(d, s->reqs[r].expires_at);
	return d;
}

/* Record that pool ticket idx was matched (or backfilled) at now. */
static void
sim_matched(Sim *s, int idx, int64_t match_no, int team, double now)
{
	const MMTicket *t = &s->pool.tickets[idx];
	double		w = now - t->arrival;

	if (s->outcomes != NULL)
	{
		MMOutcome  *o = &s->outcomes[t->id];

		o->match_no = match_no;
		o->team = team;
		o->matched_at = now;
	}
	s->wait_sum += w;
	s->leavers++;
	s->matched_wait += w;
	s->matched++;
	if (w > s->sum.max_wait)
		s->sum.max_wait = w;
}

/*
 * Backfill at now, before the step: the departures due open their
 * requests, requests past their expiry end, and the others take a ticket
 * each, oldest request first; the tickets taken leave the pool.
 */
static MMStatus
sim_backfill(Sim *s, double now)
{
	int64_t		w = 0;
	int			taken = 0;
	MMStatus	st;

	while (s->nleaves > 0 && s->leaves[0].at <= now)
	{
		SimLeave	l = s->leaves[0];

		sim_leave_pop(s);
		st = sim_grow((void **) &s->reqs, &s->reqs_cap, s->nreqs + 1, sizeof(SimRequest));
		if (st != MM_OK)
			return st;
		s->reqs[s->nreqs].match_no = l.match_no;
		s->reqs[s->nreqs].team = l.team;
		s->reqs[s->nreqs].expires_at = l.at + MM_SIM_BACKFILL_EXPIRES;
		s->nreqs++;
	}
	if (s->nreqs == 0)
		return MM_OK;
	for (int i = 0; i < s->pool.ntickets; i++)
		s->taken[i] = false;
	for (int64_t r = 0; r < s->nreqs; r++)
	{
		SimRequest *q = &s->reqs[r];
		double	   *span;
		int			idx;

		if (q->expires_at <= now)
			continue;			/* expired */
		st = sim_span(s, q->match_no, q->team, &span);
		if (st != MM_OK)
			return st;
		if (mm_backfill_pick(&s->pool, s->taken, span[0], span[1],
							 s->match_key[q->match_no - 1], 1, &idx) == 0)
		{
			s->reqs[w++] = *q;	/* stays open */
			continue;
		}
		taken++;
		sim_matched(s, idx, q->match_no, q->team, now);
		st = sim_joined(s, idx, q->match_no, q->team, now);
		if (st != MM_OK)
			return st;
	}
	s->nreqs = w;
	if (taken > 0)
	{
		int			k = 0;

		for (int i = 0; i < s->pool.ntickets; i++)
			if (!s->taken[i])
				s->pool.tickets[k++] = s->pool.tickets[i];
		s->pool.ntickets = k;
	}
	return MM_OK;
}

/* Whether mm_interrupt, asked every 4096 steps, stops the simulation. */
static bool
sim_interrupted(Sim *s)
{
	return mm_interrupt != NULL && (++s->steps & 4095) == 0 && mm_interrupt();
}

/* Run one step at now, record what it decided and drop those tickets. */
static MMStatus
sim_step(Sim *s, double now)
{
	MMStatus	st;

	if (sim_interrupted(s))
		return MM_ERR_INTERRUPTED;

	if (s->leaves_after != NULL)
	{
		st = sim_backfill(s, now);
		if (st != MM_OK)
			return st;
	}
	st = sim_measure(s);
	if (st != MM_OK)
		return st;
	/* a deadline after the next arrival need not be exact */
	s->pool.horizon = s->seen < s->n ? s->arrivals[s->seen].arrival : 0.0;
	/* mm_simulate checked the configuration; only cluster's shift changes */
	s->cand_deadline = NAN;
	st = s->cfg.algorithm == MM_ALGO_CLUSTER && s->cfg.cluster.shift_auto
		? mm_step(&s->cfg, &s->pool, now, &s->res)
		: mm_step_checked(&s->cfg, &s->pool, now, &s->res, &s->cand_deadline);

	if (st != MM_OK)
		return st;

	for (int j = 0; j < s->res.nmatches; j++)
	{
		const MMMatch *m = &s->res.matches[j];

		s->sum.games++;
		s->sum.bots += m->bots;
		s->sum.cost += m->cost.total;
		s->sum.criteria_cost += m->cost.criteria;
		s->sum.wait_cost += m->cost.wait;
		for (int i = 0; i < m->nmembers; i++)
		{
			int			idx = s->res.members[m->first + i];
			int			team = s->res.teams[m->first + i];

			sim_matched(s, idx, s->sum.games, team, now);
			st = sim_joined(s, idx, s->sum.games, team, now);
			if (st != MM_OK)
				return st;
		}
	}
	for (int j = 0; j < s->res.nexpired; j++)
	{
		const MMTicket *t = &s->pool.tickets[s->res.expired[j]];
		double		w = now - t->arrival;

		if (s->outcomes != NULL)
		{
			MMOutcome  *o = &s->outcomes[t->id];

			o->match_no = 0;
			o->team = 0;
			o->matched_at = now;
		}
		s->sum.expired++;
		s->wait_sum += w;
		s->leavers++;
		if (w > s->sum.max_wait)
			s->sum.max_wait = w;
	}
	mm_pool_compact(&s->pool, &s->res);
	s->stepped = true;
	/* the shift of the next step, which the next deadline reads */
	sim_shift(s);
	return MM_OK;
}

bool		mm_sim_exact_cand_deadline = false;

/*
 * Intersect filters, after a step: the next deadline.  mm_next_deadline
 * assigns the keys again over the tickets left and asks each key's
 * sub-pool; where every ticket keeps the key the step gave it, each
 * sub-pool is the one its step left, and its deadline the one that step
 * told (s->cand_deadline, with the horizon as mm_next_deadline takes it),
 * so only the instants filters relax remain to be asked.
 */
static double
sim_cand_deadline(Sim *s)
{
	MMPool	   *pool = &s->pool;

	if (pool->ntickets == 0)
		return INFINITY;
	if (mm_sim_exact_cand_deadline)
		return mm_next_deadline(&s->cfg, pool);
	for (int i = 0; i < pool->ntickets; i++)
		s->cand_keep[i] = pool->cand_key[pool->tickets[i].crow];
	if (mm_filter_assign(pool, pool->stepped_at) != MM_OK)
		return mm_next_deadline(&s->cfg, pool);
	for (int i = 0; i < pool->ntickets; i++)
		if (pool->cand_key[pool->tickets[i].crow] != s->cand_keep[i])
			return mm_next_deadline(&s->cfg, pool);
	return fmin(s->cand_deadline, mm_filter_relax_deadline(pool));
}

/*
 * Step at every deadline before time t (t = INFINITY: until the pool is
 * empty).  *last is the time of the previous step; deadlines after a step
 * always lie beyond it, which the loop checks so it cannot spin.
 */
static MMStatus
sim_drain(Sim *s, double t, double *last)
{
	int			again = -1;		/* the pool's size at a step repeated at *last */

	for (;;)
	{
		double		d;
		MMStatus	st;
		unsigned int failures = mm_alloc_failures;

		st = sim_measure(s);
		if (st != MM_OK)
			return st;
		/*
		 * the step that left the pool found its deadline on the way (or
		 * that none comes before the next arrival, t), or not
		 */
		d = s->stepped && !isnan(s->res.deadline) ? s->res.deadline
			: s->stepped && !isnan(s->cand_deadline) ? sim_cand_deadline(s)
			: s->plain ? mm_plain_deadline(&s->cfg, &s->pool)
			: mm_next_deadline(&s->cfg, &s->pool);
		/* after the last arrival, backfill matters while tickets wait */
		if (s->leaves_after != NULL && s->pool.ntickets > 0)
			d = fmin(d, sim_backfill_deadline(s));
		/* worked out without the memory it needed, it may come late */
		if (mm_alloc_failures != failures)
			return MM_ERR_NOMEM;

		if (!(d < t))
		{
			if (isinf(t) && s->pool.ntickets > 0)
				return MM_ERR_ARGUMENT; /* cannot happen: tickets time out */
			return MM_OK;
		}
		if (!(d > *last))
		{
			/*
			 * Only with candidate keys or block lists: a ticket the step left over may be
			 * given another key, where it was due already; a tick would run
			 * at once, so step again at the same instant, as long as each
			 * such step matches someone.
			 */
			if ((s->pool.cand == NULL && s->pool.block == NULL) || again == s->pool.ntickets)
				return MM_ERR_ARGUMENT; /* cannot happen: a step moves on */
			d = *last;
			again = s->pool.ntickets;
		}
		else
			again = -1;
		st = sim_step(s, d);
		if (st != MM_OK)
			return st;
		*last = d;
	}
}

/*
 * Whether every party of the stream is -1 (none) or a number, and fits a
 * team (MM_OK), as enqueue_party and the SQL simulate require: a larger
 * one could never play, and steps would dissolve the matches it is put in
 * over and over.  *solo: whether the stream has no party at all.
 */
static MMStatus
sim_check_parties(const MMConfig *cfg, const int32_t *party, int n, bool *solo)
{
	int		   *ids;
	int			m = 0;
	MMStatus	st = MM_OK;

	*solo = true;
	if (party == NULL || n == 0)
		return MM_OK;
	ids = mm_malloc_array((size_t) n, sizeof(int));
	if (ids == NULL)
		return MM_ERR_NOMEM;
	for (int i = 0; i < n && st == MM_OK; i++)
		if (party[i] >= 0)
			ids[m++] = party[i];
		else if (party[i] < -1)
			st = MM_ERR_ARGUMENT;	/* -1: no party */
	qsort(ids, m, sizeof(int), mm_int_cmp);
	for (int i = 0, run = 1; i < m && st == MM_OK; i++, run++)
	{
		if (i == 0 || ids[i] != ids[i - 1])
			run = 1;
		if (run > cfg->team_size)
			st = MM_ERR_ARGUMENT;
	}
	mm_free(ids);
	*solo = m == 0;
	return st;
}

/*
 * With criteria, a row of values in [0, 1] for every arrival, checked once
 * for the whole stream as a step's check_pool would (step.c): the steps of
 * mm_step_checked check only the waits.
 */
static MMStatus
sim_check_criteria(const MMConfig *cfg, const double *criteria, int n)
{
	size_t		nvalues = (size_t) n * (size_t) cfg->criteria.n;

	if (n == 0)
		return MM_OK;
	if (cfg->criteria.n > 0 && criteria == NULL)
		return MM_ERR_ARGUMENT;
	for (size_t j = 0; j < nvalues; j++)
		if (!(criteria[j] >= 0.0 && criteria[j] <= 1.0))
			return MM_ERR_ARGUMENT;
	return MM_OK;
}

/* Simulate the queue over n arrivals; see mm_core.h. */
MMStatus
mm_simulate(const MMConfig *cfg, const MMArrival *arrivals,
			const MMStreamData *data, int n, MMOutcome *outcomes,
			MMSimSummary *summary)
{
	const double *criteria = data ? data->criteria : NULL;
	const int32_t *party = data ? data->party : NULL;
	const float *ping = data ? data->ping : NULL;
	int			nregions = ping != NULL ? data->nregions : 0;

	Sim			s = {0};
	double		last = -INFINITY;
	MMStatus	st;
	int			i = 0;

	if (mm_config_check(cfg) != MM_OK || n < 0 || (n > 0 && arrivals == NULL))
		return MM_ERR_ARGUMENT;
	if (mm_check_arrivals(arrivals, n) != MM_OK)
		return MM_ERR_ARGUMENT;
	/* the rows once; each step checks the pings of its pool */
	if (nregions < 0)
		return MM_ERR_ARGUMENT;
	st = sim_check_criteria(cfg, criteria, n);
	if (st == MM_OK)
		st = sim_check_parties(cfg, party, n, &s.pool.solo);
	if (st != MM_OK)
		return st;

	s.cfg = *cfg;
	/* auto's recent ratings are the stream's own, from its first arrival */
	s.cfg.recent = NULL;
	s.cfg.nrecent = 0;
	s.cfg.density = NULL;
	sim_shift(&s);
	s.arrivals = arrivals;
	s.n = n;
	/* nothing but the steps and the arrivals changes the pool */
	s.pool.closed = true;
	s.pool.criteria = cfg->criteria.n > 0 ? criteria : NULL;
	s.pool.ncrows = cfg->criteria.n > 0 ? n : 0;
	s.pool.key = data != NULL ? data->key : NULL;
	s.pool.nkeys = s.pool.key != NULL ? n : 0;
	/* roles: every step checks the masks; backfill does not fill roles */
	s.pool.roles = cfg->roles.n > 0 && data != NULL ? data->roles : NULL;
	s.pool.nrole_rows = s.pool.roles != NULL ? n : 0;
	if (cfg->roles.n > 0 && (s.pool.roles == NULL || data->leaves_after != NULL))
		return MM_ERR_ARGUMENT;
	if (data != NULL && data->block_start != NULL)
	{
		/* backfill does not check block lists */
		if (data->player == NULL || data->leaves_after != NULL)
			return MM_ERR_ARGUMENT;
		s.pool.player = data->player;
		s.pool.block_start = data->block_start;
		s.pool.block = data->block;
		s.pool.nblock_rows = n;
		s.pool.block_key = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(int32_t));
		s.pool.held = mm_calloc((size_t) (n > 0 ? n : 1), sizeof(uint8_t));
		if (s.pool.block_key == NULL || s.pool.held == NULL)
		{
			mm_free(s.pool.block_key);
			mm_free(s.pool.held);
			return MM_ERR_NOMEM;
		}
	}
	if (data != NULL && data->cand != NULL)
	{
		if (data->cand_start == NULL || data->ncand_keys < 1)
			return MM_ERR_ARGUMENT;
		s.pool.cand_start = data->cand_start;
		s.pool.cand = data->cand;
		s.pool.ncand_rows = n;
		s.pool.ncand_keys = data->ncand_keys;
		s.pool.nfilters = data->nfilters;
		s.pool.key_values = data->key_values;
		s.pool.relax_after = data->relax_after;
		s.pool.cand_key = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(int32_t));
		s.pool.cand_count = mm_calloc((size_t) data->ncand_keys, sizeof(int32_t));
		s.cand_keep = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(int32_t));
		if (s.pool.cand_key == NULL || s.pool.cand_count == NULL || s.cand_keep == NULL)
		{
			mm_free(s.pool.cand_key);
			mm_free(s.pool.cand_count);
			mm_free(s.cand_keep);
			mm_free(s.pool.block_key);
			mm_free(s.pool.held);
			return MM_ERR_NOMEM;
		}
		for (int j = 0; j < n; j++)
			s.pool.cand_key[j] = -1;
		s.pool.key = s.pool.cand_key;
		s.pool.nkeys = n;
	}
	s.pool.ping = nregions > 0 ? ping : NULL;
	s.pool.nregions = nregions > 0 ? nregions : 0;
	s.outcomes = outcomes;
	s.cand_deadline = NAN;
	s.leaves_after = data != NULL && cfg->algorithm != MM_ALGO_OPTIMIZE ? data->leaves_after : NULL;
	sim_fix_sizes(&s.cfg);
	s.plain = mm_pool_plain(&s.cfg, &s.pool);
	s.sum.players = n;
	for (int j = 0; outcomes != NULL && j < n; j++)
	{
		outcomes[j].match_no = 0;
		outcomes[j].team = 0;
		outcomes[j].matched_at = NAN;
	}
	st = sim_reserve(&s, SIM_INITIAL_CAP);
	if (st == MM_OK)
		st = sim_key_rates(&s, s.pool.key, n);
	if (st == MM_OK)
		st = sim_key_due(&s, s.pool.key, n);
	if (st == MM_OK)
		st = sim_key_horizons(&s, s.pool.key, n);

	while (st == MM_OK && i < n)
	{
		double		t = arrivals[i].arrival;
		int			j = i;

		st = sim_drain(&s, t, &last);
		if (st != MM_OK)
			break;
		while (j < n && arrivals[j].arrival == t)
			j++;
		st = sim_reserve(&s, s.pool.ntickets + (j - i));
		if (st != MM_OK)
			break;
		s.stepped = false;
		for (; i < j; i++)
		{
			MMTicket   *tk = &s.pool.tickets[s.pool.ntickets++];

			tk->id = i;
			tk->rating = arrivals[i].rating;
			tk->arrival = arrivals[i].arrival;
			tk->group = -1;
			tk->party = party != NULL ? party[i] : -1;
			tk->attr = nregions > 0 ? i : -1;
			tk->crow = i;
			if (s.pool.key_due != NULL)
				s.pool.key_due[s.pool.key[i]] = NAN;
			if (s.key_horizon != NULL)
				s.key_horizon[s.pool.key[i]] = s.key_next[i] >= 0 ? arrivals[s.key_next[i]].arrival : 0.0;
		}

		/*
		 * auto with equal filters: an arrival changes its own key's rate
		 * (its due entry is reset above) and the queue's recent ratings,
		 * which only pairs rated on the rating alone read (auto.c), and
		 * only where a pair can form.  No other entry needs a reset for
		 * that: a step of k or more tickets tells no deadline past its
		 * horizon, the next arrival, so such a sub-pool steps at this one
		 * anyway; one of fewer waits for its oldest ticket's timeout,
		 * which it told exactly and which the ratings do not move; and the
		 * other shapes read nothing of other keys (sim_key_horizons).  The
		 * unit tests compare this with resetting every entry, and the
		 * pool's horizon for every sub-pool, which the hook does.
		 */
		if (mm_sim_step_every_key && s.cfg.algorithm == MM_ALGO_AUTO && s.pool.key_due != NULL)
			for (int k = 0; k < s.pool.nkey_due; k++)
				s.pool.key_due[k] = NAN;
		s.seen = j;
		if (s.plain && s.leaves_after == NULL && mm_step_idle(&s.cfg, &s.pool, t, &s.res.deadline))
		{
			/* the step would decide nothing (most arrivals of periodic) */
			s.pool.stepped_at = t;
			s.res.nmatches = 0;
			s.res.nexpired = 0;
			s.stepped = true;
			st = sim_interrupted(&s) ? MM_ERR_INTERRUPTED : MM_OK;
		}
		else
			st = sim_step(&s, t);
		last = t;
	}
	if (st == MM_OK)
		st = sim_drain(&s, INFINITY, &last);

	if (st == MM_OK && summary != NULL)
	{
		s.sum.mean_wait = s.leavers > 0 ? s.wait_sum / s.leavers : 0.0;
		*summary = s.sum;
	}
	mm_free(s.pool.tickets);
	mm_free(s.pool.groups);
	mm_free(s.res.matches);
	mm_free(s.res.members);
	mm_free(s.res.teams);
	mm_free(s.res.expired);
	mm_free(s.taken);
	mm_free(s.span);
	mm_free(s.pool.cand_key);
	mm_free(s.pool.cand_count);
	mm_free(s.cand_keep);
	mm_free(s.pool.block_key);
	mm_free(s.pool.held);
	mm_free(s.pool.key_due);
	mm_free(s.key_horizon);
	mm_free(s.key_next);
	mm_free(s.match_key);
	mm_free(s.key_rate);
	mm_free(s.key_rate_last);
	mm_free(s.key_rate_gaps);
	mm_free(s.key_last);
	mm_free(s.key_prev);
	mm_free(s.leaves);
	mm_free(s.reqs);
	return st;
}
