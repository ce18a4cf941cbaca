/*
 * optimize_rounds.c
 *		Time and peak memory of one optimize round over 10^3, 10^4 and 10^5
 *		waiting tickets, 1v1 and 5v5, through the C core alone: with the
 *		defaults (round_max 2000, budget_ms 200, 4 restarts), and with
 *		round_max raised to the whole pool (one round over every ticket).
 *
 * Usage: optimize_rounds [REPEATS]   (default 3; the median is printed)
 * Prints a Markdown table.  Peak memory is the core allocator's high-water
 * mark (mm_memory_peak), the pool itself not included; the process's peak
 * RSS (getrusage) is printed at the end.  Then the interrupt latency: a
 * hook that starts returning 1 at a set instant (as PostgreSQL's cancel
 * flag would), and the time from that instant until the computation has
 * returned MM_ERR_INTERRUPTED.
 */
#include "../src/core/mm_core.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static uint64_t
next_rand(uint64_t *s)
{
	uint64_t	z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cancel_at;

/* The hook: "cancelled" from cancel_at on. */
static int
cancel_hook(void)
{
	return now_ms() >= cancel_at;
}

/* Milliseconds from the cancel to the return of one computation (MM_ERR_INTERRUPTED expected). */
static double
latency(int what, int n)
{
	MMConfig	cfg;
	MMPool		pool;
	MMResult	res;
	MMArrival  *arr;
	uint64_t	seed = 77;
	MMStatus	st;
	double		done;

	memset(&pool, 0, sizeof(pool));
	memset(&res, 0, sizeof(res));
	arr = calloc((size_t) n, sizeof(MMArrival));
	pool.tickets = calloc((size_t) n, sizeof(MMTicket));
	res.matches = calloc((size_t) n, sizeof(MMMatch));
	res.members = calloc((size_t) n, sizeof(int));
	res.teams = calloc((size_t) n, sizeof(int));
	res.expired = calloc((size_t) n, sizeof(int));
	for (int i = 0; i < n; i++)
	{
		arr[i].id = i;
		arr[i].rating = (double) (next_rand(&seed) >> 11) / 9007199254740992.0;
		arr[i].arrival = i * 0.1;
		pool.tickets[i].id = i + 1;
		pool.tickets[i].rating = arr[i].rating;
		pool.tickets[i].arrival = arr[i].arrival;
		pool.tickets[i].party = pool.tickets[i].attr = pool.tickets[i].group = -1;
	}
	pool.ntickets = n;
	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = 2;
	cfg.team_size = 5;
	cfg.optimize.budget_ms = 1e9;
	cfg.optimize.restarts = 100000;
	cfg.optimize.round_max = n;
	mm_interrupt = cancel_hook;
	cancel_at = now_ms() + 300.0;
	if (what == 0)
		st = mm_optimize_round(&cfg, &pool, n * 0.1, &res, NULL, NULL);
	else
		st = mm_optimal_pairs(arr, n, 60.0, 3.0, NULL, NULL);
	done = now_ms();
	mm_interrupt = NULL;
	free(arr);
	free(pool.tickets);
	free(res.matches);
	free(res.members);
	free(res.teams);
	free(res.expired);
	return st == MM_ERR_INTERRUPTED ? done - cancel_at : -1;
}

static int
dbl_cmp(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	int			repeats = argc > 1 ? atoi(argv[1]) : 3;
	const int	sizes[] = {1000, 10000, 100000};
	const int	shapes[] = {1, 5};
	struct rusage ru;

	if (repeats < 1)
		repeats = 1;
	printf("| shape | waiting tickets | round_max | tickets in the round | matches | round time (median of %d) | peak core memory |\n",
		   repeats);
	printf("|---|---:|---:|---:|---:|---:|---:|\n");
	for (int sh = 0; sh < 2; sh++)
		for (int z = 0; z < 3; z++)
			for (int whole = 0; whole < 2; whole++)
			{
				int			n = sizes[z];
				int			ts = shapes[sh];
				MMConfig	cfg;
				MMPool		pool;
				MMResult	res;
				double		times[32];
				size_t		peak = 0;
				int			nmatches = 0;
				int			inround = 0;
				uint64_t	seed = 1000 + n + ts;

				mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
				cfg.teams = 2;
				cfg.team_size = ts;
				mm_config_set_max_wait(&cfg, 300.0);
				if (whole)
					cfg.optimize.round_max = n;
				else if (n <= cfg.optimize.round_max)
					continue;	/* the same round as with round_max = n */
				memset(&pool, 0, sizeof(pool));
				memset(&res, 0, sizeof(res));
				pool.tickets = calloc((size_t) n, sizeof(MMTicket));
				res.matches = calloc((size_t) n, sizeof(MMMatch));
				res.members = calloc((size_t) n, sizeof(int));
				res.teams = calloc((size_t) n, sizeof(int));
				res.expired = calloc((size_t) n, sizeof(int));
				if (!pool.tickets || !res.matches || !res.members || !res.teams || !res.expired)
				{
					fprintf(stderr, "out of memory\n");
					return 1;
				}
				for (int i = 0; i < n; i++)
				{
					pool.tickets[i].id = i + 1;
					pool.tickets[i].rating = (double) (next_rand(&seed) >> 11) / 9007199254740992.0;
					pool.tickets[i].arrival = i * (60.0 / n);
					pool.tickets[i].group = -1;
					pool.tickets[i].party = -1;
					pool.tickets[i].attr = -1;
				}
				pool.ntickets = n;
				for (int r = 0; r < repeats && r < 32; r++)
				{
					double		t0;
					MMStatus	st;

					mm_memory_peak = 0;
					t0 = now_ms();
					st = mm_optimize_round(&cfg, &pool, 60.0, &res, NULL, NULL);
					times[r] = now_ms() - t0;
					if (st != MM_OK)
					{
						fprintf(stderr, "round failed: %d\n", (int) st);
						return 1;
					}
					if (mm_memory_peak > peak)
						peak = mm_memory_peak;
					nmatches = res.nmatches;
				}
				inround = n < cfg.optimize.round_max ? n : cfg.optimize.round_max;
				qsort(times, (size_t) (repeats < 32 ? repeats : 32), sizeof(double), dbl_cmp);
				printf("| %dv%d | %d | %d%s | %d | %d | %.0f ms | %.1f MB |\n",
					   ts, ts, n, cfg.optimize.round_max, whole ? " (= n)" : " (default)",
					   inround, nmatches, times[(repeats < 32 ? repeats : 32) / 2],
					   peak / 1048576.0);
				fflush(stdout);
				free(pool.tickets);
				free(res.matches);
				free(res.members);
				free(res.teams);
				free(res.expired);
			}
	getrusage(RUSAGE_SELF, &ru);
	printf("\nPeak RSS of the whole run (pools included): %.0f MB.\n", ru.ru_maxrss / 1024.0);

	printf("\nInterrupt latency: the hook turns true 300 ms into the computation; the time until it has returned\n"
		   "MM_ERR_INTERRUPTED, its memory freed (worst of %d runs).\n\n", repeats);
	printf("| computation | latency |\n|---|---:|\n");
	for (int what = 0; what < 2; what++)
	{
		double		worst = 0;

		for (int r = 0; r < repeats; r++)
		{
			double		l = latency(what, what == 0 ? 2000 : 20000);

			if (l < 0)
			{
				fprintf(stderr, "not interrupted\n");
				return 1;
			}
			worst = l > worst ? l : worst;
		}
		printf("| %s | %.2f ms |\n",
			   what == 0 ? "optimize round, 2,000 tickets 5v5, unlimited budget and restarts" :
			   "offline optimum, 20,000 players 0.1 s apart, max_wait 60 s", worst);
	}
	return 0;
}
