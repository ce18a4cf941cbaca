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
 * rate, as a queue of that key alone would; the recent ratings
 * (cfg->recent) are the whole queue's.
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
	local->rate_last = pool->key_rate_last != NULL ? pool->key_rate_last[k] : NAN;
	local->rate_gaps = pool->key_rate_gaps != NULL ? pool->key_rate_gaps[k] : 0;
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
	double		deadline = INFINITY;	/* the sub-pools' earliest, NAN when one is unknown */
	MMStatus	st;

	st = partition(pool, &p.order, &p.starts, &p.nparts);
	if (st != MM_OK)
		return st;
	p.gmap = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(int));
	p.gkey = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(int32_t));
	p.gmixed = mm_malloc_array((size_t) (pool->ngroups > 0 ? pool->ngroups : 1), sizeof(bool));
	p.sub = *pool;
	p.sub.key_due = NULL;
	p.sub.key_horizon = NULL;
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
		int32_t		k = key_of(pool, idx[0]);
		double	   *due = pool->key_due != NULL && k < pool->nkey_due ? &pool->key_due[k] : NULL;
		bool		skip = due != NULL && *due > now;	/* nothing in it acts before then */

		if (skip && !(*due >= deadline))
			deadline = isnan(deadline) ? NAN : *due;
		/* without groups to renumber, a sub-pool skipped needs nothing more */
		if (skip && pool->ngroups == 0)
			continue;
		load_part(pool, &p, q);
		if (due != NULL && pool->key_horizon != NULL)
			p.sub.horizon = pool->key_horizon[k];
		p.sres.nmatches = 0;
		p.sres.nexpired = 0;
		p.sres.deadline = NAN;
		if (!skip)
		{
			st = part_step(mm_key_config(cfg, &p.sub, &local), &p.sub, prev, now, &p.sres);
			if (st != MM_OK)
				break;
			if (due != NULL)
				*due = p.sres.deadline;
			if (!(p.sres.deadline >= deadline))
				deadline = isnan(deadline) ? NAN : p.sres.deadline;	/* NAN stays */
		}

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
	result->deadline = deadline;
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

/* The filters of pool that have relaxed for a ticket of this arrival at now. */
static uint32_t
relaxed_mask(const MMPool *pool, double arrival, double now)
{
	uint32_t	mask = 0;

	if (pool->relax_after == NULL)
		return 0;
	for (int f = 0; f < pool->nfilters; f++)
		if (arrival + pool->relax_after[f] <= now)
			mask |= (uint32_t) 1 << f;
	return mask;
}

/*
 * Whether key agrees with one of row crow's candidates on every filter
 * outside mask (with the values of a candidate of its own, each filter
 * apart: candidates are every way of taking one value of each filter).
 */
static bool
agrees(const MMPool *pool, int crow, int32_t key, uint32_t mask)
{
	int			nf = pool->nfilters;

	for (int f = 0; f < nf; f++)
	{
		bool		found = false;

		if (mask & ((uint32_t) 1 << f))
			continue;
		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1] && !found; c++)
			found = pool->key_values[(size_t) pool->cand[c] * nf + f] ==
				pool->key_values[(size_t) key * nf + f];
		if (!found)
			return false;
	}
	return true;
}

/*
 * A key of the pool for tickets whose filters in some mask have relaxed:
 * its values of the other filters (-1 for the relaxed ones), and how many
 * tickets of the pool have it among theirs.
 */
typedef struct Entry
{
	int32_t		proj[MM_MAX_FILTER_BITS];
	int32_t		count;
	int32_t		key;
} Entry;

/* By projection, then most tickets first, then the lower key. */
static int
entry_cmp(const void *l, const void *r)
{
	const Entry *a = l;
	const Entry *b = r;
	int			c = memcmp(a->proj, b->proj, sizeof(a->proj));

	if (c != 0)
		return c;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->key > b->key) - (a->key < b->key);
}

/* key's values of the filters outside mask into proj, -1 for those in it. */
static void
project(const MMPool *pool, int32_t key, uint32_t mask, int32_t *proj)
{
	for (int f = 0; f < MM_MAX_FILTER_BITS; f++)
		proj[f] = f < pool->nfilters && !(mask & ((uint32_t) 1 << f))
			? pool->key_values[(size_t) key * pool->nfilters + f] : -1;
}

/*
 * Give every relaxed ticket of mask (rel[0 .. nrel), pool indices) the key
 * of most tickets among those that agree with one of its candidates on
 * the filters outside mask: the pool's keys (present, npresent; counts in
 * cand_count) sorted by their values of those filters, so that each
 * candidate finds its best by a binary search.  O(P log P + r c log P).
 */
static void
assign_relaxed(const MMPool *pool, uint32_t mask, const int *rel, int nrel,
			   const int32_t *present, int npresent, Entry *e)
{
	for (int p = 0; p < npresent; p++)
	{
		project(pool, present[p], mask, e[p].proj);
		e[p].count = pool->cand_count[present[p]];
		e[p].key = present[p];
	}
	qsort(e, npresent, sizeof(Entry), entry_cmp);
	for (int r = 0; r < nrel; r++)
	{
		int			crow = pool->tickets[rel[r]].crow;
		const Entry *best = NULL;

		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1]; c++)
		{
			Entry		want;
			int			lo = 0;
			int			hi = npresent;

			/* the first entry of this projection: its best key */
			project(pool, pool->cand[c], mask, want.proj);
			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (memcmp(e[mid].proj, want.proj, sizeof(want.proj)) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* its own candidate is there, so the projection is */
			if (lo < npresent && memcmp(e[lo].proj, want.proj, sizeof(want.proj)) == 0 &&
				(best == NULL || e[lo].count > best->count ||
				 (e[lo].count == best->count && e[lo].key < best->key)))
				best = &e[lo];
		}
		if (best != NULL)
			pool->cand_key[crow] = best->key;
	}
}

/* Order of relaxed tickets: by mask. */
typedef struct Relaxed
{
	uint32_t	mask;
	int			index;
} Relaxed;

static int
relaxed_cmp(const void *l, const void *r)
{
	const Relaxed *a = l;
	const Relaxed *b = r;

	if (a->mask != b->mask)
		return a->mask < b->mask ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/* Assign each pool ticket one of its candidate keys; see mm_core.h. */
MMStatus
mm_filter_assign(const MMPool *pool, double now)
{
	int32_t    *present = NULL;
	Relaxed    *rel = NULL;
	int		   *idx = NULL;
	Entry	   *entries = NULL;
	int			npresent = 0;
	int			nrel = 0;
	MMStatus	st = MM_OK;

	if (pool->cand == NULL)
		return MM_OK;
	if (pool->cand_start == NULL || pool->cand_key == NULL || pool->cand_count == NULL ||
		pool->ncand_keys < 1 ||
		(pool->relax_after != NULL &&
		 (pool->key_values == NULL || pool->nfilters < 1 || pool->nfilters > MM_MAX_FILTER_BITS)))
		return MM_ERR_ARGUMENT;
	/* check every row first, so that an error leaves the counts at zero */
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		if (crow < 0 || crow >= pool->ncand_rows ||
			pool->cand_start[crow] >= pool->cand_start[crow + 1] ||
			pool->cand_start[crow] < 0)
			return MM_ERR_ARGUMENT;
		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1]; c++)
			if (pool->cand[c] < 0 || pool->cand[c] >= pool->ncand_keys)
				return MM_ERR_ARGUMENT;
		if (relaxed_mask(pool, pool->tickets[i].arrival, now) != 0)
			nrel++;
	}
	if (nrel > 0)
	{
		size_t		total = 0;

		for (int i = 0; i < pool->ntickets; i++)
			total += (size_t) (pool->cand_start[pool->tickets[i].crow + 1] -
							   pool->cand_start[pool->tickets[i].crow]);
		present = mm_malloc_array(total > 0 ? total : 1, sizeof(int32_t));
		rel = mm_malloc_array((size_t) nrel, sizeof(Relaxed));
		idx = mm_malloc_array((size_t) nrel, sizeof(int));
		if (present == NULL || rel == NULL || idx == NULL)
		{
			mm_free(present);
			mm_free(rel);
			mm_free(idx);
			return MM_ERR_NOMEM;
		}
	}
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1]; c++)
			if (pool->cand_count[pool->cand[c]]++ == 0 && present != NULL)
				present[npresent++] = pool->cand[c];
	}
	nrel = 0;
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;
		int32_t		best = pool->cand[pool->cand_start[crow]];
		uint32_t	mask = present != NULL ? relaxed_mask(pool, pool->tickets[i].arrival, now) : 0;

		for (int32_t c = pool->cand_start[crow] + 1; c < pool->cand_start[crow + 1]; c++)
		{
			int32_t		k = pool->cand[c];

			if (pool->cand_count[k] > pool->cand_count[best] ||
				(pool->cand_count[k] == pool->cand_count[best] && k < best))
				best = k;
		}
		pool->cand_key[crow] = best;
		if (mask != 0)
		{
			rel[nrel].mask = mask;
			rel[nrel++].index = i;
		}
	}
	/* relaxed tickets, a mask at a time (waits nest: few masks) */
	if (nrel > 0)
		entries = mm_malloc_array((size_t) (npresent > 0 ? npresent : 1), sizeof(Entry));
	if (nrel > 0 && entries == NULL)
		st = MM_ERR_NOMEM;
	else if (nrel > 0)
	{
		qsort(rel, nrel, sizeof(Relaxed), relaxed_cmp);
		for (int from = 0; from < nrel;)
		{
			int			to = from;

			while (to < nrel && rel[to].mask == rel[from].mask)
			{
				idx[to - from] = rel[to].index;
				to++;
			}
			assign_relaxed(pool, rel[from].mask, idx, to - from, present, npresent, entries);
			from = to;
		}
	}
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1]; c++)
			pool->cand_count[pool->cand[c]] = 0;
	}
	mm_free(present);
	mm_free(rel);
	mm_free(idx);
	mm_free(entries);
	return st;
}

/* Whether row crow may play under key; see mm_core.h. */
bool
mm_filter_may_play(const MMPool *pool, int crow, int32_t key)
{
	if (pool->cand != NULL)
	{
		if (crow < 0 || crow >= pool->ncand_rows)
			return false;
		for (int32_t c = pool->cand_start[crow]; c < pool->cand_start[crow + 1]; c++)
			if (pool->cand[c] == key)
				return true;
		return false;
	}
	return pool->key == NULL || (crow >= 0 && crow < pool->nkeys && pool->key[crow] == key);
}

/* The filters row crow waived to play under key; see mm_core.h. */
uint32_t
mm_filter_waived(const MMPool *pool, int crow, int32_t key)
{
	uint32_t	waived = 0;

	if (pool->cand == NULL || pool->relax_after == NULL || pool->key_values == NULL ||
		crow < 0 || crow >= pool->ncand_rows || key < 0 || key >= pool->ncand_keys)
		return 0;
	for (int f = 0; f < pool->nfilters; f++)
		if (!agrees(pool, crow, key, ~((uint32_t) 1 << f)))
			waived |= (uint32_t) 1 << f;
	return waived;
}

/* The next instant a filter relaxes; see mm_core.h. */
double
mm_filter_relax_deadline(const MMPool *pool)
{
	double		d = INFINITY;

	if (pool->cand == NULL || pool->relax_after == NULL)
		return INFINITY;
	for (int i = 0; i < pool->ntickets; i++)
		for (int f = 0; f < pool->nfilters; f++)
		{
			double		at = pool->tickets[i].arrival + pool->relax_after[f];

			if (at > pool->stepped_at && at < d)
				d = at;
		}
	return d;
}
