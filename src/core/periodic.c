/*
 * periodic.c
 *		The periodic algorithm (Schlup, 4.2) and its automatic batch size
 *		(eq. 6).
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>

/* Pools up to this size sort their batches in a buffer on the stack. */
#define PERIODIC_STACK 64

/* A ticket index with the key it is sorted by. */
typedef struct KeyedIndex
{
	double		key;
	int			idx;
} KeyedIndex;

/* Order KeyedIndex by key, then by index (arrival order). */
static int
keyed_cmp(const void *a, const void *b)
{
	const KeyedIndex *x = a;
	const KeyedIndex *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Sort the cnt tickets from start by rating (ties by arrival) and match
 * every k consecutive ones; cnt is a multiple of k.  buf has cnt entries.
 */
static void
match_by_rating(const MMPool *pool, MMResult *res, int start, int cnt, int k,
				KeyedIndex *buf)
{
	int			idx[MM_MAX_K];

	for (int i = 0; i < cnt; i++)
	{
		buf[i].key = pool->tickets[start + i].rating;
		buf[i].idx = start + i;
	}
	if (cnt <= 32)
	{
		/* batches are small: an insertion sort, without a call per comparison */
		for (int i = 1; i < cnt; i++)
		{
			KeyedIndex	v = buf[i];
			int			p = i;

			for (; p > 0 && keyed_cmp(&buf[p - 1], &v) > 0; p--)
				buf[p] = buf[p - 1];
			buf[p] = v;
		}
	}
	else
		qsort(buf, cnt, sizeof(KeyedIndex), keyed_cmp);
	for (int g = 0; g < cnt; g += k)
	{
		for (int j = 0; j < k; j++)
			idx[j] = buf[g + j].idx;
		mm_add_match(res, idx, k, k);
	}
}

/* The batch size: the configured one, or eq. 6's. */
static int
batch_of(const MMConfig *cfg)
{
	return cfg->periodic.batch > 0 ? cfg->periodic.batch : mm_auto_batch(cfg);
}

/* Idle: no full batch, and the oldest has not timed out. */
bool
mm_periodic_idle(const MMConfig *cfg, const MMPool *pool, double now)
{
	return pool->ntickets < batch_of(cfg) &&
		!mm_timed_out(&pool->tickets[0], now, cfg->max_wait);
}

/*
 * periodic (4.2): every full batch of the n oldest is sorted by rating and
 * cut into games of k.  When the oldest remaining ticket times out the
 * period ends early: the oldest m - m mod k are matched the same way and
 * the newest m mod k wait, unless one of them timed out too.
 */
MMStatus
mm_periodic_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				 MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			n = pool->ntickets;
	int			nb = batch_of(cfg);
	int			i = 0;
	KeyedIndex	small[PERIODIC_STACK];
	KeyedIndex *buf = small;

	(void) prev;
	if (n == 0 || mm_periodic_idle(cfg, pool, now))
		return MM_OK;			/* nothing to do: the usual case */

	if (n > PERIODIC_STACK)
		buf = mm_malloc(sizeof(KeyedIndex) * (size_t) n);
	if (buf == NULL)
		return MM_ERR_NOMEM;
	for (; n - i >= nb; i += nb)
		match_by_rating(pool, res, i, nb, k, buf);
	if (i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait))
	{
		int			m = n - i;
		int			g = m - m % k;

		match_by_rating(pool, res, i, g, k, buf);
		mm_timeout_rest(cfg, pool, now, res, i + g);
	}
	if (buf != small)
		mm_free(buf);
	return MM_OK;
}

/* Eq. 5: expected cost per game of periodic with batch n. */
static double
periodic_cost(int k, double n, double a, double max_wait)
{
	return (double) k * (k - 1) / (n + 1) + k * (n - 1) / (2 * a * max_wait);
}

/*
 * Periodic batch from eq. 6: the multiple of k just below or just above
 * n_opt (at least k) with the lower eq. 5 cost, the smaller on a tie;
 * k when the arrival rate is unknown (0).
 */
int
mm_auto_batch(const MMConfig *cfg)
{
	int			k;
	double		a;
	double		t;
	double		nopt;
	double		lo;
	double		hi;

	if (cfg == NULL)
		return 0;
	k = mm_config_k(cfg);
	a = cfg->arrival_rate;
	t = cfg->max_wait;
	if (k < 1)
		return 0;
	if (!(a > 0) || !(t > 0) || !isfinite(a) || !isfinite(t))
		return k;
	nopt = sqrt(a) * sqrt(2.0 * (k - 1)) * sqrt(t) - 1.0;
	if (!(nopt <= MM_AUTO_MAX))
		nopt = MM_AUTO_MAX;
	lo = floor(nopt / k) * k;
	hi = ceil(nopt / k) * k;
	if (lo < k)
		lo = k;
	if (hi < k)
		hi = k;
	/* the cap holds after rounding to a multiple of k too */
	if (hi > floor(MM_AUTO_MAX / k) * k)
		hi = floor(MM_AUTO_MAX / k) * k;
	if (lo > hi)
		lo = hi;
	if (periodic_cost(k, hi, a, t) < periodic_cost(k, lo, a, t))
		return (int) hi;
	return (int) lo;
}
