/*
 * cost.c
 *		Schlup's cost of a game (eq. 1) and the criteria's factors in it.
 */
#include "mm_core.h"

#include <math.h>

/* f_d = k * weight[d] / sum(weight), or k / D when every weight is 0. */
void
mm_criteria_factors(const MMConfig *cfg, double *f)
{
	int			dims = cfg->criteria.n + 1;
	int			k = mm_config_k(cfg);
	double		sum = 0;

	for (int d = 0; d < dims; d++)
		sum += cfg->criteria.weight[d];
	for (int d = 0; d < dims; d++)
		f[d] = sum > 0 ? k * cfg->criteria.weight[d] / sum : (double) k / dims;
}

/*
 * Eq. 1 for one game.  q_d is the spread of criterion d among the real
 * players, or 1 as soon as a computer player takes part.
 */
MMStatus
mm_game_cost(int k, int n, int ncriteria, const double *criteria,
			 const double *weights, const double *waits, double max_wait,
			 MMCost *out)
{
	int			bots = k - n;
	double		criteria_cost = 0.0;
	double		wait_cost = 0.0;

	if (k < 2 || n < 1 || n > k || ncriteria < 1 || out == NULL ||
		criteria == NULL || waits == NULL ||
		!(max_wait > 0) || !isfinite(max_wait))
		return MM_ERR_ARGUMENT;

	for (int d = 0; d < ncriteria; d++)
	{
		double		f = weights ? weights[d] : (double) k / ncriteria;
		double		q;

		if (!isfinite(f) || f < 0)
			return MM_ERR_ARGUMENT;
		if (bots > 0)
			q = 1.0;
		else
		{
			double		lo = criteria[d];
			double		hi = criteria[d];

			for (int i = 1; i < n; i++)
			{
				double		v = criteria[(size_t) i * ncriteria + d];

				if (v < lo)
					lo = v;
				if (v > hi)
					hi = v;
			}
			q = hi - lo;
		}
		criteria_cost += f * q;
	}

	for (int i = 0; i < n; i++)
	{
		if (!(waits[i] >= 0) || !isfinite(waits[i]))
			return MM_ERR_ARGUMENT;
		wait_cost += waits[i] / max_wait;
	}
	wait_cost += bots;			/* each computer player counts max_wait */

	out->criteria = criteria_cost;
	out->wait = wait_cost;
	out->total = criteria_cost + wait_cost;
	return MM_OK;
}
