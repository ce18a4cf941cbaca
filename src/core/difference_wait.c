/*
 * difference_wait.c
 *		The difference_wait algorithm (Schlup 4.4), generalised from pairs
 *		to games of k players.
 *
 * Tickets are held in provisional groups of exactly k.  A group becomes a
 * match when its waiting period, wait_factor * q (q its rating spread),
 * has passed since it got its current members, or when one of its
 * members reaches max_wait, whichever comes first.  Until then a ticket
 * without a group may take the place of a member when that makes the
 * group's spread strictly smaller; the member it replaces loses its group
 * and looks for a new one at once.  doc/algorithms.md has the full rules.
 *
 * A step works on private copies of the group state and writes the pool
 * back only when everything else has succeeded.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How often one ticket is processed as a candidate in one step at most. */
#define DW_MAX_VISITS	4

/*
 * Candidates a step weighs against every group (improve_only) before it
 * puts the pool in rating order instead, so that a long chain of
 * displacements costs what the scan costs, not its length times the groups.
 */
#define DW_LINEAR_VISITS 16

/* Kinds of option a candidate has. */
#define DW_NONE			0
#define DW_NEW			1		/* form a new group with ungrouped tickets */
#define DW_IMPROVE		2		/* replace a member of an existing group */

/* One option of a candidate. */
typedef struct DWOption
{
	int			kind;
	double		spread;			/* rating spread of the resulting group */
	int			nleft;			/* DW_NEW: window takes lu[0..nleft) */
	int			nright;			/* DW_NEW: and ru[0..nright) */
	int			group;			/* DW_IMPROVE: the group */
	int			drop;			/* DW_IMPROVE: the member x replaces */
} DWOption;

/* Working state of one step. */
typedef struct DWState
{
	const MMTicket *t;
	int			n;
	int			k;
	double		now;
	double		max_wait;
	double		wait_factor;

	bool		sorted;			/* byr, rr, pos and maxgap are built */
	int		   *byr;			/* rating order -> ticket */
	double	   *rr;				/* rating order -> rating */
	int		   *pos;			/* ticket -> position in byr */
	int		   *grp;			/* ticket -> working group, or -1 */
	unsigned char *visits;		/* ticket -> times processed this step */
	int			nung;			/* tickets without a group */

	int			ngroups;
	int		   *gmem;			/* group g's members at gmem[g * k ...] */
	int		   *gmin;			/* group -> its earliest member */
	double	   *formed;
	double	   *finalize;
	double	   *q;
	double	   *gext;			/* group g's max1, max2, min1, min2 at 4g */
	int		   *stamp;			/* group -> last candidate that saw it */
	int			curstamp;
	double		maxgap;			/* >= every group's largest rating gap */

	int		   *lu;				/* ungrouped below the candidate, nearest first */
	int		   *ru;				/* ungrouped above the candidate, nearest first */
	int		   *wa;				/* scratch: window members, group gaps */
	int		   *wb;
} DWState;

/*
 * Whether an instant computed as a sum (a group's finalize_at, a ticket's
 * arrival + max_wait) has come at now.  Instants closer than rounding
 * count as equal: mm_simulate works on absolute times, where 31.98 + 0.25
 * exceeds 32.23 by one unit in the last place, and tick on microseconds
 * relative to now, where they are equal; without the slack a newcomer
 * arriving at such an instant could still change the group in one and not
 * in the other.  The slack (1e-12 of the time, at least 1e-12 s) lies far
 * below the microsecond of a timestamp.
 */
static inline int
is_due(double at, double now)
{
	return at <= now + 1e-12 * fmax(1.0, fabs(now));
}

/* Index and key pair for sorting. */
typedef struct DWKey
{
	double		key1;
	double		key2;
	int			idx;
	int			tie;
} DWKey;

/* Order DWKey by key1, key2, tie. */
static int
dwkey_cmp(const void *a, const void *b)
{
	const DWKey *x = a;
	const DWKey *y = b;

	if (x->key1 != y->key1)
		return x->key1 < y->key1 ? -1 : 1;
	if (x->key2 != y->key2)
		return x->key2 < y->key2 ? -1 : 1;
	return (x->tie > y->tie) - (x->tie < y->tie);
}

/*
 * Sort keys[0..n) with dwkey_cmp, a total order.  Groups written back
 * oldest first keep that order from step to step, so the check spares
 * most steps the sort (a burst's many groups, finalised one step each).
 */
static void
sort_keys(DWKey *keys, int n)
{
	for (int i = 1; i < n; i++)
		if (dwkey_cmp(&keys[i - 1], &keys[i]) > 0)
		{
			qsort(keys, n, sizeof(DWKey), dwkey_cmp);
			return;
		}
}

/* A ticket in the rating order. */
typedef struct DWRated
{
	double		rating;
	int			idx;
} DWRated;

/* Whether a goes before b in the rating order (ties by arrival). */
static inline int
rated_before(const DWRated *a, const DWRated *b)
{
	return a->rating < b->rating ||
		(a->rating == b->rating && a->idx < b->idx);
}

/*
 * Sort v[0..n) into the rating order: insertion sort on runs of 16, then
 * bottom-up merges through tmp.  Called once per step, it is much cheaper
 * than qsort with a comparison callback on the small pools of a step.
 */
static void
sort_rated(DWRated *v, DWRated *tmp, int n)
{
	DWRated    *src = v;
	DWRated    *dst = tmp;

	for (int b = 0; b < n; b += 16)
	{
		int			e = b + 16 < n ? b + 16 : n;

		for (int i = b + 1; i < e; i++)
		{
			DWRated		x = v[i];
			int			p = i;

			for (; p > b && rated_before(&x, &v[p - 1]); p--)
				v[p] = v[p - 1];
			v[p] = x;
		}
	}
	for (int w = 16; w < n; w *= 2)
	{
		DWRated    *t;

		for (int b = 0; b < n; b += 2 * w)
		{
			int			m = b + w < n ? b + w : n;
			int			e = b + 2 * w < n ? b + 2 * w : n;
			int			i = b;
			int			j = m;
			int			o = b;

			while (i < m && j < e)
				dst[o++] = rated_before(&src[j], &src[i]) ? src[j++] : src[i++];
			while (i < m)
				dst[o++] = src[i++];
			while (j < e)
				dst[o++] = src[j++];
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		for (int i = 0; i < n; i++)
			v[i] = src[i];
}

/* Reserve bytes at the end of a scratch block; returns their offset. */
static size_t
dw_reserve(size_t *total, size_t bytes)
{
	size_t		off = *total;

	*total += (bytes + 15) & ~(size_t) 15;
	return off;
}

/* Rating of ticket i. */
static inline double
rating(const DWState *s, int i)
{
	return s->t[i].rating;
}

/* Cache a group's two largest and two smallest member ratings. */
static void
group_extremes(DWState *s, int g)
{
	const int  *mem = s->gmem + (size_t) g * s->k;
	double	   *e = s->gext + (size_t) g * 4;
	int			imax = 0;
	int			imin = 0;

	e[1] = -INFINITY;
	e[3] = INFINITY;
	for (int j = 1; j < s->k; j++)
	{
		if (rating(s, mem[j]) > rating(s, mem[imax]))
			imax = j;
		if (rating(s, mem[j]) < rating(s, mem[imin]))
			imin = j;
	}
	for (int j = 0; j < s->k; j++)
	{
		if (j != imax && rating(s, mem[j]) > e[1])
			e[1] = rating(s, mem[j]);
		if (j != imin && rating(s, mem[j]) < e[3])
			e[3] = rating(s, mem[j]);
	}
	e[0] = rating(s, mem[imax]);
	e[2] = rating(s, mem[imin]);
}

/* Order ints ascending. */
static int
dw_int_cmp(const void *a, const void *b)
{
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	return (x > y) - (x < y);
}

/*
 * Raise maxgap to group g's largest gap between ratings that are
 * neighbours in the group (uses s->wa as scratch).
 */
static void
group_gap(DWState *s, int g)
{
	const int  *mem = s->gmem + (size_t) g * s->k;
	int		   *p = s->wa;
	int			k = s->k;

	for (int j = 0; j < k; j++)
		p[j] = s->pos[mem[j]];
	if (k <= 16)
	{
		for (int i = 1; i < k; i++)
		{
			int			v = p[i];
			int			j = i;

			for (; j > 0 && p[j - 1] > v; j--)
				p[j] = p[j - 1];
			p[j] = v;
		}
	}
	else
		qsort(p, k, sizeof(int), dw_int_cmp);
	for (int j = 1; j < k; j++)
		if (s->rr[p[j]] - s->rr[p[j - 1]] > s->maxgap)
			s->maxgap = s->rr[p[j]] - s->rr[p[j - 1]];
}

/* Recompute a group's derived fields after it got new members at now. */
static void
group_reform(DWState *s, int g, double spread)
{
	const int  *mem = s->gmem + (size_t) g * s->k;
	double		fin = s->now + s->wait_factor * spread;
	int			first = mem[0];

	for (int j = 0; j < s->k; j++)
	{
		double		deadline = s->t[mem[j]].arrival + s->max_wait;

		if (deadline < fin)
			fin = deadline;
		if (mem[j] < first)
			first = mem[j];
	}
	s->formed[g] = s->now;
	s->q[g] = spread;
	s->finalize[g] = fin;
	s->gmin[g] = first;
	group_extremes(s, g);
	if (s->sorted)
		group_gap(s, g);
}

/* Sort a short list of ticket indices ascending. */
static void
sort_small(int *v, int n)
{
	for (int i = 1; i < n; i++)
	{
		int			x = v[i];
		int			p = i;

		for (; p > 0 && v[p - 1] > x; p--)
			v[p] = v[p - 1];
		v[p] = x;
	}
}

/* Write the members of a window option of candidate x to out, ascending. */
static void
window_members(const DWState *s, int x, const DWOption *o, int *out)
{
	int			n = 0;

	out[n++] = x;
	for (int i = 0; i < o->nleft; i++)
		out[n++] = s->lu[i];
	for (int i = 0; i < o->nright; i++)
		out[n++] = s->ru[i];
	sort_small(out, n);
}

/*
 * Whether option a is better than option b for candidate x: smaller
 * spread; then a new group before an improvement; between improvements
 * the older group (formed_at, then earliest member); between new groups
 * the one whose members, listed in arrival order, are older
 * (lexicographically).
 */
static int
option_better(DWState *s, int x, const DWOption *a, const DWOption *b)
{
	if (b->kind == DW_NONE)
		return 1;
	if (a->spread != b->spread)
		return a->spread < b->spread;
	if (a->kind != b->kind)
		return a->kind == DW_NEW;
	if (a->kind == DW_IMPROVE)
	{
		if (s->formed[a->group] != s->formed[b->group])
			return s->formed[a->group] < s->formed[b->group];
		return s->gmin[a->group] < s->gmin[b->group];
	}
	window_members(s, x, a, s->wa);
	window_members(s, x, b, s->wb);
	for (int i = 0; i < s->k; i++)
		if (s->wa[i] != s->wb[i])
			return s->wa[i] < s->wb[i];
	return 0;
}

/* Consider the window of x, nl tickets of lu and nr of ru. */
static void
eval_window(DWState *s, int x, int nl, int nr, DWOption *best)
{
	DWOption	o;
	double		hi = nr > 0 ? rating(s, s->ru[nr - 1]) : rating(s, x);
	double		lo = nl > 0 ? rating(s, s->lu[nl - 1]) : rating(s, x);

	o.kind = DW_NEW;
	o.spread = hi - lo;
	o.nleft = nl;
	o.nright = nr;
	o.group = -1;
	o.drop = -1;
	if (option_better(s, x, &o, best))
		*best = o;
}

/*
 * Consider x replacing one member of group g: the member whose removal
 * leaves the smallest spread (on a tie the newest member leaves), kept
 * only if the spread is strictly below the group's.
 */
static void
eval_group(DWState *s, int x, int g, DWOption *best)
{
	const int  *mem = s->gmem + (size_t) g * s->k;
	const double *e = s->gext + (size_t) g * 4;
	double		rx = rating(s, x);
	double		bspread;
	int			bdrop = -1;
	DWOption	o;

	/*
	 * Dropping the top or the bottom member is at least as good as dropping
	 * any other, so the best spread is known from the cached extremes; most
	 * groups are rejected here without looking at their members.
	 */
	{
		double		top = (e[1] > rx ? e[1] : rx) - (e[2] < rx ? e[2] : rx);
		double		bottom = (e[0] > rx ? e[0] : rx) - (e[3] < rx ? e[3] : rx);

		bspread = top < bottom ? top : bottom;
	}
	if (!(bspread < s->q[g]) || bspread > best->spread)
		return;

	/* which member leaves: among those giving bspread, the newest */
	for (int j = 0; j < s->k; j++)
	{
		double		r = rating(s, mem[j]);
		double		hi = r == e[0] ? e[1] : e[0];
		double		lo = r == e[2] ? e[3] : e[2];

		if (rx > hi)
			hi = rx;
		if (rx < lo)
			lo = rx;
		if (hi - lo == bspread && mem[j] > bdrop)
			bdrop = mem[j];
	}
	o.kind = DW_IMPROVE;
	o.spread = bspread;
	o.nleft = o.nright = 0;
	o.group = g;
	o.drop = bdrop;
	if (option_better(s, x, &o, best))
		*best = o;
}

/*
 * Apply candidate x's best option: a new group, or x in place of the
 * member it drops.  Returns the ticket displaced from a group, or -1.
 */
static int
apply_option(DWState *s, int x, const DWOption *o)
{
	int			k = s->k;

	if (o->kind == DW_NEW)
	{
		int			g = s->ngroups++;
		int		   *mem = s->gmem + (size_t) g * k;
		int			m = 0;

		mem[m++] = x;
		for (int i = 0; i < o->nleft; i++)
			mem[m++] = s->lu[i];
		for (int i = 0; i < o->nright; i++)
			mem[m++] = s->ru[i];
		for (int i = 0; i < k; i++)
			s->grp[mem[i]] = g;
		s->nung -= k;
		group_reform(s, g, o->spread);
		return -1;
	}
	if (o->kind == DW_IMPROVE)
	{
		int			g = o->group;
		int		   *mem = s->gmem + (size_t) g * k;

		for (int i = 0; i < k; i++)
			if (mem[i] == o->drop)
				mem[i] = x;
		s->grp[x] = g;
		s->grp[o->drop] = -1;
		group_reform(s, g, o->spread);
		return o->drop;
	}
	return -1;
}

/*
 * Process one ungrouped candidate x: find its best option by scanning
 * outward in rating order, stopping on each side once the distance from x
 * exceeds what could still win, and apply it.  Returns the ticket it
 * displaced from a group, or -1.
 */
static int
process_candidate(DWState *s, int x)
{
	DWOption	best;
	int			k = s->k;
	int			nl = 0;
	int			nr = 0;
	int			l = s->pos[x] - 1;
	int			r = s->pos[x] + 1;
	double		rx = rating(s, x);

	best.kind = DW_NONE;
	best.spread = INFINITY;
	s->curstamp++;

	for (;;)
	{
		double		limit = best.spread;
		int			windows;
		double		dl;
		double		dr;
		int			okl;
		int			okr;
		int			y;
		int			left;

		/*
		 * Windows are still possible while enough tickets are ungrouped and
		 * a side can supply more.  Otherwise only improvements remain, and
		 * x can improve a group only if its nearest member is no farther
		 * than the group's largest gap between neighbouring ratings (inside
		 * the group's range that bounds the distance to the nearest member;
		 * outside it, the outer gap must exceed the distance for the spread
		 * to shrink).  The slack covers rounding.
		 */
		windows = s->nung - 1 >= k - 1 &&
			((nl < k - 1 && l >= 0) || (nr < k - 1 && r < s->n));
		if (!windows && s->maxgap + 1e-12 < limit)
			limit = s->maxgap + 1e-12;

		dl = l >= 0 ? rx - s->rr[l] : INFINITY;
		dr = r < s->n ? s->rr[r] - rx : INFINITY;
		okl = l >= 0 && dl <= limit;
		okr = r < s->n && dr <= limit;
		if (!okl && !okr)
			break;
		left = okl && (!okr || dl <= dr);
		y = left ? s->byr[l--] : s->byr[r++];

		if (s->grp[y] < 0)
		{
			if (left && nl < k - 1)
			{
				s->lu[nl++] = y;
				if (nr >= k - 1 - nl)
					eval_window(s, x, nl, k - 1 - nl, &best);
			}
			else if (!left && nr < k - 1)
			{
				s->ru[nr++] = y;
				if (nl >= k - 1 - nr)
					eval_window(s, x, k - 1 - nr, nr, &best);
			}
		}
		else if (s->stamp[s->grp[y]] != s->curstamp)
		{
			s->stamp[s->grp[y]] = s->curstamp;
			eval_group(s, x, s->grp[y], &best);
		}
	}

	return apply_option(s, x, &best);
}

/*
 * Process candidate x when fewer than k tickets are ungrouped, so that no
 * new group can form (and none will in this step: an improvement swaps x
 * for the member it drops): the best improvement over every group.  It
 * is the one process_candidate's scan finds, as option_better orders
 * improvements strictly and the scan passes over only groups x cannot
 * improve or that give a larger spread; here without the rating order.
 */
static int
improve_only(DWState *s, int x)
{
	DWOption	best;

	best.kind = DW_NONE;
	best.spread = INFINITY;
	for (int g = 0; g < s->ngroups; g++)
		eval_group(s, x, g, &best);
	return apply_option(s, x, &best);
}

/* The scratch of one step besides DWState's arrays, in the same block. */
typedef struct DWScratch
{
	char	   *block;			/* the one allocation of the step */
	DWKey	   *keys;			/* groups sorted for matching or writing back */
	DWRated    *rated;			/* the rating order, and its merge buffer */
	double	   *glast;			/* group -> its last rating seen (gaps) */
	int		   *taken;			/* tickets of the matches being emitted */
	int		   *oldcount;		/* pool group -> members (counts, then -1 emitted) */
	int		   *oldmap;			/* pool group -> rank or working group, or -1 */
} DWScratch;

/*
 * Allocate every array of one step in one block (a step runs for every
 * arrival): s's arrays for maxg groups and w's for the pool's nold groups.
 */
static MMStatus
dw_alloc(DWState *s, DWScratch *w, int maxg, int nold)
{
	int			n = s->n;
	int			k = s->k;
	size_t		total = 0;
	size_t		o_keys = dw_reserve(&total, sizeof(DWKey) * (size_t) n);
	size_t		o_rated = dw_reserve(&total, sizeof(DWRated) * 2 * (size_t) n);
	size_t		o_formed = dw_reserve(&total, sizeof(double) * ((size_t) maxg + 1));
	size_t		o_finalize = dw_reserve(&total, sizeof(double) * ((size_t) maxg + 1));
	size_t		o_q = dw_reserve(&total, sizeof(double) * ((size_t) maxg + 1));
	size_t		o_gext = dw_reserve(&total, sizeof(double) * 4 * ((size_t) maxg + 1));
	size_t		o_glast = dw_reserve(&total, sizeof(double) * ((size_t) maxg + 1));
	size_t		o_rr = dw_reserve(&total, sizeof(double) * (size_t) n);
	size_t		o_byr = dw_reserve(&total, sizeof(int) * (size_t) n);
	size_t		o_pos = dw_reserve(&total, sizeof(int) * (size_t) n);
	size_t		o_grp = dw_reserve(&total, sizeof(int) * (size_t) n);
	size_t		o_taken = dw_reserve(&total, sizeof(int) * (size_t) n);
	size_t		o_gmem = dw_reserve(&total, sizeof(int) * ((size_t) maxg * k + 1));
	size_t		o_gmin = dw_reserve(&total, sizeof(int) * ((size_t) maxg + 1));
	size_t		o_oldmap = dw_reserve(&total, sizeof(int) * ((size_t) nold + 1));
	size_t		o_lists = dw_reserve(&total, sizeof(int) * 4 * (size_t) k);
	size_t		zero_from = total;	/* what follows starts zeroed */
	size_t		o_stamp = dw_reserve(&total, sizeof(int) * ((size_t) maxg + 1));
	size_t		o_oldcount = dw_reserve(&total, sizeof(int) * ((size_t) nold + 1));
	size_t		o_visits = dw_reserve(&total, (size_t) n + 1);
	char	   *block = mm_malloc(total);

	if (block == NULL)
		return MM_ERR_NOMEM;
	memset(block + zero_from, 0, total - zero_from);
	w->block = block;
	w->keys = (DWKey *) (block + o_keys);
	w->rated = (DWRated *) (block + o_rated);
	s->formed = (double *) (block + o_formed);
	s->finalize = (double *) (block + o_finalize);
	s->q = (double *) (block + o_q);
	s->gext = (double *) (block + o_gext);
	w->glast = (double *) (block + o_glast);
	s->rr = (double *) (block + o_rr);
	s->byr = (int *) (block + o_byr);
	s->pos = (int *) (block + o_pos);
	s->grp = (int *) (block + o_grp);
	w->taken = (int *) (block + o_taken);
	s->gmem = (int *) (block + o_gmem);
	s->gmin = (int *) (block + o_gmin);
	w->oldmap = (int *) (block + o_oldmap);
	s->lu = (int *) (block + o_lists);
	s->ru = s->lu + k;
	s->wa = s->ru + k;
	s->wb = s->wa + k;
	s->stamp = (int *) (block + o_stamp);
	w->oldcount = (int *) (block + o_oldcount);
	s->visits = (unsigned char *) (block + o_visits);
	return MM_OK;
}

/*
 * (0) A loaded group that was already due becomes a match first, as it
 * would have at its finalize_at: no later candidate may change it.  Counts
 * every pool group's members into w->oldcount and marks the emitted ones
 * -1.  A group that does not hold exactly k tickets (say one was
 * cancelled) is left to load_groups, which dissolves it.
 */
static void
match_due_loaded(const DWState *s, DWScratch *w, const MMPool *pool,
				 MMResult *result)
{
	int			n = pool->ntickets;
	int			k = s->k;
	int			nold = pool->ngroups;
	int			nkeys = 0;
	DWKey	   *keys = w->keys;
	int		   *oldcount = w->oldcount;
	int		   *oldmap = w->oldmap;

	for (int i = 0; i < n; i++)
		if (pool->tickets[i].group >= 0)
			oldcount[pool->tickets[i].group]++;
	for (int g = 0; g < nold; g++)
	{
		oldmap[g] = -1;
		if (oldcount[g] == k && is_due(pool->groups[g].finalize_at, s->now))
		{
			keys[nkeys].key1 = pool->groups[g].finalize_at;
			keys[nkeys].key2 = pool->groups[g].formed_at;
			keys[nkeys].tie = n;
			keys[nkeys].idx = g;
			oldmap[g] = nkeys++;
		}
	}
	for (int i = 0; i < n; i++)
	{
		int			og = pool->tickets[i].group;

		if (og >= 0 && oldmap[og] >= 0 && i < keys[oldmap[og]].tie)
			keys[oldmap[og]].tie = i;
	}
	sort_keys(keys, nkeys);
	for (int j = 0; j < nkeys; j++)
	{
		oldmap[keys[j].idx] = j;	/* rank in finalisation order */
		oldcount[keys[j].idx] = 0;	/* members placed */
	}
	for (int i = 0; i < n; i++)
	{
		int			og = pool->tickets[i].group;

		if (og >= 0 && oldmap[og] >= 0)
			w->taken[(size_t) oldmap[og] * k + oldcount[og]++] = i;
	}
	for (int j = 0; j < nkeys; j++)
	{
		mm_add_match(result, w->taken + (size_t) j * k, k, k);
		oldcount[keys[j].idx] = -1; /* emitted */
	}
}

/*
 * Load the pool's other groups of exactly k as working groups; the members
 * of smaller ones are ungrouped again, those matched in (0) leave the step
 * (group -2).
 */
static void
load_groups(DWState *s, DWScratch *w, const MMPool *pool)
{
	int			n = pool->ntickets;
	int			k = s->k;
	int		   *oldcount = w->oldcount;
	int		   *oldmap = w->oldmap;

	for (int g = 0; g < pool->ngroups; g++)
	{
		oldmap[g] = -1;
		if (oldcount[g] == k)
		{
			oldmap[g] = s->ngroups;
			s->formed[s->ngroups] = pool->groups[g].formed_at;
			s->finalize[s->ngroups] = pool->groups[g].finalize_at;
			s->gmin[s->ngroups] = n;
			oldcount[g] = 0;	/* now counts members placed */
			s->ngroups++;
		}
	}
	for (int i = 0; i < n; i++)
	{
		int			og = pool->tickets[i].group;
		int			g = og >= 0 ? oldmap[og] : -1;

		if (og >= 0 && oldcount[og] == -1)
		{
			s->grp[i] = -2;		/* matched in (0) */
			continue;
		}
		s->grp[i] = g;
		if (g < 0)
		{
			s->nung++;
			continue;
		}
		s->gmem[(size_t) g * k + oldcount[og]++] = i;
		if (i < s->gmin[g])
			s->gmin[g] = i;
	}

	/*
	 * q from the members' ratings, as the step that formed the group
	 * computed it: the same value, unless the ratings moved since (a
	 * queue's rating range altered), when the stored one would let a
	 * candidate "improve" a group by a spread wider than its own
	 */
	for (int g = 0; g < s->ngroups; g++)
	{
		const int  *mem = s->gmem + (size_t) g * k;
		double		lo = rating(s, mem[0]);
		double		hi = lo;

		for (int j = 1; j < k; j++)
		{
			lo = fmin(lo, rating(s, mem[j]));
			hi = fmax(hi, rating(s, mem[j]));
		}
		s->q[g] = hi - lo;
	}
}

/*
 * The rating order of the tickets still in the step (ties by arrival),
 * which sets s->n to their number, and the loaded groups' extremes and
 * largest gaps.
 */
static void
order_by_rating(DWState *s, DWScratch *w, const MMPool *pool)
{
	int			n = pool->ntickets;
	DWRated    *rated = w->rated;

	s->n = 0;
	for (int i = 0; i < n; i++)
	{
		if (s->grp[i] == -2)
			continue;
		rated[s->n].rating = pool->tickets[i].rating;
		rated[s->n].idx = i;
		s->n++;
	}
	sort_rated(rated, rated + s->n, s->n);
	for (int p = 0; p < s->n; p++)
	{
		s->byr[p] = rated[p].idx;
		s->rr[p] = rated[p].rating;
		s->pos[rated[p].idx] = p;
	}

	for (int g = 0; g < s->ngroups; g++)
	{
		group_extremes(s, g);
		w->glast[g] = -1.0;
	}
	for (int p = 0; p < s->n; p++)
	{
		int			g = s->grp[s->byr[p]];

		if (g < 0)
			continue;
		if (w->glast[g] >= 0.0 && s->rr[p] - w->glast[g] > s->maxgap)
			s->maxgap = s->rr[p] - w->glast[g];
		w->glast[g] = s->rr[p];
	}
}

/* (2) Due groups become matches, by finalize_at, then age. */
static void
match_due_groups(DWState *s, DWScratch *w, MMResult *result)
{
	int			k = s->k;
	int			nkeys = 0;
	DWKey	   *keys = w->keys;

	for (int g = 0; g < s->ngroups; g++)
	{
		if (is_due(s->finalize[g], s->now))
		{
			keys[nkeys].key1 = s->finalize[g];
			keys[nkeys].key2 = s->formed[g];
			keys[nkeys].tie = s->gmin[g];
			keys[nkeys].idx = g;
			nkeys++;
		}
	}
	sort_keys(keys, nkeys);
	for (int j = 0; j < nkeys; j++)
	{
		int			g = keys[j].idx;

		mm_add_match(result, s->gmem + (size_t) g * k, k, k);
		for (int i = 0; i < k; i++)
			s->grp[s->gmem[(size_t) g * k + i]] = -2;	/* gone */
	}
}

/*
 * (3) Timed-out ungrouped tickets, oldest first, in chunks of k: a full
 * chunk plays as is; the last, partial one plays with bots or expires.
 */
static void
settle_timeouts(DWState *s, DWScratch *w, const MMConfig *cfg,
				const MMPool *pool, MMResult *result)
{
	int			n = pool->ntickets;
	int			k = s->k;
	int		   *taken = w->taken;
	int			ntaken = 0;

	for (int i = 0; i < n; i++)
		if (s->grp[i] == -1 && is_due(pool->tickets[i].arrival + cfg->max_wait, s->now))
			taken[ntaken++] = i;
	for (int c = 0; c < ntaken; c += k)
	{
		int			m = ntaken - c < k ? ntaken - c : k;

		if (m == k || cfg->on_timeout == MM_TIMEOUT_BOTS)
			mm_add_match(result, taken + c, m, k);
		else
			for (int i = 0; i < m; i++)
				result->expired[result->nexpired++] = taken[c + i];
		for (int i = 0; i < m; i++)
			s->grp[taken[c + i]] = -2;
	}
}

/* Write the surviving groups back to the pool, oldest first. */
static void
write_back_groups(DWState *s, DWScratch *w, MMPool *pool)
{
	int			n = pool->ntickets;
	int			nsurv = 0;
	DWKey	   *keys = w->keys;

	for (int g = 0; g < s->ngroups; g++)
	{
		if (!is_due(s->finalize[g], s->now))
		{
			keys[nsurv].key1 = s->formed[g];
			keys[nsurv].key2 = 0.0;
			keys[nsurv].tie = s->gmin[g];
			keys[nsurv].idx = g;
			nsurv++;
		}
	}
	sort_keys(keys, nsurv);
	for (int j = 0; j < nsurv; j++)
	{
		int			g = keys[j].idx;

		pool->groups[j].formed_at = s->formed[g];
		pool->groups[j].finalize_at = s->finalize[g];
		pool->groups[j].q = s->q[g];
		s->stamp[g] = j;		/* reused: new index */
	}
	for (int i = 0; i < n; i++)
	{
		int			g = s->grp[i];

		pool->tickets[i].group =
			(g >= 0 && !is_due(s->finalize[g], s->now)) ? s->stamp[g] : -1;
	}
	pool->ngroups = nsurv;
}

bool		mm_dw_always_sort = false;

/*
 * One difference_wait step: (0) groups already due become matches, (1)
 * candidates, (2) groups due now become matches, (3) timed-out ungrouped
 * tickets, then the surviving groups are written back to the pool.  Only
 * decides membership; mm_step finishes the matches.
 */
MMStatus
mm_difference_wait_step(const MMConfig *cfg, MMPool *pool, double prev,
						double now, MMResult *result)
{
	DWState		s;
	DWScratch	w;
	int			n = pool->ntickets;
	int			k = mm_config_k(cfg);
	int			maxg = n / k;
	int			nold = pool->ngroups;
	int			linear = 0;		/* candidates weighed without the order */

	(void) prev;
	if (nold < 0 || nold > pool->ngroups_cap || pool->ngroups_cap < maxg ||
		(maxg > 0 && pool->groups == NULL) || (nold > 0 && pool->groups == NULL))
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < n; i++)
		if (pool->tickets[i].group < -1 || pool->tickets[i].group >= nold)
			return MM_ERR_ARGUMENT;
	/* the order of groups and of their finalisation needs their instants */
	for (int g = 0; g < nold; g++)
		if (isnan(pool->groups[g].formed_at) || isnan(pool->groups[g].finalize_at))
			return MM_ERR_ARGUMENT;

	s.t = pool->tickets;
	s.n = n;
	s.k = k;
	s.now = now;
	s.max_wait = cfg->max_wait;
	s.wait_factor = cfg->difference_wait.wait_factor;
	s.nung = 0;
	s.ngroups = 0;
	s.curstamp = 0;
	s.maxgap = 0.0;
	if (dw_alloc(&s, &w, maxg, nold) != MM_OK)
		return MM_ERR_NOMEM;

	match_due_loaded(&s, &w, pool, result);
	load_groups(&s, &w, pool);

	/*
	 * Only new groups need the rating order: with fewer than k tickets
	 * ungrouped a candidate can only improve a group (improve_only), and
	 * with none (a burst's groups, each finalised at a step of its own)
	 * the step only finalises groups, without sorting the pool either.
	 */
	s.sorted = s.nung >= k || mm_dw_always_sort;
	if (s.sorted)
		order_by_rating(&s, &w, pool);
	else if (s.nung > 0)
		for (int g = 0; g < s.ngroups; g++)
			group_extremes(&s, g);

	/*
	 * (1) candidates, newest first; a displaced ticket goes next.  The
	 * newest tickets are the ones the pool has not seen yet: each must get
	 * its own choice among every group it could improve and every window
	 * before an older ungrouped ticket takes it as its nearest partner.
	 */
	for (int i = n - 1; i >= 0; i--)
	{
		int			y = i;

		if (mm_interrupted())
		{
			mm_free(w.block);
			return MM_ERR_INTERRUPTED;
		}
		while (y >= 0 && s.grp[y] == -1 && s.visits[y] < DW_MAX_VISITS)
		{
			if (mm_interrupted())
			{
				mm_free(w.block);
				return MM_ERR_INTERRUPTED;
			}
			/* a long chain of displacements: the order is cheaper than weighing every group */
			if (!s.sorted && ++linear > DW_LINEAR_VISITS)
			{
				order_by_rating(&s, &w, pool);
				s.sorted = true;
			}
			s.visits[y]++;
			y = s.sorted ? process_candidate(&s, y) : improve_only(&s, y);
		}
	}

	match_due_groups(&s, &w, result);
	settle_timeouts(&s, &w, cfg, pool, result);
	write_back_groups(&s, &w, pool);

	mm_free(w.block);
	return MM_OK;
}

/*
 * The earliest ungrouped ticket's timeout or provisional group's
 * finalisation (grouped tickets finalise before they could time out).
 */
double
mm_difference_wait_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		d = INFINITY;

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
