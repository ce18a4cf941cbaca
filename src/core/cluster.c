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

/* The decay factor after tau seconds. */
double
mm_cluster_decay(const MMConfig *cfg, double tau)
{
	double		a = cfg->cluster.steepness;
	double		m = cfg->cluster.midpoint;

	return (1.0 + exp(-a * m)) / (1.0 + exp(a * (tau - m)));
}

/* A ticket's decayed position at time now, around mean. */
static double
decayed(const MMConfig *cfg, const MMPool *pool, const MMTicket *t,
		double mean, double now)
{
	double		tau = mm_recheck_count(cfg, pool, t->arrival, now) * cfg->recheck;

	if (tau < cfg->cluster.shift)
		tau = cfg->cluster.shift;
	return mean + (t->rating - mean) * mm_cluster_decay(cfg, tau);
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

MMStatus
mm_cluster_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				MMResult *res)
{
	int			n = pool->ntickets;
	int			k = mm_config_k(cfg);
	double		theta = cfg->cluster.threshold;
	int			nbuckets = (int) floor(1.0 / theta) + 1;
	/* per cluster (at most n): centroid sum, size, bucket list, members */
	double	   *sum = malloc(sizeof(double) * (size_t) n);
	int		   *size = malloc(sizeof(int) * (size_t) n);
	int		   *bucket_of = malloc(sizeof(int) * (size_t) n);
	int		   *bnext = malloc(sizeof(int) * (size_t) n);
	int		   *bprev = malloc(sizeof(int) * (size_t) n);
	int		   *first = malloc(sizeof(int) * (size_t) n);	/* a cluster's members: a list */
	int		   *next_member = malloc(sizeof(int) * (size_t) n);
	int		   *head = malloc(sizeof(int) * (size_t) nbuckets);
	int		   *cluster_of = malloc(sizeof(int) * (size_t) n);
	int		   *buf = malloc(sizeof(int) * (size_t) k);
	int			nclusters = 0;
	double		mean = 0;
	MMStatus	st = MM_OK;

	(void) prev;
	if (sum == NULL || size == NULL || bucket_of == NULL || bnext == NULL ||
		bprev == NULL || first == NULL || next_member == NULL || head == NULL ||
		cluster_of == NULL || buf == NULL)
	{
		st = MM_ERR_NOMEM;
		goto done;
	}
	for (int b = 0; b < nbuckets; b++)
		head[b] = -1;
	for (int i = 0; i < n; i++)
		mean += pool->tickets[i].rating;
	mean /= n;

	for (int i = 0; i < n; i++)
	{
		double		y = decayed(cfg, pool, &pool->tickets[i], mean, now);
		int			b = (int) floor(y / theta);
		int			best = -1;
		double		best_d = INFINITY;
		int			c;

		if (b >= nbuckets)
			b = nbuckets - 1;
		if (b < 0)
			b = 0;
		for (int nb = b - 1; nb <= b + 1; nb++)
		{
			if (nb < 0 || nb >= nbuckets)
				continue;
			for (c = head[nb]; c >= 0; c = bnext[c])
			{
				double		d = fabs(sum[c] / size[c] - y);

				if (d < best_d || (d == best_d && c < best))
				{
					best = c;
					best_d = d;
				}
			}
		}
		if (best >= 0 && best_d < theta)
		{
			c = best;
			/* leave its bucket; it goes back below unless it is full */
			if (bprev[c] >= 0)
				bnext[bprev[c]] = bnext[c];
			else
				head[bucket_of[c]] = bnext[c];
			if (bnext[c] >= 0)
				bprev[bnext[c]] = bprev[c];
		}
		else
		{
			c = nclusters++;
			sum[c] = 0;
			size[c] = 0;
			first[c] = -1;
		}
		sum[c] += y;
		size[c]++;
		next_member[i] = first[c];
		first[c] = i;
		cluster_of[i] = c;
		if (size[c] == k)
		{
			add_cluster(res, first[c], next_member, buf, k);
			continue;
		}
		b = (int) floor(sum[c] / size[c] / theta);
		if (b >= nbuckets)
			b = nbuckets - 1;
		if (b < 0)
			b = 0;
		bucket_of[c] = b;
		bprev[c] = -1;
		bnext[c] = head[b];
		if (head[b] >= 0)
			bprev[head[b]] = c;
		head[b] = c;
	}

	/*
	 * Timed-out tickets, oldest first: with bots, the open cluster holding
	 * one plays, completed with computer players; else they expire.
	 */
	for (int i = 0; i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
	{
		int			c = cluster_of[i];

		if (size[c] == k || size[c] == 0)
			continue;			/* matched, or already played with bots */
		if (cfg->on_timeout == MM_TIMEOUT_BOTS)
		{
			add_cluster(res, first[c], next_member, buf, k);
			size[c] = 0;
		}
		else
			res->expired[res->nexpired++] = i;
	}

done:
	free(sum);
	free(size);
	free(bucket_of);
	free(bnext);
	free(bprev);
	free(first);
	free(next_member);
	free(head);
	free(cluster_of);
	free(buf);
	return st;
}
