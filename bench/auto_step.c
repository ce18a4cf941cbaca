/*
 * auto_step.c
 *		Time one auto step (k = 2) over n waiting tickets with uniform
 *		ratings that arrived evenly within one second, at 4.9 s with
 *		max_wait 5 s: nobody has timed out and every pair is due, the worst
 *		case of a tick after a backlog.  The rate is the arrivals' (n per
 *		second); with "recent", the ratings of 200 more arrivals are the
 *		sample auto reads their density from.
 *
 * Build from the repository root:
 *	gcc -std=gnu99 -O2 -o /tmp/auto_step bench/auto_step.c src/core/[a-z]*.c -lm
 * and run
 *	/tmp/auto_step n [recent]
 *
 * Prints the matches formed, the next deadline and the seconds the step
 * took (the best of three, each on a fresh copy of the pool).
 */
#include "../src/core/mm_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_random.h"

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	MMConfig	cfg;
	MMPool		pool;
	MMResult	res;
	MMTicket   *t,
			   *copy;
	double		recent[200];
	uint64_t	seed = 1;
	int			n;
	double		best = INFINITY;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "recent") != 0) ||
		(n = atoi(argv[1])) < 2)
	{
		fprintf(stderr, "usage: %s n [recent]\n", argv[0]);
		return 2;
	}
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 5.0);
	cfg.arrival_rate = n;
	t = calloc((size_t) n, sizeof(MMTicket));
	copy = calloc((size_t) n, sizeof(MMTicket));
	memset(&res, 0, sizeof(res));
	res.matches = calloc((size_t) n, sizeof(MMMatch));
	res.members = calloc((size_t) n, sizeof(int));
	res.teams = calloc((size_t) n, sizeof(int));
	res.expired = calloc((size_t) n, sizeof(int));
	if (t == NULL || copy == NULL || res.matches == NULL || res.members == NULL ||
		res.teams == NULL || res.expired == NULL)
		return 1;
	for (int i = 0; i < n; i++)
	{
		t[i].id = i + 1;
		t[i].rating = uniform(&seed);
		t[i].arrival = (double) i / n;
		t[i].group = -1;
		t[i].party = -1;
		t[i].attr = -1;
		t[i].crow = -1;
	}
	if (argc == 3)
	{
		for (int i = 0; i < 200; i++)
			recent[i] = uniform(&seed);
		qsort(recent, 200, sizeof(double), cmp_double);
		cfg.recent = recent;
		cfg.nrecent = 200;
	}
	for (int run = 0; run < 3; run++)
	{
		double		t0,
					t1;
		MMStatus	st;

		memcpy(copy, t, sizeof(MMTicket) * (size_t) n);
		memset(&pool, 0, sizeof(pool));
		pool.tickets = copy;
		pool.ntickets = n;
		pool.stepped_at = -INFINITY;
		t0 = now_sec();
		st = mm_step(&cfg, &pool, 4.9, &res);
		t1 = now_sec();
		if (st != MM_OK)
		{
			fprintf(stderr, "step failed: %d\n", (int) st);
			return 1;
		}
		best = t1 - t0 < best ? t1 - t0 : best;
	}
	printf("%d tickets: %d matches, %d expired, next deadline %.3f s, step %.3f s\n",
		   n, res.nmatches, res.nexpired, res.deadline, best);
	return 0;
}
