/*
 * optimize.c
 *		How much the optimize algorithm's restarts buy.  The Awesomenauts
 *		write-up says that "the difference between trying a couple of times
 *		and trying tens of thousands of times is surprisingly small"; this
 *		measures the round score after the sort-and-group start only, after
 *		the first climb, and with 1 to 1024 restarts, on generated rounds of
 *		120 players in 3v3 (k = 6): skills, four regions with pings to every
 *		region, about 20 % of the players in premades of 2 or 3, and pairs
 *		who met in their previous match.
 *
 * Usage: optimize [ROUNDS [VARIANTS]]     prints a Markdown table (default
 * 5 rounds, all 9 variants; fewer variants stop at fewer restarts).
 */
#include "../src/core/mm_internal.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PLAYERS		120
#define NREGIONS	4

static const char *const region_names[NREGIONS] = {"Europe", "North America", "South America", "Oceania"};
/* share of the players in each region */
static const double region_share[NREGIONS] = {0.50, 0.30, 0.12, 0.08};
/* one-way ms from a player in region a to the server region b (a player's own region: 15-50 ms) */
static const double region_ms[NREGIONS][NREGIONS] = {
	{0, 45, 100, 150},
	{45, 0, 70, 90},
	{100, 70, 0, 160},
	{150, 90, 160, 0},
};

/* A normal deviate (Box-Muller). */
static double
normal(uint64_t *s)
{
	double		u = uniform(s);
	double		v = uniform(s);

	return sqrt(-2.0 * log(1.0 - u)) * cos(2 * M_PI * v);
}

static double
clamp01(double x)
{
	return x < 0 ? 0 : (x > 1 ? 1 : x);
}

/* One generated round: tickets, ping rows, met pairs. */
typedef struct Round
{
	MMTicket	tickets[PLAYERS];
	float		ping[PLAYERS * NREGIONS];
	MMMetPair	met[PLAYERS * 6];
	int			nmet;
	int			region[PLAYERS];
} Round;

/*
 * Players arrive in the round's order.  A premade shares a region and has
 * similar skills; some players have no ping data; a third of the players
 * come in groups of six from one previous 3v3 match.
 */
static void
make_round(Round *R, uint64_t seed)
{
	uint64_t	s = seed;
	int			i = 0;
	int			party = 0;
	int			order[PLAYERS];

	while (i < PLAYERS)
	{
		double		u = uniform(&s);
		int			reg = 0;
		int			size = 1;
		double		skill = clamp01(0.5 + 0.18 * normal(&s));
		double		acc = 0;

		for (reg = 0; reg < NREGIONS - 1; reg++)
		{
			acc += region_share[reg];
			if (u < acc)
				break;
		}
		/* about 20 % of the players in premades: 2 or 3 */
		u = uniform(&s);
		if (u < 0.06)
			size = 3;
		else if (u < 0.12)
			size = 2;
		if (i + size > PLAYERS)
			size = PLAYERS - i;
		for (int m = 0; m < size; m++, i++)
		{
			MMTicket   *t = &R->tickets[i];

			t->id = (int64_t) (seed % 1000000) * 1000 + i + 1;
			t->rating = clamp01(skill + (size > 1 ? 0.05 * normal(&s) : 0));
			t->arrival = 0.01 * i;
			t->group = -1;
			t->party = size > 1 ? party : -1;
			t->attr = i;
			R->region[i] = reg;
			for (int r = 0; r < NREGIONS; r++)
			{
				double		base = r == reg ? 15 + 35 * uniform(&s) : region_ms[reg][r] + 20 * uniform(&s);

				R->ping[i * NREGIONS + r] = (float) base;
			}
			/* some players' pings to a far region are unknown; 3 % have no data at all */
			if (uniform(&s) < 0.2)
				R->ping[i * NREGIONS + (reg + 2) % NREGIONS] = NAN;
			if (uniform(&s) < 0.03)
				t->attr = -1;
		}
		if (size > 1)
			party++;
	}

	/* previous matches: shuffled groups of six covering a third of the players */
	for (int j = 0; j < PLAYERS; j++)
		order[j] = j;
	for (int j = PLAYERS - 1; j > 0; j--)
	{
		int			x = (int) (next_random(&s) % (uint64_t) (j + 1));
		int			t = order[j];

		order[j] = order[x];
		order[x] = t;
	}
	R->nmet = 0;
	for (int g = 0; g + 6 <= PLAYERS / 3; g += 6)
		for (int a = 0; a < 6; a++)
			for (int b = a + 1; b < 6; b++)
			{
				int64_t		ia = R->tickets[order[g + a]].id;
				int64_t		ib = R->tickets[order[g + b]].id;
				MMMetPair  *p = &R->met[R->nmet++];

				p->a = ia < ib ? ia : ib;
				p->b = ia < ib ? ib : ia;
				p->relation = (a < 3) == (b < 3);
			}
	qsort(R->met, R->nmet, sizeof(MMMetPair), mm_met_pair_cmp);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One variant of the search. */
typedef struct Variant
{
	const char *name;
	int			restarts;
	int			max_swaps;
} Variant;

static const Variant variants[] = {
	{"sort-and-group start only", 0, 0},
	{"start + first climb", 0, -1},
	{"1 restart", 1, -1},
	{"2 restarts", 2, -1},
	{"4 restarts", 4, -1},
	{"8 restarts", 8, -1},
	{"32 restarts", 32, -1},
	{"128 restarts", 128, -1},
	{"1024 restarts", 1024, -1},
};
#define NVARIANTS ((int) (sizeof(variants) / sizeof(variants[0])))

int
main(int argc, char **argv)
{
	int			rounds = argc > 1 ? atoi(argv[1]) : 5;
	int			nvar = argc > 2 ? atoi(argv[2]) : NVARIANTS;
	MMConfig	cfg;
	static Round R;
	MMMatch		matches[PLAYERS];
	int			members[PLAYERS];
	int			teams[PLAYERS];
	int			expired[PLAYERS];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	double		score[NVARIANTS] = {0};
	double		smin[NVARIANTS];
	double		smax[NVARIANTS];
	double		ms[NVARIANTS] = {0};
	double		nm[NVARIANTS] = {0};
	double		climbs[NVARIANTS] = {0};
	double		best_gap[NVARIANTS] = {0};	/* below the best found in that round */
	double		per_round[NVARIANTS][64];

	if (rounds < 1 || rounds > 64 || nvar < 4 || nvar > NVARIANTS)
	{
		fprintf(stderr, "usage: optimize [ROUNDS 1..64 [VARIANTS 4..%d]]\n", NVARIANTS);
		return 2;
	}
	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.team_size = 3;
	mm_config_set_max_wait(&cfg, 600);
	cfg.recheck = 120;
	/* ping and balance weigh most, premades react strongly so weigh less, variation least */
	cfg.optimize.weights.balance = 2.0;
	cfg.optimize.weights.spread = 1.0;
	cfg.optimize.weights.premades = 0.5;
	cfg.optimize.weights.ping = 2.0;
	cfg.optimize.weights.variation = 0.3;
	cfg.optimize.weights.hosts = 0.5;
	cfg.optimize.skill_lo = 0.1;
	cfg.optimize.skill_hi = 0.9;
	cfg.optimize.ping_max = 250;
	cfg.optimize.host_ping = 150;
	cfg.optimize.budget_ms = 1e9;		/* no cut: every variant does all its restarts */
	cfg.optimize.seed = 20240601;

	for (int v = 0; v < nvar; v++)
	{
		smin[v] = INFINITY;
		smax[v] = -INFINITY;
	}
	for (int r = 0; r < rounds; r++)
	{
		MMPool		pool;
		double		best = -INFINITY;

		make_round(&R, 1000 + (uint64_t) r);
		memset(&pool, 0, sizeof(pool));
		pool.tickets = R.tickets;
		pool.ntickets = PLAYERS;
		pool.ping = R.ping;
		pool.nregions = NREGIONS;
		pool.met = R.met;
		pool.nmet = R.nmet;
		for (int v = 0; v < nvar; v++)
		{
			double		s;
			int			c;
			double		t0;
			MMStatus	st;

			cfg.optimize.restarts = variants[v].restarts;
			res.nmatches = res.nexpired = 0;
			t0 = now_ms();
			st = mm_optimize_search(&cfg, &pool, 1.2, &res, &s, &c, variants[v].max_swaps);
			ms[v] += now_ms() - t0;
			if (st != MM_OK)
			{
				fprintf(stderr, "round %d variant %d failed: %d\n", r, v, (int) st);
				return 1;
			}
			score[v] += s;
			per_round[v][r] = s;
			smin[v] = s < smin[v] ? s : smin[v];
			smax[v] = s > smax[v] ? s : smax[v];
			nm[v] += res.nmatches;
			climbs[v] += c;
			best = s > best ? s : best;
		}
		for (int v = 0; v < nvar; v++)
			best_gap[v] += best - per_round[v][r];
	}

	printf("\n### %d rounds of %d players, 3v3\n\n", rounds, PLAYERS);
	printf("Regions (share of players): ");
	for (int g = 0; g < NREGIONS; g++)
		printf("%s%s %.0f %%", g ? ", " : "", region_names[g], 100 * region_share[g]);
	printf(". Weights: balance %.1f, spread %.1f, premades %.1f, ping %.1f, variation %.1f, hosts %.1f; "
		   "skill cap [%.1f, %.1f], ping_max %.0f ms, host_ping %.0f ms.\n\n",
		   cfg.optimize.weights.balance, cfg.optimize.weights.spread, cfg.optimize.weights.premades, cfg.optimize.weights.ping, cfg.optimize.weights.variation, cfg.optimize.weights.hosts,
		   cfg.optimize.skill_lo, cfg.optimize.skill_hi, cfg.optimize.ping_max, cfg.optimize.host_ping);
	printf("| search | mean round score | min | max | gain over start | below best of the round | matches | swaps | time per round (ms) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int v = 0; v < nvar; v++)
		printf("| %s | %.4f | %.4f | %.4f | %+.4f | %.4f | %.1f | %.0f | %.1f |\n",
			   variants[v].name, score[v] / rounds, smin[v], smax[v],
			   (score[v] - score[0]) / rounds, best_gap[v] / rounds,
			   nm[v] / rounds, climbs[v] / rounds, ms[v] / rounds);
	{
		double		climb = (score[1] - score[0]) / rounds;
		double		two = (score[3] - score[1]) / rounds;
		double		all = (score[nvar - 1] - score[1]) / rounds;

		printf("\nThe first climb adds %.4f to the start's score; 2 restarts add %.4f more, %d restarts %.4f more "
			   "(%.0f %% of the climb's gain); going from 2 to %d restarts adds %.4f.\n",
			   climb, two, variants[nvar - 1].restarts, all, climb > 0 ? 100 * all / climb : 0.0, variants[nvar - 1].restarts, all - two);
	}
	return 0;
}
