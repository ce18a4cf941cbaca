/*
 * recheck.c
 *		The recheck grid of window, cluster and optimize: the instants that
 *		are whole multiples of cfg->recheck on the caller's absolute clock.
 */
#include "mm_internal.h"

#include <math.h>

/*
 * The recheck grid: the instants epoch + t that are whole multiples of
 * recheck on the caller's absolute clock (pool->epoch is the absolute time
 * of t = 0).  grid_index(t) is the number of the last instant at or before
 * t; it is computed on the same expression as mm_recheck_next, so that a
 * step at that instant counts it whatever the rounding.
 */
static double
grid_index(const MMConfig *cfg, const MMPool *pool, double t)
{
	double		g = floor((pool->epoch + t) / cfg->recheck);

	if ((g + 1) * cfg->recheck - pool->epoch <= t)
		g += 1;
	else if (g * cfg->recheck - pool->epoch > t)
		g -= 1;
	return g;
}

/* How many grid instants lie in (arrival, now]. */
double
mm_recheck_count(const MMConfig *cfg, const MMPool *pool, double arrival, double now)
{
	if (!(now > arrival))
		return 0;
	return grid_index(cfg, pool, now) - grid_index(cfg, pool, arrival);
}

/* The first grid instant after the pool's last step. */
double
mm_recheck_next(const MMConfig *cfg, const MMPool *pool)
{
	double		t = (grid_index(cfg, pool, pool->stepped_at) + 1) * cfg->recheck - pool->epoch;

	/* beyond the precision of the clock no later instant can be told apart */
	return t > pool->stepped_at ? t : INFINITY;
}

/* The m-th grid instant after t (m >= 1), as mm_recheck_count counts them. */
double
mm_recheck_after(const MMConfig *cfg, const MMPool *pool, double t, double m)
{
	return (grid_index(cfg, pool, t) + m) * cfg->recheck - pool->epoch;
}

/* The last grid instant at or before t. */
double
mm_recheck_last(const MMConfig *cfg, const MMPool *pool, double t)
{
	return grid_index(cfg, pool, t) * cfg->recheck - pool->epoch;
}

/*
 * The oldest ticket's timeout, or the first grid instant after the pool's
 * last step if sooner and k tickets wait (fewer can only time out); the
 * next deadline of cluster and optimize.
 */
double
mm_recheck_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		t = pool->tickets[0].arrival + cfg->max_wait;
	double		w = INFINITY;

	if (pool->ntickets >= mm_config_k(cfg))
		w = mm_recheck_next(cfg, pool);
	return w < t ? w : t;
}
