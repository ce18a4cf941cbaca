/*
 * test_filters.c
 *		Unit tests of equal filters (core/filters.c): tickets of different
 *		keys never meet, and a keyed stream decides exactly what each key's
 *		stream would decide alone.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

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
	MMResult	res = {matches, 0, members, teams, expired, 0};
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
 * A stream of three keys simulated at once decides, ticket by ticket,
 * what each key's stream simulated alone decides, in every algorithm
 * whose decisions depend only on its own pool, and in auto, which
 * measures each key's own arrival rate (MMPool.key_rate).
 */
void
test_filters_equivalence(void)
{
	enum
	{
		N = 900
	};
	MMAlgorithm algos[6] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_AUTO};
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
		t += (rand() % 1000) / 3000.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		key[i] = rand() % 3;
	}
	for (int a = 0; a < 6; a++)
	{
		MMConfig	cfg;
		MMStreamData data = {0};
		MMSimSummary sum;
		double		cost = 0;
		int			differ = 0;

		mm_config_init(&cfg, algos[a]);
		mm_config_set_max_wait(&cfg, 3.0);
		cfg.team_size = a == 1 ? 2 : 1;
		cfg.periodic.batch = 8;
		cfg.multi_queue.ranges = 4;
		cfg.difference_wait.wait_factor = 1.0;
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
	MMResult	res = {matches, 0, members, teams, expired, 0};
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
