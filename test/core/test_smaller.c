/*
 * test_smaller.c
 *		Unit tests of match size ranges (params.min_players): a ticket at
 *		max_wait plays a smaller match of real players, teams differing by
 *		at most one player, instead of computer players or an expiry, when
 *		enough players are at hand.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <stdlib.h>
#include <string.h>

#define SQ_MAX 16

typedef struct SmallQueue
{
	MMConfig	cfg;
	MMTicket	tickets[SQ_MAX];
	MMGroup		groups[SQ_MAX];
	MMPool		pool;
	MMMatch		matches[SQ_MAX];
	int			members[SQ_MAX];
	int			teams[SQ_MAX];
	int			expired[SQ_MAX];
	MMResult	res;
} SmallQueue;

/* A queue of teams x team_size with max_wait 10 s and min_players. */
static void
sq_init(SmallQueue *q, MMAlgorithm algo, int teams, int team_size, int min_players,
		MMTimeout on_timeout)
{
	memset(q, 0, sizeof(*q));
	mm_config_init(&q->cfg, algo);
	q->cfg.teams = teams;
	q->cfg.team_size = team_size;
	q->cfg.max_wait = 10.0;
	q->cfg.on_timeout = on_timeout;
	q->cfg.min_players = min_players;
	q->cfg.arrival_rate = 1.0;
	q->pool.tickets = q->tickets;
	q->pool.groups = q->groups;
	q->pool.ngroups_cap = SQ_MAX;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
}

/* A ticket arriving at time t with a rating. */
static void
sq_arrive(SmallQueue *q, double t, double rating)
{
	MMTicket   *tk = &q->tickets[q->pool.ntickets];

	memset(tk, 0, sizeof(*tk));
	tk->id = ++q->pool.ntickets;
	tk->arrival = t;
	tk->rating = rating;
	tk->group = -1;
	tk->party = -1;
	tk->attr = -1;
	tk->crow = -1;
}

/* How many members of match j are on team t. */
static int
sq_team_count(SmallQueue *q, int j, int t)
{
	int			n = 0;

	for (int i = 0; i < q->res.matches[j].nmembers; i++)
		n += q->res.teams[q->res.matches[j].first + i] == t;
	return n;
}

/* 2v2, min 3: three players, the oldest at max_wait, play 2 against 1, no computer player. */
void
test_smaller_bots(void)
{
	SmallQueue	q;

	sq_init(&q, MM_ALGO_GREEDY, 2, 2, 3, MM_TIMEOUT_BOTS);
	sq_arrive(&q, 0, 0.5);
	sq_arrive(&q, 1, 0.6);
	sq_arrive(&q, 2, 0.7);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 5.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 3);
	CHECK_INT(q.res.matches[0].bots, 0);
	CHECK_INT(sq_team_count(&q, 0, 1) + sq_team_count(&q, 0, 2), 3);
	CHECK(abs(sq_team_count(&q, 0, 1) - sq_team_count(&q, 0, 2)) == 1);
	/* a game of three: spread 0.2 with f = 3 (k/D scaled to the game), waits 10 + 9 + 8 over 10 */
	CHECK_NEAR(q.res.matches[0].cost.criteria, 3 * 0.2, 1e-9);
	CHECK_NEAR(q.res.matches[0].cost.wait, 2.7, 1e-9);

	/* two players only: fewer than min_players, computer players complete the game */
	sq_init(&q, MM_ALGO_GREEDY, 2, 2, 3, MM_TIMEOUT_BOTS);
	sq_arrive(&q, 0, 0.5);
	sq_arrive(&q, 1, 0.6);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 2);
	CHECK_INT(q.res.matches[0].bots, 2);
}

/* With on_timeout expire, min 2 of 4: the timed-out player plays the nearest other one. */
void
test_smaller_expire(void)
{
	SmallQueue	q;

	sq_init(&q, MM_ALGO_GREEDY, 2, 2, 2, MM_TIMEOUT_EXPIRE);
	sq_arrive(&q, 0, 0.1);
	sq_arrive(&q, 5, 0.9);
	sq_arrive(&q, 6, 0.2);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nexpired, 0);
	CHECK_INT(q.res.nmatches, 1);
	/* every player at hand joins, up to k: all three */
	CHECK_INT(q.res.matches[0].nmembers, 3);
	CHECK_INT(q.res.matches[0].bots, 0);

	/* alone: nobody at hand, the ticket expires as before */
	sq_init(&q, MM_ALGO_GREEDY, 2, 2, 2, MM_TIMEOUT_EXPIRE);
	sq_arrive(&q, 0, 0.1);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nexpired, 1);
	CHECK_INT(q.res.nmatches, 0);
}

/* An algorithm that leaves players waiting (window): the timed-out one takes the nearest. */
void
test_smaller_nearest(void)
{
	SmallQueue	q;

	/* 3v3, min 3: five tickets far apart never fit a window of 0.05 */
	sq_init(&q, MM_ALGO_WINDOW, 2, 3, 3, MM_TIMEOUT_BOTS);
	q.cfg.window.width = 0.01;
	q.cfg.window.widen = 0;
	q.cfg.window.max = 0.01;
	sq_arrive(&q, 0, 0.50);
	sq_arrive(&q, 1, 0.10);
	sq_arrive(&q, 2, 0.56);
	sq_arrive(&q, 3, 0.90);
	sq_arrive(&q, 4, 0.45);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	/* 0.50 timed out; nearest first: 0.45, 0.56, then 0.90 and 0.10 (k = 6 in all: everyone) */
	CHECK_INT(q.res.matches[0].nmembers, 5);
	CHECK_INT(q.res.matches[0].bots, 0);
	CHECK(sq_team_count(&q, 0, 1) >= 2 && sq_team_count(&q, 0, 2) >= 2);
}

/* min_players is checked: 2 to k, 0 for none. */
void
test_smaller_config(void)
{
	MMConfig	cfg;

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.teams = 2;
	cfg.team_size = 2;
	cfg.max_wait = 10;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	cfg.min_players = 1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.min_players = 5;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.min_players = 4;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
}
