/*
 * algorithms.c
 *		Every algorithm on the same simulated traffic: for each, the
 *		parameter (from a small grid) with the least cost per game
 *		(Schlup's eq. 1), with its mean and 95th-percentile wait and the
 *		share of players who got computer players.  Three scenarios:
 *		Schlup's (k = 2, 10 arrivals/s, max_wait 5 s), a quiet 1v1 queue
 *		(0.2/s, max_wait 60 s) and a 5v5 queue (k = 10, 10/s, max_wait
 *		60 s).  For k = 2 also the offline optimum (OPT, bot cost 4, as the
 *		online algorithms pay) and each algorithm's cost relative to it.
 *
 * Usage: algorithms [ARRIVALS]     prints Markdown tables.
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Scenario
{
	const char *name;
	int			teams;
	int			team_size;
	double		rate;
	double		max_wait;
} Scenario;

/* Result of one configuration. */
typedef struct Outcome
{
	double		per_game;
	double		mean_wait;
	double		p95_wait;
	double		bot_share;		/* players whose game had computer players */
} Outcome;

static int
dbl_cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/* Simulate cfg over the stream; false on failure. */
static int
run(const MMConfig *cfg, const MMArrival *a, int n, MMOutcome *o, double *waits,
	Outcome *out)
{
	MMSimSummary s;
	int64_t		with_bots = 0;
	int64_t    *bots_of_match;

	if (mm_simulate(cfg, a, NULL, n, o, &s) != MM_OK || s.games == 0)
		return 0;
	bots_of_match = calloc((size_t) s.games + 1, sizeof(int64_t));
	if (bots_of_match == NULL)
		return 0;
	/* a match with fewer real players than k had bots */
	for (int i = 0; i < n; i++)
		if (o[i].match_no > 0)
			bots_of_match[o[i].match_no]++;
	for (int i = 0; i < n; i++)
	{
		waits[i] = o[i].matched_at - a[i].arrival;
		if (o[i].match_no == 0 || bots_of_match[o[i].match_no] < mm_config_k(cfg))
			with_bots++;
	}
	free(bots_of_match);
	qsort(waits, n, sizeof(double), dbl_cmp);
	out->per_game = s.cost / s.games;
	out->mean_wait = s.mean_wait;
	out->p95_wait = waits[(int) floor(0.95 * (n - 1))];
	out->bot_share = (double) with_bots / n;
	return 1;
}

int
main(int argc, char **argv)
{
	int			n = argc > 1 ? atoi(argv[1]) : 20000;
	static const Scenario scenarios[] = {
		{"Schlup's setting: 1v1, 10 arrivals/s, max_wait 5 s", 2, 1, 10.0, 5.0},
		{"quiet 1v1: 0.2 arrivals/s, max_wait 60 s", 2, 1, 0.2, 60.0},
		{"5v5: 10 arrivals/s, max_wait 60 s", 2, 5, 10.0, 60.0},
	};
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	MMOutcome  *o = malloc(sizeof(MMOutcome) * (size_t) n);
	double	   *waits = malloc(sizeof(double) * (size_t) n);

	if (a == NULL || o == NULL || waits == NULL)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t sc = 0; sc < sizeof(scenarios) / sizeof(scenarios[0]); sc++)
	{
		const Scenario *S = &scenarios[sc];
		uint64_t	state = 42 + sc;
		double		t = 0.0;
		double		opt = NAN;
		int			k = S->teams * S->team_size;

		for (int i = 0; i < n; i++)
		{
			t += -log(1.0 - uniform(&state)) / S->rate;
			a[i].id = i;
			a[i].rating = uniform(&state);
			a[i].arrival = t;
		}
		if (k == 2)
			mm_optimal_pairs(a, n, S->max_wait, 4.0, NULL, &opt);

		printf("\n### %s (%d arrivals)\n\n", S->name, n);
		printf("| algorithm | best parameter | cost per game |%s mean wait (s) | p95 wait (s) | players with bots |\n",
			   k == 2 ? " / OPT |" : "");
		printf("|---|---|---:|%s---:|---:|---:|\n", k == 2 ? "---:|" : "");
		for (int alg = MM_ALGO_GREEDY; alg < MM_NUM_ALGORITHMS; alg++)
		{
			Outcome		best = {INFINITY, 0, 0, 0};
			char		best_param[96] = "";
			int			ngrid = 1;

			switch (alg)
			{
				case MM_ALGO_PERIODIC:
				case MM_ALGO_MULTI_QUEUE:
				case MM_ALGO_DIFFERENCE_WAIT:
					ngrid = 8;
					break;
				case MM_ALGO_WINDOW:
					ngrid = 4 * 3 * 2;
					break;
				case MM_ALGO_CLUSTER:
					ngrid = 5 * 3;
					break;
				case MM_ALGO_OPTIMIZE:
					ngrid = 3;
					break;
			}
			for (int g = 0; g < ngrid; g++)
			{
				MMConfig	c;
				Outcome		r;
				char		param[96] = "-";

				mm_config_init(&c, (MMAlgorithm) alg);
				c.teams = S->teams;
				c.team_size = S->team_size;
				mm_config_set_max_wait(&c, S->max_wait);
				c.recheck = 1.0;
				if (alg == MM_ALGO_PERIODIC)
				{
					c.periodic.batch = k << g;
					snprintf(param, sizeof(param), "batch %d", c.periodic.batch);
				}
				else if (alg == MM_ALGO_MULTI_QUEUE)
				{
					static const int r[] = {1, 2, 3, 4, 6, 8, 12, 16};

					c.multi_queue.ranges = r[g];
					snprintf(param, sizeof(param), "ranges %d", c.multi_queue.ranges);
				}
				else if (alg == MM_ALGO_DIFFERENCE_WAIT)
				{
					c.difference_wait.wait_factor = S->max_wait * pow(2.0, g - 4);
					snprintf(param, sizeof(param), "wait_factor %g", c.difference_wait.wait_factor);
				}
				else if (alg == MM_ALGO_WINDOW)
				{
					static const double w0[] = {0.01, 0.02, 0.05, 0.1};
					static const double cap[] = {0.2, 0.5, 1.0};

					c.window.width = w0[g % 4];
					c.window.max = cap[(g / 4) % 3];
					c.window.percentile = g / 12;
					c.window.widen = (c.window.max - c.window.width) / S->max_wait;
					snprintf(param, sizeof(param), "window %g, max_window %g%s",
							 c.window.width, c.window.max, c.window.percentile ? ", percentile" : "");
				}
				else if (alg == MM_ALGO_CLUSTER)
				{
					static const double th[] = {0.01, 0.02, 0.05, 0.1, 0.2};
					static const double mid[] = {0.25, 0.5, 1.0};

					c.cluster.threshold = th[g % 5];
					c.cluster.midpoint = S->max_wait * mid[g / 5];
					c.cluster.steepness = 10.0 / S->max_wait;
					c.cluster.shift_auto = 1;
					snprintf(param, sizeof(param), "threshold %g, midpoint %g s",
							 c.cluster.threshold, c.cluster.midpoint);
				}
				else if (alg == MM_ALGO_OPTIMIZE)
				{
					/* skill factors only (no pings or parties in this traffic) */
					c.recheck = S->max_wait / (double) (4 << g);
					c.optimize.weights.balance = 1;
					c.optimize.weights.spread = 1;
					c.optimize.weights.premades = 0;
					c.optimize.weights.ping = 0;
					c.optimize.weights.variation = 0;
					c.optimize.restarts = 0;
					c.optimize.budget_ms = 1e6;
					c.optimize.seed = 1;
					snprintf(param, sizeof(param), "round %g s", c.recheck);
				}
				if (run(&c, a, n, o, waits, &r) && r.per_game < best.per_game)
				{
					best = r;
					memcpy(best_param, param, sizeof(param));
				}
			}
			if (k == 2)
			{
				/* OPT's total over the games an online algorithm plays: n / 2 games at most */
				double		games = n / 2.0;

				printf("| %s | %s | %.4f | %.2f | %.2f | %.2f | %.1f %% |\n", mm_algorithm_name(alg),
					   best_param, best.per_game, best.per_game / (opt / games),
					   best.mean_wait, best.p95_wait, 100 * best.bot_share);
			}
			else
				printf("| %s | %s | %.4f | %.2f | %.2f | %.1f %% |\n", mm_algorithm_name(alg),
					   best_param, best.per_game, best.mean_wait, best.p95_wait,
					   100 * best.bot_share);
		}
		if (k == 2)
			printf("\nOPT: %.4f per game of two (its total over n / 2 games).\n", opt / (n / 2.0));
	}
	free(a);
	free(o);
	free(waits);
	return 0;
}
