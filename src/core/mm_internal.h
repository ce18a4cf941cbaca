/*
 * mm_internal.h
 *		Declarations shared between the core's own files; not part of the
 *		interface that mm_core.h gives the PostgreSQL side.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "mm_core.h"

/*
 * Whether a ticket has waited max_wait at time now.  Written as the
 * deadline mm_next_deadline reports, so that a step at that deadline sees
 * the timeout whatever the rounding.
 */
static inline int
mm_timed_out(const MMTicket *t, double now, double max_wait)
{
	return now >= t->arrival + max_wait;
}

/* Append a match of the n tickets idx[0 .. n) and k - n computer players. */
extern void mm_add_match(MMResult *res, const int *idx, int n, int k);

/*
 * Decide one window step (mm_window.c), and the next time a ticket's
 * window widens after the pool's last step (INFINITY when none will).
 */
extern MMStatus mm_window_step(const MMConfig *cfg, const MMPool *pool,
							   double now, MMResult *result);
extern double mm_window_next_widening(const MMConfig *cfg, const MMPool *pool);

/* Decide one cluster step (mm_cluster.c). */
extern MMStatus mm_cluster_step(const MMConfig *cfg, const MMPool *pool,
								double now, MMResult *result);

/*
 * The recheck grid (mm_window.c): instants that are whole multiples of
 * cfg->recheck on the absolute clock (pool->epoch + t).  The number of
 * instants in (arrival, now], and the first instant after the pool's last
 * step (INFINITY beyond the clock's precision).
 */
extern double mm_recheck_count(const MMConfig *cfg, const MMPool *pool,
							   double arrival, double now);
extern double mm_recheck_next(const MMConfig *cfg, const MMPool *pool);
/* The last grid instant at or before t. */
extern double mm_recheck_last(const MMConfig *cfg, const MMPool *pool, double t);

/*
 * Decide one optimize step (mm_optimize.c): prev is the time of the
 * pool's previous step.  A round is held when a ticket has timed out, or
 * when a recheck instant lies in (prev, now] at which k tickets waited.
 */
extern MMStatus mm_optimize_step(const MMConfig *cfg, const MMPool *pool,
								 double prev, double now, MMResult *result);

/*
 * mm_optimize_round with every climb (the first start's and each
 * restart's) stopped after max_swaps improving swaps (< 0: no limit, 0:
 * the starts as they are).  For the benchmark.
 */
extern MMStatus mm_optimize_search(const MMConfig *cfg, const MMPool *pool,
								   double now, MMResult *res, double *score,
								   int *climbs, int max_swaps);

/*
 * Decide one difference_wait step (mm_diffwait.c).  Like the other
 * algorithms in mm_algo.c it only fills in the membership of matches and
 * the expiries (mm_step adds teams and costs); it also rewrites the pool's
 * provisional groups.
 */
extern MMStatus mm_difference_wait_step(const MMConfig *cfg, MMPool *pool,
										double now, MMResult *result);

/*
 * Check an arrival stream: finite times, ratings in [0, 1], sorted by
 * (arrival, id).  MM_ERR_ARGUMENT otherwise.
 */
extern MMStatus mm_check_arrivals(const MMArrival *arrivals, int n);

#endif							/* MM_INTERNAL_H */
