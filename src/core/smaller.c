/*
 * smaller.c
 *		Match size ranges (params.min_players): a ticket that reaches
 *		max_wait, which the algorithm would complete with computer players
 *		or expire, plays a smaller match of real players instead when
 *		enough of them are at hand.
 *
 * After the algorithm's step (step.c calls mm_smaller_matches), each match
 * with computer players, oldest member first, and each expired ticket
 * (oldest first) takes the waiting tickets the step left alone, nearest in
 * rating to its members' mean first, up to k players in all.  With at
 * least min_players it plays with them and no computer player (a full
 * match when k were at hand); with fewer it stays as the algorithm decided
 * and the tickets it looked at wait on.  Tickets in a difference_wait
 * provisional group are not at hand.  optimize, which scores its own
 * matches, is left as it is.  finish_matches splits a smaller match into
 * teams whose sizes differ by at most one (mm_teams_split_even) and costs
 * it as a game of its own size.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Ratings and indices, to sort the pool's tickets by rating. */
typedef struct RatedIndex
{
	double		rating;
	int			index;
} RatedIndex;

static int
rated_cmp(const void *a, const void *b)
{
	const RatedIndex *x = a;
	const RatedIndex *y = b;

	if (x->rating != y->rating)
		return (x->rating > y->rating) - (x->rating < y->rating);
	return (x->index > y->index) - (x->index < y->index);
}

/* Everything one call works with. */
typedef struct Smaller
{
	const MMPool *pool;
	int			k;
	bool	   *used;			/* in a match, expired, grouped, or taken */
	RatedIndex *byrating;		/* the pool sorted by rating */
	int			n;
} Smaller;

/*
 * Take up to want unused tickets nearest in rating to mean into out
 * (marking them used); returns how many it took.
 */
static int
take_nearest(Smaller *s, double mean, int want, int *out)
{
	int			lo;
	int			hi;
	int			got = 0;
	int			a = 0;
	int			b = s->n;

	/* the first entry rated mean or more */
	while (a < b)
	{
		int			mid = a + (b - a) / 2;

		if (s->byrating[mid].rating < mean)
			a = mid + 1;
		else
			b = mid;
	}
	hi = a;
	lo = a - 1;
	while (got < want && (lo >= 0 || hi < s->n))
	{
		int			pick;

		while (lo >= 0 && s->used[s->byrating[lo].index])
			lo--;
		while (hi < s->n && s->used[s->byrating[hi].index])
			hi++;
		if (lo < 0 && hi >= s->n)
			break;
		if (lo < 0)
			pick = hi++;
		else if (hi >= s->n)
			pick = lo--;
		else if (mean - s->byrating[lo].rating <= s->byrating[hi].rating - mean)
			pick = lo--;
		else
			pick = hi++;
		out[got++] = s->byrating[pick].index;
		s->used[s->byrating[pick].index] = true;
	}
	return got;
}

/*
 * Grow the n members in idx (room for k) with nearest unused tickets;
 * returns the new count when it reaches min_players, else gives the taken
 * tickets back and returns -1.
 */
static int
grow(Smaller *s, const MMConfig *cfg, int *idx, int n)
{
	double		mean = 0.0;
	int			got;

	for (int i = 0; i < n; i++)
		mean += s->pool->tickets[idx[i]].rating;
	mean /= n;
	got = take_nearest(s, mean, s->k - n, idx + n);
	if (n + got >= cfg->min_players)
		return n + got;
	for (int i = 0; i < got; i++)
		s->used[idx[n + i]] = false;
	return -1;
}

/* Whether min_players is below the full size (optimize has its own way). */
bool
mm_smaller_active(const MMConfig *cfg)
{
	return cfg->min_players > 0 && cfg->min_players < mm_config_k(cfg) &&
		cfg->algorithm != MM_ALGO_OPTIMIZE;
}

MMStatus
mm_smaller_matches(const MMConfig *cfg, MMPool *pool, MMResult *res)
{
	Smaller		s;
	int		   *members;
	MMMatch    *matches;
	int			nm = 0;
	int			slot = 0;
	int			ne = 0;
	int			idx[MM_MAX_K];
	bool		any = false;

	if (!mm_smaller_active(cfg))
		return MM_OK;
	s.k = mm_config_k(cfg);
	for (int j = 0; j < res->nmatches && !any; j++)
		any = res->matches[j].bots > 0;
	if (!any && res->nexpired == 0)
		return MM_OK;

	s.pool = pool;
	s.n = pool->ntickets;
	s.used = mm_malloc_array((size_t) s.n, sizeof(bool));
	s.byrating = mm_malloc_array((size_t) s.n, sizeof(RatedIndex));
	members = mm_malloc_array((size_t) s.n, sizeof(int));
	matches = mm_malloc_array((size_t) s.n, sizeof(MMMatch));
	if (s.used == NULL || s.byrating == NULL || members == NULL || matches == NULL)
	{
		mm_free(s.used);
		mm_free(s.byrating);
		mm_free(members);
		mm_free(matches);
		return MM_ERR_NOMEM;
	}
	for (int i = 0; i < s.n; i++)
	{
		s.used[i] = pool->tickets[i].group >= 0;
		s.byrating[i].rating = pool->tickets[i].rating;
		s.byrating[i].index = i;
	}
	for (int j = 0; j < res->nmatches; j++)
		for (int m = 0; m < res->matches[j].nmembers; m++)
			s.used[res->members[res->matches[j].first + m]] = true;
	for (int e = 0; e < res->nexpired; e++)
		s.used[res->expired[e]] = true;
	qsort(s.byrating, s.n, sizeof(RatedIndex), rated_cmp);

	/* the algorithm's matches, those with computer players grown */
	for (int j = 0; j < res->nmatches; j++)
	{
		MMMatch		m = res->matches[j];
		int			n = m.nmembers;

		memcpy(idx, res->members + m.first, sizeof(int) * n);
		if (m.bots > 0)
		{
			int			grown = grow(&s, cfg, idx, n);

			if (grown > 0)
			{
				n = grown;
				m.bots = 0;
			}
		}
		memcpy(members + slot, idx, sizeof(int) * n);
		m.first = slot;
		m.nmembers = n;
		slot += n;
		matches[nm++] = m;
	}
	/* the expired tickets, each the seed of a match when enough are at hand */
	for (int e = 0; e < res->nexpired; e++)
	{
		int			n;

		idx[0] = res->expired[e];
		n = grow(&s, cfg, idx, 1);
		if (n < 0)
		{
			res->expired[ne++] = idx[0];
			continue;
		}
		memcpy(members + slot, idx, sizeof(int) * n);
		matches[nm].first = slot;
		matches[nm].nmembers = n;
		matches[nm].bots = 0;
		memset(&matches[nm].cost, 0, sizeof(MMCost));
		nm++;
		slot += n;
	}
	res->nexpired = ne;
	res->nmatches = nm;
	memcpy(res->matches, matches, sizeof(MMMatch) * nm);
	memcpy(res->members, members, sizeof(int) * slot);
	mm_free(s.used);
	mm_free(s.byrating);
	mm_free(members);
	mm_free(matches);
	return MM_OK;
}
