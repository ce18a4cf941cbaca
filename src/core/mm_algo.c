/*
 * mm_algo.c
 *		One matching step (Schlup, section 4): the dispatch, the greedy,
 *		periodic and multi-queue algorithms with their timeout handling,
 *		the next deadline, pool compaction and the automatic parameters of
 *		eq. 6 and eq. 9.  difference_wait lives in mm_diffwait.c.
 *
 * Every algorithm only decides: it appends matches (members, nmembers,
 * bots) and expiries to the result.  mm_step then finishes each match the
 * same way: its members are listed in pool (arrival) order, split into
 * teams and costed.  optimize (mm_optimize.c) chooses the teams itself,
 * so its split is kept.  doc/algorithms.md states the rules in prose.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest value mm_auto_batch and mm_auto_ranges return. */
#define MM_AUTO_MAX			1e9

/* Largest k mm_config_check accepts; bounds the stack scratch. */
#define MM_MAX_K			1000

/* A ticket index with the key it is sorted by. */
typedef struct KeyedIndex
{
	double		key;
	int			idx;
} KeyedIndex;

/* Order KeyedIndex by key, then by index (arrival order). */
static int
keyed_cmp(const void *a, const void *b)
{
	const KeyedIndex *x = a;
	const KeyedIndex *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Order ints ascending. */
static int
int_cmp(const void *a, const void *b)
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

/* Append a match of n tickets taken from idx (k - n bots). */
void
mm_add_match(MMResult *res, const int *idx, int n, int k)
{
	MMMatch    *m = &res->matches[res->nmatches];
	int			first = members_used(res);

	m->first = first;
	m->nmembers = n;
	m->bots = k - n;
	m->cost.criteria = m->cost.wait = m->cost.total = 0.0;
	for (int i = 0; i < n; i++)
		res->members[first + i] = idx[i];
	res->nmatches++;
}

/* Append a match of the n consecutive tickets from start (k - n bots). */
static void
add_match_range(MMResult *res, int start, int n, int k)
{
	MMMatch    *m = &res->matches[res->nmatches];
	int			first = members_used(res);

	m->first = first;
	m->nmembers = n;
	m->bots = k - n;
	m->cost.criteria = m->cost.wait = m->cost.total = 0.0;
	for (int i = 0; i < n; i++)
		res->members[first + i] = start + i;
	res->nmatches++;
}

/*
 * What happens to the tickets from start on (fewer than k, the oldest
 * timed out) when nothing better can be done: with bots they all play one
 * game completed with computer players; with expire the timed-out ones
 * (a prefix, the pool being in arrival order) expire and the rest wait.
 */
static void
timeout_rest(const MMConfig *cfg, const MMPool *pool, double now,
			 MMResult *res, int start)
{
	int			n = pool->ntickets;

	if (start >= n || !mm_timed_out(&pool->tickets[start], now, cfg->max_wait))
		return;
	if (cfg->on_timeout == MM_TIMEOUT_BOTS)
	{
		add_match_range(res, start, n - start, mm_config_k(cfg));
		return;
	}
	for (int i = start; i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
		res->expired[res->nexpired++] = i;
}

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
	st = mm_split_teams(cfg, n, ratings, teams);
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

/*
 * greedy (4.1): the k oldest play together; timeouts per timeout_rest.
 * With team_policy patient (Wu), k players that cannot be split into
 * balanced teams wait for one more player (see patient_choice).
 */
static MMStatus
step_greedy(const MMConfig *cfg, const MMPool *pool, double now, MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			n = pool->ntickets;
	int			i = 0;
	int		   *rem;
	int		   *head;
	int			nrem;

	if (cfg->greedy.team_policy != MM_TEAMS_PATIENT)
	{
		for (; n - i >= k; i += k)
			add_match_range(res, i, k, k);
		timeout_rest(cfg, pool, now, res, i);
		return MM_OK;
	}

	rem = malloc(sizeof(int) * (size_t) n);
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
			free(rem);
			return st;
		}
		if (take == 0)
			break;
		/* the players in arrival order, as every match lists them */
		memcpy(idx, head, sizeof(int) * (size_t) k);
		qsort(idx, k, sizeof(int), int_cmp);
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
	free(rem);
	return MM_OK;
}

/*
 * Sort the cnt tickets from start by rating (ties by arrival) and match
 * every k consecutive ones; cnt is a multiple of k.  buf has cnt entries.
 */
static void
match_by_rating(const MMPool *pool, MMResult *res, int start, int cnt, int k,
				KeyedIndex *buf)
{
	int			idx[MM_MAX_K];

	for (int i = 0; i < cnt; i++)
	{
		buf[i].key = pool->tickets[start + i].rating;
		buf[i].idx = start + i;
	}
	qsort(buf, cnt, sizeof(KeyedIndex), keyed_cmp);
	for (int g = 0; g < cnt; g += k)
	{
		for (int j = 0; j < k; j++)
			idx[j] = buf[g + j].idx;
		mm_add_match(res, idx, k, k);
	}
}

/*
 * periodic (4.2): every full batch of the n oldest is sorted by rating and
 * cut into games of k.  When the oldest remaining ticket times out the
 * period ends early: the oldest m - m mod k are matched the same way and
 * the newest m mod k wait, unless one of them timed out too.
 */
static MMStatus
step_periodic(const MMConfig *cfg, const MMPool *pool, double now,
			  MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			n = pool->ntickets;
	int			nb = cfg->periodic.batch > 0 ? cfg->periodic.batch : mm_auto_batch(cfg);
	int			i = 0;
	KeyedIndex *buf;

	if (n < nb && !mm_timed_out(&pool->tickets[0], now, cfg->max_wait))
		return MM_OK;			/* nothing to do: the usual case */

	buf = malloc(sizeof(KeyedIndex) * (size_t) n);
	if (buf == NULL)
		return MM_ERR_NOMEM;
	for (; n - i >= nb; i += nb)
		match_by_rating(pool, res, i, nb, k, buf);
	if (i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait))
	{
		int			m = n - i;
		int			g = m - m % k;

		match_by_rating(pool, res, i, g, k, buf);
		timeout_rest(cfg, pool, now, res, i + g);
	}
	free(buf);
	return MM_OK;
}

/* multi_queue: a ticket index with its range, sorted by (range, index). */
typedef struct RangedIndex
{
	int64_t		range;
	int			idx;
} RangedIndex;

/* Order RangedIndex by range, then index. */
static int
ranged_cmp(const void *a, const void *b)
{
	const RangedIndex *x = a;
	const RangedIndex *y = b;

	if (x->range != y->range)
		return x->range < y->range ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* A full range queue found by multi_queue: where it starts, when it filled. */
typedef struct FullQueue
{
	int			pos;			/* first entry in the sorted array */
	int			last;			/* its newest ticket: the decision order */
} FullQueue;

/* Order FullQueue by the ticket that completed it. */
static int
fullqueue_cmp(const void *a, const void *b)
{
	const FullQueue *x = a;
	const FullQueue *y = b;

	return (x->last > y->last) - (x->last < y->last);
}

/* multi_queue with several criteria: a non-empty cell at a distance. */
typedef struct RingCell
{
	int64_t		dist;			/* Chebyshev distance in cells */
	int			cell;			/* non-empty cell number */
} RingCell;

/* Order RingCell by distance, then cell. */
static int
ringcell_cmp(const void *a, const void *b)
{
	const RingCell *x = a;
	const RingCell *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return (x->cell > y->cell) - (x->cell < y->cell);
}

/*
 * Radius growth over the cells of several criteria, from non-empty cell
 * rx: the cells whose coordinates differ from rx's by at most 1 in every
 * criterion come first, then by at most 2, and so on; inside each ring the
 * oldest heads are taken first across its cells.  cell[c] is the number of
 * non-empty cell c; ring has room for nr entries.  Returns the new ntake.
 */
static int
take_by_rings(const int *r, const int64_t *stride, int dims,
			  const int64_t *cell, int *head, const int *end, int nr,
			  const RangedIndex *ord, int rx, RingCell *ring,
			  int *take, int ntake, int k)
{
	int			nring = 0;

	for (int c = 0; c < nr; c++)
	{
		int64_t		dist = 0;

		if (c == rx || head[c] == end[c])
			continue;
		for (int d = 0; d < dims; d++)
		{
			int64_t		u = cell[c] / stride[d] % r[d];
			int64_t		v = cell[rx] / stride[d] % r[d];
			int64_t		diff = u > v ? u - v : v - u;

			if (diff > dist)
				dist = diff;
		}
		ring[nring].dist = dist;
		ring[nring].cell = c;
		nring++;
	}
	qsort(ring, nring, sizeof(RingCell), ringcell_cmp);
	for (int b = 0; b < nring && ntake < k;)
	{
		int			e = b;

		while (e < nring && ring[e].dist == ring[b].dist)
			e++;
		while (ntake < k)
		{
			int			best = -1;

			for (int j = b; j < e; j++)
			{
				int			c = ring[j].cell;

				if (head[c] < end[c] &&
					(best < 0 || ord[head[c]].idx < ord[head[best]].idx))
					best = c;
			}
			if (best < 0)
				break;
			take[ntake++] = ord[head[best]++].idx;
		}
		b = e;
	}
	return ntake;
}

/*
 * multi_queue (4.3).  Phase 1: per range, the tickets in arrival order
 * form games of k (the order of the games is the arrival order of the
 * ticket that completed them).  Phase 2: timed-out tickets, oldest first,
 * take companions by radius growth over the non-empty ranges; the tickets
 * taken from a range are always its oldest, so every range is consumed
 * from its head.  With several criteria a "range" is a cell of the grid
 * of every criterion's ranges (Schlup: a queue for every combination).
 */
static MMStatus
step_multi_queue(const MMConfig *cfg, const MMPool *pool, double now,
				 MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			n = pool->ntickets;
	int			dims = cfg->criteria.n + 1;
	int			rd[MM_MAX_CRITERIA];
	int64_t		stride[MM_MAX_CRITERIA];
	int64_t		r = 1;			/* cells */
	void	   *block;
	RangedIndex *ord;
	FullQueue  *full;
	int64_t    *rng;			/* ticket -> range, then non-empty range ->
								 * range number */
	int		   *head;			/* non-empty range -> next entry in ord */
	int		   *end;			/* non-empty range -> end of its entries */
	int		   *where;			/* ticket -> non-empty range */
	unsigned char *gone;		/* ticket matched or expired */
	RingCell   *ring = NULL;	/* several criteria: radius growth scratch */
	int			nfull = 0;
	int			nr = 0;
	int			waiting = 0;
	int			take[MM_MAX_K];
	int			counting;
	int		   *cnt;			/* counting sort: start of each range */

	if (n < k && !mm_timed_out(&pool->tickets[0], now, cfg->max_wait))
		return MM_OK;			/* no queue can be full, nobody timed out */

	mm_criteria_ranges(cfg, rd);
	for (int d = 0; d < dims; d++)
	{
		stride[d] = r;
		r *= rd[d];
	}

	/*
	 * One block for all scratch (int64_t-sized pieces first).  With few
	 * ranges a counting sort (stable, so arrival order within a range)
	 * replaces qsort: a step runs for every arrival.
	 */
	counting = r <= 4 * (int64_t) n + 64;
	block = malloc(sizeof(RangedIndex) * (size_t) n +
				   (dims > 1 ? sizeof(RingCell) * (size_t) n : 0) +
				   sizeof(FullQueue) * (size_t) (n / k + 1) +
				   sizeof(int64_t) * (size_t) n +
				   sizeof(int) * 3 * (size_t) n + (size_t) n +
				   (counting ? sizeof(int) * (size_t) (r + 1) : 0));
	if (block == NULL)
		return MM_ERR_NOMEM;
	ord = (RangedIndex *) block;
	rng = (int64_t *) (ord + n);
	if (dims > 1)
	{
		ring = (RingCell *) (rng + n);
		full = (FullQueue *) (ring + n);
	}
	else
		full = (FullQueue *) (rng + n);
	head = (int *) (full + n / k + 1);
	end = head + n;
	where = end + n;
	cnt = where + n;			/* r + 1 entries when counting */
	gone = (unsigned char *) (cnt + (counting ? r + 1 : 0));
	memset(gone, 0, (size_t) n);

	/* rng temporarily holds each ticket's range (cell) */
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];
		int64_t		cellno = 0;

		for (int d = 0; d < dims; d++)
		{
			double		v = d == 0 ? t->rating :
				pool->criteria[(size_t) t->crow * cfg->criteria.n + d - 1];
			int64_t		q = (int64_t) floor(v * (double) rd[d]);

			cellno += (q < rd[d] - 1 ? q : rd[d] - 1) * stride[d];
		}
		rng[i] = cellno;
	}
	if (counting)
	{
		memset(cnt, 0, sizeof(int) * (size_t) (r + 1));
		for (int i = 0; i < n; i++)
			cnt[rng[i] + 1]++;
		for (int64_t b = 0; b < r; b++)
			cnt[b + 1] += cnt[b];
		for (int i = 0; i < n; i++)
		{
			int			p = cnt[rng[i]]++;

			ord[p].range = rng[i];
			ord[p].idx = i;
		}
	}
	else
	{
		for (int i = 0; i < n; i++)
		{
			ord[i].range = rng[i];
			ord[i].idx = i;
		}
		qsort(ord, n, sizeof(RangedIndex), ranged_cmp);
	}

	/* phase 1: full queues; what is left of each range is its tail */
	for (int b = 0; b < n;)
	{
		int			e = b;
		int			tail;

		while (e < n && ord[e].range == ord[b].range)
			e++;
		tail = b + (e - b) / k * k;
		for (int p = b; p < tail; p += k)
		{
			full[nfull].pos = p;
			full[nfull].last = ord[p + k - 1].idx;
			nfull++;
		}
		for (int p = b; p < tail; p++)
			gone[ord[p].idx] = 1;
		if (tail < e)
		{
			rng[nr] = ord[b].range;
			head[nr] = tail;
			end[nr] = e;
			for (int p = tail; p < e; p++)
				where[ord[p].idx] = nr;
			waiting += e - tail;
			nr++;
		}
		b = e;
	}
	qsort(full, nfull, sizeof(FullQueue), fullqueue_cmp);
	for (int f = 0; f < nfull; f++)
	{
		for (int j = 0; j < k; j++)
			take[j] = ord[full[f].pos + j].idx;
		mm_add_match(res, take, k, k);
	}

	/* phase 2: timeouts, oldest first */
	for (int x = 0; x < n && waiting > 0; x++)
	{
		int			rx;
		int			ntake = 0;
		int			left;
		int			right;

		if (gone[x])
			continue;
		if (!mm_timed_out(&pool->tickets[x], now, cfg->max_wait))
			break;				/* every later ticket is younger */
		rx = where[x];

		if (waiting - 1 < k - 1)
		{
			/* not enough players anywhere */
			if (cfg->on_timeout == MM_TIMEOUT_EXPIRE)
			{
				res->expired[res->nexpired++] = x;
				gone[x] = 1;
				head[rx]++;		/* x is the oldest of its range */
				waiting--;
				continue;
			}
			for (int i = x; i < n; i++)
				if (!gone[i])
				{
					take[ntake++] = i;
					gone[i] = 1;
				}
			mm_add_match(res, take, ntake, k);
			waiting = 0;
			break;
		}

		/* radius growth; x heads its own range, which comes first */
		left = rx - 1;
		right = rx + 1;
		while (ntake < k && head[rx] < end[rx])
			take[ntake++] = ord[head[rx]++].idx;
		if (dims > 1)
			ntake = take_by_rings(rd, stride, dims, rng, head, end, nr, ord,
								  rx, ring, take, ntake, k);
		while (ntake < k)
		{
			int64_t		dl;
			int64_t		dr;

			while (left >= 0 && head[left] == end[left])
				left--;
			while (right < nr && head[right] == end[right])
				right++;
			dl = left >= 0 ? rng[rx] - rng[left] : INT64_MAX;
			dr = right < nr ? rng[right] - rng[rx] : INT64_MAX;
			if (dl == INT64_MAX && dr == INT64_MAX)
				break;			/* cannot happen: enough are waiting */
			if (dl == dr)
			{
				/* both neighbours at this distance: oldest first across them */
				while (ntake < k && (head[left] < end[left] || head[right] < end[right]))
				{
					if (head[right] == end[right] ||
						(head[left] < end[left] &&
						 ord[head[left]].idx < ord[head[right]].idx))
						take[ntake++] = ord[head[left]++].idx;
					else
						take[ntake++] = ord[head[right]++].idx;
				}
			}
			else if (dl < dr)
			{
				while (ntake < k && head[left] < end[left])
					take[ntake++] = ord[head[left]++].idx;
			}
			else
			{
				while (ntake < k && head[right] < end[right])
					take[ntake++] = ord[head[right]++].idx;
			}
		}
		for (int i = 0; i < ntake; i++)
			gone[take[i]] = 1;
		waiting -= ntake;
		mm_add_match(res, take, ntake, k);
	}

	free(block);
	return MM_OK;
}

/*
 * Give every match decided by a step its final form: members in pool
 * order, team numbers and cost.  Allocates nothing, so cannot fail on a
 * validated pool.
 */
static MMStatus
finish_matches(const MMConfig *cfg, const MMPool *pool, double now,
			   MMResult *res)
{
	int			k = mm_config_k(cfg);
	int			dims = cfg->criteria.n + 1;
	double		ratings[MM_MAX_K];
	double		waits[MM_MAX_K];
	double		f[MM_MAX_CRITERIA];
	double	   *crit = ratings; /* player by player, every criterion */

	mm_criteria_factors(cfg, f);
	if (dims > 1 && res->nmatches > 0)
	{
		crit = malloc(sizeof(double) * (size_t) k * dims);
		if (crit == NULL)
			return MM_ERR_NOMEM;
	}

	for (int j = 0; j < res->nmatches; j++)
	{
		MMMatch    *m = &res->matches[j];
		int		   *mem = res->members + m->first;
		MMStatus	st;

		int		   *tm = res->teams + m->first;

		/* optimize chose the teams: they move with their members (k <= 12) */
		if (m->nmembers <= 16 || cfg->algorithm == MM_ALGO_OPTIMIZE)
		{
			for (int i = 1; i < m->nmembers; i++)
			{
				int			v = mem[i];
				int			tv = tm[i];
				int			p = i;

				for (; p > 0 && mem[p - 1] > v; p--)
				{
					mem[p] = mem[p - 1];
					tm[p] = tm[p - 1];
				}
				mem[p] = v;
				tm[p] = tv;
			}
		}
		else
			qsort(mem, m->nmembers, sizeof(int), int_cmp);

		for (int i = 0; i < m->nmembers; i++)
		{
			const MMTicket *t = &pool->tickets[mem[i]];
			double		w = now - t->arrival;

			ratings[i] = t->rating;
			waits[i] = w > 0 ? w : 0.0;
			if (dims > 1)
			{
				crit[(size_t) i * dims] = t->rating;
				for (int d = 1; d < dims; d++)
					crit[(size_t) i * dims + d] =
						pool->criteria[(size_t) t->crow * cfg->criteria.n + d - 1];
			}
		}
		st = MM_OK;
		if (cfg->algorithm != MM_ALGO_OPTIMIZE)
			st = mm_split_teams(cfg, m->nmembers, ratings, tm);
		if (st == MM_OK)
			st = mm_game_cost(k, m->nmembers, dims, crit, f, waits,
							  cfg->max_wait, &m->cost);
		if (st != MM_OK)
		{
			if (crit != ratings)
				free(crit);
			return st;
		}
	}
	if (crit != ratings)
		free(crit);
	return MM_OK;
}

/*
 * Check what every algorithm relies on: result arrays present, tickets
 * strictly ordered by (arrival, id), finite arrivals, ratings in [0, 1],
 * and with criteria a row of values in [0, 1] for every ticket.
 */
static MMStatus
check_pool(const MMConfig *cfg, const MMPool *pool, const MMResult *res,
		   double now)
{
	int			n = pool->ntickets;

	if (n < 0)
		return MM_ERR_ARGUMENT;
	if (n == 0)
		return MM_OK;
	if (pool->tickets == NULL || res->matches == NULL ||
		res->members == NULL || res->teams == NULL || res->expired == NULL)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		/* waits must be finite too, or the costs would fail after the step decided */
		if (!isfinite(t->arrival) || !isfinite(now - t->arrival) ||
			!(t->rating >= 0.0 && t->rating <= 1.0))
			return MM_ERR_ARGUMENT;
		if (cfg->criteria.n > 0)
		{
			if (pool->criteria == NULL || t->crow < 0 || t->crow >= pool->ncrows)
				return MM_ERR_ARGUMENT;
			for (int d = 0; d < cfg->criteria.n; d++)
			{
				double		v = pool->criteria[(size_t) t->crow * cfg->criteria.n + d];

				if (!(v >= 0.0 && v <= 1.0))
					return MM_ERR_ARGUMENT;
			}
		}
		if (i > 0)
		{
			const MMTicket *p = &pool->tickets[i - 1];

			if (p->arrival > t->arrival ||
				(p->arrival == t->arrival && p->id >= t->id))
				return MM_ERR_ARGUMENT;
		}
	}
	return MM_OK;
}

/* Run the configured algorithm on the pool at time now. */
MMStatus
mm_step(const MMConfig *cfg, MMPool *pool, double now, MMResult *result)
{
	MMStatus	st;
	double		prev;

	if (result != NULL)
	{
		result->nmatches = 0;
		result->nexpired = 0;
	}
	if (mm_config_check(cfg) != MM_OK || pool == NULL || result == NULL ||
		!isfinite(now))
		return MM_ERR_ARGUMENT;
	st = check_pool(cfg, pool, result, now);
	if (st != MM_OK)
		return st;
	prev = pool->stepped_at;
	pool->stepped_at = now;
	if (pool->ntickets == 0)
	{
		if (cfg->algorithm == MM_ALGO_DIFFERENCE_WAIT)
			pool->ngroups = 0;
		return MM_OK;
	}

	switch (cfg->algorithm)
	{
		case MM_ALGO_GREEDY:
			st = step_greedy(cfg, pool, now, result);
			break;
		case MM_ALGO_PERIODIC:
			st = step_periodic(cfg, pool, now, result);
			break;
		case MM_ALGO_MULTI_QUEUE:
			st = step_multi_queue(cfg, pool, now, result);
			break;
		case MM_ALGO_DIFFERENCE_WAIT:
			st = mm_difference_wait_step(cfg, pool, now, result);
			break;
		case MM_ALGO_WINDOW:
			st = mm_window_step(cfg, pool, now, result);
			break;
		case MM_ALGO_CLUSTER:
			st = mm_cluster_step(cfg, pool, now, result);
			break;
		case MM_ALGO_OPTIMIZE:
			st = mm_optimize_step(cfg, pool, prev, now, result);
			break;
		default:
			st = MM_ERR_ARGUMENT;
			break;
	}
	if (st == MM_OK)
		st = finish_matches(cfg, pool, now, result);
	if (st != MM_OK)
	{
		result->nmatches = 0;
		result->nexpired = 0;
	}
	return st;
}

/*
 * The earliest time at which a step without new arrivals would act: a
 * ticket's timeout (for difference_wait only ungrouped tickets can time
 * out, grouped ones finalise first) or a provisional group's finalisation.
 */
double
mm_next_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		d = INFINITY;

	if (cfg == NULL || pool == NULL || pool->ntickets <= 0 ||
		pool->tickets == NULL)
		return INFINITY;
	if (cfg->algorithm == MM_ALGO_WINDOW || cfg->algorithm == MM_ALGO_CLUSTER ||
		cfg->algorithm == MM_ALGO_OPTIMIZE)
	{
		double		t = pool->tickets[0].arrival + cfg->max_wait;
		double		w = INFINITY;

		/* fewer than k tickets can only time out */
		if (pool->ntickets >= mm_config_k(cfg))
			w = cfg->algorithm == MM_ALGO_WINDOW ?
				mm_window_next_widening(cfg, pool) : mm_recheck_next(cfg, pool);
		return w < t ? w : t;
	}
	if (cfg->algorithm != MM_ALGO_DIFFERENCE_WAIT)
		return pool->tickets[0].arrival + cfg->max_wait;	/* the oldest */

	for (int i = 0; i < pool->ntickets; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		if (t->group < 0 || t->group >= pool->ngroups)
		{
			double		td = t->arrival + cfg->max_wait;

			if (td < d)
				d = td;
		}
	}
	if (pool->groups != NULL)
		for (int g = 0; g < pool->ngroups; g++)
			if (pool->groups[g].finalize_at < d)
				d = pool->groups[g].finalize_at;
	return d;
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

/*
 * Drop the tickets a step matched or expired, keeping arrival order.  The
 * group indices of the remaining tickets point into pool->groups, which
 * the step already compacted, so they stay valid as they are.  Entries
 * of result outside the pool are ignored.
 */
void
mm_pool_compact(MMPool *pool, const MMResult *result)
{
	int			n;
	int			w = 0;

	if (pool == NULL || result == NULL || pool->ntickets <= 0 ||
		pool->tickets == NULL)
		return;
	n = pool->ntickets;

	/* mark in place: the marked tickets are about to disappear anyway */
	for (int j = 0; j < result->nmatches; j++)
	{
		const MMMatch *m = &result->matches[j];

		for (int i = 0; i < m->nmembers; i++)
		{
			int			idx = result->members[m->first + i];

			if (idx >= 0 && idx < n)
				pool->tickets[idx].group = INT32_MIN;
		}
	}
	for (int j = 0; j < result->nexpired; j++)
	{
		int			idx = result->expired[j];

		if (idx >= 0 && idx < n)
			pool->tickets[idx].group = INT32_MIN;
	}
	for (int i = 0; i < n; i++)
		if (pool->tickets[i].group != INT32_MIN)
			pool->tickets[w++] = pool->tickets[i];
	pool->ntickets = w;
}

/* Eq. 5: expected cost per game of periodic with batch n. */
static double
periodic_cost(int k, double n, double a, double max_wait)
{
	return (double) k * (k - 1) / (n + 1) + k * (n - 1) / (2 * a * max_wait);
}

/*
 * Periodic batch from eq. 6: the multiple of k just below or just above
 * n_opt (at least k) with the lower eq. 5 cost, the smaller on a tie;
 * k when the arrival rate is unknown (0).
 */
int
mm_auto_batch(const MMConfig *cfg)
{
	int			k;
	double		a;
	double		t;
	double		nopt;
	double		lo;
	double		hi;

	if (cfg == NULL)
		return 0;
	k = mm_config_k(cfg);
	a = cfg->arrival_rate;
	t = cfg->max_wait;
	if (k < 1)
		return 0;
	if (!(a > 0) || !(t > 0) || !isfinite(a) || !isfinite(t))
		return k;
	nopt = sqrt(a) * sqrt(2.0 * (k - 1)) * sqrt(t) - 1.0;
	if (!(nopt <= MM_AUTO_MAX))
		nopt = MM_AUTO_MAX;
	lo = floor(nopt / k) * k;
	hi = ceil(nopt / k) * k;
	if (lo < k)
		lo = k;
	if (hi < k)
		hi = k;
	/* the cap holds after rounding to a multiple of k too */
	if (hi > floor(MM_AUTO_MAX / k) * k)
		hi = floor(MM_AUTO_MAX / k) * k;
	if (lo > hi)
		lo = hi;
	if (periodic_cost(k, hi, a, t) < periodic_cost(k, lo, a, t))
		return (int) hi;
	return (int) lo;
}

/*
 * Eq. 7 generalised to D criteria: the expected cost per game of
 * multi_queue with r[d] ranges of criterion d (weighted by f[d]), that is
 * sum_d f_d (k-1)/((k+1) r_d) + R k(k-1)/(2 a max_wait) with R = prod r_d.
 * With one criterion and f = k it is eq. 7.
 */
static double
multi_queue_cost(int k, int dims, const double *r, const double *f,
				 double a, double max_wait)
{
	double		cells = 1;
	double		c = 0;

	for (int d = 0; d < dims; d++)
	{
		c += f[d] * (k - 1) / ((k + 1) * r[d]);
		cells *= r[d];
	}
	return c + cells * k * (k - 1) / (2 * a * max_wait);
}

/*
 * multi_queue's ranges per criterion.  Fixed ones are as configured.  The
 * free ones (ranges "auto") minimise the generalised eq. 7: setting its
 * derivatives to 0 gives r_d = lambda f_d with lambda^(m+1) =
 * 2 a max_wait / (k (k+1) R_fixed prod f_d) over the m free criteria
 * (eq. 9 when m = D = 1).  Each is then floor or ceil (at least 1), the
 * combination with the lower cost winning, the earlier in floor-first
 * order on a tie.  A free criterion of factor 0, or any without a known
 * arrival rate, gets 1 range.  Ranges are capped at 1e9 each and their
 * product at MM_MAX_CELLS.
 */
void
mm_criteria_ranges(const MMConfig *cfg, int *ranges)
{
	int			dims = cfg->criteria.n + 1;
	int			k = mm_config_k(cfg);
	double		a = cfg->arrival_rate;
	double		t = cfg->max_wait;
	double		f[MM_MAX_CRITERIA];
	int			freed[MM_MAX_CRITERIA];
	int			m = 0;
	double		fixed = 1;
	double		logf = 0;
	double		lambda;
	double		lo[MM_MAX_CRITERIA];	/* per free criterion: floor and ceil */
	double		hi[MM_MAX_CRITERIA];
	double		best = INFINITY;

	mm_criteria_factors(cfg, f);
	for (int d = 0; d < dims; d++)
	{
		int			r = d == 0 ? cfg->multi_queue.ranges :
			(cfg->criteria.ranges[d] > 0 ? cfg->criteria.ranges[d] : cfg->multi_queue.ranges);

		ranges[d] = r > 0 ? r : 1;
		if (r > 0)
			fixed *= r;
		else if (f[d] > 0)
		{
			freed[m++] = d;
			logf += log(f[d]);
		}
	}
	if (m == 0 || !(a > 0) || !(t > 0) || !isfinite(a) || !isfinite(t) || k < 1)
		return;

	/* in logarithms: a high rate must not overflow */
	lambda = (log(2.0 * a * t) - log((double) k * (k + 1)) - log(fixed) - logf) / (m + 1);
	/* the cell cap: R_fixed * lambda^m * prod f <= MM_MAX_CELLS */
	if (log(fixed) + m * lambda + logf > log(MM_MAX_CELLS))
		lambda = (log(MM_MAX_CELLS) - log(fixed) - logf) / m;
	for (int j = 0; j < m; j++)
	{
		double		v = exp(lambda + log(f[freed[j]]));

		if (v > MM_AUTO_MAX)
			v = MM_AUTO_MAX;
		lo[j] = floor(v) < 1 ? 1 : floor(v);
		hi[j] = ceil(v) < 1 ? 1 : ceil(v);
	}

	for (int combo = 0; combo < (1 << m); combo++)
	{
		double		r[MM_MAX_CRITERIA];
		double		cells = 1;
		double		c;

		for (int d = 0; d < dims; d++)
			r[d] = ranges[d];
		for (int j = 0; j < m; j++)
			r[freed[j]] = (combo >> j) & 1 ? hi[j] : lo[j];
		for (int d = 0; d < dims; d++)
			cells *= r[d];
		if (cells > MM_MAX_CELLS && combo > 0)
			continue;
		c = multi_queue_cost(k, dims, r, f, a, t);
		if (combo == 0 || c < best)
		{
			best = c;
			for (int j = 0; j < m; j++)
				ranges[freed[j]] = (int) r[freed[j]];
		}
	}
}

/*
 * The rating's range count that "auto" gives (eq. 9 with one criterion):
 * 1 when the arrival rate is unknown (0).
 */
int
mm_auto_ranges(const MMConfig *cfg)
{
	MMConfig	c;
	int			ranges[MM_MAX_CRITERIA];

	if (cfg == NULL)
		return 1;
	c = *cfg;
	c.multi_queue.ranges = 0;
	mm_criteria_ranges(&c, ranges);
	return ranges[0];
}
