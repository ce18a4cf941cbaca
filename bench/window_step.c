/*
 * window_step.c
 *		Time one window step over n waiting tickets (uniform ratings, all
 *		arrived at once) with rematch penalties: met random pairs of them
 *		met recently.
 *
 * Build from the repository root with gcc -std=gnu99 -O2, this file and
 * the core's C files (src/core), -lm (doc/algorithms.md has the command); run
 *	/tmp/window_step n teams team_size width met penalty
 *
 * Prints the matches formed and the seconds the step took.
 */
#include "../src/core/mm_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_random.h"

int
main(int argc, char **argv)
{
	MMConfig	cfg;
	MMPool		pool;
	MMResult	res;
	MMTicket   *t;
	MMMetPair  *met;
	uint64_t	seed = 1;
	int			n,
				nmet,
				m = 0;
	double		t0,
				t1;
	MMStatus	st;

	if (argc != 7)
	{
		fprintf(stderr, "usage: %s n teams team_size width met penalty\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	nmet = atoi(argv[5]);
	mm_config_init(&cfg, MM_ALGO_WINDOW);
	cfg.teams = atoi(argv[2]);
	cfg.team_size = atoi(argv[3]);
	mm_config_set_max_wait(&cfg, 100.0);
	cfg.window.width = atof(argv[4]);
	cfg.window.max = 1.0;
	cfg.window.widen = 0.01;
	cfg.window.rematch_penalty = atof(argv[6]);
	if (n < 2 || nmet < 0 || mm_config_check(&cfg) != MM_OK)
	{
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	t = calloc((size_t) n, sizeof(MMTicket));
	met = calloc((size_t) nmet + 1, sizeof(MMMetPair));
	memset(&pool, 0, sizeof(pool));
	memset(&res, 0, sizeof(res));
	pool.groups = calloc((size_t) n, sizeof(MMGroup));
	res.matches = calloc((size_t) n, sizeof(MMMatch));
	res.members = calloc((size_t) n, sizeof(int));
	res.teams = calloc((size_t) n, sizeof(int));
	res.expired = calloc((size_t) n, sizeof(int));
	if (t == NULL || met == NULL || pool.groups == NULL || res.matches == NULL ||
		res.members == NULL || res.teams == NULL || res.expired == NULL)
		return 1;
	for (int i = 0; i < n; i++)
	{
		t[i].id = i + 1;
		t[i].rating = uniform(&seed);
		t[i].group = t[i].party = t[i].attr = -1;
	}
	for (int i = 0; i < nmet; i++)
	{
		int64_t		a = 1 + (int64_t) (uniform(&seed) * n);
		int64_t		b = 1 + (int64_t) (uniform(&seed) * (n - 1));

		if (b >= a)
			b++;
		met[i].a = a < b ? a : b;
		met[i].b = a < b ? b : a;
	}
	qsort(met, nmet, sizeof(MMMetPair), mm_met_pair_cmp);
	for (int i = 0; i < nmet; i++)
		if (m == 0 || mm_met_pair_cmp(&met[i], &met[m - 1]) != 0)
			met[m++] = met[i];
	pool.tickets = t;
	pool.ntickets = n;
	pool.ngroups_cap = n;
	pool.met = met;
	pool.nmet = m;
	t0 = now_sec();
	st = mm_step(&cfg, &pool, 0.5, &res);
	t1 = now_sec();
	if (st != MM_OK)
	{
		fprintf(stderr, "step failed: %d\n", (int) st);
		return 1;
	}
	printf("n %d k %d width %g met %d penalty %g: %d matches, %.3f s\n",
		   n, cfg.teams * cfg.team_size, cfg.window.width, m,
		   cfg.window.rematch_penalty, res.nmatches, t1 - t0);
	return 0;
}
