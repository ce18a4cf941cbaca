/*
 * test_auto.c
 *		Unit tests of the auto algorithm: the measured rate, the instant a
 *		pair becomes eligible (the step and the deadline agree on it), the
 *		timeout rule, groups of k > 2, and its cost against the offline
 *		optimum and the other algorithms on one stream.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_internal.h"

#include <stdlib.h>
#include <string.h>

#define AQ_MAX 16

/* A small auto queue with room for AQ_MAX tickets. */
typedef struct AutoQueue
{
	MMConfig	cfg;
	MMTicket	tickets[AQ_MAX];
	MMGroup		groups[AQ_MAX];
	MMPool		pool;
	MMMatch		matches[AQ_MAX];
	int			members[AQ_MAX];
	int			teams[AQ_MAX];
	int			expired[AQ_MAX];
	MMResult	res;
} AutoQueue;

static void
aq_init(AutoQueue *q, int team_size, double max_wait, double rate)
{
	memset(q, 0, sizeof(*q));
	mm_config_init(&q->cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&q->cfg, max_wait);
	q->cfg.team_size = team_size;
	q->cfg.arrival_rate = rate;
	q->pool.tickets = q->tickets;
	q->pool.groups = q->groups;
	q->pool.ngroups_cap = AQ_MAX;
	q->pool.stepped_at = -INFINITY;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
}

/* A ticket arriving in order (ids 1, 2, ...). */
static void
aq_add(AutoQueue *q, double rating, double arrival)
{
	MMTicket   *t = &q->tickets[q->pool.ntickets];

	t->id = q->pool.ntickets + 1;
	t->rating = rating;
	t->arrival = arrival;
	t->group = -1;
	t->party = -1;
	t->attr = -1;
	t->crow = q->pool.ntickets;
	q->pool.ntickets++;
}

/* The rate is (n - 1) over the span, unknown (0) below 10 arrivals. */
void
test_auto_rate(void)
{
	double		t[60];

	for (int i = 0; i < 60; i++)
		t[i] = i * 0.1;
	CHECK_NEAR(mm_arrival_rate(t, 9), 0.0, 0);
	CHECK_NEAR(mm_arrival_rate(t, 10), 10.0, 1e-9);
	CHECK_NEAR(mm_arrival_rate(t + 10, MM_RATE_ARRIVALS), 10.0, 1e-9);
	for (int i = 0; i < 60; i++)
		t[i] = 7.0;
	CHECK_NEAR(mm_arrival_rate(t, 20), MM_RATE_MAX, 0);
	CHECK_NEAR(mm_arrival_rate(NULL, 20), 0.0, 0);
}

/*
 * A pair too far apart to play on arrival plays at the instant waiting for
 * a closer partner stops paying (myopic_at): the deadline names it, a step
 * just before does nothing and a step at it matches the pair.  Rate
 * 5.5/s, max_wait 10: S^2 = 1/55; gap g = 0.2, hL = 0.2, hR = 0.1 (the end
 * of the range), so A = 2 (0.04 - 0.02 + 0.02 - 0.005 + 0.03) = 0.13 and
 * the pair is due when S (0.2 (0.6 x_0 + x_0^2) + 0.3 (0.6 x_1 + x_1^2))
 * reaches 0.13 - 2 / 55: at t = 10.7509 (x_0 = 0.975, x_1 = 0.875).
 */
void
test_auto_instant(void)
{
	AutoQueue	q;
	double		d;

	aq_init(&q, 1, 10.0, 5.5);
	aq_add(&q, 0.7, 1.0);
	aq_add(&q, 0.9, 2.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	d = mm_next_deadline(&q.cfg, &q.pool);
	CHECK_NEAR(d, 10.7509, 1e-3);
	CHECK_INT(mm_step(&q.cfg, &q.pool, d - 1e-6, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), d, 0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, d, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].bots, 0);
	/* no wait term beyond the waits: 2 * 0.2 + waits over max_wait */
	CHECK_NEAR(q.res.matches[0].cost.total, 0.4 + ((d - 1.0) + (d - 2.0)) / 10.0, 1e-9);
}

/*
 * The instant the pair (0.7 at 1 s, 0.9 at 2 s) of test_auto_instant is
 * due, given recent ratings: 2 when a step at the second arrival matches
 * it.
 */
static double
density_deadline(const double *recent, int n)
{
	AutoQueue	q;

	aq_init(&q, 1, 10.0, 5.5);
	q.cfg.recent = recent;
	q.cfg.nrecent = n;
	aq_add(&q, 0.7, 1.0);
	aq_add(&q, 0.9, 2.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.0, &q.res), MM_OK);
	return q.res.nmatches > 0 ? 2.0 : mm_next_deadline(&q.cfg, &q.pool);
}

/*
 * The recent ratings weigh where a closer partner may come from: the pair
 * waits longer where ratings lie densely around it (a partner nearer
 * either member is likelier) and less where they are sparse; ratings
 * spread evenly over [0, 1] give about the instant without them, and too
 * few (at most MM_DENSITY_NEIGHBOURS) are not used.
 */
void
test_auto_density(void)
{
	double		r[MM_DENSITY_ARRIVALS];
	double		none = density_deadline(NULL, 0);
	double		even,
				dense,
				sparse;

	CHECK_NEAR(none, 10.7509, 1e-3);
	for (int i = 0; i < MM_DENSITY_ARRIVALS; i++)
		r[i] = i / (MM_DENSITY_ARRIVALS - 1.0);
	even = density_deadline(r, MM_DENSITY_ARRIVALS);
	CHECK_NEAR(even, none, 0.05);
	CHECK_NEAR(density_deadline(r, MM_DENSITY_NEIGHBOURS), none, 0);
	/*
	 * all recent players between 0.6 and 1 (density 2.5 around the pair):
	 * a closer partner stays worth waiting for until the older one's
	 * timeout (1 + 10 s)
	 */
	for (int i = 0; i < MM_DENSITY_ARRIVALS; i++)
		r[i] = 0.6 + 0.4 * i / (MM_DENSITY_ARRIVALS - 1.0);
	dense = density_deadline(r, MM_DENSITY_ARRIVALS);
	CHECK_NEAR(dense, 11.0, 1e-9);
	/*
	 * most recent players below 0.3, 20 spread over 0.3 to 1 (density
	 * about 0.14, bounded to 0.2): nobody closer is likely, the pair plays
	 * on arrival
	 */
	for (int i = 0; i < MM_DENSITY_ARRIVALS; i++)
		r[i] = i < MM_DENSITY_ARRIVALS - 20 ? 0.3 * i / (MM_DENSITY_ARRIVALS - 21.0) :
			0.3 + 0.7 * (i - (MM_DENSITY_ARRIVALS - 20) + 1) / 20.0;
	sparse = density_deadline(r, MM_DENSITY_ARRIVALS);
	CHECK_NEAR(sparse, 2.0, 0);
}

/*
 * A pair due when the step collects it is committed only if it is still
 * due once the cheaper pairs committed before it have left: A (0.40) and
 * B (0.50) are due with C (0.52) close above B (room above B 0.01:
 * A = 0.0269 < 2 S^2 = 0.03, S^2 = 1 / (20/3 * 10)), but once C and D
 * (0.53) play, the room above B is the full gap (A = 0.035) and a closer
 * partner for B is worth waiting for.
 */
void
test_auto_recheck(void)
{
	AutoQueue	q;

	aq_init(&q, 1, 10.0, 20.0 / 3.0);
	aq_add(&q, 0.40, 0.0);
	aq_add(&q, 0.50, 0.0);
	aq_add(&q, 0.52, 0.0);
	aq_add(&q, 0.53, 0.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 0.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 2);
	CHECK_INT(q.pool.tickets[q.res.members[q.res.matches[0].first]].id +
			  q.pool.tickets[q.res.members[q.res.matches[0].first + 1]].id, 3 + 4);
	/* left alone, A and B are due later */
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 2);
	CHECK(mm_next_deadline(&q.cfg, &q.pool) > 0.0);
}

/* A uniform draw in [0, 1) from an LCG state. */
static double
aq_uniform(uint64_t *seed)
{
	*seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (*seed >> 11) / 9007199254740992.0;
}

/* dst: a copy of src, with its own tickets and result. */
static void
aq_copy(AutoQueue *dst, const AutoQueue *src)
{
	*dst = *src;
	dst->pool.tickets = dst->tickets;
	dst->pool.groups = dst->groups;
	dst->res.matches = dst->matches;
	dst->res.members = dst->members;
	dst->res.teams = dst->teams;
	dst->res.expired = dst->expired;
}

/*
 * dst: a copy of src whose steps keep the density table d, made at the
 * first step.
 */
static void
aq_copy_with_table(AutoQueue *dst, const AutoQueue *src, MMDensity *d)
{
	aq_copy(dst, src);
	memset(d, 0, sizeof(*d));
	d->lookups = 1000000;
	dst->cfg.density = d;
}

/*
 * A step and a deadline decide the same with the caller's MMDensity made
 * (its table of densities by rank, found through slices of the range) as
 * without one, on pools and samples drawn at random: skewed ratings with
 * repeats, so that slices hold many ranks or none.
 */
void
test_auto_density_table(void)
{
	static double sample[MM_DENSITY_ARRIVALS];
	uint64_t	seed = 99;
	int			made = 0;

	for (int round = 0; round < 300; round++)
	{
		AutoQueue	q1,
					q2;
		MMDensity	d;
		int			n = 2 + round % (AQ_MAX - 1);
		int			ns = MM_DENSITY_NEIGHBOURS + 1 + round % (MM_DENSITY_ARRIVALS - MM_DENSITY_NEIGHBOURS);
		double		due1,
					due2;

		for (int i = 0; i < ns; i++)
		{
			sample[i] = aq_uniform(&seed);
			sample[i] = round % 3 == 0 ? floor(sample[i] * 8) / 8 : sample[i] * sample[i];
		}
		qsort(sample, ns, sizeof(double), test_cmp_double);
		aq_init(&q1, 1, 10.0, 0.5 + round % 7);
		for (int i = 0; i < n; i++)
		{
			aq_add(&q1, aq_uniform(&seed), i * 0.3);
		}
		q1.cfg.recent = sample;
		q1.cfg.nrecent = ns;
		aq_copy_with_table(&q2, &q1, &d);
		due1 = mm_next_deadline(&q1.cfg, &q1.pool);
		due2 = mm_next_deadline(&q2.cfg, &q2.pool);
		made += d.valid;
		CHECK(due1 == due2 || (isinf(due1) && isinf(due2) && (due1 < 0) == (due2 < 0)));
		{
			double		at = isfinite(due1) ? due1 : n * 0.3;

			CHECK_INT(mm_step(&q1.cfg, &q1.pool, at, &q1.res), MM_OK);
			CHECK_INT(mm_step(&q2.cfg, &q2.pool, at, &q2.res), MM_OK);
		}
		CHECK_INT(q1.res.nmatches, q2.res.nmatches);
		for (int j = 0; j < q1.res.nmatches * 2 && j < AQ_MAX; j++)
			CHECK_INT(q1.members[j], q2.members[j]);
	}
	CHECK_INT(made, 300);
}

/*
 * Recent ratings spanning a few ulps make slices thinner than the distance
 * to a waiting rating over an int's range of them: the table still finds
 * the ranks (above all, below all, within) and decides as without it.
 */
void
test_auto_density_narrow(void)
{
	static double sample[200];
	AutoQueue	q1,
				q2;
	MMDensity	d;
	double		due1,
				due2;

	for (int i = 0; i < 200; i++)
		sample[i] = 0.3 + 1e-15 * i / 199.0;
	qsort(sample, 200, sizeof(double), test_cmp_double);
	aq_init(&q1, 1, 10.0, 4.0);
	aq_add(&q1, 0.9, 0.0);
	aq_add(&q1, 0.0, 0.5);
	aq_add(&q1, 0.3 + 5e-16, 1.0);
	aq_add(&q1, 0.55, 1.5);
	q1.cfg.recent = sample;
	q1.cfg.nrecent = 200;
	aq_copy_with_table(&q2, &q1, &d);
	due1 = mm_next_deadline(&q1.cfg, &q1.pool);
	due2 = mm_next_deadline(&q2.cfg, &q2.pool);
	CHECK(d.valid);
	CHECK(d.slice_width > 0 && d.slice_width < 1e-16);
	CHECK(isfinite(due1));
	CHECK_NEAR(due2, due1, 0);
	for (double at = 1.5; at <= 11.5; at += 0.5)
	{
		CHECK_INT(mm_step(&q1.cfg, &q1.pool, at, &q1.res), MM_OK);
		CHECK_INT(mm_step(&q2.cfg, &q2.pool, at, &q2.res), MM_OK);
		CHECK_INT(q1.res.nmatches, q2.res.nmatches);
		for (int j = 0; j < q1.res.nmatches * 2; j++)
			CHECK_INT(q1.members[j], q2.members[j]);
		mm_pool_compact(&q1.pool, &q1.res);
		mm_pool_compact(&q2.pool, &q2.res);
	}
	CHECK_INT(q1.pool.ntickets, 0);
	CHECK_INT(q2.pool.ntickets, 0);
}

/*
 * A step of auto finds the next deadline on its way (MMResult.deadline):
 * what mm_next_deadline gives once the step's tickets are removed, with
 * the same horizon (a simulator's next arrival).  Without the horizon,
 * mm_next_deadline gives the exact instant, which the step told when it
 * came before the horizon or fewer than k tickets wait (with keys, per
 * sub-pool), else the horizon.  On random pools and steps (some with
 * timed-out tickets): pairs on the
 * rating alone with and without recent ratings, pairs with a second
 * criterion, groups of 3 and 4, pools keyed by an equal filter, bots and
 * expiry.  Another algorithm, and min_players, leave it NAN.
 */
void
test_auto_step_deadline(void)
{
	static double sample[MM_DENSITY_ARRIVALS];
	double		crit[AQ_MAX];
	int32_t		key[AQ_MAX];
	double		key_rate[3] = {0.5, 4.0, 0.0};
	double		key_last[3];
	int			key_gaps[3] = {9, 49, 0};
	uint64_t	seed = 5;
	int			early = 0,
				matched = 0,
				cut = 0,
				exact = 0;

	for (int round = 0; round < 3000; round++)
	{
		AutoQueue	q;
		int			shape = round % 6;
		int			n = 1 + (int) (aq_uniform(&seed) * AQ_MAX);
		double		rate = aq_uniform(&seed) * 20.0;
		double		now,
					horizon,
					d,
					next;

		aq_init(&q, shape == 3 ? 2 : 1, 5.0, rate);
		if (shape == 4)
			q.cfg.teams = 3;
		q.cfg.on_timeout = round % 2 ? MM_TIMEOUT_BOTS : MM_TIMEOUT_EXPIRE;
		for (int i = 0; i < n; i++)
		{
			aq_add(&q, aq_uniform(&seed), (i > 0 ? q.tickets[i - 1].arrival : 0.0) + 0.3 * aq_uniform(&seed));
			crit[i] = aq_uniform(&seed);
			key[i] = (int32_t) (aq_uniform(&seed) * 3);
		}
		if (shape == 1)
		{
			int			ns = MM_DENSITY_NEIGHBOURS + 1 + round % (MM_DENSITY_ARRIVALS - MM_DENSITY_NEIGHBOURS);

			for (int i = 0; i < ns; i++)
				sample[i] = aq_uniform(&seed) * aq_uniform(&seed);
			qsort(sample, ns, sizeof(double), test_cmp_double);
			q.cfg.recent = sample;
			q.cfg.nrecent = ns;
		}
		if (shape == 2)
		{
			q.cfg.criteria.n = 1;
			q.pool.criteria = crit;
			q.pool.ncrows = n;
		}
		/* every third round the rate falls while nobody arrives */
		if (round % 3 == 1)
		{
			q.cfg.rate_last = q.tickets[n - 1].arrival;
			q.cfg.rate_gaps = 9 + round % 41;
		}
		if (shape == 5)
		{
			q.pool.key = key;
			q.pool.nkeys = n;
			q.pool.key_rate = key_rate;
			q.pool.nkey_rates = 3;
			for (int k = 0; k < 3; k++)
				key_last[k] = q.tickets[n - 1].arrival - k;
			q.pool.key_rate_last = round % 3 == 1 ? key_last : NULL;
			q.pool.key_rate_gaps = round % 3 == 1 ? key_gaps : NULL;
		}
		CHECK_INT(mm_config_check(&q.cfg), MM_OK);
		now = q.tickets[n - 1].arrival + aq_uniform(&seed) * (round % 3 != 2 ? 6.0 : 0.2);
		/* every other round a horizon: the next arrival of a simulation */
		horizon = round % 2 ? now + aq_uniform(&seed) * 2.0 : 0.0;
		q.pool.horizon = horizon;
		CHECK_INT(mm_step(&q.cfg, &q.pool, now, &q.res), MM_OK);
		d = q.res.deadline;
		matched += q.res.nmatches > 0;
		mm_pool_compact(&q.pool, &q.res);
		/* as the simulator asks, with the horizon: what the step told */
		CHECK(d == mm_next_deadline(&q.cfg, &q.pool));
		q.pool.horizon = 0;
		next = mm_next_deadline(&q.cfg, &q.pool);
		if (horizon == 0 || q.pool.ntickets == 0 ||
			(shape != 5 && q.pool.ntickets < mm_config_k(&q.cfg)))
		{
			/* fewer than k wait for a timeout, told exactly whatever the horizon */
			CHECK(d == next);
			exact += horizon != 0 && q.pool.ntickets > 0 && next > horizon;
		}
		else
		{
			/*
			 * exact before the horizon; at or after it the horizon, or with
			 * keys a sub-pool's exact timeout if that comes first
			 */
			if (next < horizon || shape != 5)
				CHECK(d == (next < horizon ? next : horizon));
			else
				CHECK(d >= horizon && d <= next);
			cut += next > horizon;
		}
		if (q.pool.ntickets > 0 && next < q.tickets[0].arrival + 5.0)
			early++;
	}
	/* most steps match someone, and many deadlines come before a timeout */
	CHECK(matched > 1500);
	CHECK(early > 300);
	CHECK(cut > 300);
	CHECK(exact > 100);

	/* not known: another algorithm, or smaller matches after the step */
	{
		AutoQueue	q;

		aq_init(&q, 1, 5.0, 1.0);
		aq_add(&q, 0.1, 0.0);
		aq_add(&q, 0.9, 0.0);
		CHECK_INT(mm_step(&q.cfg, &q.pool, 0.0, &q.res), MM_OK);
		CHECK(!isnan(q.res.deadline));
		q.cfg.algorithm = MM_ALGO_GREEDY;
		CHECK_INT(mm_step(&q.cfg, &q.pool, 0.0, &q.res), MM_OK);
		CHECK(isnan(q.res.deadline));
		q.cfg.algorithm = MM_ALGO_AUTO;
		q.cfg.teams = 4;
		q.cfg.min_players = 2;
		CHECK_INT(mm_config_check(&q.cfg), MM_OK);
		CHECK_INT(mm_step(&q.cfg, &q.pool, 0.0, &q.res), MM_OK);
		CHECK(isnan(q.res.deadline));
	}
}

/*
 * Step at every deadline of q from now until a match or max_steps steps;
 * before each, a step of a copy half-way to the deadline must commit
 * nothing (the rate holds between the instants it falls) and the deadline
 * must be mm_next_deadline's.  Returns the steps taken; *at gets the
 * match's time (NAN: none).
 */
static int
aq_step_to_match(AutoQueue *q, double now, int max_steps, double *at)
{
	int			steps = 0;

	*at = NAN;
	CHECK_INT(mm_step(&q->cfg, &q->pool, now, &q->res), MM_OK);
	while (q->res.nmatches == 0 && steps < max_steps)
	{
		AutoQueue	mid;
		double		d = q->res.deadline;
		double		half = now + (d - now) / 2;

		CHECK(d > now);
		CHECK(d == mm_next_deadline(&q->cfg, &q->pool));
		aq_copy(&mid, q);
		/* (on a coarse clock the half-way instant may round to either end) */
		CHECK_INT(mm_step(&mid.cfg, &mid.pool, half, &mid.res), MM_OK);
		CHECK(mid.res.nmatches == 0 || half == d);
		now = d;
		CHECK_INT(mm_step(&q->cfg, &q->pool, now, &q->res), MM_OK);
		steps++;
	}
	if (q->res.nmatches > 0)
		*at = now;
	return steps;
}

/*
 * Whether a step of a copy of q at each instant the rate falls, clock +
 * span0 (1.1^j - 1) for j = 1, 2, ..., commits nothing before until and
 * something at until: the falls a deadline passed over held nothing.
 */
static bool
aq_falls_quiet(const AutoQueue *q, double clock, double span0, double until)
{
	for (int j = 1; j < 100000; j++)
	{
		double		t = clock + span0 * (pow(1.1, j) - 1);
		AutoQueue	c;

		if (t > until)
			return false;		/* until is no fall's instant */
		aq_copy(&c, q);
		CHECK_INT(mm_step(&c.cfg, &c.pool, t, &c.res), MM_OK);
		if (t == until)
			return c.res.nmatches > 0;
		if (c.res.nmatches > 0)
			return false;
	}
	return false;
}

/*
 * Two players 0.05 apart left by a burst at clock (a billion per second:
 * 49 gaps in 49 ns, max_wait 60 s), stepped until they play
 * (aq_step_to_match); a step at each fall of the rate before then
 * commits nothing.
 */
static int
burst_pair(double clock, double *at)
{
	AutoQueue	q;
	AutoQueue	first;
	int			steps;

	aq_init(&q, 1, 60.0, MM_RATE_MAX);
	q.cfg.rate_last = clock;
	q.cfg.rate_gaps = 49;
	aq_add(&q, 0.45, clock);
	aq_add(&q, 0.5, clock);
	aq_copy(&first, &q);
	steps = aq_step_to_match(&q, clock, 1000, at);
	CHECK(aq_falls_quiet(&first, clock, 49 / MM_RATE_MAX, *at));
	return steps;
}

/*
 * The rate falls while nobody arrives: the measured gaps count over the
 * span up to the step, in steps of AUTO_RATE_STEP (1.1).
 *
 * test_auto_instant's pair (0.7 at 1 s, 0.9 at 2 s; rate 5.5/s measured
 * as 11 gaps over 2 s ending at 2 s), which waited until 10.75 s at the
 * rate as measured: the span counts 2 * 1.1^j from 2 (1.1^j - 1) s on,
 * and at j = 10 (5.1875 s: 2.1 per second) the pair is due.  The step at
 * 2 s finds that instant as its deadline; steps at j = 1 .. 9 match
 * nothing.
 *
 * Two players of a burst (a billion per second: 49 gaps in 49 ns) 0.05
 * apart play about 11 s after it (some 200 falls of the rate, most within
 * its first second), not at their timeout a minute on, and the first
 * step's deadline is that instant.
 *
 * mm_simulate: 50 players arriving at one instant (max_wait 60 s) play
 * within seconds, where all of them waited the minute.
 */
void
test_auto_rate_falls(void)
{
	AutoQueue	q;
	double		at;
	int			steps;

	aq_init(&q, 1, 10.0, 5.5);
	q.cfg.rate_last = 2.0;
	q.cfg.rate_gaps = 11;
	aq_add(&q, 0.7, 1.0);
	aq_add(&q, 0.9, 2.0);
	CHECK(aq_falls_quiet(&q, 2.0, 2.0, 2.0 + 2.0 * (pow(1.1, 10) - 1)));
	steps = aq_step_to_match(&q, 2.0, 100, &at);
	CHECK_INT(steps, 1);
	CHECK_NEAR(at, 2.0 + 2.0 * (pow(1.1, 10) - 1), 0);

	/* a step before the first fall (a silence of 0.1 s) finds the same */
	aq_init(&q, 1, 10.0, 5.5);
	q.cfg.rate_last = 2.0;
	q.cfg.rate_gaps = 11;
	aq_add(&q, 0.7, 1.0);
	aq_add(&q, 0.9, 2.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.1, &q.res), MM_OK);
	CHECK_NEAR(q.res.deadline, 2.0 + 2.0 * (pow(1.1, 10) - 1), 0);
	/* without gaps the rate never falls: test_auto_instant's deadline */
	q.cfg.rate_gaps = 0;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.1, &q.res), MM_OK);
	CHECK_NEAR(q.res.deadline, 10.7509, 1e-3);
	q.cfg.rate_gaps = -1;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);

	steps = burst_pair(100.0, &at);
	CHECK_INT(steps, 1);
	CHECK(at > 105.0 && at < 115.0);

	/*
	 * The same on a clock of 1e15 s, whose ulp (0.125 s) is longer than the
	 * first few hundred spans: those falls come at once, and the rest one
	 * ulp or more apart.
	 */
	steps = burst_pair(1e15, &at);
	CHECK_INT(steps, 1);
	CHECK(at > 1e15 + 5.0 && at < 1e15 + 15.0);

	/*
	 * A ticket alone waits for its timeout: no fall of the rate can pair
	 * it, so none is a deadline.  A silence longer than float8 counts (a
	 * rate measured at -1e308, a step at 1e308) ends the falls at the
	 * floor; a rate above MM_RATE_MAX is refused.
	 */
	aq_init(&q, 1, 60.0, MM_RATE_MAX);
	q.cfg.rate_last = 0.0;
	q.cfg.rate_gaps = 49;
	aq_add(&q, 0.5, 0.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 0.0, &q.res), MM_OK);
	CHECK_NEAR(q.res.deadline, 60.0, 0);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 60.0, 0);
	aq_init(&q, 1, 60.0, MM_RATE_MAX);
	q.cfg.rate_last = -1e308;
	q.cfg.rate_gaps = 49;
	aq_add(&q, 0.1, 1e308);
	aq_add(&q, 0.9, 1e308);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 1e308, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	q.cfg.arrival_rate = MM_RATE_MAX * 2;
	CHECK_INT(mm_config_check(&q.cfg), MM_ERR_ARGUMENT);

	{
		MMArrival	a[50];
		MMSimSummary sum;
		MMConfig	cfg;

		mm_config_init(&cfg, MM_ALGO_AUTO);
		mm_config_set_max_wait(&cfg, 60.0);
		for (int i = 0; i < 50; i++)
		{
			a[i].id = i + 1;
			a[i].rating = fmod((i + 1) * 0.6180339887, 1.0);
			a[i].arrival = 0.0;
		}
		CHECK_INT(mm_simulate(&cfg, a, NULL, 50, NULL, &sum), MM_OK);
		CHECK_INT((int) sum.games, 25);
		CHECK(sum.mean_wait < 10.0);
	}
}

/*
 * mm_sorted_position, which auto's density lookups and the simulator's
 * sample use: the first place not below x, against a scan, on sorted
 * arrays of 0 to 64 values with repeats, for x at, between, below and
 * above them, and NaN (no place: 0).
 */
void
test_auto_sorted_position(void)
{
	double		v[64];
	uint64_t	seed = 11;

	for (int round = 0; round < 2000; round++)
	{
		int			n = round % 65;

		for (int i = 0; i < n; i++)
			v[i] = floor(aq_uniform(&seed) * (1 + round % 20)) / 20.0;
		qsort(v, n, sizeof(double), test_cmp_double);
		for (int j = 0; j < 8; j++)
		{
			double		x = j == 0 && n > 0 ? v[(int) (aq_uniform(&seed) * n)] :
				j == 1 ? -1.0 : j == 2 ? 2.0 : aq_uniform(&seed);
			int			want = 0;

			while (want < n && v[want] < x)
				want++;
			CHECK_INT(mm_sorted_position(v, n, x), want);
		}
		CHECK_INT(mm_sorted_position(v, n, NAN), 0);
	}
}

/*
 * mm_simulate measures the recent ratings on the stream itself, whatever
 * the caller's configuration holds, and mm_config_check refuses a sample
 * larger than MM_DENSITY_ARRIVALS, a count without ratings, and ratings
 * out of order or outside [0, 1].
 */
void
test_auto_recent_config(void)
{
	enum
	{
		N = 600
	};
	static MMArrival a[N];
	static MMOutcome o1[N],
				o2[N];
	static double r[MM_DENSITY_ARRIVALS + 1];
	MMConfig	cfg;
	MMSimSummary s1,
				s2;
	uint64_t	seed = 7;
	int			differ = 0;

	for (int i = 0; i < N; i++)
	{
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i].id = i + 1;
		a[i].rating = (double) (seed >> 11) / 9007199254740992.0;
		a[i].arrival = i * 0.2;
	}
	for (int i = 0; i <= MM_DENSITY_ARRIVALS; i++)
		r[i] = 0.9 + 0.1 * i / MM_DENSITY_ARRIVALS;
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 5.0);
	CHECK_INT(mm_simulate(&cfg, a, NULL, N, o1, &s1), MM_OK);
	cfg.recent = r;
	cfg.nrecent = MM_DENSITY_ARRIVALS;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	CHECK_INT(mm_simulate(&cfg, a, NULL, N, o2, &s2), MM_OK);
	for (int i = 0; i < N; i++)
		if (o1[i].matched_at != o2[i].matched_at || o1[i].match_no != o2[i].match_no)
			differ++;
	CHECK_INT(differ, 0);
	CHECK_NEAR(s1.cost, s2.cost, 0);
	cfg.nrecent = MM_DENSITY_ARRIVALS + 1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	CHECK_INT(mm_simulate(&cfg, a, NULL, N, o2, &s2), MM_ERR_ARGUMENT);
	cfg.nrecent = -1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	/* ratings out of order, outside [0, 1] or not numbers */
	cfg.nrecent = MM_DENSITY_ARRIVALS;
	r[3] = r[2] - 0.01;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	r[3] = r[2];
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	r[MM_DENSITY_ARRIVALS - 1] = 1.5;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	r[MM_DENSITY_ARRIVALS - 1] = NAN;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	r[MM_DENSITY_ARRIVALS - 1] = 1.0;
	r[0] = -0.1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	r[0] = 0.9;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	cfg.recent = NULL;
	cfg.nrecent = 1;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
}

/*
 * mm_config_check refuses auto's constants (C API only) when negative, NaN
 * or infinite, the curve as the base and the growth; 0 takes the defaults.
 */
void
test_auto_constants_check(void)
{
	const double bad[] = {-1.0, NAN, INFINITY};
	MMConfig	cfg;

	mm_config_init(&cfg, MM_ALGO_AUTO);
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	cfg.automatic.base = 0.5;
	cfg.automatic.growth = 0.5;
	cfg.automatic.curve = 0.5;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	for (int i = 0; i < 3; i++)
	{
		cfg.automatic.base = bad[i];
		CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
		cfg.automatic.base = 0.5;
		cfg.automatic.growth = bad[i];
		CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
		cfg.automatic.growth = 0.5;
		cfg.automatic.curve = bad[i];
		CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
		cfg.automatic.curve = 0.5;
	}
}

/*
 * At its timeout a player takes the closest waiting player (not an older
 * or a farther one); the third keeps waiting.  A very high rate makes
 * every pair wait.
 */
void
test_auto_timeout(void)
{
	AutoQueue	q;

	aq_init(&q, 1, 10.0, 1e6);
	aq_add(&q, 0.1, 0.0);
	aq_add(&q, 0.9, 5.0);
	aq_add(&q, 0.5, 6.0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 6.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_NEAR(mm_next_deadline(&q.cfg, &q.pool), 10.0, 0);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 10.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 2);
	CHECK_INT(q.members[0], 0);
	CHECK_INT(q.members[1], 2);
	mm_pool_compact(&q.pool, &q.res);
	CHECK_INT(q.pool.ntickets, 1);
	/* alone at its own timeout: a computer player, or expiry */
	CHECK_INT(mm_step(&q.cfg, &q.pool, 15.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].bots, 1);
	q.cfg.on_timeout = MM_TIMEOUT_EXPIRE;
	CHECK_INT(mm_step(&q.cfg, &q.pool, 15.0, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 0);
	CHECK_INT(q.res.nexpired, 1);
}

/*
 * 2v2: the cheapest run of four consecutive ratings plays, split into
 * balanced teams; the two far ones keep waiting (fewer than k).
 */
void
test_auto_groups(void)
{
	AutoQueue	q;
	int			sum[2] = {0, 0};

	aq_init(&q, 2, 10.0, 0.0);	/* rate unknown: S = 1 */
	aq_add(&q, 0.80, 0.0);
	aq_add(&q, 0.10, 0.5);
	aq_add(&q, 0.16, 1.0);
	aq_add(&q, 0.12, 1.5);
	aq_add(&q, 0.95, 2.0);
	aq_add(&q, 0.14, 2.5);
	CHECK_INT(mm_step(&q.cfg, &q.pool, 2.5, &q.res), MM_OK);
	CHECK_INT(q.res.nmatches, 1);
	CHECK_INT(q.res.matches[0].nmembers, 4);
	CHECK_INT(q.members[0], 1);
	CHECK_INT(q.members[1], 2);
	CHECK_INT(q.members[2], 3);
	CHECK_INT(q.members[3], 5);
	for (int i = 0; i < 4; i++)
		sum[q.teams[i] - 1] += (int) (q.tickets[q.members[i]].rating * 100 + 0.5);
	CHECK_INT(sum[0], sum[1]);
	CHECK_NEAR(q.res.matches[0].cost.criteria, 4 * 0.06, 1e-9);
}

/*
 * On a Poisson stream of 10 players per second (k = 2, max_wait 5 s),
 * auto costs less than multi_queue with its best range count and stays
 * within 1.4 of the offline optimum.
 */
void
test_auto_quality(void)
{
	int			n = 3000;
	MMArrival  *a = malloc(sizeof(MMArrival) * n);
	uint64_t	state = 11;
	double		t = 0.0;
	double		opt;
	double		best_mq = INFINITY;
	MMConfig	cfg;
	MMSimSummary s;

	if (a == NULL)
	{
		CHECK(!"out of memory");
		return;
	}
	for (int i = 0; i < n; i++)
	{
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		t += -log(1.0 - ((state >> 11) + 0.5) / 9007199254740992.0) / 10.0;
		state = state * 6364136223846793005ULL + 1442695040888963407ULL;
		a[i].id = i + 1;
		a[i].rating = (state >> 11) / 9007199254740992.0;
		a[i].arrival = t;
	}
	CHECK_INT(mm_optimal_pairs(a, n, 5.0, 3.0, NULL, &opt), MM_OK);
	for (int r = 2; r <= 10; r++)
	{
		mm_config_init(&cfg, MM_ALGO_MULTI_QUEUE);
		mm_config_set_max_wait(&cfg, 5.0);
		cfg.multi_queue.ranges = r;
		CHECK_INT(mm_simulate(&cfg, a, NULL, n, NULL, &s), MM_OK);
		best_mq = s.cost < best_mq ? s.cost : best_mq;
	}
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, 5.0);
	CHECK_INT(mm_simulate(&cfg, a, NULL, n, NULL, &s), MM_OK);
	printf("     auto %.4f, best multi_queue %.4f (of OPT)\n", s.cost / opt, best_mq / opt);
	CHECK(s.cost < best_mq);
	CHECK(s.cost < 1.4 * opt);
	CHECK(s.max_wait <= 5.0);
	free(a);
}

/* The most tickets of a pool of test_auto_pair_pass. */
#define PP_MAX 2000

/* One pool of test_auto_pair_pass. */
typedef struct PairPool
{
	MMConfig	cfg;
	MMPool		pool;
	MMResult	res;
	double		crit[2 * PP_MAX];
} PairPool;

/*
 * Step pp at now with the passes merging pairs and passing over those
 * their bounds put late, or (reference) collecting them all with every
 * instant computed, and write what the step decided into out (members by id and team, computer
 * players, expiries, the step's deadline and then mm_next_deadline's);
 * compacts the pool.  Returns the length written.
 */
static int
pair_step(PairPool *pp, double now, bool reference, double *out)
{
	int			w = 0;
	MMStatus	st;

	mm_auto_collect_all = reference;
	mm_auto_exact_pairs = reference;
	st = mm_step(&pp->cfg, &pp->pool, now, &pp->res);
	mm_auto_collect_all = false;
	mm_auto_exact_pairs = false;
	out[w++] = st;
	if (st != MM_OK)
		return w;
	for (int j = 0; j < pp->res.nmatches; j++)
	{
		const MMMatch *m = &pp->res.matches[j];

		out[w++] = m->bots;
		for (int i = 0; i < m->nmembers; i++)
		{
			out[w++] = pp->pool.tickets[pp->res.members[m->first + i]].id;
			out[w++] = pp->res.teams[m->first + i];
		}
	}
	for (int j = 0; j < pp->res.nexpired; j++)
		out[w++] = -pp->pool.tickets[pp->res.expired[j]].id;
	out[w++] = pp->res.deadline;
	mm_pool_compact(&pp->pool, &pp->res);
	out[w++] = mm_next_deadline(&pp->cfg, &pp->pool);
	return w;
}

/*
 * Pairs (k = 2): a step's passes decide the same, matches, their order,
 * expiries and deadlines, whether they merge each ticket's pairs as they
 * go (pair_pass), passing over the pairs that bounds of their densities
 * put after the instant looked for, or collect and sort every eligible
 * pair first with every instant computed, on pools
 * drawn at random: ratings spread, clustered or on a few values (ties of
 * cost), the rating alone (with or without recent ratings) or with other
 * criteria (pairs whose cost does not grow with the rating gap), tickets
 * all due or a few, horizons, bots and expiry, several steps each; and
 * one pool of 2,000 tickets all due, where each pass merges deep.
 */
void
test_auto_pair_pass(void)
{
	static PairPool a,
				b;
	static MMTicket ta[PP_MAX],
				tb[PP_MAX];
	static MMGroup ga[PP_MAX],
				gb[PP_MAX];
	static MMMatch ma[PP_MAX],
				mb[PP_MAX];
	static int	mem_a[PP_MAX],
				mem_b[PP_MAX],
				team_a[PP_MAX],
				team_b[PP_MAX],
				exp_a[PP_MAX],
				exp_b[PP_MAX];
	static double sample[MM_DENSITY_ARRIVALS];
	static double out_a[4 * PP_MAX],
				out_b[4 * PP_MAX];
	static const double fixed_pool[8][2] = {
		{0.425137603366324, 0.066977174346866522},
		{0.70535457852115457, 0.094491427409195736},
		{0.36610272260482302, 0.14153626733328323},
		{0.17004431505897122, 0.23191539797011235},
		{0.1425537098749321, 0.25699908191046206},
		{0.53204270101725659, 0.38393921594142233},
		{0.46502860268260948, 0.44589445786321436},
		{0.030296615843438235, 0.52039068300063107}};
	uint64_t	seed = 23;
	int			differ = 0,
				matched = 0,
				merged_deep = 0;

	for (int round = 0; round < 802; round++)
	{
		bool		fixed = round == 0;
		bool		big = round == 801;
		int			n = fixed ? 8 : big ? PP_MAX : 1 + (int) (aq_uniform(&seed) * (round % 4 == 0 ? 300 : 40));
		int			spread = round % 3;
		int			ncrit = round % 5 == 4 ? 1 + round % 2 : 0;
		double		max_wait = round % 7 == 0 && !fixed ? 0.01 : 5.0;
		double		rate = 0.2 + aq_uniform(&seed) * 200.0;
		double		t = 0.0,
					now;

		memset(&a, 0, sizeof(a));
		mm_config_init(&a.cfg, MM_ALGO_AUTO);
		mm_config_set_max_wait(&a.cfg, max_wait);
		a.cfg.arrival_rate = rate;
		a.cfg.on_timeout = round % 2 ? MM_TIMEOUT_BOTS : MM_TIMEOUT_EXPIRE;
		a.cfg.criteria.n = ncrit;
		if (ncrit > 0 && round % 3 == 0)
			a.cfg.criteria.weight[0] = 0;	/* the rating counts for nothing */
		for (int i = 0; i < n; i++)
		{
			double		u = aq_uniform(&seed);

			if (aq_uniform(&seed) < 0.8)
				t += big ? 1e-5 : -log(1.0 - aq_uniform(&seed)) / rate;
			ta[i].id = i + 1;
			ta[i].rating = spread == 0 ? u : spread == 1 ? u * u * u : (int) (u * 6) / 5.0;
			ta[i].arrival = t;
			ta[i].group = -1;
			ta[i].party = -1;
			ta[i].attr = -1;
			ta[i].crow = i;
			for (int d = 0; d < ncrit; d++)
				a.crit[i * ncrit + d] = round % 4 == 1 ? (int) (aq_uniform(&seed) * 3) / 2.0 : aq_uniform(&seed);
		}
		if (fixed)
		{
			/*
			 * a pass that looks at some pairs only after its first
			 * commits: their instants come from the links it began with,
			 * as when every pair is collected first (with the links the
			 * commits left, 3 and 6 would pair instead of 2 and 6)
			 */
			a.cfg.arrival_rate = 14.154845278186606;
			for (int i = 0; i < n; i++)
			{
				ta[i].rating = fixed_pool[i][0];
				ta[i].arrival = fixed_pool[i][1];
			}
			t = 4.7587607533149248 - 0.9 * max_wait;
		}
		else if (ncrit == 0 && round % 2 == 0)
		{
			int			ns = MM_DENSITY_NEIGHBOURS + 1 + round % (MM_DENSITY_ARRIVALS - MM_DENSITY_NEIGHBOURS);

			for (int i = 0; i < ns; i++)
				sample[i] = spread == 1 ? pow(aq_uniform(&seed), 3) : aq_uniform(&seed);
			qsort(sample, ns, sizeof(double), test_cmp_double);
			a.cfg.recent = sample;
			a.cfg.nrecent = ns;
		}
		a.pool.tickets = ta;
		a.pool.ntickets = n;
		a.pool.groups = ga;
		a.pool.ngroups_cap = n;
		a.pool.stepped_at = -INFINITY;
		a.pool.criteria = ncrit > 0 ? a.crit : NULL;
		a.pool.ncrows = n;
		/* all due, about half of them, or only the oldest */
		now = t + (big || round % 3 == 0 ? 0.9 : round % 3 == 1 ? 0.3 : 0.01) * max_wait;
		if (round % 4 == 3)
			a.pool.horizon = now + 0.1 * max_wait;
		b = a;
		memcpy(tb, ta, sizeof(MMTicket) * n);
		b.pool.tickets = tb;
		b.pool.groups = gb;
		b.pool.criteria = ncrit > 0 ? b.crit : NULL;
		a.res = (MMResult) {ma, 0, mem_a, team_a, exp_a, 0, 0.0};
		b.res = (MMResult) {mb, 0, mem_b, team_b, exp_b, 0, 0.0};
		for (int s = 0; s < 3 && a.pool.ntickets > 0; s++)
		{
			int			wa = pair_step(&a, now, false, out_a);
			int			wb = pair_step(&b, now, true, out_b);

			if (wa != wb || memcmp(out_a, out_b, sizeof(double) * wa) != 0)
			{
				if (differ++ < 3)
					fprintf(stderr, "round %d step %d: the pass and the reference differ\n", round, s);
				break;
			}
			if (fixed && s == 0)
			{
				/* the status, then {4, 5}, {1, 7}, {2, 6}: computer players, ids and teams */
				static const double want[] = {0, 0, 4, 2, 5, 1, 0, 1, 1, 7, 2, 0, 2, 2, 6, 1};

				CHECK(wa >= 16 && memcmp(out_a, want, sizeof(want)) == 0);
			}
			matched += a.res.nmatches;
			if (big && s == 0)
				merged_deep = a.res.nmatches;
			now += 0.2 * max_wait;
		}
	}
	printf("     %d matches compared\n", matched);
	CHECK_INT(differ, 0);
	CHECK(matched > 10000);
	/* the big pool: nearly every ticket paired in its first step */
	CHECK(merged_deep > 900);
}

/*
 * Pairs rated on the rating alone, whole streams through the simulator:
 * passing over the pairs whose density-free bound puts them after the
 * instant looked for decides as computing every pair's instant does, on
 * ratings spread evenly, skewed, normal and on two peaks (where the
 * recent ratings' densities differ most), at rates from 0.3 to 100 a
 * second with max_wait 5 s, 35 s or 1 s, some players arriving together,
 * expiring or given computer players.  Each outcome is compared: match,
 * team, instant.
 */
void
test_auto_passed_over(void)
{
	enum
	{
		N = 3000
	};
	static const double regime[6][2] = {{1, 5}, {8, 5}, {30, 5}, {100, 5}, {0.3, 35}, {20, 1}};
	static MMArrival a[N];
	static MMOutcome o1[N],
				o2[N];
	uint64_t	seed = 41;
	int			differ = 0;

	for (int stream = 0; stream < 24; stream++)
	{
		MMConfig	cfg;
		MMSimSummary s1,
					s2;
		double		rate = regime[stream % 6][0];
		int			shape = stream / 6;
		double		t = 0.0;

		for (int i = 0; i < N; i++)
		{
			double		u = aq_uniform(&seed);
			double		r;

			if (aq_uniform(&seed) < 0.9)
				t += -log(1.0 - aq_uniform(&seed)) / rate;
			if (shape == 0)
				r = u;
			else if (shape == 1)
				r = u * u * u;
			else
			{
				/* about normal: the mean of three uniforms, on one peak or two */
				double		v = (u + aq_uniform(&seed) + aq_uniform(&seed)) / 3.0;

				r = shape == 2 ? v : (aq_uniform(&seed) < 0.5 ? 0.3 : 0.7) + (v - 0.5) / 4.0;
			}
			a[i].id = i + 1;
			a[i].rating = r < 0 ? 0 : r > 1 ? 1 : r;
			a[i].arrival = t;
		}
		mm_config_init(&cfg, MM_ALGO_AUTO);
		mm_config_set_max_wait(&cfg, regime[stream % 6][1]);
		cfg.on_timeout = stream % 2 ? MM_TIMEOUT_BOTS : MM_TIMEOUT_EXPIRE;
		CHECK_INT(mm_simulate(&cfg, a, NULL, N, o1, &s1), MM_OK);
		mm_auto_exact_pairs = true;
		CHECK_INT(mm_simulate(&cfg, a, NULL, N, o2, &s2), MM_OK);
		mm_auto_exact_pairs = false;
		for (int i = 0; i < N; i++)
			if (o1[i].match_no != o2[i].match_no || o1[i].team != o2[i].team ||
				o1[i].matched_at != o2[i].matched_at)
				differ++;
		CHECK(s1.cost == s2.cost);
	}
	CHECK_INT(differ, 0);
}

/*
 * mm_auto_bound_violations over the pool tk[0 .. n) with the recent
 * ratings sample[0 .. ns), sorted; adds the pairs compared to *checked.
 */
static int
bound_violations(MMTicket *tk, MMGroup *groups, int n, double *sample, int ns,
				 double rate, double max_wait, long *checked)
{
	MMConfig	cfg;
	MMPool		pool;
	int			pairs;
	int			bad;

	qsort(sample, ns, sizeof(double), test_cmp_double);
	mm_config_init(&cfg, MM_ALGO_AUTO);
	mm_config_set_max_wait(&cfg, max_wait);
	cfg.arrival_rate = rate;
	cfg.recent = sample;
	cfg.nrecent = ns;
	memset(&pool, 0, sizeof(pool));
	pool.tickets = tk;
	pool.ntickets = n;
	pool.groups = groups;
	pool.ngroups_cap = n;
	pool.stepped_at = -INFINITY;
	bad = mm_auto_bound_violations(&cfg, &pool, &pairs);
	*checked += pairs;
	return bad;
}

/*
 * The bounds pairs are pruned on never come after a pair's instant: on
 * pools of up to 300 tickets with recent ratings spread evenly, skewed,
 * normal, on two peaks or on a few values, rates from 0.1 to 1,000 a
 * second, every pair within reach compared.  Then where the densities
 * differ most: nearly all recent ratings in a narrow run (the density
 * bounded at 5) and the few others spread over [0, 1] (at 0.2), 100 to
 * 1,000 arrivals a second, max_wait 60, a few tickets that have waited up
 * to max_wait, at the sample's bottom, in the run or anywhere.  There the
 * weight of a left-behind ticket's age in the gap's bound (myopic_bound)
 * matters: a third of it puts the bound after the instants of about one
 * pool in five.
 */
void
test_auto_pair_bounds(void)
{
	enum
	{
		N = 300
	};
	static MMTicket tk[N];
	static MMGroup groups[N];
	static double sample[MM_DENSITY_ARRIVALS];
	uint64_t	seed = 97;
	long		checked = 0,
				contrast_checked = 0;
	int			bad = 0,
				contrast_bad = 0;

	for (int round = 0; round < 400; round++)
	{
		int			n = 2 + (int) (aq_uniform(&seed) * (round % 5 == 0 ? N - 2 : 20));
		int			ns = MM_DENSITY_NEIGHBOURS + 1 +
			(int) (aq_uniform(&seed) * (MM_DENSITY_ARRIVALS - MM_DENSITY_NEIGHBOURS));
		int			shape = round % 5;
		double		rate = pow(10.0, -1.0 + 4.0 * aq_uniform(&seed));
		double		max_wait = round % 3 == 0 ? 1.0 : round % 3 == 1 ? 5.0 : 60.0;
		double		t = 0.0;

		for (int i = 0; i < ns + n; i++)
		{
			double		u = aq_uniform(&seed);
			double		v = (u + aq_uniform(&seed) + aq_uniform(&seed)) / 3.0;
			double		r = shape == 0 ? u : shape == 1 ? u * u * u : shape == 2 ? v :
				shape == 3 ? (u < 0.5 ? 0.3 : 0.7) + (v - 0.5) / 4.0 : (int) (u * 7) / 6.0;

			r = r < 0 ? 0 : r > 1 ? 1 : r;
			if (i < ns)
			{
				sample[i] = r;
				continue;
			}
			if (aq_uniform(&seed) < 0.8)
				t += -log(1.0 - aq_uniform(&seed)) / rate;
			memset(&tk[i - ns], 0, sizeof(MMTicket));
			tk[i - ns].id = i - ns + 1;
			tk[i - ns].rating = r;
			tk[i - ns].arrival = t;
			tk[i - ns].group = tk[i - ns].party = tk[i - ns].attr = -1;
		}
		bad += bound_violations(tk, groups, n, sample, ns, rate, max_wait, &checked);
	}
	for (int round = 0; round < 400; round++)
	{
		int			n = 2 + (int) (aq_uniform(&seed) * 4);
		int			ns = MM_DENSITY_NEIGHBOURS + 1 +
			(int) (aq_uniform(&seed) * (MM_DENSITY_ARRIVALS - MM_DENSITY_NEIGHBOURS));
		double		low = 0.1 + 0.8 * aq_uniform(&seed);
		double		width = 0.03 + 0.07 * aq_uniform(&seed);
		double		in_run = 0.98 + 0.02 * aq_uniform(&seed);
		double		rate = pow(10.0, 2.0 + aq_uniform(&seed));

		for (int i = 0; i < ns; i++)
			sample[i] = aq_uniform(&seed) < in_run ?
				low + width * aq_uniform(&seed) : aq_uniform(&seed);
		qsort(sample, ns, sizeof(double), test_cmp_double);
		for (int i = 0; i < n; i++)
		{
			int			where = (int) (aq_uniform(&seed) * 4);
			double		r = where == 0 ? sample[0] + 0.01 * aq_uniform(&seed) :
				where == 1 ? sample[(int) (aq_uniform(&seed) * ns)] :
				where == 2 ? low + width * aq_uniform(&seed) : aq_uniform(&seed);

			memset(&tk[i], 0, sizeof(MMTicket));
			tk[i].id = i + 1;
			tk[i].rating = r > 1 ? 1 : r;
			tk[i].arrival = -60.0 * aq_uniform(&seed) * (aq_uniform(&seed) < 0.5 ? 1.0 : 0.1);
			tk[i].group = tk[i].party = tk[i].attr = -1;
		}
		contrast_bad += bound_violations(tk, groups, n, sample, ns, rate, 60.0, &contrast_checked);
	}
	printf("     %ld pairs compared, %ld where densities differ most\n", checked, contrast_checked);
	CHECK(checked > 100000);
	CHECK(contrast_checked > 1500);
	CHECK_INT(bad, 0);
	CHECK_INT(contrast_bad, 0);
}
