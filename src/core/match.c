/*
 * match.c
 *		What a step writes to its result, shared by every algorithm: the
 *		matches (mm_add_match), the timeouts of the tickets left over, and
 *		the caller's memory of recent matches (MMPool.met).
 */
#include "mm_internal.h"

#include <stdlib.h>

/* Order ints ascending. */
int
mm_int_cmp(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/* Entries of result->members in use. */
static int
members_used(const MMResult *res)
{
	if (res->nmatches == 0)
		return 0;
	return res->matches[res->nmatches - 1].first +
		res->matches[res->nmatches - 1].nmembers;
}

/*
 * Open a match of n real tickets and k - n bots at the end of res; returns
 * where its members go in res->members.  The caller fills them in.
 */
static int
open_match(MMResult *res, int n, int k)
{
	MMMatch    *m = &res->matches[res->nmatches];
	int			first = members_used(res);

	m->first = first;
	m->nmembers = n;
	m->bots = k - n;
	m->cost.criteria = m->cost.wait = m->cost.total = 0.0;
	res->nmatches++;
	return first;
}

/* Append a match of n tickets taken from idx (k - n bots). */
void
mm_add_match(MMResult *res, const int *idx, int n, int k)
{
	int			first = open_match(res, n, k);

	for (int i = 0; i < n; i++)
		res->members[first + i] = idx[i];
}

/* Append a match of the n consecutive tickets from start (k - n bots). */
void
mm_add_match_range(MMResult *res, int start, int n, int k)
{
	int			first = open_match(res, n, k);

	for (int i = 0; i < n; i++)
		res->members[first + i] = start + i;
}

/*
 * What happens to the tickets from start on (fewer than k, the oldest
 * timed out) when nothing better can be done: with bots they all play one
 * game completed with computer players; with expire the timed-out ones
 * (a prefix, the pool being in arrival order) expire and the rest wait.
 */
void
mm_timeout_rest(const MMConfig *cfg, const MMPool *pool, double now,
				MMResult *res, int start)
{
	int			n = pool->ntickets;

	if (start >= n || !mm_timed_out(&pool->tickets[start], now, cfg->max_wait))
		return;
	if (cfg->on_timeout == MM_TIMEOUT_BOTS)
	{
		mm_add_match_range(res, start, n - start, mm_config_k(cfg));
		return;
	}
	for (int i = start; i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
		res->expired[res->nexpired++] = i;
}

/* Order met pairs by (a, b). */
int
mm_met_pair_cmp(const void *l, const void *r)
{
	const MMMetPair *x = l;
	const MMMetPair *y = r;

	if (x->a != y->a)
		return (x->a > y->a) - (x->a < y->a);
	return (x->b > y->b) - (x->b < y->b);
}

/* Look a pair of ticket ids up in the pool's sorted met pairs. */
const MMMetPair *
mm_met_pair_find(const MMPool *pool, int64_t x, int64_t y)
{
	MMMetPair	key;

	if (pool->met == NULL || pool->nmet <= 0)
		return NULL;
	key.a = x < y ? x : y;
	key.b = x < y ? y : x;
	key.relation = 0;
	return bsearch(&key, pool->met, pool->nmet, sizeof(MMMetPair), mm_met_pair_cmp);
}

/* A ticket id with its index, for looking ids up. */
typedef struct IdIndex
{
	int64_t		id;
	int			idx;
} IdIndex;

static int
id_index_cmp(const void *l, const void *r)
{
	const IdIndex *x = l;
	const IdIndex *y = r;

	return (x->id > y->id) - (x->id < y->id);
}

/* See mm_internal.h. */
int
mm_met_pair_tickets(const MMPool *pool, int *ends, int *which)
{
	int			n = pool->ntickets;
	IdIndex    *ids;
	int			count = 0;

	if (pool->met == NULL || pool->nmet <= 0 || n <= 0)
		return 0;
	ids = mm_malloc_array((size_t) n, sizeof(IdIndex));
	if (ids == NULL)
		return -1;
	for (int i = 0; i < n; i++)
	{
		ids[i].id = pool->tickets[i].id;
		ids[i].idx = i;
	}
	qsort(ids, n, sizeof(IdIndex), id_index_cmp);
	for (int m = 0; m < pool->nmet; m++)
	{
		IdIndex		ka = {pool->met[m].a, 0};
		IdIndex		kb = {pool->met[m].b, 0};
		IdIndex    *a = bsearch(&ka, ids, n, sizeof(IdIndex), id_index_cmp);
		IdIndex    *b = bsearch(&kb, ids, n, sizeof(IdIndex), id_index_cmp);

		if (a == NULL || b == NULL || a->idx == b->idx)
			continue;
		ends[2 * count] = a->idx;
		ends[2 * count + 1] = b->idx;
		if (which != NULL)
			which[count] = m;
		count++;
	}
	mm_free(ids);
	return count;
}

/* The oldest ticket's timeout: the next deadline of greedy, periodic and multi_queue. */
double
mm_timeout_deadline(const MMConfig *cfg, const MMPool *pool)
{
	return pool->tickets[0].arrival + cfg->max_wait;
}
