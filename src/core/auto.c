/*
 * auto.c
 *		The auto algorithm: a group of waiting tickets is committed at the
 *		first instant its spread cost is covered by its members' values,
 *		values that grow with each member's wait and scale with the measured
 *		traffic.  No parameter to choose; doc/algorithms.md gives the rule,
 *		its derivation and its measured distance to the offline optimum.
 *
 * Each waiting ticket i has the value
 *
 *		H_i(t) = S * (base + growth * x_i + curve * x_i^2),
 *		x_i = (t - arrival_i) / max_wait
 *
 * with S = (arrival_rate * max_wait)^(-1/(D + 1)) for D criteria, the
 * spread at which the spread's cost and the wait for a partner that close
 * balance (auto_scale), so thresholds tighten as traffic grows and loosen
 * when it falls.  A
 * group G of k tickets costs c(G) = sum_d f_d q_d(G) (eq. 1 without the
 * waits), and becomes eligible at the first instant t with
 * c(G) <= sum_{i in G} H_i(t), a time computed in closed form
 * (eligible_at), so a step decides exactly when it is due and the worker
 * can sleep until the next such instant (mm_auto_deadline).
 *
 * Pairs rated on the rating alone (k = 2, no criteria) are due instead
 * when waiting for the next arrival no longer pays (myopic_at): the
 * spread a newcomer may save, weighed by how densely the recent arrivals'
 * ratings lie around the pair (MMConfig.recent, density_by_rank), against the
 * wait until it comes and what the waits so far already cost.
 *
 * The candidate groups are, in rating order, each ticket with one of its
 * AUTO_SCAN next neighbours (k = 2), or k consecutive tickets (k > 2).  A
 * step commits the eligible candidates cheapest first, then matches the
 * timed-out tickets with the cheapest candidate that contains them (or
 * computer players, or expiry, when fewer than k wait), and repeats until
 * nothing changes.  For k = 2, when only three tickets wait, the pair
 * committed is the one whose spread plus what the ticket it leaves alone
 * is still expected to cost is least (spare_lonely): a newcomer does not
 * take an old ticket's only partner when that would likely leave the old
 * one to computer players.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* k = 2: the partners in rating order a ticket's candidate pairs reach. */
#define AUTO_SCAN 64

/* Pools of at most this many tickets are sorted by insertion. */
#define AUTO_INSERTION_SORT 32

/*
 * The default constants of the values, by group size: base and growth as
 * measured best on Schlup's six arrival specs (bench/quality.sh).
 */
#define AUTO_BASE_PAIR		0.7
#define AUTO_GROWTH_PAIR	0.6
#define AUTO_CURVE_PAIR		0.5

/*
 * k = 2 with the rating the only criterion (myopic_at): the curve of what
 * a ticket's age adds to its future cost, d(x) = S (growth x + curve x^2).
 */
#define AUTO_CURVE_MYOPIC	1.0

/*
 * k = 2, one criterion: what a ticket left alone is still expected to cost
 * (lone_cost) is weighed by this in spare_lonely.
 */
#define AUTO_LONE_WEIGHT	1.3

/*
 * The bounds of the rating density density_by_rank estimates, relative to
 * ratings spread evenly (1): a few neighbours close together or far apart
 * say little more than that the density is high or low.
 */
#define AUTO_DENSITY_MIN	0.2
#define AUTO_DENSITY_MAX	5.0

/* density_bounds looks at runs starting this many ranks apart. */
#define AUTO_BOUND_STRIDE	8

/*
 * passed_over stops trying its bound in a step once AUTO_BOUND_TRIAL tries
 * have passed over fewer than one pair in AUTO_BOUND_PAYS: then the bound
 * costs more than the instants it spares (pairs already due, or recent
 * ratings whose densities range too widely for it to tell).
 */
#define AUTO_BOUND_TRIAL	32
#define AUTO_BOUND_PAYS		4

/*
 * MMDensity is made once the steps with one sample have looked up this
 * many ratings without it: making it costs about as many lookups.
 */
#define AUTO_DENSITY_TABLE_AFTER	100

/*
 * k > 2 (auto_constants): base AUTO_BASE_GROUP + AUTO_BASE_PER_K (k - 2),
 * growth AUTO_GROWTH_GROUP + AUTO_GROWTH_LOAD (k - 2) k / m for m players
 * per max_wait, curve AUTO_CURVE_PER_K (k - 1); k counts at most
 * AUTO_GROUP_MAX_K, the largest group size measured.
 */
#define AUTO_BASE_GROUP		0.7
#define AUTO_BASE_PER_K		0.05
#define AUTO_GROWTH_GROUP	0.6
#define AUTO_GROWTH_LOAD	2.0
#define AUTO_CURVE_PER_K	0.25
#define AUTO_GROUP_MAX_K	10

/*
 * The measured rate falls, in steps of this factor, as the silence since
 * the latest arrival lengthens (falls_of).
 */
#define AUTO_RATE_STEP		1.1

/* The fewest players per max_wait the rate counts as (players_per_max_wait). */
#define AUTO_LOAD_FLOOR		1e-3

/* A candidate group: its first position and, for pairs, the partner's. */
typedef struct AutoCand
{
	double		cost;
	double		at;
	int			first;
	int			second;			/* k = 2: the partner's position; k > 2: -1 */
} AutoCand;

/* A growing list of candidates. */
typedef struct AutoCands
{
	AutoCand   *v;
	int			n;
	int			cap;
	bool		allocated;		/* v is mm_malloc's, or the caller's room (or NULL) */
} AutoCands;

/*
 * pair_pass: where one ticket (at position first of cand) stands in its
 * pairs: cand, the cheapest it has not tried; the rest of its current run
 * (AutoMerge.run[rest .. end)); the next partner to look at and how many
 * it looked at.
 */
typedef struct AutoHead
{
	AutoCand	cand;
	int			rest;
	int			end;
	int			scan;			/* a position, or -1 when none is left */
	int			seen;
} AutoHead;

/*
 * What pair_pass keeps, allocated as a pass needs it unless the step's own
 * room (AUTO_STEP_ROOM tickets) suffices.
 */
typedef struct AutoMerge
{
	int		   *next;			/* the links the pass began with, once it commits */
	int		   *prev;
	int			nlinks;			/* positions they have room for */
	bool		links_allocated;
	AutoHead   *heap;			/* one per ticket with a candidate left, by cand_cmp */
	int			nheap;
	int			capheap;
	bool		heap_allocated;
	AutoCands	run;			/* the runs, each sorted by cand_cmp */
	double		oldest;			/* the oldest arrival of the pass's tickets */
} AutoMerge;

/*
 * A step over at most this many tickets keeps its sorted order (and, for
 * pairs, its heap and links) on the stack, as it does its runs' first
 * this many pairs.
 */
#define AUTO_STEP_ROOM 32

/* What one step or one deadline computation works with. */
typedef struct AutoCtx
{
	const MMConfig *cfg;
	const MMPool *pool;
	int			k;
	int			dims;			/* criteria, the rating included */
	double		f[MM_MAX_CRITERIA];
	double		scale;			/* S */
	double		base;
	double		growth;
	double		curve;
	int			n;
	void	   *block;			/* what order, pos, next, prev and taken lie in */
	bool		block_allocated;	/* or it is the caller's room */
	int		   *order;			/* ticket indices by rating, then pool order */
	int		   *pos;			/* position in order of each ticket */
	int		   *next;			/* per position: the next position still waiting, or -1 */
	int		   *prev;			/* per position: the previous one, or -1 */
	int			first;			/* first position still waiting, or -1 */
	char	   *taken;			/* per ticket: matched or expired by this step */
	int			left;			/* tickets still waiting */
	bool		pair_rating;	/* k = 2, the rating the only criterion */
	/* with pair_rating: the recent ratings (cfg->recent), or NULL */
	const double *recent;
	int			nrecent;
	double		rmin;			/* the lowest and highest rating expected: */
	double		rmax;			/* the recent ones', or 0 and 1 */
	double		dmin;			/* the bounds of density_by_rank */
	double		dmax;
	const MMDensity *dens;		/* cfg->density once made, or NULL */
	MMDensity  *unmade;			/* cfg->density not made yet: counts lookups */
	int			bound_tries;	/* passed_over's tries of its bound, */
	int			bound_skips;	/* and the pairs it passed over */
	int		   *rank;			/* with recent: per position, its rating's rank among them, or -1 */
	AutoMerge	merge;			/* k = 2: pair_pass's */
	double		deadline;		/* the next deadline after the last pass of a step */
	bool		polls;			/* collect polls mm_interrupt (a step's passes) */
	bool		interrupted;	/* and mm_interrupt asked to stop */
} AutoCtx;

/*
 * The array v (n elements of size bytes, room for *cap), with room for one
 * more: v itself while it has room, else one of least elements or twice
 * as many, taken from mm_malloc (the first time, *allocated false, v is a
 * caller's room or NULL and is copied, not freed).  NULL when memory runs
 * out, v unchanged then.
 */
static void *
room_grow(void *v, int n, int *cap, size_t size, int least, bool *allocated)
{
	int			grown = *cap < least ? least : *cap * 2;
	void	   *w;

	if (n < *cap)
		return v;
	w = *allocated ? mm_realloc(v, size * (size_t) grown) : mm_malloc(size * (size_t) grown);
	if (w == NULL)
		return NULL;
	if (!*allocated && n > 0)
		memcpy(w, v, size * (size_t) n);
	*cap = grown;
	*allocated = true;
	return w;
}

/* Append a candidate; MM_ERR_NOMEM when the list cannot grow. */
static MMStatus
cands_push(AutoCands *l, const AutoCand *cand)
{
	AutoCand   *v = room_grow(l->v, l->n, &l->cap, sizeof(AutoCand), 64, &l->allocated);

	if (v == NULL)
		return MM_ERR_NOMEM;
	l->v = v;
	l->v[l->n++] = *cand;
	return MM_OK;
}

/*
 * The players arriving per max_wait at the measured rate: an unknown rate
 * (0) counts as one, and very low rates are floored so that what is
 * derived from it stays finite.
 */
static double
players_per_max_wait(const MMConfig *cfg)
{
	double		m = cfg->arrival_rate * cfg->max_wait;

	if (!(m > 0))
		m = 1.0;
	return m < AUTO_LOAD_FLOOR ? AUTO_LOAD_FLOOR : m;
}

/*
 * The constants of the values for this configuration; a constant set in
 * cfg->automatic (not 0) wins.
 *
 * Groups of k > 2 were tuned with bench/quality.c's tune mode (2,000
 * players per stream) at k = 4 and k = 10 on seeds 101 to 103 of Schlup's
 * six specs, not the reported seeds 1 to 3, against the lower bound of
 * bench/README.md; the three coefficients per k were then chosen on the
 * same seeds and checked on seeds 201 to 206.  The optimum is flat (about
 * 1 % over a factor of two in each constant); what moves it is that bigger
 * groups want larger values (k consecutive tickets spread further than a
 * pair) and, at low load, values that grow faster with the wait: with m
 * players per max_wait, m / k games' worth of players pass in a max_wait,
 * and waiting for a closer group pays little when that is small.  At
 * k = 10 the load term took the mean ratio from 4.14 to 4.11; at k = 4 it
 * is within noise.  The k terms vanish at k = 2, where the pair constants
 * apply; beyond k = 10 nothing was measured, so k = 10's are kept.
 */
static void
auto_constants(const MMConfig *cfg, double *base, double *growth, double *curve)
{
	int			k = mm_config_k(cfg);
	double		b = AUTO_BASE_PAIR;
	double		g = AUTO_GROWTH_PAIR;
	double		c = AUTO_CURVE_PAIR;

	if (k > 2)
	{
		double		kk = k < AUTO_GROUP_MAX_K ? k : AUTO_GROUP_MAX_K;
		double		m = players_per_max_wait(cfg);

		b = AUTO_BASE_GROUP + AUTO_BASE_PER_K * (kk - 2);
		g = AUTO_GROWTH_GROUP + AUTO_GROWTH_LOAD * (kk - 2) * kk / m;
		c = AUTO_CURVE_PER_K * (kk - 1);
	}
	*base = cfg->automatic.base > 0 ? cfg->automatic.base : b;
	*growth = cfg->automatic.growth > 0 ? cfg->automatic.growth : g;
	*curve = cfg->automatic.curve > 0 ? cfg->automatic.curve : c;
}

/*
 * The rate auto goes by at time now: the measured gaps (cfg->rate_gaps)
 * spread over the time from the first of their arrivals until now, not
 * until the latest (cfg->rate_last), so that a silence after a burst
 * loosens the thresholds the burst tightened; without it, players who
 * arrived together at a rate measured in thousands per second would wait
 * until max_wait for partners that close.  The span counts in steps, the
 * falls of the rate: the measured span s0 times AUTO_RATE_STEP^j, the j-th
 * coming at rate_last + s0 (AUTO_RATE_STEP^j - 1), so the rate holds
 * between two falls and eligible instants stay exact.  The rate falls no
 * further once below AUTO_LOAD_FLOOR players per max_wait, nor at all
 * without measured gaps.  Steady traffic rarely sees a fall: the first
 * comes after a silence of a tenth of the measured span (about five mean
 * gaps).
 */
typedef struct AutoFalls
{
	double		rate;			/* as measured */
	double		last;			/* cfg->rate_last */
	double		span0;			/* the measured span; 0: no falls */
	double		load;			/* players per max_wait at the measured rate */
	int			jmax;			/* the last fall (falls_last), or -1 until needed */
} AutoFalls;

static void
falls_of(const MMConfig *cfg, AutoFalls *fl)
{
	double		load = cfg->arrival_rate * cfg->max_wait;

	fl->rate = cfg->arrival_rate;
	fl->last = cfg->rate_last;
	fl->span0 = 0.0;
	fl->load = load;
	fl->jmax = 0;
	if (!(fl->rate > 0) || cfg->rate_gaps < 1 || !isfinite(fl->last) ||
		!(load >= AUTO_LOAD_FLOOR))
		return;
	fl->span0 = cfg->rate_gaps / fl->rate;
	fl->jmax = -1;
}

/*
 * The last fall: after it the rate is below the floor; 0 without falls.
 * Worked out the first time a fall after the first is asked for: with
 * falls there is at least one, so steady traffic, which asks only
 * whether the first has come, needs no log.
 */
static int
falls_last(AutoFalls *fl)
{
	if (fl->jmax < 0)
		fl->jmax = (int) fmin(floor(log(fl->load / AUTO_LOAD_FLOOR) / log(AUTO_RATE_STEP)) + 1, 1e5);
	return fl->jmax;
}

/*
 * AUTO_RATE_STEP^j; without pow for the falls most steps see (0 and 1),
 * where pow's answer is exact.
 */
static double
step_power(int j)
{
	return j == 0 ? 1.0 : j == 1 ? AUTO_RATE_STEP : pow(AUTO_RATE_STEP, j);
}

/* The instant of fall j (1 .. falls_last); INFINITY after the last. */
static double
fall_at(AutoFalls *fl, int j)
{
	if (!(fl->span0 > 0) || (j > 1 && j > falls_last(fl)))
		return INFINITY;
	return fl->last + fl->span0 * (step_power(j) - 1);
}

/* The rate after j falls. */
static double
rate_after(const AutoFalls *fl, int j)
{
	return fl->rate / step_power(j);
}

/*
 * The falls passed at now: the last j in [0, falls_last] whose instant is not
 * after now (the instants rise with j; on a clock whose ulps exceed the
 * first spans several are equal, and all of them count).
 */
static int
falls_by(AutoFalls *fl, double now)
{
	int			lo = 0;
	int			hi;

	/* steady traffic: before the first fall */
	if (!(now >= fl->last) || fall_at(fl, 1) > now)
		return 0;
	hi = falls_last(fl);
	while (lo < hi)
	{
		int			mid = lo + (hi - lo + 1) / 2;

		if (fall_at(fl, mid) <= now)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* cfg with the rate after j falls, in *local when it differs. */
static const MMConfig *
config_after(const MMConfig *cfg, const AutoFalls *fl, int j, MMConfig *local)
{
	double		rate = rate_after(fl, j);

	if (rate == cfg->arrival_rate)
		return cfg;
	*local = *cfg;
	local->arrival_rate = rate;
	return local;
}

/*
 * S = (players per max_wait)^(-1/(D + 1)): a threshold h on the spread
 * costs about f h, and waiting for a partner within h takes about
 * 1 / (rate h^D), costing that over max_wait; the sum is least for h of
 * this order.
 */
static double
auto_scale(const MMConfig *cfg, int dims)
{
	return pow(players_per_max_wait(cfg), -1.0 / (dims + 1));
}

/* A ticket's place in the rating order. */
typedef struct AutoKey
{
	double		rating;
	int			index;
} AutoKey;

/* What auto_open keeps per ticket: a sort key, five ints and a flag. */
#define AUTO_TICKET_BYTES (sizeof(AutoKey) + 5 * sizeof(int) + 1)

/* The doubles a caller's room for AUTO_STEP_ROOM tickets takes. */
#define AUTO_ROOM_DOUBLES ((AUTO_STEP_ROOM * AUTO_TICKET_BYTES + sizeof(double) - 1) / sizeof(double))

/* By rating, then by index (pool order). */
static int
key_cmp(const void *l, const void *r)
{
	const AutoKey *x = l;
	const AutoKey *y = r;

	if (x->rating != y->rating)
		return (x->rating > y->rating) - (x->rating < y->rating);
	return (x->index > y->index) - (x->index < y->index);
}

/*
 * Bounds of the densities density_by_rank gives for the recent ratings, for
 * myopic_bound's pruning.  Each estimate spans a
 * run of MM_DENSITY_NEIGHBOURS + 1 consecutive ratings, so its width lies
 * between the narrowest and the widest such run.  Runs starting every
 * AUTO_BOUND_STRIDE ranks bound both (a run lies within the one a stride
 * longer that starts at the last multiple of the stride before it, and
 * holds the one a stride shorter that starts at the next): an eighth of the
 * runs, bounds a little looser, never wrong (within [AUTO_DENSITY_MIN,
 * AUTO_DENSITY_MAX], as the estimates are).
 */
static void
density_bounds(AutoCtx *c)
{
	const int	m = MM_DENSITY_NEIGHBOURS;
	const int	s = AUTO_BOUND_STRIDE;
	const double *v = c->recent;
	int			n = c->nrecent;
	double		narrow = INFINITY,
				wide = 0.0;

	/* the runs starting at b .. b + s - 1 lie within [b, end] */
	for (int b = 0; b + m < n; b += s)
	{
		int			end = b + s - 1 + m < n - 1 ? b + s - 1 + m : n - 1;
		double		d = v[end] - v[b];

		wide = d > wide ? d : wide;
	}
	/* those starting at b - s + 1 .. b hold [b, b + m - s + 1] */
	for (int b = 0; b + m - s + 1 < n; b += s)
	{
		double		d = v[b + m - s + 1] - v[b];

		narrow = d < narrow ? d : narrow;
	}
	c->dmin = AUTO_DENSITY_MIN;
	c->dmax = AUTO_DENSITY_MAX;
	if (wide > 0 && (double) m / (n * wide) > c->dmin)
		c->dmin = (double) m / (n * wide);
	if (narrow > 0 && (double) m / (n * narrow) < c->dmax)
		c->dmax = (double) m / (n * narrow);
	if (c->dmin > c->dmax)
		c->dmin = c->dmax;
}

/*
 * The density of the recent ratings v[0 .. n) at a rating of rank a among
 * them (MM_DENSITY_NEIGHBOURS around it, over the width they span),
 * within [AUTO_DENSITY_MIN, AUTO_DENSITY_MAX]; AUTO_DENSITY_MAX where
 * they all share one rating.  density_by_rank's answer without MMDensity.
 */
static double
density_of_rank(const double *v, int n, int a)
{
	const int	m = MM_DENSITY_NEIGHBOURS;
	int			lo = a - m / 2 > 0 ? a - m / 2 : 0;
	int			hi = lo + m;
	double		width,
				rho;

	if (hi > n - 1)
	{
		hi = n - 1;
		lo = hi - m;
	}
	width = v[hi] - v[lo];
	rho = width > 0 ? (double) m / (n * width) : AUTO_DENSITY_MAX;
	return rho < AUTO_DENSITY_MIN ? AUTO_DENSITY_MIN : rho > AUTO_DENSITY_MAX ? AUTO_DENSITY_MAX : rho;
}

/*
 * Make *d from the recent ratings v[0 .. n) (n > MM_DENSITY_NEIGHBOURS):
 * the estimate at each rank, its least and greatest (density_bounds'
 * bounds, exact), and the slices density_rank searches.
 */
static void
density_make(const double *v, int n, MMDensity *d)
{
	int			j = 0;

	d->n = n;
	d->rmin = v[0];
	d->rmax = v[n - 1];
	d->dmin = AUTO_DENSITY_MAX;
	d->dmax = AUTO_DENSITY_MIN;
	for (int a = 0; a <= n; a++)
	{
		d->rho[a] = density_of_rank(v, n, a);
		d->dmin = d->rho[a] < d->dmin ? d->rho[a] : d->dmin;
		d->dmax = d->rho[a] > d->dmax ? d->rho[a] : d->dmax;
	}
	d->slice_width = (d->rmax - d->rmin) / MM_DENSITY_SLICES;
	for (int b = 0; b < MM_DENSITY_SLICES; b++)
	{
		double		start = d->rmin + b * d->slice_width;

		while (j < n && v[j] < start)
			j++;
		d->slice[b] = j;
	}
	d->slice[MM_DENSITY_SLICES] = n;
	d->valid = true;
}

/*
 * The first rank among the recent ratings whose rating is not below r
 * (mm_sorted_position's), searched within the slice of d that r falls in;
 * a step either way corrects a slice misjudged by rounding.
 */
static int
density_rank(const double *v, const MMDensity *d, double r)
{
	int			n = d->n;
	double		q;
	int			b,
				lo,
				hi,
				a;

	if (!(d->slice_width > 0))
		return mm_sorted_position(v, n, r);

	/*
	 * Clamp before the cast: a sample spanning a few ulps has slices so thin
	 * that a rating far above it is more slices away than an int holds.
	 */
	q = (r - d->rmin) / d->slice_width;
	b = q >= MM_DENSITY_SLICES - 1 ? MM_DENSITY_SLICES - 1 : q > 0 ? (int) q : 0;
	lo = d->slice[b];
	hi = d->slice[b + 1];
	if (hi - lo > 8)
		a = lo + mm_sorted_position(v + lo, hi - lo, r);
	else
		for (a = lo; a < hi && v[a] < r; a++)
			;
	while (a > 0 && v[a - 1] >= r)
		a--;
	while (a < n && v[a] < r)
		a++;
	return a;
}

/* Release what auto_open and the passes allocated. */
static void
auto_close(AutoCtx *c)
{
	if (c->block_allocated)
		mm_free(c->block);
	if (c->merge.links_allocated)
		mm_free(c->merge.next);
	if (c->merge.heap_allocated)
		mm_free(c->merge.heap);
	if (c->merge.run.allocated)
		mm_free(c->merge.run.v);
	memset(&c->merge, 0, sizeof(AutoMerge));
	c->block = NULL;
	c->order = c->pos = c->next = c->prev = c->rank = NULL;
	c->taken = NULL;
}

/* What the values take from cfg (its rate): S and the constants. */
static void
auto_values(AutoCtx *c, const MMConfig *cfg)
{
	c->cfg = cfg;
	c->scale = auto_scale(cfg, c->dims);
	auto_constants(cfg, &c->base, &c->growth, &c->curve);
	if (c->pair_rating && cfg->automatic.curve <= 0)
		c->curve = AUTO_CURVE_MYOPIC;
}

/*
 * Sort the pool by rating and link the positions, in room (nroom bytes,
 * aligned for a double) when the pool's AUTO_TICKET_BYTES per ticket fit.
 */
static MMStatus
auto_open(AutoCtx *c, const MMConfig *cfg, const MMPool *pool, void *room, size_t nroom)
{
	int			n = pool->ntickets;

	memset(c, 0, sizeof(AutoCtx));
	c->cfg = cfg;
	c->pool = pool;
	c->k = mm_config_k(cfg);
	c->dims = cfg->criteria.n + 1;
	mm_criteria_factors(cfg, c->f);
	c->pair_rating = c->k == 2 && c->dims == 1;
	auto_values(c, cfg);
	c->rmin = 0.0;
	c->rmax = 1.0;
	c->dmin = c->dmax = 1.0;
	if (c->pair_rating && cfg->recent != NULL &&
		cfg->nrecent > MM_DENSITY_NEIGHBOURS)
	{
		MMDensity  *d = cfg->density;
		bool		made = d != NULL && d->valid && d->n == cfg->nrecent;

		c->recent = cfg->recent;
		c->nrecent = cfg->nrecent;
		c->rmin = c->recent[0];
		c->rmax = c->recent[c->nrecent - 1];
		if (d != NULL && !made && d->lookups >= AUTO_DENSITY_TABLE_AFTER)
		{
			density_make(c->recent, c->nrecent, d);
			made = true;
		}
		if (made)
		{
			c->dens = d;
			c->dmin = d->dmin;
			c->dmax = d->dmax;
		}
		else
		{
			c->unmade = d;
			density_bounds(c);
		}
	}
	c->n = n;

	/* one block: the sort's keys (used here only), order, pos, next, prev, rank, taken */
	if ((size_t) n > SIZE_MAX / AUTO_TICKET_BYTES)
		return MM_ERR_NOMEM;
	if ((size_t) n * AUTO_TICKET_BYTES <= nroom)
		c->block = room;
	else
	{
		c->block = mm_malloc((size_t) n * AUTO_TICKET_BYTES);
		if (c->block == NULL)
			return MM_ERR_NOMEM;
		c->block_allocated = true;
	}
	c->order = (int *) ((AutoKey *) c->block + n);
	c->pos = c->order + n;
	c->next = c->pos + n;
	c->prev = c->next + n;
	c->rank = c->prev + n;
	c->taken = (char *) (c->rank + n);
	memset(c->taken, 0, (size_t) n);
	if (c->recent != NULL)
		for (int p = 0; p < n; p++)
			c->rank[p] = -1;	/* rank_of: not looked up yet */
	{
		AutoKey    *keys = c->block;

		for (int i = 0; i < n; i++)
		{
			keys[i].rating = pool->tickets[i].rating;
			keys[i].index = i;
		}
		if (n <= AUTO_INSERTION_SORT)
		{
			/* a few tickets: insertion sort, without qsort's calls */
			for (int i = 1; i < n; i++)
			{
				AutoKey		x = keys[i];
				int			j = i;

				while (j > 0 && key_cmp(&keys[j - 1], &x) > 0)
				{
					keys[j] = keys[j - 1];
					j--;
				}
				keys[j] = x;
			}
		}
		else
			qsort(keys, n, sizeof(AutoKey), key_cmp);
		for (int i = 0; i < n; i++)
			c->order[i] = keys[i].index;
	}
	for (int p = 0; p < n; p++)
	{
		c->pos[c->order[p]] = p;
		c->next[p] = p + 1 < n ? p + 1 : -1;
		c->prev[p] = p - 1;
	}
	c->first = n > 0 ? 0 : -1;
	c->left = n;
	return MM_OK;
}

/* Take the ticket at position p out of the rating order. */
static void
auto_unlink(AutoCtx *c, int p)
{
	int			a = c->prev[p];
	int			b = c->next[p];

	if (a >= 0)
		c->next[a] = b;
	else
		c->first = b;
	if (b >= 0)
		c->prev[b] = a;
	c->taken[c->order[p]] = 1;
	c->left--;
}

/*
 * The members (ticket indices) of the candidate: the pair (first, second),
 * or k positions linked from first.  Returns how many it found (fewer than
 * k when the order ends).
 */
static int
cand_members(const AutoCtx *c, int first, int second, int *idx)
{
	int			m = 0;

	if (second >= 0)
	{
		idx[0] = c->order[first];
		idx[1] = c->order[second];
		return 2;
	}
	for (int p = first; p >= 0 && m < c->k; p = c->next[p])
		idx[m++] = c->order[p];
	return m;
}

/* The spread cost of k tickets, sum_d f_d q_d. */
static double
group_cost(const AutoCtx *c, const int *idx, int m)
{
	const MMPool *pool = c->pool;
	double		cost = 0.0;

	for (int d = 0; d < c->dims; d++)
	{
		double		lo = INFINITY;
		double		hi = -INFINITY;

		if (c->f[d] == 0)
			continue;
		for (int i = 0; i < m; i++)
		{
			const MMTicket *t = &pool->tickets[idx[i]];
			double		v = d == 0 ? t->rating :
				pool->criteria[(size_t) t->crow * c->cfg->criteria.n + d - 1];

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		cost += c->f[d] * (hi - lo);
	}
	return cost;
}

/*
 * The first instant after newest at which qa x^2 + qb x (x in max_waits
 * after newest) reaches need: -INFINITY when need <= 0 already, INFINITY
 * when it never does.
 */
static double
first_reach(const AutoCtx *c, double newest, double need, double qa, double qb)
{
	double		x;

	if (need <= 0)
		return -INFINITY;
	if (qa > 0)
		x = 2.0 * need / (qb + sqrt(qb * qb + 4.0 * qa * need));
	else if (qb > 0)
		x = need / qb;
	else
		return INFINITY;
	return newest + x * c->cfg->max_wait;
}

/*
 * The first instant t at which m tickets arriving at arr[0 .. m) cover
 * the cost: sum_i S v((t - arr_i) / T) >= cost, v(x) = base + growth x +
 * curve x^2.  Solved from the newest arrival on (x = (t - newest) / T) so
 * that large clocks lose no precision; -INFINITY when the group is
 * eligible as soon as it exists.
 */
static double
eligible_at(const AutoCtx *c, double cost, const double *arr, int m)
{
	double		T = c->cfg->max_wait;
	double		newest = -INFINITY;
	double		e1 = 0.0;
	double		e2 = 0.0;
	double		qa,
				qb,
				need;

	for (int i = 0; i < m; i++)
		newest = arr[i] > newest ? arr[i] : newest;
	for (int i = 0; i < m; i++)
	{
		double		e = (newest - arr[i]) / T;

		e1 += e;
		e2 += e * e;
	}
	/* the values grow by qa x^2 + qb x after the newest arrival; they lack need then */
	qa = c->curve * m;
	qb = c->growth * m + 2.0 * c->curve * e1;
	need = cost / c->scale - (m * c->base + c->growth * e1 + c->curve * e2);
	return first_reach(c, newest, need, qa, qb);
}

/* The rating of the ticket at position p. */
static double
rating_of(const AutoCtx *c, int p)
{
	return c->pool->tickets[c->order[p]].rating;
}

/*
 * The first instant t after the newest of two arrivals (a[0], a[1]) at
 * which w[0] d(x_0) + w[1] d(x_1) >= need, d(x) = S (growth x + curve x^2);
 * -INFINITY when need <= 0 then.
 */
static double
weighted_at(const AutoCtx *c, double need, const double *a, const double *w)
{
	double		T = c->cfg->max_wait;
	double		newest = a[0] > a[1] ? a[0] : a[1];
	double		q0 = 0.0,
				qb = 0.0,
				qa = 0.0;

	for (int i = 0; i < 2; i++)
	{
		double		e = (newest - a[i]) / T;

		q0 += w[i] * (c->growth * e + c->curve * e * e);
		qb += w[i] * (c->growth + 2.0 * c->curve * e);
		qa += w[i] * c->curve;
	}
	return first_reach(c, newest, need / c->scale - q0, qa, qb);
}

/*
 * How densely the recent ratings lie at the rating of rank a among them,
 * relative to ratings spread evenly over [0, 1] (1): MM_DENSITY_NEIGHBOURS
 * recent ratings around that rank, divided by the width they span and by
 * the sample's size (a nearest-neighbour estimate, density_of_rank), read
 * from cfg->density when the caller keeps one made.
 */
static double
density_by_rank(const AutoCtx *c, int a)
{
	if (c->dens != NULL)
		return c->dens->rho[a];
	if (c->unmade != NULL)
		c->unmade->lookups++;
	return density_of_rank(c->recent, c->nrecent, a);
}

/*
 * The rank of rating r among the recent ratings (the first not below it,
 * mm_sorted_position's), searched outwards from rank hint (a rank near r
 * saves most of a binary search: a pair's points lie a few ranks apart).
 */
static int
rank_near(const AutoCtx *c, double r, int hint)
{
	const double *v = c->recent;
	int			n = c->nrecent;
	int			step = 1;
	int			lo,
				hi;

	if (hint > 0 && v[hint - 1] >= r)
	{
		/* at most hint - 1: widen down to a rating below r */
		hi = hint - 1;
		lo = hi - 1;
		while (lo >= 0 && v[lo] >= r)
		{
			hi = lo;
			lo -= step;
			step *= 2;
		}
		lo = lo < 0 ? 0 : lo + 1;
		return lo + mm_sorted_position(v + lo, hi - lo, r);
	}
	/* at least hint: widen up to a rating not below r */
	lo = hi = hint;
	while (hi < n && v[hi] < r)
	{
		lo = hi + 1;
		hi += step;
		step *= 2;
	}
	hi = hi < n ? hi : n;
	return lo + mm_sorted_position(v + lo, hi - lo, r);
}

/* The rank among the recent ratings of the ticket at position p's rating. */
static int
rank_of(const AutoCtx *c, int p)
{
	if (c->rank[p] < 0)
	{
		double		r = c->pool->tickets[c->order[p]].rating;

		c->rank[p] = c->dens != NULL ? density_rank(c->recent, c->dens, r) :
			mm_sorted_position(c->recent, c->nrecent, r);
	}
	return c->rank[p];
}

/*
 * myopic_at's reaches of a newcomer landing beside the pair at positions
 * lo < hi (gap g): h[0] below lo, h[1] above hi; each g, cut at the
 * lowest (highest) recent rating and half-way to the waiting neighbour
 * on that side in the links next and prev, and not below 0.
 */
static inline void
myopic_reach(const AutoCtx *c, const int *next, const int *prev, int lo, int hi,
			 double *h)
{
	double		rl = rating_of(c, lo),
				rh = rating_of(c, hi);
	double		hL = rh - rl,
				hR = rh - rl;
	int			k;

	if ((k = prev[lo]) >= 0 && (rl - rating_of(c, k)) / 2 < hL)
		hL = (rl - rating_of(c, k)) / 2;
	if (rl - c->rmin < hL)
		hL = rl - c->rmin;
	if ((k = next[hi]) >= 0 && (rating_of(c, k) - rh) / 2 < hR)
		hR = (rating_of(c, k) - rh) / 2;
	if (c->rmax - rh < hR)
		hR = c->rmax - rh;
	h[0] = hL > 0 ? hL : 0.0;
	h[1] = hR > 0 ? hR : 0.0;
}

/*
 * myopic_at's instant from the reaches h and the densities: saved[] (pL,
 * pR, pM) weigh the spread a newcomer saves, weigh[] where it lands
 * leaving one member behind, at_lo and at_hi divide that member's age.
 */
static inline double
myopic_due(const AutoCtx *c, int lo, int hi, double g, const double *h,
		   const double *saved, const double *weigh, double at_lo, double at_hi)
{
	const MMTicket *tk = c->pool->tickets;
	double		f = c->f[0];
	double		w_wait = c->base / AUTO_BASE_PAIR;
	double		hL = h[0],
				hR = h[1];
	double		a[2],
				w[2];

	a[0] = tk[c->order[lo]].arrival;
	a[1] = tk[c->order[hi]].arrival;
	w[0] = (weigh[1] * hR + weigh[2] * g / 2) / at_lo;
	w[1] = (weigh[0] * hL + weigh[2] * g / 2) / at_hi;
	return weighted_at(c, f * (saved[0] * (g * hL - hL * hL / 2) + saved[1] * (g * hR - hR * hR / 2) +
							   saved[2] * 0.75 * g * g) -
					   2.0 * w_wait * c->scale * c->scale, a, w);
}

/*
 * k = 2, the rating the only criterion: the instant the pair at positions
 * lo < hi (gap g) is due, from a one-step look-ahead at the next arrival.
 * Committing now saves the pair's wait until then, 2 / (rate max_wait) =
 * 2 w S^2 (w = base / AUTO_BASE_PAIR, 1 by default).  Waiting gains when
 * the newcomer lands closer to one of them: beside lo within hL (g, cut
 * at the lowest recent rating and half-way to lo's other waiting
 * neighbour), beside hi within hR (likewise), or between them; it pairs
 * there at f |d| instead of f g, and the one left behind costs what its
 * age adds to a newcomer's future, d(x), less where ratings lie densely
 * (divided by the density at its rating).  Where the newcomer lands is
 * weighed by the density of the recent ratings there (density_by_rank: pL
 * beside lo, pR beside hi, pM between; 1 for ratings spread evenly over
 * [0, 1]).  The pair is due when the expected gain no longer pays for the
 * wait:
 *
 *		A - d_lo (pR hR + pM g/2) / p_lo - d_hi (pL hL + pM g/2) / p_hi <= 2 w S^2,
 *		A = f (pL (g hL - hL^2/2) + pR (g hR - hR^2/2) + pM 3 g^2 / 4)
 *
 * (the d terms: the newcomer landing beside hi, or nearer hi between them,
 * leaves lo behind).  With evenly spread ratings, no neighbours and away
 * from the ends (A = 7 f g^2 / 4), a pair of newcomers is due at once when
 * f g <= (8 f / 7)^(1/2) S, 1.51 S for f = 2, near the values' 2 base S.
 * The waiting neighbours are read from the links next and prev (c's own,
 * or those a pass began with: pair_pass).
 */
static double
myopic_at(const AutoCtx *c, const int *next, const int *prev, int lo, int hi)
{
	double		rl = rating_of(c, lo),
				rh = rating_of(c, hi);
	double		g = rh - rl;
	double		h[2];
	double		p[3];			/* pL, pR, pM */
	double		at_lo = 1.0,
				at_hi = 1.0;

	myopic_reach(c, next, prev, lo, hi, h);
	if (c->recent != NULL)
	{
		int			al = rank_of(c, lo),
					ah = rank_of(c, hi);

		p[0] = density_by_rank(c, rank_near(c, rl - h[0] / 2, al));
		p[1] = density_by_rank(c, rank_near(c, rh + h[1] / 2, ah));
		p[2] = density_by_rank(c, rank_near(c, rl + g / 2, al));
		at_lo = density_by_rank(c, al);
		at_hi = density_by_rank(c, ah);
	}
	else
		p[0] = p[1] = p[2] = 1.0;	/* ratings counted as spread evenly over [0, 1] */
	return myopic_due(c, lo, hi, g, h, p, p, at_lo, at_hi);
}

/*
 * The earliest myopic_at's instant for the pair at positions lo < hi can
 * be, with recent ratings, told without looking up a density: every
 * density that adds to the spread a newcomer saves at dmin, every one
 * that weighs a left-behind ticket's age at dmax, each divided by dmin.
 */
static double
myopic_earliest(const AutoCtx *c, const int *next, const int *prev, int lo, int hi)
{
	double		g = rating_of(c, hi) - rating_of(c, lo);
	double		saved[3] = {c->dmin, c->dmin, c->dmin};
	double		weigh[3] = {c->dmax, c->dmax, c->dmax};
	double		h[2];

	myopic_reach(c, next, prev, lo, hi, h);
	return myopic_due(c, lo, hi, g, h, saved, weigh, c->dmin, c->dmin);
}

/*
 * Whether instant a comes after instant b by a margin far above rounding,
 * so that one computed as a bound of the other's exact value tells them
 * apart only where they truly differ.
 */
static bool
clearly_after(const AutoCtx *c, double a, double b)
{
	return isfinite(b) && a - b > 1e-9 * (fabs(b) + c->cfg->max_wait);
}

/*
 * A lower bound of myopic_at for a gap g, tickets arriving at arr[0 ..
 * 2): hL, hR at most g and the densities within [dmin, dmax], so
 * A >= 3 dmin f g^2 / 4 and each weight <= 3 g dmax / (2 dmin).  It grows
 * with g.
 */
static double
myopic_bound(const AutoCtx *c, double g, const double *arr)
{
	double		w[2];

	if (!(g > 0))
		return -INFINITY;
	w[0] = w[1] = 1.5 * g * c->dmax / c->dmin;
	return weighted_at(c, 0.75 * c->dmin * c->f[0] * g * g -
					   2.0 * (c->base / AUTO_BASE_PAIR) * c->scale * c->scale, arr, w);
}

/* Whether pairs use myopic_at: k = 2 and the rating the only criterion. */
static int
use_myopic(const AutoCtx *c)
{
	return c->pair_rating && c->f[0] > 0;
}

/*
 * Whether the pair at positions p < q is due only after x, told by the
 * bound of its instant that needs no density (myopic_earliest), when pairs
 * look one arrival ahead with recent ratings (without them myopic_at
 * looks up no density); then neither a pass nor collect needs its
 * instant.  Tried while it pays (AUTO_BOUND_TRIAL).
 */
static inline bool
passed_over(AutoCtx *c, const int *next, const int *prev, int p, int q, double x)
{
	bool		over;

	if (!use_myopic(c) || c->recent == NULL || mm_auto_exact_pairs ||
		(c->bound_tries >= AUTO_BOUND_TRIAL &&
		 c->bound_skips * AUTO_BOUND_PAYS < c->bound_tries))
		return false;
	over = clearly_after(c, myopic_earliest(c, next, prev, p, q), x);
	c->bound_tries++;
	c->bound_skips += over;
	return over;
}

/*
 * The instant the pair (first, second) with cost cost is due, its
 * neighbours read from the links next and prev.
 */
static double
pair_at(const AutoCtx *c, const int *next, const int *prev, int first, int second,
		double cost)
{
	double		arr[2];

	if (use_myopic(c))
		return first < second ? myopic_at(c, next, prev, first, second) :
			myopic_at(c, next, prev, second, first);
	arr[0] = c->pool->tickets[c->order[first]].arrival;
	arr[1] = c->pool->tickets[c->order[second]].arrival;
	return eligible_at(c, cost, arr, 2);
}

/*
 * Fill cand with the candidate (first, second) and its cost; its instant
 * is left NAN, not computed.  Returns its members' count, their indices
 * in idx.
 */
static int
cand_cost(const AutoCtx *c, int first, int second, AutoCand *cand, int *idx)
{
	int			m = cand_members(c, first, second, idx);

	cand->first = first;
	cand->second = second;
	cand->cost = group_cost(c, idx, m);
	cand->at = NAN;
	return m;
}

/* Fill cand with the candidate (first, second), its cost and its instant. */
static void
cand_fill(const AutoCtx *c, int first, int second, AutoCand *cand)
{
	int			idx[MM_MAX_K];
	double		arr[MM_MAX_K];
	int			m = cand_cost(c, first, second, cand, idx);

	if (second >= 0)
	{
		cand->at = pair_at(c, c->next, c->prev, first, second, cand->cost);
		return;
	}
	for (int i = 0; i < m; i++)
		arr[i] = c->pool->tickets[idx[i]].arrival;
	cand->at = eligible_at(c, cand->cost, arr, m);
}

/*
 * The oldest arrival of the tickets still waiting; lowers *best (when not
 * NULL) to its timeout.
 */
static double
oldest_waiting(const AutoCtx *c, double *best)
{
	const MMTicket *tk = c->pool->tickets;
	double		oldest = INFINITY;

	for (int p = c->first; p >= 0; p = c->next[p])
		if (tk[c->order[p]].arrival < oldest)
			oldest = tk[c->order[p]].arrival;
	if (best != NULL && oldest + c->cfg->max_wait < *best)
		*best = oldest + c->cfg->max_wait;
	return oldest;
}

/*
 * Whether a pair with this rating gap, its first member arriving at
 * bound[0] and none before bound[1], is eligible only after x: then so is
 * every pair of wider gap (myopic_bound and eligible_at grow with it).
 */
static inline bool
gap_beyond(const AutoCtx *c, double gap, const double *bound, double x)
{
	return c->f[0] > 0 &&
		(use_myopic(c) ? myopic_bound(c, gap, bound) :
		 eligible_at(c, c->f[0] * gap, bound, 2)) > x;
}

/*
 * Collect the candidates eligible at or before limit into out (emptied
 * first), when out is not NULL; and when best is not NULL, lower *best to
 * the next deadline of the tickets still waiting: the oldest one's timeout,
 * or the earliest instant any candidate is eligible.  With c->polls, a
 * pass polls mm_interrupt per ticket and stops with MM_ERR_INTERRUPTED
 * (c->interrupted) when asked.
 */
static MMStatus
collect(AutoCtx *c, double limit, AutoCands *out, double *best)
{
	const MMTicket *tk = c->pool->tickets;
	double		oldest = oldest_waiting(c, best);

	if (out != NULL)
		out->n = 0;

	for (int p = c->first; p >= 0; p = c->next[p])
	{
		if (c->polls && mm_interrupted())
		{
			c->interrupted = true;
			return MM_ERR_INTERRUPTED;
		}
		if (c->k > 2)
		{
			AutoCand	cand;
			int			last = p;

			for (int i = 1; i < c->k && last >= 0; i++)
				last = c->next[last];
			if (last < 0)
				break;			/* fewer than k from p on */
			cand_fill(c, p, -1, &cand);
			if (out != NULL && cand.at <= limit && cands_push(out, &cand) != MM_OK)
				return MM_ERR_NOMEM;
			if (best != NULL && cand.at < *best)
				*best = cand.at;
			continue;
		}
		/* pairs: the partners after p, while the rating gap alone still allows it */
		{
			double		bound[2] = {tk[c->order[p]].arrival, 0.0};
			int			q = c->next[p];

			for (int s = 0; q >= 0 && s < AUTO_SCAN; s++, q = c->next[q])
			{
				AutoCand	cand;
				double		gap = tk[c->order[q]].rating - tk[c->order[p]].rating;
				double		x = best != NULL && *best > limit ? *best : limit;

				/* no partner this far is eligible before one that came first */
				bound[1] = oldest;
				if (gap_beyond(c, gap, bound, x))
					break;
				if (passed_over(c, c->next, c->prev, p, q, x))
					continue;	/* neither eligible by limit nor before *best */
				cand_fill(c, p, q, &cand);
				if (out != NULL && cand.at <= limit && cands_push(out, &cand) != MM_OK)
					return MM_ERR_NOMEM;
				if (best != NULL && cand.at < *best)
					*best = cand.at;
			}
		}
	}
	return MM_OK;
}

/* Cheapest first; ties by instant, then position. */
static int
cand_cmp(const void *l, const void *r)
{
	const AutoCand *x = l;
	const AutoCand *y = r;

	if (x->cost != y->cost)
		return (x->cost > y->cost) - (x->cost < y->cost);
	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	if (x->first != y->first)
		return (x->first > y->first) - (x->first < y->first);
	return (x->second > y->second) - (x->second < y->second);
}

/*
 * What a ticket left alone in the pool with r seconds to its timeout is
 * still expected to cost: the wait until the next arrival (at the
 * measured rate) or its timeout, then a game with that newcomer at the
 * mean spread of two random tickets (a third of the rating range per
 * criterion), or, when nobody comes, a game with computer players; for
 * k = 2 with the rating alone, weighed by AUTO_LONE_WEIGHT.
 */
static double
lone_cost(const AutoCtx *c, double r)
{
	double		T = c->cfg->max_wait;
	double		rate = c->cfg->arrival_rate > 0 ? c->cfg->arrival_rate : 1.0 / T;
	double		none = exp(-rate * (r > 0 ? r : 0));
	double		fsum = 0.0;
	double		w = c->pair_rating ? AUTO_LONE_WEIGHT : 1.0;

	for (int d = 0; d < c->dims; d++)
		fsum += c->f[d];

	return w * ((1.0 - none) / (rate * T) + (1.0 - none) * fsum / 3.0 +
				none * (fsum + c->k - 1));
}

/*
 * k = 2, three tickets waiting: committing the pair leaves the third
 * alone, maybe until its timeout.  Of the three pairs, take the one whose
 * spread plus what its left-out ticket is still expected to cost
 * (lone_cost) is least, so an old ticket is not left alone by a newcomer
 * that takes its only partner.
 */
static void
spare_lonely(const AutoCtx *c, double now, AutoCand *cand)
{
	int			p[3];
	int			m = 0;
	double		best = INFINITY;
	AutoCand	choice = *cand;

	for (int q = c->first; q >= 0 && m < 3; q = c->next[q])
		p[m++] = q;
	if (m != 3 || c->next[p[2]] >= 0)
		return;
	for (int out = 0; out < 3; out++)
	{
		AutoCand	alt;
		const MMTicket *t = &c->pool->tickets[c->order[p[out]]];
		int			a = p[out == 0 ? 1 : 0];
		int			b = p[out == 2 ? 1 : 2];
		int			idx[MM_MAX_K];
		double		v;

		cand_cost(c, a, b, &alt, idx);	/* committed as it is: its instant is not needed */
		v = alt.cost + lone_cost(c, c->cfg->max_wait - (now - t->arrival));
		if (v < best)
		{
			best = v;
			choice = alt;
		}
	}
	*cand = choice;
}

/* Commit the candidate as a match and take its members out. */
static void
commit(AutoCtx *c, const AutoCand *cand, MMResult *res)
{
	int			idx[MM_MAX_K];
	int			m = cand_members(c, cand->first, cand->second, idx);

	for (int i = 0; i < m; i++)
		auto_unlink(c, c->pos[idx[i]]);
	mm_add_match(res, idx, m, c->k);
}

/*
 * Commit cand, a candidate of the pass, when its members all still wait
 * and, after an earlier commit of the pass (done), it is still what it was
 * when the pass found it: a group of consecutive tickets must still be the
 * same group, and a pair looking one arrival ahead still due with the
 * neighbours the commits left.  Returns whether it committed.
 */
static int
pass_commit(AutoCtx *c, double now, AutoCand *cand, int done, MMResult *res)
{
	int			idx[MM_MAX_K];
	int			m = cand_members(c, cand->first, cand->second, idx);

	if (m != c->k)
		return 0;
	/* positions link past taken tickets only after they are unlinked */
	for (int i = 0; i < m; i++)
		if (c->taken[idx[i]])
			return 0;
	if (done && (cand->second < 0 || use_myopic(c)))
	{
		AutoCand	again;

		cand_fill(c, cand->first, cand->second, &again);
		if (again.at > now)
			return 0;
	}
	if (c->k == 2 && c->left == 3)
		spare_lonely(c, now, cand);
	commit(c, cand, res);
	return 1;
}

/*
 * A pass for k > 2 (and for pairs with mm_auto_collect_all): collect the
 * eligible candidates, then try them cheapest first (pass_commit).
 */
static MMStatus
group_pass(AutoCtx *c, double now, AutoCands *l, MMResult *res, int *done)
{
	MMStatus	st = collect(c, now, l, &c->deadline);

	if (st != MM_OK)
		return st;
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(AutoCand), cand_cmp);
	for (int j = 0; j < l->n; j++)
		if (pass_commit(c, now, &l->v[j], *done, res))
			*done = 1;
	return MM_OK;
}

/* Sort n candidates by cand_cmp, by insertion when they are few. */
static void
cands_sort(AutoCand *v, int n)
{
	if (n > AUTO_INSERTION_SORT)
	{
		qsort(v, n, sizeof(AutoCand), cand_cmp);
		return;
	}
	for (int i = 1; i < n; i++)
	{
		AutoCand	x = v[i];
		int			j = i;

		while (j > 0 && cand_cmp(&v[j - 1], &x) > 0)
		{
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

/* Restore the heap of mg by cand_cmp below index i (the least at the root). */
static void
heap_down(AutoMerge *mg, int i)
{
	AutoHead   *h = mg->heap;
	AutoHead	x = h[i];

	for (;;)
	{
		int			j = 2 * i + 1;

		if (j >= mg->nheap)
			break;
		if (j + 1 < mg->nheap && cand_cmp(&h[j + 1].cand, &h[j].cand) < 0)
			j++;
		if (cand_cmp(&h[j].cand, &x.cand) >= 0)
			break;
		h[i] = h[j];
		i = j;
	}
	h[i] = x;
}

/* Add head to the heap of mg; MM_ERR_NOMEM when it cannot grow. */
static MMStatus
heap_push(AutoMerge *mg, const AutoHead *head)
{
	AutoHead   *v = room_grow(mg->heap, mg->nheap, &mg->capheap, sizeof(AutoHead), 16,
							  &mg->heap_allocated);
	int			i;

	if (v == NULL)
		return MM_ERR_NOMEM;
	mg->heap = v;
	for (i = mg->nheap++; i > 0 && cand_cmp(&head->cand, &mg->heap[(i - 1) / 2].cand) < 0; i = (i - 1) / 2)
		mg->heap[i] = mg->heap[(i - 1) / 2];
	mg->heap[i] = *head;
	return MM_OK;
}

/*
 * pair_pass: find the next run of candidate pairs of the ticket at position
 * p that holds an eligible one (at or before now), from where h stands, and
 * set h to its cheapest, the rest of the run (sorted) in mg->run; lower
 * c->deadline to each instant found, as collect would.  *found: whether one
 * was.  The partners are collect's: the next AUTO_SCAN in the links next,
 * until the gap alone puts them past the deadline found so far, their
 * instants computed with next and prev, the links the pass began with.  A
 * run is the partners of one cost when the rating is the only criterion
 * (the cost then grows with the partner's position), every partner
 * otherwise, so each later run of p costs more than this one.
 */
static MMStatus
pair_run(AutoCtx *c, const int *next, const int *prev, int p, double now,
		 AutoHead *h, bool *found)
{
	const MMTicket *tk = c->pool->tickets;
	AutoMerge  *mg = &c->merge;
	double		bound[2] = {tk[c->order[p]].arrival, mg->oldest};

	*found = false;
	while (h->scan >= 0)
	{
		int			start = mg->run.n;
		int			m;
		bool		started = false;
		double		run = 0.0;
		int			q;

		while ((q = h->scan) >= 0)
		{
			AutoCand	cand;
			int			idx[2] = {c->order[p], c->order[q]};
			double		gap = tk[idx[1]].rating - tk[idx[0]].rating;
			double		x = c->deadline > now ? c->deadline : now;

			/* no partner this far is eligible before one that came first */
			if (h->seen == AUTO_SCAN || gap_beyond(c, gap, bound, x))
			{
				h->scan = -1;
				break;
			}
			/* group_cost's, to the bit, where the rating alone counts */
			cand.cost = c->pair_rating ? c->f[0] * gap : group_cost(c, idx, 2);
			if (started && c->pair_rating && cand.cost != run)
				break;			/* q starts p's next run */
			started = true;
			run = cand.cost;
			cand.first = p;
			cand.second = q;
			h->scan = next[q];
			h->seen++;
			if (passed_over(c, next, prev, p, q, x))
				continue;		/* neither due nor the deadline */
			cand.at = pair_at(c, next, prev, p, q, cand.cost);
			if (cand.at < c->deadline)
				c->deadline = cand.at;
			if (cand.at <= now && cands_push(&mg->run, &cand) != MM_OK)
				return MM_ERR_NOMEM;
		}
		if ((m = mg->run.n - start) == 0)
			continue;
		cands_sort(mg->run.v + start, m);
		h->cand = mg->run.v[start];
		h->rest = start + 1;
		h->end = start + m;
		if (m == 1)
			mg->run.n = h->rest = h->end = start;	/* the heap holds the one */
		*found = true;
		return MM_OK;
	}
	return MM_OK;
}

/*
 * A pass for pairs (k = 2): group_pass's decisions, in the same order,
 * without collecting every eligible pair first.  Each waiting ticket's
 * pairs with the partners after it come in runs of rising cost
 * (pair_run); a heap holds each ticket's cheapest untried pair, and a
 * ticket's next run is looked at only once its current one is tried and
 * the ticket still waits (a k-way merge of the sorted runs).  A pass over
 * many tickets that are all due so looks at a few partners per ticket, not
 * at every one within reach, and holds no more pairs than the list would.
 * Until its first commit a pass reads c's links; it copies them then, for
 * the instants of the runs it looks at later.  A pass that commits nothing
 * found no eligible pair: it looked at every partner, as collect does, and
 * c->deadline is collect's.
 */
static MMStatus
pair_pass(AutoCtx *c, double now, MMResult *res, int *done)
{
	AutoMerge  *mg = &c->merge;

	mg->nheap = 0;
	mg->run.n = 0;
	mg->oldest = oldest_waiting(c, &c->deadline);
	for (int p = c->first; p >= 0; p = c->next[p])
	{
		AutoHead	h = {.scan = c->next[p]};
		bool		found;

		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		if (pair_run(c, c->next, c->prev, p, now, &h, &found) != MM_OK ||
			(found && heap_push(mg, &h) != MM_OK))
			return MM_ERR_NOMEM;
	}
	if (mg->nheap == 0)
		return MM_OK;

	if (mg->nlinks < c->n)
	{
		if ((mg->next = mm_malloc(sizeof(int) * 2 * (size_t) c->n)) == NULL)
			return MM_ERR_NOMEM;
		mg->nlinks = c->n;
		mg->links_allocated = true;
	}
	mg->prev = mg->next + c->n;
	memcpy(mg->next, c->next, sizeof(int) * (size_t) c->n);
	memcpy(mg->prev, c->prev, sizeof(int) * (size_t) c->n);
	while (mg->nheap > 0)
	{
		AutoHead   *h = &mg->heap[0];
		AutoCand	cand = h->cand;
		int			p = cand.first;
		bool		found = false;

		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		if (pass_commit(c, now, &cand, *done, res))
			*done = 1;
		if (!c->taken[c->order[p]])
		{
			/* p's next pair whose partner still waits: the rest of its run, or its next run */
			while (h->rest < h->end && c->taken[c->order[mg->run.v[h->rest].second]])
				h->rest++;
			if (h->rest < h->end)
			{
				h->cand = mg->run.v[h->rest++];
				found = true;
			}
			else if (pair_run(c, mg->next, mg->prev, p, now, h, &found) != MM_OK)
				return MM_ERR_NOMEM;
		}
		if (!found)
			mg->heap[0] = mg->heap[--mg->nheap];
		if (mg->nheap > 0)
			heap_down(mg, 0);
	}
	return MM_OK;
}

bool		mm_auto_collect_all = false;
bool		mm_auto_exact_pairs = false;

/*
 * Commit the eligible candidates, cheapest first, and again over the
 * tickets left until a pass commits none: that pass saw the tickets that
 * stay, and c->deadline is their next deadline.
 */
static MMStatus
commit_eligible(AutoCtx *c, double now, AutoCands *l, MMResult *res)
{
	for (;;)
	{
		int			done = 0;
		MMStatus	st;

		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		/*
		 * the pass that finds none eligible also finds the next deadline,
		 * or that none comes before the horizon
		 */
		c->deadline = mm_pool_horizon(c->pool);
		st = c->k == 2 && !mm_auto_collect_all ? pair_pass(c, now, res, &done) :
			group_pass(c, now, l, res, &done);
		if (st != MM_OK || !done)
			return st;
	}
}

/*
 * The cheapest candidate of k tickets still waiting that contains the
 * ticket at position p: the pair with either neighbour, or a run of k
 * consecutive ones around it.
 */
static int
cheapest_around(AutoCtx *c, int p, AutoCand *out)
{
	int			start = p;
	int			found = 0;

	for (int i = 1; i < c->k && c->prev[start] >= 0; i++)
		start = c->prev[start];
	for (int s = start; s >= 0; s = c->next[s])
	{
		AutoCand	cand;
		int			idx[MM_MAX_K];
		int			m;

		if (c->k == 2)
		{
			if (c->next[s] < 0)
				break;
			cand_fill(c, s, c->next[s], &cand);
		}
		else
			cand_fill(c, s, -1, &cand);
		m = cand_members(c, cand.first, cand.second, idx);
		if (m < c->k)
			break;
		if (!found || cand_cmp(&cand, out) < 0)
			*out = cand;
		found = 1;
		if (s == p)
			break;				/* later starts do not contain p */
	}
	return found;
}

/*
 * The timed-out tickets, oldest first: each plays in the cheapest group of
 * k that contains it; when fewer than k wait, they all play with computer
 * players, or the timed-out ones expire.
 */
static void
settle_timeouts(AutoCtx *c, double now, MMResult *res, int *changed)
{
	const MMPool *pool = c->pool;

	for (int i = 0; i < c->n; i++)
	{
		AutoCand	cand;

		if (c->taken[i])
			continue;
		if (!mm_timed_out(&pool->tickets[i], now, c->cfg->max_wait))
			break;				/* pool order: the rest are younger */
		*changed = 1;
		if (c->left >= c->k && cheapest_around(c, c->pos[i], &cand))
		{
			commit(c, &cand, res);
			continue;
		}
		if (c->cfg->on_timeout == MM_TIMEOUT_BOTS)
		{
			int			idx[MM_MAX_K];
			int			m = 0;

			for (int j = i; j < c->n; j++)
				if (!c->taken[j])
					idx[m++] = j;
			for (int j = 0; j < m; j++)
				auto_unlink(c, c->pos[idx[j]]);
			mm_add_match(res, idx, m, c->k);
			return;
		}
		auto_unlink(c, c->pos[i]);
		res->expired[res->nexpired++] = i;
	}
}

/* auto's own fields: the constants, when set, finite and not negative. */
MMStatus
mm_auto_check(const MMConfig *cfg)
{
	if (!(cfg->automatic.base >= 0) || !isfinite(cfg->automatic.base) ||
		!(cfg->automatic.growth >= 0) || !isfinite(cfg->automatic.growth) ||
		!(cfg->automatic.curve >= 0) || !isfinite(cfg->automatic.curve))
		return MM_ERR_ARGUMENT;
	return MM_OK;
}

/*
 * The earliest instant of the tickets still waiting, a timeout or a
 * candidate's, under the rate after j falls (c->cfg's but for the rate),
 * no later than from.
 */
static double
eligible_after(AutoCtx *c, const AutoFalls *fl, int j, double from)
{
	const MMConfig *cfg = c->cfg;
	MMConfig	local;
	double		best = from;

	if (c->interrupted)
		return -INFINITY;
	auto_values(c, config_after(cfg, fl, j, &local));

	/*
	 * Without a list, collect stops only when interrupted: then an instant
	 * before every fall, so that the search ends at once, early rather than
	 * late (the step reports the interruption).
	 */
	if (collect(c, -INFINITY, NULL, &best) != MM_OK)
		best = -INFINITY;
	auto_values(c, cfg);
	return best;
}

/*
 * The next deadline of the tickets a step leaves (at least k of them)
 * when nothing of theirs comes under the rate after j0 falls before fall
 * j0 + 1.  As the rate falls, S rises (and for k > 2 the values' growth
 * with it), so every candidate's instant only comes earlier: E(j), the
 * earliest instant (eligible_after) under the rate after j falls, falls
 * with j as the falls' instants rise.  The step acts in the span of the
 * first fall j whose E(j) comes before fall j + 1, at the later of the
 * two; that j is found by doubling and halving, a collect per try,
 * rather than by a step at every fall (some 200 after a burst).  from:
 * the horizon, or INFINITY.
 */
static double
falls_deadline(AutoCtx *c, AutoFalls *fl, int j0, double from)
{
	int			lo = j0 + 1;
	int			hi = lo;
	int			width = 1;
	int			jmax = falls_last(fl);
	double		e;

	/*
	 * Each try needs E(j) only when it comes before fall j + 1, which
	 * bounds its pass; fall jmax's span runs on without end, so its E(j)
	 * always comes before.
	 */
	while ((e = eligible_after(c, fl, hi, fmin(from, fall_at(fl, hi + 1)))) >= fall_at(fl, hi + 1) &&
		   hi < jmax)
	{
		lo = hi + 1;
		hi = hi + width < jmax ? hi + width : jmax;
		width *= 2;
	}
	/* the first j in [lo, hi] whose E(j) comes before fall j + 1 (hi's does) */
	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;
		double		em = eligible_after(c, fl, mid, fmin(from, fall_at(fl, mid + 1)));

		if (em < fall_at(fl, mid + 1))
		{
			hi = mid;
			e = em;
		}
		else
			lo = mid + 1;
	}
	return fmax(fall_at(fl, hi), e);
}

/* One step of auto at time now. */
MMStatus
mm_auto_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
			 MMResult *res)
{
	AutoCtx		c;
	AutoCands	cands = {NULL, 0, 0, false};
	MMStatus	st;
	int			timed_out;
	MMConfig	local;
	AutoFalls	fl;
	int			j0;
	AutoHead	heads[AUTO_STEP_ROOM];
	int			links[2 * AUTO_STEP_ROOM];
	AutoCand	pairs[AUTO_STEP_ROOM];
	double		room[AUTO_ROOM_DOUBLES];

	(void) prev;
	falls_of(cfg, &fl);
	j0 = falls_by(&fl, now);
	cfg = config_after(cfg, &fl, j0, &local);
	st = auto_open(&c, cfg, pool, room, sizeof(room));
	if (st != MM_OK)
		return st;
	c.merge.heap = heads;
	c.merge.capheap = AUTO_STEP_ROOM;
	c.merge.next = links;
	c.merge.nlinks = AUTO_STEP_ROOM;
	c.merge.run.v = pairs;
	c.merge.run.cap = AUTO_STEP_ROOM;
	c.polls = true;
	do
	{
		timed_out = 0;
		st = commit_eligible(&c, now, &cands, res);
		if (st == MM_OK)
			settle_timeouts(&c, now, res, &timed_out);
	} while (st == MM_OK && timed_out && c.left > 0);

	/*
	 * The loop ends after a pass that committed nothing and timeouts that
	 * changed nothing, so that pass saw the tickets that stay: its
	 * deadline is mm_auto_deadline's for them.
	 */
	if (st == MM_OK && c.left > 0 && c.left < c.k)
	{
		/*
		 * fewer than k wait for the oldest one's timeout, whatever the
		 * horizon: told exactly, a keyed simulation need not step such a
		 * sub-pool at other keys' arrivals (mm_simulate)
		 */
		res->deadline = INFINITY;
		oldest_waiting(&c, &res->deadline);
	}
	else if (st == MM_OK)
		res->deadline = c.left == 0 ? INFINITY
			: c.deadline >= fall_at(&fl, j0 + 1)
			? falls_deadline(&c, &fl, j0, mm_pool_horizon(pool))
			: c.deadline;
	if (st == MM_OK && c.interrupted)
		st = MM_ERR_INTERRUPTED;
	if (cands.allocated)
		mm_free(cands.v);
	auto_close(&c);
	return st;
}

/*
 * The next instant a step acts: the oldest ticket's timeout, or the first
 * instant a candidate group becomes eligible, whichever comes first.  With
 * k or more tickets, the pool's horizon when that comes first, as the step
 * tells it (a simulator's next arrival, which steps anyway; finding the
 * exact instant beyond it took a simulation with intersect filters, which
 * asks after each step, most of its time).
 */
double
mm_auto_deadline(const MMConfig *cfg, const MMPool *pool)
{
	AutoCtx		c;
	double		best = mm_timeout_deadline(cfg, pool);
	double		horizon = mm_pool_horizon(pool);
	MMConfig	local;
	AutoFalls	fl;
	int			j0;
	double		room[AUTO_ROOM_DOUBLES];

	/*
	 * The rate of the last step holds until it next falls, which matters
	 * only where a group can form (fewer than k tickets just wait for a
	 * timeout: with many filter values a fall instant for each value's
	 * last player would be a step over every sub-pool).
	 */
	falls_of(cfg, &fl);
	j0 = falls_by(&fl, pool->stepped_at);
	cfg = config_after(cfg, &fl, j0, &local);
	if (auto_open(&c, cfg, pool, room, sizeof(room)) != MM_OK)
		return best;			/* no memory: the step will tell */
	if (pool->ntickets >= c.k && horizon < best)
		best = horizon;
	collect(&c, -INFINITY, NULL, &best);
	if (pool->ntickets >= c.k && best >= fall_at(&fl, j0 + 1))
		best = falls_deadline(&c, &fl, j0, horizon);
	auto_close(&c);
	return best;
}

/*
 * For the unit tests, pairs rated on the rating alone with recent ratings:
 * of the pairs of pool within AUTO_SCAN of each other in rating order,
 * those whose instant (myopic_at; the newer member's arrival when due at
 * once) comes before a bound the pruning takes for no later, beyond
 * rounding: the gap's (myopic_bound, with the pool's oldest arrival) or
 * the densities' (myopic_earliest).  Returns how many bounds are, or -1
 * without memory; *checked: how many pairs were compared.
 */
int
mm_auto_bound_violations(const MMConfig *cfg, const MMPool *pool, int *checked)
{
	AutoCtx		c;
	const MMTicket *tk = pool->tickets;
	int			bad = 0;

	*checked = 0;
	if (auto_open(&c, cfg, pool, NULL, 0) != MM_OK)
		return -1;
	if (use_myopic(&c) && c.recent != NULL)
	{
		double		oldest = oldest_waiting(&c, NULL);

		for (int p = c.first; p >= 0; p = c.next[p])
		{
			int			q = c.next[p];

			for (int s = 0; q >= 0 && s < AUTO_SCAN; s++, q = c.next[q])
			{
				double		bound[2] = {tk[c.order[p]].arrival, oldest};
				double		newest = fmax(tk[c.order[p]].arrival, tk[c.order[q]].arrival);
				/* due at once (-INFINITY): from the newer one's arrival on */
				double		at = fmax(myopic_at(&c, c.next, c.prev, p, q), newest);
				double		b[2];

				b[0] = myopic_bound(&c, rating_of(&c, q) - rating_of(&c, p), bound);
				b[1] = myopic_earliest(&c, c.next, c.prev, p, q);
				for (int i = 0; i < 2; i++)
					if (clearly_after(&c, b[i], at))
						bad++;	/* later beyond rounding */
				(*checked)++;
			}
		}
	}
	auto_close(&c);
	return bad;
}
