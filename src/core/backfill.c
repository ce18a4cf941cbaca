/*
 * backfill.c
 *		Whom a backfill request takes from the waiting tickets: shared by
 *		the tick (../backfill.c) and the simulator.
 */
#include "mm_internal.h"

#include <math.h>

/* Pick tickets for a backfill request; see mm_core.h. */
int
mm_backfill_pick(const MMPool *pool, bool *taken, double lo, double hi, int32_t key,
				 int want, int *out)
{
	int			got = 0;

	for (; got < want; got++)
	{
		int			best = -1;
		double		best_add = INFINITY;

		for (int i = 0; i < pool->ntickets; i++)
		{
			const MMTicket *t = &pool->tickets[i];
			double		add;

			if (taken[i] || t->group >= 0 || t->party >= 0 || !mm_filter_may_play(pool, t->crow, key))
				continue;
			add = isfinite(lo) ? fmax(fmax(lo - t->rating, t->rating - hi), 0.0) : 0.0;
			if (add < best_add)
			{
				best = i;
				best_add = add;
				if (add == 0.0)
					break;
			}
		}
		if (best < 0)
			break;
		taken[best] = true;
		out[got] = best;
		if (isfinite(lo))
		{
			lo = fmin(lo, pool->tickets[best].rating);
			hi = fmax(hi, pool->tickets[best].rating);
		}
		else
			lo = hi = pool->tickets[best].rating;
	}
	return got;
}
