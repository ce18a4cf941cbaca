/*
 * test_patient.c
 *		Unit tests of Wu's patient team policy in the greedy algorithm:
 *		players of type H (rating 1) and L (rating 0) as in Wu's model.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <string.h>

#define PT_MAX 16

/* A small greedy 2v2 queue with room for PT_MAX tickets. */
typedef struct PatientQueue
{
	MMConfig	cfg;
	MMTicket	tickets[PT_MAX];
	MMGroup		groups[PT_MAX];
	MMPool		pool;
	MMMatch		matches[PT_MAX];
	int			members[PT_MAX];
	int			teams[PT_MAX];
	int			expired[PT_MAX];
	MMResult	res;
} PatientQueue;

/* Start a greedy queue of two teams of two with the given policy. */
static void
pq_init(PatientQueue *q, MMTeamPolicy policy)
{
	memset(q, 0, sizeof(*q));
	q->cfg.algorithm = MM_ALGO_GREEDY;
	q->cfg.teams = 2;
	q->cfg.team_size = 2;
	q->cfg.max_wait = 100.0;
	q->cfg.on_timeout = MM_TIMEOUT_BOTS;
	q->cfg.greedy.team_policy = policy;
	q->pool.tickets = q->tickets;
	q->pool.groups = q->groups;
	q->pool.ngroups_cap = PT_MAX;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
}

/* Arrivals one per second, 'H' or 'L', ids 1, 2, ...; then a step at the last arrival. */
static MMStatus
pq_arrive_and_step(PatientQueue *q, const char *types, int first_id, double now)
{
	for (int i = 0; types[i]; i++)
	{
		MMTicket   *t = &q->tickets[q->pool.ntickets++];

		t->id = first_id + i;
		t->rating = types[i] == 'H' ? 1.0 : 0.0;
		t->arrival = first_id + i;
		t->group = -1;
		t->party = -1;
		t->attr = -1;
	}
	return mm_step(&q->cfg, &q->pool, now, &q->res);
}

/* The ids of match j's members, ascending, as "1 2 3 5". */
static const char *
pq_match_ids(PatientQueue *q, int j, char *buf, size_t len)
{
	const MMMatch *m = &q->res.matches[j];
	size_t		used = 0;

	buf[0] = '\0';
	for (int i = 0; i < m->nmembers && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%lld", i ? " " : "",
						 (long long) q->tickets[q->res.members[m->first + i]].id);
	return buf;
}

/* The spread of team rating sums of match j. */
static double
pq_imbalance(PatientQueue *q, int j)
{
	const MMMatch *m = &q->res.matches[j];
	double		sums[2] = {0, 0};

	for (int i = 0; i < m->nmembers; i++)
		sums[q->res.teams[m->first + i] - 1] += q->tickets[q->res.members[m->first + i]].rating;
	return fabs(sums[0] - sums[1]);
}

/* H L H H cannot be split evenly: greedy plays them, patient waits for one more. */
void
test_patient_waits(void)
{
	PatientQueue q;
	char		buf[64];

	pq_init(&q, MM_TEAMS_GREEDY);
	CHECK_INT(pq_arrive_and_step(&q, "HLHH", 1, 4.0), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_NEAR(pq_imbalance(&q, 0), 1.0, 1e-12);

	pq_init(&q, MM_TEAMS_PATIENT);
	CHECK_INT(pq_arrive_and_step(&q, "HLHH", 1, 4.0), MM_OK);
	CHECK_INT(q.res.nmatches, 0);

	/* an L arrives: of the five, the newest H (id 4) sits out and the match is even */
	CHECK_INT(pq_arrive_and_step(&q, "L", 5, 5.0), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK(strcmp(pq_match_ids(&q, 0, buf, sizeof(buf)), "1 2 3 5") == 0);
	CHECK_NEAR(pq_imbalance(&q, 0), 0.0, 1e-12);
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 1);
	CHECK_INT(q.tickets[0].id, 4);
}

/* A balanced four plays at once under either policy. */
void
test_patient_balanced(void)
{
	PatientQueue q;

	pq_init(&q, MM_TEAMS_PATIENT);
	CHECK_INT(pq_arrive_and_step(&q, "HLLH", 1, 4.0), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_NEAR(pq_imbalance(&q, 0), 0.0, 1e-12);
}

/* Patience ends at max_wait: the unbalanced four then play. */
void
test_patient_timeout(void)
{
	PatientQueue q;

	pq_init(&q, MM_TEAMS_PATIENT);
	q.cfg.max_wait = 10.0;
	CHECK_INT(pq_arrive_and_step(&q, "HHHL", 1, 4.0), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK(mm_next_deadline(&q.cfg, &q.pool) == 11.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.9, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 11.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_NEAR(pq_imbalance(&q, 0), 1.0, 1e-12);
}

/* The patient policy needs teams of several players, and the greedy algorithm. */
void
test_patient_config(void)
{
	PatientQueue q;

	pq_init(&q, MM_TEAMS_PATIENT);
	CHECK_INT(mm_config_check(&q.cfg), MM_OK);
	q.cfg.team_size = 1;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);
	q.cfg.team_size = 2;
	q.cfg.algorithm = MM_ALGO_PERIODIC;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);
	q.cfg.algorithm = MM_ALGO_GREEDY;
	q.cfg.team_size = 6;		/* 6v6: k = 12, still exact */
	CHECK_INT(mm_config_check(&q.cfg), MM_OK);
	q.cfg.team_size = 7;		/* 7v7: k = 14, above MM_PATIENT_MAX_K */
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);
	q.cfg.team_size = 2;
	q.cfg.greedy.team_policy = (MMTeamPolicy) 7;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);
}

/* Many players at once: every four with two of each type play, in one step. */
void
test_patient_burst(void)
{
	enum
	{
		N = 4096
	};
	static MMTicket tickets[N];
	static MMMatch matches[N];
	static int	members[N];
	static int	teams[N];
	static int	expired[N];
	MMConfig	cfg;
	MMPool		pool = {.tickets = tickets, .ntickets = N};
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.team_size = 2;
	mm_config_set_max_wait(&cfg, 100.0);
	cfg.greedy.team_policy = MM_TEAMS_PATIENT;
	for (int i = 0; i < N; i++)
	{
		tickets[i].id = i + 1;
		tickets[i].rating = (i % 3 == 0) ? 1.0 : 0.0;
		tickets[i].arrival = 0.0;
		tickets[i].group = -1;
		tickets[i].party = -1;
		tickets[i].attr = -1;
	}
	CHECK_INT(mm_step(&cfg, &pool, 1.0, &res), MM_OK);
	CHECK(res.nmatches >= N / 4 - 2);
	for (int j = 0; j < res.nmatches; j++)
	{
		int			h[2] = {0, 0};

		for (int i = 0; i < 4; i++)
			h[teams[matches[j].first + i] - 1] += tickets[members[matches[j].first + i]].rating > 0.5;
		CHECK_INT(h[0], h[1]);
	}
}

/* Bounds: auto batch stays at most 1e9 after rounding; infinite waits are refused. */
void
test_step_bounds(void)
{
	MMConfig	cfg;
	MMTicket	t = {1, 0.5, -1e308, -1, -1, -1, -1};
	MMMatch		m[1];
	int			members[1];
	int			teams[1];
	int			expired[1];
	MMPool		pool = {.tickets = &t, .ntickets = 1};
	MMResult	res = {.matches = m, .members = members, .teams = teams, .expired = expired};

	mm_config_init(&cfg, MM_ALGO_PERIODIC);
	cfg.teams = 3;
	mm_config_set_max_wait(&cfg, 5.0);
	cfg.arrival_rate = 1e12;
	CHECK(mm_auto_batch(&cfg) <= 1000000000);
	CHECK_INT(mm_auto_batch(&cfg) % 3, 0);

	cfg.arrival_rate = 0;
	cfg.periodic.batch = 3;
	CHECK_INT(mm_step(&cfg, &pool, 1e308, &res), MM_ERR_ARGUMENT);
}
