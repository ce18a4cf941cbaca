/*
 * test_algorithms.c
 *		Unit tests of one matching step: greedy, periodic, multi_queue,
 *		difference_wait, the automatic parameters, the team split, the next
 *		deadline and pool compaction.
 *
 * Most tests drive a small queue by hand and compare what each step did
 * with a description string: every match as "{r,r,...}" with its members'
 * ratings in ascending order and "+Nb" for N bots, every expiry as "xr",
 * in the order of the result.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <stdlib.h>
#include <string.h>

#define TQ_MAX 128

/* Compare two strings, printing both when they differ. */
#define CHECK_STR(a, b) \
	do { \
		const char *_a = (a), *_b = (b); \
		if (strcmp(_a, _b) != 0) { \
			fprintf(stderr, "%s:%d: check failed: %s = \"%s\", expected \"%s\"\n", \
					__FILE__, __LINE__, #a, _a, _b); \
			mm_test_failed = 1; \
		} \
	} while (0)

/* A queue with room for TQ_MAX tickets and the last step's result. */
typedef struct TestQueue
{
	MMConfig	cfg;
	MMTicket	tickets[TQ_MAX];
	MMGroup		groups[TQ_MAX];
	MMPool		pool;
	MMMatch		matches[TQ_MAX];
	int			members[TQ_MAX];
	int			teams[TQ_MAX];
	int			expired[TQ_MAX];
	MMResult	res;
	MMStatus	status;			/* of the last step */
	char		desc[1024];		/* description of the last step */
	int64_t		next_id;
} TestQueue;

/* A configuration with the fields the tests vary. */
static MMConfig
make_cfg(MMAlgorithm algo, int teams, int team_size, double max_wait,
		 MMTimeout on_timeout)
{
	MMConfig	cfg;

	mm_config_init(&cfg, algo);
	cfg.teams = teams;
	cfg.team_size = team_size;
	mm_config_set_max_wait(&cfg, max_wait);
	cfg.on_timeout = on_timeout;
	return cfg;
}

/* Start an empty queue. */
static void
tq_init(TestQueue *q, const MMConfig *cfg)
{
	memset(q, 0, sizeof(*q));
	q->cfg = *cfg;
	q->pool.tickets = q->tickets;
	q->pool.groups = q->groups;
	q->pool.ngroups_cap = TQ_MAX;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
	q->next_id = 1;
}

/* Enqueue a ticket (arrivals must come in time order). */
static void
tq_add(TestQueue *q, double rating, double arrival)
{
	MMTicket   *t = &q->tickets[q->pool.ntickets++];

	t->id = q->next_id++;
	t->rating = rating;
	t->arrival = arrival;
	t->group = -1;
	t->party = -1;
	t->attr = -1;
}

/* Describe q->res (see the file header) into q->desc. */
static void
tq_describe(TestQueue *q)
{
	char	   *p = q->desc;
	size_t		room = sizeof(q->desc);

	q->desc[0] = '\0';
	for (int j = 0; j < q->res.nmatches; j++)
	{
		const MMMatch *m = &q->res.matches[j];
		double		r[TQ_MAX];
		int			w;

		for (int i = 0; i < m->nmembers; i++)
			r[i] = q->tickets[q->res.members[m->first + i]].rating;
		qsort(r, m->nmembers, sizeof(double), test_cmp_double);
		w = snprintf(p, room, "%s{", j > 0 ? " " : "");
		p += w;
		room -= w;
		for (int i = 0; i < m->nmembers; i++)
		{
			w = snprintf(p, room, "%s%g", i > 0 ? "," : "", r[i]);
			p += w;
			room -= w;
		}
		if (m->bots > 0)
			w = snprintf(p, room, "+%db}", m->bots);
		else
			w = snprintf(p, room, "}");
		p += w;
		room -= w;
	}
	for (int j = 0; j < q->res.nexpired; j++)
	{
		int			w = snprintf(p, room, "%sx%g",
								 (j > 0 || q->res.nmatches > 0) ? " " : "",
								 q->tickets[q->res.expired[j]].rating);

		p += w;
		room -= w;
	}
}

/* Run a step at now, describe it and compact the pool; returns q->desc. */
static const char *
tq_step(TestQueue *q, double now)
{
	q->status = mm_step(&q->cfg, &q->pool, now, &q->res);
	if (q->status != MM_OK)
	{
		snprintf(q->desc, sizeof(q->desc), "error %d", (int) q->status);
		return q->desc;
	}
	tq_describe(q);
	mm_pool_compact(&q->pool, &q->res);
	return q->desc;
}

/* Index of the waiting ticket with this rating, or -1. */
static int
tq_find(const TestQueue *q, double rating)
{
	for (int i = 0; i < q->pool.ntickets; i++)
		if (q->tickets[i].rating == rating)
			return i;
	return -1;
}

/* greedy matches the k oldest, ignoring ratings; lists members in pool order. */
void
test_greedy_arrival(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 1, 10.0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.1, 1.0);
	tq_add(&q, 0.5, 2.0);
	tq_add(&q, 0.3, 3.0);
	tq_add(&q, 0.7, 4.0);
	CHECK_STR(tq_step(&q, 4.0), "{0.1,0.9} {0.3,0.5}");
	CHECK_INT(q.res.nmatches, 2);
	CHECK_INT(q.res.matches[0].first, 0);
	CHECK_INT(q.res.matches[0].nmembers, 2);
	CHECK_INT(q.res.matches[0].bots, 0);
	CHECK_INT(q.res.matches[1].first, 2);
	CHECK_INT(q.members[0], 0);
	CHECK_INT(q.members[1], 1);
	CHECK_INT(q.members[2], 2);
	CHECK_INT(q.members[3], 3);
	/* 1v1: teams numbered in rating order */
	CHECK_INT(q.teams[0], 2);
	CHECK_INT(q.teams[1], 1);
	/* cost: k * q + waits / max_wait = 2 * 0.8 + (4 + 3) / 10 */
	CHECK_NEAR(q.matches[0].cost.criteria, 1.6, 1e-12);
	CHECK_NEAR(q.matches[0].cost.wait, 0.7, 1e-12);
	CHECK_NEAR(q.matches[0].cost.total, 2.3, 1e-12);
	CHECK_INT(q.pool.ntickets, 1);
	CHECK(q.tickets[0].rating == 0.7);

	/* 2v2: four oldest, teams balanced inside the match */
	cfg = make_cfg(MM_ALGO_GREEDY, 2, 2, 10.0, MM_TIMEOUT_BOTS);
	tq_init(&q, &cfg);
	tq_add(&q, 0.4, 0.0);
	tq_add(&q, 0.2, 0.5);
	tq_add(&q, 0.1, 1.0);
	tq_add(&q, 0.3, 1.5);
	tq_add(&q, 0.8, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "{0.1,0.2,0.3,0.4}");
	CHECK(q.teams[0] == q.teams[2]);	/* 0.4 with 0.1 */
	CHECK(q.teams[1] == q.teams[3]);	/* 0.2 with 0.3 */
	CHECK(q.teams[0] != q.teams[1]);
}

/* greedy at a timeout: bots complete the game, or the timed-out expire. */
void
test_greedy_timeout(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 2, 10.0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.2, 0.0);
	tq_add(&q, 0.6, 1.0);
	tq_add(&q, 0.4, 2.0);
	CHECK_STR(tq_step(&q, 9.999), "");
	CHECK_STR(tq_step(&q, 10.0), "{0.2,0.4,0.6+1b}");
	CHECK_INT(q.res.matches[0].nmembers, 3);
	CHECK_INT(q.res.matches[0].bots, 1);
	/* q = 1 with a bot: criteria = k = 4; wait = (10 + 9 + 8) / 10 + 1 */
	CHECK_NEAR(q.matches[0].cost.criteria, 4.0, 1e-12);
	CHECK_NEAR(q.matches[0].cost.wait, 3.7, 1e-12);
	CHECK_INT(q.pool.ntickets, 0);
	/* the bot fills the team of the strongest player */
	CHECK(q.teams[0] == q.teams[2]);	/* 0.2 with 0.4 */
	CHECK(q.teams[1] != q.teams[0]);	/* 0.6 alone with the bot */

	cfg = make_cfg(MM_ALGO_GREEDY, 4, 1, 10.0, MM_TIMEOUT_EXPIRE);
	tq_init(&q, &cfg);
	tq_add(&q, 0.2, 0.0);
	tq_add(&q, 0.6, 1.0);
	tq_add(&q, 0.4, 5.0);
	CHECK_STR(tq_step(&q, 11.0), "x0.2 x0.6");
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_STR(tq_step(&q, 14.0), "");
	tq_add(&q, 0.5, 14.0);
	tq_add(&q, 0.9, 14.0);
	CHECK_STR(tq_step(&q, 14.0), "");
	tq_add(&q, 0.1, 14.5);
	CHECK_STR(tq_step(&q, 14.5), "{0.1,0.4,0.5,0.9}");
	CHECK_INT(q.pool.ntickets, 0);
}

/* periodic sorts a full batch by rating and cuts it into games. */
void
test_periodic_batch(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_PERIODIC, 2, 1, 100.0, MM_TIMEOUT_BOTS);
	TestQueue	q;
	double		r[] = {0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6};

	cfg.periodic.batch = 8;
	tq_init(&q, &cfg);
	for (int i = 0; i < 8; i++)
	{
		tq_add(&q, r[i], (double) i);
		if (i < 7)
			CHECK_STR(tq_step(&q, (double) i), "");
	}
	CHECK_STR(tq_step(&q, 7.0), "{0.1,0.2} {0.3,0.4} {0.6,0.7} {0.8,0.9}");
	CHECK_INT(q.pool.ntickets, 0);
	/* members in pool order: 0.7 (t=5) before 0.6 (t=7) */
	CHECK_INT(q.members[4], 5);
	CHECK_INT(q.members[5], 7);
	CHECK_INT(q.teams[4], 2);
	CHECK_INT(q.teams[5], 1);

	/* ties in rating are broken by arrival */
	cfg.periodic.batch = 4;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.2, 1.0);
	tq_add(&q, 0.5, 2.0);
	tq_add(&q, 0.5, 3.0);
	CHECK_STR(tq_step(&q, 3.0), "{0.2,0.5} {0.5,0.5}");
	CHECK_INT(q.members[0], 0);
	CHECK_INT(q.members[1], 1);
	CHECK_INT(q.members[2], 2);
	CHECK_INT(q.members[3], 3);
}

/* periodic: the oldest ticket's timeout ends the period early. */
void
test_periodic_timeout(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_PERIODIC, 2, 1, 5.0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	cfg.periodic.batch = 8;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.1, 1.0);
	tq_add(&q, 0.9, 2.0);
	tq_add(&q, 0.2, 3.0);
	tq_add(&q, 0.6, 4.0);
	CHECK_STR(tq_step(&q, 4.9), "");
	/* m = 5: the oldest 4 by rating; the newest (0.6) keeps waiting */
	CHECK_STR(tq_step(&q, 5.0), "{0.1,0.2} {0.5,0.9}");
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_STR(tq_step(&q, 8.9), "");
	CHECK_STR(tq_step(&q, 9.0), "{0.6+1b}");
	CHECK_NEAR(q.matches[0].cost.total, 2.0 + 1.0 + 1.0, 1e-12);

	/* the same leftover expires instead */
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.1, 1.0);
	tq_add(&q, 0.9, 2.0);
	tq_add(&q, 0.2, 3.0);
	tq_add(&q, 0.6, 4.0);
	CHECK_STR(tq_step(&q, 5.0), "{0.1,0.2} {0.5,0.9}");
	CHECK_STR(tq_step(&q, 9.0), "x0.6");

	/* a leftover that timed out with the period: k = 3, 4 tickets at t=0 */
	cfg = make_cfg(MM_ALGO_PERIODIC, 3, 1, 5.0, MM_TIMEOUT_BOTS);
	cfg.periodic.batch = 6;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.2, 0.0);
	CHECK_STR(tq_step(&q, 5.0), "{0.1,0.5,0.9} {0.2+2b}");
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.2, 0.0);
	CHECK_STR(tq_step(&q, 5.0), "{0.1,0.5,0.9} x0.2");

	/* batch 0 takes the batch from eq. 6 */
	cfg = make_cfg(MM_ALGO_PERIODIC, 2, 1, 5.0, MM_TIMEOUT_BOTS);
	cfg.arrival_rate = 10.0;	/* n = 10 */
	tq_init(&q, &cfg);
	for (int i = 0; i < 9; i++)
		tq_add(&q, 0.05 + 0.1 * i, 0.1 * i);
	CHECK_STR(tq_step(&q, 0.8), "");
	tq_add(&q, 0.0, 0.9);
	CHECK_INT(q.pool.ntickets, 10);
	tq_step(&q, 0.9);
	CHECK_INT(q.res.nmatches, 5);
}

/* Eq. 6 and eq. 9 with the paper's example, and their fallbacks. */
void
test_auto_params(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_PERIODIC, 2, 1, 5.0, MM_TIMEOUT_BOTS);
	int			n;

	cfg.arrival_rate = 10.0;
	n = mm_auto_batch(&cfg);
	CHECK(n == 8 || n == 10);
	/* eq. 5: n = 10 costs 0.3618, n = 8 costs 0.3622 */
	CHECK_INT(n, 10);
	CHECK_INT(mm_auto_ranges(&cfg), 6);

	cfg.arrival_rate = 0.0;
	CHECK_INT(mm_auto_batch(&cfg), 2);
	CHECK_INT(mm_auto_ranges(&cfg), 1);

	/* a tiny rate still gives one game per batch and one range */
	cfg.arrival_rate = 0.01;
	CHECK_INT(mm_auto_batch(&cfg), 2);
	CHECK_INT(mm_auto_ranges(&cfg), 1);

	/* 5v5: k = 10, a = 2, max_wait = 60: n_opt = sqrt(2 * 18 * 60) - 1 = 45.5 */
	cfg = make_cfg(MM_ALGO_PERIODIC, 2, 5, 60.0, MM_TIMEOUT_BOTS);
	cfg.arrival_rate = 2.0;
	n = mm_auto_batch(&cfg);
	CHECK(n == 40 || n == 50);
	CHECK_INT(n % 10, 0);
	/* r_opt = sqrt(240 / 11) = 4.67 */
	n = mm_auto_ranges(&cfg);
	CHECK(n == 4 || n == 5);

	/* huge rates stay in range */
	cfg.arrival_rate = 1e300;
	CHECK(mm_auto_batch(&cfg) > 0);
	CHECK(mm_auto_ranges(&cfg) > 0);
}

/* Spread of team sums for an assignment (1-based teams, sums of ratings). */
static double
team_spread(int nteams, int n, const double *r, const int *team)
{
	double		sum[16] = {0};
	double		lo = INFINITY;
	double		hi = -INFINITY;

	for (int i = 0; i < n; i++)
		sum[team[i] - 1] += r[i];
	for (int t = 0; t < nteams; t++)
	{
		if (sum[t] < lo)
			lo = sum[t];
		if (sum[t] > hi)
			hi = sum[t];
	}
	return hi - lo;
}

/* Brute force: try every team for player i and all after it. */
static void
brute_rec(int nteams, int size, int n, const double *r, int i, int *team,
		  int *count, double *best)
{
	if (i == n)
	{
		double		s = team_spread(nteams, n, r, team);

		if (s < *best)
			*best = s;
		return;
	}
	for (int t = 0; t < nteams; t++)
	{
		if (count[t] == size)
			continue;
		count[t]++;
		team[i] = t + 1;
		brute_rec(nteams, size, n, r, i + 1, team, count, best);
		count[t]--;
	}
}

/* Smallest spread over every assignment of n players to teams of size. */
static double
brute_spread(int nteams, int size, int n, const double *r)
{
	int			team[16];
	int			count[16] = {0};
	double		best = INFINITY;

	brute_rec(nteams, size, n, r, 0, team, count, &best);
	return best;
}

/* Check a split's shape: numbers in 1..teams, at most team_size each. */
static int
split_valid(int nteams, int size, int n, const int *team)
{
	int			count[1000] = {0};

	for (int i = 0; i < n; i++)
	{
		if (team[i] < 1 || team[i] > nteams)
			return 0;
		if (++count[team[i] - 1] > size)
			return 0;
	}
	return 1;
}

/* A small deterministic PRNG (splitmix64) for the split tests. */
static double
test_rand(uint64_t *state)
{
	uint64_t	z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return (double) (z >> 11) / 9007199254740992.0;
}

/* Team split: the 2v2 example, 1-player teams, bots, invalid input. */
void
test_split_teams(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 2, 10.0, MM_TIMEOUT_BOTS);
	double		r4[] = {0.1, 0.2, 0.3, 0.4};
	double		r3[] = {0.1, 0.3, 0.2};
	double		r1s[] = {0.5, 0.2, 0.9, 0.2};
	int			t[16];

	CHECK_INT(mm_split_teams(&cfg, 4, r4, t), MM_OK);
	CHECK(t[0] == t[3]);
	CHECK(t[1] == t[2]);
	CHECK(t[0] != t[1]);
	/* equal sums: team 1 holds the first listed player */
	CHECK_INT(t[0], 1);
	CHECK_INT(t[1], 2);

	/* 3 real players and a bot: {0.1, 0.2} vs {0.3, bot} */
	CHECK_INT(mm_split_teams(&cfg, 3, r3, t), MM_OK);
	CHECK(t[0] == t[2]);
	CHECK(t[1] != t[0]);

	/* one player per team: numbered in rating order, ties by input order */
	cfg = make_cfg(MM_ALGO_GREEDY, 4, 1, 10.0, MM_TIMEOUT_BOTS);
	CHECK_INT(mm_split_teams(&cfg, 4, r1s, t), MM_OK);
	CHECK_INT(t[0], 3);
	CHECK_INT(t[1], 1);
	CHECK_INT(t[2], 4);
	CHECK_INT(t[3], 2);
	/* with bots: the real players take 1..n */
	CHECK_INT(mm_split_teams(&cfg, 2, r1s, t), MM_OK);
	CHECK_INT(t[0], 2);
	CHECK_INT(t[1], 1);
	/* equal ratings (0 and -0 too) keep their input order */
	{
		double		ties[4] = {0.5, 0.5, 0.0, 0.5};
		double		zeros[2] = {0.0, -0.0};

		CHECK_INT(mm_split_teams(&cfg, 4, ties, t), MM_OK);
		CHECK(t[0] == 2 && t[1] == 3 && t[2] == 1 && t[3] == 4);
		CHECK_INT(mm_split_teams(&cfg, 2, zeros, t), MM_OK);
		CHECK(t[0] == 1 && t[1] == 2);
	}

	CHECK_INT(mm_split_teams(&cfg, 0, r1s, t), MM_ERR_ARGUMENT);
	CHECK_INT(mm_split_teams(&cfg, 5, r1s, t), MM_ERR_ARGUMENT);
	CHECK_INT(mm_split_teams(NULL, 2, r1s, t), MM_ERR_ARGUMENT);
}

/* The exact split equals brute force on random 3v3, 2v2v2, 4x3 and with bots. */
void
test_split_exact(void)
{
	static const int shapes[][2] = {{2, 3}, {3, 2}, {2, 2}, {4, 3}, {3, 4}, {2, 6}};
	uint64_t	seed = 12345;

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
	{
		int			nteams = shapes[s][0];
		int			size = shapes[s][1];
		int			k = nteams * size;
		MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, nteams, size, 10.0, MM_TIMEOUT_BOTS);
		int			rounds = k <= 6 ? 200 : 5;

		for (int round = 0; round < rounds; round++)
		{
			double		r[16];
			int			t[16];
			int			n = k - (round % 3 == 2 ? round % size + 1 : 0);

			if (n < 1)
				n = 1;
			for (int i = 0; i < n; i++)
				r[i] = test_rand(&seed);
			if (round % 7 == 3)
				r[1 % n] = r[0];	/* a tie now and then */
			CHECK_INT(mm_split_teams(&cfg, n, r, t), MM_OK);
			CHECK(split_valid(nteams, size, n, t));
			CHECK_NEAR(team_spread(nteams, n, r, t),
					   brute_spread(nteams, size, n, r), 1e-12);
		}
	}
}

/* Above 12 players: the greedy split with swaps is valid and close. */
void
test_split_large(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 8, 10.0, MM_TIMEOUT_BOTS);
	double		r[1000];
	int			t[1000];
	uint64_t	seed = 99;
	int			t2[1000];

	for (int i = 0; i < 16; i++)
		r[i] = 0.05 * (i + 1);
	CHECK_INT(mm_split_teams(&cfg, 16, r, t), MM_OK);
	CHECK(split_valid(2, 8, 16, t));
	CHECK(team_spread(2, 16, r, t) < 0.05 + 1e-9);

	/* 10v10 random, and with 5 bots */
	cfg = make_cfg(MM_ALGO_GREEDY, 2, 10, 10.0, MM_TIMEOUT_BOTS);
	for (int i = 0; i < 20; i++)
		r[i] = test_rand(&seed);
	CHECK_INT(mm_split_teams(&cfg, 20, r, t), MM_OK);
	CHECK(split_valid(2, 10, 20, t));
	CHECK(team_spread(2, 20, r, t) < 0.05);
	CHECK_INT(mm_split_teams(&cfg, 15, r, t), MM_OK);
	CHECK(split_valid(2, 10, 15, t));

	/* deterministic */
	CHECK_INT(mm_split_teams(&cfg, 20, r, t2), MM_OK);
	CHECK_INT(mm_split_teams(&cfg, 20, r, t), MM_OK);
	CHECK(memcmp(t, t2, sizeof(int) * 20) == 0);

	/* the largest k: 4 teams of 250 */
	cfg = make_cfg(MM_ALGO_GREEDY, 4, 250, 10.0, MM_TIMEOUT_BOTS);
	for (int i = 0; i < 1000; i++)
		r[i] = test_rand(&seed);
	CHECK_INT(mm_split_teams(&cfg, 1000, r, t), MM_OK);
	CHECK(split_valid(4, 250, 1000, t));
	CHECK(team_spread(4, 1000, r, t) < 0.01);
}

/* multi_queue: the foundation's example, queue order and radius growth. */
void
test_multi_queue(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_MULTI_QUEUE, 2, 1, 5.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	cfg.multi_queue.ranges = 4;
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	tq_add(&q, 0.2, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "{0.1,0.2}");
	tq_add(&q, 0.6, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "");
	CHECK_STR(tq_step(&q, 6.999), "");
	CHECK_STR(tq_step(&q, 7.0), "x0.6");
	CHECK_INT(q.pool.ntickets, 0);

	/* games come in the order their queue filled; rating 1 is in the top range */
	cfg.multi_queue.ranges = 2;
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 1.0, 1.0);
	tq_add(&q, 0.8, 2.0);
	tq_add(&q, 0.2, 3.0);
	tq_add(&q, 0.3, 3.5);
	CHECK_STR(tq_step(&q, 3.5), "{0.8,1} {0.1,0.2}");
	CHECK_INT(q.pool.ntickets, 1);

	/* a huge range count: every rating its own range, nearest first */
	cfg.multi_queue.ranges = 1000000000;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 1.0);
	tq_add(&q, 0.5, 2.0);
	tq_add(&q, 0.2, 3.0);
	tq_add(&q, 0.45, 3.0);
	CHECK_STR(tq_step(&q, 3.0), "{0.5,0.5}");
	CHECK_STR(tq_step(&q, 6.0), "{0.45,0.9}");
	CHECK_STR(tq_step(&q, 8.0), "x0.2");

	/*
	 * Radius growth, k = 3, 10 ranges: 0.55 times out; its own range gives
	 * 0.51; ranges 4 and 6 are empty; at distance 2, 0.72 (range 7, t=2)
	 * is older than 0.35 (range 3, t=3).
	 */
	cfg = make_cfg(MM_ALGO_MULTI_QUEUE, 3, 1, 10.0, MM_TIMEOUT_EXPIRE);
	cfg.multi_queue.ranges = 10;
	tq_init(&q, &cfg);
	tq_add(&q, 0.55, 0.0);
	tq_add(&q, 0.51, 1.0);
	tq_add(&q, 0.72, 2.0);
	tq_add(&q, 0.35, 3.0);
	tq_add(&q, 0.05, 4.0);
	tq_add(&q, 0.95, 5.0);
	CHECK_STR(tq_step(&q, 9.0), "");
	CHECK_STR(tq_step(&q, 10.0), "{0.51,0.55,0.72}");
	/* 0.35 times out at 13: range 3 -> 0.05 (distance 3) before 0.95 (6) */
	CHECK_STR(tq_step(&q, 13.0), "{0.05,0.35,0.95}");
	CHECK_INT(q.pool.ntickets, 0);

	/* not enough players anywhere: expire leaves the others waiting */
	tq_init(&q, &cfg);
	tq_add(&q, 0.55, 0.0);
	tq_add(&q, 0.15, 1.0);
	CHECK_STR(tq_step(&q, 10.0), "x0.55");
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_STR(tq_step(&q, 11.0), "x0.15");

	/* ... or with bots plays with everyone there is */
	cfg.on_timeout = MM_TIMEOUT_BOTS;
	tq_init(&q, &cfg);
	tq_add(&q, 0.55, 0.0);
	tq_add(&q, 0.15, 1.0);
	CHECK_STR(tq_step(&q, 10.0), "{0.15,0.55+1b}");
	CHECK_INT(q.pool.ntickets, 0);
}

/*
 * multi_queue's phase 1 against a model of it, nobody timed out: per
 * range, the tickets in arrival order make games of k, listed in the
 * order of the ticket that completed each.  Pools with no full range,
 * one game (the step's usual case), two full ranges, and two or more
 * games in one range; ratings on the ranges' edges.
 */
void
test_multi_queue_phase1(void)
{
	uint64_t	seed = 7;

	for (int run = 0; run < 4000; run++)
	{
		int			k = 2 + (int) (test_rand(&seed) * 3);
		int			r = 1 + (int) (test_rand(&seed) * 9);
		int			n = (int) (test_rand(&seed) * (run % 2 ? 4 * k : 24));
		MMConfig	cfg = make_cfg(MM_ALGO_MULTI_QUEUE, k, 1, 100.0, MM_TIMEOUT_EXPIRE);
		TestQueue	q;
		int			range[TQ_MAX];
		int			last[TQ_MAX];	/* game -> the ticket completing it */
		int			game[TQ_MAX];	/* ticket -> its game, or -1 */
		int			ngames = 0;

		cfg.multi_queue.ranges = r;
		tq_init(&q, &cfg);
		for (int i = 0; i < n; i++)
		{
			/* a tenth of the ratings on an edge: 0, 1 or j / r */
			double		v = test_rand(&seed) < 0.1 ?
				(int) (test_rand(&seed) * (r + 1)) / (double) r : test_rand(&seed);

			tq_add(&q, v, i * 0.5);
			range[i] = v * r >= r - 1 ? r - 1 : (int) floor(v * r);
		}

		/* the model: a range's tickets, once it has k more, are a game */
		for (int c = 0; c < r; c++)
		{
			int			members[TQ_MAX];
			int			m = 0;

			for (int i = 0; i < n; i++)
				if (range[i] == c)
					members[m++] = i;
			for (int i = 0; i < m; i++)
				game[members[i]] = -1;
			for (int g = 0; g + k <= m; g += k)
			{
				for (int i = g; i < g + k; i++)
					game[members[i]] = ngames;
				last[ngames++] = members[g + k - 1];
			}
		}

		CHECK_INT(mm_step(&cfg, &q.pool, n * 0.5, &q.res), MM_OK);
		CHECK_INT(q.res.nexpired, 0);
		CHECK_INT(q.res.nmatches, ngames);
		if (q.res.nmatches != ngames)
			continue;
		for (int j = 0; j < ngames; j++)
		{
			const MMMatch *m = &q.res.matches[j];
			int			g;

			CHECK_INT(m->nmembers, k);
			CHECK_INT(m->bots, 0);
			if (m->nmembers != k)
				break;
			/* games in the order of their last member; members by arrival */
			g = game[q.res.members[m->first]];
			CHECK(g >= 0);
			if (g < 0)
				break;
			for (int i = 0; i < k; i++)
				CHECK_INT(game[q.res.members[m->first + i]], g);
			CHECK_INT(q.res.members[m->first + k - 1], last[g]);
			if (j > 0)
				CHECK(last[g] > q.res.members[q.res.matches[j - 1].first + k - 1]);
		}
	}
}

/* difference_wait, k = 2: the foundation's example. */
void
test_diffwait_pairs(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 30.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;
	int			a;
	int			b;

	cfg.difference_wait.wait_factor = 10.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_INT(q.pool.ngroups, 0);
	CHECK(tq_find(&q, 0.5) >= 0 && q.tickets[tq_find(&q, 0.5)].group == -1);

	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_INT(q.tickets[0].group, 0);
	CHECK_INT(q.tickets[1].group, 0);
	CHECK_NEAR(q.groups[0].q, 0.4, 1e-12);
	CHECK_NEAR(q.groups[0].formed_at, 1.0, 1e-12);
	CHECK_NEAR(q.groups[0].finalize_at, 5.0, 1e-9);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 5.0, 1e-9);

	tq_add(&q, 0.55, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	a = tq_find(&q, 0.5);
	b = tq_find(&q, 0.55);
	CHECK_INT(q.tickets[a].group, 0);
	CHECK_INT(q.tickets[b].group, 0);
	CHECK_INT(q.tickets[tq_find(&q, 0.9)].group, -1);
	CHECK_NEAR(q.groups[0].q, 0.05, 1e-12);
	CHECK_NEAR(q.groups[0].formed_at, 2.0, 1e-12);
	CHECK_NEAR(q.groups[0].finalize_at, 2.5, 1e-9);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 2.5, 1e-9);

	CHECK_STR(tq_step(&q, 3.0), "{0.5,0.55}");
	CHECK_INT(q.pool.ngroups, 0);
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_INT(q.tickets[0].group, -1);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 31.0, 1e-12);
	CHECK_STR(tq_step(&q, 30.999), "");
	CHECK_STR(tq_step(&q, 31.0), "x0.9");
	CHECK_INT(q.pool.ntickets, 0);
	CHECK(isinf(mm_next_deadline(&cfg, &q.pool)));

	/* with bots the lone ticket plays a bot */
	cfg.on_timeout = MM_TIMEOUT_BOTS;
	tq_init(&q, &cfg);
	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 31.0), "{0.9+1b}");

	/*
	 * equal distances: the older partner wins (0.5, the newest, is the
	 * first candidate of the step)
	 */
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	tq_init(&q, &cfg);
	tq_add(&q, 0.25, 0.0);
	tq_add(&q, 0.75, 1.0);
	tq_add(&q, 0.5, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "");
	CHECK_INT(q.tickets[0].group, 0);
	CHECK_INT(q.tickets[1].group, -1);
	CHECK_INT(q.tickets[2].group, 0);

	/* wait_factor 0: a pair is final at once */
	cfg.difference_wait.wait_factor = 0.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "{0.5,0.9}");

	/* a group finalises no later than its oldest member's timeout */
	cfg.difference_wait.wait_factor = 100.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 20.0);
	CHECK_STR(tq_step(&q, 20.0), "");
	CHECK_NEAR(q.groups[0].finalize_at, 30.0, 1e-12);
	CHECK_STR(tq_step(&q, 30.0), "{0.1,0.9}");

	/*
	 * A step that comes late (after a group's finalize_at) first makes the
	 * due group a match: a newcomer that arrived after it was due cannot
	 * take a place in it.
	 */
	cfg.difference_wait.wait_factor = 10.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "");
	CHECK_NEAR(q.groups[0].finalize_at, 5.0, 1e-9);
	tq_add(&q, 0.55, 6.0);
	CHECK_STR(tq_step(&q, 6.0), "{0.5,0.9}");
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_INT(q.tickets[0].group, -1);
}

/*
 * difference_wait: a newcomer chooses before an older ungrouped ticket can
 * take it as its nearest partner.  0.05 waits alone beside the group
 * {0.5, 0.9} (it cannot improve it: 0.45 is not below 0.4).  Newcomer 0.3
 * improves that group (spread 0.2, below its distance 0.25 to 0.05); 0.9,
 * displaced, pairs with 0.05.  Processing 0.05 first would pair it with
 * 0.3 and leave {0.5, 0.9}, as Schlup's rule never does.
 */
void
test_diffwait_newcomer_first(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 30.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	cfg.difference_wait.wait_factor = 10.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "");
	tq_add(&q, 0.05, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_INT(q.tickets[tq_find(&q, 0.05)].group, -1);
	tq_add(&q, 0.3, 3.0);
	CHECK_STR(tq_step(&q, 3.0), "");
	CHECK_INT(q.pool.ngroups, 2);
	CHECK(q.tickets[tq_find(&q, 0.3)].group >= 0);
	CHECK_INT(q.tickets[tq_find(&q, 0.3)].group, q.tickets[tq_find(&q, 0.5)].group);
	CHECK_INT(q.tickets[tq_find(&q, 0.05)].group, q.tickets[tq_find(&q, 0.9)].group);
	CHECK_NEAR(q.groups[q.tickets[tq_find(&q, 0.3)].group].q, 0.2, 1e-12);
	CHECK_NEAR(q.groups[q.tickets[tq_find(&q, 0.3)].group].finalize_at, 5.0, 1e-9);
	CHECK_STR(tq_step(&q, 5.0), "{0.3,0.5}");

	/*
	 * 0.05 and 0.3 new in one late step (as in a tick): the newest is the
	 * first candidate, the same outcome
	 */
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "");
	tq_add(&q, 0.05, 2.0);
	tq_add(&q, 0.3, 3.0);
	CHECK_STR(tq_step(&q, 3.5), "");
	CHECK_INT(q.pool.ngroups, 2);
	CHECK_INT(q.tickets[tq_find(&q, 0.3)].group, q.tickets[tq_find(&q, 0.5)].group);
	CHECK_INT(q.tickets[tq_find(&q, 0.05)].group, q.tickets[tq_find(&q, 0.9)].group);
}

/*
 * difference_wait: a group due at an instant computed as a sum is due at a
 * step at that instant even when the sum rounds one unit above it (31.98 +
 * 0.25 > 32.23 in doubles), as tick, on exact microseconds, sees it; the
 * newcomer of that instant cannot change the group any more.
 */
void
test_diffwait_due_rounding(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 0.25, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	cfg.difference_wait.wait_factor = 100.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.2775, 31.98);
	CHECK_STR(tq_step(&q, 31.98), "");
	tq_add(&q, 0.2553, 31.99);
	CHECK_STR(tq_step(&q, 31.99), "");
	CHECK(q.groups[0].finalize_at > 32.23);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 32.23, 1e-12);
	tq_add(&q, 0.2902, 32.23);
	CHECK_STR(tq_step(&q, 32.23), "{0.2553,0.2775}");
	CHECK_INT(q.pool.ngroups, 0);
	CHECK_INT(q.pool.ntickets, 1);

	/* an ungrouped ticket times out the same way */
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 31.98);
	CHECK_STR(tq_step(&q, 31.98), "");
	CHECK_STR(tq_step(&q, 32.23), "x0.5");
}

/* difference_wait, k = 3: windows, improvements, a displacement chain. */
void
test_diffwait_k3(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 3, 1, 30.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	cfg.difference_wait.wait_factor = 10.0;

	/*
	 * 0.1, 0.5, 0.9 make a group of spread 0.8; 0.2 takes 0.9's place
	 * (spread 0.4); 0.45 then takes 0.1's place (spread 0.3); neither
	 * displaced ticket can improve the group back.
	 */
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.5, 1.0);
	CHECK_STR(tq_step(&q, 1.0), "");
	CHECK_INT(q.pool.ngroups, 0);
	tq_add(&q, 0.9, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_NEAR(q.groups[0].q, 0.8, 1e-12);
	CHECK_NEAR(q.groups[0].finalize_at, 10.0, 1e-9);
	tq_add(&q, 0.2, 3.0);
	CHECK_STR(tq_step(&q, 3.0), "");
	CHECK_NEAR(q.groups[0].q, 0.4, 1e-12);
	CHECK_NEAR(q.groups[0].finalize_at, 7.0, 1e-9);
	CHECK_INT(q.tickets[tq_find(&q, 0.9)].group, -1);
	tq_add(&q, 0.45, 4.0);
	CHECK_STR(tq_step(&q, 4.0), "");
	CHECK_NEAR(q.groups[0].q, 0.3, 1e-12);
	CHECK_NEAR(q.groups[0].formed_at, 4.0, 1e-12);
	CHECK_NEAR(q.groups[0].finalize_at, 7.0, 1e-9);
	CHECK_INT(q.tickets[tq_find(&q, 0.1)].group, -1);
	CHECK_INT(q.tickets[tq_find(&q, 0.9)].group, -1);
	CHECK_INT(q.tickets[tq_find(&q, 0.2)].group, 0);
	CHECK_INT(q.tickets[tq_find(&q, 0.45)].group, 0);
	CHECK_INT(q.tickets[tq_find(&q, 0.5)].group, 0);
	CHECK_STR(tq_step(&q, 6.9), "");
	CHECK_STR(tq_step(&q, 7.0 + 1e-9), "{0.2,0.45,0.5}");
	CHECK_STR(tq_step(&q, 30.0), "x0.1");
	CHECK_STR(tq_step(&q, 32.0), "x0.9");

	/*
	 * All at once: 0.8 (oldest) can only form {0.35, 0.4, 0.8}; 0.1
	 * replaces 0.8 in it (0.3 < 0.45); 0.3 then replaces 0.1 (0.1 < 0.3).
	 */
	tq_init(&q, &cfg);
	tq_add(&q, 0.8, 0.0);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.3, 0.0);
	tq_add(&q, 0.35, 0.0);
	tq_add(&q, 0.4, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_INT(q.tickets[0].group, -1);
	CHECK_INT(q.tickets[1].group, -1);
	CHECK_INT(q.tickets[2].group, 0);
	CHECK_INT(q.tickets[3].group, 0);
	CHECK_INT(q.tickets[4].group, 0);
	CHECK_NEAR(q.groups[0].q, 0.1, 1e-12);
	CHECK_STR(tq_step(&q, 1.1), "{0.3,0.35,0.4}");

	/* timed-out ungrouped tickets gather, bots fill the game */
	cfg.on_timeout = MM_TIMEOUT_BOTS;
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.5);
	CHECK_STR(tq_step(&q, 29.0), "");
	CHECK_STR(tq_step(&q, 30.5), "{0.1,0.9+1b}");
}

/* difference_wait: a group that lost a member (cancelled) is dissolved. */
void
test_diffwait_dissolve(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 30.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	cfg.difference_wait.wait_factor = 10.0;
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_INT(q.tickets[0].group, -1);
	CHECK_INT(q.tickets[1].group, 0);
	CHECK_INT(q.tickets[2].group, 0);
	/* cancel 0.9 by hand */
	q.pool.ntickets = 2;
	CHECK_STR(tq_step(&q, 1.0), "");
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_INT(q.tickets[0].group, 0);
	CHECK_INT(q.tickets[1].group, 0);
	CHECK_NEAR(q.groups[0].q, 0.4, 1e-12);
	CHECK_NEAR(q.groups[0].formed_at, 1.0, 1e-12);

	/* a group index out of range is refused */
	q.tickets[1].group = 5;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.0, &q.res), MM_ERR_ARGUMENT);
}

/* mm_next_deadline for each kind of queue. */
void
test_next_deadline(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 1, 10.0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	CHECK(isinf(mm_next_deadline(&cfg, &q.pool)));
	tq_add(&q, 0.3, 3.0);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 13.0, 0);
	tq_add(&q, 0.4, 5.0);
	cfg.algorithm = MM_ALGO_MULTI_QUEUE;
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 13.0, 0);

	/* difference_wait: ungrouped timeouts and group finalisations */
	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 10.0, MM_TIMEOUT_BOTS);
	cfg.difference_wait.wait_factor = 20.0;
	q.cfg = cfg;
	q.pool.ntickets = 0;
	tq_add(&q, 0.3, 3.0);
	tq_add(&q, 0.4, 5.0);
	tq_add(&q, 0.9, 6.0);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 13.0, 0);
	CHECK_STR(tq_step(&q, 6.0), "");
	/* {0.3, 0.4}: 6 + 20 * 0.1 = 8; 0.9 ungrouped: 16 */
	CHECK_INT(q.pool.ngroups, 1);
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 8.0, 1e-9);
	CHECK_STR(tq_step(&q, 8.0 + 1e-9), "{0.3,0.4}");
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 16.0, 0);
}

/* mm_pool_compact drops matched and expired tickets, keeping order. */
void
test_pool_compact(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_DIFFERENCE_WAIT, 2, 1, 10.0, MM_TIMEOUT_EXPIRE);
	TestQueue	q;

	tq_init(&q, &cfg);
	for (int i = 0; i < 6; i++)
		tq_add(&q, 0.1 * (i + 1), (double) i);
	q.tickets[4].group = 0;
	q.tickets[5].group = 0;
	q.pool.ngroups = 1;
	q.res.nmatches = 1;
	q.matches[0].first = 0;
	q.matches[0].nmembers = 2;
	q.matches[0].bots = 0;
	q.members[0] = 1;
	q.members[1] = 3;
	q.res.nexpired = 1;
	q.expired[0] = 0;
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 3);
	CHECK_INT(q.tickets[0].id, 3);
	CHECK_INT(q.tickets[1].id, 5);
	CHECK_INT(q.tickets[2].id, 6);
	CHECK_INT(q.tickets[0].group, -1);
	CHECK_INT(q.tickets[1].group, 0);
	CHECK_INT(q.tickets[2].group, 0);
	CHECK_INT(q.pool.ngroups, 1);

	/* an empty result changes nothing */
	q.res.nmatches = 0;
	q.res.nexpired = 0;
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 3);
}

/* mm_step refuses pools that break its assumptions. */
void
test_step_invalid(void)
{
	MMConfig	cfg = make_cfg(MM_ALGO_GREEDY, 2, 1, 10.0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.3, 5.0);
	tq_add(&q, 0.4, 3.0);		/* out of order */
	CHECK_STR(tq_step(&q, 6.0), "error 1");
	tq_init(&q, &cfg);
	tq_add(&q, 1.5, 5.0);		/* not normalised */
	CHECK_STR(tq_step(&q, 6.0), "error 1");
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 5.0);
	CHECK_STR(tq_step(&q, NAN), "error 1");
	q.cfg.teams = 0;
	CHECK_STR(tq_step(&q, 6.0), "error 1");
	CHECK_INT(mm_step(&cfg, NULL, 1.0, &q.res), MM_ERR_ARGUMENT);
	CHECK_INT(mm_step(&cfg, &q.pool, 1.0, NULL), MM_ERR_ARGUMENT);

	/* an empty pool is fine */
	tq_init(&q, &cfg);
	CHECK_STR(tq_step(&q, 1.0), "");
}

/* A window queue: windows of width w on arrival, widening by widen_step every recheck seconds. */
static MMConfig
window_cfg(int k, double max_wait, double w, double widen_step, double recheck,
		   double cap, int percentile, MMTimeout on_timeout)
{
	MMConfig	cfg = make_cfg(MM_ALGO_WINDOW, k, 1, max_wait, on_timeout);

	cfg.window.width = w;
	cfg.window.widen = widen_step / recheck;
	cfg.recheck = recheck;
	cfg.window.max = cap;
	cfg.window.percentile = percentile;
	cfg.window.rematch_penalty = 0;	/* no penalty unless a test sets one */
	return cfg;
}

/*
 * The thread's examples.  hplus0603: a player who waited long enough
 * accepts a newcomer who does not yet accept him; they meet when the
 * newcomer's window has widened enough (windows +-5 % on entry, 5 % more
 * every 10 s).  myro's first suggestion: with windows widening for
 * everyone, the teams that happen to accept each other first are paired,
 * not the closest ones.
 */
void
test_window_thread(void)
{
	MMConfig	cfg = window_cfg(2, 1000.0, 0.05, 0.05, 10.0, 1.0, 0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.2, 0.0);		/* "rank 800", waits 300 s */
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_STR(tq_step(&q, 300.0), "");
	tq_add(&q, 0.6, 300.0);		/* "rank 2000" joins: 0.4 away */
	CHECK_STR(tq_step(&q, 300.0), "");
	/*
	 * the old one's window is at its cap; the newcomer's holds 0.4 after
	 * its seventh widening: the widenings before cannot make a match
	 */
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 370.0, 1e-9);
	CHECK_STR(tq_step(&q, 360.0), "");	/* 0.05 + 6 * 0.05 = 0.35 < 0.4 */
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 370.0, 1e-9);
	CHECK_STR(tq_step(&q, 370.0), "{0.2,0.6}");

	/* myro: windows 0.015 growing 0.01 a minute */
	cfg = window_cfg(2, 1000.0, 0.015, 0.01, 60.0, 1.0, 0, MM_TIMEOUT_BOTS);
	tq_init(&q, &cfg);
	tq_add(&q, 0.23, 0.0);		/* Team0 */
	tq_add(&q, 0.20, 0.0);		/* Team1 */
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_STR(tq_step(&q, 60.0), "");
	tq_add(&q, 0.205, 60.0);	/* Team2: Team0 would take it, but it does not accept Team0 */
	tq_add(&q, 0.19, 60.0);		/* Team3 */
	CHECK_STR(tq_step(&q, 60.0), "{0.2,0.205}");
	/* Team0 and Team3 are 0.04 apart: Team0 accepts from 180 s, Team3 from 240 s */
	CHECK_STR(tq_step(&q, 180.0), "");
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 240.0, 1e-9);
	CHECK_STR(tq_step(&q, 240.0), "{0.19,0.23}");
	CHECK(isinf(mm_next_deadline(&cfg, &q.pool)));
}

/*
 * Percentile windows (Hazerider): distances are rating ranks, so a lone
 * high player is matched with the next one down however far its rating.
 */
void
test_window_percentile(void)
{
	MMConfig	cfg = window_cfg(2, 100.0, 0.1, 0.0, 1.0, 0.1, 0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.0, 1.0);
	tq_add(&q, 0.01, 2.0);
	tq_add(&q, 0.02, 3.0);
	CHECK_STR(tq_step(&q, 3.0), "{0,0.01}");
	CHECK_INT(q.pool.ntickets, 2);
	/* without widening nothing changes before the oldest times out */
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 100.0, 0);

	cfg = window_cfg(2, 100.0, 0.34, 0.0, 1.0, 0.34, 1, MM_TIMEOUT_BOTS);
	tq_init(&q, &cfg);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.0, 1.0);
	tq_add(&q, 0.01, 2.0);
	tq_add(&q, 0.02, 3.0);
	/* ranks 0, 1/3, 2/3, 1: the oldest (0.9) is one rank from 0.02 */
	CHECK_STR(tq_step(&q, 3.0), "{0.02,0.9} {0,0.01}");

	/*
	 * Equal ratings share their mean rank: two players of one rating are 0
	 * apart (not 1, as ranks by arrival would put them); with a third above
	 * (ranks 1/4, 1/4, 1) only the equal pair is within 0.1.
	 */
	cfg = window_cfg(2, 100.0, 0.1, 0.0, 0.1, 0.1, 1, MM_TIMEOUT_BOTS);
	tq_init(&q, &cfg);
	tq_add(&q, 0.3, 0.0);
	tq_add(&q, 0.3, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "{0.3,0.3}");
	tq_init(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.3, 1.0);
	tq_add(&q, 0.3, 2.0);
	CHECK_STR(tq_step(&q, 2.0), "{0.3,0.3}");
	CHECK_INT(q.pool.ntickets, 1);
}

/* A uniform draw in [0, 1) from an LCG state. */
static double
unit_draw(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (*seed >> 11) / 9007199254740992.0;
}

/* One step of q at now, appended to log ("now:desc;") when it decided anything. */
static void
tq_step_log(TestQueue *q, double now, char *log, size_t size)
{
	const char *desc = tq_step(q, now);
	size_t		len = strlen(log);

	if (desc[0] != '\0' && len < size)
		snprintf(log + len, size - len, "%g:%s;", now, desc);
}

/*
 * The deadline skips the widenings that cannot make a group: two players
 * whose windows never reach each other wait for their timeout, and on
 * random queues (pairs and threes, percentile or not, some windows that
 * never widen) stepping at the arrivals and deadlines decides exactly as
 * stepping at every recheck instant and timeout besides.
 */
void
test_window_deadline_skips(void)
{
	MMConfig	cfg = window_cfg(2, 1e6, 0.05, 0.1, 1.0, 0.5, 0, MM_TIMEOUT_BOTS);
	TestQueue	qa,
				qb;
	uint64_t	seed = 5;
	static char loga[8192],
				logb[8192];
	int			fewer = 0;

	tq_init(&qa, &cfg);
	tq_add(&qa, 0.0, 0.0);
	tq_add(&qa, 1.0, 0.0);
	CHECK_STR(tq_step(&qa, 0.0), "");
	CHECK_NEAR(mm_next_deadline(&cfg, &qa.pool), 1e6, 0);

	/*
	 * Widenings far below an ulp: the sum width + 28 widenings already
	 * rounds up to the distance (a quotient would say 56, past the
	 * timeout), so the deadline is the 28th instant and the pair plays then.
	 */
	cfg = window_cfg(2, 40.0, 0.1 + 0.2, 1e-18, 1.0, 0.5, 0, MM_TIMEOUT_BOTS);
	tq_init(&qa, &cfg);
	tq_add(&qa, 0.0, 0.0);
	tq_add(&qa, 0.3000000000000001, 0.0);
	CHECK_STR(tq_step(&qa, 0.0), "");
	CHECK_NEAR(mm_next_deadline(&cfg, &qa.pool), 28.0, 0);
	CHECK_STR(tq_step(&qa, 27.0), "");
	CHECK_STR(tq_step(&qa, 28.0), "{0,0.3}");

	for (int round = 0; round < 400; round++)
	{
		int			k = 2 + round % 2;
		double		recheck = round % 3 == 0 ? 0.5 : 1.0;
		double		arrivals[12];
		double		ratings[12];
		int			n = 2 + (int) (unit_draw(&seed) * 10);
		int			next = 0,
					steps_a = 0,
					steps_b = 0;
		double		end;

		cfg = window_cfg(k, 5.0 + unit_draw(&seed) * 20.0, unit_draw(&seed) * 0.1,
						 round % 5 == 0 ? 0.0 : unit_draw(&seed) * 0.05 * recheck, recheck,
						 0.1 + unit_draw(&seed) * 0.5, round % 4 == 0, MM_TIMEOUT_BOTS);
		if (cfg.window.max < cfg.window.width)
			cfg.window.max = cfg.window.width;
		for (int i = 0; i < n; i++)
		{
			arrivals[i] = (i > 0 ? arrivals[i - 1] : 0.0) + (round % 7 == 0 ? 0.0 : unit_draw(&seed) * 3.0);
			ratings[i] = round % 6 == 0 ? floor(unit_draw(&seed) * 4) / 4 : unit_draw(&seed);
		}
		end = arrivals[n - 1] + cfg.max_wait + 1.0;
		tq_init(&qa, &cfg);
		tq_init(&qb, &cfg);
		loga[0] = logb[0] = '\0';
		/* a: every arrival, recheck instant and timeout */
		for (double grid = 0.0; next < n || grid <= end;)
		{
			double		t = next < n && arrivals[next] < grid ? arrivals[next] : grid;

			if (qa.pool.ntickets > 0 && qa.pool.tickets[0].arrival + cfg.max_wait < t)
				t = qa.pool.tickets[0].arrival + cfg.max_wait;

			while (next < n && arrivals[next] <= t)
			{
				tq_add(&qa, ratings[next], arrivals[next]);
				next++;
			}
			tq_step_log(&qa, t, loga, sizeof(loga));
			steps_a++;
			if (t == grid)
				grid += recheck;
		}
		/* b: every arrival, and every deadline before the next one */
		next = 0;
		while (next < n || qb.pool.ntickets > 0)
		{
			double		due = qb.pool.ntickets > 0 ? mm_next_deadline(&cfg, &qb.pool) : INFINITY;

			if (next < n && !(due < arrivals[next]))
			{
				double		t = arrivals[next];

				while (next < n && arrivals[next] == t)
					tq_add(&qb, ratings[next], arrivals[next]), next++;
				tq_step_log(&qb, t, logb, sizeof(logb));
			}
			else if (isfinite(due))
				tq_step_log(&qb, due, logb, sizeof(logb));
			else
				break;
			steps_b++;
		}
		CHECK_STR(logb, loga);
		CHECK_INT(qb.pool.ntickets, 0);
		fewer += steps_b < steps_a;
	}
	CHECK(fewer > 300);
}

/* Groups of k: every member accepts every other; the tightest run wins; timeouts. */
void
test_window_groups(void)
{
	MMConfig	cfg = window_cfg(3, 10.0, 0.05, 0.0, 1.0, 0.05, 0, MM_TIMEOUT_BOTS);
	TestQueue	q;

	tq_init(&q, &cfg);
	tq_add(&q, 0.10, 0.0);
	tq_add(&q, 0.12, 0.5);
	tq_add(&q, 0.50, 1.0);
	tq_add(&q, 0.16, 1.5);		/* 0.06 from 0.10: outside 0.10's window */
	CHECK_STR(tq_step(&q, 1.5), "");
	tq_add(&q, 0.14, 2.0);		/* now 0.10..0.14 is a group; 0.12..0.16 as tight */
	CHECK_STR(tq_step(&q, 2.0), "{0.1,0.12,0.14}");
	/* at max_wait the lone ones play with bots, oldest first */
	CHECK_STR(tq_step(&q, 11.0), "{0.5+2b}");
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 11.5, 0);
	q.cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	CHECK_STR(tq_step(&q, 11.5), "x0.16");

	/* a bad window configuration is refused */
	cfg.window.max = 0.01;		/* below window */
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.window.max = 0.05;
	cfg.recheck = 0;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.recheck = 1;
	cfg.window.percentile = 2;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
}

/* A cluster queue of k players: logistic decay (midpoint, steepness), threshold, shift. */
static MMConfig
cluster_cfg(int k, double max_wait, double midpoint, double steepness,
			double threshold, double shift)
{
	MMConfig	cfg = make_cfg(MM_ALGO_CLUSTER, k, 1, max_wait, MM_TIMEOUT_BOTS);

	cfg.cluster.midpoint = midpoint;
	cfg.cluster.steepness = steepness;
	cfg.cluster.threshold = threshold;
	cfg.cluster.shift = shift;
	cfg.cluster.shift_auto = 0;
	cfg.recheck = 1.0;
	return cfg;
}

/*
 * The CS:GO post's curve: 1 on arrival, about a half at the midpoint (330
 * s), toward 0 after; and its example: two players too far apart at first
 * meet once their ratings have decayed close enough.
 */
void
test_cluster_decay(void)
{
	MMConfig	cfg = cluster_cfg(2, 1000.0, 330.0, 0.02, 0.1, 0.0);
	TestQueue	q;
	double		prev = 2.0;

	CHECK_NEAR(mm_cluster_decay(&cfg, 0.0), 1.0, 1e-12);
	CHECK_NEAR(mm_cluster_decay(&cfg, 330.0), 0.5, 0.001);
	CHECK(mm_cluster_decay(&cfg, 1e6) < 1e-12);
	for (double t = 0; t < 2000; t += 7)
	{
		double		d = mm_cluster_decay(&cfg, t);

		CHECK(d < prev && d > 0);
		prev = d;
	}

	/*
	 * 0.1 and 0.9 around their mean 0.5: 0.8 apart times the decay; the
	 * centroid of one (itself) is within 0.1 of the other once
	 * 0.8 s(tau) < 0.1, that is tau > 427.4 s.
	 */
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_STR(tq_step(&q, 427.0), "");
	CHECK_NEAR(mm_next_deadline(&cfg, &q.pool), 428.0, 1e-9);
	CHECK_STR(tq_step(&q, 428.0), "{0.1,0.9}");
}

/*
 * Tickets join the closest centroid within the threshold in arrival order,
 * and a full cluster plays; a newcomer shifted by the average wait joins
 * players who have decayed toward the mean.
 */
void
test_cluster_groups(void)
{
	MMConfig	cfg = cluster_cfg(3, 1000.0, 300.0, 0.02, 0.07, 0.0);
	TestQueue	q;

	/* k = 3: 0.5 opens, 0.56 joins (centroid 0.53), 0.44 is 0.09 away and opens */
	tq_init(&q, &cfg);
	tq_add(&q, 0.50, 0.0);
	tq_add(&q, 0.56, 0.0);
	tq_add(&q, 0.44, 0.0);
	tq_add(&q, 0.45, 0.0);		/* joins 0.44 */
	tq_add(&q, 0.52, 0.0);		/* joins 0.5 and 0.56: full */
	tq_add(&q, 0.40, 0.0);		/* joins 0.44 and 0.45: full */
	CHECK_STR(tq_step(&q, 0.0), "{0.5,0.52,0.56} {0.4,0.44,0.45}");

	/*
	 * Two players waited 400 s (decay 0.2) around the mean; a newcomer at
	 * 0.95 is far from them unless it is shifted by the average wait.
	 */
	cfg = cluster_cfg(2, 1000.0, 300.0, 0.02, 0.05, 0.0);
	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	tq_add(&q, 0.95, 400.0);
	CHECK_STR(tq_step(&q, 400.0), "");
	q.cfg.cluster.shift = 400.0;
	CHECK_STR(tq_step(&q, 400.0), "{0.9,0.95}");

	/* timed out: the open cluster plays with bots, or the ticket expires */
	cfg = cluster_cfg(3, 10.0, 300.0, 0.02, 0.05, 0.0);
	tq_init(&q, &cfg);
	tq_add(&q, 0.2, 0.0);
	tq_add(&q, 0.22, 1.0);
	tq_add(&q, 0.8, 2.0);
	CHECK_STR(tq_step(&q, 10.0), "{0.2,0.22+1b}");
	q.cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	CHECK_STR(tq_step(&q, 12.0), "x0.8");

	/*
	 * The matches a step makes move the mean the others decay toward: the
	 * step passes again over those left, so that another step before the
	 * next recheck instant finds nothing (a single pass left {0.23,0.65}
	 * to the next step, whenever it came).
	 */
	cfg = cluster_cfg(2, 30.0, 5.0, 1.0, 0.1, 0.0);
	tq_init(&q, &cfg);
	tq_add(&q, 0.65, 2.5);
	tq_add(&q, 0.37, 5.75);
	tq_add(&q, 0.65, 9.0);
	tq_add(&q, 0.23, 12.75);
	tq_add(&q, 0.07, 17.0);
	tq_add(&q, 0.65, 17.25);
	CHECK_STR(tq_step(&q, 17.35), "{0.37,0.65} {0.23,0.65}");
	CHECK_STR(tq_step(&q, 17.35), "");
	CHECK_STR(tq_step(&q, 17.9), "");
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 18.0, 1e-9);

	cfg.cluster.threshold = 0;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.cluster.threshold = 0.05;
	cfg.cluster.steepness = 0;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
}

/* Start an empty queue whose pool a simulation would keep (MMPool.closed), without parties. */
static void
tq_init_closed(TestQueue *q, const MMConfig *cfg)
{
	tq_init(q, cfg);
	q->pool.closed = true;
	q->pool.solo = true;
}

/*
 * A closed pool (a simulation's, MMPool.closed) passes over the recheck
 * instants at which no two tickets can come within the threshold: 0.1 and
 * 0.9, which meet after 427.4 s (test_cluster_decay), are due at 428 s,
 * where an open pool (a live queue's) looks at every recheck instant.
 * With a third ticket between them the bound is short of the instant they
 * meet, and the steps at the deadlines close in on it.  Tickets already
 * within the threshold, or a timeout first, keep the old deadline.
 */
void
test_cluster_deadline_skips(void)
{
	MMConfig	cfg = cluster_cfg(2, 1000.0, 330.0, 0.02, 0.1, 0.0);
	TestQueue	q;
	double		d,
				prev;
	int			steps = 0;

	tq_init(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 1.0, 1e-9);
	q.pool.closed = true;
	q.pool.solo = true;
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 428.0, 1e-9);
	CHECK_STR(tq_step(&q, 200.5), "");
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 428.0, 1e-9);
	CHECK_STR(tq_step(&q, 427.0), "");
	CHECK_STR(tq_step(&q, 428.0), "{0.1,0.9}");

	/*
	 * 0.1, 0.5 and 0.9: 0.5 stays at the mean, and 0.1 joins it once
	 * 0.4 s(tau) < 0.1, after 385.02 s; each deadline comes before that
	 */
	tq_init_closed(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	prev = 0.0;
	for (;;)
	{
		d = mm_next_deadline(&q.cfg, &q.pool);
		CHECK(d > prev && d <= 386.0 && d == floor(d));
		if (!(d > prev && d <= 386.0) || steps++ > 50)
			break;
		prev = d;
		if (strcmp(tq_step(&q, d), "") != 0)
			break;
	}
	CHECK_NEAR(d, 386.0, 1e-9);
	CHECK_STR(q.desc, "{0.1,0.5}");
	CHECK(steps > 2 && steps < 20);

	/* the timeout comes first */
	cfg = cluster_cfg(2, 300.0, 330.0, 0.02, 0.1, 0.0);
	tq_init_closed(&q, &cfg);
	tq_add(&q, 0.1, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 300.0, 1e-9);

	/* k = 3, two within the threshold already: every recheck instant */
	cfg = cluster_cfg(3, 1000.0, 330.0, 0.02, 0.1, 0.0);
	tq_init_closed(&q, &cfg);
	tq_add(&q, 0.5, 0.0);
	tq_add(&q, 0.52, 0.0);
	tq_add(&q, 0.9, 0.0);
	CHECK_STR(tq_step(&q, 0.0), "");
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 1.0, 1e-9);
}

/* Rematch avoidance: a ban keeps two players apart; a penalty counts as distance against the windows. */
void
test_window_rematch(void)
{
	static const MMMetPair met[] = {{1, 2, 0}};
	MMConfig	cfg = window_cfg(2, 100.0, 0.2, 0.0, 1.0, 0.2, 0, MM_TIMEOUT_BOTS);
	/* the rematch is 0.02 apart, plus the penalty; windows are 0.2 */
	static const double penalties[] = {0.0, 0.1, 0.17, 0.19, INFINITY};
	static const char *const expect[] = {"{0.5,0.52}", "{0.5,0.52}", "{0.5,0.52}", "{0.5,0.6}", "{0.5,0.6}"};

	for (int p = 0; p < 5; p++)
	{
		TestQueue	q;

		tq_init(&q, &cfg);
		q.cfg.window.rematch_penalty = penalties[p];
		q.pool.met = met;
		q.pool.nmet = 1;
		tq_add(&q, 0.5, 0.0);	/* id 1 */
		tq_add(&q, 0.52, 0.0);	/* id 2: met id 1 */
		tq_add(&q, 0.6, 0.0);	/* id 3 */
		CHECK_STR(tq_step(&q, 0.0), expect[p]);
	}
	cfg.window.rematch_penalty = -1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);

	/*
	 * A free-for-all of 4: a met pair inside a run that the sweep from its
	 * oldest member keeps (ids 2 and 4, 0.02 apart) rejects the run when
	 * the distance plus the penalty leaves a window; a pair with a ticket
	 * not waiting (id 99) changes nothing.
	 */
	{
		static const MMMetPair met4[] = {{2, 4, 0}, {3, 99, 0}};
		static const double pen4[] = {0.17, 0.195, INFINITY};
		static const char *const expect4[] = {
			"{0.5,0.51,0.52,0.53}", "{0.5,0.51,0.52,0.6}", "{0.5,0.51,0.52,0.6}"};
		MMConfig	cfg4 = window_cfg(4, 100.0, 0.2, 0.0, 1.0, 0.2, 0, MM_TIMEOUT_BOTS);

		for (int p = 0; p < 3; p++)
		{
			TestQueue	q;

			tq_init(&q, &cfg4);
			q.cfg.window.rematch_penalty = pen4[p];
			q.pool.met = met4;
			q.pool.nmet = 2;
			tq_add(&q, 0.5, 0.0);	/* id 1 */
			tq_add(&q, 0.51, 0.0);	/* id 2: met id 4 */
			tq_add(&q, 0.52, 0.0);
			tq_add(&q, 0.53, 0.0);	/* id 4 */
			tq_add(&q, 0.6, 0.0);
			tq_add(&q, 0.61, 0.0);
			CHECK_STR(tq_step(&q, 0.0), expect4[p]);
		}
	}
}

/*
 * A 1v1 match's teams and cost, which a step gives without the general
 * split and cost (finish_pair), are those of mm_split_teams and
 * mm_game_cost to the bit: every algorithm but optimize (which splits its
 * own teams), 1v1 pools of 2 to 100 tickets, half of them with ratings
 * on a grid of quarters (ties), arrivals up to 12 s before the step (so
 * most time out and pair) and some at the step itself (waits of 0).
 */
void
test_pair_finish(void)
{
	uint64_t	seed = 2024;
	int			checked = 0;
	int			ties = 0;

	for (int algo = 0; algo < MM_NUM_ALGORITHMS; algo++)
	{
		if (algo == MM_ALGO_OPTIMIZE)
			continue;
		for (int round = 0; round < 60; round++)
		{
			static TestQueue q;
			MMConfig	cfg = make_cfg((MMAlgorithm) algo, 2, 1, 5.0, MM_TIMEOUT_BOTS);
			int			n = 2 + (int) (test_rand(&seed) * 99);
			double		now = 100.0;
			double		t = now - 12.0;

			tq_init(&q, &cfg);
			for (int i = 0; i < n; i++)
			{
				double		r = test_rand(&seed);

				t += test_rand(&seed) * 24.0 / n;
				tq_add(&q, round % 2 ? (double) (int) (r * 4) / 4 : r,
					   round % 5 == 4 && i >= n / 2 ? now : (t < now ? t : now));
			}
			CHECK_INT(mm_step(&q.cfg, &q.pool, now, &q.res), MM_OK);
			for (int j = 0; j < q.res.nmatches; j++)
			{
				const MMMatch *m = &q.res.matches[j];
				double		r[2];
				double		w[2];
				int			tm[2];
				MMCost		c;

				if (m->nmembers != 2)
					continue;
				for (int i = 0; i < 2; i++)
				{
					const MMTicket *tk = &q.tickets[q.res.members[m->first + i]];

					r[i] = tk->rating;
					w[i] = now - tk->arrival > 0 ? now - tk->arrival : 0.0;
				}
				ties += r[0] == r[1];
				CHECK_INT(mm_split_teams(&q.cfg, 2, r, tm), MM_OK);
				CHECK_INT(mm_game_cost(2, 2, 1, r, NULL, w, q.cfg.max_wait, &c), MM_OK);
				CHECK_INT(q.res.teams[m->first], tm[0]);
				CHECK_INT(q.res.teams[m->first + 1], tm[1]);
				CHECK(memcmp(&m->cost.criteria, &c.criteria, sizeof(double)) == 0);
				CHECK(memcmp(&m->cost.wait, &c.wait, sizeof(double)) == 0);
				CHECK(memcmp(&m->cost.total, &c.total, sizeof(double)) == 0);
				checked++;
			}
		}
	}
	printf("     %d matches of two checked, %d of them tied\n", checked, ties);
	CHECK(checked > 1000);
	CHECK(ties > 50);
}
