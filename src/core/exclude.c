/*
 * exclude.c
 *		Block lists (an exclude filter): a player never meets a player its
 *		list names, nor one whose list names it, in every algorithm.
 *
 * A step runs the algorithm on each key's sub-pool as usual; when a match
 * it formed holds a blocked pair, that sub-pool's step is run again from
 * the same state with one player
 * of each such pair held out (its own sub-pool for this step: a key of its
 * own), the younger one unless only it has timed out, until no match
 * holds a blocked pair.  A held-out player waits for the next step (or,
 * timed out, plays with computer players or expires alone).  Every round
 * holds out at least one more player; after MM_EXCLUDE_ROUNDS rounds every
 * player of a blocked pair in the pool is held out at once, so a step runs
 * at most MM_EXCLUDE_ROUNDS + 2 times.  The next deadline is the one of
 * the step's last round (the held-out players apart).
 */
#include "mm_internal.h"

#include <stdlib.h>
#include <string.h>

#define MM_EXCLUDE_ROUNDS 8

/* Whether sorted list[0 .. n) holds x. */
static bool
list_has(const int32_t *list, int32_t n, int32_t x)
{
	int32_t		lo = 0;
	int32_t		hi = n;

	while (lo < hi)
	{
		int32_t		mid = lo + (hi - lo) / 2;

		if (list[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && list[lo] == x;
}

/* Whether rows a and b may not meet; see mm_core.h. */
bool
mm_blocked(const MMPool *pool, int a, int b)
{
	if (pool->block == NULL || a < 0 || b < 0 || a >= pool->nblock_rows || b >= pool->nblock_rows)
		return false;
	return list_has(pool->block + pool->block_start[a], pool->block_start[a + 1] - pool->block_start[a],
					pool->player[b]) ||
		list_has(pool->block + pool->block_start[b], pool->block_start[b + 1] - pool->block_start[b],
				 pool->player[a]);
}

/* Whether the block list rows of the pool's tickets are usable. */
MMStatus
mm_exclude_check(const MMPool *pool)
{
	if (pool->player == NULL || pool->block_start == NULL || pool->block_key == NULL ||
		pool->held == NULL)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		if (crow < 0 || crow >= pool->nblock_rows ||
			pool->block_start[crow] < 0 || pool->block_start[crow] > pool->block_start[crow + 1])
			return MM_ERR_ARGUMENT;
		for (int32_t j = pool->block_start[crow] + 1; j < pool->block_start[crow + 1]; j++)
			if (pool->block[j - 1] >= pool->block[j])
				return MM_ERR_ARGUMENT;
	}
	return MM_OK;
}

/*
 * Into pool->block_key each ticket's key for a step: its own (pool->key,
 * or 0), or for a held-out ticket a key above every ticket's own, one per
 * held-out ticket in pool order.
 */
void
mm_exclude_keys(const MMPool *pool)
{
	int32_t		next = 0;

	for (int i = 0; i < pool->ntickets; i++)
	{
		int32_t		k = pool->key != NULL ? pool->key[pool->tickets[i].crow] : 0;

		next = k + 1 > next ? k + 1 : next;
	}
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		pool->block_key[crow] = pool->held[crow] ? next++
			: pool->key != NULL ? pool->key[crow] : 0;
	}
}

/* The pool with block_key as its key (after mm_exclude_keys). */
static void
keyed_view(const MMPool *pool, MMPool *view)
{
	*view = *pool;
	view->key = pool->block_key;
	view->nkeys = pool->nblock_rows;
	view->block = NULL;
}

/*
 * Hold out one player of each blocked pair of res's matches: the younger
 * (later in pool order), unless only it has timed out.  Returns how many
 * it held out.
 */
static int
hold_blocked(const MMConfig *cfg, const MMPool *pool, const MMResult *res, double now)
{
	int			held = 0;

	for (int j = 0; j < res->nmatches; j++)
	{
		const MMMatch *m = &res->matches[j];

		for (int x = 0; x < m->nmembers; x++)
			for (int y = x + 1; y < m->nmembers; y++)
			{
				int			a = res->members[m->first + x];
				int			b = res->members[m->first + y];
				const MMTicket *ta = &pool->tickets[a < b ? a : b];
				const MMTicket *tb = &pool->tickets[a < b ? b : a];
				const MMTicket *out;

				if (!mm_blocked(pool, ta->crow, tb->crow) || pool->held[ta->crow] || pool->held[tb->crow])
					continue;
				out = mm_timed_out(tb, now, cfg->max_wait) && !mm_timed_out(ta, now, cfg->max_wait)
					? ta : tb;
				pool->held[out->crow] = 1;
				held++;
			}
	}
	return held;
}

/* Row and player of a pool ticket, sorted by player. */
typedef struct Who
{
	int32_t		player;
	int			crow;
} Who;

static int
who_cmp(const void *l, const void *r)
{
	const Who  *a = l;
	const Who  *b = r;

	if (a->player != b->player)
		return a->player < b->player ? -1 : 1;
	return (a->crow > b->crow) - (a->crow < b->crow);
}

/* Hold out every ticket of the pool that is in a blocked pair with another. */
static MMStatus
hold_all_blocked(const MMPool *pool)
{
	int			n = pool->ntickets;
	Who		   *who = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(Who));

	if (who == NULL)
		return MM_ERR_NOMEM;
	for (int i = 0; i < n; i++)
	{
		who[i].crow = pool->tickets[i].crow;
		who[i].player = pool->player[who[i].crow];
	}
	qsort(who, n, sizeof(Who), who_cmp);
	for (int i = 0; i < n; i++)
	{
		int			crow = pool->tickets[i].crow;

		for (int32_t j = pool->block_start[crow]; j < pool->block_start[crow + 1]; j++)
		{
			int			lo = 0;
			int			hi = n;

			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (who[mid].player < pool->block[j])
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < n && who[lo].player == pool->block[j]; lo++)
				if (who[lo].crow != crow)
				{
					pool->held[crow] = 1;
					pool->held[who[lo].crow] = 1;
				}
		}
	}
	mm_free(who);
	return MM_OK;
}

/* A step with block lists; see the header comment. */
MMStatus
mm_exclude_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				MMResult *res, MMRunFn run)
{
	int			n = pool->ntickets;
	int			ngroups = pool->ngroups;
	int32_t    *group = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(int32_t));
	MMGroup    *groups = mm_malloc_array((size_t) (ngroups > 0 ? ngroups : 1), sizeof(MMGroup));
	MMStatus	st = MM_OK;

	if (group == NULL || groups == NULL)
	{
		mm_free(group);
		mm_free(groups);
		return MM_ERR_NOMEM;
	}
	/* the state every round starts from */
	for (int i = 0; i < n; i++)
	{
		group[i] = pool->tickets[i].group;
		pool->held[pool->tickets[i].crow] = 0;
	}
	if (ngroups > 0)
		memcpy(groups, pool->groups, sizeof(MMGroup) * ngroups);

	for (int round = 0;; round++)
	{
		MMPool		view;

		mm_exclude_keys(pool);
		keyed_view(pool, &view);
		res->nmatches = 0;
		res->nexpired = 0;
		st = run(cfg, &view, prev, now, res);
		pool->ngroups = view.ngroups;
		if (st != MM_OK)
			break;
		if (hold_blocked(cfg, pool, res, now) == 0)
			break;
		if (round == MM_EXCLUDE_ROUNDS)
		{
			st = hold_all_blocked(pool);
			if (st != MM_OK)
				break;
		}
		else if (round > MM_EXCLUDE_ROUNDS)
		{
			st = MM_ERR_ARGUMENT;	/* cannot happen: nobody blocked is left together */
			break;
		}
		/* again from the state before the step */
		for (int i = 0; i < n; i++)
			pool->tickets[i].group = group[i];
		pool->ngroups = ngroups;
		if (ngroups > 0)
			memcpy(pool->groups, groups, sizeof(MMGroup) * ngroups);
	}
	mm_free(group);
	mm_free(groups);
	return st;
}

/* The next deadline with block lists: that of the last step's keys. */
double
mm_exclude_deadline(const MMConfig *cfg, const MMPool *pool, MMDeadlineFn deadline)
{
	MMPool		view;

	mm_exclude_keys(pool);
	keyed_view(pool, &view);
	return deadline(cfg, &view);
}
