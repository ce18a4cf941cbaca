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
	q->cfg.team_policy = policy;
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
	q.cfg.team_policy = (MMTeamPolicy) 7;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);
}
