/*
 * exclude.c
 *		Block lists (an exclude filter): a player never meets a player its
 *		list names, nor one whose list names it, in every algorithm.
 *
 * A step runs the algorithm on each key's sub-pool as usual; when a match
 * it formed holds a blocked pair, that sub-pool's step is run again from
 * the same state with one player of each such pair moved a level up (see
 * hold_blocked for which): players of one level meet only each other
 * (a key per level), so players moved away from a partner may still play
 * together.  Every round moves at least one player; after
 * MM_EXCLUDE_ROUNDS rounds every player of a blocked pair is held apart
 * (a key of its own: it waits, or timed out plays alone), so a pass runs
 * at most MM_EXCLUDE_ROUNDS + 2 rounds.  When a pass moved players and
 * matched someone, the tickets left are passed over again at the same
 * instant (mm_exclude_step), as a step right after would.  The next
 * deadline is the one of the last pass's levels.
 */
#include "mm_internal.h"

#include <stdlib.h>
#include <string.h>

#define MM_EXCLUDE_ROUNDS 8
#define MM_EXCLUDE_PASSES 8

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
 * A ticket's standing in a step (pool->held): 0 plays with everyone of its
 * key; a level from 1 plays only with the tickets held out to the same
 * level (a player who blocked its partner moves one level up, away from
 * it, and may still meet others moved up); HELD_APART plays alone.
 */
#define HELD_APART		255
#define HELD_LEVEL_MAX	32

/* Pool indices with their party, to find a party's members. */
typedef struct Member
{
	int32_t		party;
	int			idx;
} Member;

/*
 * Into pool->block_key the key of each ticket of a pool of one key for a
 * round: its level, or for a ticket held apart a key of its own above
 * every level, one per party (members: the pool's m party tickets sorted
 * by party; NULL: each ticket its own).
 */
static void
exclude_keys(const MMPool *pool, const Member *members, int m)
{
	int32_t		next = HELD_APART;

	for (int i = 0; i < pool->ntickets; i++)
	{
		int			crow = pool->tickets[i].crow;

		if (pool->held[crow] != HELD_APART)
			pool->block_key[crow] = pool->held[crow];
		else if (pool->tickets[i].party < 0 || members == NULL)
			pool->block_key[crow] = next++;
		else
			pool->block_key[crow] = -1;	/* its party's, below */
	}
	for (int b = 0; members != NULL && b < m;)
	{
		int			e = b + 1;
		int32_t		key = next;

		while (e < m && members[e].party == members[b].party)
			e++;
		for (int i = b; i < e; i++)
		{
			int			crow = pool->tickets[members[i].idx].crow;

			if (pool->block_key[crow] < 0)
			{
				pool->block_key[crow] = key;
				next = key + 1;
			}
		}
		b = e;
	}
}

static int
member_cmp(const void *l, const void *r)
{
	const Member *a = l;
	const Member *b = r;

	if (a->party != b->party)
		return (a->party > b->party) - (a->party < b->party);
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* The pool's party tickets into members, sorted by party; returns how many. */
static int
party_members(const MMPool *pool, Member *members)
{
	int			m = 0;

	for (int i = 0; i < pool->ntickets; i++)
		if (pool->tickets[i].party >= 0)
		{
			members[m].party = pool->tickets[i].party;
			members[m++].idx = i;
		}
	qsort(members, m, sizeof(Member), member_cmp);
	return m;
}

/*
 * A party moves as one: every member takes the highest level (or apart)
 * of its members.  members: the m party tickets sorted by party.
 */
static void
party_levels(const MMPool *pool, const Member *members, int m)
{
	for (int b = 0; b < m;)
	{
		int			e = b + 1;
		uint8_t		level = pool->held[pool->tickets[members[b].idx].crow];

		while (e < m && members[e].party == members[b].party)
		{
			uint8_t		l = pool->held[pool->tickets[members[e].idx].crow];

			level = l > level ? l : level;
			e++;
		}
		for (int i = b; i < e; i++)
			pool->held[pool->tickets[members[i].idx].crow] = level;
		b = e;
	}
}

/*
 * The pool with block_key as its key (after exclude_keys); the caller
 * already chose the key's rate, which the levels must not look up.
 */
static void
keyed_view(const MMPool *pool, MMPool *view)
{
	*view = *pool;
	view->key = pool->block_key;
	view->nkeys = pool->nblock_rows;
	view->key_rate = NULL;
	view->nkey_rates = 0;
	view->key_rate_last = NULL;
	view->key_rate_gaps = NULL;
	view->block = NULL;
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

/*
 * Call visit(pool, a, b, arg) for every blocked pair (rows a, b: a lists
 * b's player) of the pool's tickets.  O(n log n + list entries x log n).
 */
static MMStatus
each_blocked(const MMPool *pool, void (*visit) (const MMPool *, int, int, void *), void *arg)
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
					visit(pool, crow, who[lo].crow, arg);
		}
	}
	mm_free(who);
	return MM_OK;
}

/* each_blocked: count both rows' blocked pairs (degree, by row). */
static void
count_pair(const MMPool *pool, int a, int b, void *arg)
{
	int32_t    *degree = arg;

	(void) pool;
	degree[a]++;
	degree[b]++;
}

/* each_blocked: hold both rows apart. */
static void
apart_pair(const MMPool *pool, int a, int b, void *arg)
{
	(void) arg;
	pool->held[a] = HELD_APART;
	pool->held[b] = HELD_APART;
}

/*
 * Move one player of each blocked pair of res's matches a level up: the
 * one not timed out when only the other has; else the one in more blocked
 * pairs of the pool (who blocks many, or is blocked by many, waits rather
 * than those it names); else the younger (later in pool order).  A player
 * past HELD_LEVEL_MAX is held apart.  Returns how many moved.
 */
static int
hold_blocked(const MMConfig *cfg, const MMPool *pool, const MMResult *res, double now,
			 const int32_t *degree)
{
	int			moved = 0;

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
				bool		oa = mm_timed_out(ta, now, cfg->max_wait);
				bool		ob = mm_timed_out(tb, now, cfg->max_wait);
				const MMTicket *out;
				int			level;

				/*
				 * matched together, they stood level; one already moved
				 * this round; a party's members do not block each other
				 */
				if (pool->held[ta->crow] != pool->held[tb->crow] ||
					(ta->party >= 0 && ta->party == tb->party) ||
					!mm_blocked(pool, ta->crow, tb->crow))
					continue;
				if (oa != ob)
					out = oa ? tb : ta;
				else if (degree[ta->crow] != degree[tb->crow])
					out = degree[ta->crow] > degree[tb->crow] ? ta : tb;
				else
					out = tb;
				level = pool->held[out->crow] + 1;
				pool->held[out->crow] = level > HELD_LEVEL_MAX ? HELD_APART : (uint8_t) level;
				moved++;
			}
	}
	return moved;
}

/*
 * One pass over a pool of one key: run, and while a match holds a blocked
 * pair run again from the same state with players moved; after
 * MM_EXCLUDE_ROUNDS rounds every player of a blocked pair is held apart.
 * *any_held tells whether some player was moved.
 */
static MMStatus
exclude_pass(const MMConfig *cfg, MMPool *pool, double prev, double now,
			 MMResult *res, MMRunFn run, bool *any_held)
{
	int			n = pool->ntickets;
	int			ngroups = pool->ngroups;
	int32_t    *group = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(int32_t));
	MMGroup    *groups = mm_malloc_array((size_t) (ngroups > 0 ? ngroups : 1), sizeof(MMGroup));
	int32_t    *degree = NULL;
	int			moved = 0;
	MMStatus	st = MM_OK;
	Member	   *members = mm_malloc_array((size_t) (n > 0 ? n : 1), sizeof(Member));
	int			nparty = 0;

	*any_held = false;
	if (group == NULL || groups == NULL || members == NULL)
	{
		mm_free(group);
		mm_free(groups);
		mm_free(members);
		return MM_ERR_NOMEM;
	}
	nparty = party_members(pool, members);
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
		MMConfig	local = *cfg;

		/*
		 * periodic: the batch the moved players left plays without them
		 * (it counts them), rather than wait for as many newcomers
		 */
		if (cfg->algorithm == MM_ALGO_PERIODIC && moved > 0)
		{
			int			k = mm_config_k(cfg);
			int			nb = cfg->periodic.batch > 0 ? cfg->periodic.batch : mm_auto_batch(cfg);

			nb = (nb - moved) / k * k;
			local.periodic.batch = nb > k ? nb : k;
		}
		exclude_keys(pool, members, nparty);
		keyed_view(pool, &view);
		res->nmatches = 0;
		res->nexpired = 0;
		st = run(&local, &view, prev, now, res);
		pool->ngroups = view.ngroups;
		if (st != MM_OK)
			break;
		if (degree == NULL)
		{
			bool		blocked = false;

			/* the pool's blocked pairs are counted at the first that matters */
			for (int j = 0; j < res->nmatches && !blocked; j++)
				for (int x = 0; x < res->matches[j].nmembers && !blocked; x++)
					for (int y = x + 1; y < res->matches[j].nmembers && !blocked; y++)
					{
						const MMTicket *tx = &pool->tickets[res->members[res->matches[j].first + x]];
						const MMTicket *ty = &pool->tickets[res->members[res->matches[j].first + y]];

						blocked = !(tx->party >= 0 && tx->party == ty->party) &&
							mm_blocked(pool, tx->crow, ty->crow);
					}
			if (!blocked)
				break;
			degree = mm_calloc((size_t) (pool->nblock_rows > 0 ? pool->nblock_rows : 1), sizeof(int32_t));
			if (degree == NULL || each_blocked(pool, count_pair, degree) != MM_OK)
			{
				st = MM_ERR_NOMEM;
				break;
			}
		}
		{
			int			m = hold_blocked(cfg, pool, res, now, degree);

			if (m == 0)
				break;
			moved += m;
		}
		*any_held = true;
		if (round == MM_EXCLUDE_ROUNDS)
		{
			st = each_blocked(pool, apart_pair, NULL);
			if (st != MM_OK)
				break;
		}
		else if (round > MM_EXCLUDE_ROUNDS)
		{
			st = MM_ERR_ARGUMENT;	/* cannot happen: nobody blocked is left together */
			break;
		}
		party_levels(pool, members, nparty);
		/* again from the state before the step */
		for (int i = 0; i < n; i++)
			pool->tickets[i].group = group[i];
		pool->ngroups = ngroups;
		if (ngroups > 0)
			memcpy(pool->groups, groups, sizeof(MMGroup) * ngroups);
	}
	mm_free(degree);
	mm_free(group);
	mm_free(groups);
	mm_free(members);
	return st;
}

/*
 * A step with block lists over a pool of one key; see the header comment.
 * When a pass moved players and matched someone, the tickets left are
 * passed over again at the same instant (levels reset), as a step right
 * after would: a player moved away from a partner who has played since
 * may meet the others left.  At most MM_EXCLUDE_PASSES passes.
 */
MMStatus
mm_exclude_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				MMResult *res, MMRunFn run)
{
	int			n = pool->ntickets;
	bool		any_held;
	MMStatus	st;
	MMPool		sub;
	MMResult	sres = {0};
	int		   *idx = NULL;
	bool	   *done = NULL;
	int			nmembers = 0;

	st = exclude_pass(cfg, pool, prev, now, res, run, &any_held);
	if (st != MM_OK || !any_held || (res->nmatches == 0 && res->nexpired == 0))
		return st;

	idx = mm_malloc_array((size_t) n, sizeof(int));
	done = mm_calloc((size_t) n, sizeof(bool));
	sub = *pool;
	sub.tickets = mm_malloc_array((size_t) n, sizeof(MMTicket));
	sres.matches = mm_malloc_array((size_t) n, sizeof(MMMatch));
	sres.members = mm_malloc_array((size_t) n, sizeof(int));
	sres.teams = mm_malloc_array((size_t) n, sizeof(int));
	sres.expired = mm_malloc_array((size_t) n, sizeof(int));
	if (idx == NULL || done == NULL || sub.tickets == NULL || sres.matches == NULL ||
		sres.members == NULL || sres.teams == NULL || sres.expired == NULL)
		st = MM_ERR_NOMEM;
	for (int j = 0; j < res->nmatches; j++)
		nmembers += res->matches[j].nmembers;

	for (int pass = 1; st == MM_OK && pass < MM_EXCLUDE_PASSES && any_held; pass++)
	{
		int			m = 0;

		for (int j = 0; j < res->nmatches; j++)
			for (int i = 0; i < res->matches[j].nmembers; i++)
				done[res->members[res->matches[j].first + i]] = true;
		for (int j = 0; j < res->nexpired; j++)
			done[res->expired[j]] = true;
		for (int i = 0; i < n; i++)
			if (!done[i])
			{
				idx[m] = i;
				sub.tickets[m++] = pool->tickets[i];
			}
		if (m == 0)
			break;
		/* the provisional groups as the last pass left them, in place */
		sub.ntickets = m;
		sub.groups = pool->groups;
		sub.ngroups = pool->ngroups;
		st = exclude_pass(cfg, &sub, now, now, &sres, run, &any_held);
		if (st != MM_OK)
			break;
		pool->ngroups = sub.ngroups;
		for (int i = 0; i < m; i++)
			pool->tickets[idx[i]].group = sub.tickets[i].group;
		for (int j = 0; j < sres.nmatches; j++)
		{
			MMMatch    *mt = &res->matches[res->nmatches++];

			*mt = sres.matches[j];
			for (int i = 0; i < mt->nmembers; i++)
			{
				res->members[nmembers + i] = idx[sres.members[mt->first + i]];
				res->teams[nmembers + i] = sres.teams[mt->first + i];
			}
			mt->first = nmembers;
			nmembers += mt->nmembers;
		}
		for (int j = 0; j < sres.nexpired; j++)
			res->expired[res->nexpired++] = idx[sres.expired[j]];
		if (sres.nmatches == 0 && sres.nexpired == 0)
			break;
	}
	mm_free(idx);
	mm_free(done);
	mm_free(sub.tickets);
	mm_free(sres.matches);
	mm_free(sres.members);
	mm_free(sres.teams);
	mm_free(sres.expired);
	return st;
}

/* The next deadline of a pool of one key with block lists: over the last step's levels. */
double
mm_exclude_deadline(const MMConfig *cfg, const MMPool *pool, MMDeadlineFn deadline)
{
	MMPool		view;
	Member	   *members = mm_malloc_array((size_t) (pool->ntickets > 0 ? pool->ntickets : 1), sizeof(Member));
	int			nparty = 0;
	double		d;

	/* without the memory, each ticket held apart its own key: a deadline at worst early */
	if (members != NULL)
		nparty = party_members(pool, members);
	exclude_keys(pool, members, nparty);
	keyed_view(pool, &view);
	d = deadline(cfg, &view);
	mm_free(members);
	return d;
}
