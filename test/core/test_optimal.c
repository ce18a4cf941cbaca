/*
 * test_optimal.c
 *		Tests of the offline optimum mm_optimal_pairs: exact agreement with
 *		a brute-force search over every partition of small streams,
 *		hand-built cases, the consistency of the partner array, local
 *		optimality on large streams, and OPT never above an online
 *		algorithm on the same stream.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <stdlib.h>
#include <string.h>

/* A splitmix64 generator: all the randomness of these tests, fixed seeds. */
typedef struct OptRng
{
	uint64_t	state;
} OptRng;

/* Next 64 random bits. */
static uint64_t
opt_rng_next(OptRng *r)
{
	uint64_t	z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double
opt_rng_unit(OptRng *r)
{
	return (double) (opt_rng_next(r) >> 11) / 9007199254740992.0;
}

/* n Poisson arrivals at rate per second, uniform ratings, ids 1..n. */
static MMArrival *
opt_stream(int n, double rate, uint64_t seed)
{
	MMArrival  *a = malloc(sizeof(MMArrival) * (size_t) (n > 0 ? n : 1));
	OptRng		r = {seed};
	double		t = 0.0;

	if (a == NULL)
		return NULL;
	for (int i = 0; i < n; i++)
	{
		t += -log(1.0 - opt_rng_unit(&r)) / rate;
		a[i].id = i + 1;
		a[i].arrival = t;
		a[i].rating = opt_rng_unit(&r);
	}
	return a;
}

/* Whether i and j may play together (the definition in mm_core.h). */
static int
admissible(const MMArrival *a, int i, int j, double max_wait)
{
	if (i > j)
	{
		int			t = i;

		i = j;
		j = t;
	}
	return a[j].arrival - a[i].arrival <= max_wait;
}

/* Cost of the pair i, j (i earlier in the array). */
static double
pcost(const MMArrival *a, int i, int j, double max_wait)
{
	if (i > j)
	{
		int			t = i;

		i = j;
		j = t;
	}
	return 2.0 * fabs(a[i].rating - a[j].rating) +
		(a[j].arrival - a[i].arrival) / max_wait;
}

/*
 * Brute force: the least cost over every partition of the players not in
 * used (a bitmask) into admissible pairs and singles with a bot.
 */
static double
brute(const MMArrival *a, int n, double max_wait, double bot, unsigned used)
{
	int			i = 0;
	double		best;

	while (i < n && (used & (1u << i)))
		i++;
	if (i == n)
		return 0.0;
	used |= 1u << i;
	best = bot + brute(a, n, max_wait, bot, used);
	for (int j = i + 1; j < n; j++)
	{
		if (!(used & (1u << j)) && admissible(a, i, j, max_wait))
		{
			double		c = pcost(a, i, j, max_wait) +
				brute(a, n, max_wait, bot, used | (1u << j));

			if (c < best)
				best = c;
		}
	}
	return best;
}

/*
 * Check that partner describes a valid solution (symmetric, admissible,
 * each player once) and return its cost, or NAN when it is invalid.
 */
static double
partner_cost(const MMArrival *a, int n, double max_wait, double bot,
			 const int *partner)
{
	double		total = 0.0;

	for (int i = 0; i < n; i++)
	{
		int			j = partner[i];

		if (j == -1)
		{
			total += bot;
			continue;
		}
		if (j < 0 || j >= n || j == i || partner[j] != i ||
			!admissible(a, i, j, max_wait))
			return NAN;
		if (j > i)
			total += pcost(a, i, j, max_wait);
	}
	return total;
}

/* Random small streams: the optimum equals the brute-force optimum. */
void
test_optimal_brute(void)
{
	OptRng		r = {2024};
	int			cases = 0;
	int			bad = 0;

	for (int round = 0; round < 1500; round++)
	{
		MMArrival	a[12];
		int			partner[12];
		int			n = (int) (opt_rng_next(&r) % 13);
		double		span = 0.5 + 20.0 * opt_rng_unit(&r);
		double		max_wait = 0.2 + 6.0 * opt_rng_unit(&r);
		double		t = 0.0;
		int			coarse = (int) (opt_rng_next(&r) % 3);

		for (int i = 0; i < n; i++)
		{
			/* sometimes coarse values, so that ties and equal times occur */
			if (coarse == 0)
			{
				t += span / n * opt_rng_unit(&r) * 2.0;
				a[i].rating = opt_rng_unit(&r);
			}
			else
			{
				t += (double) (opt_rng_next(&r) % 3);
				a[i].rating = (double) (opt_rng_next(&r) % 5) / 4.0;
			}
			a[i].id = i;
			a[i].arrival = t;
		}
		for (int bi = 0; bi < 4; bi++)
		{
			static const double bots[] = {3.0, 4.0, 0.5, 1.2};
			double		bot = bots[bi];
			double		opt = NAN;
			double		want = brute(a, n, max_wait, bot, 0);
			double		got;

			CHECK_INT(mm_optimal_pairs(a, n, max_wait, bot, partner, &opt), MM_OK);
			got = partner_cost(a, n, max_wait, bot, partner);
			if (!(fabs(opt - want) <= 1e-7) || !(fabs(got - opt) <= 1e-9))
			{
				if (bad++ < 5)
					fprintf(stderr, "round %d n %d bot %g: opt %.12g brute %.12g partners %.12g\n",
							round, n, bot, opt, want, got);
			}
			cases++;
		}
	}
	CHECK_INT(bad, 0);
	CHECK(cases == 6000);
}

/*
 * An independent exact optimum for longer streams whose windows are
 * small: a dynamic program over the arrival order.  Its state is the set
 * of earlier players still "open" (to be paired with a later one), among
 * the at most w players before the current one that it may still pair
 * with.  Returns NAN when some window holds more than 12 players.
 */
static double
window_dp(const MMArrival *a, int n, double max_wait, double bot)
{
	int			w = 0;
	size_t		states;
	double	   *cur;
	double	   *nxt;
	double		result;

	for (int j = 0, i = 0; j < n; j++)
	{
		while (a[j].arrival - a[i].arrival > max_wait)
			i++;
		if (j - i > w)
			w = j - i;
	}
	if (w > 12)
		return NAN;
	states = (size_t) 1 << (w + 1);
	cur = malloc(sizeof(double) * states);
	nxt = malloc(sizeof(double) * states);
	if (cur == NULL || nxt == NULL)
	{
		free(cur);
		free(nxt);
		return NAN;
	}
	/* bit k of a state: player j - 1 - k is open */
	for (size_t m = 0; m < states; m++)
		cur[m] = INFINITY;
	cur[0] = 0.0;
	for (int j = 0; j < n; j++)
	{
		for (size_t m = 0; m < states; m++)
			nxt[m] = INFINITY;
		for (size_t m = 0; m < states; m++)
		{
			int			dead = 0;

			if (cur[m] == INFINITY)
				continue;
			/* an open player j can no longer reach stays open for ever */
			for (int k = 0; k <= w; k++)
				if ((m >> k & 1) && (j - 1 - k < 0 ||
									 !admissible(a, j - 1 - k, j, max_wait)))
					dead = 1;
			if (dead)
				continue;
			/* j takes a bot, or stays open */
			if (((m << 1) >> (w + 1)) == 0)
			{
				size_t		m1 = (m << 1) & (states - 1);

				if (cur[m] + bot < nxt[m1])
					nxt[m1] = cur[m] + bot;
				if (cur[m] < nxt[m1 | 1])
					nxt[m1 | 1] = cur[m];
			}
			/* j pairs with open player j - 1 - k */
			for (int k = 0; k <= w; k++)
			{
				size_t		m2;
				double		c;

				if (!(m >> k & 1))
					continue;
				m2 = m & ~((size_t) 1 << k);
				if (((m2 << 1) >> (w + 1)) != 0)
					continue;
				m2 = (m2 << 1) & (states - 1);
				c = cur[m] + pcost(a, j - 1 - k, j, max_wait);
				if (c < nxt[m2])
					nxt[m2] = c;
			}
		}
		{
			double	   *t = cur;

			cur = nxt;
			nxt = t;
		}
	}
	result = cur[0];
	free(cur);
	free(nxt);
	return result;
}

/*
 * Longer streams (up to 400 players, many augmentations and blossoms)
 * against the window dynamic program.
 */
void
test_optimal_window_dp(void)
{
	OptRng		r = {99};
	int			checked = 0;
	int			bad = 0;

	for (int round = 0; round < 300; round++)
	{
		int			n = 20 + (int) (opt_rng_next(&r) % 381);
		double		rate = 0.3 + 2.0 * opt_rng_unit(&r);
		double		max_wait = 0.5 + 4.0 * opt_rng_unit(&r);
		MMArrival  *a = opt_stream(n, rate, 1000 + round);
		int		   *p = malloc(sizeof(int) * n);

		if (a == NULL || p == NULL)
		{
			CHECK(!"out of memory");
			free(a);
			free(p);
			return;
		}
		for (int bi = 0; bi < 3; bi++)
		{
			static const double bots[] = {3.0, 4.0, 0.7};
			double		want = window_dp(a, n, max_wait, bots[bi]);
			double		opt = NAN;

			if (isnan(want))
				continue;
			CHECK_INT(mm_optimal_pairs(a, n, max_wait, bots[bi], p, &opt), MM_OK);
			if (!(fabs(opt - want) <= 1e-6) ||
				!(fabs(partner_cost(a, n, max_wait, bots[bi], p) - opt) <= 1e-9))
			{
				if (bad++ < 5)
					fprintf(stderr, "round %d n %d bot %g: opt %.12g dp %.12g\n",
							round, n, bots[bi], opt, want);
			}
			checked++;
		}
		free(a);
		free(p);
	}
	CHECK_INT(bad, 0);
	printf("     %d streams of 20 to 400 players agree with the window DP\n", checked);
	CHECK(checked >= 600);
}

/* Cases whose optimum is known by hand. */
void
test_optimal_cases(void)
{
	MMArrival	a[8];
	int			p[8];
	double		c;

	/* two close players pair: 2 * 0.02 + 1/5 */
	a[0] = (MMArrival) {1, 0.50, 0.0};
	a[1] = (MMArrival) {2, 0.52, 1.0};
	CHECK_INT(mm_optimal_pairs(a, 2, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], 1);
	CHECK_INT(p[1], 0);
	CHECK_NEAR(c, 0.04 + 0.2, 1e-12);

	/* too far apart in time: both get a bot */
	a[1].arrival = 10.0;
	CHECK_INT(mm_optimal_pairs(a, 2, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], -1);
	CHECK_INT(p[1], -1);
	CHECK_NEAR(c, 6.0, 0);
	CHECK_INT(mm_optimal_pairs(a, 2, 5.0, 4.0, p, &c), MM_OK);
	CHECK_NEAR(c, 8.0, 0);
	/* exactly max_wait apart is admissible */
	a[1].arrival = 5.0;
	CHECK_INT(mm_optimal_pairs(a, 2, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], 1);
	CHECK_NEAR(c, 0.04 + 1.0, 1e-12);

	/* a pair dearer than two bots is not played */
	a[0] = (MMArrival) {1, 0.0, 0.0};
	a[1] = (MMArrival) {2, 1.0, 5.0};
	CHECK_INT(mm_optimal_pairs(a, 2, 5.0, 1.0, p, &c), MM_OK);
	CHECK_INT(p[0], -1);
	CHECK_NEAR(c, 2.0, 0);

	/*
	 * Greedy (cheapest pair first) is wrong: 0.4-0.5 costs 0.2 but leaves
	 * 0.0-0.9 at 1.8; the optimum pairs 0.0-0.4 and 0.5-0.9, 1.6.
	 */
	a[0] = (MMArrival) {1, 0.0, 0.0};
	a[1] = (MMArrival) {2, 0.4, 0.0};
	a[2] = (MMArrival) {3, 0.5, 0.0};
	a[3] = (MMArrival) {4, 0.9, 0.0};
	CHECK_INT(mm_optimal_pairs(a, 4, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], 1);
	CHECK_INT(p[2], 3);
	CHECK_NEAR(c, 1.6, 1e-12);

	/*
	 * The same in time: B-C is the cheapest admissible pair, but taking it
	 * leaves A and D with bots; A-B plus C-D is far cheaper.
	 */
	a[0] = (MMArrival) {1, 0.5, 0.0};	/* A */
	a[1] = (MMArrival) {2, 0.5, 4.0};	/* B */
	a[2] = (MMArrival) {3, 0.5, 5.5};	/* C */
	a[3] = (MMArrival) {4, 0.5, 9.5};	/* D */
	CHECK_INT(mm_optimal_pairs(a, 4, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], 1);
	CHECK_INT(p[2], 3);
	CHECK_NEAR(c, 0.8 + 0.8, 1e-12);

	/*
	 * A triangle B, C, D (ratings 0.50, 0.52, 0.54, all at t = 1) with a
	 * tail A (0.10, t = 0, admissible only with the triangle), and E
	 * (0.94), F (0.30) at t = 2; max_wait 1.  Greedy takes the cheapest
	 * pair B-C (0.04), then E-F (1.28), then A-D (1.88): 3.20.  The
	 * optimum breaks the triangle the other way: A-B (1.8), C-D (0.04),
	 * E-F (1.28) = 3.12.
	 */
	a[0] = (MMArrival) {1, 0.10, 0.0};
	a[1] = (MMArrival) {2, 0.50, 1.0};
	a[2] = (MMArrival) {3, 0.52, 1.0};
	a[3] = (MMArrival) {4, 0.54, 1.0};
	a[4] = (MMArrival) {5, 0.94, 2.0};
	a[5] = (MMArrival) {6, 0.30, 2.0};
	CHECK_INT(mm_optimal_pairs(a, 6, 1.0, 3.0, p, &c), MM_OK);
	CHECK_NEAR(c, brute(a, 6, 1.0, 3.0, 0), 1e-9);
	CHECK_NEAR(partner_cost(a, 6, 1.0, 3.0, p), c, 1e-12);
	CHECK_INT(p[0], 1);
	CHECK_INT(p[2], 3);
	CHECK_INT(p[4], 5);
	CHECK_NEAR(c, 3.12, 1e-9);

	/* one player, none */
	CHECK_INT(mm_optimal_pairs(a, 1, 5.0, 3.0, p, &c), MM_OK);
	CHECK_INT(p[0], -1);
	CHECK_NEAR(c, 3.0, 0);
	c = -1;
	CHECK_INT(mm_optimal_pairs(a, 0, 5.0, 3.0, NULL, &c), MM_OK);
	CHECK_NEAR(c, 0.0, 0);
	/* partner and total may be NULL */
	CHECK_INT(mm_optimal_pairs(a, 6, 1.0, 3.0, NULL, NULL), MM_OK);
}

/* Bad arguments are refused. */
void
test_optimal_invalid(void)
{
	MMArrival	a[3] = {{1, 0.1, 0.0}, {2, 0.2, 1.0}, {3, 0.3, 2.0}};
	int			p[3];
	double		c;

	CHECK_INT(mm_optimal_pairs(a, -1, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(NULL, 3, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, 0.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, -1.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, INFINITY, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, NAN, 3.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, -1.0, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, NAN, p, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 2e6, p, &c), MM_ERR_ARGUMENT);
	a[1].rating = 1.5;
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	a[1].rating = 0.2;
	a[1].arrival = NAN;
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	a[1].arrival = 3.0;			/* out of order */
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	a[1].arrival = 2.0;
	a[1].id = 5;				/* equal times: ids out of order */
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 3.0, p, &c), MM_ERR_ARGUMENT);
	a[1].id = 2;
	CHECK_INT(mm_optimal_pairs(a, 3, 5.0, 3.0, p, &c), MM_OK);
}

/*
 * Necessary conditions of optimality that are cheap to test on a large
 * solution: no two singles could pair more cheaply than their bots, and
 * no single could take a partner's place more cheaply.  Returns the number
 * of violations.
 */
static int
local_violations(const MMArrival *a, int n, double max_wait, double bot,
				 const int *p)
{
	int			bad = 0;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n && a[j].arrival - a[i].arrival <= max_wait; j++)
		{
			double		c = pcost(a, i, j, max_wait);

			if (p[i] == -1 && p[j] == -1 && c < 2 * bot - 1e-6)
				bad++;
			/* single i takes j from its partner, who gets the bot instead */
			if (p[i] == -1 && p[j] >= 0 && c < pcost(a, j, p[j], max_wait) - 1e-6)
				bad++;
			if (p[j] == -1 && p[i] >= 0 && c < pcost(a, i, p[i], max_wait) - 1e-6)
				bad++;
		}
	return bad;
}

/*
 * 2,000 Poisson arrivals at 10/s, max_wait 5 (about 100 admissible pairs
 * per player): a valid solution, its reported cost, local optimality,
 * and OPT with bots at arrival no dearer than with bots at max_wait.
 */
void
test_optimal_large(void)
{
	int			n = 2000;
	MMArrival  *a = opt_stream(n, 10.0, 77);
	int		   *p = malloc(sizeof(int) * n);
	double		c3 = NAN;
	double		c4 = NAN;

	if (a == NULL || p == NULL)
	{
		CHECK(!"out of memory");
		goto out;
	}
	CHECK_INT(mm_optimal_pairs(a, n, 5.0, 3.0, p, &c3), MM_OK);
	CHECK_NEAR(partner_cost(a, n, 5.0, 3.0, p), c3, 1e-6);
	CHECK_INT(local_violations(a, n, 5.0, 3.0, p), 0);
	CHECK_INT(mm_optimal_pairs(a, n, 5.0, 4.0, p, &c4), MM_OK);
	CHECK_NEAR(partner_cost(a, n, 5.0, 4.0, p), c4, 1e-6);
	CHECK_INT(local_violations(a, n, 5.0, 4.0, p), 0);
	CHECK(c3 <= c4 + 1e-9);
	/* at 10/s nearly everyone pairs: per game well below greedy's 0.69 */
	printf("     OPT n=2000: %.4f per player (bot 3), %.4f (bot 4)\n",
		   c3 / n, c4 / n);
	CHECK(c4 / (n / 2) < 0.2);
out:
	free(a);
	free(p);
}

/*
 * OPT is a lower bound for every online algorithm on the same stream:
 * online bots come at max_wait (cost 4) and an online pair waits at least
 * as long as OPT's, so OPT(bot 4) <= online, and OPT(bot 3) <= OPT(bot 4).
 */
void
test_optimal_vs_online(void)
{
	static const MMAlgorithm algos[] = {
		MM_ALGO_GREEDY, MM_ALGO_PERIODIC, MM_ALGO_MULTI_QUEUE,
		MM_ALGO_DIFFERENCE_WAIT
	};
	static const double rates[] = {10.0, 1.0, 0.2};
	int			n = 3000;

	for (size_t ri = 0; ri < sizeof(rates) / sizeof(rates[0]); ri++)
	{
		MMArrival  *a = opt_stream(n, rates[ri], 500 + ri);
		double		c3 = NAN;
		double		c4 = NAN;

		if (a == NULL)
		{
			CHECK(!"out of memory");
			return;
		}
		CHECK_INT(mm_optimal_pairs(a, n, 5.0, 3.0, NULL, &c3), MM_OK);
		CHECK_INT(mm_optimal_pairs(a, n, 5.0, 4.0, NULL, &c4), MM_OK);
		CHECK(c3 <= c4 + 1e-9);
		printf("     rate %g: OPT %.1f (bot 3), %.1f (bot 4);", rates[ri], c3, c4);
		for (size_t ai = 0; ai < sizeof(algos) / sizeof(algos[0]); ai++)
		{
			MMConfig	cfg;
			MMSimSummary s;

			mm_config_init(&cfg, algos[ai]);
			mm_config_set_max_wait(&cfg, 5.0);
			cfg.arrival_rate = rates[ri];
			cfg.difference_wait.wait_factor = 2.0;
			CHECK_INT(mm_simulate(&cfg, a, NULL, n, NULL, &s), MM_OK);
			CHECK(c4 <= s.cost + 1e-6);
			printf(" %s %.2fx", mm_algorithm_name(algos[ai]), s.cost / c4);
		}
		printf("\n");
		free(a);
	}
}
