/*
 * test_backfill.c
 *		Unit tests of backfill in the core: whom a request picks
 *		(mm_backfill_pick) and the simulator's departures and requests.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A pool of n tickets with these ratings, in this order. */
static void
pool_of(MMPool *pool, MMTicket *tickets, const double *ratings, int n)
{
	memset(pool, 0, sizeof(*pool));
	memset(tickets, 0, sizeof(MMTicket) * n);
	for (int i = 0; i < n; i++)
	{
		tickets[i].id = i + 1;
		tickets[i].rating = ratings[i];
		tickets[i].arrival = i;
		tickets[i].group = -1;
		tickets[i].party = -1;
		tickets[i].attr = -1;
		tickets[i].crow = i;
	}
	pool->tickets = tickets;
	pool->ntickets = n;
}

/* Least added spread first, the first in pool order among equals. */
void
test_backfill_pick(void)
{
	double		ratings[6] = {0.10, 0.48, 0.90, 0.52, 0.47, 0.60};
	MMTicket	tickets[6];
	MMPool		pool;
	bool		taken[6] = {false};
	int			out[6];

	pool_of(&pool, tickets, ratings, 6);
	/* span .45 .. .55: .48 and .52 and .47 add nothing; .48 comes first */
	CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 1, out), 1);
	CHECK_INT(out[0], 1);
	CHECK(taken[1]);
	/* then .52, .47 (inside), then .60 (adds .05) before .10 and .90 */
	CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 3, out), 3);
	CHECK_INT(out[0], 3);
	CHECK_INT(out[1], 4);
	CHECK_INT(out[2], 5);
	/* the span widens with each pick: from .60 up, .90 (adds .30) before .10 (.35) */
	memset(taken, 0, sizeof(taken));
	taken[1] = taken[3] = taken[4] = true;
	CHECK_INT(mm_backfill_pick(&pool, taken, 0.58, 0.58, 0, 3, out), 3);
	CHECK_INT(out[0], 5);
	CHECK_INT(out[1], 2);
	CHECK_INT(out[2], 0);
	/* nothing left: none picked */
	CHECK_INT(mm_backfill_pick(&pool, taken, 0.5, 0.5, 0, 1, out), 0);

	/* no fixed member left (lo infinite): the first ticket, then the nearest to it */
	memset(taken, 0, sizeof(taken));
	CHECK_INT(mm_backfill_pick(&pool, taken, INFINITY, -INFINITY, 0, 2, out), 2);
	CHECK_INT(out[0], 0);
	CHECK_INT(out[1], 4);

	/* tickets in a provisional group are never taken */
	memset(taken, 0, sizeof(taken));
	tickets[1].group = 0;
	tickets[3].group = 0;
	CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 1, out), 1);
	CHECK_INT(out[0], 4);
	CHECK(!taken[1] && !taken[3]);

	/* with equal filters, only tickets of the match's key */
	{
		int32_t		key[6] = {0, 1, 0, 1, 1, 0};

		tickets[1].group = tickets[3].group = -1;
		pool.key = key;
		pool.nkeys = 6;
		memset(taken, 0, sizeof(taken));
		CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 2, out), 2);
		CHECK_INT(out[0], 5);	/* .60, the nearest of key 0 */
		CHECK_INT(out[1], 2);	/* then .90 before .10 */
		CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 1, out), 1);
		CHECK_INT(out[0], 0);
		CHECK_INT(mm_backfill_pick(&pool, taken, 0.45, 0.55, 0, 1, out), 0);
	}
}

/* One player of a pair leaves; the request takes the nearest newcomer. */
void
test_backfill_simulate(void)
{
	MMConfig	cfg;
	MMArrival	arr[4] = {{1, 0.50, 0.0}, {2, 0.52, 0.0}, {3, 0.90, 12.0}, {4, 0.51, 12.0}};
	double		leaves[4] = {NAN, 10.0, NAN, NAN};
	MMStreamData data = {0};
	MMOutcome	out[4];
	MMSimSummary sum;

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.max_wait = 30.0;
	data.leaves_after = leaves;
	CHECK_INT(mm_simulate(&cfg, arr, &data, 4, out, &sum), MM_OK);
	CHECK_INT(out[3].match_no, 1);
	CHECK_INT(out[3].team, out[1].team);
	CHECK_NEAR(out[3].matched_at, 12.0, 1e-12);
	CHECK_INT(out[2].match_no, 2);
	CHECK_NEAR(out[2].matched_at, 42.0, 1e-12);
	CHECK_INT(sum.games, 2);
	CHECK_INT(sum.bots, 1);

	/* without departures the stream is the same as without data */
	data.leaves_after = NULL;
	CHECK_INT(mm_simulate(&cfg, arr, &data, 4, out, &sum), MM_OK);
	CHECK_INT(out[2].match_no, 2);
	CHECK_INT(out[3].match_no, 2);
	CHECK_INT(sum.bots, 0);
}

/*
 * A long stream where most players leave after a while: every player ends
 * once, a backfilled one never before its arrival nor before a departure
 * of its team opened a place, and no team ever holds more players than its
 * size plus the places its departures opened.
 */
void
test_backfill_simulate_stream(void)
{
	enum
	{
		N = 4000
	};
	MMConfig	cfg;
	MMArrival  *arr = calloc(N, sizeof(MMArrival));
	double	   *leaves = calloc(N, sizeof(double));
	MMOutcome  *out = calloc(N, sizeof(MMOutcome));
	MMStreamData data = {0};
	MMSimSummary sum;
	int64_t    *size = NULL;	/* players per (match, team) */
	int64_t    *gone = NULL;	/* departures per (match, team) */
	int			teams = 2;
	int			backfilled = 0;
	double		t = 0;

	srand(7);
	for (int i = 0; i < N; i++)
	{
		t += (rand() % 1000) / 2000.0;
		arr[i].id = i;
		arr[i].rating = (rand() % 10001) / 10000.0;
		arr[i].arrival = t;
		leaves[i] = rand() % 3 == 0 ? NAN : 0.5 + (rand() % 100) / 10.0;
	}
	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.team_size = 2;
	cfg.max_wait = 5.0;
	data.leaves_after = leaves;
	CHECK_INT(mm_simulate(&cfg, arr, &data, N, out, &sum), MM_OK);
	size = calloc((size_t) (sum.games + 1) * teams, sizeof(int64_t));
	gone = calloc((size_t) (sum.games + 1) * teams, sizeof(int64_t));
	for (int i = 0; i < N; i++)
	{
		CHECK(out[i].matched_at >= arr[i].arrival);
		CHECK(out[i].match_no >= 1 && out[i].match_no <= sum.games);
		CHECK(out[i].team >= 1 && out[i].team <= teams);
		if (out[i].match_no < 1 || out[i].match_no > sum.games || out[i].team < 1 || out[i].team > teams)
			continue;
		size[out[i].match_no * teams + out[i].team - 1]++;
		if (!isnan(leaves[i]))
			gone[out[i].match_no * teams + out[i].team - 1]++;
	}
	for (int64_t g = 1; g <= sum.games; g++)
		for (int tm = 0; tm < teams; tm++)
		{
			int64_t		extra = size[g * teams + tm] - cfg.team_size;

			CHECK(extra <= gone[g * teams + tm]);
			if (extra > 0)
				backfilled += (int) extra;
		}
	/* the stream did exercise backfill */
	CHECK(backfilled > N / 10);
	CHECK_INT(sum.players, N);
	free(size);
	free(gone);
	free(arr);
	free(leaves);
	free(out);
}
