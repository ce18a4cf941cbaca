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
 * Inside the simulation a ticket's id is its index in the arrival array:
 * the pool order (arrival, then id) is then the same as with the real ids,
 * so every decision is too.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>

/* Pool and result arrays' initial room. */
#define SIM_INITIAL_CAP 64

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
	MMPool		pool;
	MMResult	res;
	int			cap;			/* room of every array below */
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
#undef SIM_GROW

	s->cap = cap;
	s->pool.ngroups_cap = cap;
	return MM_OK;
}

/*
 * auto's measured arrival rate: over the last MM_RATE_ARRIVALS arrivals
 * so far, as a tick measures it (mm_arrival_rate).
 */
static void
sim_measure(Sim *s)
{
	int			from;

	if (s->cfg.algorithm != MM_ALGO_AUTO)
		return;
	from = s->seen > MM_RATE_ARRIVALS ? s->seen - MM_RATE_ARRIVALS : 0;
	s->cfg.arrival_rate = mm_arrival_rate_of(s->arrivals + from, s->seen - from);
}

/* Run one step at now, record what it decided and drop those tickets. */
static MMStatus
sim_step(Sim *s, double now)
{
	MMStatus	st;

	if (mm_interrupt != NULL && (++s->steps & 4095) == 0 && mm_interrupt())
		return MM_ERR_INTERRUPTED;

	/* cluster's "auto" shift: the mean wait before a match so far */
	if (s->cfg.algorithm == MM_ALGO_CLUSTER && s->cfg.cluster.shift_auto)
		s->cfg.cluster.shift = s->matched > 0 ? s->matched_wait / s->matched : 0.0;
	sim_measure(s);
	st = mm_step(&s->cfg, &s->pool, now, &s->res);

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
			const MMTicket *t = &s->pool.tickets[s->res.members[m->first + i]];
			double		w = now - t->arrival;

			if (s->outcomes != NULL)
			{
				MMOutcome  *o = &s->outcomes[t->id];

				o->match_no = s->sum.games;
				o->team = s->res.teams[m->first + i];
				o->matched_at = now;
			}
			s->wait_sum += w;
			s->leavers++;
			s->matched_wait += w;
			s->matched++;
			if (w > s->sum.max_wait)
				s->sum.max_wait = w;
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
	return MM_OK;
}

/*
 * Step at every deadline before time t (t = INFINITY: until the pool is
 * empty).  *last is the time of the previous step; deadlines after a step
 * always lie beyond it, which the loop checks so it cannot spin.
 */
static MMStatus
sim_drain(Sim *s, double t, double *last)
{
	for (;;)
	{
		double		d;
		MMStatus	st;

		sim_measure(s);
		d = mm_next_deadline(&s->cfg, &s->pool);

		if (!(d < t))
		{
			if (isinf(t) && s->pool.ntickets > 0)
				return MM_ERR_ARGUMENT; /* cannot happen: tickets time out */
			return MM_OK;
		}
		if (!(d > *last))
			return MM_ERR_ARGUMENT; /* cannot happen: a step moves on */
		st = sim_step(s, d);
		if (st != MM_OK)
			return st;
		*last = d;
	}
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
	/* each step checks the criteria, parties and pings of its pool */
	if (nregions < 0)
		return MM_ERR_ARGUMENT;

	s.cfg = *cfg;
	s.arrivals = arrivals;
	s.pool.criteria = cfg->criteria.n > 0 ? criteria : NULL;
	s.pool.ncrows = cfg->criteria.n > 0 ? n : 0;
	s.pool.ping = nregions > 0 ? ping : NULL;
	s.pool.nregions = nregions > 0 ? nregions : 0;
	s.outcomes = outcomes;
	s.sum.players = n;
	for (int j = 0; outcomes != NULL && j < n; j++)
	{
		outcomes[j].match_no = 0;
		outcomes[j].team = 0;
		outcomes[j].matched_at = NAN;
	}
	st = sim_reserve(&s, SIM_INITIAL_CAP);

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
		}
		s.seen = j;
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
	return st;
}
