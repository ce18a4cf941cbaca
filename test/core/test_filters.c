/*
 * test_filters.c
 *		Unit tests of equal filters (core/filters.c): tickets of different
 *		keys never meet, and a keyed stream decides exactly what each key's
 *		stream would decide alone.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n tickets of these ratings, one a second, in group group, keyed by key[]. */
static void
keyed_pool(MMPool *pool, MMTicket *t, const double *ratings, int n, int group,
		   const int32_t *key)
{
	memset(pool, 0, sizeof(*pool));
	memset(t, 0, sizeof(MMTicket) * n);
	for (int i = 0; i < n; i++)
	{
		t[i].id = i + 1;
		t[i].rating = ratings[i];
		t[i].arrival = i;
		t[i].group = group;
		t[i].party = -1;
		t[i].attr = -1;
		t[i].crow = i;
	}
	pool->tickets = t;
	pool->ntickets = n;
	pool->key = key;
	pool->nkeys = n;
}

/* Greedy pairs the nearest ratings of each key, not across keys. */
void
test_filters_step(void)
{
	MMConfig	cfg;
	MMTicket	t[4];
	int32_t		key[4] = {0, 1, 0, 1};
	double		ratings[4] = {0.10, 0.11, 0.90, 0.89};
	MMMatch		matches[4];
	int			members[4];
	int			teams[4];
	int			expired[4];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;

	keyed_pool(&pool, t, ratings, 4, -1, key);
	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.max_wait = 100.0;
	CHECK_INT(mm_step(&cfg, &pool, 4.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 2);
	for (int j = 0; j < res.nmatches; j++)
	{
		CHECK_INT(matches[j].nmembers, 2);
		CHECK_INT(key[t[members[matches[j].first]].crow], key[t[members[matches[j].first + 1]].crow]);
	}
	/* a key row outside the pool's keys is refused */
	t[3].crow = 7;
	CHECK_INT(mm_step(&cfg, &pool, 4.0, &res), MM_ERR_ARGUMENT);
}

/*
 * auto 1v1 on a keyed pool: a key's sub-pool sees its own arrival rate
 * (MMPool.key_rate) and the queue's recent ratings (cfg->recent), so its
 * pair is due when the same pair alone is, with that rate and those
 * ratings; and those ratings matter: spread evenly, the pair is due
 * within its max_wait; lying densely around it, it waits for a closer
 * partner until its timeout.
 */
void
test_filters_auto_sample(void)
{
	static double dense[MM_DENSITY_ARRIVALS],
				even[MM_DENSITY_ARRIVALS];
	const double *samples[2] = {dense, even};
	double		due[2];
	MMTicket	t[3];
	int32_t		key[3] = {0, 0, 1};
	double		ratings[3] = {0.45, 0.55, 0.90};
	double		rates[2] = {1.0, 0.1};
	MMPool		pool;

	for (int i = 0; i < MM_DENSITY_ARRIVALS; i++)
	{
		dense[i] = 0.4 + 0.2 * i / (MM_DENSITY_ARRIVALS - 1);
		even[i] = (double) i / (MM_DENSITY_ARRIVALS - 1);
	}
	for (int v = 0; v < 2; v++)
	{
		MMConfig	cfg;
		MMPool		alone;
		MMTicket	ta[2];

		mm_config_init(&cfg, MM_ALGO_AUTO);
		mm_config_set_max_wait(&cfg, 100.0);
		cfg.arrival_rate = 20.0;
		cfg.recent = samples[v];
		cfg.nrecent = MM_DENSITY_ARRIVALS;
		CHECK_INT(mm_config_check(&cfg), MM_OK);
		keyed_pool(&pool, t, ratings, 3, -1, key);
		pool.key_rate = rates;
		pool.nkey_rates = 2;
		due[v] = mm_next_deadline(&cfg, &pool);
		/* the pair alone, at its key's rate, with the queue's ratings */
		keyed_pool(&alone, ta, ratings, 2, -1, NULL);
		cfg.arrival_rate = rates[0];
		CHECK_NEAR(due[v], mm_next_deadline(&cfg, &alone), 0);
	}
	/* spread evenly, the pair plays within its max_wait; densely, it waits it out */
	CHECK(due[1] > 1.0 && due[1] < 90.0);
	CHECK_NEAR(due[0], 100.0, 1e-9);
}

/*
 * A stream of three keys simulated at once decides, ticket by ticket,
 * what each key's stream simulated alone decides, in every algorithm
 * whose decisions depend only on its own pool (cluster with a fixed
 * shift: its steps settle, so extra steps for other keys change
 * nothing), and in auto, which
 * measures each key's own arrival rate (MMPool.key_rate); auto in 2v2,
 * where it does not use the recent ratings, which stay the queue's
 * (filters_auto_sample).  A quarter of the players arrive together with
 * the one before; between arrivals the simulation steps only the keys
 * due (MMPool.key_due).
 */
void
test_filters_equivalence(void)
{
	enum
	{
		N = 900
	};
	MMAlgorithm algos[7] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_AUTO, MM_ALGO_CLUSTER};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	MMArrival  *part = calloc(N, sizeof(MMArrival));
	int32_t    *key = calloc(N, sizeof(int32_t));
	int		   *where = calloc(N, sizeof(int));
	MMOutcome  *all = calloc(N, sizeof(MMOutcome));
	MMOutcome  *one = calloc(N, sizeof(MMOutcome));
	double		t = 0;

	srand(11);
	for (int i = 0; i < N; i++)
	{
		/* a quarter arrive with the one before: bursts */
		t += rand() % 4 == 0 ? 0.0 : (rand() % 1000) / 3000.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		key[i] = rand() % 3;
	}
	for (int a = 0; a < 7; a++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary sum;
		double		cost = 0;
		int			differ = 0;

		mm_config_init(&cfg, algos[a]);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.team_size = a == 1 || algos[a] == MM_ALGO_AUTO ? 2 : 1;
		cfg.periodic.batch = 8;
		cfg.multi_queue.ranges = 4;
		cfg.difference_wait.wait_factor = 1.0;
		/* cluster: its own fixed shift (the automatic one is the queue's mean wait) */
		cfg.cluster.shift_auto = 0;
		cfg.cluster.shift = 0.5;
		data.key = key;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, all, &sum), MM_OK);
		for (int k = 0; k < 3; k++)
		{
			int			m = 0;
			MMSimSummary s1;

			for (int i = 0; i < N; i++)
				if (key[i] == k)
				{
					where[m] = i;
					part[m] = arr[i];
					part[m].id = m;
					m++;
				}
			CHECK_INT(mm_simulate(&cfg, part, NULL, m, one, &s1), MM_OK);
			cost += s1.cost;
			for (int j = 0; j < m; j++)
				if (one[j].matched_at != all[where[j]].matched_at || one[j].team != all[where[j]].team ||
					(one[j].match_no == 0) != (all[where[j]].match_no == 0))
					differ++;
		}
		if (differ != 0)
			printf("     algorithm %d: %d players decided otherwise\n", (int) algos[a], differ);
		CHECK_INT(differ, 0);
		CHECK_NEAR(sum.cost, cost, 1e-9 * (1 + cost));
		/* and no match mixes keys */
		for (int i = 0; i < N; i++)
			for (int j = i + 1; j < N && j < i + 40; j++)
				if (all[i].match_no != 0 && all[i].match_no == all[j].match_no)
					CHECK_INT(key[i], key[j]);
	}
	free(arr);
	free(part);
	free(key);
	free(where);
	free(all);
	free(one);
}

/*
 * auto with equal filters.  1v1 on the rating alone: an arrival changes
 * every key's recent ratings, yet the simulation steps again only the
 * other keys' sub-pools of two or more tickets (mm_simulate), as a lone
 * ticket waits for its timeout whatever the ratings.  2v2, and pairs with
 * a second criterion, read nothing another key's arrival changes: a
 * sub-pool's horizon is its own key's next arrival (sim_key_horizons),
 * and other keys' arrivals do not step it.  Each decides, ticket by
 * ticket and to the bit, what stepping every sub-pool at every arrival
 * with the pool's horizon decides (mm_sim_step_every_key): over streams
 * of 2 to 40 keys, from a few tickets per sub-pool to mostly none, with
 * bursts, bots and expiry, uniform and clustered ratings.
 */
void
test_filters_auto_dues(void)
{
	enum
	{
		N = 3000
	};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *key = calloc(N, sizeof(int32_t));
	double	   *crit = calloc(N, sizeof(double));
	MMOutcome  *some = calloc(N, sizeof(MMOutcome));
	MMOutcome  *every = calloc(N, sizeof(MMOutcome));
	const int	nkeys[4] = {2, 5, 12, 40};
	const double rates[4] = {40.0, 10.0, 30.0, 4.0};

	srand(23);
	for (int round = 0; round < 24; round++)
	{
		int			shape = (round / 4) % 3;
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary s1,
					s2;
		double		t = 0;
		int			differ = 0;

		for (int i = 0; i < N; i++)
		{
			/* an eighth arrive with the one before */
			t += rand() % 8 == 0 ? 0.0 : -log(1.0 - (rand() % 10000) / 10000.0) / rates[round % 4];
			arr[i].id = i;
			arr[i].rating = (rand() % 10001) / 10000.0;
			if (round % 3 == 1)
				arr[i].rating = 0.45 + arr[i].rating * arr[i].rating * 0.1;
			arr[i].arrival = t;
			key[i] = rand() % nkeys[round % 4];
			crit[i] = (rand() % 10001) / 10000.0;
		}
		mm_config_init(&cfg, MM_ALGO_AUTO);
		mm_config_set_max_wait(&cfg, round % 5 < 2 ? 5.0 : 20.0);
		cfg.on_timeout = round < 12 ? MM_TIMEOUT_BOTS : MM_TIMEOUT_EXPIRE;
		if (shape == 1)
			cfg.team_size = 2;
		if (shape == 2)
		{
			cfg.criteria.n = 1;
			data.criteria = crit;
		}
		CHECK_INT(mm_config_check(&cfg), MM_OK);
		data.key = key;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, some, &s1), MM_OK);
		mm_sim_step_every_key = true;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, every, &s2), MM_OK);
		mm_sim_step_every_key = false;
		for (int i = 0; i < N; i++)
			if (some[i].match_no != every[i].match_no || some[i].team != every[i].team ||
				memcmp(&some[i].matched_at, &every[i].matched_at, sizeof(double)) != 0)
				differ++;
		if (differ != 0)
			printf("     round %d: %d players decided otherwise\n", round, differ);
		CHECK_INT(differ, 0);
		CHECK(memcmp(&s1.cost, &s2.cost, sizeof(double)) == 0);
		CHECK_INT(s1.games, s2.games);
		/* most players play */
		CHECK(s1.games * mm_config_k(&cfg) > N / 2);
	}
	free(arr);
	free(key);
	free(crit);
	free(some);
	free(every);
}

/* The first player two runs decided otherwise (matched_at to the bit), or -1. */
static int
first_outcome_difference(const MMOutcome *a, const MMOutcome *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].match_no != b[i].match_no || a[i].team != b[i].team ||
			memcmp(&a[i].matched_at, &b[i].matched_at, sizeof(double)) != 0)
			return i;
	return -1;
}

/*
 * Intersect filters: after a step the simulator takes the sub-pools' own
 * deadlines where every ticket left keeps its key, and asks
 * mm_next_deadline only where a new assignment moves one; each run
 * decides, ticket by ticket and to the bit, what asking mm_next_deadline
 * after every step decides (mm_sim_exact_cand_deadline): every algorithm
 * but optimize, 12 keys listed one to three at a time, with and without
 * a filter relaxing, bursts, bots and expiry.
 */
void
test_filters_cand_deadline(void)
{
	enum
	{
		N = 1500,
		K = 12
	};
	MMAlgorithm algos[7] = {MM_ALGO_AUTO, MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_CLUSTER};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *start = calloc(N + 1, sizeof(int32_t));
	int32_t    *cand = calloc(3 * N, sizeof(int32_t));
	MMOutcome  *own = calloc(N, sizeof(MMOutcome));
	MMOutcome  *asked = calloc(N, sizeof(MMOutcome));
	int32_t		values[K];
	double		relax[1] = {2.0};
	long		players = 0;

	for (int k = 0; k < K; k++)
		values[k] = k % 4;
	srand(41);
	for (int round = 0; round < 28; round++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary s1,
					s2;
		double		t = 0;
		int			c = 0;

		for (int i = 0; i < N; i++)
		{
			int			m = 1 + rand() % 3;

			t += rand() % 4 == 0 ? 0.0 : (rand() % 1000) / (round % 2 == 0 ? 4000.0 : 400.0);
			arr[i].id = i;
			arr[i].rating = (rand() % 10001) / 10000.0;
			arr[i].arrival = t;
			start[i] = c;
			for (int j = 0; j < m; j++)
			{
				int32_t		k = rand() % K;
				bool		dup = false;

				for (int q = start[i]; q < c; q++)
					dup |= cand[q] == k;
				if (!dup)
					cand[c++] = k;
			}
		}
		start[N] = c;
		mm_config_init(&cfg, algos[round % 7]);
		mm_config_set_max_wait(&cfg, round % 3 == 0 ? 3.0 : 8.0);
		cfg.on_timeout = round % 4 < 2 ? MM_TIMEOUT_BOTS : MM_TIMEOUT_EXPIRE;
		cfg.team_size = round % 5 == 4 ? 2 : 1;
		cfg.difference_wait.wait_factor = 1.0;
		CHECK_INT(mm_config_check(&cfg), MM_OK);
		data.cand_start = start;
		data.cand = cand;
		data.ncand_keys = K;
		if ((round / 7) % 2 == 1)
		{
			data.nfilters = 1;
			data.key_values = values;
			data.relax_after = relax;
		}
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, own, &s1), MM_OK);
		mm_sim_exact_cand_deadline = true;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, asked, &s2), MM_OK);
		mm_sim_exact_cand_deadline = false;
		CHECK_INT(first_outcome_difference(own, asked, N), -1);
		CHECK(memcmp(&s1.cost, &s2.cost, sizeof(double)) == 0);
		players += N;
	}
	printf("     %ld players in 28 streams decided alike\n", players);
	free(arr);
	free(start);
	free(cand);
	free(own);
	free(asked);
}

/*
 * n arrivals with random ratings, a gap of up to 1000 / divisor seconds
 * before each (with bursts, a third of them at the instant before), and
 * each a random non-empty list of the keys 0 to 2 in cand, from start[i]
 * (start[n]: the end); with key, each one random key besides.
 */
static void
listed_stream(MMArrival *arr, int32_t *key, int32_t *start, int32_t *cand, int n,
			  double divisor, bool bursts)
{
	double		t = 0;
	int			c = 0;

	for (int i = 0; i < n; i++)
	{
		int			mask;

		t += bursts && rand() % 3 == 0 ? 0.0 : (rand() % 1000) / divisor;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		if (key != NULL)
			key[i] = rand() % 3;
		mask = 1 + rand() % 7;
		start[i] = c;
		for (int k = 0; k < 3; k++)
			if (mask & (1 << k))
				cand[c++] = k;
	}
	start[n] = c;
}

/*
 * A simulation whose next deadline could not get the memory it needed
 * (intersect filters ask mm_next_deadline after each step, whose
 * fallback may come late) fails with MM_ERR_NOMEM rather than decide
 * otherwise: with each allocation in turn failing, auto and
 * difference_wait over intersect lists, with and without a relaxing
 * filter, return either MM_ERR_NOMEM, with nothing left allocated, or
 * what they decide with memory enough.
 */
void
test_filters_nomem(void)
{
	enum
	{
		N = 40
	};
	MMArrival	arr[N];
	int32_t		start[N + 1];
	int32_t		cand[3 * N];
	int32_t		values[3] = {0, 1, 2};
	double		relax[1] = {1.5};
	MMOutcome	ref[N],
				out[N];

	srand(31);
	listed_stream(arr, NULL, start, cand, N, 1500.0, true);
	for (int x = 0; x < 4; x++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary sum;
		int			failed = 0,
					runs = 0;

		mm_config_init(&cfg, x < 2 ? MM_ALGO_AUTO : MM_ALGO_DIFFERENCE_WAIT);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.difference_wait.wait_factor = 1.0;
		data.cand_start = start;
		data.cand = cand;
		data.ncand_keys = 3;
		if (x % 2 == 1)
		{
			/* one filter, relaxing after 1.5 s */
			data.nfilters = 1;
			data.key_values = values;
			data.relax_after = relax;
		}
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, ref, &sum), MM_OK);
		for (int fail = 1;; fail++)
		{
			MMStatus	st;

			mm_fail_allocation = fail;
			st = mm_simulate(&cfg, arr, &data, N, out, &sum);
			if (mm_fail_allocation > 0)
			{
				/* no allocation left to fail: the run had memory enough */
				mm_fail_allocation = 0;
				CHECK_INT(st, MM_OK);
				break;
			}
			runs++;
			CHECK_INT((long) mm_memory_used, 0);
			if (st == MM_ERR_NOMEM)
			{
				failed++;
				continue;
			}
			CHECK_INT(st, MM_OK);
			for (int i = 0; i < N; i++)
				if (memcmp(&out[i], &ref[i], sizeof(MMOutcome)) != 0)
				{
					printf("     config %d, allocation %d failing: player %d decided otherwise\n", x, fail, i);
					CHECK(false);
					break;
				}
		}
		/* each allocation failed in turn, most of them fatally */
		CHECK(runs > 100);
		CHECK(failed > runs / 2);
	}
}

/*
 * A provisional group whose members' keys differ (the filters changed
 * since it formed) is dissolved, not matched.
 */
void
test_filters_mixed_group(void)
{
	MMConfig	cfg;
	MMTicket	t[2];
	MMGroup		groups[2] = {{0.0, 50.0, 0.0}, {0.0, 0.0, 0.0}};
	int32_t		key[2] = {0, 1};
	double		ratings[2] = {0.5, 0.5};
	MMMatch		matches[2];
	int			members[2];
	int			teams[2];
	int			expired[2];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;

	keyed_pool(&pool, t, ratings, 2, 0, key);
	pool.groups = groups;
	pool.ngroups = 1;
	pool.ngroups_cap = 2;
	mm_config_init(&cfg, MM_ALGO_DIFFERENCE_WAIT);
	cfg.max_wait = 100.0;
	cfg.difference_wait.wait_factor = 1.0;
	/* at the group's finalize_at it would become a match: it is gone instead */
	CHECK_INT(mm_step(&cfg, &pool, 60.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 0);
	CHECK_INT(pool.ngroups, 0);
	CHECK_INT(t[0].group, -1);
	CHECK_INT(t[1].group, -1);
}

/*
 * Intersect filters: each ticket plays under the candidate key that the
 * most tickets of the pool may play under (the lowest among equals), and
 * a step meets only tickets given one key.
 */
void
test_filters_intersect_assign(void)
{
	MMConfig	cfg;
	MMTicket	t[5];
	/* keys: 0 = "dust", 1 = "inferno", 2 = "nuke" */
	int32_t		start[6] = {0, 2, 3, 5, 6, 7};
	int32_t		cand[7] = {0, 1, 1, 0, 2, 2, 1};
	int32_t		ckey[5];
	int32_t		count[3] = {0, 0, 0};
	double		ratings[5] = {0.10, 0.12, 0.50, 0.52, 0.90};
	MMMatch		matches[5];
	int			members[5];
	int			teams[5];
	int			expired[5];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;

	keyed_pool(&pool, t, ratings, 5, -1, NULL);
	pool.cand_start = start;
	pool.cand = cand;
	pool.ncand_rows = 5;
	pool.ncand_keys = 3;
	pool.cand_key = ckey;
	pool.cand_count = count;
	pool.key = ckey;
	pool.nkeys = 5;
	/* counts: dust 2, inferno 3, nuke 2 */
	CHECK_INT(mm_filter_assign(&pool, 5.0), MM_OK);
	CHECK_INT(ckey[0], 1);		/* dust or inferno: inferno, more may play it */
	CHECK_INT(ckey[1], 1);
	CHECK_INT(ckey[2], 0);		/* dust or nuke, 2 each: the lower */
	CHECK_INT(ckey[3], 2);
	CHECK_INT(ckey[4], 1);
	CHECK_INT(count[0] + count[1] + count[2], 0);	/* scratch left zeroed */
	CHECK(mm_filter_may_play(&pool, 2, 2));
	CHECK(!mm_filter_may_play(&pool, 1, 0));

	/* greedy pairs 0 with 1 (inferno); 2, 3 and 4 have no one of their key */
	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.max_wait = 100.0;
	CHECK_INT(mm_step(&cfg, &pool, 5.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 1);
	CHECK_INT(members[0], 0);
	CHECK_INT(members[1], 1);

	/* key must be the assignment buffer; a candidate out of range is refused */
	pool.key = NULL;
	CHECK_INT(mm_step(&cfg, &pool, 5.0, &res), MM_ERR_ARGUMENT);
	pool.key = ckey;
	cand[6] = 3;
	CHECK_INT(mm_step(&cfg, &pool, 5.0, &res), MM_ERR_ARGUMENT);
	CHECK_INT(count[0] + count[1] + count[2], 0);
	cand[6] = 1;
	start[2] = 2;				/* row 1 without a candidate */
	CHECK_INT(mm_filter_assign(&pool, 5.0), MM_ERR_ARGUMENT);
}

/*
 * A stream whose every ticket has one candidate simulates exactly as the
 * same keys given as MMStreamData.key (auto aside, which measures each
 * key's rate only then); with lists, every match's players
 * share a candidate, and list players meet those of each of their values.
 */
void
test_filters_intersect_sim(void)
{
	enum
	{
		N = 600
	};
	MMAlgorithm algos[7] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_AUTO, MM_ALGO_CLUSTER};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *key = calloc(N, sizeof(int32_t));
	int32_t    *start = calloc(N + 1, sizeof(int32_t));
	int32_t    *cand = calloc(3 * N, sizeof(int32_t));
	int32_t    *one_start = calloc(N + 1, sizeof(int32_t));
	MMOutcome  *a = calloc(N, sizeof(MMOutcome));
	MMOutcome  *b = calloc(N, sizeof(MMOutcome));

	srand(12);
	listed_stream(arr, key, start, cand, N, 2000.0, false);
	for (int i = 0; i < N; i++)
		one_start[i + 1] = i + 1;
	for (int x = 0; x < 6; x++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary s1;
		MMSimSummary s2;
		int			differ = 0;
		int			mixed = 0;

		mm_config_init(&cfg, algos[x]);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.team_size = x == 1 ? 2 : 1;
		cfg.periodic.batch = 8;
		cfg.multi_queue.ranges = 4;
		cfg.difference_wait.wait_factor = 1.0;
		data.key = key;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, a, &s1), MM_OK);
		data.key = NULL;
		data.cand_start = one_start;
		data.cand = key;
		data.ncand_keys = 3;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, b, &s2), MM_OK);
		for (int i = 0; i < N; i++)
			if (a[i].match_no != b[i].match_no || a[i].team != b[i].team ||
				a[i].matched_at != b[i].matched_at)
				differ++;
		/* but auto: each key's own rate is measured only for data.key */
		if (algos[x] != MM_ALGO_AUTO)
		{
			CHECK_INT(differ, 0);
			CHECK_NEAR(s1.cost, s2.cost, 1e-9 * (1 + s1.cost));
		}

		data.cand_start = start;
		data.cand = cand;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, b, &s2), MM_OK);
		/* a player of several keys finds a near partner sooner: it costs less */
		CHECK(s2.cost < s1.cost);
		for (int i = 0; i < N; i++)
		{
			int			shared = 7;

			if (b[i].match_no == 0)
				continue;
			for (int j = 0; j < N; j++)
				if (b[j].match_no == b[i].match_no)
				{
					int			m = 0;

					for (int32_t q = start[j]; q < start[j + 1]; q++)
						m |= 1 << cand[q];
					shared &= m;
				}
			if (shared == 0)
				mixed++;
		}
		CHECK_INT(mixed, 0);
	}
	free(arr);
	free(key);
	free(start);
	free(cand);
	free(one_start);
	free(a);
	free(b);
}

/*
 * optional_after: a ticket that has waited relax_after[f] plays under the
 * pool's busiest key that agrees with it on the other filters, and the
 * next deadline includes the instant its filter relaxes.
 */
void
test_filters_relax(void)
{
	MMConfig	cfg;
	MMTicket	t[3];
	/* keys (mode, map): 0 = (casual, dust), 1 = (casual, nuke), 2 = (ranked, dust) */
	int32_t		values[6] = {0, 0, 0, 1, 1, 0};
	int32_t		start[4] = {0, 1, 2, 3};
	int32_t		cand[3] = {2, 1, 0};	/* A ranked/dust, B casual/nuke, C casual/dust */
	double		relax[2] = {10.0, INFINITY};
	int32_t		ckey[3];
	int32_t		count[3] = {0, 0, 0};
	double		ratings[3] = {0.50, 0.51, 0.90};
	MMMatch		matches[3];
	int			members[3];
	int			teams[3];
	int			expired[3];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;

	keyed_pool(&pool, t, ratings, 3, -1, NULL);
	pool.cand_start = start;
	pool.cand = cand;
	pool.ncand_rows = 3;
	pool.ncand_keys = 3;
	pool.cand_key = ckey;
	pool.cand_count = count;
	pool.key = ckey;
	pool.nkeys = 3;
	pool.nfilters = 2;
	pool.key_values = values;
	pool.relax_after = relax;
	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.max_wait = 100.0;

	/* before 10 s nobody meets; the deadline is A's relaxation */
	CHECK_INT(mm_step(&cfg, &pool, 9.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 0);
	CHECK_NEAR(mm_next_deadline(&cfg, &pool), 10.0, 1e-12);
	/* relaxing does not make a ticket a candidate of another key (backfill) */
	CHECK(!mm_filter_may_play(&pool, 0, 0));
	/* at 10 s A's mode relaxes: it plays C's key (its map), not B's (nearer) */
	CHECK_INT(mm_step(&cfg, &pool, 10.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 1);
	CHECK_INT(members[0], 0);
	CHECK_INT(members[1], 2);
	CHECK_INT(ckey[0], 0);
	CHECK_INT(mm_filter_waived(&pool, 0, 0), 1);	/* A waived its mode */
	CHECK_INT(mm_filter_waived(&pool, 2, 0), 0);
	CHECK_INT(count[0] + count[1] + count[2], 0);
	/* after the step, the next relaxations are B's (11 s) and C's (12 s) */
	CHECK_NEAR(mm_filter_relax_deadline(&pool), 11.0, 1e-12);
}

/*
 * A simulated stream of two modes that relax after 1 s: players of
 * different modes meet only once one of them has waited 1 s, and fewer
 * computer players are needed than without relaxing.
 */
void
test_filters_relax_sim(void)
{
	enum
	{
		N = 400
	};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *start = calloc(N + 1, sizeof(int32_t));
	int32_t    *cand = calloc(N, sizeof(int32_t));
	int32_t		values[2] = {0, 1};
	double		relax[1] = {1.0};
	MMOutcome  *o = calloc(N, sizeof(MMOutcome));
	double		t = 0;
	MMAlgorithm algos[3] = {MM_ALGO_GREEDY, MM_ALGO_AUTO, MM_ALGO_DIFFERENCE_WAIT};

	srand(13);
	for (int i = 0; i < N; i++)
	{
		t += (rand() % 1000) / 500.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		start[i] = i;
		cand[i] = rand() % 2;
	}
	start[N] = N;
	for (int x = 0; x < 3; x++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary strict;
		MMSimSummary relaxed;
		int			early = 0;

		mm_config_init(&cfg, algos[x]);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.difference_wait.wait_factor = 1.0;
		data.cand_start = start;
		data.cand = cand;
		data.ncand_keys = 2;
		data.nfilters = 1;
		data.key_values = values;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, o, &strict), MM_OK);
		data.relax_after = relax;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, o, &relaxed), MM_OK);
		CHECK(relaxed.bots < strict.bots);
		for (int i = 0; i < N; i++)
			for (int j = i + 1; j < N && j < i + 50; j++)
				if (o[i].match_no != 0 && o[i].match_no == o[j].match_no && cand[i] != cand[j] &&
					o[i].matched_at - arr[i].arrival < 1.0)
					early++;
		CHECK_INT(early, 0);
	}
	free(arr);
	free(start);
	free(cand);
	free(o);
}

/*
 * auto over lists of two of ten keys: after a step a ticket may be given
 * a key where a pair with it was due already (the next deadline lies in
 * the past); the simulator steps again at once, as a tick would, until
 * nothing is due, instead of failing.
 */
void
test_filters_intersect_due(void)
{
	enum
	{
		N = 500,
		K = 10
	};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *start = calloc(N + 1, sizeof(int32_t));
	int32_t    *cand = calloc(2 * N, sizeof(int32_t));
	MMOutcome  *o = calloc(N, sizeof(MMOutcome));
	double		t = 0;
	int			c = 0;
	int			unshared = 0;
	MMConfig	cfg;
	MMStreamData data = {0};
	MMSimSummary sum;

	srand(1);
	for (int i = 0; i < N; i++)
	{
		int			a;

		t += (rand() % 1000) / 1000.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		start[i] = c;
		a = rand() % K;
		cand[c++] = a < K - 1 ? a : 0;
		cand[c++] = a < K - 1 ? a + 1 : K - 1;
	}
	start[N] = c;
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 30.0);
	data.cand_start = start;
	data.cand = cand;
	data.ncand_keys = K;
	CHECK_INT(mm_simulate(&cfg, arr, &data, N, o, &sum), MM_OK);
	CHECK_INT(sum.players, N);
	for (int i = 0; i < N; i++)
		for (int j = i + 1; j < N; j++)
			if (o[i].match_no != 0 && o[i].match_no == o[j].match_no &&
				cand[start[i]] != cand[start[j]] && cand[start[i]] != cand[start[j] + 1] &&
				cand[start[i] + 1] != cand[start[j]] && cand[start[i] + 1] != cand[start[j] + 1])
				unshared++;
	CHECK_INT(unshared, 0);
	free(arr);
	free(start);
	free(cand);
	free(o);
}

/*
 * Block lists: in every algorithm no match holds two players of whom one
 * blocks the other, every player is matched or expired once, and with
 * empty lists a stream decides exactly what it decides without them.
 */
void
test_filters_exclude(void)
{
	enum
	{
		N = 400
	};
	MMAlgorithm algos[8] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
		MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_CLUSTER, MM_ALGO_AUTO, MM_ALGO_OPTIMIZE};
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	int32_t    *player = calloc(N, sizeof(int32_t));
	int32_t    *start = calloc(N + 1, sizeof(int32_t));
	int32_t    *empty = calloc(N + 1, sizeof(int32_t));
	int32_t    *block = calloc(4 * N, sizeof(int32_t));
	MMOutcome  *a = calloc(N, sizeof(MMOutcome));
	MMOutcome  *b = calloc(N, sizeof(MMOutcome));
	double		t = 0;
	int			c = 0;

	srand(14);
	for (int i = 0; i < N; i++)
	{
		t += (rand() % 1000) / 2000.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		player[i] = 1000 + i;
		start[i] = c;
		/* block a few players who arrive near: 1000 + i + 1 .. i + 3, some */
		for (int d = 1; d <= 3; d++)
			if (rand() % 2 == 0)
				block[c++] = 1000 + i + d;
	}
	start[N] = c;
	for (int x = 0; x < 8; x++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary s1;
		MMSimSummary s2;
		int			blocked = 0;
		int			differ = 0;

		mm_config_init(&cfg, algos[x]);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.team_size = x == 1 ? 2 : 1;
		cfg.periodic.batch = 8;
		cfg.multi_queue.ranges = 4;
		cfg.difference_wait.wait_factor = 1.0;
		data.player = player;
		data.block_start = empty;
		data.block = block;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, a, &s1), MM_OK);
		CHECK_INT(mm_simulate(&cfg, arr, NULL, N, b, &s2), MM_OK);
		for (int i = 0; i < N; i++)
			if (a[i].match_no != b[i].match_no || a[i].matched_at != b[i].matched_at)
				differ++;
		CHECK_INT(differ, 0);

		data.block_start = start;
		CHECK_INT(mm_simulate(&cfg, arr, &data, N, a, &s1), MM_OK);
		CHECK_INT(s1.players, N);
		for (int i = 0; i < N; i++)
			for (int32_t j = start[i]; j < start[i + 1]; j++)
			{
				int			o = block[j] - 1000;

				if (o < N && a[i].match_no != 0 && a[i].match_no == a[o].match_no)
					blocked++;
			}
		CHECK_INT(blocked, 0);
		/* the pairs were there to block: without the lists some play together */
		blocked = 0;
		for (int i = 0; i < N; i++)
			for (int32_t j = start[i]; j < start[i + 1]; j++)
			{
				int			o = block[j] - 1000;

				if (o < N && b[i].match_no != 0 && b[i].match_no == b[o].match_no)
					blocked++;
			}
		CHECK(blocked > 0);
	}
	free(arr);
	free(player);
	free(start);
	free(empty);
	free(block);
	free(a);
	free(b);
}

/* A pool of n tickets of equal rating, one a millisecond, for block lists. */
static void
block_pool(MMPool *pool, MMTicket *t, int n, int32_t *player, int32_t *start,
		   int32_t *block, int32_t *bkey, uint8_t *held)
{
	memset(pool, 0, sizeof(*pool));
	memset(t, 0, sizeof(MMTicket) * n);
	for (int i = 0; i < n; i++)
	{
		t[i].id = i + 1;
		t[i].rating = 0.5;
		t[i].arrival = i * 0.001;
		t[i].group = -1;
		t[i].party = -1;
		t[i].attr = -1;
		t[i].crow = i;
		player[i] = 100 + i;
	}
	pool->tickets = t;
	pool->ntickets = n;
	pool->player = player;
	pool->block_start = start;
	pool->block = block;
	pool->nblock_rows = n;
	pool->block_key = bkey;
	pool->held = held;
}

/*
 * One player blocking twenty others keeps nobody but itself waiting: the
 * player in more blocked pairs moves away, the twenty play each other.
 * And a player moved away from its partner meets another left over in the
 * same step (A blocks B; A, B, C, D: A-C and B-D).
 */
void
test_filters_exclude_griefer(void)
{
	enum
	{
		N = 21
	};
	MMConfig	cfg;
	MMTicket	t[N];
	int32_t		player[N];
	int32_t		start[N + 1];
	int32_t		block[N];
	int32_t		bkey[N];
	uint8_t		held[N];
	MMMatch		matches[N];
	int			members[N];
	int			teams[N];
	int			expired[N];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;
	int			h_matched = 0;

	/* the oldest ticket (player 100) blocks all the others */
	start[0] = 0;
	for (int j = 1; j < N; j++)
		block[j - 1] = 100 + j;
	for (int i = 1; i <= N; i++)
		start[i] = N - 1;
	block_pool(&pool, t, N, player, start, block, bkey, held);
	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.max_wait = 100.0;
	CHECK_INT(mm_step(&cfg, &pool, 1.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 10);
	for (int j = 0; j < res.nmatches; j++)
		for (int i = 0; i < matches[j].nmembers; i++)
			h_matched += members[matches[j].first + i] == 0;
	CHECK_INT(h_matched, 0);
	/* nothing is due before the timeouts */
	{
		MMPool		left = pool;
		MMTicket	one = t[0];

		left.tickets = &one;
		left.ntickets = 1;
		CHECK_NEAR(mm_next_deadline(&cfg, &left), 100.0, 1e-9);	/* its timeout */
	}

	/*
	 * periodic, a batch of 8: 0 blocks 1, the nearest in rating; the batch
	 * plays without the one moved away (3 matches), not waiting for 8 again
	 */
	{
		int32_t		s8[9] = {0, 1, 1, 1, 1, 1, 1, 1, 1};
		int32_t		b8[1] = {101};
		double		r8[8] = {0.10, 0.11, 0.30, 0.31, 0.50, 0.51, 0.70, 0.71};
		MMConfig	pcfg;
		int			together = 0;

		block_pool(&pool, t, 8, player, s8, b8, bkey, held);
		for (int i = 0; i < 8; i++)
			t[i].rating = r8[i];
		mm_config_init(&pcfg, MM_ALGO_PERIODIC);
		pcfg.max_wait = 100.0;
		pcfg.periodic.batch = 8;
		CHECK_INT(mm_step(&pcfg, &pool, 1.0, &res), MM_OK);
		CHECK_INT(res.nmatches, 3);
		for (int j = 0; j < res.nmatches; j++)
			together += (members[matches[j].first] <= 1) && (members[matches[j].first + 1] <= 1);
		CHECK_INT(together, 0);
	}

	/* A (0) blocks B (1); C (2), D (3) */
	{
		int32_t		s4[5] = {0, 1, 1, 1, 1};
		int32_t		b4[1] = {101};
		bool		ac = false;
		bool		bd = false;

		block_pool(&pool, t, 4, player, s4, b4, bkey, held);
		CHECK_INT(mm_step(&cfg, &pool, 1.0, &res), MM_OK);
		CHECK_INT(res.nmatches, 2);
		for (int j = 0; j < res.nmatches; j++)
		{
			int			a = members[matches[j].first];
			int			b = members[matches[j].first + 1];

			ac |= (a == 0 && b == 2) || (a == 2 && b == 0);
			bd |= (a == 1 && b == 3) || (a == 3 && b == 1);
		}
		CHECK(ac);
		CHECK(bd);
	}
}
