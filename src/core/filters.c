/*
 * filters.c
 *		Sub-pools of the equal filters: tickets of one key meet only each
 *		other, so a step runs the algorithm on each key's tickets apart.
 *
 * The key of a ticket is pool->key[crow] (the glue numbers each distinct
 * combination of the filtered attributes' values).  A step over a pool
 * whose tickets have more than one key runs once per key, in ascending
 * key order, on a sub-pool of that key's tickets in pool order, and maps
 * what each decided back onto the pool; difference_wait's provisional
 * groups, which never mix keys, are renumbered into and out of each
 * sub-pool.  The next deadline is the earliest of the sub-pools'.  With
 * pool->key_rate each sub-pool's step and deadline see its key's arrival
 * rate, as a queue of that key alone would.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The key of pool ticket i. */
static int32_t
key_of(const MMPool *pool, int i)
{
	return pool->key[pool->tickets[i].crow];
}

/* Whether the pool's tickets have more than one key. */
bool
mm_pool_keyed(const MMPool *pool)
{
	if (pool->key == NULL || pool->ntickets < 2)
		return false;
	for (int i = 1; i < pool->ntickets; i++)
		if (key_of(pool, i) != key_of(pool, 0))
			return true;
	return false;
}

/* The configuration of a one-key pool; see mm_internal.h. */
const MMConfig *
mm_key_config(const MMConfig *cfg, const MMPool *pool, MMConfig *local)
{
	int32_t		k;

	if (pool->key == NULL || pool->key_rate == NULL || pool->ntickets < 1)
		return cfg;
	k = key_of(pool, 0);
	if (k < 0 || k >= pool->nkey_rates || !(pool->key_rate[k] >= 0))
		return cfg;
	*local = *cfg;
	local->arrival_rate = pool->key_rate[k];
	return local;
}

/*
 * The pool's indices grouped by key (ascending), each group in pool
 * order, into *order; the groups start at (*starts)[0 .. *nparts], the
 * last entry the pool's size.  A counting sort: keys are the places of
 * distinct values, so they lie below the number of distinct values, and
 * this is O(n + the largest key).
 */
static MMStatus
partition(const MMPool *pool, int **order, int **starts, int *nparts)
{
	int			n = pool->ntickets;
	int32_t		maxkey = 0;
	int		   *count;
	int			p = 0;

	for (int i = 0; i < n; i++)
	{
		if (key_of(pool, i) < 0)
			return MM_ERR_ARGUMENT;
		maxkey = key_of(pool, i) > maxkey ? key_of(pool, i) : maxkey;
	}
	*order = mm_malloc_array((size_t) n, sizeof(int));
	*starts = mm_malloc_array((size_t) n + 1, sizeof(int));
	count = mm_calloc((size_t) maxkey + 2, sizeof(int));
	if (*order == NULL || *starts == NULL || count == NULL)
	{
		mm_free(*order);
		mm_free(*starts);
		mm_free(count);
		*order = *starts = NULL;
		return MM_ERR_NOMEM;
	}
	for (int i = 0; i < n; i++)
		count[key_of(pool, i) + 1]++;
	for (int32_t k = 0; k <= maxkey; k++)
	{
		if (count[k + 1] > 0)
			(*starts)[p++] = count[k];
		count[k + 1] += count[k];
	}
	(*starts)[p] = n;
	*nparts = p;
	/* count[k] is now where key k's tickets begin */
	for (int i = 0; i < n; i++)
		(*order)[count[key_of(pool, i)]++] = i;
	mm_free(count);
	return MM_OK;
}

/* Everything a keyed step allocates. */
typedef struct Parts
{
	int		   *order;
	int		   *starts;
	int			nparts;
	int		   *gmap;			/* pool group -> sub-pool group */
	int32_t    *gkey;			/* pool group -> the key of its members */
	bool	   *gmixed;			/* pool group -> its members' keys differ */
	MMPool		sub;
	MMResult	sres;
	MMGroup    *groups;			/* the groups after the step, all keys */
} Parts;

static void
parts_free(Parts *p)
{
	mm_free(p->order);
	mm_free(p->starts);
	mm_free(p->gmap);
	mm_free(p->gkey);
	mm_free(p->gmixed);
	mm_free(p->sub.tickets);
	mm_free(p->sub.groups);
	mm_free(p->sres.matches);
	mm_free(p->sres.members);
	mm_free(p->sres.teams);
	mm_free(p->sres.expired);
	mm_free(p->groups);
}

/*
 * Load part q of the pool into p->sub: its tickets in pool order, and the
 * provisional groups they are in, renumbered from 0.  A group whose
 * members' keys differ (formed before the queue's filters changed) is
 * dissolved: its members wait ungrouped.
 */
static void
load_part(const MMPool *pool, Parts *p, int q)
{
	int			from = p->starts[q];
	int			m = p->starts[q + 1] - from;

	p->sub.ntickets = m;
	p->sub.ngroups = 0;
	for (int j = 0; j < m; j++)
	{
		MMTicket   *t = &p->sub.tickets[j];

		*t = pool->tickets[p->order[from + j]];
		if (t->group >= 0 && t->group < pool->ngroups && !p->gmixed[t->group])
		{
			if (p->gmap[t->group] < 0)
			{
				p->gmap[t->group] = p->sub.ngroups;
				p->sub.groups[p->sub.ngroups++] = pool->groups[t->group];
			}
			t->group = p->gmap[t->group];
		}
		else
			t->group = -1;
	}
}

/* Run a step on every key's sub-pool; see mm_internal.h. */
MMStatus
mm_keyed_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
			  MMResult *result, MMPartStepFn part_step)
{
	Parts		p = {0};
	MMConfig	local;
	int			n = pool->ntickets;
	int			nmembers = 0;
	int			ngroups = 0;
	MMStatus	st;

	st = partition(pool, &p.order, &p.starts, &p.nparts);
	if (st != MM_OK)
		return st;
	p.gmap = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(int));
	p.gkey = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(int32_t));
	p.gmixed = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(bool));
	p.sub = *pool;
	p.sub.tickets = mm_malloc_array((size_t) n, sizeof(MMTicket));
	p.sub.groups = mm_malloc_array((size_t) n, sizeof(MMGroup));
	p.sub.ngroups_cap = n;
	p.sres.matches = mm_malloc_array((size_t) n, sizeof(MMMatch));
	p.sres.members = mm_malloc_array((size_t) n, sizeof(int));
	p.sres.teams = mm_malloc_array((size_t) n, sizeof(int));
	p.sres.expired = mm_malloc_array((size_t) n, sizeof(int));
	p.groups = mm_malloc_array((size_t) n, sizeof(MMGroup));
	if (p.gmap == NULL || p.gkey == NULL || p.gmixed == NULL || p.sub.tickets == NULL || p.sub.groups == NULL ||
		p.sres.matches == NULL || p.sres.members == NULL || p.sres.teams == NULL ||
		p.sres.expired == NULL || p.groups == NULL)
	{
		parts_free(&p);
		return MM_ERR_NOMEM;
	}
	for (int g = 0; g < pool->ngroups; g++)
	{
		p.gmap[g] = -1;
		p.gmixed[g] = false;
	}
	for (int i = 0; i < n; i++)
	{
		int32_t		g = pool->tickets[i].group;

		if (g < 0 || g >= pool->ngroups)
			continue;
		if (p.gmap[g] < 0)
		{
			p.gmap[g] = 0;		/* seen */
			p.gkey[g] = key_of(pool, i);
		}
		else if (p.gkey[g] != key_of(pool, i))
			p.gmixed[g] = true;
	}
	for (int g = 0; g < pool->ngroups; g++)
		p.gmap[g] = -1;

	for (int q = 0; q < p.nparts && st == MM_OK; q++)
	{
		const int  *idx = p.order + p.starts[q];

		load_part(pool, &p, q);
		p.sres.nmatches = 0;
		p.sres.nexpired = 0;
		st = part_step(mm_key_config(cfg, &p.sub, &local), &p.sub, prev, now, &p.sres);
		if (st != MM_OK)
			break;

		/* what the step decided, in pool indices */
		for (int j = 0; j < p.sres.nmatches; j++)
		{
			MMMatch    *m = &result->matches[result->nmatches++];

			*m = p.sres.matches[j];
			for (int i = 0; i < m->nmembers; i++)
			{
				result->members[nmembers + i] = idx[p.sres.members[m->first + i]];
				result->teams[nmembers + i] = p.sres.teams[m->first + i];
			}
			m->first = nmembers;
			nmembers += m->nmembers;
		}
		for (int j = 0; j < p.sres.nexpired; j++)
			result->expired[result->nexpired++] = idx[p.sres.expired[j]];

		/* the groups after the step, renumbered after the other keys' */
		for (int j = 0; j < p.sub.ntickets; j++)
			pool->tickets[idx[j]].group = p.sub.tickets[j].group >= 0
				? p.sub.tickets[j].group + ngroups : -1;
		if (ngroups + p.sub.ngroups > n)
			st = MM_ERR_ARGUMENT;	/* cannot happen: a group has members */
		else
			memcpy(p.groups + ngroups, p.sub.groups, sizeof(MMGroup) * p.sub.ngroups);
		ngroups += p.sub.ngroups;
	}
	if (st == MM_OK)
	{
		if (ngroups > pool->ngroups_cap)
			st = MM_ERR_ARGUMENT;
		else
		{
			if (ngroups > 0)
				memcpy(pool->groups, p.groups, sizeof(MMGroup) * ngroups);
			pool->ngroups = ngroups;
		}
	}
	parts_free(&p);
	return st;
}

/* The earliest deadline of the sub-pools; see mm_internal.h. */
double
mm_keyed_deadline(const MMConfig *cfg, const MMPool *pool, MMDeadlineFn deadline)
{
	int		   *order = NULL;
	int		   *starts = NULL;
	int			nparts;
	MMPool		sub = *pool;
	MMConfig	local;
	double		d = INFINITY;

	if (partition(pool, &order, &starts, &nparts) != MM_OK)
		return mm_timeout_deadline(cfg, pool);
	sub.tickets = mm_malloc_array((size_t) pool->ntickets, sizeof(MMTicket));
	if (sub.tickets == NULL)
	{
		mm_free(order);
		mm_free(starts);
		return mm_timeout_deadline(cfg, pool);
	}
	/* read only: the sub-pools keep the pool's group numbers */
	for (int q = 0; q < nparts; q++)
	{
		sub.ntickets = starts[q + 1] - starts[q];
		for (int j = 0; j < sub.ntickets; j++)
			sub.tickets[j] = pool->tickets[order[starts[q] + j]];
		d = fmin(d, deadline(mm_key_config(cfg, &sub, &local), &sub));
	}
	mm_free(sub.tickets);
	mm_free(order);
	mm_free(starts);
	return d;
}
