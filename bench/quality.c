/*
 * quality.c
 *		Every algorithm against the offline optimum (k = 2) or a lower bound
 *		on it (k > 2), on Schlup's six arrival specs (Table 2: constant 1, 3
 *		and 10 arrivals per second; rising linearly from 0 to 2, 6 and 20),
 *		uniform ratings, max_wait 5 s, on_timeout bots, one criterion.
 *
 *		Each algorithm runs with its defaults (what create_queue gives with
 *		params '{}') and with the best parameter of a small grid for each
 *		stream (the grids are in grid_config); the tables give the cost
 *		divided by the reference, the mean and 95th-percentile wait and the
 *		computer players per game.
 *
 *		The reference: for k = 2 the exact offline optimum, lone players
 *		getting a computer player at arrival (mm_optimal_pairs, bot cost
 *		3).  For even k > 2 the pair relaxation of bench/README.md
 *		("A lower bound for k > 2"): the larger of
 *
 *			LB1 = P(T, (k + 1) / (k - 1))
 *			LB2 = (k / 2) P(k T / 2, 2 (k + 1) / (k (k - 1)))
 *
 *		where P(T', b) is mm_optimal_pairs with max_wait T' and bot cost b.
 *
 * Usage:
 *	quality report K[,K...] PLAYERS SEEDS [SKIP]
 *		Markdown tables; seeds 1 .. SEEDS of each spec (stream seed
 *		1000 * spec + seed, as bench/schlup.c).  SKIP: algorithm names,
 *		comma-separated, left out (with a note).
 *	quality tune K PLAYERS SEEDS SEED0
 *		reads lines "base growth curve" and prints auto's mean cost / reference
 *		with those constants (0: the default) on seeds SEED0 .. SEED0 + SEEDS - 1.
 *	quality agree PLAYERS SEEDS SEED0
 *		k = 2: how auto's pairs compare with the optimum's, per spec (a
 *		Markdown table): the share of auto's pairs that the optimum also
 *		makes; of the others, the share where the optimum pairs one of
 *		the two with a player who had not arrived when auto committed
 *		them; and the spread and wait costs of both.
 */
#include "../src/core/mm_core.h"
#include "bench_random.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WAIT 5.0
#define NSPECS 6
#define MAX_GRID 32

static const struct
{
	const char *name;
	double		rate;
	int			rising;
}			specs[NSPECS] = {
	{"constant 1", 1, 0}, {"constant 3", 3, 0}, {"constant 10", 10, 0},
	{"rising 0..2", 2, 1}, {"rising 0..6", 6, 1}, {"rising 0..20", 20, 1},
};

/* One stream and its reference cost. */
typedef struct Stream
{
	MMArrival  *a;
	int			n;
	int			spec;
	double		lb1;			/* P(T, (k + 1) / (k - 1)); k = 2: OPT */
	double		lb2;			/* k > 2: (k / 2) P(k T / 2, ...) */
	double		ref;			/* the larger */
} Stream;

/* What one run gave. */
typedef struct Run
{
	double		cost;
	double		mean_wait;
	double		p95_wait;
	double		bots_per_game;
	int			ok;
} Run;

/* Sums over streams of one algorithm, defaults or best of grid. */
typedef struct Acc
{
	double		ratio[NSPECS];
	double		ratio_all;
	double		ratio_min;
	double		mean_wait;
	double		p95_wait;
	double		bots;
	int			count[NSPECS];
	int			count_all;
	int			pick[MAX_GRID];	/* how often each grid entry was best */
} Acc;

/* The stream of spec s and seed, with its reference for groups of k. */
static void
stream_init(Stream *st, int k, int n, int s, uint64_t seed)
{
	double		b = (k + 1.0) / (k - 1.0);

	st->a = make_schlup_stream(n, specs[s].rate, specs[s].rising, seed);
	st->n = n;
	st->spec = s;
	st->lb2 = 0;
	if (mm_optimal_pairs(st->a, n, MAX_WAIT, b, NULL, &st->lb1) != MM_OK)
	{
		fprintf(stderr, "optimum failed\n");
		exit(1);
	}
	if (k > 2)
	{
		double		p;

		if (mm_optimal_pairs(st->a, n, MAX_WAIT * k / 2.0, 2.0 * b / k, NULL, &p) != MM_OK)
		{
			fprintf(stderr, "optimum failed\n");
			exit(1);
		}
		st->lb2 = p * k / 2.0;
	}
	st->ref = st->lb1 > st->lb2 ? st->lb1 : st->lb2;
}

static int
dbl_cmp(const void *l, const void *r)
{
	double		x = *(const double *) l;
	double		y = *(const double *) r;

	return (x > y) - (x < y);
}

/* Simulate cfg over the stream. */
static Run
run(const MMConfig *cfg, const Stream *st, MMOutcome *o, double *waits)
{
	MMSimSummary s;
	Run			r = {0};
	MMConfig	c = *cfg;

	/* "auto" batch and ranges: the stream's mean rate, as SQL simulate measures it */
	c.arrival_rate = (st->n - 1) / (st->a[st->n - 1].arrival - st->a[0].arrival);
	if (mm_simulate(&c, st->a, NULL, st->n, o, &s) != MM_OK || s.games == 0)
		return r;
	for (int i = 0; i < st->n; i++)
		waits[i] = o[i].matched_at - st->a[i].arrival;
	qsort(waits, st->n, sizeof(double), dbl_cmp);
	r.cost = s.cost;
	r.mean_wait = s.mean_wait;
	r.p95_wait = waits[(int) floor(0.95 * (st->n - 1))];
	r.bots_per_game = (double) s.bots / s.games;
	r.ok = 1;
	return r;
}

/* An algorithm's configuration as create_queue gives it with params '{}'. */
static MMConfig
default_config(MMAlgorithm alg, int k)
{
	MMConfig	c;

	mm_config_init(&c, alg);
	c.teams = 2;
	c.team_size = k / 2;
	mm_config_set_max_wait(&c, MAX_WAIT);
	if (alg == MM_ALGO_WINDOW)
		c.window.widen = fmin((c.window.max - c.window.width) / c.max_wait, 1.0);
	return c;
}

/*
 * Grid entry g of an algorithm: fills c and its label; returns 0 past the
 * grid's end.
 */
static int
grid_config(MMAlgorithm alg, int k, int g, MMConfig *c, char *label, size_t len)
{
	*c = default_config(alg, k);
	switch (alg)
	{
		case MM_ALGO_GREEDY:
			if (g > (k >= 4 && k <= MM_PATIENT_MAX_K ? 1 : 0))
				return 0;
			c->greedy.team_policy = g ? MM_TEAMS_PATIENT : MM_TEAMS_GREEDY;
			snprintf(label, len, "%s", g ? "patient" : "greedy");
			return 1;
		case MM_ALGO_PERIODIC:
			{
				static const int m[] = {1, 2, 3, 4, 6, 8, 12, 16};

				if (g >= 8)
					return 0;
				c->periodic.batch = k * m[g];
				snprintf(label, len, "batch %d", c->periodic.batch);
				return 1;
			}
		case MM_ALGO_MULTI_QUEUE:
			{
				static const int r[] = {1, 2, 3, 4, 6, 8, 12, 16};

				if (g >= 8)
					return 0;
				c->multi_queue.ranges = r[g];
				snprintf(label, len, "ranges %d", r[g]);
				return 1;
			}
		case MM_ALGO_DIFFERENCE_WAIT:
			{
				static const double f[] = {0, 0.05, 0.1, 0.2, 0.4, 0.7, 1, 2};

				if (g >= 8)
					return 0;
				c->difference_wait.wait_factor = f[g] * MAX_WAIT;
				snprintf(label, len, "wait_factor %g", c->difference_wait.wait_factor);
				return 1;
			}
		case MM_ALGO_WINDOW:
			{
				static const double w0[] = {0.01, 0.02, 0.05, 0.1};
				static const double cap[] = {0.2, 0.5, 1.0};

				if (g >= 24)
					return 0;
				c->window.width = w0[g % 4];
				c->window.max = cap[(g / 4) % 3];
				c->window.percentile = g / 12;
				c->window.widen = fmin((c->window.max - c->window.width) / MAX_WAIT, 1.0);
				snprintf(label, len, "window %g, max_window %g%s", c->window.width,
						 c->window.max, c->window.percentile ? ", percentile" : "");
				return 1;
			}
		case MM_ALGO_CLUSTER:
			{
				static const double th[] = {0.01, 0.02, 0.05, 0.1, 0.2};
				static const double mid[] = {0.25, 0.5, 1.0};

				if (g >= 15)
					return 0;
				c->cluster.threshold = th[g % 5];
				c->cluster.midpoint = MAX_WAIT * mid[g / 5];
				snprintf(label, len, "threshold %g, midpoint %g", c->cluster.threshold,
						 c->cluster.midpoint);
				return 1;
			}
		case MM_ALGO_OPTIMIZE:
			{
				if (g >= 3)
					return 0;
				/* skill factors only: this traffic has no pings or parties */
				c->recheck = MAX_WAIT / (double) (2 << g);
				c->optimize.weights.premades = 0;
				c->optimize.weights.ping = 0;
				c->optimize.weights.variation = 0;
				c->optimize.restarts = 0;
				snprintf(label, len, "recheck %g, skill only", c->recheck);
				return 1;
			}
		case MM_ALGO_AUTO:
			/* no parameter in the SQL API: its defaults only */
			return 0;
	}
	return 0;
}

/* Add one run's figures to an accumulator. */
static void
acc_add(Acc *acc, const Stream *st, const Run *r, int pick)
{
	double		ratio = r->cost / st->ref;

	acc->ratio[st->spec] += ratio;
	acc->count[st->spec]++;
	acc->ratio_all += ratio;
	if (acc->count_all == 0 || ratio < acc->ratio_min)
		acc->ratio_min = ratio;
	acc->count_all++;
	acc->mean_wait += r->mean_wait;
	acc->p95_wait += r->p95_wait;
	acc->bots += r->bots_per_game;
	if (pick >= 0 && pick < MAX_GRID)
		acc->pick[pick]++;
}

/* The report for one k. */
static void
report(int k, int players, int seeds, const char *skip)
{
	Stream		st[NSPECS * 64];
	int			nst = 0;
	Acc			def[MM_NUM_ALGORITHMS];
	Acc			best[MM_NUM_ALGORITHMS];
	double		secs[MM_NUM_ALGORITHMS] = {0};
	MMOutcome  *o = malloc(sizeof(MMOutcome) * players);
	double	   *waits = malloc(sizeof(double) * players);
	double		lb1 = 0,
				lb2 = 0;

	memset(def, 0, sizeof(def));
	memset(best, 0, sizeof(best));
	for (int s = 0; s < NSPECS; s++)
		for (int e = 1; e <= seeds; e++)
		{
			stream_init(&st[nst], k, players, s, 1000 * s + e);
			lb1 += st[nst].lb1;
			lb2 += st[nst].lb2;
			nst++;
		}

	for (int alg = 0; alg < MM_NUM_ALGORITHMS; alg++)
	{
		const char *name = mm_algorithm_name(alg);
		size_t		len = strlen(name);
		const char *p = skip;
		int			skipped = 0;

		while (p && *p)
		{
			if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
				skipped = 1;
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (skipped || (alg == MM_ALGO_OPTIMIZE && k > MM_OPTIMIZE_MAX_K))
			continue;
		for (int i = 0; i < nst; i++)
		{
			clock_t		t0 = clock();
			MMConfig	c = default_config(alg, k);
			Run			r = run(&c, &st[i], o, waits);
			Run			b = r;	/* the defaults count as an entry of the grid */
			int			bg = -1;
			char		label[96];

			if (!r.ok)
			{
				fprintf(stderr, "%s failed on a stream\n", name);
				exit(1);
			}
			acc_add(&def[alg], &st[i], &r, -1);
			for (int g = 0; grid_config(alg, k, g, &c, label, sizeof(label)); g++)
			{
				Run			x = run(&c, &st[i], o, waits);

				if (x.ok && (!b.ok || x.cost < b.cost))
				{
					b = x;
					bg = g;
				}
			}
			acc_add(&best[alg], &st[i], &b, bg < 0 ? MAX_GRID - 1 : bg);
			secs[alg] += (double) (clock() - t0) / CLOCKS_PER_SEC;
		}
	}

	printf("\n## k = %d (%s)\n\n", k, k == 2 ? "1v1" : k == 4 ? "2v2" : k == 10 ? "5v5" : "two teams");
	if (k == 2)
		printf("Reference: the exact offline optimum OPT (lone players get a computer player at arrival, cost 3), %.4f per pair of players.\n\n",
			   lb1 / (nst * players / 2.0));
	else
		printf("Reference: the lower bound max(LB1, LB2) of bench/README.md; per %d players, LB1 %.4f and LB2 %.4f on average.\n\n",
			   k, lb1 / (nst * (double) players / k), lb2 / (nst * (double) players / k));
	printf("| algorithm | cost / %s, defaults | best of grid | defaults: mean wait (s) | p95 wait (s) | bots per game | best: mean wait (s) | p95 wait (s) | bots per game | lowest ratio seen | most often best in grid | seconds |\n",
		   k == 2 ? "OPT" : "bound");
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n");
	for (int alg = 0; alg < MM_NUM_ALGORITHMS; alg++)
	{
		Acc		   *d = &def[alg];
		Acc		   *b = &best[alg];
		int			top = 0;
		char		label[96];
		MMConfig	c;

		if (d->count_all == 0)
			continue;
		for (int g = 1; g < MAX_GRID; g++)
			if (b->pick[g] > b->pick[top])
				top = g;
		if (top == MAX_GRID - 1)
			snprintf(label, sizeof(label), "the defaults");
		else
			grid_config(alg, k, top, &c, label, sizeof(label));
		printf("| %s | %.3f | %.3f | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f | %.3f | %s (%d of %d) | %.1f |\n",
			   mm_algorithm_name(alg), d->ratio_all / d->count_all, b->ratio_all / b->count_all,
			   d->mean_wait / d->count_all, d->p95_wait / d->count_all, d->bots / d->count_all,
			   b->mean_wait / b->count_all, b->p95_wait / b->count_all, b->bots / b->count_all,
			   fmin(d->ratio_min, b->ratio_min), label, b->pick[top], b->count_all, secs[alg]);
	}
	printf("\nBy spec, cost / %s (defaults / best of grid), mean over %d seeds:\n\n", k == 2 ? "OPT" : "bound", seeds);
	printf("| algorithm |");
	for (int s = 0; s < NSPECS; s++)
		printf(" %s |", specs[s].name);
	printf("\n|---|");
	for (int s = 0; s < NSPECS; s++)
		printf("---:|");
	printf("\n");
	for (int alg = 0; alg < MM_NUM_ALGORITHMS; alg++)
	{
		if (def[alg].count_all == 0)
			continue;
		printf("| %s |", mm_algorithm_name(alg));
		for (int s = 0; s < NSPECS; s++)
			printf(" %.3f / %.3f |", def[alg].ratio[s] / def[alg].count[s],
				   best[alg].ratio[s] / best[alg].count[s]);
		printf("\n");
	}
	for (int alg = 0; alg < MM_NUM_ALGORITHMS; alg++)
		if (def[alg].count_all == 0)
			printf("\n%s: not run for k = %d%s.\n", mm_algorithm_name(alg), k,
				   alg == MM_ALGO_OPTIMIZE && k > MM_OPTIMIZE_MAX_K ? " (it takes k <= 12)" : " (left out by the command)");
	for (int i = 0; i < nst; i++)
		free(st[i].a);
	free(o);
	free(waits);
}

/* Tuning: auto's mean ratio for each line of constants on stdin. */
static void
tune(int k, int players, int seeds, int seed0)
{
	Stream		st[NSPECS * 64];
	int			nst = 0;
	MMOutcome  *o = malloc(sizeof(MMOutcome) * players);
	double	   *waits = malloc(sizeof(double) * players);
	double		b0,
				b1,
				b2;

	for (int s = 0; s < NSPECS; s++)
		for (int e = 0; e < seeds; e++)
			stream_init(&st[nst++], k, players, s, 1000 * s + seed0 + e);
	while (scanf("%lf %lf %lf", &b0, &b1, &b2) == 3)
	{
		double		sum = 0,
					per[NSPECS] = {0};

		for (int i = 0; i < nst; i++)
		{
			MMConfig	c = default_config(MM_ALGO_AUTO, k);
			Run			r;

			c.automatic.base = b0;
			c.automatic.growth = b1;
			c.automatic.curve = b2;
			r = run(&c, &st[i], o, waits);
			if (!r.ok)
			{
				fprintf(stderr, "auto failed\n");
				exit(1);
			}
			sum += r.cost / st[i].ref;
			per[st[i].spec] += r.cost / st[i].ref / seeds;
		}
		printf("%g %g %g  mean %.4f |", b0, b1, b2, sum / nst);
		for (int s = 0; s < NSPECS; s++)
			printf(" %.3f", per[s]);
		printf("\n");
		fflush(stdout);
	}
	free(o);
	free(waits);
}

/* agree: auto's pairs against the optimum's, per spec. */
static void
agree(int players, int seeds, int seed0)
{
	MMOutcome  *o = malloc(sizeof(MMOutcome) * players);
	int		   *opt = malloc(sizeof(int) * players);
	int		   *mate = malloc(sizeof(int) * players);
	int64_t    *first = malloc(sizeof(int64_t) * ((size_t) players + 1));

	if (o == NULL || opt == NULL || mate == NULL || first == NULL)
		exit(1);
	printf("| spec | auto / OPT | auto's pairs the optimum makes too | others: the optimum pairs a member with a later arrival | spread cost, auto / OPT | wait cost, auto / OPT (computer players' included) |\n");
	printf("|---|---:|---:|---:|---:|---:|\n");
	for (int s = 0; s < NSPECS; s++)
	{
		double		ratio = 0,
					pairs = 0,
					same = 0,
					later = 0,
					a_spread = 0,
					a_wait = 0,
					o_spread = 0,
					o_wait = 0;

		for (int e = 0; e < seeds; e++)
		{
			MMArrival  *a = make_schlup_stream(players, specs[s].rate, specs[s].rising,
											   1000 * s + seed0 + e);
			MMConfig	c = default_config(MM_ALGO_AUTO, 2);
			MMSimSummary sum;
			double		best;

			if (mm_optimal_pairs(a, players, MAX_WAIT, 3.0, opt, &best) != MM_OK ||
				mm_simulate(&c, a, NULL, players, o, &sum) != MM_OK)
			{
				fprintf(stderr, "agree: failed\n");
				exit(1);
			}
			ratio += sum.cost / best / seeds;
			a_spread += sum.criteria_cost;
			a_wait += sum.wait_cost;
			for (int i = 0; i < players; i++)
				if (opt[i] < 0)
				{
					o_spread += 2.0;	/* a player alone: q = 1, f = 2, and the computer player's wait */
					o_wait += 1.0;
				}
				else if (opt[i] > i)
				{
					o_spread += 2.0 * fabs(a[i].rating - a[opt[i]].rating);
					o_wait += (a[opt[i]].arrival - a[i].arrival) / MAX_WAIT;
				}
			/* auto's partners, from the match numbers */
			for (int m = 0; m <= players; m++)
				first[m] = -1;
			for (int i = 0; i < players; i++)
			{
				int64_t		m = o[i].match_no;

				mate[i] = -1;
				if (m < 1 || m > players)
					continue;
				if (first[m] < 0)
					first[m] = i;
				else
				{
					mate[i] = (int) first[m];
					mate[first[m]] = i;
				}
			}
			for (int i = 0; i < players; i++)
			{
				int			j = mate[i];
				double		t = o[i].matched_at;

				if (j < i)
					continue;
				pairs++;
				if (opt[i] == j)
					same++;
				else if ((opt[i] >= 0 && a[opt[i]].arrival > t) ||
						 (opt[j] >= 0 && a[opt[j]].arrival > t))
					later++;
			}
			free(a);
		}
		printf("| %s | %.3f | %.2f | %.2f | %.2f | %.2f |\n", specs[s].name, ratio, same / pairs,
			   later / (pairs - same), a_spread / o_spread, a_wait / o_wait);
	}
	free(o);
	free(opt);
	free(mate);
	free(first);
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "report") == 0)
	{
		const char *p = argv[2];
		int			players = atoi(argv[3]);
		int			seeds = atoi(argv[4]);

		if (seeds < 1 || seeds > 64 || players < 10)
			return 2;
		setvbuf(stdout, NULL, _IOLBF, 0);
		while (p && *p)
		{
			int			k = atoi(p);

			if (k < 2 || k % 2 != 0)
			{
				fprintf(stderr, "k must be even (bench/README.md: the bound needs it)\n");
				return 2;
			}
			report(k, players, seeds, argc > 5 ? argv[5] : NULL);
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		return 0;
	}
	if (argc == 6 && strcmp(argv[1], "tune") == 0)
	{
		int			seeds = atoi(argv[4]);

		if (seeds < 1 || seeds > 64)
			return 2;
		tune(atoi(argv[2]), atoi(argv[3]), seeds, atoi(argv[5]));
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "agree") == 0)
	{
		int			players = atoi(argv[2]);
		int			seeds = atoi(argv[3]);

		if (seeds < 1 || players < 10)
			return 2;
		agree(players, seeds, atoi(argv[4]));
		return 0;
	}
	fprintf(stderr, "usage: quality report K[,K...] PLAYERS SEEDS [SKIP] | quality tune K PLAYERS SEEDS SEED0 | quality agree PLAYERS SEEDS SEED0\n");
	return 2;
}
