/*
 * multi_queue.c
 *		The multi-queue algorithm (Schlup, 4.3): the rating range (and each
 *		further criterion's) cut into ranges, a match when a cell or a ring
 *		of cells around it holds k tickets; and its automatic range counts
 *		(eq. 9, generalised to several criteria).
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The working state of one multi_queue step. */
typedef struct MQState
{
	int			k;
	int			n;				/* tickets in the pool */
	int			dims;			/* criteria, the rating included */
	int			rd[MM_MAX_CRITERIA];	/* ranges of each criterion */
	int64_t		stride[MM_MAX_CRITERIA];	/* cell number = sum of coordinate * stride */
	int64_t		r;				/* cells */
	int			counting;		/* counting sort instead of qsort */
	void	   *block;			/* the one allocation of the step */
	RangedIndex *ord;			/* tickets by cell, arrival order within */
	FullQueue  *full;
	int64_t    *rng;			/* ticket -> range, then non-empty range ->
								 * range number */
	int		   *head;			/* non-empty range -> next entry in ord */
	int		   *end;			/* non-empty range -> end of its entries */
	int		   *where;			/* ticket -> non-empty range */
	unsigned char *gone;		/* ticket matched or expired */
	RingCell   *ring;			/* several criteria: radius growth scratch */
	int		   *cnt;			/* counting sort: start of each range */
	int			nr;				/* non-empty ranges */
	int			waiting;		/* tickets still waiting in them */
} MQState;

/*
 * One block for all scratch (int64_t-sized pieces first).  With few
 * ranges a counting sort (stable, so arrival order within a range)
 * replaces qsort: a step runs for every arrival.  The block is stack
 * (stack_size bytes) when it fits, as it does for the small pools of most
 * steps.
 */
static MMStatus
mq_alloc(MQState *q, void *stack, size_t stack_size)
{
	int			n = q->n;
	int			k = q->k;
	size_t		size;

	q->counting = q->r <= 4 * (int64_t) n + 64;
	size = sizeof(RangedIndex) * (size_t) n +
		(q->dims > 1 ? sizeof(RingCell) * (size_t) n : 0) +
		sizeof(FullQueue) * (size_t) (n / k + 1) +
		sizeof(int64_t) * (size_t) n +
		sizeof(int) * 3 * (size_t) n + (size_t) n +
		(q->counting ? sizeof(int) * (size_t) (q->r + 1) : 0);
	q->block = size <= stack_size ? stack : mm_malloc(size);
	if (q->block == NULL)
		return MM_ERR_NOMEM;
	q->ord = (RangedIndex *) q->block;
	q->rng = (int64_t *) (q->ord + n);
	q->ring = NULL;
	if (q->dims > 1)
	{
		q->ring = (RingCell *) (q->rng + n);
		q->full = (FullQueue *) (q->ring + n);
	}
	else
		q->full = (FullQueue *) (q->rng + n);
	q->head = (int *) (q->full + n / k + 1);
	q->end = q->head + n;
	q->where = q->end + n;
	q->cnt = q->where + n;		/* r + 1 entries when counting */
	q->gone = (unsigned char *) (q->cnt + (q->counting ? q->r + 1 : 0));
	memset(q->gone, 0, (size_t) n);
	return MM_OK;
}

/* Sort the tickets by their range (cell) into q->ord, arrival order within. */
static void
sort_by_range(MQState *q, const MMConfig *cfg, const MMPool *pool)
{
	int			n = q->n;
	RangedIndex *ord = q->ord;
	int64_t    *rng = q->rng;

	/* rng temporarily holds each ticket's range (cell) */
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];
		int64_t		cellno = 0;

		for (int d = 0; d < q->dims; d++)
		{
			double		v = d == 0 ? t->rating :
				pool->criteria[(size_t) t->crow * cfg->criteria.n + d - 1];
			int64_t		c = (int64_t) floor(v * (double) q->rd[d]);

			cellno += (c < q->rd[d] - 1 ? c : q->rd[d] - 1) * q->stride[d];
		}
		rng[i] = cellno;
	}
	if (q->counting)
	{
		int		   *cnt = q->cnt;

		memset(cnt, 0, sizeof(int) * (size_t) (q->r + 1));
		for (int i = 0; i < n; i++)
			cnt[rng[i] + 1]++;
		for (int64_t b = 0; b < q->r; b++)
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
}

/*
 * Phase 1: per range, the tickets in arrival order form games of k, in
 * the arrival order of the ticket that completed them; what is left of
 * each range is its tail, listed as a non-empty range.
 */
static void
match_full_queues(MQState *q, MMResult *res)
{
	int			n = q->n;
	int			k = q->k;
	const RangedIndex *ord = q->ord;
	int			nfull = 0;
	int			take[MM_MAX_K];

	for (int b = 0; b < n;)
	{
		int			e = b;
		int			tail;

		while (e < n && ord[e].range == ord[b].range)
			e++;
		tail = b + (e - b) / k * k;
		for (int p = b; p < tail; p += k)
		{
			q->full[nfull].pos = p;
			q->full[nfull].last = ord[p + k - 1].idx;
			nfull++;
		}
		for (int p = b; p < tail; p++)
			q->gone[ord[p].idx] = 1;
		if (tail < e)
		{
			q->rng[q->nr] = ord[b].range;
			q->head[q->nr] = tail;
			q->end[q->nr] = e;
			for (int p = tail; p < e; p++)
				q->where[ord[p].idx] = q->nr;
			q->waiting += e - tail;
			q->nr++;
		}
		b = e;
	}
	if (nfull > 1)
		qsort(q->full, nfull, sizeof(FullQueue), fullqueue_cmp);
	for (int f = 0; f < nfull; f++)
	{
		for (int j = 0; j < k; j++)
			take[j] = ord[q->full[f].pos + j].idx;
		mm_add_match(res, take, k, k);
	}
}

/*
 * Radius growth along the range numbers from non-empty range rx: the
 * nearer neighbour first, oldest first across two at the same distance,
 * until take holds k.  Returns the new ntake.
 */
static int
take_by_neighbours(MQState *q, int rx, int *take, int ntake)
{
	int			k = q->k;
	const RangedIndex *ord = q->ord;
	int		   *head = q->head;
	const int  *end = q->end;
	int			left = rx - 1;
	int			right = rx + 1;

	while (ntake < k)
	{
		int64_t		dl;
		int64_t		dr;

		while (left >= 0 && head[left] == end[left])
			left--;
		while (right < q->nr && head[right] == end[right])
			right++;
		dl = left >= 0 ? q->rng[rx] - q->rng[left] : INT64_MAX;
		dr = right < q->nr ? q->rng[right] - q->rng[rx] : INT64_MAX;
		if (dl == INT64_MAX && dr == INT64_MAX)
			break;				/* cannot happen: enough are waiting */
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
	return ntake;
}

/*
 * Phase 2: timed-out tickets, oldest first, take companions by radius
 * growth over the non-empty ranges; the tickets taken from a range are
 * always its oldest, so every range is consumed from its head.
 */
static MMStatus
settle_timeouts(MQState *q, const MMConfig *cfg, const MMPool *pool,
				double now, MMResult *res)
{
	int			n = q->n;
	int			k = q->k;
	int			take[MM_MAX_K];

	for (int x = 0; x < n && q->waiting > 0; x++)
	{
		int			rx;
		int			ntake = 0;

		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		if (q->gone[x])
			continue;
		if (!mm_timed_out(&pool->tickets[x], now, cfg->max_wait))
			break;				/* every later ticket is younger */
		rx = q->where[x];

		if (q->waiting - 1 < k - 1)
		{
			/* not enough players anywhere */
			if (cfg->on_timeout == MM_TIMEOUT_EXPIRE)
			{
				res->expired[res->nexpired++] = x;
				q->gone[x] = 1;
				q->head[rx]++;	/* x is the oldest of its range */
				q->waiting--;
				continue;
			}
			for (int i = x; i < n; i++)
				if (!q->gone[i])
				{
					take[ntake++] = i;
					q->gone[i] = 1;
				}
			mm_add_match(res, take, ntake, k);
			q->waiting = 0;
			break;
		}

		/* radius growth; x heads its own range, which comes first */
		while (ntake < k && q->head[rx] < q->end[rx])
			take[ntake++] = q->ord[q->head[rx]++].idx;
		if (q->dims > 1)
			ntake = take_by_rings(q->rd, q->stride, q->dims, q->rng, q->head,
								  q->end, q->nr, q->ord, rx, q->ring, take,
								  ntake, k);
		ntake = take_by_neighbours(q, rx, take, ntake);
		for (int i = 0; i < ntake; i++)
			q->gone[take[i]] = 1;
		q->waiting -= ntake;
		mm_add_match(res, take, ntake, k);
	}
	return MM_OK;
}

/* A step's scratch on the stack, in 8-byte words (mq_alloc). */
#define MQ_STACK_WORDS 256

/* Most ranges of one criterion that any_range_full and quick_full_queue count on the stack. */
#define MQ_QUICK_RANGES 256

/* The range of a rating among r (the floor of rating times r, at most r - 1). */
static inline int
quick_range(double rating, int r)
{
	/* a rating is not negative */
	int			c = (int) (rating * (double) r);

	return c > r - 1 ? r - 1 : c;
}

/*
 * Whether some range of the rating (one criterion, r ranges, at most
 * MQ_QUICK_RANGES) holds k tickets, counted without sorting: when none
 * does and nobody timed out, a step has nothing to do.
 */
static bool
any_range_full(const MMPool *pool, int r, int k)
{
	int			count[MQ_QUICK_RANGES];

	memset(count, 0, sizeof(int) * (size_t) r);
	for (int i = 0; i < pool->ntickets; i++)
		if (++count[quick_range(pool->tickets[i].rating, r)] >= k)
			return true;
	return false;
}

/*
 * The usual step that is not idle, without sorting: one criterion of at
 * most MQ_QUICK_RANGES ranges, nobody timed out (so phase 2 has nothing to
 * do), and at most one game to form, in one range.  Phase 1 then makes
 * that range's k oldest tickets one game.  Returns false, having added
 * nothing, when more than one game is due: the general step forms them.
 */
static bool
quick_full_queue(const MMPool *pool, int r, int k, MMResult *res)
{
	int			count[MQ_QUICK_RANGES];
	int			take[MM_MAX_K];
	int			full = -1;
	int			ntake = 0;

	memset(count, 0, sizeof(int) * (size_t) r);
	for (int i = 0; i < pool->ntickets; i++)
	{
		int			c = quick_range(pool->tickets[i].rating, r);

		if (++count[c] == k)
		{
			if (full >= 0)
				return false;	/* a second full range */
			full = c;
		}
		else if (count[c] == 2 * k)
			return false;		/* two games in one range */
	}
	if (full < 0)
		return true;			/* idle */
	for (int i = 0; ntake < k; i++)
		if (quick_range(pool->tickets[i].rating, r) == full)
			take[ntake++] = i;
	mm_add_match(res, take, k, k);
	return true;
}

/*
 * Whether a step has nothing to do because nobody timed out and fewer
 * than k wait.  Otherwise the ranges of each criterion are in rd, and
 * quick says whether the ranges can be counted without sorting (one
 * criterion, at most MQ_QUICK_RANGES ranges, nobody timed out).
 */
static bool
too_few(const MMConfig *cfg, const MMPool *pool, double now, int *rd, bool *quick)
{
	bool		timed_out = mm_timed_out(&pool->tickets[0], now, cfg->max_wait);

	if (!timed_out && pool->ntickets < mm_config_k(cfg))
		return true;			/* no range can be full */
	mm_criteria_ranges(cfg, rd);
	*quick = !timed_out && cfg->criteria.n == 0 && rd[0] <= MQ_QUICK_RANGES;
	return false;
}

/*
 * Idle: nobody timed out, and either fewer than k wait or (one criterion,
 * at most MQ_QUICK_RANGES ranges) no range holds k.
 */
bool
mm_multi_queue_idle(const MMConfig *cfg, const MMPool *pool, double now)
{
	int			rd[MM_MAX_CRITERIA];
	bool		quick;

	return too_few(cfg, pool, now, rd, &quick) ||
		(quick && !any_range_full(pool, rd[0], mm_config_k(cfg)));
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
MMStatus
mm_multi_queue_step(const MMConfig *cfg, MMPool *pool, double prev,
					double now, MMResult *res)
{
	MQState		q;
	MMStatus	st;
	int			rd[MM_MAX_CRITERIA];
	bool		quick;
	int64_t		stack[MQ_STACK_WORDS];	/* int64_t: aligned for every piece */

	(void) prev;
	if (pool->ntickets == 0 || too_few(cfg, pool, now, rd, &quick))
		return MM_OK;
	if (quick && quick_full_queue(pool, rd[0], mm_config_k(cfg), res))
		return MM_OK;			/* the usual step: one game, or none */
	memset(&q, 0, sizeof(q));
	memcpy(q.rd, rd, sizeof(int) * (size_t) (cfg->criteria.n + 1));
	q.k = mm_config_k(cfg);
	q.n = pool->ntickets;
	q.dims = cfg->criteria.n + 1;
	q.r = 1;
	for (int d = 0; d < q.dims; d++)
	{
		q.stride[d] = q.r;
		q.r *= q.rd[d];
	}
	if (mq_alloc(&q, stack, sizeof(stack)) != MM_OK)
		return MM_ERR_NOMEM;

	sort_by_range(&q, cfg, pool);
	match_full_queues(&q, res);
	st = settle_timeouts(&q, cfg, pool, now, res);

	if (q.block != (void *) stack)
		mm_free(q.block);
	return st;
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
 * Raise range r (of the product *cells, integers below 2^53, so exact) to
 * up at most, as far as the product keeps to MM_MAX_CELLS; returns whether
 * it rose.
 */
static bool
raise_range(int *r, double up, double *cells)
{
	double		others = *cells / *r;

	while (up > *r && others * up > MM_MAX_CELLS)
		up--;					/* a share rounded up */
	if (!(up > *r))
		return false;
	*r = (int) up;
	*cells = others * up;
	return true;
}

/*
 * Hold the cells, fixed times the free ranges (freed, m of them), to
 * MM_MAX_CELLS: free_ranges' cap on lambda assumes each free range is
 * lambda f_d, but one of a tiny factor still counts 1, and each at most
 * MM_AUTO_MAX, so their product may pass it.  Every free range above 1 is
 * scaled by the same factor (floored, at least 1, and at least one less)
 * until the product fits; the fixed ranges alone fit, as the
 * configuration's check holds.
 *
 * The floors may leave room, most of it when ranges fall to 1, and it
 * goes back to the free ranges still below what they were: first in
 * equal shares (a factor g each, floored) among those a share raises by a
 * whole range, the share of those it does not passing to the others; then,
 * once a share raises none (g < 1 + 1/r for each, so the room left is
 * below a factor 1 + 1/r per range), one range at a time, the heaviest
 * factor first, round by round.  Each part ends within a few rounds; 16
 * and 64 are ceilings besides.
 */
static void
cap_cells(int *ranges, double fixed, const int *freed, const double *f, int m)
{
	int			wanted[MM_MAX_CRITERIA];
	int			order[MM_MAX_CRITERIA];
	double		cells;

	for (int j = 0; j < m; j++)
		wanted[j] = ranges[freed[j]];
	for (;;)
	{
		int			above = 0;
		double		scale;

		cells = fixed;
		for (int j = 0; j < m; j++)
		{
			cells *= ranges[freed[j]];
			above += ranges[freed[j]] > 1;
		}
		if (cells <= MM_MAX_CELLS)
			break;
		if (above == 0)
			return;
		scale = pow(MM_MAX_CELLS / cells, 1.0 / above);
		for (int j = 0; j < m; j++)
		{
			double		r = ranges[freed[j]];

			if (r > 1)
				ranges[freed[j]] = (int) fmax(1.0, fmin(r - 1.0, floor(r * scale)));
		}
	}

	/* equal shares among the ranges they raise */
	for (int pass = 0; pass < 16; pass++)
	{
		bool		share[MM_MAX_CRITERIA];
		int			n = 0;
		double		g = 1.0;

		for (int j = 0; j < m; j++)
			n += share[j] = ranges[freed[j]] < wanted[j];
		while (n > 0)
		{
			int			raised = 0;

			g = pow(MM_MAX_CELLS / cells, 1.0 / n);
			for (int j = 0; j < m; j++)
			{
				if (share[j])
					share[j] = floor(ranges[freed[j]] * g) > ranges[freed[j]];
				raised += share[j];
			}
			if (raised == n)
				break;
			n = raised;
		}
		if (n == 0)
			break;
		for (int j = 0; j < m; j++)
			if (share[j])
				(void) raise_range(&ranges[freed[j]],
								   fmin(wanted[j], floor(ranges[freed[j]] * g)), &cells);
	}

	/* then a range at a time, the heaviest factor first (ties: criterion order) */
	for (int j = 0; j < m; j++)
	{
		int			i = j;

		while (i > 0 && f[freed[order[i - 1]]] < f[freed[j]])
		{
			order[i] = order[i - 1];
			i--;
		}
		order[i] = j;
	}
	for (int round = 0; round < 64; round++)
	{
		bool		raised = false;

		for (int i = 0; i < m; i++)
		{
			int			j = order[i];

			if (ranges[freed[j]] < wanted[j])
				raised |= raise_range(&ranges[freed[j]], ranges[freed[j]] + 1.0, &cells);
		}
		if (!raised)
			break;
	}
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
 * product at MM_MAX_CELLS (cap_cells).
 */
static void
free_ranges(const MMConfig *cfg, int *ranges)
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
	cap_cells(ranges, fixed, freed, f, m);
}

/* multi_queue's ranges per criterion: free_ranges, but a step's usual case directly. */
void
mm_criteria_ranges(const MMConfig *cfg, int *ranges)
{
	if (cfg->criteria.n == 0 && cfg->multi_queue.ranges > 0)
		ranges[0] = cfg->multi_queue.ranges;	/* as configured, every step */
	else
		free_ranges(cfg, ranges);
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
