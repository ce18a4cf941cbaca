/*
 * schlup.c
 *		Reproduce Schlup, "Automatic Game Matching", through the matchmaker's
 *		core (k = 2, one criterion, uniform ratings, max_wait 5 s):
 *
 *		1. eq. 5 (periodic) and eq. 7 (multi_queue) against simulation at
 *		   arrival rate 10/s, and difference_wait over its wait factor; the
 *		   data of Figure 2 goes to a file for gnuplot.
 *		2. Table 3: the six arrival specs of Table 2 (constant 1, 3, 10;
 *		   rising 0..2, 0..6, 0..20), each algorithm with its best parameter,
 *		   cost divided by the offline optimum's (mm_optimal_pairs), averaged.
 *
 * Usage: schlup PLAYERS SEEDS FIGURE_DATA_FILE
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WAIT 5.0

/* Simulated cost (total) of one configuration on a stream; also per game. */
static double
sim_cost(MMConfig *cfg, const MMArrival *a, int n, double *per_game)
{
	MMSimSummary s;

	if (mm_simulate(cfg, a, NULL, n, NULL, &s) != MM_OK)
	{
		fprintf(stderr, "simulation failed\n");
		exit(1);
	}
	if (per_game)
		*per_game = s.games ? s.cost / s.games : 0;
	return s.cost;
}

/* A k = 2 configuration of one algorithm with bots at max_wait. */
static MMConfig
config(MMAlgorithm algo)
{
	MMConfig	c;

	mm_config_init(&c, algo);
	mm_config_set_max_wait(&c, MAX_WAIT);
	return c;
}

static const int batches[] = {2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 30, 40};
static const int ranges[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20};
static const double factors[] = {0, 0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16};
#define NPARAMS 12

/* Part 1: formulas against simulation at rate 10, and Figure 2's data. */
static void
part_formulas(int players, const char *figure)
{
	MMArrival  *a = make_schlup_stream(players, 10.0, 0, 7);
	FILE	   *f = fopen(figure, "w");
	double		aT = 10.0 * MAX_WAIT;

	if (f == NULL)
	{
		perror(figure);
		exit(1);
	}
	fprintf(f, "# param periodic_sim periodic_eq5 multi_queue_sim multi_queue_eq7 difference_wait_sim(wait_factor) greedy_sim\n");
	printf("### Eq. 5 and eq. 7 against simulation (k = 2, rate 10/s, max_wait 5 s, %d arrivals)\n\n", players);
	printf("| parameter | periodic n: simulated | eq. 5 | multi_queue r: simulated | eq. 7 | difference_wait wait_factor: simulated |\n");
	printf("|---:|---:|---:|---:|---:|---|\n");
	for (int i = 0; i < NPARAMS; i++)
	{
		MMConfig	p = config(MM_ALGO_PERIODIC);
		MMConfig	m = config(MM_ALGO_MULTI_QUEUE);
		MMConfig	d = config(MM_ALGO_DIFFERENCE_WAIT);
		MMConfig	g = config(MM_ALGO_GREEDY);
		double		ps, ms, ds, gs;
		int			n = batches[i];
		int			r = ranges[i];
		double		eq5 = 2.0 * 1 / (n + 1) + 2.0 * (n - 1) / (2 * aT);
		double		eq7 = 2.0 * 1 / (r * 3.0) + r * 2.0 * 1 / (2 * aT);

		p.periodic.batch = n;
		m.multi_queue.ranges = r;
		d.difference_wait.wait_factor = factors[i];
		sim_cost(&p, a, players, &ps);
		sim_cost(&m, a, players, &ms);
		sim_cost(&d, a, players, &ds);
		sim_cost(&g, a, players, &gs);
		printf("| n = %d, r = %d, f = %g | %.4f | %.4f | %.4f | %.4f | %.4f |\n",
			   n, r, factors[i], ps, eq5, ms, eq7, ds);
		fprintf(f, "%d %.6f %.6f %d %.6f %.6f %g %.6f %.6f\n", n, ps, eq5, r, ms, eq7, factors[i], ds, gs);
	}
	fclose(f);
	free(a);
}

/* Part 2: Table 3. */
static void
part_table3(int players, int seeds)
{
	static const struct
	{
		const char *name;
		double		rate;
		int			rising;
	}			specs[] = {
		{"constant 1", 1, 0}, {"constant 3", 3, 0}, {"constant 10", 10, 0},
		{"rising 0..2", 2, 1}, {"rising 0..6", 6, 1}, {"rising 0..20", 20, 1},
	};
	const char *names[] = {"greedy", "periodic", "multi_queue", "difference_wait"};
	double		sum[4] = {0};
	double		sum4[4] = {0};
	int			count = 0;

	printf("\n### Table 3: cost divided by the offline optimum (k = 2, max_wait 5 s, %d players per stream, %d seeds)\n\n",
		   players, seeds);
	printf("Each cell: the ratio with the best parameter for that stream (in brackets), OPT giving a lone player\n");
	printf("a computer player at arrival (cost 3). The last column divides by OPT with the computer player at\n");
	printf("max_wait instead (cost 4, as the online algorithms do), for the same best parameters.\n\n");
	printf("| stream | seed | greedy | periodic | multi_queue | difference_wait | OPT cost per game | ratios with OPT at cost 4 (G / P / MQ / DW) |\n");
	printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
		for (int seed = 1; seed <= seeds; seed++)
		{
			MMArrival  *a = make_schlup_stream(players, specs[s].rate, specs[s].rising, 1000 * s + seed);
			double		opt3, opt4;
			double		best[4];
			char		label[4][32];

			if (mm_optimal_pairs(a, players, MAX_WAIT, 3.0, NULL, &opt3) != MM_OK ||
				mm_optimal_pairs(a, players, MAX_WAIT, 4.0, NULL, &opt4) != MM_OK)
			{
				fprintf(stderr, "optimum failed\n");
				exit(1);
			}
			for (int alg = 0; alg < 4; alg++)
			{
				best[alg] = INFINITY;
				for (int i = 0; i < (alg == 0 ? 1 : NPARAMS); i++)
				{
					MMConfig	c = config((MMAlgorithm) alg);
					double		cost;

					c.periodic.batch = batches[i];
					c.multi_queue.ranges = ranges[i];
					c.difference_wait.wait_factor = factors[i];
					if (alg != MM_ALGO_PERIODIC)
						c.periodic.batch = 0;
					if (alg != MM_ALGO_MULTI_QUEUE)
						c.multi_queue.ranges = 0;
					cost = sim_cost(&c, a, players, NULL);
					if (cost < best[alg])
					{
						best[alg] = cost;
						if (alg == 0)
							snprintf(label[alg], sizeof(label[alg]), "-");
						else if (alg == 1)
							snprintf(label[alg], sizeof(label[alg]), "n=%d", batches[i]);
						else if (alg == 2)
							snprintf(label[alg], sizeof(label[alg]), "r=%d", ranges[i]);
						else
							snprintf(label[alg], sizeof(label[alg]), "f=%g", factors[i]);
					}
				}
				sum[alg] += best[alg] / opt3;
				sum4[alg] += best[alg] / opt4;
			}
			count++;
			printf("| %s | %d | %.3f | %.3f (%s) | %.3f (%s) | %.3f (%s) | %.4f | %.3f / %.3f / %.3f / %.3f |\n",
				   specs[s].name, seed, best[0] / opt3, best[1] / opt3, label[1],
				   best[2] / opt3, label[2], best[3] / opt3, label[3], opt3 / (players / 2.0),
				   best[0] / opt4, best[1] / opt4, best[2] / opt4, best[3] / opt4);
			free(a);
		}
	printf("\n| algorithm | averaged ratio (OPT cost 3) | averaged ratio (OPT cost 4) | Schlup, Table 3 |\n");
	printf("|---|---:|---:|---:|\n");
	{
		const double paper[4] = {2.04, 1.64, 1.41, 1.39};

		for (int alg = 0; alg < 4; alg++)
			printf("| %s | %.2f | %.2f | %.2f |\n", names[alg], sum[alg] / count, sum4[alg] / count, paper[alg]);
	}
}

int
main(int argc, char **argv)
{
	int			players = argc > 1 ? atoi(argv[1]) : 2000;
	int			seeds = argc > 2 ? atoi(argv[2]) : 2;
	const char *figure = argc > 3 ? argv[3] : "figure2.dat";

	part_formulas(100000, figure);
	part_table3(players, seeds);
	return 0;
}
