/*
 * step.c
 *		One matching step (Schlup, section 4): the table of algorithms, the
 *		dispatch of the configuration check, of a step and of the next
 *		deadline to the configured one, the finishing of the matches a step
 *		decided, and pool compaction.
 *
 * Every algorithm (one file each: greedy.c, periodic.c, multi_queue.c,
 * difference_wait.c, window.c, cluster.c, optimize.c, auto.c) only decides: it
 * appends matches (members, nmembers, bots) and expiries to the result.
 * mm_step then lets a timed-out ticket play a smaller match where
 * params.min_players allows (smaller.c), and finishes each match the same
 * way: its members are listed in pool (arrival) order, split into teams
 * and costed.  optimize chooses the
 * teams itself, so its split is kept.  doc/algorithms.md states the rules
 * in prose.  A new algorithm is one file, one row of the table below, and
 * its name and defaults in config.c.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the dispatch knows of an algorithm. */
typedef struct MMAlgorithmEntry
{
	MMCheckFn	check;			/* its own parameters, beyond the shared ones; or NULL */
	MMStepFn	step;			/* decide one step */
	MMDeadlineFn next_deadline; /* the next time a step without arrivals acts */
	MMIdleFn	idle;			/* whether a step now decides nothing; or NULL */
} MMAlgorithmEntry;

static const MMAlgorithmEntry algorithms[] = {
	[MM_ALGO_GREEDY] = {NULL, mm_greedy_step, mm_timeout_deadline, mm_greedy_idle},
	[MM_ALGO_PERIODIC] = {NULL, mm_periodic_step, mm_timeout_deadline, mm_periodic_idle},
	[MM_ALGO_MULTI_QUEUE] = {NULL, mm_multi_queue_step, mm_timeout_deadline, mm_multi_queue_idle},
	[MM_ALGO_DIFFERENCE_WAIT] = {NULL, mm_difference_wait_step, mm_difference_wait_deadline, NULL},
	[MM_ALGO_WINDOW] = {mm_window_check, mm_window_step, mm_window_deadline, NULL},
	[MM_ALGO_CLUSTER] = {mm_cluster_check, mm_cluster_step, mm_cluster_deadline, NULL},
	[MM_ALGO_OPTIMIZE] = {mm_optimize_check, mm_optimize_step, mm_optimize_deadline, NULL},
	[MM_ALGO_AUTO] = {mm_auto_check, mm_auto_step, mm_auto_deadline, NULL},
};

#define NUM_ALGORITHMS ((int) (sizeof(algorithms) / sizeof(algorithms[0])))

/* Check every field of a configuration: the shared ones, then the algorithm's own. */
MMStatus
mm_config_check(const MMConfig *cfg)
{
	if (mm_config_check_shared(cfg) != MM_OK ||
		(int) cfg->algorithm >= NUM_ALGORITHMS)
		return MM_ERR_ARGUMENT;
	if (algorithms[cfg->algorithm].check == NULL)
		return MM_OK;
	return algorithms[cfg->algorithm].check(cfg);
}

/*
 * Split a match into teams (see mm_core.h): the configuration is checked
 * here, the split is teams.c's.
 */
MMStatus
mm_split_teams(const MMConfig *cfg, int nmembers, const double *ratings,
			   int *teams_out)
{
	if (mm_config_check(cfg) != MM_OK)
		return MM_ERR_ARGUMENT;
	return mm_teams_split(cfg, nmembers, ratings, teams_out);
}

/*
 * A 1v1 match's teams and cost, as mm_teams_split and mm_game_cost give
 * them (team 1 the lower rating, the first of the two on a tie; the same
 * arithmetic, so the same bits), without their loops and checks: a
 * checked pool and configuration hold the ratings in [0, 1], the waits,
 * factor and max_wait finite and not negative.
 */
static inline void
finish_pair(double f, double max_wait, const double *ratings, const double *waits,
			int *teams, MMCost *cost)
{
	teams[0] = ratings[1] < ratings[0] ? 2 : 1;
	teams[1] = 3 - teams[0];
	cost->criteria = f * fabs(ratings[1] - ratings[0]);
	cost->wait = waits[0] / max_wait + waits[1] / max_wait;
	cost->total = cost->criteria + cost->wait;
}

/*
 * Give every match decided by a step its final form: members in pool
 * order, team numbers and cost.  Fails only when memory runs out or
 * mm_interrupt stops it.
 */
static MMStatus
finish_matches(const MMConfig *cfg, const MMPool *pool, double now,
			   MMResult *res, bool compose)
{
	int			k = mm_config_k(cfg);
	int			dims = cfg->criteria.n + 1;
	double		ratings[MM_MAX_K];
	double		waits[MM_MAX_K];
	double		f[MM_MAX_CRITERIA];
	double	   *crit = ratings; /* player by player, every criterion */
	/* 1v1 on the rating alone, teams split by rating: finish_pair */
	bool		pairs = k == 2 && cfg->team_size == 1 && dims == 1 && !compose &&
		cfg->algorithm != MM_ALGO_OPTIMIZE;

	if (res->nmatches == 0)
		return MM_OK;			/* most steps of a simulation */
	mm_criteria_factors(cfg, f);
	if (dims > 1 && res->nmatches > 0)
	{
		crit = mm_malloc(sizeof(double) * (size_t) k * dims);
		if (crit == NULL)
			return MM_ERR_NOMEM;
	}

	for (int j = 0; j < res->nmatches; j++)
	{
		MMMatch    *m = &res->matches[j];
		int		   *mem = res->members + m->first;
		int		   *tm = res->teams + m->first;
		MMStatus	st;

		if (mm_interrupted())
		{
			if (crit != ratings)
				mm_free(crit);
			return MM_ERR_INTERRUPTED;
		}

		/*
		 * optimize (k <= 12) and compose chose the teams: they move with
		 * their members (compose lists them in order already)
		 */
		if (m->nmembers <= 16 || cfg->algorithm == MM_ALGO_OPTIMIZE || compose)
		{
			for (int i = 1; i < m->nmembers; i++)
			{
				int			v = mem[i];
				int			tv = tm[i];
				int			p = i;

				for (; p > 0 && mem[p - 1] > v; p--)
				{
					mem[p] = mem[p - 1];
					tm[p] = tm[p - 1];
				}
				mem[p] = v;
				tm[p] = tv;
			}
		}
		else
			qsort(mem, m->nmembers, sizeof(int), mm_int_cmp);

		for (int i = 0; i < m->nmembers; i++)
		{
			const MMTicket *t = &pool->tickets[mem[i]];
			double		w = now - t->arrival;

			ratings[i] = t->rating;
			waits[i] = w > 0 ? w : 0.0;
			if (dims > 1)
			{
				crit[(size_t) i * dims] = t->rating;
				for (int d = 1; d < dims; d++)
					crit[(size_t) i * dims + d] =
						pool->criteria[(size_t) t->crow * cfg->criteria.n + d - 1];
			}
		}
		st = MM_OK;
		if (pairs && m->nmembers == 2)
			finish_pair(f[0], cfg->max_wait, ratings, waits, tm, &m->cost);
		else if (m->bots == 0 && m->nmembers < k)
		{
			/* a smaller match (min_players): even teams, a game of its own size */
			double		fs[MM_MAX_CRITERIA];

			for (int d = 0; d < dims; d++)
				fs[d] = f[d] * m->nmembers / k;
			st = compose ? mm_compose_split(cfg, pool, mem, m->nmembers, tm)
				: mm_teams_split_even(cfg, m->nmembers, ratings, tm);
			if (st == MM_OK)
				st = mm_game_cost(m->nmembers, m->nmembers, dims, crit, fs, waits,
								  cfg->max_wait, &m->cost);
		}
		else
		{
			if (compose)
				st = mm_compose_split(cfg, pool, mem, m->nmembers, tm);
			else if (cfg->algorithm != MM_ALGO_OPTIMIZE)
				st = mm_teams_split(cfg, m->nmembers, ratings, tm);
			if (st == MM_OK)
				st = mm_game_cost(k, m->nmembers, dims, crit, f, waits,
								  cfg->max_wait, &m->cost);
		}
		if (st != MM_OK)
		{
			if (crit != ratings)
				mm_free(crit);
			return st;
		}
	}
	if (crit != ratings)
		mm_free(crit);
	return MM_OK;
}

/*
 * Check what every algorithm relies on: result arrays present, tickets
 * strictly ordered by (arrival, id), finite arrivals, ratings in [0, 1],
 * and with criteria a row of values in [0, 1] for every ticket.
 */
static MMStatus
check_pool(const MMConfig *cfg, const MMPool *pool, const MMResult *res,
		   double now)
{
	int			n = pool->ntickets;

	if (n < 0)
		return MM_ERR_ARGUMENT;
	if (n == 0)
		return MM_OK;
	if (pool->tickets == NULL || res->matches == NULL ||
		res->members == NULL || res->teams == NULL || res->expired == NULL)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		/* waits must be finite too, or the costs would fail after the step decided */
		if (!isfinite(t->arrival) || !isfinite(now - t->arrival) ||
			!(t->rating >= 0.0 && t->rating <= 1.0))
			return MM_ERR_ARGUMENT;
		if (pool->key != NULL && (t->crow < 0 || t->crow >= pool->nkeys))
			return MM_ERR_ARGUMENT;
		if (t->party < -1)
			return MM_ERR_ARGUMENT;
		if (cfg->criteria.n > 0)
		{
			if (pool->criteria == NULL || t->crow < 0 || t->crow >= pool->ncrows)
				return MM_ERR_ARGUMENT;
			for (int d = 0; d < cfg->criteria.n; d++)
			{
				double		v = pool->criteria[(size_t) t->crow * cfg->criteria.n + d];

				if (!(v >= 0.0 && v <= 1.0))
					return MM_ERR_ARGUMENT;
			}
		}
		if (i > 0)
		{
			const MMTicket *p = &pool->tickets[i - 1];

			if (p->arrival > t->arrival ||
				(p->arrival == t->arrival && p->id >= t->id))
				return MM_ERR_ARGUMENT;
		}
	}
	return MM_OK;
}

/*
 * The configured algorithm's step on a pool of one key (mm_config_check
 * accepted the algorithm), its smaller matches and the finishing of its
 * matches.
 */
static MMStatus
step_pool(const MMConfig *cfg, MMPool *pool, double prev, double now, MMResult *result)
{
	MMStatus	st = algorithms[cfg->algorithm].step(cfg, pool, prev, now, result);
	bool		compose = false;

	if (st == MM_OK)
		st = mm_smaller_matches(cfg, pool, result);
	if (st == MM_OK)
		compose = mm_compose_active(cfg, pool);
	/* smaller matches and parties change the step's decisions after it */
	if (mm_smaller_active(cfg) || compose)
		result->deadline = NAN;
	if (st == MM_OK && compose)
		st = mm_compose(cfg, pool, now, result);
	if (st == MM_OK)
		st = finish_matches(cfg, pool, now, result, compose);
	return st;
}

/* The step over the whole pool: each key's sub-pool apart, or the pool. */
static MMStatus
run_step(const MMConfig *cfg, MMPool *pool, double prev, double now, MMResult *result)
{
	MMConfig	local;

	if (mm_pool_keyed(pool))
		return mm_keyed_step(cfg, pool, prev, now, result, step_pool);
	return step_pool(mm_key_config(cfg, pool, &local), pool, prev, now, result);
}

/*
 * Block lists: one key's sub-pool, run again with players held out until
 * no match holds a blocked pair (exclude.c), so that a blocked pair in
 * one sub-pool does not make the others' steps run again.
 */
static MMStatus
exclude_part(const MMConfig *cfg, MMPool *pool, double prev, double now, MMResult *result)
{
	return mm_exclude_step(cfg, pool, prev, now, result, run_step);
}

/* The next deadline over the whole pool, and the instants filters relax. */
static double
pool_deadline(const MMConfig *cfg, const MMPool *pool)
{
	MMConfig	local;

	if (mm_pool_keyed(pool))
		return fmin(mm_keyed_deadline(cfg, pool, algorithms[cfg->algorithm].next_deadline),
					mm_filter_relax_deadline(pool));
	return fmin(algorithms[cfg->algorithm].next_deadline(mm_key_config(cfg, pool, &local), pool),
				mm_filter_relax_deadline(pool));
}

/* Block lists: the next deadline of one key's sub-pool (exclude.c). */
static double
exclude_part_deadline(const MMConfig *cfg, const MMPool *pool)
{
	return mm_exclude_deadline(cfg, pool, pool_deadline);
}

/*
 * Whether the waits at now of a pool's tickets (at least one) are finite:
 * those of its first and last, between which, the tickets being in
 * arrival order, every other wait lies.
 */
static bool
waits_finite(const MMPool *pool, double now)
{
	return isfinite(now - pool->tickets[0].arrival) &&
		isfinite(now - pool->tickets[pool->ntickets - 1].arrival);
}

/* What a step of mm_simulate checks (mm_step_checked): the result arrays and the waits. */
static MMStatus
check_waits(const MMPool *pool, const MMResult *res, double now)
{
	int			n = pool->ntickets;

	if (n < 0)
		return MM_ERR_ARGUMENT;
	if (n == 0)
		return MM_OK;
	if (pool->tickets == NULL || res->matches == NULL ||
		res->members == NULL || res->teams == NULL || res->expired == NULL)
		return MM_ERR_ARGUMENT;
	return waits_finite(pool, now) ? MM_OK : MM_ERR_ARGUMENT;
}

/*
 * A step at now, cfg checked with mm_config_check; the pool's rows too
 * when rows_checked (mm_step_checked).
 */
static MMStatus
step_at(const MMConfig *cfg, MMPool *pool, double now, MMResult *result,
		bool rows_checked, double *cand_deadline)
{
	MMStatus	st;
	double		prev;
	MMConfig	local;

	if (result != NULL)
	{
		result->nmatches = 0;
		result->nexpired = 0;
		result->deadline = NAN;
	}
	if (cand_deadline != NULL)
		*cand_deadline = NAN;
	if (pool == NULL || result == NULL || !isfinite(now))
		return MM_ERR_ARGUMENT;
	if (pool->cand != NULL)
	{
		if (pool->key != pool->cand_key || pool->nkeys != pool->ncand_rows)
			return MM_ERR_ARGUMENT;
		/* a bad row, or no memory: as it says */
		st = mm_filter_assign(pool, now);
		if (st != MM_OK)
			return st;
	}
	st = rows_checked ? check_waits(pool, result, now) : check_pool(cfg, pool, result, now);
	if (st != MM_OK)
		return st;
	prev = pool->stepped_at;
	pool->stepped_at = now;
	if (pool->ntickets == 0)
	{
		if (cfg->algorithm == MM_ALGO_DIFFERENCE_WAIT)
			pool->ngroups = 0;
		result->deadline = INFINITY;
		return MM_OK;
	}

	if (pool->block != NULL && mm_exclude_check(pool) != MM_OK)
		st = MM_ERR_ARGUMENT;
	else if (pool->block != NULL && mm_pool_keyed(pool))
		st = mm_keyed_step(cfg, pool, prev, now, result, exclude_part);
	else if (pool->block != NULL)
		st = exclude_part(mm_key_config(cfg, pool, &local), pool, prev, now, result);
	else
		st = run_step(cfg, pool, prev, now, result);
	if (st != MM_OK)
	{
		result->nmatches = 0;
		result->nexpired = 0;
	}
	/*
	 * block lists and intersect filters: mm_next_deadline works it out;
	 * with intersect filters the sub-pools' own deadlines hold as long as
	 * the tickets left keep their keys (mm_step_checked)
	 */
	if (cand_deadline != NULL)
		*cand_deadline = st == MM_OK && pool->cand != NULL && pool->block == NULL
			? result->deadline : NAN;
	if (st != MM_OK || pool->block != NULL || pool->cand != NULL)
		result->deadline = NAN;
	return st;
}

/* Run the configured algorithm on the pool at time now. */
MMStatus
mm_step(const MMConfig *cfg, MMPool *pool, double now, MMResult *result)
{
	if (result != NULL)
	{
		result->nmatches = 0;
		result->nexpired = 0;
		result->deadline = NAN;
	}
	if (mm_config_check(cfg) != MM_OK)
		return MM_ERR_ARGUMENT;
	return step_at(cfg, pool, now, result, false, NULL);
}

/* See mm_internal.h. */
bool
mm_pool_plain(const MMConfig *cfg, const MMPool *pool)
{
	return pool->solo && pool->key == NULL && pool->cand == NULL &&
		pool->block == NULL && cfg->roles.n == 0 && !mm_smaller_active(cfg);
}

/*
 * See mm_internal.h; cfg checked with mm_config_check.  On a plain pool
 * mm_next_deadline is the algorithm's: no keys, filters to relax,
 * block lists or parties.
 */
double
mm_plain_deadline(const MMConfig *cfg, const MMPool *pool)
{
	return pool->ntickets > 0 ? algorithms[cfg->algorithm].next_deadline(cfg, pool) : INFINITY;
}

/* See mm_internal.h. */
double
mm_pool_horizon(const MMPool *pool)
{
	return pool->horizon != 0 ? pool->horizon : INFINITY;
}

/* See mm_internal.h; cfg checked with mm_config_check. */
bool
mm_step_idle(const MMConfig *cfg, const MMPool *pool, double now, double *deadline)
{
	const MMAlgorithmEntry *a = &algorithms[cfg->algorithm];

	if (a->idle == NULL || pool->ntickets <= 0 ||
		!waits_finite(pool, now) || !a->idle(cfg, pool, now))
		return false;
	*deadline = mm_plain_deadline(cfg, pool);
	return true;
}

/* mm_step for mm_simulate; see mm_internal.h. */
MMStatus
mm_step_checked(const MMConfig *cfg, MMPool *pool, double now, MMResult *result,
				double *cand_deadline)
{
	return step_at(cfg, pool, now, result, true, cand_deadline);
}

/*
 * The earliest time at which a step without new arrivals would act, as
 * the configured algorithm tells (at the latest the oldest ticket's
 * timeout).
 */
double
mm_next_deadline(const MMConfig *cfg, const MMPool *pool)
{
	MMConfig	local;
	double		d;

	if (cfg == NULL || pool == NULL || pool->ntickets <= 0 ||
		pool->tickets == NULL)
		return INFINITY;
	if ((int) cfg->algorithm < 0 || (int) cfg->algorithm >= NUM_ALGORITHMS)
		return mm_timeout_deadline(cfg, pool);
	/* intersect filters: the keys a step now would assign */
	if (pool->cand != NULL &&
		(pool->key != pool->cand_key || pool->nkeys != pool->ncand_rows ||
		 mm_filter_assign(pool, pool->stepped_at) != MM_OK))
		return mm_timeout_deadline(cfg, pool);
	/* block lists: each key's sub-pool with the levels of the last step */
	if (pool->block != NULL && mm_exclude_check(pool) != MM_OK)
		return mm_timeout_deadline(cfg, pool);
	if (pool->block != NULL && mm_pool_keyed(pool))
		d = mm_keyed_deadline(cfg, pool, exclude_part_deadline);
	else if (pool->block != NULL)
		d = exclude_part_deadline(mm_key_config(cfg, pool, &local), pool);
	else
		d = pool_deadline(cfg, pool);

	/*
	 * parties and roles: a match the algorithm wants at once again (its
	 * last one dissolved, mm_compose) is looked for again after a
	 * fiftieth of max_wait, rather than at once over and over
	 */
	if (d <= pool->stepped_at && mm_compose_active(cfg, pool))
	{
		double		t = mm_timeout_deadline(cfg, pool);

		d = pool->stepped_at + cfg->max_wait / MM_COMPOSE_RETRY;
		/* on a clock so large that the fiftieth rounds away: the next instant */
		if (!(d > pool->stepped_at))
			d = nextafter(pool->stepped_at, INFINITY);
		if (t > pool->stepped_at && t < d)
			d = t;
	}
	return d;
}

/*
 * Drop the tickets a step matched or expired, keeping arrival order.  The
 * group indices of the remaining tickets point into pool->groups, which
 * the step already compacted, so they stay valid as they are.  Entries
 * of result outside the pool are ignored.
 */
void
mm_pool_compact(MMPool *pool, const MMResult *result)
{
	int			n;
	int			w = 0;

	if (pool == NULL || result == NULL || pool->ntickets <= 0 ||
		pool->tickets == NULL)
		return;
	if (result->nmatches == 0 && result->nexpired == 0)
		return;					/* most steps of a simulation */
	n = pool->ntickets;

	/* mark in place: the marked tickets are about to disappear anyway */
	for (int j = 0; j < result->nmatches; j++)
	{
		const MMMatch *m = &result->matches[j];

		for (int i = 0; i < m->nmembers; i++)
		{
			int			idx = result->members[m->first + i];

			if (idx >= 0 && idx < n)
				pool->tickets[idx].group = INT32_MIN;
		}
	}
	for (int j = 0; j < result->nexpired; j++)
	{
		int			idx = result->expired[j];

		if (idx >= 0 && idx < n)
			pool->tickets[idx].group = INT32_MIN;
	}
	for (int i = 0; i < n; i++)
		if (pool->tickets[i].group != INT32_MIN)
			pool->tickets[w++] = pool->tickets[i];
	pool->ntickets = w;
}
