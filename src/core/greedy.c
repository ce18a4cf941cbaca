/*
 * greedy.c
 *		The greedy algorithm (Schlup, 4.1): a match as soon as k tickets
 *		wait, taken in arrival order; with the patient team policy (Wu) a
 *		match waits for one more player rather than play unbalanced.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The spread of the team rating sums when the n tickets in idx are split
 * into teams; teams (n entries) receives the split.
 */
static MMStatus
split_imbalance(const MMConfig *cfg, const MMPool *pool, const int *idx, int n,
				int *teams, double *imbalance)
{
	double		ratings[MM_MAX_K + 1];
	double		sums[MM_MAX_K + 1];
	double		lo = INFINITY;
	double		hi = -INFINITY;
	MMStatus	st;

	for (int i = 0; i < n; i++)
		ratings[i] = pool->tickets[idx[i]].rating;
	st = mm_teams_split(cfg, n, ratings, teams);
	if (st != MM_OK)
		return st;
	for (int t = 0; t < cfg->teams; t++)
		sums[t] = 0.0;
	for (int i = 0; i < n; i++)
		sums[teams[i] - 1] += ratings[i];
	for (int t = 0; t < cfg->teams; t++)
	{
		lo = sums[t] < lo ? sums[t] : lo;
		hi = sums[t] > hi ? sums[t] : hi;
	}
	*imbalance = hi - lo;
	return MM_OK;
}

/*
 * Wu's patient policy for the k oldest of the waiting tickets in rem
 * (nrem of them, oldest first): when they split into balanced teams, or
 * the oldest has timed out, they play (returns k); when they do not and a
 * (k+1)-th ticket waits, the k of those k + 1 that split best play, leaving
 * out the newest of the equally good choices (returns k, with rem reordered
 * so that the players come first); otherwise they wait (returns 0).
 */
static MMStatus
patient_choice(const MMConfig *cfg, const MMPool *pool, double now,
			   int *rem, int nrem, int *take)
{
	int			k = mm_config_k(cfg);
	int			teams[MM_MAX_K + 1];
	int			cand[MM_MAX_K + 1];
	double		imb;
	double		best = INFINITY;
	int			best_out = -1;
	MMStatus	st;

	st = split_imbalance(cfg, pool, rem, k, teams, &imb);
	if (st != MM_OK)
		return st;
	if (imb <= MM_BALANCE_TOLERANCE || mm_timed_out(&pool->tickets[rem[0]], now, cfg->max_wait))
	{
		*take = k;
		return MM_OK;
	}
	if (nrem < k + 1)
	{
		*take = 0;
		return MM_OK;
	}
	/* leave one of the k + 1 oldest out; the newest first, so ties keep the older */
	for (int out = k; out >= 0; out--)
	{
		int			m = 0;

		for (int i = 0; i <= k; i++)
			if (i != out)
				cand[m++] = rem[i];
		st = split_imbalance(cfg, pool, cand, k, teams, &imb);
		if (st != MM_OK)
			return st;
		if (imb < best - MM_BALANCE_TOLERANCE)
		{
			best = imb;
			best_out = out;
		}
	}
	/* move the left-out ticket behind the k players, keeping their order */
	{
		int			left = rem[best_out];

		for (int i = best_out; i < k; i++)
			rem[i] = rem[i + 1];
		rem[k] = left;
	}
	*take = k;
	return MM_OK;
}

/* Idle: fewer than k wait, and the oldest has not timed out. */
bool
mm_greedy_idle(const MMConfig *cfg, const MMPool *pool, double now)
{
	return pool->ntickets < mm_config_k(cfg) &&
		!mm_timed_out(&pool->tickets[0], now, cfg->max_wait);
}

/*
 * greedy (4.1): the k oldest play together; timeouts per mm_timeout_rest.
 * With team_policy patient (Wu), k players that cannot be split into
 * balanced teams wait for one more player (see patient_choice).
 */
MMStatus
mm_greedy_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
			   MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			n = pool->ntickets;
	int			i = 0;
	int		   *rem;
	int		   *head;
	int			nrem;

	(void) prev;
	if (n == 0 || mm_greedy_idle(cfg, pool, now))
		return MM_OK;			/* nothing to do */
	if (cfg->greedy.team_policy != MM_TEAMS_PATIENT)
	{
		for (; n - i >= k; i += k)
			mm_add_match_range(res, i, k, k);
		mm_timeout_rest(cfg, pool, now, res, i);
		return MM_OK;
	}

	rem = mm_malloc(sizeof(int) * (size_t) n);
	if (rem == NULL)
		return MM_ERR_NOMEM;
	for (int j = 0; j < n; j++)
		rem[j] = j;
	nrem = n;
	head = rem;					/* the waiting tickets are head[0 .. nrem) */
	while (nrem >= k)
	{
		int			take;
		int			idx[MM_MAX_K];
		MMStatus	st = patient_choice(cfg, pool, now, head, nrem, &take);

		if (st != MM_OK)
		{
			mm_free(rem);
			return st;
		}
		if (take == 0)
			break;
		/* the players in arrival order, as every match lists them */
		memcpy(idx, head, sizeof(int) * (size_t) k);
		qsort(idx, k, sizeof(int), mm_int_cmp);
		mm_add_match(res, idx, k, k);
		head += k;
		nrem -= k;
	}
	/* the rest is in arrival order: a left-out ticket is older than those after it */
	if (nrem > 0 && nrem < k && mm_timed_out(&pool->tickets[head[0]], now, cfg->max_wait))
	{
		if (cfg->on_timeout == MM_TIMEOUT_BOTS)
			mm_add_match(res, head, nrem, k);
		else
			for (int j = 0; j < nrem && mm_timed_out(&pool->tickets[head[j]], now, cfg->max_wait); j++)
				res->expired[res->nexpired++] = head[j];
	}
	mm_free(rem);
	return MM_OK;
}
