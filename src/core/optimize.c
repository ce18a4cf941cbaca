/*
 * optimize.c
 *		The optimize algorithm, after the Awesomenauts matchmaking write-up:
 *		the waiting players are matched all at once in rounds, every match
 *		is scored as a weighted average of several factors, and a search
 *		looks for the match-up of best total score.
 *
 * A round works on units: a premade party (the waiting tickets sharing a
 * party number) or a solo ticket; a unit is never split across matches or
 * teams.  The search
 *
 *	1. starts from the units sorted by mean (capped) rating, placed
 *	   first-fit into matches of exactly k players whose unit sizes pack
 *	   exactly into the teams;
 *	2. splits every match into teams by brute force (k <= 12), keeping the
 *	   split of best match score;
 *	3. climbs: it evaluates every swap of two units of equal size between
 *	   two matches, or between a match and the units left unmatched,
 *	   re-splitting the matches involved, and applies the swap that raises
 *	   the total score most, until none does;
 *	4. repeats 1-3 restarts more times from seeded shuffles of the units,
 *	   while the wall-clock budget lasts, and keeps the best match-up:
 *	   the most matches, then the highest round score.
 *
 * The budget (budget_ms) bounds the whole search, the first climb
 * included: a climb stops where it is when the budget is spent, and the
 * best match-up found so far is kept.  A round takes at most round_max
 * tickets, the oldest units first; the others wait for the next round.
 *
 * The climb keeps, for every pair of matches at most SWAP_WINDOW apart in
 * the start's order (every pair when the round has at most SWAP_WINDOW + 1
 * matches), and every match with the unmatched units, its best swap; a
 * swap only changes two matches, so after it only the pairs that involve
 * them are evaluated again.  Memory is O(round_max * SWAP_WINDOW), never
 * quadratic in the pool.
 *
 * Scores depend only on the tickets, the ping table and the met pairs, and
 * the shuffles on cfg->optimize.seed and the round's oldest ticket, so a
 * round is reproducible as long as the budget does not cut it short.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KMAX		MM_OPTIMIZE_MAX_K

/* A swap must raise the total by more than this, so the climb cannot cycle on rounding. */
#define GAIN_EPS	1e-12

/* ----------------------------------------------------------------
 * Scoring one match
 * ----------------------------------------------------------------
 */

/*
 * One match seen on its own: its players (at most KMAX), the unit each
 * belongs to and the pair data, gathered once so that every team split
 * tried is scored from these arrays alone.
 */
typedef struct Local
{
	int			n;
	int			unit_of[KMAX];	/* local unit number of each player */
	double		c[KMAX];		/* capped, stretched ratings */
	double		ping[KMAX][KMAX];	/* ms, NAN when unknown */
	signed char rel[KMAX][KMAX];	/* -1: did not meet, 0: opponents, 1: teammates */
	int			solo;			/* every unit has one player (premades score 1) */
	double		spread;			/* the spread factor (split-independent) */
	int			any_ping;		/* some pair of members has a known ping */
	double		hosts;			/* the hosts factor (split-independent) */
} Local;

/* A rating capped to [skill_lo, skill_hi] and stretched to [0, 1]. */
static double
capped(const MMConfig *cfg, double r)
{
	if (r < cfg->optimize.skill_lo)
		r = cfg->optimize.skill_lo;
	if (r > cfg->optimize.skill_hi)
		r = cfg->optimize.skill_hi;
	return (r - cfg->optimize.skill_lo) / (cfg->optimize.skill_hi - cfg->optimize.skill_lo);
}

/* The least sum of two sorted lists' pings over their common regions; NAN when none. */
static double
merge_ping(const int32_t *ra, const float *ma, int na,
		   const int32_t *rb, const float *mb, int nb)
{
	int			a = 0;
	int			b = 0;
	double		best = NAN;

	while (a < na && b < nb)
	{
		if (ra[a] < rb[b])
			a++;
		else if (ra[a] > rb[b])
			b++;
		else
		{
			double		p = (double) ma[a] + (double) mb[b];

			if (isnan(best) || p < best)
				best = p;
			a++;
			b++;
		}
	}
	return best;
}

/* The ping between two tickets over their best common region; NAN when none is known to both. */
static double
pair_ping(const MMPool *pool, const MMTicket *a, const MMTicket *b)
{
	const float *pa;
	const float *pb;
	double		best = NAN;

	if (pool->ping_start != NULL)
	{
		int			sa;
		int			sb;

		if (a->attr < 0 || b->attr < 0)
			return NAN;
		sa = pool->ping_start[a->attr];
		sb = pool->ping_start[b->attr];
		return merge_ping(pool->ping_region + sa, pool->ping_ms + sa,
						  pool->ping_start[a->attr + 1] - sa,
						  pool->ping_region + sb, pool->ping_ms + sb,
						  pool->ping_start[b->attr + 1] - sb);
	}
	if (pool->ping == NULL || pool->nregions <= 0 || a->attr < 0 || b->attr < 0)
		return NAN;
	pa = pool->ping + (size_t) a->attr * (size_t) pool->nregions;
	pb = pool->ping + (size_t) b->attr * (size_t) pool->nregions;
	for (int r = 0; r < pool->nregions; r++)
	{
		double		p;

		if (isnan(pa[r]) || isnan(pb[r]))
			continue;
		p = (double) pa[r] + (double) pb[r];
		if (isnan(best) || p < best)
			best = p;
	}
	return best;
}

/*
 * A round's pings as lists: ticket i's known pings are the regions
 * region[start[i] .. start[i + 1]) (ascending) with pings ms[...], so the
 * ping of a pair costs the two lists' lengths, not every region.
 */
typedef struct PingLists
{
	int		   *start;			/* n + 1 */
	int32_t    *region;
	float	   *ms;
} PingLists;

/* pair_ping over the lists of tickets i and j. */
static double
list_ping(const PingLists *pl, int i, int j)
{
	int			a = pl->start[i];
	int			b = pl->start[j];

	return merge_ping(pl->region + a, pl->ms + a, pl->start[i + 1] - a,
					  pl->region + b, pl->ms + b, pl->start[j + 1] - b);
}

/* How two tickets met in their previous match: -1 not, 0 opponents, 1 teammates. */
static int
relation(const MMPool *pool, int64_t a, int64_t b)
{
	const MMMetPair *hit = mm_met_pair_find(pool, a, b);

	if (hit == NULL)
		return -1;
	return hit->relation == 1 ? 1 : 0;
}
/*
 * The pairs' pings and relations of a round, computed once when the pool
 * is small enough for an n x n table (a climb looks them up millions of
 * times); NULL to compute them on the way.
 */
typedef struct PairTable
{
	int			n;
	float	   *ping;			/* n * n */
	signed char *rel;			/* n * n */
} PairTable;

/* Largest pool for which a round keeps a PairTable (5 bytes per pair). */
#define PAIR_TABLE_MAX 2048

/*
 * Gather the players idx[0 .. n) (with local unit numbers units[]) into L;
 * the pings from pt, else from pl, else from the pool's table.
 */
static void
local_build(const MMConfig *cfg, const MMPool *pool, const PairTable *pt,
			const PingLists *pl, const int *idx, const int *units, int n,
			Local *L)
{
	double		dsum = 0;
	int			hosts = 0;

	L->n = n;
	L->any_ping = 0;
	L->solo = 1;
	for (int i = 0; i < n; i++)
	{
		L->unit_of[i] = units[i];
		L->c[i] = capped(cfg, pool->tickets[idx[i]].rating);
		L->ping[i][i] = 0;
		L->rel[i][i] = -1;
		if (i > 0 && units[i] == units[i - 1])
			L->solo = 0;
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
		{
			double		p;
			int			r;

			if (pt != NULL)
			{
				size_t		x = (size_t) idx[i] * (size_t) pt->n + (size_t) idx[j];

				p = pt->ping[x];
				r = pt->rel[x];
			}
			else
			{
				const MMTicket *a = &pool->tickets[idx[i]];
				const MMTicket *b = &pool->tickets[idx[j]];

				/* in float, as the table keeps it: the same scores either way */
				if (pl != NULL)
					p = (float) list_ping(pl, idx[i], idx[j]);
				else
					p = (float) pair_ping(pool, a, b);
				r = relation(pool, a->id, b->id);
			}

			L->ping[i][j] = L->ping[j][i] = p;
			if (!isnan(p))
				L->any_ping = 1;
			L->rel[i][j] = L->rel[j][i] = (signed char) r;
			dsum += fabs(L->c[i] - L->c[j]);
		}
	L->spread = n >= 2 ? 1.0 - dsum / (n * (n - 1) / 2) : 1.0;
	for (int i = 0; i < n; i++)
	{
		int			ok = 1;

		for (int j = 0; j < n && ok; j++)
			if (j != i && !(L->ping[i][j] <= cfg->optimize.host_ping))
				ok = 0;			/* NAN (unknown) fails the test too */
		hosts += ok;
	}
	L->hosts = (hosts < 2 ? hosts : 2) / 2.0;
}

/* Order ints descending. */
static void
sort_desc(int *v, int n)
{
	for (int i = 1; i < n; i++)
	{
		int			x = v[i];
		int			p = i;

		for (; p > 0 && v[p - 1] < x; p--)
			v[p] = v[p - 1];
		v[p] = x;
	}
}

/*
 * The premades factor from each team's party sizes (sizes[t][0 .. nsz[t])):
 * sorted in descending order and padded with zeros to team_size, compared
 * team against team (doc/algorithms.md).
 */
static double
premades_factor(int sizes[KMAX][KMAX], const int *nsz, int T, int ts)
{
	double		acc = 0;
	int			npairs = 0;

	for (int t = 0; t < T; t++)
	{
		sort_desc(sizes[t], nsz[t]);
		for (int m = nsz[t]; m < ts; m++)
			sizes[t][m] = 0;
	}
	for (int a = 0; a < T; a++)
		for (int b = a + 1; b < T; b++)
		{
			int			l1 = 0;
			double		v;

			for (int x = 0; x < ts; x++)
				l1 += abs(sizes[a][x] - sizes[b][x]);
			v = 1.0 - (double) l1 / (2.0 * (ts - 1));
			acc += v < 0 ? 0 : v;
			npairs++;
		}
	return npairs > 0 ? acc / npairs : 1.0;
}

/*
 * The weighted average of the factors that apply, from the teams' rating
 * sums and player counts (balance: the range of the team means), the
 * premades factor, the sums of the ping terms of pcnt known opponent pairs
 * and of the variation terms; 0 when the weights of the factors that apply
 * sum to 0.
 */
static double
weighted_score(const MMConfig *cfg, const Local *L, const double *tsum,
			   const int *tcnt, double prem, double psum, int pcnt, double vsum)
{
	int			n = L->n;
	double		hi = -INFINITY;
	double		lo = INFINITY;
	double		wsum = cfg->optimize.weights.balance + cfg->optimize.weights.spread +
		cfg->optimize.weights.premades;
	double		ssum;

	for (int t = 0; t < cfg->teams; t++)
		if (tcnt[t] > 0)
		{
			double		m = tsum[t] / tcnt[t];

			hi = m > hi ? m : hi;
			lo = m < lo ? m : lo;
		}
	ssum = cfg->optimize.weights.balance * (hi >= lo ? 1.0 - (hi - lo) : 1.0) +
		cfg->optimize.weights.spread * L->spread + cfg->optimize.weights.premades * prem;

	if (pcnt > 0)
	{
		wsum += cfg->optimize.weights.ping;
		ssum += cfg->optimize.weights.ping * psum / pcnt;
	}
	if (n >= 2)
	{
		wsum += cfg->optimize.weights.variation;
		ssum += cfg->optimize.weights.variation * (1.0 - vsum / (n * (n - 1) / 2));
	}
	if (L->any_ping)
	{
		wsum += cfg->optimize.weights.hosts;
		ssum += cfg->optimize.weights.hosts * L->hosts;
	}
	return wsum > 0 ? ssum / wsum : 0.0;
}

/*
 * The score of L with player i on team team[i] (0-based): the weighted
 * average of the factors that apply (doc/algorithms.md); 0 when the
 * weights of those factors sum to 0.
 */
static double
local_score(const MMConfig *cfg, const Local *L, const int *team)
{
	int			T = cfg->teams;
	int			ts = cfg->team_size;
	int			n = L->n;
	double		tsum[KMAX];
	int			tcnt[KMAX];
	double		prem = 1.0;
	double		psum = 0;
	int			pcnt = 0;
	double		vsum = 0;

	/* balance: the teams' rating sums and sizes */
	for (int t = 0; t < T; t++)
	{
		tsum[t] = 0;
		tcnt[t] = 0;
	}
	for (int i = 0; i < n; i++)
	{
		tsum[team[i]] += L->c[i];
		tcnt[team[i]]++;
	}

	/* premades: the party sizes of each team */
	if (cfg->optimize.weights.premades > 0 && ts > 1 && !L->solo)
	{
		int			sizes[KMAX][KMAX];
		int			nsz[KMAX];

		/* the players of a unit are listed together: count runs per team */
		for (int t = 0; t < T; t++)
			nsz[t] = 0;
		for (int i = 0; i < n; i++)
		{
			int			t = team[i];
			int			cont = 0;

			for (int j = i - 1; j >= 0 && L->unit_of[j] == L->unit_of[i]; j--)
				if (team[j] == t)
				{
					cont = 1;
					break;
				}
			if (cont)
				continue;
			sizes[t][nsz[t]] = 1;
			for (int j = i + 1; j < n && L->unit_of[j] == L->unit_of[i]; j++)
				if (team[j] == t)
					sizes[t][nsz[t]]++;
			nsz[t]++;
		}
		prem = premades_factor(sizes, nsz, T, ts);
	}

	/* ping with opponents, and opponent variation: one pass over the pairs */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
		{
			int			same = team[i] == team[j];

			if (!same && !isnan(L->ping[i][j]))
			{
				double		s = 1.0 - L->ping[i][j] / cfg->optimize.ping_max;

				psum += s < 0 ? 0 : (s > 1 ? 1 : s);
				pcnt++;
			}
			if (L->rel[i][j] >= 0)
				vsum += (L->rel[i][j] == 1) == same ? 1.0 : 0.5;
		}
	return weighted_score(cfg, L, tsum, tcnt, prem, psum, pcnt, vsum);
}

/* optimize's own parameters, and the shape it needs (see mm_config_check). */
MMStatus
mm_optimize_check(const MMConfig *cfg)
{
	const MMOptimizeWeights *ow = &cfg->optimize.weights;
	const double w[6] = {ow->balance, ow->spread, ow->premades,
	ow->ping, ow->variation, ow->hosts};
	double		wsum = 0;

	for (int i = 0; i < 6; i++)
	{
		if (!(w[i] >= 0 && w[i] <= 1e6))
			return MM_ERR_ARGUMENT;
		wsum += w[i];
	}
	/* the split of a match is brute force, and a team must have opponents */
	if (!(wsum > 0) || cfg->teams < 2 ||
		cfg->teams * cfg->team_size > MM_OPTIMIZE_MAX_K ||
		!(cfg->optimize.skill_lo >= 0 && cfg->optimize.skill_lo < cfg->optimize.skill_hi &&
		  cfg->optimize.skill_hi <= 1) ||
		!(cfg->optimize.ping_max > 0 && cfg->optimize.ping_max <= 1e9) ||
		!(cfg->optimize.host_ping > 0 && cfg->optimize.host_ping <= 1e9) ||
		cfg->optimize.restarts < 0 ||
		cfg->optimize.round_max < mm_config_k(cfg) ||
		cfg->optimize.round_max > MM_OPTIMIZE_MAX_ROUND ||
		!(cfg->optimize.budget_ms > 0 && cfg->optimize.budget_ms <= 1e9) ||
		!(cfg->recheck >= 1e-3 && cfg->recheck <= 86400))
		return MM_ERR_ARGUMENT;
	return MM_OK;
}

/*
 * A whole configuration check for optimize's own entry points, which take
 * nothing but an optimize configuration: the shared fields and optimize's
 * (as mm_config_check, without the table of algorithms).
 */
static MMStatus
check_config(const MMConfig *cfg)
{
	if (mm_config_check_shared(cfg) != MM_OK ||
		cfg->algorithm != MM_ALGO_OPTIMIZE)
		return MM_ERR_ARGUMENT;
	return mm_optimize_check(cfg);
}

/* See mm_core.h. */
double
mm_optimize_match_score(const MMConfig *cfg, const MMPool *pool,
						const int *members, const int *teams, int n)
{
	Local		L;
	int			units[KMAX];
	int			team[KMAX];
	int			cnt[KMAX] = {0};

	if (check_config(cfg) != MM_OK ||
		pool == NULL || pool->tickets == NULL || members == NULL ||
		teams == NULL || n < 1 || n > KMAX)
		return NAN;
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t;

		if (members[i] < 0 || members[i] >= pool->ntickets ||
			teams[i] < 1 || teams[i] > cfg->teams ||
			++cnt[teams[i] - 1] > cfg->team_size)
			return NAN;
		t = &pool->tickets[members[i]];
		if (!(t->rating >= 0 && t->rating <= 1))
			return NAN;
		team[i] = teams[i] - 1;
		/* players of one party (or the same ticket twice) share a unit */
		units[i] = i;
		for (int j = 0; j < i; j++)
			if (members[j] == members[i] ||
				(t->party >= 0 && pool->tickets[members[j]].party == t->party))
			{
				units[i] = units[j];
				break;
			}
	}
	/* list each party's players together, as the scoring expects */
	{
		int			pm[KMAX];
		int			pu[KMAX];
		int			pt[KMAX];
		int			m = 0;

		for (int i = 0; i < n; i++)
			if (units[i] == i)
				for (int j = i; j < n; j++)
					if (units[j] == i)
					{
						pm[m] = members[j];
						pu[m] = units[j];
						pt[m] = team[j];
						m++;
					}
		local_build(cfg, pool, NULL, NULL, pm, pu, n, &L);
		return local_score(cfg, &L, pt);
	}
}

/* ----------------------------------------------------------------
 * Team split by brute force
 * ----------------------------------------------------------------
 */

/*
 * The search over the assignments of a match's units to teams.  The
 * split-dependent sums (ping over opponents, variation, team rating sums)
 * are kept up to date as units are placed, from unit-by-unit totals, so a
 * leaf costs O(teams) (plus the premades, with parties) instead of a pass
 * over all pairs; it adds the same terms as local_score.
 */
typedef struct Split
{
	const MMConfig *cfg;
	const Local *L;
	int			nunits;
	int			order[KMAX];	/* units, largest first */
	int			size[KMAX];		/* per unit */
	double		csum[KMAX];		/* per unit: sum of capped ratings */
	/* per pair of units: totals over their pairs of players */
	double		pscore[KMAX][KMAX];	/* ping factor terms of the known pairs */
	int			pcount[KMAX][KMAX];	/* known pings */
	double		vsame[KMAX][KMAX];	/* variation terms when on the same team */
	double		vdiff[KMAX][KMAX];	/* ... and when opponents */
	double		vbase;			/* variation terms inside units (same team always) */
	int			fill[KMAX];		/* per team */
	double		tsum[KMAX];		/* per team */
	int			team_of[KMAX];	/* per unit, during the search */
	int			best_team[KMAX];	/* per unit */
	double		best;
} Split;

/* The score of a complete assignment with the running sums given. */
static double
split_leaf(const Split *S, double psum, int pcnt, double vsum)
{
	const MMConfig *cfg = S->cfg;
	const Local *L = S->L;
	int			T = cfg->teams;
	int			ts = cfg->team_size;
	double		prem = 1.0;

	if (cfg->optimize.weights.premades > 0 && ts > 1 && !L->solo)
	{
		int			sizes[KMAX][KMAX];
		int			nsz[KMAX];

		for (int t = 0; t < T; t++)
			nsz[t] = 0;
		for (int u = 0; u < S->nunits; u++)
		{
			int			t = S->team_of[u];

			sizes[t][nsz[t]++] = S->size[u];
		}
		prem = premades_factor(sizes, nsz, T, ts);
	}
	return weighted_score(cfg, L, S->tsum, S->fill, prem, psum, pcnt, vsum);
}

static void
split_rec(Split *S, int d, int opened, double psum, int pcnt, double vsum)
{
	if (d == S->nunits)
	{
		double		s = split_leaf(S, psum, pcnt, vsum);

		if (s > S->best)
		{
			S->best = s;
			memcpy(S->best_team, S->team_of, sizeof(int) * (size_t) S->nunits);
		}
		return;
	}
	/* teams are interchangeable: a unit opens at most the first empty team */
	for (int t = 0; t < S->cfg->teams && t <= opened; t++)
	{
		int			u = S->order[d];
		double		ps = psum;
		int			pc = pcnt;
		double		vs = vsum;

		if (S->fill[t] + S->size[u] > S->cfg->team_size)
			continue;
		for (int e = 0; e < d; e++)
		{
			int			w = S->order[e];

			if (S->team_of[w] == t)
				vs += S->vsame[u][w];
			else
			{
				ps += S->pscore[u][w];
				pc += S->pcount[u][w];
				vs += S->vdiff[u][w];
			}
		}
		S->fill[t] += S->size[u];
		S->tsum[t] += S->csum[u];
		S->team_of[u] = t;
		split_rec(S, d + 1, t == opened ? opened + 1 : opened, ps, pc, vs);
		S->fill[t] -= S->size[u];
		S->tsum[t] -= S->csum[u];
	}
}

/*
 * The best split of L, whose players belong to nunits local units of the
 * given sizes: the score, and each unit's team in team_of (0-based).
 * -INFINITY when the units do not pack into the teams.
 */
static double
best_split(const MMConfig *cfg, const Local *L, int nunits, const int *size,
		   int *team_of)
{
	Split		S;
	int			n = L->n;

	S.cfg = cfg;
	S.L = L;
	S.nunits = nunits;
	S.best = -INFINITY;
	S.vbase = 0;
	for (int u = 0; u < nunits; u++)
	{
		int			p = u;

		S.size[u] = size[u];
		S.csum[u] = 0;
		for (int w = 0; w < nunits; w++)
		{
			S.pscore[u][w] = S.vsame[u][w] = S.vdiff[u][w] = 0;
			S.pcount[u][w] = 0;
		}
		/* stable: largest first, then local order */
		for (; p > 0 && size[S.order[p - 1]] < size[u]; p--)
			S.order[p] = S.order[p - 1];
		S.order[p] = u;
	}
	for (int i = 0; i < n; i++)
	{
		int			ui = L->unit_of[i];

		S.csum[ui] += L->c[i];
		for (int j = i + 1; j < n; j++)
		{
			int			uj = L->unit_of[j];
			double		vsame = 0;
			double		vdiff = 0;

			if (L->rel[i][j] >= 0)
			{
				vsame = L->rel[i][j] == 1 ? 1.0 : 0.5;
				vdiff = L->rel[i][j] == 1 ? 0.5 : 1.0;
			}
			if (ui == uj)
			{
				S.vbase += vsame;
				continue;
			}
			if (!isnan(L->ping[i][j]))
			{
				double		v = 1.0 - L->ping[i][j] / cfg->optimize.ping_max;

				v = v < 0 ? 0 : (v > 1 ? 1 : v);
				S.pscore[ui][uj] += v;
				S.pscore[uj][ui] += v;
				S.pcount[ui][uj]++;
				S.pcount[uj][ui]++;
			}
			S.vsame[ui][uj] += vsame;
			S.vsame[uj][ui] += vsame;
			S.vdiff[ui][uj] += vdiff;
			S.vdiff[uj][ui] += vdiff;
		}
	}
	for (int t = 0; t < cfg->teams; t++)
	{
		S.fill[t] = 0;
		S.tsum[t] = 0;
	}
	split_rec(&S, 0, 0, 0.0, 0, S.vbase);
	if (S.best > -INFINITY)
		memcpy(team_of, S.best_team, sizeof(int) * (size_t) nunits);
	return S.best;
}

/* Whether units of the n given sizes pack into teams of team_size (partly filled is fine). */
static int
packs_rec(const MMConfig *cfg, const int *sizes, int n, int *fill, int d, int opened)
{
	if (d == n)
		return 1;
	for (int t = 0; t < cfg->teams && t <= opened; t++)
	{
		if (fill[t] + sizes[d] > cfg->team_size)
			continue;
		fill[t] += sizes[d];
		if (packs_rec(cfg, sizes, n, fill, d + 1, t == opened ? opened + 1 : opened))
		{
			fill[t] -= sizes[d];
			return 1;
		}
		fill[t] -= sizes[d];
	}
	return 0;
}

static int
packs(const MMConfig *cfg, const int *sizes, int n)
{
	int			s[KMAX];
	int			fill[KMAX] = {0};

	memcpy(s, sizes, sizeof(int) * (size_t) n);
	sort_desc(s, n);
	return packs_rec(cfg, s, n, fill, 0, 0);
}

/* ----------------------------------------------------------------
 * The round's search
 * ----------------------------------------------------------------
 */

/* A unit: a party's waiting tickets or one solo ticket. */
typedef struct Unit
{
	int			first;			/* its tickets: Round.umem[first .. first + size) */
	int			size;
	double		key;			/* mean capped rating */
} Unit;

/* A match-up: matches of units, and the units left unmatched. */
typedef struct Layout
{
	int			nm;
	int		   *units;			/* nm * KMAX: the units of match m from m * KMAX */
	int		   *nunits;			/* per match */
	int		   *team;			/* nm * KMAX: each unit's team (0-based) */
	double	   *score;			/* per match */
	int		   *bench;			/* unmatched units */
	int			nbench;
} Layout;

/* A pair's (or a match and the bench's) best swap. */
typedef struct Swap
{
	double		gain;
	int			i;				/* slot in the first match */
	int			j;				/* slot in the second match, or bench entry */
} Swap;

typedef struct Round
{
	const MMConfig *cfg;
	const MMPool *pool;
	int			k;
	int			nunits;			/* placeable units (size <= team_size) */
	Unit	   *unit;
	int		   *umem;			/* tickets, unit by unit */
	int			maxm;			/* room for matches */
	Layout		cur;
	Layout		best;
	int			have_best;
	double		best_total;
	Swap	   *pair;			/* maxm * SWAP_WINDOW, see pair_slot */
	Swap	   *benchswap;		/* per match */
	int		   *order;			/* units in start order */
	/* first-fit scratch */
	int		   *open_units;		/* maxopen * KMAX */
	int		   *open_n;
	int		   *open_fill;
	int			climbs;
	int			max_swaps;
	struct timespec started;
	uint64_t	rng;
	PairTable	table;
	PairTable  *pt;				/* &table when it is kept, else NULL */
	PingLists	lists;
	PingLists  *pl;				/* &lists when the pool has pings, else NULL */
	int			limited;		/* the budget applies (every climb now) */
	int			stop;			/* STOP_* */
	unsigned int polls;
} Round;

/* Why a round's search stops early. */
#define STOP_NONE		0
#define STOP_BUDGET		1		/* budget_ms is spent: keep the best so far */
#define STOP_INTERRUPT	2		/* mm_interrupt: give up the round */

/*
 * Matches at most this far apart in the start's order are swap partners;
 * with at most SWAP_WINDOW + 1 matches every pair is.
 */
#define SWAP_WINDOW		32

/* The slot of the pair of matches a < b (b - a <= SWAP_WINDOW) in R->pair. */
static inline size_t
pair_slot(int a, int b)
{
	return (size_t) a * SWAP_WINDOW + (size_t) (b - a - 1);
}

static double elapsed_ms(const Round *R);

/*
 * Whether the search must stop: polled once per candidate evaluated; every
 * 64 polls it asks mm_interrupt, and checks the budget while it applies.
 */
static int
round_stopped(Round *R)
{
	if (R->stop == STOP_INTERRUPT)
		return 1;
	if (++R->polls % 64 == 0)
	{
		if (mm_interrupt != NULL && mm_interrupt())
			R->stop = STOP_INTERRUPT;
		else if (R->limited && R->stop == STOP_NONE &&
				 elapsed_ms(R) >= R->cfg->optimize.budget_ms)
			R->stop = STOP_BUDGET;
	}
	return R->stop == STOP_INTERRUPT || (R->limited && R->stop == STOP_BUDGET);
}

/* Milliseconds since the round started. */
static double
elapsed_ms(const Round *R)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - R->started.tv_sec) * 1e3 +
		(now.tv_nsec - R->started.tv_nsec) / 1e6;
}

/* splitmix64: the next 64 bits of the round's generator. */
static uint64_t
rng_next(uint64_t *s)
{
	uint64_t	z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/*
 * Score the match made of the given units (nu of them) at its best split:
 * returns the score and writes each unit's team.
 */
static double
score_units(const Round *R, const int *units, int nu, int *team_of)
{
	int			idx[KMAX] = {0};
	int			lu[KMAX] = {0};
	int			size[KMAX];
	int			n = 0;
	Local		L;

	for (int u = 0; u < nu; u++)
	{
		const Unit *U = &R->unit[units[u]];

		size[u] = U->size;
		for (int x = 0; x < U->size; x++)
		{
			idx[n] = R->umem[U->first + x];
			lu[n] = u;
			n++;
		}
	}
	local_build(R->cfg, R->pool, R->pt, R->pl, idx, lu, n, &L);
	return best_split(R->cfg, &L, nu, size, team_of);
}

/*
 * The best swap between matches a and b of the current layout (none when
 * the search must stop).
 */
static Swap
eval_pair(Round *R, int a, int b)
{
	const Layout *Y = &R->cur;
	int		   *ua = Y->units + (size_t) a * KMAX;
	int		   *ub = Y->units + (size_t) b * KMAX;
	int			na = Y->nunits[a];
	int			nb = Y->nunits[b];
	double		base = Y->score[a] + Y->score[b];
	Swap		best = {0, -1, -1};
	int			ta[KMAX];
	int			tb[KMAX];
	int			A[KMAX];
	int			B[KMAX];

	memcpy(A, ua, sizeof(int) * (size_t) na);
	memcpy(B, ub, sizeof(int) * (size_t) nb);
	for (int i = 0; i < na; i++)
		for (int j = 0; j < nb; j++)
		{
			double		g;

			if (R->unit[ua[i]].size != R->unit[ub[j]].size)
				continue;
			if (round_stopped(R))
				return (Swap) {0, -1, -1};
			A[i] = ub[j];
			B[j] = ua[i];
			g = score_units(R, A, na, ta) + score_units(R, B, nb, tb) - base;
			A[i] = ua[i];
			B[j] = ub[j];
			if (g > best.gain + GAIN_EPS)
			{
				best.gain = g;
				best.i = i;
				best.j = j;
			}
		}
	return best;
}

/* The best swap between match a and the unmatched units (none when the search must stop). */
static Swap
eval_bench(Round *R, int a)
{
	const Layout *Y = &R->cur;
	int		   *ua = Y->units + (size_t) a * KMAX;
	int			na = Y->nunits[a];
	Swap		best = {0, -1, -1};
	int			ta[KMAX];
	int			A[KMAX];

	memcpy(A, ua, sizeof(int) * (size_t) na);
	for (int i = 0; i < na; i++)
		for (int j = 0; j < Y->nbench; j++)
		{
			double		g;

			if (R->unit[ua[i]].size != R->unit[Y->bench[j]].size)
				continue;
			if (round_stopped(R))
				return (Swap) {0, -1, -1};
			A[i] = Y->bench[j];
			g = score_units(R, A, na, ta) - Y->score[a];
			A[i] = ua[i];
			if (g > best.gain + GAIN_EPS)
			{
				best.gain = g;
				best.i = i;
				best.j = j;
			}
		}
	return best;
}

/* Split match m of the current layout again and store its score. */
static void
rescore(Round *R, int m)
{
	Layout	   *Y = &R->cur;

	Y->score[m] = score_units(R, Y->units + (size_t) m * KMAX, Y->nunits[m],
							  Y->team + (size_t) m * KMAX);
}

/* The last swap partner of match a: SWAP_WINDOW on, or the last match. */
static inline int
last_partner(const Round *R, int a)
{
	int			nm = R->cur.nm;

	return a + SWAP_WINDOW < nm - 1 ? a + SWAP_WINDOW : nm - 1;
}

/* Evaluate again every pair of match m with its swap partners. */
static void
eval_partners(Round *R, int m)
{
	int			lo = m - SWAP_WINDOW < 0 ? 0 : m - SWAP_WINDOW;

	for (int x = lo; x < m; x++)
		R->pair[pair_slot(x, m)] = eval_pair(R, x, m);
	for (int x = m + 1; x <= last_partner(R, m); x++)
		R->pair[pair_slot(m, x)] = eval_pair(R, m, x);
}

/*
 * Hill climbing on the current layout: apply the best improving swap until
 * none improves, max_swaps swaps were applied, or the search must stop
 * (the budget spent, or an interrupt).
 */
static void
climb(Round *R)
{
	Layout	   *Y = &R->cur;
	int			nm = Y->nm;
	int			swaps = 0;

	if (R->max_swaps == 0)
		return;
	for (int a = 0; a < nm; a++)
	{
		for (int b = a + 1; b <= last_partner(R, a); b++)
			R->pair[pair_slot(a, b)] = eval_pair(R, a, b);
		R->benchswap[a] = eval_bench(R, a);
	}
	for (;;)
	{
		double		g = GAIN_EPS;
		int			ba = -1;
		int			bb = -1;	/* -1: with the bench */

		if (R->max_swaps >= 0 && swaps >= R->max_swaps)
			break;
		if (round_stopped(R))
			break;
		for (int a = 0; a < nm; a++)
		{
			for (int b = a + 1; b <= last_partner(R, a); b++)
			{
				const Swap *s = &R->pair[pair_slot(a, b)];

				if (s->i >= 0 && s->gain > g)
				{
					g = s->gain;
					ba = a;
					bb = b;
				}
			}
			if (R->benchswap[a].i >= 0 && R->benchswap[a].gain > g)
			{
				g = R->benchswap[a].gain;
				ba = a;
				bb = -1;
			}
		}
		if (ba < 0)
			break;				/* a local optimum */

		if (bb >= 0)
		{
			const Swap *s = &R->pair[pair_slot(ba, bb)];
			int		   *ua = &Y->units[(size_t) ba * KMAX + s->i];
			int		   *ub = &Y->units[(size_t) bb * KMAX + s->j];
			int			t = *ua;

			*ua = *ub;
			*ub = t;
			rescore(R, ba);
			rescore(R, bb);
			eval_partners(R, ba);
			eval_partners(R, bb);
			R->benchswap[ba] = eval_bench(R, ba);
			R->benchswap[bb] = eval_bench(R, bb);
		}
		else
		{
			const Swap *s = &R->benchswap[ba];
			int		   *ua = &Y->units[(size_t) ba * KMAX + s->i];
			int			t = *ua;

			*ua = Y->bench[s->j];
			Y->bench[s->j] = t;
			rescore(R, ba);
			eval_partners(R, ba);
			/* the bench changed: every match's bench swap */
			for (int m = 0; m < nm; m++)
				R->benchswap[m] = eval_bench(R, m);
		}
		swaps++;
		R->climbs++;
	}
}

/*
 * A start: the units in R->order placed first-fit into matches of k
 * players that pack exactly into the teams; every match split at its
 * best; the units of matches left incomplete go to the bench.
 */
static void
start(Round *R)
{
	Layout	   *Y = &R->cur;
	int			nopen = 0;
	int			k = R->k;

	Y->nm = 0;
	Y->nbench = 0;
	for (int o = 0; o < R->nunits; o++)
	{
		int			u = R->order[o];
		int			s = R->unit[u].size;
		int			placed = -1;

		if (mm_interrupted())
		{
			R->stop = STOP_INTERRUPT;
			return;
		}

		for (int m = 0; m < nopen && placed < 0; m++)
		{
			int			sizes[KMAX];
			int		   *mu = R->open_units + (size_t) m * KMAX;

			if (R->open_fill[m] + s > k)
				continue;
			for (int x = 0; x < R->open_n[m]; x++)
				sizes[x] = R->unit[mu[x]].size;
			sizes[R->open_n[m]] = s;
			if (packs(R->cfg, sizes, R->open_n[m] + 1))
				placed = m;
		}
		if (placed < 0)
		{
			placed = nopen++;
			R->open_n[placed] = 0;
			R->open_fill[placed] = 0;
		}
		R->open_units[(size_t) placed * KMAX + R->open_n[placed]++] = u;
		R->open_fill[placed] += s;
		if (R->open_fill[placed] == k)
		{
			/* full: it becomes a match; the last open match takes its place */
			int			m = Y->nm++;

			Y->nunits[m] = R->open_n[placed];
			memcpy(Y->units + (size_t) m * KMAX,
				   R->open_units + (size_t) placed * KMAX,
				   sizeof(int) * (size_t) R->open_n[placed]);
			nopen--;
			if (placed != nopen)
			{
				/* keep the open matches in creation order */
				memmove(R->open_units + (size_t) placed * KMAX,
						R->open_units + (size_t) (placed + 1) * KMAX,
						sizeof(int) * (size_t) (nopen - placed) * KMAX);
				memmove(R->open_n + placed, R->open_n + placed + 1,
						sizeof(int) * (size_t) (nopen - placed));
				memmove(R->open_fill + placed, R->open_fill + placed + 1,
						sizeof(int) * (size_t) (nopen - placed));
			}
		}
	}
	for (int m = 0; m < nopen; m++)
		for (int x = 0; x < R->open_n[m]; x++)
			Y->bench[Y->nbench++] = R->open_units[(size_t) m * KMAX + x];
	for (int m = 0; m < Y->nm; m++)
	{
		if (mm_interrupted())
		{
			R->stop = STOP_INTERRUPT;
			return;
		}
		rescore(R, m);
	}
}

/* The current layout's total score (the sum of its match scores). */
static double
total(const Layout *Y)
{
	double		s = 0;

	for (int m = 0; m < Y->nm; m++)
		s += Y->score[m];
	return s;
}

/* Copy a layout (both have room for maxm matches and nunits bench units). */
static void
layout_copy(Layout *dst, const Layout *src)
{
	dst->nm = src->nm;
	memcpy(dst->units, src->units, sizeof(int) * (size_t) src->nm * KMAX);
	memcpy(dst->nunits, src->nunits, sizeof(int) * (size_t) src->nm);
	memcpy(dst->team, src->team, sizeof(int) * (size_t) src->nm * KMAX);
	memcpy(dst->score, src->score, sizeof(double) * (size_t) src->nm);
	dst->nbench = src->nbench;
	memcpy(dst->bench, src->bench, sizeof(int) * (size_t) src->nbench);
}

/* Keep the current layout when it beats the best: more matches, then a higher score. */
static void
keep_best(Round *R)
{
	double		t = total(&R->cur);
	int			better;

	if (!R->have_best)
		better = 1;
	else if (R->cur.nm != R->best.nm)
		better = R->cur.nm > R->best.nm;
	else
		better = R->cur.nm > 0 && t / R->cur.nm > R->best_total / R->best.nm + GAIN_EPS;
	if (better)
	{
		layout_copy(&R->best, &R->cur);
		R->best_total = t;
		R->have_best = 1;
	}
}

/* Order units by key, then by their first ticket (arrival order). */
static int
unit_key_cmp(const void *l, const void *r, const Unit *unit)
{
	const Unit *x = &unit[*(const int *) l];
	const Unit *y = &unit[*(const int *) r];

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

/*
 * Sort unit numbers by key (a shell sort: qsort cannot pass the units to
 * its comparison in C99; the order is total, so the result is unique).
 */
static void
sort_units(int *order, int n, const Unit *unit)
{
	for (int gap = n / 2; gap > 0; gap = gap == 2 ? 1 : gap * 5 / 11)
		for (int i = gap; i < n; i++)
		{
			int			v = order[i];
			int			p = i;

			for (; p >= gap && unit_key_cmp(&order[p - gap], &v, unit) > 0; p -= gap)
				order[p] = order[p - gap];
			order[p] = v;
		}
}

/* Check the optimize-specific ticket and pool fields. */
static MMStatus
check_optimize_pool(const MMPool *pool)
{
	int			has_ping = pool->ping != NULL && pool->nregions > 0;
	const int32_t *ps = pool->ping_start;

	if (pool->nregions < 0 || pool->nmet < 0)
		return MM_ERR_ARGUMENT;
	if (ps != NULL)
	{
		/* the lists: increasing offsets, ascending regions, pings in range */
		if (pool->nping_rows < 0 || pool->ping_region == NULL ||
			pool->ping_ms == NULL || ps[0] != 0)
			return MM_ERR_ARGUMENT;
		for (int r = 0; r < pool->nping_rows; r++)
		{
			if (ps[r + 1] < ps[r])
				return MM_ERR_ARGUMENT;
			for (int x = ps[r]; x < ps[r + 1]; x++)
			{
				float		p = pool->ping_ms[x];

				if (pool->ping_region[x] < 0 || pool->ping_region[x] >= pool->nregions ||
					(x > ps[r] && pool->ping_region[x] <= pool->ping_region[x - 1]) ||
					(!isnan(p) && !(p >= 0 && p <= 1e9f)))
					return MM_ERR_ARGUMENT;
			}
		}
	}
	for (int i = 0; i < pool->ntickets; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		if (t->party < -1 || t->attr < -1)
			return MM_ERR_ARGUMENT;
		if (ps != NULL)
		{
			if (t->attr >= pool->nping_rows)
				return MM_ERR_ARGUMENT;
			continue;
		}
		if (has_ping && t->attr >= 0)
			for (int r = 0; r < pool->nregions; r++)
			{
				float		p = pool->ping[(size_t) t->attr * (size_t) pool->nregions + r];

				if (!isnan(p) && !(p >= 0 && p <= 1e9f))
					return MM_ERR_ARGUMENT;
			}
	}
	return MM_OK;
}

/*
 * Fill the pool's pair table, the pings from the lists pl when not NULL
 * (the caller frees its arrays, also on failure).
 */
static MMStatus
pair_table(const MMPool *pool, const PingLists *pl, PairTable *pt)
{
	int			n = pool->ntickets;
	int		   *ends;
	int		   *which;
	int			npairs;

	pt->n = n;
	pt->ping = mm_malloc(sizeof(float) * (size_t) n * (size_t) n);
	pt->rel = mm_malloc((size_t) n * (size_t) n);
	if (pt->ping == NULL || pt->rel == NULL)
		return MM_ERR_NOMEM;
	memset(pt->rel, -1, (size_t) n * (size_t) n);
	for (int i = 0; i < n; i++)
	{
		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		pt->ping[(size_t) i * n + i] = 0;
		for (int j = i + 1; j < n; j++)
		{
			float		p = (float) (pl != NULL ? list_ping(pl, i, j) :
									 pair_ping(pool, &pool->tickets[i], &pool->tickets[j]));

			pt->ping[(size_t) i * n + j] = pt->ping[(size_t) j * n + i] = p;
		}
	}
	if (pool->met == NULL || pool->nmet <= 0)
		return MM_OK;
	ends = mm_malloc_array((size_t) pool->nmet * 2, sizeof(int));
	which = mm_malloc_array((size_t) pool->nmet, sizeof(int));
	npairs = ends != NULL && which != NULL ? mm_met_pair_tickets(pool, ends, which) : -1;
	for (int c = 0; c < npairs; c++)
	{
		int			a = ends[2 * c];
		int			b = ends[2 * c + 1];
		signed char r = pool->met[which[c]].relation == 1 ? 1 : 0;

		pt->rel[(size_t) a * n + b] = r;
		pt->rel[(size_t) b * n + a] = r;
	}
	mm_free(ends);
	mm_free(which);
	return npairs < 0 ? MM_ERR_NOMEM : MM_OK;
}

/* Order ticket indices by (party, index), to gather the parties. */
typedef struct PartyIndex
{
	int32_t		party;
	int			idx;
} PartyIndex;

static int
party_cmp(const void *l, const void *r)
{
	const PartyIndex *x = l;
	const PartyIndex *y = r;

	if (x->party != y->party)
		return (x->party > y->party) - (x->party < y->party);
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Write the best layout's matches to res: members in pool order, teams
 * numbered by first appearance (the oldest member's team is 1).
 */
static void
write_matches(const Round *R, MMResult *res, int *matched)
{
	const Layout *Y = &R->best;

	for (int m = 0; m < Y->nm; m++)
	{
		int			idx[KMAX];
		int			tm[KMAX];
		int			map[KMAX];
		int			n = 0;
		int			next = 1;
		int			first;

		for (int x = 0; x < Y->nunits[m]; x++)
		{
			const Unit *U = &R->unit[Y->units[(size_t) m * KMAX + x]];

			for (int y = 0; y < U->size; y++)
			{
				int			v = R->umem[U->first + y];
				int			t = Y->team[(size_t) m * KMAX + x];
				int			p = n++;

				for (; p > 0 && idx[p - 1] > v; p--)
				{
					idx[p] = idx[p - 1];
					tm[p] = tm[p - 1];
				}
				idx[p] = v;
				tm[p] = t;
				matched[v] = 1;
			}
		}
		for (int t = 0; t < KMAX; t++)
			map[t] = 0;
		first = res->nmatches == 0 ? 0 :
			res->matches[res->nmatches - 1].first + res->matches[res->nmatches - 1].nmembers;
		mm_add_match(res, idx, n, R->k);
		for (int i = 0; i < n; i++)
		{
			if (map[tm[i]] == 0)
				map[tm[i]] = next++;
			res->teams[first + i] = map[tm[i]];
		}
	}
}

/*
 * The arguments of a round: a valid optimize configuration, a pool of
 * finite arrivals and ratings in [0, 1], with its parties and pings, and
 * a result with every array (unless the pool is empty).
 */
static MMStatus
check_round(const MMConfig *cfg, const MMPool *pool, const MMResult *res,
			double now)
{
	if (check_config(cfg) != MM_OK ||
		pool == NULL || res == NULL || !isfinite(now) || pool->ntickets < 0)
		return MM_ERR_ARGUMENT;
	if (pool->ntickets == 0)
		return MM_OK;
	if (pool->tickets == NULL || res->matches == NULL || res->members == NULL ||
		res->teams == NULL || res->expired == NULL)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < pool->ntickets; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		if (!isfinite(t->arrival) || !(t->rating >= 0.0 && t->rating <= 1.0))
			return MM_ERR_ARGUMENT;
	}
	return check_optimize_pool(pool);
}

/*
 * Share one block (returned; NULL when out of memory) out among the
 * round's arrays for n tickets and maxm matches, and the placeable units'
 * fixed order.
 */
static void *
round_alloc(Round *R, int n, int maxm, int **placeable)
{
	size_t		ints = (size_t) n * (7 + KMAX) + (size_t) maxm * (4 * KMAX + 2);
	void	   *block = mm_malloc(sizeof(int) * ints +
								  sizeof(double) * (size_t) maxm * 2 +
								  sizeof(Swap) * ((size_t) maxm * SWAP_WINDOW + maxm));
	char	   *p = block;

	if (block == NULL)
		return NULL;
#define TAKE(ptr, type, count) \
	do { (ptr) = (type *) p; p += sizeof(type) * (size_t) (count); } while (0)
	TAKE(R->pair, Swap, (size_t) maxm * SWAP_WINDOW);
	TAKE(R->benchswap, Swap, maxm);
	TAKE(R->cur.score, double, maxm);
	TAKE(R->best.score, double, maxm);
	TAKE(R->umem, int, n);
	TAKE(R->order, int, n);
	TAKE(R->cur.units, int, (size_t) maxm * KMAX);
	TAKE(R->cur.team, int, (size_t) maxm * KMAX);
	TAKE(R->cur.nunits, int, maxm);
	TAKE(R->cur.bench, int, n);
	TAKE(R->best.units, int, (size_t) maxm * KMAX);
	TAKE(R->best.team, int, (size_t) maxm * KMAX);
	TAKE(R->best.nunits, int, maxm);
	TAKE(R->best.bench, int, n);
	/* first-fit: at most one open match per unit */
	TAKE(R->open_units, int, (size_t) n * KMAX);
	TAKE(R->open_n, int, n);
	TAKE(R->open_fill, int, n);
	TAKE(*placeable, int, n);
#undef TAKE
	return block;
}

/*
 * The pool's tickets sorted by party (solo tickets, party -1, first), in
 * pool order within a party: pi[i] for i < pool->ntickets.
 */
static void
sort_by_party(const MMPool *pool, PartyIndex *pi)
{
	for (int i = 0; i < pool->ntickets; i++)
	{
		pi[i].party = pool->tickets[i].party < 0 ? -1 : pool->tickets[i].party;
		pi[i].idx = i;
	}
	qsort(pi, pool->ntickets, sizeof(PartyIndex), party_cmp);
}

/* The end of the unit that starts at pi[b]: a whole party, or one solo ticket. */
static int
party_run_end(const PartyIndex *pi, int n, int b)
{
	int			e = b + 1;

	if (pi[b].party >= 0)
		while (e < n && pi[e].party == pi[b].party)
			e++;
	return e;
}

/*
 * Gather the pool's n tickets into units (pi has room for n): parties by
 * number, solos alone, in order of their oldest ticket, into units (n
 * entries), their tickets into R->umem.  The placeable units (those that
 * fit in a team) go to R->order; returns the number of every unit.
 */
static int
make_units(Round *R, PartyIndex *pi, Unit *units)
{
	const MMPool *pool = R->pool;
	int			n = pool->ntickets;
	int			nall = 0;
	int			w = 0;

	sort_by_party(pool, pi);
	for (int b = 0; b < n;)
	{
		int			e = party_run_end(pi, n, b);

		units[nall].first = b;
		units[nall].size = e - b;
		nall++;
		b = e;
	}
	R->unit = units;
	/* R->umem lists the tickets of every unit; pi is in unit order */
	for (int i = 0; i < n; i++)
		R->umem[i] = pi[i].idx;
	/* only units that fit in a team take part in the search */
	for (int u = 0; u < nall; u++)
		if (units[u].size <= R->cfg->team_size)
			R->order[w++] = u;
	R->nunits = w;
	for (int u = 0; u < nall; u++)
	{
		double		s = 0;

		for (int x = 0; x < units[u].size; x++)
			s += capped(R->cfg, pool->tickets[R->umem[units[u].first + x]].rating);
		units[u].key = s / units[u].size;
	}
	return nall;
}

/*
 * The search: the first start by mean capped rating, then the restarts,
 * each a shuffle of the placeable units from their fixed order placeable,
 * while the budget lasts; each climbs (within the budget), and the best
 * layout is kept.  R->stop is STOP_INTERRUPT when mm_interrupt stopped it.
 */
static void
search(Round *R, int *placeable)
{
	const MMConfig *cfg = R->cfg;
	int			np = R->nunits;

	memcpy(placeable, R->order, sizeof(int) * (size_t) np);
	sort_units(R->order, np, R->unit);
	R->limited = 1;
	start(R);
	if (R->stop == STOP_INTERRUPT)
		return;
	climb(R);
	if (R->stop == STOP_INTERRUPT)
		return;
	keep_best(R);

	if (np > 0)
	{
		uint64_t	oldest = (uint64_t) R->pool->tickets[0].id;

		R->rng = cfg->optimize.seed ^ (oldest * 0xD1B54A32D192ED03ULL);
		(void) rng_next(&R->rng);
	}
	for (int r = 0; r < cfg->optimize.restarts && np > 0; r++)
	{
		if (R->stop != STOP_NONE || elapsed_ms(R) >= cfg->optimize.budget_ms)
			break;
		memcpy(R->order, placeable, sizeof(int) * (size_t) np);
		for (int i = np - 1; i > 0; i--)
		{
			int			j = (int) (rng_next(&R->rng) % (uint64_t) (i + 1));
			int			t = R->order[i];

			R->order[i] = R->order[j];
			R->order[j] = t;
		}
		start(R);
		if (R->stop == STOP_INTERRUPT)
			return;
		climb(R);
		if (R->stop == STOP_INTERRUPT)
			return;
		keep_best(R);
	}
}

/*
 * Timed-out units left over (not matched), oldest first: a unit times out
 * with its oldest ticket.  With bots it plays alone (one team) completed
 * with computer players; with expire, or when it is a party too big for a
 * team, all its tickets expire.  Reuses R->order.
 */
static void
settle_timeouts(Round *R, int nall, const int *matched, double now,
				MMResult *res)
{
	const MMConfig *cfg = R->cfg;
	const MMPool *pool = R->pool;
	int			n = pool->ntickets;
	int		   *first_of = R->order;	/* unit number by its oldest ticket */

	for (int i = 0; i < n; i++)
		first_of[i] = -1;
	for (int u = 0; u < nall; u++)
	{
		int			oldest = R->umem[R->unit[u].first];

		/* umem is in index order within a unit, so its first is its oldest */
		first_of[oldest] = u;
	}
	for (int i = 0; i < n && mm_timed_out(&pool->tickets[i], now, cfg->max_wait); i++)
	{
		int			u = first_of[i];
		const Unit *U;

		if (u < 0 || matched[i])
			continue;
		U = &R->unit[u];
		if (cfg->on_timeout == MM_TIMEOUT_BOTS && U->size <= cfg->team_size)
		{
			int			f = res->nmatches == 0 ? 0 :
				res->matches[res->nmatches - 1].first + res->matches[res->nmatches - 1].nmembers;

			mm_add_match(res, &R->umem[U->first], U->size, R->k);
			for (int x = 0; x < U->size; x++)
				res->teams[f + x] = 1;
		}
		else
			for (int x = 0; x < U->size; x++)
				res->expired[res->nexpired++] = R->umem[U->first + x];
	}
}

/*
 * The pool's pings as lists (see PingLists); pl->start is NULL when the
 * pool has no pings.  The caller frees the arrays, also on failure.
 */
static MMStatus
ping_lists(const MMPool *pool, PingLists *pl)
{
	int			n = pool->ntickets;
	size_t		known = 0;
	int			w = 0;

	memset(pl, 0, sizeof(*pl));
	if (pool->ping_start != NULL)
	{
		const int32_t *ps = pool->ping_start;

		for (int i = 0; i < n; i++)
			if (pool->tickets[i].attr >= 0)
				known += (size_t) (ps[pool->tickets[i].attr + 1] - ps[pool->tickets[i].attr]);
		pl->start = mm_malloc_array((size_t) n + 1, sizeof(int));
		pl->region = mm_malloc_array(known + 1, sizeof(int32_t));
		pl->ms = mm_malloc_array(known + 1, sizeof(float));
		if (known > INT32_MAX || pl->start == NULL || pl->region == NULL || pl->ms == NULL)
			return MM_ERR_NOMEM;
		for (int i = 0; i < n; i++)
		{
			int			a = pool->tickets[i].attr;

			pl->start[i] = w;
			for (int x = a >= 0 ? ps[a] : 0; a >= 0 && x < ps[a + 1]; x++)
			{
				if (isnan(pool->ping_ms[x]))
					continue;
				pl->region[w] = pool->ping_region[x];
				pl->ms[w] = pool->ping_ms[x];
				w++;
			}
		}
		pl->start[n] = w;
		return MM_OK;
	}
	if (pool->ping == NULL || pool->nregions <= 0)
		return MM_OK;
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		for (int r = 0; t->attr >= 0 && r < pool->nregions; r++)
			if (!isnan(pool->ping[(size_t) t->attr * (size_t) pool->nregions + r]))
				known++;
	}
	if (known > INT32_MAX)
		return MM_ERR_NOMEM;
	pl->start = mm_malloc_array((size_t) n + 1, sizeof(int));
	pl->region = mm_malloc_array(known + 1, sizeof(int32_t));
	pl->ms = mm_malloc_array(known + 1, sizeof(float));
	if (pl->start == NULL || pl->region == NULL || pl->ms == NULL)
		return MM_ERR_NOMEM;
	for (int i = 0; i < n; i++)
	{
		const MMTicket *t = &pool->tickets[i];

		pl->start[i] = w;
		for (int r = 0; t->attr >= 0 && r < pool->nregions; r++)
		{
			float		p = pool->ping[(size_t) t->attr * (size_t) pool->nregions + r];

			if (!isnan(p))
			{
				pl->region[w] = r;
				pl->ms[w] = p;
				w++;
			}
		}
	}
	pl->start[n] = w;
	return MM_OK;
}

/*
 * The tickets of a round over a pool of more than round_max tickets: whole
 * units (a party with all its waiting tickets), oldest first by their
 * oldest ticket, while they fit in round_max (the first always).  Writes
 * their indices, in pool order, to sel (n entries) and returns how many.
 */
static int
select_round(const MMPool *pool, int round_max, PartyIndex *pi, int *sel)
{
	int			n = pool->ntickets;
	int		   *oldest = sel;	/* per ticket: its unit's oldest ticket */
	int			total = 0;
	int			m = 0;

	sort_by_party(pool, pi);
	/* pi[].party becomes the unit's size at its oldest ticket, 0 elsewhere */
	for (int b = 0; b < n;)
	{
		int			e = party_run_end(pi, n, b);

		for (int x = b; x < e; x++)
			oldest[pi[x].idx] = pi[b].idx;
		b = e;
	}
	/* reuse pi as a per-ticket size of the unit it is the oldest of */
	for (int i = 0; i < n; i++)
		pi[i].party = 0;
	for (int i = 0; i < n; i++)
		pi[oldest[i]].party++;
	for (int i = 0; i < n; i++)
		pi[i].idx = 0;			/* 1: the unit of this oldest ticket is taken */
	for (int i = 0; i < n; i++)
	{
		if (oldest[i] != i)
			continue;
		if (total > 0 && total + pi[i].party > round_max)
			break;
		total += pi[i].party;
		pi[i].idx = 1;
	}
	for (int i = 0; i < n; i++)
		if (pi[oldest[i]].idx)
			sel[m++] = i;		/* m <= i: oldest[] is read before it is overwritten */
	return m;
}

/* A round over every ticket of the pool (mm_optimize_search without round_max). */
static MMStatus
round_search(const MMConfig *cfg, const MMPool *pool, double now,
			 MMResult *res, double *score, int *climbs, int max_swaps)
{
	int			n;
	int			maxm;
	int			nall;			/* every unit, placeable or not */
	Round		R;
	PartyIndex *pi = NULL;
	Unit	   *allunits = NULL;
	int		   *matched = NULL;
	int		   *placeable = NULL;	/* the placeable units in a fixed order, for the shuffles */
	void	   *block = NULL;
	MMStatus	st;

	if (score != NULL)
		*score = 0;
	if (climbs != NULL)
		*climbs = 0;
	st = check_round(cfg, pool, res, now);
	if (st != MM_OK || pool->ntickets == 0)
		return st;
	n = pool->ntickets;
	maxm = n / mm_config_k(cfg) + 1;

	memset(&R, 0, sizeof(R));
	R.cfg = cfg;
	R.pool = pool;
	R.k = mm_config_k(cfg);
	R.maxm = maxm;
	R.max_swaps = max_swaps;
	clock_gettime(CLOCK_MONOTONIC, &R.started);
	st = ping_lists(pool, &R.lists);
	if (st != MM_OK)
		goto done;
	if (R.lists.start != NULL)
		R.pl = &R.lists;
	if (n <= PAIR_TABLE_MAX)
	{
		st = pair_table(pool, R.pl, &R.table);
		if (st != MM_OK)
			goto done;
		R.pt = &R.table;
	}

	pi = mm_malloc(sizeof(PartyIndex) * (size_t) n);
	allunits = mm_malloc(sizeof(Unit) * (size_t) n);
	matched = mm_calloc((size_t) n, sizeof(int));
	block = round_alloc(&R, n, maxm, &placeable);
	if (pi == NULL || allunits == NULL || matched == NULL || block == NULL)
	{
		st = MM_ERR_NOMEM;
		goto done;
	}
	/* the layouts refer to units by their number in allunits */
	nall = make_units(&R, pi, allunits);
	mm_free(pi);
	pi = NULL;

	search(&R, placeable);
	if (R.stop == STOP_INTERRUPT)
	{
		st = MM_ERR_INTERRUPTED;
		goto done;
	}
	write_matches(&R, res, matched);
	if (score != NULL)
		*score = R.best.nm > 0 ? R.best_total / R.best.nm : 0.0;
	if (climbs != NULL)
		*climbs = R.climbs;
	settle_timeouts(&R, nall, matched, now, res);

done:
	mm_free(R.table.ping);
	mm_free(R.table.rel);
	mm_free(R.lists.start);
	mm_free(R.lists.region);
	mm_free(R.lists.ms);
	mm_free(pi);
	mm_free(allunits);
	mm_free(matched);
	mm_free(block);
	return st;
}

/*
 * See mm_internal.h.  A pool of more than round_max tickets gets a round
 * over its oldest units (select_round): the search runs on a pool of
 * those tickets, and its result is mapped back to the pool's indices.
 */
MMStatus
mm_optimize_search(const MMConfig *cfg, const MMPool *pool, double now,
				   MMResult *res, double *score, int *climbs, int max_swaps)
{
	MMPool		sub;
	MMTicket   *tickets;
	PartyIndex *pi;
	int		   *sel;
	int			members0;
	int			expired0;
	int			m;
	MMStatus	st;

	st = check_round(cfg, pool, res, now);
	if (st != MM_OK || pool->ntickets <= cfg->optimize.round_max)
		return round_search(cfg, pool, now, res, score, climbs, max_swaps);

	pi = mm_malloc_array((size_t) pool->ntickets, sizeof(PartyIndex));
	sel = mm_malloc_array((size_t) pool->ntickets, sizeof(int));
	tickets = mm_malloc_array((size_t) pool->ntickets, sizeof(MMTicket));
	if (pi == NULL || sel == NULL || tickets == NULL)
	{
		st = MM_ERR_NOMEM;
		goto done;
	}
	m = select_round(pool, cfg->optimize.round_max, pi, sel);
	for (int i = 0; i < m; i++)
		tickets[i] = pool->tickets[sel[i]];
	sub = *pool;
	sub.tickets = tickets;
	sub.ntickets = m;
	members0 = res->nmatches == 0 ? 0 :
		res->matches[res->nmatches - 1].first + res->matches[res->nmatches - 1].nmembers;
	expired0 = res->nexpired;
	st = round_search(cfg, &sub, now, res, score, climbs, max_swaps);
	if (st == MM_OK)
	{
		int			members = res->nmatches == 0 ? 0 :
			res->matches[res->nmatches - 1].first + res->matches[res->nmatches - 1].nmembers;

		/* sel is increasing, so each match's members stay in pool order */
		for (int x = members0; x < members; x++)
			res->members[x] = sel[res->members[x]];
		for (int x = expired0; x < res->nexpired; x++)
			res->expired[x] = sel[res->expired[x]];
	}

done:
	mm_free(pi);
	mm_free(sel);
	mm_free(tickets);
	return st;
}

/* See mm_core.h. */
MMStatus
mm_optimize_round(const MMConfig *cfg, const MMPool *pool, double now,
				  MMResult *res, double *score, int *climbs)
{
	if (res != NULL)
	{
		res->nmatches = 0;
		res->nexpired = 0;
	}
	return mm_optimize_search(cfg, pool, now, res, score, climbs, -1);
}

/* See mm_internal.h. */
double
mm_optimize_deadline(const MMConfig *cfg, const MMPool *pool)
{
	double		d = mm_recheck_deadline(cfg, pool);

	if (d <= pool->stepped_at && isfinite(pool->stepped_at))
		d = nextafter(pool->stepped_at, INFINITY);
	return d;
}

/* See mm_internal.h. */
MMStatus
mm_optimize_step(const MMConfig *cfg, MMPool *pool, double prev, double now,
				 MMResult *result)
{
	int			n = pool->ntickets;
	int			due = 0;
	MMStatus	st = check_optimize_pool(pool);

	if (st != MM_OK)
		return st;
	if (mm_timed_out(&pool->tickets[0], now, cfg->max_wait))
		due = 1;				/* the oldest: any timeout */
	else if (n >= mm_config_k(cfg) && mm_recheck_count(cfg, pool, prev, now) >= 1)
	{
		/* the round of the last instant, if k tickets waited at it */
		double		at = mm_recheck_last(cfg, pool, now);
		int			waited = 0;

		for (int i = 0; i < n && pool->tickets[i].arrival <= at; i++)
			waited++;
		due = waited >= mm_config_k(cfg);
	}
	if (!due)
		return MM_OK;
	return mm_optimize_search(cfg, pool, now, result, NULL, NULL, -1);
}
