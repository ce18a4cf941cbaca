/*
 * opt_speed.c
 *		Time mm_optimal_pairs on Poisson streams (uniform ratings), or on
 *		dense ones: every player at one instant, rated 0 or 1.
 *
 * Build from the repository root with gcc -std=gnu99 -O2, this file and
 * the core's C files (src/core), -lm (doc/optimal.md has the command); run
 *	/tmp/opt_speed [n ...]		(default: 2000 10000; rate 10/s, max_wait 5)
 *	/tmp/opt_speed dense n ...	(the dense streams)
 *
 * Prints, per n and bot cost: the admissible pairs, the seconds taken,
 * OPT's total cost and the cost per game.
 */
#include "../src/core/mm_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_random.h"

/* Time one stream of n players for both bot costs. */
static int
run(int n, double rate, double max_wait, uint64_t seed, int dense)
{
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	int		   *p = malloc(sizeof(int) * (size_t) n);
	double		t = 0.0;
	long long	pairs = 0;

	if (a == NULL || p == NULL)
	{
		free(a);
		free(p);
		return 1;
	}
	for (int i = 0; i < n; i++)
	{
		t += -log(1.0 - uniform(&seed)) / rate;
		a[i].id = i + 1;
		a[i].arrival = dense ? 0.0 : t;
		a[i].rating = dense ? i % 2 : uniform(&seed);
	}
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n && a[j].arrival - a[i].arrival <= max_wait; j++)
			pairs++;
	for (int b = 3; b <= 4; b++)
	{
		double		cost;
		double		t0 = now_sec();
		MMStatus	st = mm_optimal_pairs(a, n, max_wait, b, p, &cost);
		double		t1 = now_sec();
		int			games = 0;

		if (st != MM_OK)
		{
			fprintf(stderr, "mm_optimal_pairs failed: %d\n", (int) st);
			free(a);
			free(p);
			return 1;
		}
		for (int i = 0; i < n; i++)
			if (p[i] < i)		/* a bot game or the second of a pair */
				games++;
		printf("n=%d %s max_wait=%g bot=%d: %lld admissible pairs, %.3f s, OPT %.4f, %.4f per game\n",
			   n, dense ? "dense" : "rate=10", max_wait, b, pairs, t1 - t0, cost, cost / games);
	}
	free(a);
	free(p);
	return 0;
}

/* Entry point: the sizes to time come from the command line. */
int
main(int argc, char **argv)
{
	int			rc = 0;
	int			dense = argc > 1 && strcmp(argv[1], "dense") == 0;

	if (argc < 2)
	{
		rc |= run(2000, 10.0, 5.0, 1, 0);
		rc |= run(10000, 10.0, 5.0, 2, 0);
	}
	for (int i = 1 + dense; i < argc; i++)
		rc |= run(atoi(argv[i]), 10.0, 5.0, (uint64_t) i, dense);
	return rc;
}
