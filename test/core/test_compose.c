/*
 * test_compose.c
 *		Unit tests of parties and roles (core/compose.c): in every
 *		algorithm but optimize a party plays whole, in one team, and with
 *		roles every team's players take distinct places of roles they list.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A small deterministic generator. */
static uint64_t rng_state;

static double
rnd(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (rng_state >> 11) / 9007199254740992.0;
}

/* tank 1, healer 1, dps the rest of a team */
static void
three_roles(MMConfig *cfg)
{
	cfg->roles.n = 3;
	cfg->roles.slots[0] = 1;
	cfg->roles.slots[1] = 1;
	cfg->roles.slots[2] = cfg->team_size - 2;
}

/* A role mask: mostly one role, dps most often, sometimes two or all. */
static uint8_t
random_mask(void)
{
	double		x = rnd();

	if (x < 0.15)
		return 1;
	if (x < 0.30)
		return 2;
	if (x < 0.70)
		return 4;
	if (x < 0.85)
		return 1 | 4;
	return 7;
}

enum
{
	CN = 600
};

/* A stream of parties (1 to max_party players at one instant, one rating). */
typedef struct Stream
{
	MMArrival	a[CN];
	int32_t		party[CN];
	uint8_t		roles[CN];
	int			n;
} Stream;

static void
make_stream(Stream *s, const MMConfig *cfg, int max_party, double rate)
{
	double		t = 0;
	int			np = 0;

	s->n = 0;
	while (s->n < CN)
	{
		int			size = 1 + (int) (rnd() * max_party);
		double		r = rnd();

		if (size > CN - s->n)
			size = CN - s->n;
		t += -log(1 - rnd()) / rate;
		for (int tries = 0;; tries++)
		{
			for (int i = 0; i < size; i++)
				s->roles[s->n + i] = cfg->roles.n > 0 ? random_mask() : 0;
			if (mm_party_fits(cfg, size, cfg->roles.n > 0 ? s->roles + s->n : NULL))
				break;
			if (tries > 50)
				size = 1;
		}
		for (int i = 0; i < size; i++)
		{
			s->a[s->n].id = s->n + 1;
			s->a[s->n].arrival = t;
			s->a[s->n].rating = r;
			s->party[s->n] = size > 1 ? np : -1;
			s->n++;
		}
		np++;
	}
}

/*
 * Check one step's decision: whole parties in one team, team sizes,
 * roles from each player's list within the team's places, whole parties
 * expired.  Returns the number of problems.
 */
static int
check_decision(const MMConfig *cfg, const MMPool *pool, const MMResult *res)
{
	int			bad = 0;
	int			k = mm_config_k(cfg);
	int		   *roles = malloc(sizeof(int) * (size_t) (pool->ntickets + 1));
	int		   *where = malloc(sizeof(int) * (size_t) (pool->ntickets + 1));
	int		   *team = malloc(sizeof(int) * (size_t) (pool->ntickets + 1));

	for (int i = 0; i < pool->ntickets; i++)
		where[i] = -1;
	if (cfg->roles.n > 0 && mm_assign_roles(cfg, pool, res, roles) != MM_OK)
		bad++;
	for (int j = 0; j < res->nmatches; j++)
	{
		const MMMatch *m = &res->matches[j];
		int			count[16] = {0};
		int			rc[16][MM_MAX_ROLES] = {{0}};

		if (m->nmembers + m->bots > k || (m->bots > 0 && m->nmembers + m->bots != k))
			bad++;
		for (int i = 0; i < m->nmembers; i++)
		{
			int			idx = res->members[m->first + i];
			int			tm = res->teams[m->first + i];

			where[idx] = j;
			team[idx] = tm;
			if (tm < 1 || tm > cfg->teams)
			{
				bad++;
				continue;
			}
			count[tm]++;
			if (cfg->roles.n > 0)
			{
				int			r = roles[m->first + i];

				if (r < 0 || r >= cfg->roles.n ||
					!(pool->roles[pool->tickets[idx].crow] & (1 << r)))
					bad++;
				else if (++rc[tm][r] > cfg->roles.slots[r])
					bad++;
			}
		}
		for (int t = 1; t <= cfg->teams; t++)
			if (count[t] > cfg->team_size)
				bad++;
	}
	for (int e = 0; e < res->nexpired; e++)
		where[res->expired[e]] = -2;
	/* every party: all members in one place, one team */
	for (int i = 0; i < pool->ntickets; i++)
		for (int x = i + 1; x < pool->ntickets; x++)
		{
			if (pool->tickets[i].party < 0 || pool->tickets[i].party != pool->tickets[x].party)
				continue;
			if (where[i] != where[x] || (where[i] >= 0 && team[i] != team[x]))
				bad++;
		}
	free(roles);
	free(where);
	free(team);
	return bad;
}

/*
 * Run a stream live, step by step at every arrival and deadline, checking
 * each decision; returns the problems, and the players matched.
 */
static int
run_live(const MMConfig *cfg, const Stream *s, int *matched)
{
	MMTicket   *tk = calloc(CN, sizeof(MMTicket));
	MMGroup    *groups = calloc(CN, sizeof(MMGroup));
	MMMatch    *matches = calloc(CN, sizeof(MMMatch));
	int		   *members = calloc(CN, sizeof(int));
	int		   *teams = calloc(CN, sizeof(int));
	int		   *expired = calloc(CN, sizeof(int));
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;
	int			next = 0;
	int			bad = 0;
	int			steps = 0;

	memset(&pool, 0, sizeof(pool));
	pool.tickets = tk;
	pool.groups = groups;
	pool.ngroups_cap = CN;
	pool.stepped_at = -INFINITY;
	pool.roles = s->roles;
	pool.nrole_rows = CN;
	*matched = 0;
	while ((next < s->n || pool.ntickets > 0) && steps < 20 * CN)
	{
		double		t = next < s->n ? s->a[next].arrival : INFINITY;
		double		d = mm_next_deadline(cfg, &pool);

		if (d < t)
			t = d;
		if (!isfinite(t))
			break;
		while (next < s->n && s->a[next].arrival <= t)
		{
			MMTicket   *x = &tk[pool.ntickets++];

			x->id = s->a[next].id;
			x->rating = s->a[next].rating;
			x->arrival = s->a[next].arrival;
			x->group = -1;
			x->party = s->party[next];
			x->attr = -1;
			x->crow = next;
			next++;
		}
		if (mm_step(cfg, &pool, t, &res) != MM_OK)
		{
			fprintf(stderr, "step failed at %g with %d tickets\n", t, pool.ntickets);
			bad++;
			break;
		}
		bad += check_decision(cfg, &pool, &res);
		for (int j = 0; j < res.nmatches; j++)
			*matched += res.matches[j].nmembers;
		mm_pool_compact(&pool, &res);
		steps++;
	}
	if (pool.ntickets > 0 && next >= s->n)
		bad += 0;				/* tickets may still wait at the stream's end with no deadline */
	free(tk);
	free(groups);
	free(matches);
	free(members);
	free(teams);
	free(expired);
	return bad;
}

static const MMAlgorithm every[7] = {MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT, MM_ALGO_WINDOW, MM_ALGO_CLUSTER, MM_ALGO_AUTO};

/* Parties stay whole in one team in every algorithm, 2v2, 3v3 and 5v5, bots or expire. */
void
test_compose_parties(void)
{
	static Stream s;

	for (int shape = 2; shape <= 5; shape++)
	{
		if (shape == 4)
			continue;
		for (int a = 0; a < 7; a++)
			for (int timeout = 0; timeout < 2; timeout++)
			{
				MMConfig	cfg;
				int			matched;

				mm_config_init(&cfg, every[a]);
				cfg.team_size = shape;
				cfg.on_timeout = timeout ? MM_TIMEOUT_EXPIRE : MM_TIMEOUT_BOTS;
				mm_config_set_max_wait(&cfg, 20.0);
				rng_state = 1000 + 10 * shape + a;
				make_stream(&s, &cfg, shape, 5.0);
				CHECK_INT(run_live(&cfg, &s, &matched), 0);
				/* most players play: the parties are not simply left out */
				if (!(matched > CN / 2))
					fprintf(stderr, "shape %d algo %d timeout %d: %d matched\n", shape, a, timeout, matched);
				CHECK(matched > CN / 2);
			}
	}
}

/* Roles fill every team, with parties, in every algorithm (5v5 and 3v3). */
void
test_compose_roles(void)
{
	static Stream s;

	for (int shape = 3; shape <= 5; shape += 2)
		for (int a = 0; a < 7; a++)
		{
			MMConfig	cfg;
			int			matched;

			mm_config_init(&cfg, every[a]);
			cfg.team_size = shape;
			three_roles(&cfg);
			mm_config_set_max_wait(&cfg, 30.0);
			CHECK_INT(mm_config_check(&cfg), MM_OK);
			rng_state = 2000 + 10 * shape + a;
			make_stream(&s, &cfg, 3, 8.0);
			CHECK_INT(run_live(&cfg, &s, &matched), 0);
			if (!(matched > CN / 2))
				fprintf(stderr, "roles shape %d algo %d: %d matched\n", shape, a, matched);
			CHECK(matched > CN / 2);
		}
}

/*
 * greedy 2v2: a solo, then two parties of two.  The algorithm's match
 * (the solo, the first party, one of the second) splits a party; the solo
 * and the first party cannot be completed (no solo waits), so the match
 * is formed again without its youngest kept unit, then from the units the
 * step meant to play: the two parties, one a team, the solo waiting.  A
 * second solo then makes no match of the two solos alone.
 */
void
test_compose_complete(void)
{
	MMConfig	cfg;
	MMTicket	t[6];
	MMMatch		matches[6];
	int			members[6];
	int			teams[6];
	int			expired[6];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;
	int32_t		party[6] = {-1, 7, 7, 9, 9, -1};
	double		rating[6] = {0.5, 0.4, 0.4, 0.6, 0.6, 0.45};

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.team_size = 2;
	cfg.max_wait = 100;
	memset(&pool, 0, sizeof(pool));
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 6; i++)
	{
		t[i].id = i + 1;
		t[i].rating = rating[i];
		t[i].arrival = party[i] == 7 ? 1 : party[i] == 9 ? 2 : i == 0 ? 0 : 3;
		t[i].group = -1;
		t[i].party = party[i];
		t[i].attr = -1;
		t[i].crow = i;
	}
	pool.tickets = t;
	pool.ntickets = 5;
	pool.stepped_at = -INFINITY;
	CHECK_INT(mm_step(&cfg, &pool, 2.5, &res), MM_OK);
	CHECK_INT(res.nmatches, 1);
	CHECK_INT(res.nexpired, 0);
	CHECK_INT(matches[0].nmembers, 4);
	CHECK_INT(matches[0].bots, 0);
	CHECK_INT(members[0], 1);
	CHECK_INT(members[1], 2);
	CHECK_INT(members[2], 3);
	CHECK_INT(members[3], 4);
	CHECK_INT(teams[0], teams[1]);
	CHECK_INT(teams[2], teams[3]);
	CHECK(teams[0] != teams[2]);
	mm_pool_compact(&pool, &res);
	CHECK_INT(pool.ntickets, 1);
	t[1] = t[5];
	pool.ntickets = 2;
	CHECK_INT(mm_step(&cfg, &pool, 3.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 0);
	/* a party member outside a party number's domain is refused */
	t[0].party = -2;
	CHECK_INT(mm_step(&cfg, &pool, 3.0, &res), MM_ERR_ARGUMENT);
}

/*
 * Parties that could play are not kept waiting by the algorithm's choice:
 * 2v2, a party, a solo, then two parties (the algorithm's first match
 * takes the party, the solo and half of the next party); and 3v3, parties
 * of 2, 2, 3 and 3 (the two of 3 make a match).  Every algorithm forms a
 * match at once.
 */
void
test_compose_not_stuck(void)
{
	int			sizes[2][4] = {{2, 1, 2, 2}, {2, 2, 3, 3}};
	int			shape[2] = {2, 3};

	for (int c = 0; c < 2; c++)
		for (int a = 0; a < 7; a++)
		{
			MMConfig	cfg;
			MMTicket	t[12];
			MMMatch		matches[12];
			int			members[12];
			int			teams[12];
			int			expired[12];
			MMGroup		groups[12];
			MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
			MMPool		pool;
			int			n = 0;

			mm_config_init(&cfg, every[a]);
			cfg.team_size = shape[c];
			mm_config_set_max_wait(&cfg, 1000);
			memset(&pool, 0, sizeof(pool));
			memset(t, 0, sizeof(t));
			for (int u = 0; u < 4; u++)
				for (int p = 0; p < sizes[c][u]; p++)
				{
					t[n].id = n + 1;
					t[n].rating = 0.5;
					t[n].arrival = u * 0.01;
					t[n].group = -1;
					t[n].party = sizes[c][u] > 1 ? u : -1;
					t[n].attr = -1;
					t[n].crow = n;
					n++;
				}
			pool.tickets = t;
			pool.ntickets = n;
			pool.groups = groups;
			pool.ngroups_cap = 12;
			pool.stepped_at = -INFINITY;
			/* at most a few steps, well before max_wait */
			for (int step = 0; step < 6 && res.nmatches == 0; step++)
				CHECK_INT(mm_step(&cfg, &pool, 1.0 + step * 10, &res), MM_OK);
			CHECK_INT(res.nmatches, 1);
		}
}

/* 5v5 with roles: no match without tanks; one forms when two tanks come. */
void
test_compose_roles_wait(void)
{
	MMConfig	cfg;
	MMTicket	t[12];
	uint8_t		roles[12];
	MMMatch		matches[12];
	int			members[12];
	int			teams[12];
	int			expired[12];
	int			role[12];
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	MMPool		pool;
	int			count[3] = {0, 0, 0};

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.team_size = 5;
	three_roles(&cfg);
	cfg.max_wait = 100;
	memset(&pool, 0, sizeof(pool));
	memset(t, 0, sizeof(t));
	for (int i = 0; i < 12; i++)
	{
		t[i].id = i + 1;
		t[i].rating = 0.5;
		t[i].arrival = i;
		t[i].group = -1;
		t[i].party = -1;
		t[i].attr = -1;
		t[i].crow = i;
		/* two healers, eight dps, then two tanks */
		roles[i] = i < 2 ? 2 : i < 10 ? 4 : 1;
	}
	pool.tickets = t;
	pool.roles = roles;
	pool.nrole_rows = 12;
	pool.stepped_at = -INFINITY;
	pool.ntickets = 11;
	CHECK_INT(mm_step(&cfg, &pool, 10.5, &res), MM_OK);
	CHECK_INT(res.nmatches, 0);
	pool.ntickets = 12;
	CHECK_INT(mm_step(&cfg, &pool, 11.0, &res), MM_OK);
	CHECK_INT(res.nmatches, 1);
	CHECK_INT(matches[0].nmembers, 10);
	CHECK_INT(mm_assign_roles(&cfg, &pool, &res, role), MM_OK);
	for (int i = 0; i < 10; i++)
		count[role[i]]++;
	CHECK_INT(count[0], 2);
	CHECK_INT(count[1], 2);
	CHECK_INT(count[2], 6);
	/* the two tanks in different teams */
	CHECK(teams[8] != teams[9]);
	/* a role mask outside the roles is refused */
	roles[3] = 8;
	CHECK_INT(mm_step(&cfg, &pool, 11.0, &res), MM_ERR_ARGUMENT);
}

/*
 * Roles no player can fill, on a clock of 1e15 s, where a fiftieth of
 * max_wait is below the clock's precision: the retry deadline still moves
 * on (the next representable instant), so a simulation runs to the
 * players' expiry instead of failing on a deadline that does not advance.
 */
void
test_compose_retry_large_clock(void)
{
	MMConfig	cfg;
	MMArrival	a[9];
	MMOutcome	o[9];
	uint8_t		roles[9];
	MMStreamData data = {0};
	MMSimSummary sum;

	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 1.0);
	cfg.teams = 3;
	cfg.team_size = 3;
	cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	cfg.roles.n = 2;
	cfg.roles.slots[0] = 1;
	cfg.roles.slots[1] = 2;
	for (int clock = 0; clock < 2; clock++)
	{
		for (int i = 0; i < 9; i++)
		{
			a[i].id = i + 1;
			a[i].rating = 0.5;
			a[i].arrival = clock ? 1e15 : 0.0;
			roles[i] = 1;		/* nobody takes the second role */
		}
		data.roles = roles;
		CHECK_INT(mm_simulate(&cfg, a, &data, 9, o, &sum), MM_OK);
		CHECK_INT(sum.expired, 9);
		CHECK_INT(sum.games, 0);
	}
}

/* What fits a team, and the configurations refused. */
void
test_compose_config(void)
{
	MMConfig	cfg;
	uint8_t		two_tanks[2] = {1, 1};
	uint8_t		tank_dps[3] = {1, 4, 5};

	mm_config_init(&cfg, MM_ALGO_AUTO);
	cfg.team_size = 5;
	CHECK(mm_party_fits(&cfg, 5, NULL));
	CHECK(!mm_party_fits(&cfg, 6, NULL));
	CHECK(!mm_party_fits(&cfg, 0, NULL));
	three_roles(&cfg);
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	CHECK(!mm_party_fits(&cfg, 2, two_tanks));
	CHECK(mm_party_fits(&cfg, 3, tank_dps));
	CHECK(!mm_party_fits(&cfg, 3, NULL));
	/* places must add up to a team */
	cfg.roles.slots[2] = 2;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.roles.slots[2] = 3;
	cfg.roles.slots[0] = 0;
	cfg.roles.slots[2] = 4;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.roles.slots[0] = 1;
	cfg.roles.slots[2] = 3;
	cfg.roles.n = MM_MAX_ROLES + 1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	/* optimize splits its own teams: no roles */
	mm_config_init(&cfg, MM_ALGO_OPTIMIZE);
	cfg.team_size = 5;
	three_roles(&cfg);
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
}

/*
 * mm_simulate keeps parties whole too: one match number and team per
 * party.  It refuses a party larger than a team, as enqueue_party does:
 * such a party never plays, and difference_wait could put it into a
 * group of players rated alike again and again, each group finalising a
 * few picoseconds after the last (a step at each) as compose dissolved
 * its match, so that a simulation of 66 players did not end.
 */
void
test_compose_sim(void)
{
	static Stream s;
	static MMOutcome out[CN];

	{
		MMConfig	cfg;
		MMStreamData data;
		MMSimSummary sum;
		MMArrival	a[6];
		int32_t		party[6] = {-1, 0, 0, -1, -1, -1};

		mm_config_init(&cfg, MM_ALGO_DIFFERENCE_WAIT);
		cfg.teams = 4;
		mm_config_set_max_wait(&cfg, 30.0);
		for (int i = 0; i < 6; i++)
		{
			a[i].id = i + 1;
			a[i].rating = 0.5 + 1e-13 * i;
			a[i].arrival = i < 3 ? 0.1 : 0.2;
		}
		memset(&data, 0, sizeof(data));
		data.party = party;
		CHECK_INT(mm_simulate(&cfg, a, &data, 6, out, &sum), MM_ERR_ARGUMENT);
		/* a party of one fits */
		party[2] = 1;
		CHECK_INT(mm_simulate(&cfg, a, &data, 6, out, &sum), MM_OK);
		CHECK_INT((int) sum.players, 6);
		for (int i = 0; i < 6; i++)
			CHECK(out[i].match_no > 0);	/* every one plays (computer players at max_wait) */
	}

	for (int a = 0; a < 7; a++)
	{
		MMConfig	cfg;
		MMStreamData data;
		MMSimSummary sum;

		mm_config_init(&cfg, every[a]);
		cfg.team_size = 5;
		three_roles(&cfg);
		mm_config_set_max_wait(&cfg, 30.0);
		rng_state = 3000 + a;
		make_stream(&s, &cfg, 5, 8.0);
		memset(&data, 0, sizeof(data));
		data.party = s.party;
		data.roles = s.roles;
		CHECK_INT(mm_simulate(&cfg, s.a, &data, s.n, out, &sum), MM_OK);
		CHECK_INT((int) sum.players, CN);
		for (int i = 1; i < s.n; i++)
			if (s.party[i] >= 0 && s.party[i] == s.party[i - 1])
			{
				CHECK(out[i].match_no == out[i - 1].match_no);
				CHECK_INT(out[i].team, out[i - 1].team);
			}
		/* roles without their masks are refused */
		data.roles = NULL;
		CHECK_INT(mm_simulate(&cfg, s.a, &data, s.n, out, &sum), MM_ERR_ARGUMENT);
	}
}

/*
 * Large teams with roles: a and b, half a team each; 0.6 ts players only
 * b (rated 0.1), 0.6 ts only a (0.5), 0.8 ts either (0.9): exactly two
 * teams' worth that fit (each team 0.4 ts flexible players), which a
 * search placing the flexible players first in one team would miss.  One
 * greedy step forms the match, teams filled, up to 500v500.
 */
void
test_compose_large_roles(void)
{
	int			sizes[4] = {10, 40, 200, 500};

	for (int z = 0; z < 4; z++)
	{
		int			ts = sizes[z];
		int			k = 2 * ts;
		MMConfig	cfg;
		MMTicket   *t = calloc(k, sizeof(MMTicket));
		uint8_t    *roles = calloc(k, 1);
		MMMatch    *matches = calloc(k, sizeof(MMMatch));
		int		   *members = calloc(k, sizeof(int));
		int		   *teams = calloc(k, sizeof(int));
		int		   *expired = calloc(k, sizeof(int));
		int		   *role = calloc(k, sizeof(int));
		MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
		MMPool		pool;
		int			count[3][2] = {{0}};

		mm_config_init(&cfg, MM_ALGO_GREEDY);
		cfg.team_size = ts;
		cfg.max_wait = 100;
		cfg.roles.n = 2;
		cfg.roles.slots[0] = ts / 2;
		cfg.roles.slots[1] = ts / 2;
		memset(&pool, 0, sizeof(pool));
		for (int i = 0; i < k; i++)
		{
			t[i].id = i + 1;
			t[i].arrival = i * 0.001;
			t[i].group = -1;
			t[i].party = -1;
			t[i].attr = -1;
			t[i].crow = i;
			if (i < ts * 6 / 10)
			{
				roles[i] = 2;
				t[i].rating = 0.1;
			}
			else if (i < ts * 12 / 10)
			{
				roles[i] = 1;
				t[i].rating = 0.5;
			}
			else
			{
				roles[i] = 3;
				t[i].rating = 0.9;
			}
		}
		pool.tickets = t;
		pool.ntickets = k;
		pool.roles = roles;
		pool.nrole_rows = k;
		pool.stepped_at = -INFINITY;
		CHECK_INT(mm_step(&cfg, &pool, 1.0, &res), MM_OK);
		CHECK_INT(res.nmatches, 1);
		if (res.nmatches == 1)
		{
			CHECK_INT(matches[0].nmembers, k);
			CHECK_INT(matches[0].bots, 0);
			CHECK_INT(mm_assign_roles(&cfg, &pool, &res, role), MM_OK);
			for (int i = 0; i < k; i++)
				count[teams[i]][role[i]]++;
			CHECK_INT(count[1][0], ts / 2);
			CHECK_INT(count[1][1], ts / 2);
			CHECK_INT(count[2][0], ts / 2);
			CHECK_INT(count[2][1], ts / 2);
		}
		free(t);
		free(roles);
		free(matches);
		free(members);
		free(teams);
		free(expired);
		free(role);
	}
}
