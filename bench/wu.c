/*
 * wu.c
 *		Reproduce Wu, "Dynamic Matching With Teams", Theorem 3.3, through the
 *		matchmaker's core: two teams of n players, one player per period of
 *		type H (rating 1, probability q) or L (rating 0); a match whose teams
 *		differ by I H-players costs alpha * I per player (alpha * I * 2n),
 *		waiting costs 1 per period per player.  The greedy algorithm decides
 *		after every arrival, with team_policy greedy or patient.
 *
 * Usage: wu [periods]      prints a Markdown table of simulated and
 *                          closed-form costs per period, and the thresholds.
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-period costs of one policy: waiting, and imbalance per unit of alpha. */
typedef struct WuCost
{
	double		waiting;
	double		imbalance;		/* sum of I * 2n per period (cost at alpha = 1) */
} WuCost;

/* Simulate one policy over the given periods. */
static WuCost
simulate_policy(int n, double q, MMTeamPolicy policy, long periods, uint64_t seed)
{
	MMConfig	cfg;
	int			cap = 8 * n + 8;
	MMTicket   *tickets = calloc(cap, sizeof(MMTicket));
	MMGroup    *groups = calloc(cap, sizeof(MMGroup));
	MMMatch    *matches = calloc(cap, sizeof(MMMatch));
	int		   *members = calloc(cap, sizeof(int));
	int		   *teams = calloc(cap, sizeof(int));
	int		   *expired = calloc(cap, sizeof(int));
	MMPool		pool = {.tickets = tickets, .groups = groups, .ngroups_cap = cap};
	MMResult	res = {.matches = matches, .members = members, .teams = teams, .expired = expired};
	WuCost		cost = {0.0, 0.0};
	uint64_t	state = seed;

	mm_config_init(&cfg, MM_ALGO_GREEDY);
	cfg.team_size = n;
	mm_config_set_max_wait(&cfg, 1e12);	/* Wu's model has no timeout */
	cfg.greedy.team_policy = policy;

	for (long t = 1; t <= periods; t++)
	{
		MMTicket   *tk = &tickets[pool.ntickets++];

		tk->id = t;
		tk->rating = (next_random(&state) >> 11) * (1.0 / 9007199254740992.0) < q ? 1.0 : 0.0;
		tk->arrival = (double) t;
		tk->group = -1;
		tk->party = -1;
		tk->attr = -1;
		if (mm_step(&cfg, &pool, (double) t, &res) != MM_OK)
		{
			fprintf(stderr, "step failed\n");
			exit(1);
		}
		for (int j = 0; j < res.nmatches; j++)
		{
			const MMMatch *m = &res.matches[j];
			int			h[2] = {0, 0};

			for (int i = 0; i < m->nmembers; i++)
			{
				const MMTicket *p = &tickets[members[m->first + i]];

				cost.waiting += (double) t - p->arrival;
				if (p->rating > 0.5)
					h[teams[m->first + i] - 1]++;
			}
			cost.imbalance += abs(h[0] - h[1]) * 2 * n;
		}
		mm_pool_compact(&pool, &res);
	}
	/* players still waiting at the end have waited too */
	for (int i = 0; i < pool.ntickets; i++)
		cost.waiting += (double) periods - tickets[i].arrival;

	free(tickets);
	free(groups);
	free(matches);
	free(members);
	free(teams);
	free(expired);
	cost.waiting /= periods;
	cost.imbalance /= periods;
	return cost;
}

int
main(int argc, char **argv)
{
	long		periods = argc > 1 ? atol(argv[1]) : 1000000;
	int			ns[] = {2, 3, 5};
	double		qs[] = {0.5, 0.3, 0.1, 0.05};

	printf("Costs per period. greedy = waiting + alpha * imbalance; patient = waiting only (its matches are always balanced).\n\n");
	printf("| n | q | greedy waiting (sim / n - 1/2) | greedy imbalance per unit alpha (sim / (1-(2q-1)^2n)/2) | patient (sim / n) | patient imbalance (sim) | alpha* where patient starts to win (sim / 1/(1-(2q-1)^2n)) |\n");
	printf("|---:|---:|---|---|---|---:|---|\n");
	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(qs) / sizeof(qs[0]); b++)
		{
			int			n = ns[a];
			double		q = qs[b];
			double		p = 1.0 - pow(2 * q - 1, 2 * n);
			WuCost		g = simulate_policy(n, q, MM_TEAMS_GREEDY, periods, 1000 + 10 * a + b);
			WuCost		pt = simulate_policy(n, q, MM_TEAMS_PATIENT, periods, 2000 + 10 * a + b);
			double		thr = (pt.waiting + pt.imbalance - g.waiting) / g.imbalance;

			printf("| %d | %.2f | %.4f / %.4f | %.4f / %.4f | %.4f / %d | %.4f | %.4f / %.4f |\n",
				   n, q, g.waiting, n - 0.5, g.imbalance, p / 2,
				   pt.waiting, n, pt.imbalance, thr, 1.0 / p);
		}
	return 0;
}
