/*
 * test_bounds.c
 *		Bounded work and memory: every long computation of the core stops
 *		when mm_interrupt asks, with MM_ERR_INTERRUPTED and its memory
 *		released; allocations beyond mm_memory_limit fail with
 *		MM_ERR_NOMEM; optimize's rounds take at most round_max tickets,
 *		keep to budget_ms from the first climb on, and need no memory
 *		quadratic in the pool.
 */
#include "mm_test.h"
#include "tests.h"

#include "../../src/core/mm_core.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The hook fires (returns 1) from its fire_at-th call on. */
static long hook_calls;
static long hook_fire_at;

static int
counting_hook(void)
{
	return ++hook_calls >= hook_fire_at;
}

static void
arm(long fire_at)
{
	hook_calls = 0;
	hook_fire_at = fire_at;
	mm_interrupt = counting_hook;
}

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t
next_rand(uint64_t *s)
{
	uint64_t	z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double
unit_rand(uint64_t *s)
{
	return (double) (next_rand(s) >> 11) / 9007199254740992.0;
}

/* A pool of n tickets arriving one per 1/rate seconds from 0, with result arrays. */
typedef struct BigPool
{
	MMPool		pool;
	MMResult	res;
} BigPool;

static int
big_pool(BigPool *b, int n, double rate, uint64_t seed)
{
	memset(b, 0, sizeof(*b));
	b->pool.tickets = calloc((size_t) n, sizeof(MMTicket));
	b->pool.groups = calloc((size_t) n, sizeof(MMGroup));
	b->pool.ngroups_cap = n;
	b->pool.stepped_at = -INFINITY;
	b->res.matches = calloc((size_t) n, sizeof(MMMatch));
	b->res.members = calloc((size_t) n, sizeof(int));
	b->res.teams = calloc((size_t) n, sizeof(int));
	b->res.expired = calloc((size_t) n, sizeof(int));
	if (!b->pool.tickets || !b->pool.groups || !b->res.matches ||
		!b->res.members || !b->res.teams || !b->res.expired)
		return 0;
	for (int i = 0; i < n; i++)
	{
		MMTicket   *t = &b->pool.tickets[i];

		t->id = i + 1;
		t->rating = unit_rand(&seed);
		t->arrival = i / rate;
		t->group = -1;
		t->party = -1;
		t->attr = -1;
		t->crow = i;
	}
	b->pool.ntickets = n;
	return 1;
}

static void
big_free(BigPool *b)
{
	free(b->pool.tickets);
	free(b->pool.groups);
	free(b->res.matches);
	free(b->res.members);
	free(b->res.teams);
	free(b->res.expired);
}

/*
 * One step of each algorithm over a large pool, interrupted after a few
 * calls of the hook: MM_ERR_INTERRUPTED, nothing decided, no memory kept.
 */
void
test_interrupt_steps(void)
{
	const MMAlgorithm algos[] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC,
		MM_ALGO_MULTI_QUEUE, MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW,
	MM_ALGO_CLUSTER, MM_ALGO_OPTIMIZE};

	for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++)
	{
		BigPool		b;
		MMConfig	cfg;
		MMStatus	st;

		mm_config_init(&cfg, algos[a]);
		if (algos[a] == MM_ALGO_OPTIMIZE)
			cfg.optimize.round_max = 20000;
		if (!big_pool(&b, 20000, 10.0, 7 + a))
		{
			CHECK(!"out of memory");
			big_free(&b);
			continue;
		}
		/* far past every timeout: every algorithm has all its work to do */
		arm(3);
		st = mm_step(&cfg, &b.pool, 5000.0, &b.res);
		mm_interrupt = NULL;
		if (st != MM_ERR_INTERRUPTED)
			fprintf(stderr, "    %s: status %d\n", mm_algorithm_name(algos[a]), (int) st);
		CHECK_INT(st, MM_ERR_INTERRUPTED);
		CHECK_INT(b.res.nmatches, 0);
		CHECK_INT(b.res.nexpired, 0);
		CHECK_INT(mm_memory_used, 0);
		big_free(&b);
	}
}

/* The team split of a large k (the greedy heuristic) stops too. */
void
test_interrupt_split(void)
{
	MMConfig	cfg;
	double		r[1000];
	int			teams[1000];
	uint64_t	seed = 3;

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.teams = 2;
	cfg.team_size = 500;
	for (int i = 0; i < 1000; i++)
		r[i] = unit_rand(&seed);
	arm(1);
	CHECK_INT(mm_split_teams(&cfg, 1000, r, teams), MM_ERR_INTERRUPTED);
	mm_interrupt = NULL;
	CHECK_INT(mm_split_teams(&cfg, 1000, r, teams), MM_OK);
}

/* The offline optimum stops inside the counting, the edge list and the blossom matching. */
void
test_interrupt_optimal(void)
{
	int			n = 400;
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	uint64_t	seed = 5;
	long		calls;
	double		cost;

	if (a == NULL)
	{
		CHECK(!"out of memory");
		return;
	}
	for (int i = 0; i < n; i++)
	{
		a[i].id = i;
		a[i].rating = unit_rand(&seed);
		a[i].arrival = i * 0.1;
	}
	/* how many hook calls a whole run makes */
	arm(1L << 40);
	CHECK_INT(mm_optimal_pairs(a, n, 10.0, 3.0, NULL, &cost), MM_OK);
	calls = hook_calls;
	CHECK(calls > 10);
	/* interrupted early, in the middle and near the end */
	for (int f = 1; f <= 3; f++)
	{
		arm(f == 1 ? 1 : f == 2 ? calls / 2 : calls - 1);
		CHECK_INT(mm_optimal_pairs(a, n, 10.0, 3.0, NULL, &cost), MM_ERR_INTERRUPTED);
		CHECK_INT(mm_memory_used, 0);
	}
	mm_interrupt = NULL;
	free(a);
}

/*
 * A dense stream (300 players at one instant, rated only 0 or 1: every
 * pair admissible, ties everywhere) makes each augmentation take large
 * trees apart; the matching polls the hook there too, so a cancel is
 * seen within a few repaired vertices (a whole run makes over 100 polls
 * of the hook, not one per stage), and stopping at any of them leaves
 * nothing allocated.
 */
void
test_interrupt_optimal_dense(void)
{
	int			n = 300;
	MMArrival	a[300];
	long		calls;
	double		cost;

	for (int i = 0; i < n; i++)
	{
		a[i].id = i;
		a[i].rating = i % 2;
		a[i].arrival = 0.0;
	}
	arm(1L << 40);
	CHECK_INT(mm_optimal_pairs(a, n, 5.0, 3.0, NULL, &cost), MM_OK);
	CHECK_NEAR(cost, 0.0, 1e-6);
	calls = hook_calls;
	CHECK(calls > 100);
	for (long f = 1; f < calls; f += 5)
	{
		arm(f);
		CHECK_INT(mm_optimal_pairs(a, n, 5.0, 3.0, NULL, &cost), MM_ERR_INTERRUPTED);
		CHECK_INT(mm_memory_used, 0);
	}
	mm_interrupt = NULL;
}

/* An optimize round stops in its start, its first climb and its restarts. */
void
test_interrupt_optimize(void)
{
	BigPool		b;
	MMConfig	cfg;
	long		calls;
	double		score;

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = 2;
	cfg.team_size = 2;
	cfg.optimize.budget_ms = 1e9;
	cfg.optimize.restarts = 1;
	if (!big_pool(&b, 40, 10.0, 9))
	{
		CHECK(!"out of memory");
		big_free(&b);
		return;
	}
	arm(1L << 40);
	CHECK_INT(mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, &score, NULL), MM_OK);
	calls = hook_calls;
	CHECK(calls > 10);
	for (int f = 1; f <= 3; f++)
	{
		arm(f == 1 ? 1 : f == 2 ? calls / 2 : calls - 1);
		CHECK_INT(mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, &score, NULL),
				  MM_ERR_INTERRUPTED);
		CHECK_INT(mm_memory_used, 0);
	}
	mm_interrupt = NULL;
	big_free(&b);
}

/*
 * The memory limit: 16,000 simultaneous arrivals (128 million admissible
 * pairs, some 5 GB) are refused quickly under a 64 MB limit, and the
 * limit counts the core's live memory only.
 */
void
test_memory_limit(void)
{
	int			n = 16000;
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	uint64_t	seed = 13;
	double		t0;

	if (a == NULL)
	{
		CHECK(!"out of memory");
		return;
	}
	for (int i = 0; i < n; i++)
	{
		a[i].id = i;
		a[i].rating = unit_rand(&seed);
		a[i].arrival = 0.0;
	}
	mm_memory_limit = (size_t) 64 << 20;
	mm_memory_peak = 0;
	t0 = now_ms();
	CHECK_INT(mm_optimal_pairs(a, n, 60.0, 3.0, NULL, NULL), MM_ERR_NOMEM);
	CHECK(now_ms() - t0 < 5000.0);
	CHECK(mm_memory_peak <= mm_memory_limit);
	CHECK_INT(mm_memory_used, 0);
	/* a small problem fits */
	CHECK_INT(mm_optimal_pairs(a, 200, 60.0, 3.0, NULL, NULL), MM_OK);
	mm_memory_limit = 0;
	free(a);
}

/*
 * round_max: a round takes the oldest units whole, the rest wait.  Ten
 * solos then a party of three whose oldest ticket is the fourth: with
 * round_max 5 the round holds tickets 0 .. 3 and the party's other two.
 */
void
test_optimize_round_max(void)
{
	BigPool		b;
	MMConfig	cfg;
	int			inround[16] = {0};

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = 2;
	cfg.team_size = 3;
	cfg.optimize.round_max = 6;
	cfg.optimize.budget_ms = 1e9;
	if (!big_pool(&b, 12, 1.0, 17))
	{
		CHECK(!"out of memory");
		big_free(&b);
		return;
	}
	b.pool.tickets[3].party = b.pool.tickets[8].party = b.pool.tickets[10].party = 1;
	/* no timeouts: the round's six tickets make one match */
	CHECK_INT(mm_optimize_round(&cfg, &b.pool, 20.0, &b.res, NULL, NULL), MM_OK);
	CHECK_INT(b.res.nmatches, 1);
	CHECK_INT(b.res.nexpired, 0);
	for (int i = 0; i < b.res.matches[0].nmembers; i++)
		inround[b.res.members[i]] = 1;
	for (int i = 0; i < 12; i++)
		CHECK_INT(inround[i], i <= 3 || i == 8 || i == 10);
	/* members in pool order */
	for (int i = 1; i < b.res.matches[0].nmembers; i++)
		CHECK(b.res.members[i - 1] < b.res.members[i]);

	/* all timed out, with expire: only the round's tickets are settled */
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	cfg.optimize.round_max = 12;
	cfg.max_wait = 1.0;
	b.pool.tickets[3].party = b.pool.tickets[8].party = b.pool.tickets[10].party = -1;
	cfg.optimize.round_max = 7;
	CHECK_INT(mm_optimize_round(&cfg, &b.pool, 100.0, &b.res, NULL, NULL), MM_OK);
	CHECK_INT(b.res.nmatches, 1);
	CHECK_INT(b.res.nexpired, 1);
	CHECK(b.res.expired[0] < 7);
	CHECK_INT(mm_memory_used, 0);
	big_free(&b);
}

/*
 * The first climb keeps to budget_ms: a 5v5 round of 3,000 tickets (whose
 * first climb alone took a minute) ends within a second of a 50 ms budget.
 */
void
test_optimize_budget(void)
{
	BigPool		b;
	MMConfig	cfg;
	double		t0;
	double		took;

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = 2;
	cfg.team_size = 5;
	cfg.optimize.budget_ms = 50;
	cfg.optimize.round_max = 3000;
	if (!big_pool(&b, 3000, 10.0, 19))
	{
		CHECK(!"out of memory");
		big_free(&b);
		return;
	}
	t0 = now_ms();
	CHECK_INT(mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, NULL, NULL), MM_OK);
	took = now_ms() - t0;
	printf("     5v5 round of 3000: %.0f ms (budget 50 ms)\n", took);
	CHECK(took < 1500.0);
	CHECK_INT(b.res.nmatches, 300);
	big_free(&b);
}

/*
 * No quadratic memory: a 1v1 round of 100,000 tickets (the old swap matrix
 * alone was 40 GB) stays within a 256 MB limit.
 */
void
test_optimize_memory(void)
{
	BigPool		b;
	MMConfig	cfg;
	MMStatus	st;

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.optimize.budget_ms = 50;
	cfg.optimize.round_max = 100000;
	if (!big_pool(&b, 100000, 10.0, 23))
	{
		CHECK(!"out of memory");
		big_free(&b);
		return;
	}
	mm_memory_limit = (size_t) 256 << 20;
	mm_memory_peak = 0;
	st = mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, NULL, NULL);
	CHECK_INT(st, MM_OK);
	CHECK_INT(b.res.nmatches, 50000);
	printf("     1v1 round of 100000: peak %.1f MB\n", mm_memory_peak / 1048576.0);
	mm_memory_limit = 0;
	CHECK_INT(mm_memory_used, 0);
	big_free(&b);
}

/*
 * Pings as lists (MMPool.ping_start) decide exactly as the same pings in a
 * table, and many distinct regions cost memory for the known pings only:
 * 2,100 tickets naming 64 regions each, 134,400 regions in all (a table of
 * them would be 1.1 GB).
 */
void
test_optimize_ping_lists(void)
{
	enum
	{
		N = 60, R = 5
	};
	BigPool		b;
	BigPool		c;
	MMConfig	cfg;
	float		table[N * R];
	int32_t		start[N + 1];
	int32_t		region[N * R];
	float		ms[N * R];
	uint64_t	seed = 29;
	int			w = 0;
	double		s1;
	double		s2;

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = 2;
	cfg.team_size = 2;
	cfg.optimize.budget_ms = 1e9;
	cfg.optimize.restarts = 1;
	if (!big_pool(&b, N, 1.0, 31) || !big_pool(&c, N, 1.0, 31))
	{
		CHECK(!"out of memory");
		big_free(&b);
		big_free(&c);
		return;
	}
	for (int i = 0; i < N; i++)
	{
		start[i] = w;
		for (int r = 0; r < R; r++)
		{
			int			known = next_rand(&seed) % 3 != 0;
			float		p = (float) (next_rand(&seed) % 200);

			table[i * R + r] = known ? p : NAN;
			if (known)
			{
				region[w] = r;
				ms[w++] = p;
			}
		}
		b.pool.tickets[i].attr = c.pool.tickets[i].attr = i;
	}
	start[N] = w;
	b.pool.ping = table;
	b.pool.nregions = R;
	c.pool.ping_start = start;
	c.pool.ping_region = region;
	c.pool.ping_ms = ms;
	c.pool.nping_rows = N;
	c.pool.nregions = R;
	CHECK_INT(mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, &s1, NULL), MM_OK);
	CHECK_INT(mm_optimize_round(&cfg, &c.pool, 10.0, &c.res, &s2, NULL), MM_OK);
	CHECK(s1 == s2);
	CHECK_INT(b.res.nmatches, c.res.nmatches);
	for (int i = 0; i < N; i++)
	{
		CHECK_INT(b.res.members[i], c.res.members[i]);
		CHECK_INT(b.res.teams[i], c.res.teams[i]);
	}
	{
		int			mem[4] = {0, 1, 2, 3};
		int			tm[4] = {1, 1, 2, 2};

		CHECK(mm_optimize_match_score(&cfg, &b.pool, mem, tm, 4) ==
			  mm_optimize_match_score(&cfg, &c.pool, mem, tm, 4));
	}
	/* a region out of order is refused */
	region[1] = region[0];
	CHECK_INT(mm_optimize_round(&cfg, &c.pool, 10.0, &c.res, &s2, NULL),
			  start[1] > 1 ? MM_ERR_ARGUMENT : MM_OK);
	big_free(&b);
	big_free(&c);

	/* 2,100 tickets, 64 regions of their own each */
	{
		int			n = 2100;
		int			per = 64;
		int32_t    *st = malloc(sizeof(int32_t) * (size_t) (n + 1));
		int32_t    *rg = malloc(sizeof(int32_t) * (size_t) n * per);
		float	   *pm = malloc(sizeof(float) * (size_t) n * per);

		mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
		cfg.optimize.budget_ms = 50;
		if (st == NULL || rg == NULL || pm == NULL || !big_pool(&b, n, 10.0, 37))
		{
			CHECK(!"out of memory");
			free(st);
			free(rg);
			free(pm);
			big_free(&b);
			return;
		}
		for (int i = 0; i < n; i++)
		{
			st[i] = i * per;
			for (int r = 0; r < per; r++)
			{
				rg[i * per + r] = i * per + r;
				pm[i * per + r] = 40;
			}
			b.pool.tickets[i].attr = i;
		}
		st[n] = n * per;
		b.pool.ping_start = st;
		b.pool.ping_region = rg;
		b.pool.ping_ms = pm;
		b.pool.nping_rows = n;
		b.pool.nregions = n * per;
		cfg.optimize.round_max = n;
		mm_memory_limit = (size_t) 128 << 20;
		CHECK_INT(mm_optimize_round(&cfg, &b.pool, 10.0, &b.res, NULL, NULL), MM_OK);
		CHECK_INT(b.res.nmatches, n / 2);
		mm_memory_limit = 0;
		CHECK_INT(mm_memory_used, 0);
		free(st);
		free(rg);
		free(pm);
		big_free(&b);
	}
}

/*
 * A burst larger than round_max that times out all at once: the round
 * takes round_max of them, the others are due at once, and a simulation
 * goes on (each later round just after the previous one) until every
 * player is matched or expired.
 */
void
test_optimize_round_max_burst(void)
{
	int			n = 900;
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) n);
	MMOutcome  *o = malloc(sizeof(MMOutcome) * (size_t) n);
	MMConfig	cfg;
	MMSimSummary s;
	uint64_t	seed = 41;

	if (a == NULL || o == NULL)
	{
		CHECK(!"out of memory");
		free(a);
		free(o);
		return;
	}
	for (int i = 0; i < n; i++)
	{
		a[i].id = i;
		a[i].rating = unit_rand(&seed);
		a[i].arrival = 5.0;
	}
	for (int tmo = 0; tmo < 2; tmo++)
	{
		mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
		mm_config_set_max_wait(&cfg, 1.0);
		cfg.recheck = 1000.0;	/* no round before the timeout */
		cfg.on_timeout = tmo ? MM_TIMEOUT_EXPIRE : MM_TIMEOUT_BOTS;
		cfg.optimize.round_max = 100;
		cfg.optimize.restarts = 0;
		CHECK_INT(mm_simulate(&cfg, a, NULL, n, o, &s), MM_OK);
		CHECK_INT(s.players, n);
		CHECK_INT(s.games * 2 - s.bots + s.expired, n);
		for (int i = 0; i < n; i++)
			CHECK(o[i].matched_at >= 6.0 && o[i].matched_at < 6.001);
	}
	free(a);
	free(o);
}

/*
 * auto's search over the falls of the rate polls mm_interrupt as a step's
 * own passes do: 2,000 players spread evenly, left by a burst (a billion
 * per second), none due before the rate falls far; the step passes over
 * them once, then a dozen times or so for the falls.
 */
void
test_interrupt_auto_falls(void)
{
	int			n = 2000;
	BigPool		b;
	MMConfig	cfg;
	long		counted;

	CHECK(big_pool(&b, n, 1.0, 1));
	for (int i = 0; i < n; i++)
	{
		b.pool.tickets[i].rating = (i + 0.5) / n;
		b.pool.tickets[i].arrival = 0.0;
	}
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 60.0);
	cfg.arrival_rate = MM_RATE_MAX;
	cfg.rate_last = 0.0;
	cfg.rate_gaps = 49;

	/* nothing due now; the deadline is a fall well before the timeouts */
	mm_interrupt = NULL;
	CHECK_INT(mm_step(&cfg, &b.pool, 0.0, &b.res), MM_OK);
	CHECK_INT(b.res.nmatches, 0);
	CHECK(b.res.deadline > 0.0 && b.res.deadline < 60.0);

	/*
	 * the falls' passes poll: far more calls than the first pass makes (a
	 * poll per ticket, the hook asked at every 64th, MM_POLL_EVERY)
	 */
	arm(LONG_MAX);
	CHECK_INT(mm_step(&cfg, &b.pool, 0.0, &b.res), MM_OK);
	counted = hook_calls;
	CHECK(counted > 4 * (n / 64 + 1));

	/* asked to stop after the first pass: the step stops, deciding nothing */
	arm(2 * (n / 64 + 1));
	CHECK_INT(mm_step(&cfg, &b.pool, 0.0, &b.res), MM_ERR_INTERRUPTED);
	CHECK_INT(b.res.nmatches, 0);
	CHECK(hook_calls < counted);
	mm_interrupt = NULL;

	/* and steps on as before once nobody asks */
	CHECK_INT(mm_step(&cfg, &b.pool, 0.0, &b.res), MM_OK);
	CHECK_INT(b.res.nmatches, 0);
	CHECK(b.res.deadline > 0.0 && b.res.deadline < 60.0);
	big_free(&b);
}

/*
 * A cluster step passes at most 64 times: a pool built so that each pass
 * frees exactly one match (a chain of L old tickets, each sliding within
 * the threshold of its own group of k - 1 newcomers only once the matches
 * before it have left and moved the mean; filler groups of k - 1, 3
 * thresholds apart, hold the mean steady) makes 64 matches in a step and
 * leaves the rest of the chain to the next step.
 */
void
test_cluster_pass_cap(void)
{
	enum
	{
		L = 66, K = 4, NS = 1000
	};
	const double th = 1e-4,
				T = 287;
	int			n = L + L * (K - 1) + NS * (K - 1);
	MMConfig	cfg;
	BigPool		b;
	double		sig,
				x[L],
				f[L],
				m[L];
	int			q = 0;

	mm_config_init(&cfg, MM_ALGO_CLUSTER);
	mm_config_set_max_wait(&cfg, 1000.0);
	cfg.team_size = K / 2;
	cfg.cluster.midpoint = 500;
	cfg.cluster.steepness = 0.01;
	cfg.cluster.threshold = th;
	cfg.cluster.shift = 0;
	cfg.cluster.shift_auto = 0;
	cfg.recheck = 1.0;
	sig = mm_cluster_decay(&cfg, T);
	/* the old tickets' ratings, and their groups' first guess */
	for (int i = 0; i < L; i++)
	{
		x[i] = 0.5 - (0.09 - i * (0.085 / L)) / sig;
		f[i] = 0.5 * (1 - sig) + sig * x[i];
	}
	/* the means of the passes, and each group just within reach at its pass's mean */
	for (int it = 0; it < 8; it++)
	{
		for (int p = 0; p < L; p++)
		{
			double		s = 0;
			int			w = 0;

			for (int i = p; i < L; i++, w++)
				s += x[i];
			for (int i = p; i < L; i++)
				for (int j = 0; j < K - 1; j++, w++)
					s += f[i];
			for (int g = 0; g < NS; g++)
				for (int j = 0; j < K - 1; j++, w++)
					s += g % 2 == 0 ? 0.1 + (g / 2) * 3 * th : 0.9 - (g / 2) * 3 * th;
			m[p] = s / w;
		}
		for (int i = 0; i < L; i++)
		{
			double		d = i > 0 ? (m[i] - m[i - 1]) * (1 - sig) : th;

			f[i] = m[i] + (x[i] - m[i]) * sig + th - d / 2;
		}
	}
	CHECK(big_pool(&b, n, 1.0, 1));
	for (int i = 0; i < L; i++, q++)
	{
		b.pool.tickets[q].rating = x[i];
		b.pool.tickets[q].arrival = 0;
	}
	for (int i = 0; i < L; i++)
		for (int j = 0; j < K - 1; j++, q++)
		{
			b.pool.tickets[q].rating = f[i];
			b.pool.tickets[q].arrival = T;
		}
	for (int g = 0; g < NS; g++)
		for (int j = 0; j < K - 1; j++, q++)
		{
			b.pool.tickets[q].rating = g % 2 == 0 ? 0.1 + (g / 2) * 3 * th : 0.9 - (g / 2) * 3 * th;
			b.pool.tickets[q].arrival = T;
		}

	CHECK_INT(mm_step(&cfg, &b.pool, T, &b.res), MM_OK);
	CHECK_INT(b.res.nmatches, 64);
	mm_pool_compact(&b.pool, &b.res);
	CHECK_INT(mm_step(&cfg, &b.pool, T, &b.res), MM_OK);
	CHECK_INT(b.res.nmatches, L - 64);
	mm_pool_compact(&b.pool, &b.res);
	CHECK_INT(mm_step(&cfg, &b.pool, T, &b.res), MM_OK);
	CHECK_INT(b.res.nmatches, 0);
	big_free(&b);
}
