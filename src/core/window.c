/*
 * window.c
 *		The window algorithm, after hplus0603's rules in the "Matching
 *		players in an online 1vs1 game" thread: every ticket accepts
 *		partners within a window around its own rating that widens with its
 *		wait (in steps, up to a cap), and a group forms only when every
 *		member's window holds every other member.
 *
 * A step serves the tickets oldest first.  For a ticket a it sweeps the
 * rating axis outwards from a (the unmatched tickets, kept sorted in a
 * linked list) while the distance stays within a's window, keeping the
 * tickets whose own window holds a, up to k - 1 on each side; among the
 * runs of k consecutive kept tickets that contain a, the one of least
 * rating spread in which every member accepts every other becomes a
 * match.  Timed-out tickets that found no group play alone with computer
 * players, or expire.
 *
 * With percentile windows a ticket's position is its rating rank among
 * the tickets waiting at the step's start, scaled to [0, 1], instead of
 * its normalised rating.  Two tickets whose players met recently (the
 * caller's pool->met) count as rematch_penalty further apart when their
 * windows are compared, so a rematch needs wider windows (a longer wait),
 * or never happens when the penalty is infinite.
 *
 * Windows widen at the instants that are whole multiples of recheck on the
 * caller's clock (every window at once, so a queue is looked at once per
 * recheck, however many tickets wait); a step decides on the windows of
 * its time, and mm_window_deadline names the next instant after the
 * pool's last step, so that a caller stepping at every arrival and
 * deadline sees every change (doc/algorithms.md).
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A ticket's position on the axis with its index, for sorting. */
typedef struct AxisEntry
{
	double		x;
	int			idx;
} AxisEntry;

/* Order by position, then index (arrival order). */
static int
axis_cmp(const void *a, const void *b)
{
	const AxisEntry *l = a;
	const AxisEntry *r = b;

	if (l->x < r->x)
		return -1;
	if (l->x > r->x)
		return 1;
	return (l->idx > r->idx) - (l->idx < r->idx);
}

/* window's own parameters (see mm_config_check). */
MMStatus
mm_window_check(const MMConfig *cfg)
{
	if (!(cfg->window.width >= 0 && cfg->window.width <= 1) ||
		!(cfg->window.max >= cfg->window.width && cfg->window.max <= 1) ||
		!(cfg->window.widen >= 0 && cfg->window.widen <= 1) ||
		!(cfg->recheck >= 1e-3 && cfg->recheck <= 86400) ||
		(cfg->window.percentile != 0 && cfg->window.percentile != 1) ||
		!(cfg->window.rematch_penalty >= 0) || cfg->window.rematch_last < 0)
		return MM_ERR_ARGUMENT;
	return MM_OK;
}

/* A ticket's window at time now. */
static double
window_at(const MMConfig *cfg, const MMPool *pool, double arrival, double now)
{
	double		w = cfg->window.width + cfg->window.widen * cfg->recheck *
		mm_recheck_count(cfg, pool, arrival, now);

	return w < cfg->window.max ? w : cfg->window.max;
}

/* The working state of one window step. */
typedef struct WindowStep
{
	const MMConfig *cfg;
	const MMPool *pool;
	int			k;
	double	   *x;				/* ticket -> position on the axis */
	double	   *w;				/* ticket -> window */
	int		   *prev;			/* the unmatched tickets in axis order, */
	int		   *next;			/* as a doubly linked list of indices */
	int		   *kept;			/* 2k - 1 entries: a sweep's kept tickets */
	char	   *taken;			/* ticket -> matched */
	/* with rematch penalties: the tickets each ticket met, and run marks */
	int		   *met_first;		/* ticket i's partners: met_to[met_first[i] .. met_first[i + 1]) */
	int		   *met_to;
	int		   *mark;			/* ticket -> the stamp of the last run holding it */
	int			stamp;
} WindowStep;

/*
 * With rematch penalties: every waiting ticket's list of the waiting
 * tickets its players met (both ways), so that a run's met pairs are
 * found from its members rather than by looking up each of its k^2 / 2
 * pairs.  False when memory runs short.
 */
static bool
index_met_pairs(WindowStep *W)
{
	const MMPool *pool = W->pool;
	int			n = pool->ntickets;
	int		   *ends;
	int			npairs;

	W->met_first = mm_calloc((size_t) n + 1, sizeof(int));
	W->met_to = mm_malloc_array((size_t) pool->nmet * 2, sizeof(int));
	W->mark = mm_calloc((size_t) n, sizeof(int));
	ends = mm_malloc_array((size_t) pool->nmet * 2, sizeof(int));
	npairs = ends != NULL ? mm_met_pair_tickets(pool, ends, NULL) : -1;
	if (W->met_first == NULL || W->met_to == NULL || W->mark == NULL || npairs < 0)
	{
		mm_free(ends);
		return false;
	}
	/* a counting sort of the pairs' ends by ticket */
	for (int e = 0; e < 2 * npairs; e++)
		W->met_first[ends[e] + 1]++;
	for (int i = 0; i < n; i++)
		W->met_first[i + 1] += W->met_first[i];
	/* mark (all 0 now) serves as each ticket's fill cursor, then is reset */
	for (int i = 0; i < n; i++)
		W->mark[i] = W->met_first[i];
	for (int e = 0; e < 2 * npairs; e += 2)
	{
		W->met_to[W->mark[ends[e]]++] = ends[e + 1];
		W->met_to[W->mark[ends[e + 1]]++] = ends[e];
	}
	memset(W->mark, 0, sizeof(int) * (size_t) n);
	mm_free(ends);
	return true;
}

/*
 * The rematch penalty between tickets i and j: 0 unless their players met
 * (found in i's list, so that the sweep and run_accepted of one step read
 * the same pairs).
 */
static double
penalty(const WindowStep *W, int i, int j)
{
	if (W->met_first == NULL)
		return 0;
	for (int e = W->met_first[i]; e < W->met_first[i + 1]; e++)
		if (W->met_to[e] == j)
			return W->cfg->window.rematch_penalty;
	return 0;
}

/*
 * Whether the run of tickets run[0 .. k) (sorted by position) is a group
 * every member of which accepts every other: each member's window holds
 * the run's farthest end, and with rematch penalties each met pair's
 * distance plus the penalty.
 */
static int
run_accepted(WindowStep *W, const int *run, int k)
{
	const double *x = W->x;
	const double *w = W->w;
	double		lo = x[run[0]];
	double		hi = x[run[k - 1]];

	for (int i = 0; i < k; i++)
	{
		double		xi = x[run[i]];
		double		need = hi - xi > xi - lo ? hi - xi : xi - lo;

		if (need > w[run[i]])
			return 0;
	}
	if (W->met_first == NULL)
		return 1;
	/* every pair met is at its distance plus the penalty (a ban: INFINITY) */
	W->stamp++;
	for (int i = 0; i < k; i++)
		W->mark[run[i]] = W->stamp;
	for (int i = 0; i < k; i++)
	{
		int			a = run[i];

		for (int e = W->met_first[a]; e < W->met_first[a + 1]; e++)
		{
			int			b = W->met_to[e];
			double		d;

			if (W->mark[b] != W->stamp)
				continue;
			d = fabs(x[a] - x[b]) + W->cfg->window.rematch_penalty;
			if (d > w[a] || d > w[b])
				return 0;
		}
	}
	return 1;
}

/*
 * Every ticket's position x[i] (its rating, or its rating rank scaled to
 * [0, 1]), and axis: the tickets sorted by it.
 */
static void
axis_positions(const MMConfig *cfg, const MMPool *pool, AxisEntry *axis, double *x)
{
	int			n = pool->ntickets;

	for (int i = 0; i < n; i++)
	{
		axis[i].x = pool->tickets[i].rating;
		axis[i].idx = i;
	}
	qsort(axis, n, sizeof(AxisEntry), axis_cmp);
	for (int r = 0, tie_start = 0, tie_end = 0; r < n; r++)
	{
		/* equal ratings share their mean rank (axis[tie_start .. tie_end)) */
		if (r >= tie_end)
		{
			tie_start = r;
			for (tie_end = r + 1; tie_end < n && axis[tie_end].x == axis[r].x; tie_end++)
				;
		}
		x[axis[r].idx] = !cfg->window.percentile ? axis[r].x :
			n > 1 ? (tie_start + tie_end - 1) / 2.0 / (n - 1) : 0.0;
	}
}

/*
 * Every ticket's position and window at time now, and the list of tickets
 * in axis order.
 */
static void
place_on_axis(WindowStep *W, AxisEntry *axis, double now)
{
	const MMPool *pool = W->pool;
	int			n = pool->ntickets;

	axis_positions(W->cfg, pool, axis, W->x);
	for (int r = 0; r < n; r++)
	{
		int			i = axis[r].idx;

		W->w[i] = window_at(W->cfg, pool, pool->tickets[i].arrival, now);
		W->prev[i] = r > 0 ? axis[r - 1].idx : -1;
		W->next[i] = r + 1 < n ? axis[r + 1].idx : -1;
	}
}

/*
 * Sweep outwards from a within its window, keeping the tickets that
 * accept a: up to k - 1 on each side, nearest first.  W->kept ends up in
 * axis order: the left side (reversed), a, the right side.  Returns the
 * number kept; a's place goes to *at.
 */
static int
sweep(WindowStep *W, int a, int *at)
{
	const double *x = W->x;
	const double *w = W->w;
	int		   *kept = W->kept;
	int			k = W->k;
	int			nleft = 0;
	int			nkept;

	for (int c = W->prev[a]; c >= 0 && x[a] - x[c] <= w[a] && nleft < k - 1; c = W->prev[c])
	{
		double		d = x[a] - x[c] + penalty(W, a, c);

		if (d <= w[c] && d <= w[a])
			kept[nleft++] = c;
	}
	for (int i = 0; i < nleft / 2; i++)
	{
		int			t = kept[i];

		kept[i] = kept[nleft - 1 - i];
		kept[nleft - 1 - i] = t;
	}
	*at = nleft;
	kept[nleft] = a;
	nkept = nleft + 1;
	for (int c = W->next[a]; c >= 0 && x[c] - x[a] <= w[a] && nkept - nleft - 1 < k - 1; c = W->next[c])
	{
		double		d = x[c] - x[a] + penalty(W, a, c);

		if (d <= w[c] && d <= w[a])
			kept[nkept++] = c;
	}
	return nkept;
}

/*
 * Among the runs of k kept tickets that contain the one at place at, the
 * accepted one of least rating spread: its first place, or -1.
 */
static int
tightest_run(WindowStep *W, int nkept, int at)
{
	const MMTicket *t = W->pool->tickets;
	const int  *kept = W->kept;
	int			k = W->k;
	int			best = -1;
	double		best_spread = INFINITY;

	for (int s = at - (k - 1) < 0 ? 0 : at - (k - 1); s <= at && s + k <= nkept; s++)
	{
		double		spread = t[kept[s + k - 1]].rating - t[kept[s]].rating;

		if (spread < best_spread &&
			run_accepted(W, kept + s, k))
		{
			best = s;
			best_spread = spread;
		}
	}
	return best;
}

/* The k kept tickets from place s become a match and leave the axis. */
static void
take_run(WindowStep *W, int s, MMResult *res)
{
	mm_add_match(res, W->kept + s, W->k, W->k);
	for (int i = s; i < s + W->k; i++)
	{
		int			c = W->kept[i];

		W->taken[c] = 1;
		if (W->prev[c] >= 0)
			W->next[W->prev[c]] = W->next[c];
		if (W->next[c] >= 0)
			W->prev[W->next[c]] = W->prev[c];
	}
}

MMStatus
mm_window_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
			   MMResult *res)
{
	int			n = pool->ntickets;
	int			k = mm_config_k(cfg);
	WindowStep	W;
	AxisEntry  *axis = mm_malloc(sizeof(AxisEntry) * (size_t) n);
	MMStatus	st = MM_OK;

	(void) prev;
	W.cfg = cfg;
	W.pool = pool;
	W.k = k;
	W.x = mm_malloc(sizeof(double) * (size_t) n);
	W.w = mm_malloc(sizeof(double) * (size_t) n);
	W.prev = mm_malloc(sizeof(int) * (size_t) n);
	W.next = mm_malloc(sizeof(int) * (size_t) n);
	W.kept = mm_malloc(sizeof(int) * (size_t) (2 * k - 1));
	W.taken = mm_calloc((size_t) n, 1);
	W.met_first = W.met_to = W.mark = NULL;
	W.stamp = 0;
	if (axis == NULL || W.x == NULL || W.w == NULL ||
		W.prev == NULL || W.next == NULL || W.kept == NULL || W.taken == NULL ||
		(pool->nmet > 0 && cfg->window.rematch_penalty != 0 && !index_met_pairs(&W)))
	{
		st = MM_ERR_NOMEM;
		goto done;
	}

	place_on_axis(&W, axis, now);
	for (int a = 0; a < n; a++)
	{
		int			at;
		int			nkept;
		int			best;

		if (mm_interrupted())
		{
			st = MM_ERR_INTERRUPTED;
			goto done;
		}
		if (W.taken[a])
			continue;
		nkept = sweep(&W, a, &at);
		best = tightest_run(&W, nkept, at);
		if (best >= 0)
			take_run(&W, best, res);
	}

	/* who timed out without a group plays alone with bots, or expires */
	for (int i = 0; i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
	{
		if (W.taken[i])
			continue;
		if (cfg->on_timeout == MM_TIMEOUT_BOTS)
			mm_add_match(res, &i, 1, k);
		else
			res->expired[res->nexpired++] = i;
	}

done:
	mm_free(axis);
	mm_free(W.x);
	mm_free(W.w);
	mm_free(W.prev);
	mm_free(W.next);
	mm_free(W.kept);
	mm_free(W.taken);
	mm_free(W.met_first);
	mm_free(W.met_to);
	mm_free(W.mark);
	return st;
}

/*
 * The first widening after the pool's last step: the next grid instant,
 * unless every window is at its cap (INFINITY then).
 */
static double
next_widening(const MMConfig *cfg, const MMPool *pool)
{
	if (!(cfg->window.widen > 0))
		return INFINITY;
	for (int i = 0; i < pool->ntickets; i++)
		if (window_at(cfg, pool, pool->tickets[i].arrival, pool->stepped_at) < cfg->window.max)
			return mm_recheck_next(cfg, pool);
	return INFINITY;
}

/*
 * The first time at which the window of a ticket that arrived at a holds
 * distance d (window_at's widenings, on its expression): -INFINITY when
 * its first window does, INFINITY when no window before its timeout does.
 */
static double
window_reaches(const MMConfig *cfg, const MMPool *pool, double a, double d)
{
	double		step = cfg->window.widen * cfg->recheck;
	double		lo = 1,
				hi = floor(cfg->max_wait / cfg->recheck) + 4;

	if (d <= cfg->window.width)
		return -INFINITY;
	if (d > cfg->window.max || !(step > 0))
		return INFINITY;
	/*
	 * The least count of widenings m whose window holds d, searched on
	 * window_at's own expression (it rises with m): a quotient would miss
	 * the ulps the sum rounds by.  Beyond a count the ticket cannot reach
	 * before its timeout, it times out first.
	 */
	if (cfg->window.width + step * hi < d)
		return INFINITY;
	while (lo < hi)
	{
		double		mid = floor((lo + hi) / 2);

		if (cfg->window.width + step * mid >= d)
			hi = mid;
		else
			lo = mid + 1;
	}
	return mm_recheck_after(cfg, pool, a, lo);
}

/*
 * A time no later than the first at which any group can be admissible: a
 * member's window holds the others, so at least its nearest neighbour on
 * the axis (rematch penalties only add), and a group needs k such
 * members; the k-th earliest of the tickets' window_reaches (n >= k).
 * -INFINITY when memory runs short.
 */
static double
group_bound(const MMConfig *cfg, const MMPool *pool)
{
	int			n = pool->ntickets;
	int			k = mm_config_k(cfg);
	AxisEntry  *axis = mm_malloc(sizeof(AxisEntry) * (size_t) n);
	double	   *x = mm_malloc(sizeof(double) * (size_t) n);
	double		first[MM_MAX_K];	/* the k earliest so far, ascending */
	int			nfirst = 0;

	if (axis == NULL || x == NULL)
	{
		mm_free(axis);
		mm_free(x);
		return -INFINITY;
	}
	axis_positions(cfg, pool, axis, x);
	for (int r = 0; r < n; r++)
	{
		double		xr = x[axis[r].idx];
		double		d = INFINITY;
		double		ready;
		int			j;

		if (r > 0)
			d = xr - x[axis[r - 1].idx];
		if (r + 1 < n && x[axis[r + 1].idx] - xr < d)
			d = x[axis[r + 1].idx] - xr;
		ready = window_reaches(cfg, pool, pool->tickets[axis[r].idx].arrival, d);
		if (nfirst == k && !(ready < first[k - 1]))
			continue;
		j = nfirst < k ? nfirst++ : k - 1;
		for (; j > 0 && first[j - 1] > ready; j--)
			first[j] = first[j - 1];
		first[j] = ready;
	}
	mm_free(axis);
	mm_free(x);
	return first[k - 1];
}

/*
 * The oldest ticket's timeout, or the first widening after the pool's last
 * step if sooner (fewer than k tickets can only time out).  Widenings that
 * cannot make a group yet (group_bound) are skipped: two players whose
 * windows never reach each other wait for their timeout, not for every
 * recheck until it.
 */
double
mm_window_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		t = pool->tickets[0].arrival + cfg->max_wait;
	double		w = INFINITY;

	if (pool->ntickets >= mm_config_k(cfg))
		w = next_widening(cfg, pool);
	if (isfinite(w))
	{
		double		b = group_bound(cfg, pool);

		if (b > w)
			w = b;
	}
	return w < t ? w : t;
}
