/*
 * teams.c
 *		Splitting the players of one match into balanced teams.
 *
 * The real players of a match are split over cfg->teams teams of
 * cfg->team_size places so that the spread of the teams' rating sums
 * (largest sum minus smallest sum, a team's sum counting its real players
 * only) is as small as possible.  Computer players have no rating: they
 * take the places left free once the real players are placed, so every
 * team ends up with exactly team_size players.
 *
 * For k = teams * team_size <= MM_TEAMS_EXACT_MAX the search is exact:
 * an enumeration of all splits with the symmetry of the (interchangeable)
 * teams broken and a simple lower bound to cut branches.  Above that a
 * greedy assignment is improved by swaps between the strongest and the
 * weakest team.  Nothing here allocates: k is at most MM_TEAMS_MAX_K, so
 * all scratch lives on the stack and the function cannot run out of
 * memory (mm_step relies on that).
 */
#include "mm_internal.h"

#include <math.h>

/* Largest k for which the split is exact. */
#define MM_TEAMS_EXACT_MAX	12

/* Largest k mm_config_check accepts; bounds the stack scratch. */
#define MM_TEAMS_MAX_K		1000

/* Improving swaps the heuristic makes at most. */
#define MM_TEAMS_MAX_SWAPS	100

/* Slack that keeps rounding from cutting a branch that is really better. */
#define MM_TEAMS_EPS		1e-12

/* State of the exact search. */
typedef struct SplitSearch
{
	int			nteams;
	int			team_size;
	int			n;				/* real players to place */
	const double *val;			/* their ratings, in search order */
	double		avg;			/* sum of all ratings / nteams */
	int			assign[MM_TEAMS_EXACT_MAX];
	int			best_assign[MM_TEAMS_EXACT_MAX];
	int			count[MM_TEAMS_EXACT_MAX];
	double		sum[MM_TEAMS_EXACT_MAX];
	double		best;			/* best spread found so far */
} SplitSearch;

/* Spread (largest minus smallest team sum) of a complete assignment. */
static double
sums_spread(const double *sum, int nteams)
{
	double		lo = sum[0];
	double		hi = sum[0];

	for (int t = 1; t < nteams; t++)
	{
		if (sum[t] < lo)
			lo = sum[t];
		if (sum[t] > hi)
			hi = sum[t];
	}
	return hi - lo;
}

/*
 * Place player i and all after it.  used is the number of teams that
 * already hold a player; player i may only open the first empty team,
 * which removes the nteams! orderings of equivalent splits.  The first
 * split found with a given spread is kept (later ones must be strictly
 * better), so the result is deterministic.
 */
static void
split_search(SplitSearch *s, int i, int used)
{
	double		curmax;
	int			limit;

	if (s->best <= 0.0)
		return;					/* nothing can beat a perfect split */
	if (i == s->n)
	{
		double		spread = sums_spread(s->sum, s->nteams);

		if (spread < s->best)
		{
			s->best = spread;
			for (int j = 0; j < s->n; j++)
				s->best_assign[j] = s->assign[j];
		}
		return;
	}

	/*
	 * Sums only grow, so the final maximum is at least the current one,
	 * while the final minimum is at most the average.
	 */
	curmax = s->sum[0];
	for (int t = 1; t < s->nteams; t++)
		if (s->sum[t] > curmax)
			curmax = s->sum[t];
	if (curmax - s->avg >= s->best + MM_TEAMS_EPS)
		return;

	limit = used < s->nteams ? used + 1 : s->nteams;
	for (int t = 0; t < limit; t++)
	{
		if (s->count[t] >= s->team_size)
			continue;
		s->assign[i] = t;
		s->count[t]++;
		s->sum[t] += s->val[i];
		split_search(s, i + 1, t == used ? used + 1 : used);
		s->sum[t] -= s->val[i];
		s->count[t]--;
	}
}

/*
 * Greedy split for large k: players in descending rating order each join
 * the team with the smallest sum that still has room (lowest team number
 * on ties); then, up to MM_TEAMS_MAX_SWAPS times, the best swap of a
 * player of the strongest team with a player (or a free place) of the
 * weakest team is made while it strictly lowers the spread.  Returns
 * MM_ERR_INTERRUPTED when mm_interrupt stops it.
 */
static MMStatus
split_greedy(int nteams, int team_size, int n, const double *val,
			 int *assign, double *sum, int *count)
{
	for (int t = 0; t < nteams; t++)
	{
		sum[t] = 0.0;
		count[t] = 0;
	}
	for (int i = 0; i < n; i++)
	{
		int			bt = -1;

		for (int t = 0; t < nteams; t++)
			if (count[t] < team_size && (bt < 0 || sum[t] < sum[bt]))
				bt = t;
		assign[i] = bt;
		count[bt]++;
		sum[bt] += val[i];
	}

	for (int iter = 0; iter < MM_TEAMS_MAX_SWAPS; iter++)
	{
		int			hi = 0;
		int			lo = 0;
		double		omax = -INFINITY;
		double		omin = INFINITY;
		double		cur;
		double		best;
		int			ba = -1;
		int			bb = -1;	/* -1 with ba >= 0: move into a free place */
		int			found = 0;

		for (int t = 1; t < nteams; t++)
		{
			if (sum[t] > sum[hi])
				hi = t;
			if (sum[t] < sum[lo])
				lo = t;
		}
		if (hi == lo)
			break;
		for (int t = 0; t < nteams; t++)
		{
			if (t == hi || t == lo)
				continue;
			if (sum[t] > omax)
				omax = sum[t];
			if (sum[t] < omin)
				omin = sum[t];
		}
		cur = sum[hi] - sum[lo];
		best = cur;

		for (int a = 0; a < n; a++)
		{
			if (assign[a] != hi)
				continue;
			if (mm_interrupted())
				return MM_ERR_INTERRUPTED;
			/* b ranges over lo's players, then lo's free place if any */
			for (int b = 0; b <= n; b++)
			{
				double		d;
				double		nh;
				double		nl;
				double		mx;
				double		mn;

				if (b < n && assign[b] != lo)
					continue;
				if (b == n && count[lo] >= team_size)
					continue;
				d = val[a] - (b < n ? val[b] : 0.0);
				if (d <= 0.0)
					continue;
				nh = sum[hi] - d;
				nl = sum[lo] + d;
				mx = fmax(omax, fmax(nh, nl));
				mn = fmin(omin, fmin(nh, nl));
				if (mx - mn < best)
				{
					best = mx - mn;
					ba = a;
					bb = b < n ? b : -1;
					found = 1;
				}
			}
		}
		if (!found)
			break;
		sum[hi] -= val[ba];
		sum[lo] += val[ba];
		assign[ba] = lo;
		if (bb >= 0)
		{
			sum[lo] -= val[bb];
			sum[hi] += val[bb];
			assign[bb] = hi;
		}
		else
		{
			count[hi]--;
			count[lo]++;
		}
	}
	return MM_OK;
}

/*
 * The exact split of the n ratings val (descending) into nteams teams of
 * team_size: assign gets each player's team, sum each team's rating sum.
 */
static void
split_exact(int nteams, int team_size, int n, const double *val,
			int *assign, double *sum)
{
	SplitSearch s;
	double		total = 0.0;

	s.nteams = nteams;
	s.team_size = team_size;
	s.n = n;
	s.val = val;
	for (int i = 0; i < n; i++)
		total += val[i];
	s.avg = total / nteams;
	s.best = INFINITY;
	for (int t = 0; t < nteams; t++)
	{
		s.count[t] = 0;
		s.sum[t] = 0.0;
	}
	split_search(&s, 0, 0);
	for (int t = 0; t < nteams; t++)
		sum[t] = 0.0;
	for (int i = 0; i < n; i++)
	{
		assign[i] = s.best_assign[i];
		sum[assign[i]] += val[i];
	}
}

/* order[0 .. n): the indices of ratings by descending rating, ties in input order. */
static void
order_by_rating(int n, const double *ratings, int *order)
{
	for (int i = 0; i < n; i++)
	{
		int			j = i;

		while (j > 0 && ratings[order[j - 1]] < ratings[i])
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

/*
 * Number the teams 1.. (see mm_split_teams) and write each player's
 * number to teams_out: order maps search positions to input indices,
 * assign search positions to teams, sum holds the teams' rating sums.
 */
static void
number_teams(int nteams, int nmembers, const int *order, const int *assign,
			 const double *sum, int *teams_out)
{
	int			first[MM_TEAMS_MAX_K];	/* team -> earliest input index */
	int			rank[MM_TEAMS_MAX_K];	/* numbering order -> team */
	int			number[MM_TEAMS_MAX_K]; /* team -> 1-based number */

	for (int t = 0; t < nteams; t++)
		first[t] = -1;
	for (int i = 0; i < nmembers; i++)
	{
		int			t = assign[i];

		if (first[t] < 0 || order[i] < first[t])
			first[t] = order[i];
	}
	for (int t = 0; t < nteams; t++)
	{
		int			j = t;

		/* insertion by (has players, sum, earliest player); keys are distinct */
		while (j > 0)
		{
			int			u = rank[j - 1];
			int			before;

			if ((first[u] < 0) != (first[t] < 0))
				before = first[u] >= 0;
			else if (first[t] < 0)
				before = u < t;
			else if (sum[u] != sum[t])
				before = sum[u] < sum[t];
			else
				before = first[u] < first[t];
			if (before)
				break;
			rank[j] = u;
			j--;
		}
		rank[j] = t;
	}
	for (int j = 0; j < nteams; j++)
		number[rank[j]] = j + 1;
	for (int i = 0; i < nmembers; i++)
		teams_out[order[i]] = number[assign[i]];
}

/*
 * Split a match into teams; see the file header.  Teams are numbered by
 * ascending rating sum (ties: the team holding the earliest listed player
 * first); teams holding only computer players get the highest numbers and
 * appear nowhere in teams_out.  team_size = 1 therefore numbers the
 * players 1..n in rating order, ties in input order.
 */
MMStatus
mm_teams_split(const MMConfig *cfg, int nmembers, const double *ratings,
			   int *teams_out)
{
	int			nteams;
	int			team_size;
	int			k;
	int			order[MM_TEAMS_MAX_K];	/* search position -> input index */
	double		val[MM_TEAMS_MAX_K];	/* ratings in search order */
	int			assign[MM_TEAMS_MAX_K]; /* search position -> team */
	double		sum[MM_TEAMS_MAX_K];
	int			count[MM_TEAMS_MAX_K];

	if (ratings == NULL || teams_out == NULL)
		return MM_ERR_ARGUMENT;
	nteams = cfg->teams;
	team_size = cfg->team_size;
	k = nteams * team_size;
	if (k > MM_TEAMS_MAX_K || nmembers < 1 || nmembers > k)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < nmembers; i++)
		if (!isfinite(ratings[i]))
			return MM_ERR_ARGUMENT;

	if (team_size == 1)
	{
		/* one player a team: its number is its place in rating order, ties in input order */
		for (int i = 0; i < nmembers; i++)
		{
			int			before = 0;

			for (int j = 0; j < nmembers; j++)
				if (ratings[j] < ratings[i] || (ratings[j] == ratings[i] && j < i))
					before++;
			teams_out[i] = before + 1;
		}
		return MM_OK;
	}

	/* search order: descending rating, ties by input order (stable) */
	order_by_rating(nmembers, ratings, order);
	for (int i = 0; i < nmembers; i++)
		val[i] = ratings[order[i]];

	if (k <= MM_TEAMS_EXACT_MAX)
		split_exact(nteams, team_size, nmembers, val, assign, sum);
	else if (split_greedy(nteams, team_size, nmembers, val, assign, sum,
						  count) != MM_OK)
		return MM_ERR_INTERRUPTED;

	number_teams(nteams, nmembers, order, assign, sum, teams_out);
	return MM_OK;
}

/*
 * Split a smaller match of n real players (fewer than k, no computer
 * player) into teams whose sizes differ by at most one: each of the
 * configured teams gets n / teams players or one more (team_size 1: every
 * player is a team of his own).  Players in descending rating order join
 * the team with the smallest rating sum that has room; at most n % teams
 * teams take the extra player, so every team ends at its size.  Numbered
 * as mm_teams_split numbers them.
 */
MMStatus
mm_teams_split_even(const MMConfig *cfg, int n, const double *ratings,
					int *teams_out)
{
	int			nteams = cfg->team_size == 1 ? n : cfg->teams;
	int			base;
	int			extra;
	int			big = 0;
	int			order[MM_TEAMS_MAX_K];
	int			assign[MM_TEAMS_MAX_K];
	double		sum[MM_TEAMS_MAX_K];
	int			count[MM_TEAMS_MAX_K];

	if (ratings == NULL || teams_out == NULL || n < 1 ||
		n >= mm_config_k(cfg) || n > MM_TEAMS_MAX_K)
		return MM_ERR_ARGUMENT;
	for (int i = 0; i < n; i++)
		if (!isfinite(ratings[i]))
			return MM_ERR_ARGUMENT;
	base = n / nteams;
	extra = n % nteams;
	order_by_rating(n, ratings, order);
	for (int t = 0; t < nteams; t++)
	{
		sum[t] = 0.0;
		count[t] = 0;
	}
	for (int i = 0; i < n; i++)
	{
		int			bt = -1;

		for (int t = 0; t < nteams; t++)
			if ((count[t] < base || (count[t] == base && big < extra)) &&
				(bt < 0 || sum[t] < sum[bt]))
				bt = t;
		if (count[bt] == base)
			big++;
		assign[i] = bt;
		count[bt]++;
		sum[bt] += ratings[order[i]];
	}
	number_teams(nteams, n, order, assign, sum, teams_out);
	return MM_OK;
}
