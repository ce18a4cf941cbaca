/*
 * criteria.c
 *		Several criteria (Schlup, eq. 1 with D > 1) on simulated traffic:
 *		greedy, multi_queue on the rating alone and multi_queue over every
 *		criterion (fixed grids and "auto"), against the generalised eq. 7.
 *		Also the core's speed per arrival with D = 1 .. 4.  Usage:
 *		criteria ARRIVALS.  Prints markdown.
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A Poisson stream at rate per second; every value (rating and criteria) uniform. */
static void
make_stream(MMArrival *a, double *crit, int n, int ncrit, double rate, uint64_t seed)
{
	uint64_t	s = seed;
	double		t = 0;

	for (int i = 0; i < n; i++)
	{
		t += -log(1.0 - uniform(&s)) / rate;
		a[i].id = i;
		a[i].arrival = t;
		a[i].rating = uniform(&s);
		for (int d = 0; d < ncrit; d++)
			crit[(size_t) i * ncrit + d] = uniform(&s);
	}
}

static MMConfig
config(MMAlgorithm algo, int k, int ncrit, double max_wait)
{
	MMConfig	c;

	mm_config_init(&c, algo);
	c.teams = k;
	mm_config_set_max_wait(&c, max_wait);
	c.criteria.n = ncrit;
	return c;
}

/* The generalised eq. 7 for the ranges r[0 .. dims) with f = k / dims. */
static double
eq7(int k, int dims, const int *r, double a, double max_wait)
{
	double		c = 0;
	double		cells = 1;

	for (int d = 0; d < dims; d++)
	{
		c += (double) k / dims * (k - 1) / ((k + 1) * (double) r[d]);
		cells *= r[d];
	}
	return c + cells * k * (k - 1) / (2 * a * max_wait);
}

/* Simulate; print a row: cost per game (criteria + wait), mean and p95 wait. */
static void
row(const char *name, const char *param, const MMConfig *c, const MMArrival *a,
	const double *crit, int n, double predicted)
{
	MMOutcome  *o = malloc(sizeof(MMOutcome) * n);
	double	   *w = malloc(sizeof(double) * n);
	MMSimSummary s;
	MMStreamData data = {.criteria = crit};
	int			m = 0;

	if (o == NULL || w == NULL || mm_simulate(c, a, &data, n, o, &s) != MM_OK)
	{
		printf("| %s | %s | failed | | | | |\n", name, param);
		exit(1);
	}
	for (int i = 0; i < n; i++)
		if (o[i].match_no > 0)
			w[m++] = o[i].matched_at - a[i].arrival;
	for (int i = 1; i < m; i++)
	{
		double		v = w[i];
		int			j = i;

		for (; j > 0 && w[j - 1] > v; j--)
			w[j] = w[j - 1];
		w[j] = v;
	}
	printf("| %s | %s | %.4f | %.4f | %.4f | ", name, param, s.cost / s.games,
		   s.criteria_cost / s.games, s.wait_cost / s.games);
	if (isnan(predicted))
		printf("|");
	else
		printf("%.4f |", predicted);
	printf(" %.2f | %.2f |\n", s.mean_wait, m > 0 ? w[(int) (0.95 * (m - 1))] : 0.0);
	free(o);
	free(w);
}

/* Arrivals per second of wall time simulating multi_queue with dims criteria. */
static double
speed(int n, int dims)
{
	MMArrival  *a = malloc(sizeof(MMArrival) * n);
	double	   *crit = malloc(sizeof(double) * (size_t) n * (dims > 1 ? dims - 1 : 1));
	MMConfig	c = config(MM_ALGO_MULTI_QUEUE, 2, dims - 1, 5.0);
	struct timespec t0;
	struct timespec t1;
	MMSimSummary s;
	MMStreamData data = {.criteria = crit};
	double		best = INFINITY;

	make_stream(a, crit, n, dims - 1, 10.0, 7);
	c.multi_queue.ranges = 3;
	for (int rep = 0; rep < 5; rep++)
	{
		double		dt;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (mm_simulate(&c, a, dims > 1 ? &data : NULL, n, NULL, &s) != MM_OK)
			exit(1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (dt < best)
			best = dt;
	}
	free(a);
	free(crit);
	return n / best;
}

int
main(int argc, char **argv)
{
	int			n = argc > 1 ? atoi(argv[1]) : 200000;
	double		max_wait = 5.0;
	const double rates[] = {1.0, 10.0, 100.0};
	const int	ks[] = {2, 4};

	if (n < 100)
		return 1;
	for (int dims = 2; dims <= 3; dims++)
		for (int ki = 0; ki < 2; ki++)
			for (int ri = 0; ri < 3; ri++)
			{
				int			k = ks[ki];
				double		rate = rates[ri];
				int			nc = dims - 1;
				MMArrival  *a = malloc(sizeof(MMArrival) * n);
				double	   *crit = malloc(sizeof(double) * (size_t) n * nc);
				MMConfig	c;
				int			r[MM_MAX_CRITERIA];
				char		param[64];
				double		best = INFINITY;
				int			best_r = 0;

				make_stream(a, crit, n, nc, rate, 1000 + dims * 100 + k * 10 + ri);
				printf("\n### D = %d criteria, k = %d, %g arrivals/s, max_wait %g s\n\n", dims, k, rate, max_wait);
				printf("| algorithm | ranges | cost/game | criteria | wait | eq. 7 (D) | mean wait s | p95 wait s |\n");
				printf("|---|---|---|---|---|---|---|---|\n");

				c = config(MM_ALGO_GREEDY, k, nc, max_wait);
				row("greedy", "-", &c, a, crit, n, NAN);

				/* multi_queue on the rating alone, costed on every criterion */
				c = config(MM_ALGO_MULTI_QUEUE, k, nc, max_wait);
				c.criteria.ranges[1] = 1;
				if (nc > 1)
					c.criteria.ranges[2] = 1;
				c.multi_queue.ranges = 0;
				c.arrival_rate = rate;
				{
					MMConfig	one = config(MM_ALGO_MULTI_QUEUE, k, 0, max_wait);

					one.arrival_rate = rate;
					c.multi_queue.ranges = mm_auto_ranges(&one);
				}
				snprintf(param, sizeof(param), "rating only: %d", c.multi_queue.ranges);
				row("multi_queue", param, &c, a, crit, n, NAN);

				/* the same grid side in every criterion */
				for (int side = 1; side <= 6; side++)
				{
					MMSimSummary s;
					MMStreamData data = {.criteria = crit};

					c = config(MM_ALGO_MULTI_QUEUE, k, nc, max_wait);
					c.multi_queue.ranges = side;
					if (mm_simulate(&c, a, &data, n, NULL, &s) != MM_OK)
						return 1;
					if (s.cost / s.games < best)
					{
						best = s.cost / s.games;
						best_r = side;
					}
				}
				c = config(MM_ALGO_MULTI_QUEUE, k, nc, max_wait);
				c.multi_queue.ranges = best_r;
				for (int d = 0; d < dims; d++)
					r[d] = best_r;
				snprintf(param, sizeof(param), "best of 1..6 per side: %d", best_r);
				row("multi_queue", param, &c, a, crit, n, eq7(k, dims, r, rate, max_wait));

				c = config(MM_ALGO_MULTI_QUEUE, k, nc, max_wait);
				c.arrival_rate = rate;
				mm_criteria_ranges(&c, r);
				{
					int			len = snprintf(param, sizeof(param), "auto: ");

					for (int d = 0; d < dims; d++)
						len += snprintf(param + len, sizeof(param) - len, "%s%d", d ? " x " : "", r[d]);
				}
				row("multi_queue", param, &c, a, crit, n, eq7(k, dims, r, rate, max_wait));
				free(a);
				free(crit);
			}

	printf("\n### Speed: multi_queue, k = 2, 3 ranges per criterion, 10 arrivals/s, %d arrivals\n\n", n);
	printf("| criteria D | arrivals simulated per second (best of 5) |\n|---|---|\n");
	for (int dims = 1; dims <= 4; dims++)
		printf("| %d | %.2f million |\n", dims, speed(n, dims) / 1e6);
	return 0;
}
