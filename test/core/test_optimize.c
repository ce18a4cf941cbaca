/*
 * test_optimize.c
 *		The optimize algorithm: its match score, the team split, the
 *		search on the write-up's examples, parties, timeouts, determinism,
 *		configuration and deadlines.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OQ_MAX 128

/* A queue of hand-made tickets with a ping table (one row per ticket). */
typedef struct OptQueue
{
	MMConfig	cfg;
	MMTicket	tickets[OQ_MAX];
	float		ping[OQ_MAX * 4];
	MMMetPair	met[OQ_MAX * 4];
	MMPool		pool;
	MMMatch		matches[OQ_MAX];
	int			members[OQ_MAX];
	int			teams[OQ_MAX];
	int			expired[OQ_MAX];
	MMResult	res;
} OptQueue;

/* Optimize in teams x team_size with the given weights, everything else lenient. */
static MMConfig
opt_cfg(int teams, int team_size)
{
	MMConfig	cfg;

	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.teams = teams;
	cfg.team_size = team_size;
	mm_config_set_max_wait(&cfg, 100.0);
	cfg.recheck = 10.0;
	cfg.optimize.weights.balance = cfg.optimize.weights.spread = 1.0;
	cfg.optimize.weights.premades = cfg.optimize.weights.ping = 0.0;
	cfg.optimize.weights.variation = cfg.optimize.weights.hosts = 0.0;
	cfg.optimize.ping_max = 200.0;
	cfg.optimize.host_ping = 100.0;
	cfg.optimize.restarts = 0;
	cfg.optimize.budget_ms = 1e6;
	cfg.optimize.seed = 1;
	return cfg;
}

static void
oq_init(OptQueue *q, const MMConfig *cfg)
{
	memset(q, 0, sizeof(*q));
	q->cfg = *cfg;
	q->pool.tickets = q->tickets;
	q->pool.ping = q->ping;
	q->pool.nregions = 2;
	q->pool.met = q->met;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
	for (int i = 0; i < OQ_MAX * 4; i++)
		q->ping[i] = NAN;
}

/* Add a ticket (id = its index + 1) with a party and pings to two regions (NAN: unknown). */
static void
oq_add(OptQueue *q, double rating, double arrival, int party, float p0, float p1)
{
	int			i = q->pool.ntickets++;
	MMTicket   *t = &q->tickets[i];

	t->id = i + 1;
	t->rating = rating;
	t->arrival = arrival;
	t->group = -1;
	t->party = party;
	t->attr = -1;
	if (!isnan(p0) || !isnan(p1))
	{
		t->attr = i;
		q->ping[i * 2] = p0;
		q->ping[i * 2 + 1] = p1;
	}
}

/* The match (index into res) holding ticket index x, or -1; its team in *team. */
static int
match_of(const OptQueue *q, int x, int *team)
{
	for (int j = 0; j < q->res.nmatches; j++)
	{
		const MMMatch *m = &q->res.matches[j];

		for (int i = 0; i < m->nmembers; i++)
			if (q->members[m->first + i] == x)
			{
				if (team != NULL)
					*team = q->teams[m->first + i];
				return j;
			}
	}
	return -1;
}

/* The score of match j of the result as it stands. */
static double
result_match_score(const OptQueue *q, int j)
{
	const MMMatch *m = &q->res.matches[j];

	return mm_optimize_match_score(&q->cfg, &q->pool, q->members + m->first,
								   q->teams + m->first, m->nmembers);
}

/* The factors on the write-up's examples, one weight at a time. */
void
test_optimize_score(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	OptQueue	q;
	int			mem[6] = {0, 1, 2, 3, 4, 5};
	int			tm[6] = {1, 1, 1, 2, 2, 2};

	/* premades only: a party of 3 against 3 solos, then against 2 + 1 */
	cfg.optimize.weights.balance = cfg.optimize.weights.spread = 0;
	cfg.optimize.weights.premades = 1;
	oq_init(&q, &cfg);
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.5, 0, 7, NAN, NAN);
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.5, 0, -1, NAN, NAN);
	CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, mem, tm, 6), 0.0, 1e-12);
	q.tickets[3].party = 8;
	q.tickets[4].party = 8;
	CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, mem, tm, 6), 0.5, 1e-12);
	q.tickets[5].party = 8;
	CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, mem, tm, 6), 1.0, 1e-12);

	/* balance: team means 0.2 and 0.5; spread: 1 - mean pair distance */
	cfg = opt_cfg(2, 2);
	cfg.optimize.weights.spread = 0;
	oq_init(&q, &cfg);
	oq_add(&q, 0.1, 0, -1, NAN, NAN);
	oq_add(&q, 0.3, 0, -1, NAN, NAN);
	oq_add(&q, 0.4, 0, -1, NAN, NAN);
	oq_add(&q, 0.6, 0, -1, NAN, NAN);
	{
		int			m4[4] = {0, 1, 2, 3};
		int			t4[4] = {1, 1, 2, 2};

		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.7, 1e-12);
		q.cfg.optimize.weights.balance = 0;
		q.cfg.optimize.weights.spread = 1;
		/* pairs: .2 .3 .5 .1 .3 .2 = 1.6 over 6 */
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 1 - 1.6 / 6, 1e-12);
		/* capped to [0.3, 0.5]: 0, 0, 0.5, 1 */
		q.cfg.optimize.skill_lo = 0.3;
		q.cfg.optimize.skill_hi = 0.5;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 1 - 3.5 / 6, 1e-12);
		q.cfg.optimize.skill_lo = 0;
		q.cfg.optimize.skill_hi = 1;

		/* ping with opponents: unknown pings leave the factor out */
		q.cfg.optimize.weights.spread = 0;
		q.cfg.optimize.weights.ping = 1;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.0, 1e-12);
		q.cfg.optimize.weights.balance = 1;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.7, 1e-12);
		q.cfg.optimize.weights.balance = 0;
		/* 0 and 1 in region 0 (10, 30 ms); 2 in both (20, 5); 3 in region 1 only (25) */
		q.tickets[0].attr = 0;
		q.ping[0] = 10;
		q.tickets[1].attr = 1;
		q.ping[2] = 30;
		q.tickets[2].attr = 2;
		q.ping[4] = 20;
		q.ping[5] = 5;
		q.tickets[3].attr = 3;
		q.ping[7] = 25;
		/* opponents: 0-2 30, 0-3 ?, 1-2 50, 1-3 ?: (0.85 + 0.75) / 2 */
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.8, 1e-9);
		/* hosts: only 2 knows everyone (2-0 30, 2-1 50, 2-3 30); 0 and 1 miss 3 */
		q.cfg.optimize.weights.ping = 0;
		q.cfg.optimize.weights.hosts = 1;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.5, 1e-12);
		q.cfg.optimize.host_ping = 50;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.5, 1e-12);
		q.cfg.optimize.host_ping = 49;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 0.0, 1e-12);
		q.cfg.optimize.host_ping = 100;
		q.ping[1] = 10;			/* 0 now reaches 3 through region 1: 35 */
		q.ping[3] = 10;			/* and 1 too: 35; 1-0 is 20 */
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 1.0, 1e-12);

		/* variation: 0-1 were teammates (same now: 1), 0-2 opponents (now too: 1), 1-3 teammates (switched: 0.5) */
		q.cfg.optimize.weights.hosts = 0;
		q.cfg.optimize.weights.variation = 1;
		q.met[0] = (MMMetPair) {1, 2, 1};
		q.met[1] = (MMMetPair) {1, 3, 0};
		q.met[2] = (MMMetPair) {2, 4, 1};
		q.pool.nmet = 3;
		CHECK_NEAR(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4), 1 - 2.5 / 6, 1e-12);

		/* bad input */
		t4[3] = 1;
		CHECK(isnan(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4)));
		t4[3] = 3;
		CHECK(isnan(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4)));
		t4[3] = 2;
		m4[3] = 4;
		CHECK(isnan(mm_optimize_match_score(&q.cfg, &q.pool, m4, t4, 4)));
	}
}

/* The premade example: two 3-player premades face each other, not solos. */
void
test_optimize_premades(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	OptQueue	q;
	double		score;
	int			ta = 0;
	int			tb = 0;

	cfg.optimize.weights.premades = 1;
	cfg.optimize.restarts = 30;
	oq_init(&q, &cfg);
	/* similar skills, sorted so that sort-and-group puts each premade with solos */
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.40, 0, 1, NAN, NAN);
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.42 + 0.01 * i, 0, -1, NAN, NAN);
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.46 + 0.01 * i, 0, -1, NAN, NAN);
	for (int i = 0; i < 3; i++)
		oq_add(&q, 0.50, 0, 2, NAN, NAN);

	/* the start alone: each premade with three solos; a single swap cannot fix it */
	q.cfg.optimize.restarts = 0;
	CHECK_INT(mm_optimize_search(&q.cfg, &q.pool, 0, &q.res, &score, NULL, -1), MM_OK);
	CHECK_INT(q.res.nmatches, 2);
	CHECK(match_of(&q, 0, NULL) != match_of(&q, 9, NULL));
	q.cfg.optimize.restarts = cfg.optimize.restarts;

	q.res.nmatches = q.res.nexpired = 0;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, &score, NULL), MM_OK);
	CHECK_INT(q.res.nmatches, 2);
	CHECK_INT(q.res.nexpired, 0);
	CHECK(match_of(&q, 0, &ta) == match_of(&q, 9, &tb));
	CHECK(ta != tb);
	for (int i = 0; i < 3; i++)
	{
		int			t = 0;

		CHECK(match_of(&q, i, &t) == match_of(&q, 0, NULL) && t == ta);
		CHECK(match_of(&q, 9 + i, &t) == match_of(&q, 9, NULL) && t == tb);
	}
	CHECK(score > 0.9);
}

/* Two regions, similar skills: sort-and-group mixes them, the swaps make matches regional. */
void
test_optimize_regions(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	OptQueue	q;
	double		start_score;
	double		score;
	int			climbs;

	cfg.optimize.weights.ping = 2;
	cfg.optimize.weights.hosts = 1;
	oq_init(&q, &cfg);
	/* alternating regions along the rating axis: region 0 at even i */
	for (int i = 0; i < 24; i++)
	{
		if (i % 2 == 0)
			oq_add(&q, 0.40 + 0.005 * i, 0, -1, 20, 150);
		else
			oq_add(&q, 0.40 + 0.005 * i, 0, -1, 150, 20);
	}
	CHECK_INT(mm_optimize_search(&q.cfg, &q.pool, 0, &q.res, &start_score, NULL, 0), MM_OK);
	CHECK_INT(q.res.nmatches, 4);
	/* the start is by rating: both regions in every match */
	for (int j = 0; j < 4; j++)
	{
		int			r0 = 0;

		for (int i = 0; i < 6; i++)
			r0 += q.members[q.res.matches[j].first + i] % 2 == 0;
		CHECK_INT(r0, 3);
	}
	q.res.nmatches = q.res.nexpired = 0;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, &score, &climbs), MM_OK);
	CHECK_INT(q.res.nmatches, 4);
	CHECK(climbs > 0);
	CHECK(score > start_score + 0.2);
	for (int j = 0; j < 4; j++)
	{
		int			r0 = 0;

		for (int i = 0; i < 6; i++)
			r0 += q.members[q.res.matches[j].first + i] % 2 == 0;
		CHECK(r0 == 0 || r0 == 6);
	}
	/* the round score is the mean of the match scores */
	{
		double		s = 0;

		for (int j = 0; j < 4; j++)
			s += result_match_score(&q, j);
		CHECK_NEAR(score, s / 4, 1e-12);
	}
}

/* The best split of all valid assignments, found by enumerating every team vector. */
static double
exhaustive_best(const OptQueue *q, const int *mem, int n)
{
	int			T = q->cfg.teams;
	int			tm[MM_OPTIMIZE_MAX_K];
	long		total = 1;
	double		best = -INFINITY;

	for (int i = 0; i < n; i++)
		total *= T;
	for (long code = 0; code < total; code++)
	{
		long		c = code;
		int			cnt[MM_OPTIMIZE_MAX_K] = {0};
		int			ok = 1;

		for (int i = 0; i < n; i++)
		{
			tm[i] = (int) (c % T) + 1;
			c /= T;
			if (++cnt[tm[i] - 1] > q->cfg.team_size)
				ok = 0;
		}
		/* a party stays together */
		for (int i = 0; i < n && ok; i++)
			for (int j = 0; j < i; j++)
				if (q->tickets[mem[i]].party >= 0 &&
					q->tickets[mem[i]].party == q->tickets[mem[j]].party && tm[i] != tm[j])
					ok = 0;
		if (ok)
		{
			double		s = mm_optimize_match_score(&q->cfg, &q->pool, mem, tm, n);

			if (s > best)
				best = s;
		}
	}
	return best;
}

/* The split inside a match is the best one: compared with every assignment. */
void
test_optimize_split(void)
{
	static const int shapes[][2] = {{2, 3}, {3, 2}, {2, 4}, {4, 2}, {2, 2}};
	uint64_t	r = 12345;

	for (size_t sh = 0; sh < sizeof(shapes) / sizeof(shapes[0]); sh++)
		for (int trial = 0; trial < 12; trial++)
		{
			MMConfig	cfg = opt_cfg(shapes[sh][0], shapes[sh][1]);
			OptQueue	q;
			int			k = mm_config_k(&cfg);
			int			mem[MM_OPTIMIZE_MAX_K];

			cfg.optimize.weights.premades = 1;
			cfg.optimize.weights.ping = 1.5;
			cfg.optimize.weights.variation = 0.5;
			cfg.optimize.weights.hosts = 0.3;
			oq_init(&q, &cfg);
			for (int i = 0; i < k; i++)
			{
				/* parties of 2 for some pairs (only when teams hold them) */
				int			party = (cfg.team_size >= 2 && i % 4 == 1 && trial % 2 == 0) ? i - 1 : -1;

				r = r * 6364136223846793005ULL + 1442695040888963407ULL;
				oq_add(&q, (double) (r >> 40) / (double) (1ULL << 24), 0, -1,
					   (float) ((r >> 20) % 120), (r >> 10) % 3 == 0 ? NAN : (float) ((r >> 30) % 150));
				if (party >= 0)
				{
					q.tickets[i].party = party;
					q.tickets[i - 1].party = party;
				}
			}
			/* some of them met: teammates or opponents */
			for (int i = 0; i < k; i++)
				for (int j = i + 1; j < k; j++)
					if ((i * 7 + j * 3 + trial) % 5 == 0)
						q.met[q.pool.nmet++] = (MMMetPair) {i + 1, j + 1, (i + j + trial) % 2};
			CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_OK);
			CHECK_INT(q.res.nmatches, 1);
			if (q.res.nmatches != 1)
				continue;
			for (int i = 0; i < k; i++)
				mem[i] = q.members[i];
			CHECK_NEAR(result_match_score(&q, 0), exhaustive_best(&q, mem, k), 1e-12);
			/* members in pool order, the oldest member's team is 1 */
			CHECK_INT(q.teams[0], 1);
			for (int i = 1; i < k; i++)
				CHECK(q.members[i] > q.members[i - 1]);
		}
}

/* Opponent variation: the same six meeting again swap their teams around. */
void
test_optimize_variation(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	OptQueue	q;
	int			before[6] = {1, 1, 1, 2, 2, 2};
	int			mem[6] = {0, 1, 2, 3, 4, 5};

	cfg.optimize.weights.variation = 0.1;
	oq_init(&q, &cfg);
	/* the same ratings, so only variation tells the splits apart */
	for (int i = 0; i < 6; i++)
		oq_add(&q, 0.5, 0, -1, NAN, NAN);
	/* last match: ids 1-3 against 4-6 */
	for (int i = 1; i <= 6; i++)
		for (int j = i + 1; j <= 6; j++)
			q.met[q.pool.nmet++] = (MMMetPair) {i, j, (i <= 3) == (j <= 3)};
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK(result_match_score(&q, 0) >
		  mm_optimize_match_score(&q.cfg, &q.pool, mem, before, 6) + 0.001);
	{
		int			same = 1;

		for (int i = 1; i < 6; i++)
			if ((q.teams[i] == q.teams[0]) != (before[i] == before[0]))
				same = 0;
		CHECK(!same);
	}
	/* without the met pairs every split ties and the first is kept */
	q.pool.nmet = 0;
	CHECK_NEAR(result_match_score(&q, 0), 1.0, 1e-12);
}

/* Parties stay whole in one team; a party bigger than a team waits, then expires. */
void
test_optimize_parties(void)
{
	uint64_t	r = 777;

	for (int trial = 0; trial < 10; trial++)
	{
		MMConfig	cfg = opt_cfg(2 + trial % 2, 3);
		OptQueue	q;
		int			n = 27 + trial;

		cfg.optimize.weights.premades = 1;
		cfg.optimize.restarts = 2;
		oq_init(&q, &cfg);
		for (int i = 0; i < n; i++)
		{
			r = r * 6364136223846793005ULL + 1442695040888963407ULL;
			oq_add(&q, (double) (r >> 40) / (double) (1ULL << 24), 0,
				   (r >> 8) % 3 == 0 ? (int) ((r >> 12) % 15) : -1, NAN, NAN);
		}
		CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_OK);
		CHECK(q.res.nmatches > 0);
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (q.tickets[i].party >= 0 && q.tickets[i].party == q.tickets[j].party)
				{
					int			ti = 0;
					int			tj = 0;
					int			mi = match_of(&q, i, &ti);
					int			mj = match_of(&q, j, &tj);

					CHECK(mi == mj && ti == tj);
				}
		for (int j = 0; j < q.res.nmatches; j++)
		{
			int			cnt[4] = {0};

			CHECK_INT(q.res.matches[j].nmembers, mm_config_k(&cfg));
			for (int i = 0; i < q.res.matches[j].nmembers; i++)
				cnt[q.teams[q.res.matches[j].first + i] - 1]++;
			for (int t = 0; t < cfg.teams; t++)
				CHECK_INT(cnt[t], cfg.team_size);
		}
	}

	/* a party of 4 in 3v3 waits while the solos play; it expires at its timeout */
	{
		MMConfig	cfg = opt_cfg(2, 3);
		OptQueue	q;

		cfg.max_wait = 30;
		oq_init(&q, &cfg);
		for (int i = 0; i < 4; i++)
			oq_add(&q, 0.5, 0, 5, NAN, NAN);
		for (int i = 0; i < 6; i++)
			oq_add(&q, 0.5, 1, -1, NAN, NAN);
		CHECK_INT(mm_step(&q.cfg, &q.pool, 10, &q.res), MM_OK);
		CHECK_INT(q.res.nmatches, 1);
		CHECK_INT(q.res.nexpired, 0);
		for (int i = 0; i < 4; i++)
			CHECK_INT(match_of(&q, i, NULL), -1);
		mm_pool_compact(&q.pool, &q.res);
		CHECK_INT(q.pool.ntickets, 4);
		CHECK_INT(mm_step(&q.cfg, &q.pool, 20, &q.res), MM_OK);
		CHECK_INT(q.res.nmatches + q.res.nexpired, 0);
		/* bots cannot help a party that does not fit a team */
		CHECK_INT(mm_step(&q.cfg, &q.pool, 30, &q.res), MM_OK);
		CHECK_INT(q.res.nmatches, 0);
		CHECK_INT(q.res.nexpired, 4);
	}
}

/* Timed-out units left over: alone with bots (one team), or they expire whole. */
void
test_optimize_timeout(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	OptQueue	q;

	cfg.max_wait = 30;
	oq_init(&q, &cfg);
	oq_add(&q, 0.2, 0, -1, NAN, NAN);	/* times out at 30 */
	oq_add(&q, 0.3, 5, 9, NAN, NAN);	/* a party of 2, times out at 35 */
	oq_add(&q, 0.4, 6, 9, NAN, NAN);
	oq_add(&q, 0.6, 20, -1, NAN, NAN);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 29, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches + q.res.nexpired, 0);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 30, 1e-12);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 30, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 1);
	CHECK_INT(q.res.matches[0].bots, 5);
	CHECK_INT(q.members[0], 0);
	CHECK_INT(q.teams[0], 1);
	mm_pool_compact(&q.pool, &q.res);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 35, 1e-12);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 35, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 2);
	CHECK_INT(q.res.matches[0].bots, 4);
	CHECK_INT(q.teams[0], 1);
	CHECK_INT(q.teams[1], 1);
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 1);

	/* expire: the whole party leaves with its oldest member */
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	oq_init(&q, &cfg);
	oq_add(&q, 0.3, 5, 9, NAN, NAN);
	oq_add(&q, 0.4, 6, 9, NAN, NAN);
	oq_add(&q, 0.6, 20, -1, NAN, NAN);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 35, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_INT(q.res.nexpired, 2);
	CHECK_INT(q.expired[0], 0);
	CHECK_INT(q.expired[1], 1);

	/* a timeout holds a full round off the grid: everybody who can play plays */
	cfg.on_timeout = MM_TIMEOUT_BOTS;
	oq_init(&q, &cfg);
	for (int i = 0; i < 7; i++)
		oq_add(&q, 0.1 * i, i == 0 ? 0 : 21, -1, NAN, NAN);
	q.pool.stepped_at = 21;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 30, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 6);
}

/* The same pool and seed give the same round; the seed drives the restarts. */
void
test_optimize_deterministic(void)
{
	MMConfig	cfg = opt_cfg(2, 3);
	static OptQueue q1;
	static OptQueue q2;
	uint64_t	r = 4242;
	double		s1;
	double		s2;
	int			n1;

	cfg.optimize.weights.premades = 0.5;
	cfg.optimize.weights.ping = 2;
	cfg.optimize.weights.variation = 0.2;
	cfg.optimize.weights.hosts = 0.5;
	cfg.optimize.restarts = 4;
	oq_init(&q1, &cfg);
	for (int i = 0; i < 48; i++)
	{
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		oq_add(&q1, (double) (r >> 40) / (double) (1ULL << 24), i * 0.1,
			   (r >> 8) % 5 == 0 ? (int) ((r >> 12) % 10) : -1,
			   (float) ((r >> 16) % 200), (float) ((r >> 24) % 200));
	}
	for (int i = 0; i < 20; i++)
		q1.met[q1.pool.nmet++] = (MMMetPair) {2 * i + 1, 2 * i + 2, i % 2};
	q2 = q1;
	q2.pool.tickets = q2.tickets;
	q2.pool.ping = q2.ping;
	q2.pool.met = q2.met;
	q2.res.matches = q2.matches;
	q2.res.members = q2.members;
	q2.res.teams = q2.teams;
	q2.res.expired = q2.expired;
	CHECK_INT(mm_optimize_round(&q1.cfg, &q1.pool, 10, &q1.res, &s1, NULL), MM_OK);
	CHECK_INT(mm_optimize_round(&q2.cfg, &q2.pool, 10, &q2.res, &s2, NULL), MM_OK);
	CHECK(s1 == s2);
	CHECK_INT(q1.res.nmatches, q2.res.nmatches);
	CHECK(memcmp(q1.members, q2.members, sizeof(int) * 48) == 0);
	CHECK(memcmp(q1.teams, q2.teams, sizeof(int) * 48) == 0);
	/* the restarts only add: never fewer matches, nor worse with as many */
	n1 = q1.res.nmatches;
	q2.cfg.optimize.restarts = 0;
	CHECK_INT(mm_optimize_round(&q2.cfg, &q2.pool, 10, &q2.res, &s2, NULL), MM_OK);
	CHECK(n1 > q2.res.nmatches || (n1 == q2.res.nmatches && s1 >= s2));
}

/* Configuration checks, and bad pools. */
void
test_optimize_config(void)
{
	MMConfig	good = opt_cfg(2, 3);
	MMConfig	cfg;
	OptQueue	q;

	CHECK_INT(mm_config_check(&good), MM_OK);
	CHECK(strcmp(mm_algorithm_name(MM_ALGO_OPTIMIZE), "optimize") == 0);
	{
		MMAlgorithm a;

		CHECK_INT(mm_algorithm_parse("optimize", &a), 0);
		CHECK_INT(a, MM_ALGO_OPTIMIZE);
	}
#define BAD(field, value) \
	do { cfg = good; cfg.field = value; CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT); } while (0)
	BAD(teams, 1);
	BAD(team_size, 7);			/* k = 14 > 12 */
	BAD(optimize.weights.balance, -1);
	BAD(optimize.weights.ping, NAN);
	BAD(optimize.skill_lo, 0.5 + 0.5);
	BAD(optimize.skill_hi, 1.5);
	BAD(optimize.skill_lo, -0.1);
	BAD(optimize.ping_max, 0);
	BAD(optimize.host_ping, -5);
	BAD(optimize.restarts, -1);
	BAD(optimize.budget_ms, 0);
	BAD(optimize.budget_ms, INFINITY);
	BAD(recheck, 0);
#undef BAD
	cfg = good;
	cfg.optimize.weights.balance = cfg.optimize.weights.spread = 0;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.optimize.weights.hosts = 1;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	/* the fields do not matter to other algorithms */
	cfg = good;
	cfg.algorithm = MM_ALGO_GREEDY;
	cfg.teams = 1;
	cfg.team_size = 20;
	cfg.optimize.ping_max = 0;
	CHECK_INT(mm_config_check(&cfg), MM_OK);

	oq_init(&q, &good);
	oq_add(&q, 0.5, 0, -1, 10, NAN);
	oq_add(&q, 0.5, 0, -2, 10, NAN);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 0, &q.res), MM_ERR_ARGUMENT);
	q.tickets[1].party = -1;
	q.tickets[1].attr = -3;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 0, &q.res), MM_ERR_ARGUMENT);
	q.tickets[1].attr = 1;
	q.ping[2] = -1;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_ERR_ARGUMENT);
	q.ping[2] = INFINITY;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_ERR_ARGUMENT);
	q.ping[2] = 3;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_OK);
	q.pool.nregions = -1;
	CHECK_INT(mm_optimize_round(&q.cfg, &q.pool, 0, &q.res, NULL, NULL), MM_ERR_ARGUMENT);
	q.pool.nregions = 2;
	cfg = good;
	cfg.algorithm = MM_ALGO_CLUSTER;
	CHECK_INT(mm_optimize_round(&cfg, &q.pool, 0, &q.res, NULL, NULL), MM_ERR_ARGUMENT);
}

/* Rounds at the recheck instants with k waiting, and the deadlines that lead to them. */
void
test_optimize_deadline(void)
{
	MMConfig	cfg = opt_cfg(2, 1);
	OptQueue	q;

	cfg.max_wait = 100;
	cfg.recheck = 10;
	oq_init(&q, &cfg);
	oq_add(&q, 0.1, 1, -1, NAN, NAN);
	q.pool.stepped_at = 1;
	/* one ticket: only its timeout */
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 101, 1e-12);
	oq_add(&q, 0.9, 3, -1, NAN, NAN);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 3, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);	/* no instant in (1, 3] */
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 10, 1e-12);
	oq_add(&q, 0.2, 12, -1, NAN, NAN);
	/* the step at 12 holds the round of 10 (two waited then), with all three */
	CHECK_INT(mm_step(&q.cfg, &q.pool, 12, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.members[0], 0);
	CHECK_INT(q.members[1], 2);	/* 0.1 with 0.2, not with 0.9 */
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 103, 1e-12);

	/* an instant at which fewer than k waited holds no round */
	oq_init(&q, &cfg);
	oq_add(&q, 0.1, 1, -1, NAN, NAN);
	q.pool.stepped_at = 1;
	oq_add(&q, 0.9, 15, -1, NAN, NAN);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 15, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 20, 1e-12);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 20, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);

	/* a caller that does not know its previous step passes -INFINITY */
	oq_init(&q, &cfg);
	oq_add(&q, 0.1, 1, -1, NAN, NAN);
	oq_add(&q, 0.9, 2, -1, NAN, NAN);
	q.pool.stepped_at = -INFINITY;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 4, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);	/* the last instant, 0, had nobody */
	q.pool.stepped_at = -INFINITY;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 11, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);

	/* the grid is on the absolute clock */
	oq_init(&q, &cfg);
	q.pool.epoch = 1003;		/* instants at t = 7, 17, ... */
	oq_add(&q, 0.1, 1, -1, NAN, NAN);
	oq_add(&q, 0.9, 2, -1, NAN, NAN);
	q.pool.stepped_at = 2;
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 7, 1e-9);
}
