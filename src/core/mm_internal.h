/*
 * mm_internal.h
 *		Declarations shared between the core's own files; not part of the
 *		interface that mm_core.h gives the PostgreSQL side.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "mm_core.h"

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
