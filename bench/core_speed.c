/*
 * core_speed.c
 *		Arrivals simulated per second by the core alone (no database):
 *		mm_simulate over a Poisson stream, k = 2, rate 10/s, max_wait 5 s,
 *		uniform ratings, for each algorithm (periodic and multi_queue with a
 *		fixed size and with "auto", which the stream's mean rate sets, as in
 *		SQL simulate).
 *
 * Usage: core_speed [ARRIVALS [ALGORITHM [burst | keys K | mixed K [TEAM_SIZE] | listed K |
 *		rate R MAX_WAIT]]]
 * prints a Markdown table (of every algorithm, or of the one named:
 * greedy, periodic, multi_queue, difference_wait, auto or cluster; "all"
 * for every one but cluster).  With burst, every player arrives at the same instant.  With keys
 * K, an equal filter of K values: value v's ARRIVALS / K players all
 * arrive at v ms, and max_wait is 60 s.  With mixed K, the same stream
 * with each player's value of an equal filter drawn evenly from K, and
 * TEAM_SIZE players a team (default 1).  With listed K (at least 2), the
 * same stream with an intersect filter: each player lists two different
 * values drawn evenly from K.  With rate R MAX_WAIT, R arrivals per second
 * and max_wait MAX_WAIT seconds.
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int
main(int argc, char **argv)
{
	int			n = argc > 1 ? atoi(argv[1]) : 1000000;
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	uint64_t	state = 1;
	double		t = 0.0;
	int			burst = argc > 3 && strcmp(argv[3], "burst") == 0;
	int			mixed = argc > 4 && strcmp(argv[3], "mixed") == 0;
	int			listed = argc > 4 && strcmp(argv[3], "listed") == 0;
	int			rated = argc > 5 && strcmp(argv[3], "rate") == 0;
	double		rate = rated ? atof(argv[4]) : 10.0;
	double		max_wait = rated ? atof(argv[5]) : 5.0;
	int			nkeys = argc > 4 && (strcmp(argv[3], "keys") == 0 || mixed || listed) ? atoi(argv[4]) : 0;
	int			team_size = mixed && argc > 5 ? atoi(argv[5]) : 1;
	uint64_t	key_state = 2;
	int32_t    *key = nkeys > 0 && !listed ? malloc(sizeof(int32_t) * (size_t) n) : NULL;
	int32_t    *cand_start = listed ? malloc(sizeof(int32_t) * ((size_t) n + 1)) : NULL;
	int32_t    *cand = listed ? malloc(sizeof(int32_t) * 2 * (size_t) n) : NULL;
	MMStreamData data = {.key = key, .cand_start = cand_start, .cand = cand, .ncand_keys = nkeys};
	const MMAlgorithm algs[] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_PERIODIC,
		MM_ALGO_MULTI_QUEUE, MM_ALGO_MULTI_QUEUE, MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_AUTO,
	MM_ALGO_CLUSTER};
	/* batch and ranges 0: "auto", from the stream's mean rate as SQL simulate gives it */
	const int	sizes[] = {0, 8, 0, 6, 0, 0, 0, 0};
	const char *names[] = {"greedy", "periodic (batch 8)", "periodic (batch auto)",
		"multi_queue (r = 6)", "multi_queue (ranges auto)", "difference_wait (wait_factor 2)", "auto",
	"cluster"};
	const int	nalgs = (int) (sizeof(algs) / sizeof(algs[0]));

	for (int i = 0; i < n; i++)
	{
		t += -log(1.0 - (next_random(&state) >> 11) * (1.0 / 9007199254740992.0)) / rate;
		a[i].id = i + 1;
		a[i].rating = (next_random(&state) >> 11) * (1.0 / 9007199254740992.0);
		a[i].arrival = burst ? 0.0 : t;
		if (listed && nkeys >= 2)
		{
			int32_t		v = (int32_t) (next_random(&key_state) % (uint64_t) nkeys);
			int32_t		w = (int32_t) (next_random(&key_state) % (uint64_t) (nkeys - 1));

			cand_start[i] = 2 * i;
			cand[2 * i] = v;
			cand[2 * i + 1] = w >= v ? w + 1 : w;
			cand_start[i + 1] = 2 * i + 2;
		}
		else if (key != NULL && mixed)
			key[i] = (int32_t) (next_random(&key_state) % (uint64_t) nkeys);
		else if (key != NULL)
		{
			key[i] = (int32_t) ((int64_t) i * nkeys / n);
			a[i].arrival = key[i] * 0.001;
		}
	}
	if (argc > 4 && !rated && (nkeys <= 0 || (listed && nkeys < 2)))
	{
		fprintf(stderr, "keys: a number of values above 0 (listed: at least 2)\n");
		return 1;
	}
	if (argc > 3 && strcmp(argv[3], "rate") == 0 && (!rated || !(rate > 0) || !(max_wait > 0)))
	{
		fprintf(stderr, "rate: arrivals per second and max_wait in seconds, both above 0\n");
		return 1;
	}
	if (team_size < 1 || team_size > 5)
	{
		fprintf(stderr, "mixed: a team size of 1 to 5\n");
		return 1;
	}
	printf("| algorithm | arrivals | seconds (best of 3) | arrivals per second | cost per game |\n");
	printf("|---|---:|---:|---:|---:|\n");
	for (int i = 0; i < nalgs; i++)
	{
		MMAlgorithm alg = algs[i];

		if (argc > 2 && strcmp(argv[2], "all") != 0 &&
			strcmp(argv[2], mm_algorithm_name(alg)) != 0)
			continue;
		if (alg == MM_ALGO_CLUSTER && (argc <= 2 || strcmp(argv[2], "cluster") != 0))
			continue;
		MMConfig	c;
		MMSimSummary s;
		double		best = INFINITY;

		mm_config_init(&c, alg);
		mm_config_set_max_wait(&c, key != NULL && !mixed ? 60.0 : max_wait);
		c.team_size = team_size;
		if (alg == MM_ALGO_PERIODIC)
			c.periodic.batch = sizes[i];
		if (alg == MM_ALGO_MULTI_QUEUE)
			c.multi_queue.ranges = sizes[i];
		if (n > 1 && a[n - 1].arrival > a[0].arrival)
			c.arrival_rate = (n - 1) / (a[n - 1].arrival - a[0].arrival);
		if (alg == MM_ALGO_DIFFERENCE_WAIT)
			c.difference_wait.wait_factor = 2.0;
		for (int rep = 0; rep < 3; rep++)
		{
			double		t0 = now_sec();
			double		took;

			if (mm_simulate(&c, a, key != NULL || listed ? &data : NULL, n, NULL, &s) != MM_OK)
			{
				fprintf(stderr, "simulation failed\n");
				return 1;
			}
			took = now_sec() - t0;
			if (took < best)
				best = took;
		}
		printf("| %s | %d | %.3f | %.2f million | %.4f |\n", names[i], n, best, n / best / 1e6,
			   s.cost / s.games);
	}
	free(a);
	free(key);
	free(cand_start);
	free(cand);
	return 0;
}
