/*
 * cluster.c
 *		The cluster algorithm, after "Replicating CS:GO Player Queueing":
 *		ratings decay toward the queue's mean with the wait, along a
 *		logistic curve, and the tickets, oldest first, join the closest
 *		cluster centroid within a threshold or open a new cluster; a full
 *		cluster (k tickets) is a match.
 *
 * The decay of a ticket that has waited tau seconds is
 *
 *		s(tau) = (1 + e^(-a m)) / (1 + e^(a (tau - m)))
 *
 * (a = steepness, m = midpoint): 1 on arrival, about 1/2 at the midpoint,
 * falling toward 0.  Its decayed position is mean + (x - mean) s(tau),
 * with x its normalised rating and mean the mean of the waiting tickets'
 * ratings at the step.  Tickets that waited equally long move toward the
 * mean together and never cross.  A newcomer is shifted as if it had
 * already waited the queue's average wait: tau = max(wait, shift).  The
 * wait counts in whole recheck periods (the recheck instants of
 * recheck.c), so the clusters only change at arrivals, departures and
 * those instants.
 *
 * A step rebuilds the clusters from the waiting tickets, so no state is
 * kept between steps.  The nearest centroid is found in buckets of width
 * threshold (a centroid within the threshold lies in the ticket's bucket
 * or a neighbour), so a step is linear in the tickets.  A cluster that
 * holds a timed-out ticket when the step ends plays with computer players
 * (on_timeout bots), or its timed-out tickets expire.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>

/* The most passes of one step (mm_cluster_step). */
#define CLUSTER_MAX_PASSES 64

/* The decay factor after tau seconds. */
double
mm_cluster_decay(const MMConfig *cfg, double tau)
{
	double		a = cfg->cluster.steepness;
	double		m = cfg->cluster.midpoint;

	return (1.0 + exp(-a * m)) / (1.0 + exp(a * (tau - m)));
}

/* cluster's own parameters (see mm_config_check). */
MMStatus
mm_cluster_check(const MMConfig *cfg)
{
	if (!(cfg->cluster.midpoint >= 0 && cfg->cluster.midpoint <= 1e9) ||
		!(cfg->cluster.steepness > 0 && cfg->cluster.steepness <= 1e3) ||
		!(cfg->cluster.threshold >= 1e-4 && cfg->cluster.threshold <= 1) ||
		!(cfg->cluster.shift >= 0 && cfg->cluster.shift <= 1e9) ||
		!(cfg->recheck >= 1e-3 && cfg->recheck <= 86400) ||
		(cfg->cluster.shift_auto != 0 && cfg->cluster.shift_auto != 1))
		return MM_ERR_ARGUMENT;
	return MM_OK;
}

/* A ticket's decayed position at time now, around mean. */
static inline double
decayed(const MMConfig *cfg, const MMPool *pool, const MMTicket *t,
		double mean, double now)
{
	double		tau = mm_recheck_count(cfg, pool, t->arrival, now) * cfg->recheck;

	if (tau < cfg->cluster.shift)
		tau = cfg->cluster.shift;
	return mean + (t->rating - mean) * mm_cluster_decay(cfg, tau);
}

/*
 * The mean rating of the tickets still waiting (not gone; NULL: all), the
 * one every position decays toward, and their count into *waiting.  The
 * next deadline sums the ratings here too, in the same order, so that its
 * positions are a step's to the last bit.
 */
static double
waiting_mean(const MMPool *pool, const char *gone, int *waiting)
{
	double		sum = 0;
	int			w = 0;

	for (int i = 0; i < pool->ntickets; i++)
		if (gone == NULL || !gone[i])
		{
			sum += pool->tickets[i].rating;
			w++;
		}
	*waiting = w;
	return w > 0 ? sum / w : 0.0;
}

/* A match of the cluster whose member list starts at m, completed with bots. */
static void
add_cluster(MMResult *res, int m, const int *next_member, int *buf, int k)
{
	int			n = 0;

	for (; m >= 0 && n < k; m = next_member[m])
		buf[n++] = m;
	mm_add_match(res, buf, n, k);
}

/*
 * The clusters of one step (at most one per ticket): centroid sums and
 * sizes, the lists of clusters by bucket of their centroid, and each
 * cluster's members as a list.
 */
typedef struct Clusters
{
	int			k;
	double		theta;			/* the threshold, also the buckets' width */
	int			nbuckets;
	int			n;				/* clusters opened */
	double	   *sum;			/* centroid sum */
	int		   *size;
	int		   *bucket_of;
	int		   *bnext;			/* bucket list, doubly linked */
	int		   *bprev;
	int		   *head;			/* bucket -> its first cluster, or -1 */
	int		   *first;			/* a cluster's members: a list */
	int		   *next_member;	/* ticket -> the next member of its cluster */
	int		   *cluster_of;		/* ticket -> its cluster */
	int		   *buf;			/* k entries: a match's members */
} Clusters;

/* The bucket of position y. */
static int
bucket_at(const Clusters *C, double y)
{
	int			b = (int) floor(y / C->theta);

	if (b >= C->nbuckets)
		b = C->nbuckets - 1;
	if (b < 0)
		b = 0;
	return b;
}

/*
 * The open cluster whose centroid is nearest to y within its bucket b and
 * the two next to it (the lowest number on a tie), or -1; its distance
 * goes to *dist.
 */
static int
nearest_cluster(const Clusters *C, double y, int b, double *dist)
{
	int			best = -1;
	double		best_d = INFINITY;

	for (int nb = b - 1; nb <= b + 1; nb++)
	{
		if (nb < 0 || nb >= C->nbuckets)
			continue;
		for (int c = C->head[nb]; c >= 0; c = C->bnext[c])
		{
			double		d = fabs(C->sum[c] / C->size[c] - y);

			if (d < best_d || (d == best_d && c < best))
			{
				best = c;
				best_d = d;
			}
		}
	}
	*dist = best_d;
	return best;
}

/* Take cluster c out of its bucket's list. */
static void
unlink_cluster(Clusters *C, int c)
{
	if (C->bprev[c] >= 0)
		C->bnext[C->bprev[c]] = C->bnext[c];
	else
		C->head[C->bucket_of[c]] = C->bnext[c];
	if (C->bnext[c] >= 0)
		C->bprev[C->bnext[c]] = C->bprev[c];
}

/* Put cluster c at the head of the list of its centroid's bucket. */
static void
link_cluster(Clusters *C, int c)
{
	int			b = bucket_at(C, C->sum[c] / C->size[c]);

	C->bucket_of[c] = b;
	C->bprev[c] = -1;
	C->bnext[c] = C->head[b];
	if (C->head[b] >= 0)
		C->bprev[C->head[b]] = c;
	C->head[b] = c;
}

/*
 * Ticket i at decayed position y joins the nearest centroid within the
 * threshold or opens a new cluster; a cluster that reaches k is a match.
 */
static void
join_cluster(Clusters *C, int i, double y, MMResult *res)
{
	double		dist;
	int			c = nearest_cluster(C, y, bucket_at(C, y), &dist);

	if (c >= 0 && dist < C->theta)
	{
		/* leave its bucket; it goes back below unless it is full */
		unlink_cluster(C, c);
	}
	else
	{
		c = C->n++;
		C->sum[c] = 0;
		C->size[c] = 0;
		C->first[c] = -1;
	}
	C->sum[c] += y;
	C->size[c]++;
	C->next_member[i] = C->first[c];
	C->first[c] = i;
	C->cluster_of[i] = c;
	if (C->size[c] == C->k)
	{
		add_cluster(res, C->first[c], C->next_member, C->buf, C->k);
		return;
	}
	link_cluster(C, c);
}

/*
 * Timed-out tickets still waiting (not gone), oldest first: with bots, the
 * open cluster holding one plays, completed with computer players; else
 * they expire.
 */
static void
settle_timeouts(Clusters *C, const MMConfig *cfg, const MMPool *pool,
				const char *gone, double now, MMResult *res)
{
	for (int i = 0; i < pool->ntickets && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
	{
		int			c = C->cluster_of[i];

		if (gone[i] || C->size[c] == C->k || C->size[c] == 0)
			continue;			/* matched, or already played with bots */
		if (cfg->on_timeout == MM_TIMEOUT_BOTS)
		{
			add_cluster(res, C->first[c], C->next_member, C->buf, C->k);
			C->size[c] = 0;
		}
		else
			res->expired[res->nexpired++] = i;
	}
}

/*
 * One pass: the clusters of the tickets still waiting (not gone), each
 * joining in arrival order at its decayed position around their mean.
 */
static MMStatus
cluster_pass(Clusters *C, const MMConfig *cfg, const MMPool *pool,
			 const char *gone, double now, MMResult *res)
{
	int			n = pool->ntickets;
	int			waiting;
	double		mean = waiting_mean(pool, gone, &waiting);

	C->n = 0;
	for (int b = 0; b < C->nbuckets; b++)
		C->head[b] = -1;
	if (waiting == 0)
		return MM_OK;
	for (int i = 0; i < n; i++)
	{
		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		if (!gone[i])
			join_cluster(C, i, decayed(cfg, pool, &pool->tickets[i], mean, now), res);
	}
	return MM_OK;
}

/* Mark gone the tickets of the matches and expiries from (m, e) on; whether any. */
static bool
mark_gone(const MMResult *res, int m, int e, char *gone)
{
	for (int j = m; j < res->nmatches; j++)
		for (int i = 0; i < res->matches[j].nmembers; i++)
			gone[res->members[res->matches[j].first + i]] = 1;
	for (int j = e; j < res->nexpired; j++)
		gone[res->expired[j]] = 1;
	return m < res->nmatches || e < res->nexpired;
}

/*
 * A step passes until its clusters are settled: the tickets that leave
 * (matched, or timed out) move the mean the others decay toward, so the
 * step passes again over those still waiting until a pass and its
 * timeouts take nobody (at most CLUSTER_MAX_PASSES).  Another step before
 * the next recheck instant, arrival or timeout then finds nothing,
 * whenever it runs, unless this one stopped at the bound, which only a
 * pool built so that each pass frees a single match reaches (unit test
 * cluster_pass_cap): the next step then goes on with the rest.
 */
MMStatus
mm_cluster_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				MMResult *res)
{
	int			n = pool->ntickets;
	Clusters	C;
	char	   *gone;
	MMStatus	st = MM_OK;

	(void) prev;
	C.k = mm_config_k(cfg);
	C.theta = cfg->cluster.threshold;
	C.nbuckets = (int) floor(1.0 / C.theta) + 1;
	C.n = 0;
	C.sum = mm_malloc(sizeof(double) * (size_t) n);
	C.size = mm_malloc(sizeof(int) * (size_t) n);
	C.bucket_of = mm_malloc(sizeof(int) * (size_t) n);
	C.bnext = mm_malloc(sizeof(int) * (size_t) n);
	C.bprev = mm_malloc(sizeof(int) * (size_t) n);
	C.first = mm_malloc(sizeof(int) * (size_t) n);
	C.next_member = mm_malloc(sizeof(int) * (size_t) n);
	C.head = mm_malloc(sizeof(int) * (size_t) C.nbuckets);
	C.cluster_of = mm_malloc(sizeof(int) * (size_t) n);
	C.buf = mm_malloc(sizeof(int) * (size_t) C.k);
	gone = mm_calloc((size_t) n, 1);
	if (C.sum == NULL || C.size == NULL || C.bucket_of == NULL || C.bnext == NULL ||
		C.bprev == NULL || C.first == NULL || C.next_member == NULL ||
		C.head == NULL || C.cluster_of == NULL || C.buf == NULL || gone == NULL)
	{
		st = MM_ERR_NOMEM;
		goto done;
	}
	for (int pass = 1;; pass++)
	{
		int			m = res->nmatches;
		int			e = res->nexpired;

		st = cluster_pass(&C, cfg, pool, gone, now, res);
		if (st != MM_OK)
			break;
		if (mark_gone(res, m, e, gone) && pass < CLUSTER_MAX_PASSES)
			continue;
		/* the last pass's clusters: their timed-out tickets */
		settle_timeouts(&C, cfg, pool, gone, now, res);
		if (!mark_gone(res, m, e, gone) || pass >= CLUSTER_MAX_PASSES)
			break;
	}

done:
	mm_free(C.sum);
	mm_free(C.size);
	mm_free(C.bucket_of);
	mm_free(C.bnext);
	mm_free(C.bprev);
	mm_free(C.first);
	mm_free(C.next_member);
	mm_free(C.head);
	mm_free(C.cluster_of);
	mm_free(C.buf);
	mm_free(gone);
	return st;
}

/* Positions of a closed pool's tickets closer than this to the threshold count as within it. */
#define CLUSTER_SKIP_MARGIN 1e-9

/* The most recheck instants the deadline passes over at once (2^52). */
#define CLUSTER_MAX_COUNT 4503599627370496.0

bool		mm_cluster_every_recheck = false;

/* The doubles at a and b, in order. */
static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/*
 * Whether at instant t every ticket still lies within slack of its
 * position y[] at the first recheck instant after the last step (a ticket
 * only moves toward the mean as it waits: then it did at every instant
 * between too).
 */
static bool
moved_within(const MMConfig *cfg, const MMPool *pool, double mean, const double *y,
			 double slack, double t)
{
	for (int i = 0; i < pool->ntickets; i++)
		if (fabs(decayed(cfg, pool, &pool->tickets[i], mean, t) - y[i]) >= slack)
			return false;
	return true;
}

/*
 * The next deadline: the oldest ticket's timeout, or, with k tickets
 * waiting, the next recheck instant, when a ticket's wait grows by a
 * period and the positions move (mm_recheck_deadline).
 *
 * A closed pool (MMPool.closed: a simulation, where nothing but the steps
 * and the arrivals changes it) passes over the recheck instants at which
 * no match can form.  A step's first join needs two tickets closer than
 * the threshold (a cluster of one has its ticket's position for
 * centroid), and every ticket only moves toward the mean as it waits (the
 * decay falls with the wait), by at most its distance from it.  If the
 * closest two positions at the next recheck instant lie gap apart, no two
 * come within the threshold while no ticket has moved by (gap -
 * threshold) / 2 since: the deadline is the first recheck instant past
 * those, found by doubling and halving the count of instants (a pass over
 * the tickets each), or the pool's horizon (MMPool.horizon) if that comes
 * first.  Not with parties, roles, smaller matches or block
 * lists, whose steps do more than cluster the pool as it is.
 */
double
mm_cluster_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		d = mm_recheck_deadline(cfg, pool);
	double		timeout = pool->tickets[0].arrival + cfg->max_wait;
	double		end = fmin(timeout, mm_pool_horizon(pool));
	double		clock = fmax(fabs(end), fabs(pool->stepped_at)) + fabs(pool->epoch);
	double		theta = cfg->cluster.threshold;
	int			n = pool->ntickets;
	int			waiting;
	double		lo_r = INFINITY,
				hi_r = -INFINITY;
	double	   *y;
	double	   *z;
	double		mean,
				gap = INFINITY,
				slack;
	double		safe = 1,
				unsafe;

	/*
	 * nothing to pass over before the horizon, or the timeout, or only one
	 * instant; or a clock so large that its precision cannot tell every
	 * instant of the grid apart until then (where mm_recheck_next gives up)
	 */
	if (!pool->closed || mm_cluster_every_recheck || !(d < end) ||
		!(nextafter(clock, INFINITY) - clock < cfg->recheck / 4) ||
		!(mm_recheck_after(cfg, pool, pool->stepped_at, 2) < end) ||
		mm_config_k(cfg) < 2 || !pool->solo || cfg->roles.n > 0 ||
		mm_smaller_active(cfg) || pool->block != NULL)
		return d;
	/*
	 * positions lie between the ratings and their mean: n of them in a span
	 * below (n - 1) theta hold two closer than theta
	 */
	for (int i = 0; i < n; i++)
	{
		lo_r = fmin(lo_r, pool->tickets[i].rating);
		hi_r = fmax(hi_r, pool->tickets[i].rating);
	}
	if ((n - 1) * theta > hi_r - lo_r)
		return d;
	y = mm_malloc_array((size_t) n, 2 * sizeof(double));
	if (y == NULL)
		return d;				/* the failed allocation tells the caller */
	z = y + n;
	mean = waiting_mean(pool, NULL, &waiting);
	for (int i = 0; i < n; i++)
		z[i] = y[i] = decayed(cfg, pool, &pool->tickets[i], mean, d);
	qsort(z, (size_t) n, sizeof(double), cmp_double);
	for (int i = 1; i < n; i++)
		gap = fmin(gap, z[i] - z[i - 1]);
	slack = (gap - theta - CLUSTER_SKIP_MARGIN) / 2;
	if (slack > 0)
	{
		/*
		 * the last safe count of instants, and one past it (counts stay
		 * below 2^50 on a clock precise enough, so halving is exact)
		 */
		for (unsafe = 2; unsafe < CLUSTER_MAX_COUNT; unsafe *= 2)
		{
			double		t = mm_recheck_after(cfg, pool, pool->stepped_at, unsafe);

			if (!(t < end) || !moved_within(cfg, pool, mean, y, slack, t))
				break;
			safe = unsafe;
		}
		while (unsafe - safe > 1)
		{
			double		mid = floor((safe + unsafe) / 2);
			double		t = mm_recheck_after(cfg, pool, pool->stepped_at, mid);

			if (!(mid > safe && mid < unsafe))
				break;
			if (t < end && moved_within(cfg, pool, mean, y, slack, t))
				safe = mid;
			else
				unsafe = mid;
		}
		d = fmin(mm_recheck_after(cfg, pool, pool->stepped_at, safe + 1), end);
	}
	mm_free(y);
	return d;
}
