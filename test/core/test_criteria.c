/*
 * test_criteria.c
 *		Several criteria (Schlup, eq. 1 with D > 1) for greedy and
 *		multi_queue: the cost of a match over every criterion, the grid of
 *		multi_queue with radius growth in rings, the generalised eq. 9, and
 *		the configurations the core refuses.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

#include <string.h>

#define CQ_MAX 16

/* A pool whose tickets carry one further criterion each. */
typedef struct CritQueue
{
	MMConfig	cfg;
	MMTicket	tickets[CQ_MAX];
	double		crit[CQ_MAX * MM_MAX_CRITERIA];
	MMPool		pool;
	MMMatch		matches[CQ_MAX];
	int			members[CQ_MAX];
	int			teams[CQ_MAX];
	int			expired[CQ_MAX];
	MMResult	res;
	char		desc[256];
} CritQueue;

static MMConfig
crit_cfg(MMAlgorithm algo, int k, double max_wait, MMTimeout on_timeout)
{
	MMConfig	cfg;

	mm_config_init(&cfg, algo);
	cfg.teams = k;
	cfg.team_size = 1;
	mm_config_set_max_wait(&cfg, max_wait);
	cfg.on_timeout = on_timeout;
	cfg.criteria.n = 1;
	return cfg;
}

static void
cq_init(CritQueue *q, const MMConfig *cfg)
{
	memset(q, 0, sizeof(*q));
	q->cfg = *cfg;
	q->pool.tickets = q->tickets;
	q->pool.criteria = q->crit;
	q->res.matches = q->matches;
	q->res.members = q->members;
	q->res.teams = q->teams;
	q->res.expired = q->expired;
}

/*
 * Enqueue ticket id (a letter) with its rating and second criterion.  The
 * criteria rows are never compacted: a ticket keeps its row.
 */
static void
cq_add(CritQueue *q, char id, double rating, double c1, double arrival)
{
	MMTicket   *t = &q->tickets[q->pool.ntickets++];
	int			row = q->pool.ncrows++;

	t->id = id;
	t->rating = rating;
	t->arrival = arrival;
	t->group = -1;
	t->party = -1;
	t->attr = -1;
	t->crow = row;
	q->crit[row] = c1;
}

/* Step at now and describe it: "{AB} {CD} xE", members in pool order. */
static const char *
cq_step(CritQueue *q, double now)
{
	char	   *p = q->desc;
	MMStatus	st = mm_step(&q->cfg, &q->pool, now, &q->res);

	if (st != MM_OK)
	{
		snprintf(q->desc, sizeof(q->desc), "error %d", (int) st);
		return q->desc;
	}
	*p = '\0';
	for (int j = 0; j < q->res.nmatches; j++)
	{
		const MMMatch *m = &q->res.matches[j];

		p += sprintf(p, "%s{", j > 0 ? " " : "");
		for (int i = 0; i < m->nmembers; i++)
			*p++ = (char) q->tickets[q->res.members[m->first + i]].id;
		p += sprintf(p, m->bots > 0 ? "+%d}" : "}", m->bots);
	}
	for (int j = 0; j < q->res.nexpired; j++)
		p += sprintf(p, "%sx%c", p > q->desc ? " " : "",
					 (char) q->tickets[q->res.expired[j]].id);
	mm_pool_compact(&q->pool, &q->res);
	return q->desc;
}

#define CHECK_DESC(a, b) \
	do { \
		const char *_a = (a); \
		if (strcmp(_a, (b)) != 0) { \
			fprintf(stderr, "%s:%d: check failed: %s = \"%s\", expected \"%s\"\n", \
					__FILE__, __LINE__, #a, _a, (b)); \
			mm_test_failed = 1; \
		} \
	} while (0)

/*
 * greedy ignores the criteria (Schlup 4.1) but its matches cost over all
 * of them: f_d = k / D by default, k * w_d / sum(w) with weights.
 */
void
test_criteria_cost(void)
{
	MMConfig	cfg = crit_cfg(MM_ALGO_GREEDY, 2, 10.0, MM_TIMEOUT_BOTS);
	CritQueue	q;

	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.2, 0.9, 0.0);
	CHECK_DESC(cq_step(&q, 0.0), "");
	cq_add(&q, 'B', 0.6, 0.1, 1.0);
	CHECK_DESC(cq_step(&q, 1.0), "{AB}");
	/* q = (0.4, 0.8), f = (1, 1); waits 1 and 0 of 10 */
	CHECK_NEAR(q.matches[0].cost.criteria, 0.4 + 0.8, 1e-12);
	CHECK_NEAR(q.matches[0].cost.wait, 0.1, 1e-12);
	CHECK_NEAR(q.matches[0].cost.total, 1.3, 1e-12);

	/* weights 3 : 1 give f = (1.5, 0.5) */
	cfg.criteria.weight[0] = 3;
	cfg.criteria.weight[1] = 1;
	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.2, 0.9, 0.0);
	cq_add(&q, 'B', 0.6, 0.1, 1.0);
	CHECK_DESC(cq_step(&q, 1.0), "{AB}");
	CHECK_NEAR(q.matches[0].cost.criteria, 1.5 * 0.4 + 0.5 * 0.8, 1e-12);

	/* a computer player makes every q_d = 1: f_0 + f_1 = k */
	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.5, 0.5, 0.0);
	CHECK_DESC(cq_step(&q, 10.0), "{A+1}");
	CHECK_NEAR(q.matches[0].cost.criteria, 2.0, 1e-12);
	CHECK_NEAR(q.matches[0].cost.wait, 2.0, 1e-12);

	/* three criteria, equal weights: f = 2/3 each */
	cfg = crit_cfg(MM_ALGO_GREEDY, 2, 10.0, MM_TIMEOUT_BOTS);
	cfg.criteria.n = 2;
	cq_init(&q, &cfg);
	q.pool.ncrows = 2;
	q.tickets[0] = (MMTicket) {1, 0.0, 0.0, -1, -1, -1, 0};
	q.tickets[1] = (MMTicket) {2, 0.3, 0.0, -1, -1, -1, 1};
	q.pool.ntickets = 2;
	q.crit[0] = 0.1;			/* row 0: criteria 1 and 2 */
	q.crit[1] = 1.0;
	q.crit[2] = 0.7;			/* row 1 */
	q.crit[3] = 0.5;
	CHECK_DESC(cq_step(&q, 0.0), "{\001\002}");
	CHECK_NEAR(q.matches[0].cost.criteria, 2.0 / 3.0 * (0.3 + 0.6 + 0.5), 1e-12);
}

/*
 * multi_queue over two criteria, three ranges each: a queue for every
 * cell; a timed-out ticket takes companions from the nearest ring of
 * cells first (every coordinate within 1, then 2 ...), oldest first
 * across a ring, not the oldest overall.
 */
void
test_criteria_multi_queue(void)
{
	MMConfig	cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 2, 10.0, MM_TIMEOUT_EXPIRE);
	CritQueue	q;

	cfg.multi_queue.ranges = 3;
	cq_init(&q, &cfg);
	cq_add(&q, 'X', 0.1, 0.1, 0.0);	/* cell (0, 0) */
	cq_add(&q, 'Y', 0.9, 0.1, 1.0);	/* (2, 0): ring 2 from X */
	cq_add(&q, 'Z', 0.5, 0.5, 2.0);	/* (1, 1): ring 1 */
	cq_add(&q, 'W', 0.1, 0.5, 3.0);	/* (0, 1): ring 1, newer than Z */
	/* W has X's rating range, but not its cell */
	CHECK_DESC(cq_step(&q, 3.0), "");
	CHECK_DESC(cq_step(&q, 9.999), "");
	CHECK_DESC(cq_step(&q, 10.0), "{XZ}");
	/* Y at 11: W (ring 2) is all that is left */
	CHECK_DESC(cq_step(&q, 11.0), "{YW}");

	/* the same stream on the rating alone: X and W share a range */
	cfg.criteria.n = 0;
	cq_init(&q, &cfg);
	cq_add(&q, 'X', 0.1, 0.1, 0.0);
	cq_add(&q, 'Y', 0.9, 0.1, 1.0);
	cq_add(&q, 'Z', 0.5, 0.5, 2.0);
	cq_add(&q, 'W', 0.1, 0.5, 3.0);
	CHECK_DESC(cq_step(&q, 3.0), "{XW}");

	/* a full cell matches at once; per-criterion ranges (3 x 2 cells) */
	cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 2, 10.0, MM_TIMEOUT_EXPIRE);
	cfg.multi_queue.ranges = 3;
	cfg.criteria.ranges[1] = 2;
	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.2, 0.2, 0.0);	/* (0, 0) */
	cq_add(&q, 'B', 0.25, 0.6, 1.0);	/* (0, 1) */
	cq_add(&q, 'C', 0.3, 0.4, 2.0);	/* (0, 0): with 3 ranges it would be (0, 1) */
	CHECK_DESC(cq_step(&q, 2.0), "{AC}");
	/* B times out alone: expire */
	CHECK_DESC(cq_step(&q, 11.0), "xB");

	/* k = 3, bots: the ring order decides who fills the game */
	cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 3, 10.0, MM_TIMEOUT_BOTS);
	cfg.multi_queue.ranges = 4;
	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.1, 0.1, 0.0);	/* (0, 0) */
	cq_add(&q, 'B', 0.9, 0.9, 1.0);	/* (3, 3): ring 3 */
	cq_add(&q, 'C', 0.6, 0.1, 2.0);	/* (2, 0): ring 2 */
	cq_add(&q, 'D', 0.1, 0.6, 3.0);	/* (0, 2): ring 2 */
	cq_add(&q, 'E', 0.3, 0.3, 4.0);	/* (1, 1): ring 1 */
	CHECK_DESC(cq_step(&q, 10.0), "{ACE}");
	/* B at 11: D is the only other; the game gets a computer player */
	CHECK_DESC(cq_step(&q, 11.0), "{BD+1}");
}

/*
 * multi_queue's ranges (1v1, bots) at 10^9 players a second for criteria
 * 0 .. n of weights w, criterion d > 0 fixed at fixed[d] ranges (0:
 * "auto", as the rating's); returns their product.
 */
static double
capped_ranges(int n, const double *w, const int *fixed, double max_wait, int *r)
{
	MMConfig	cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 2, max_wait, MM_TIMEOUT_BOTS);
	double		cells = 1;

	cfg.criteria.n = n;
	for (int d = 0; d <= n; d++)
	{
		cfg.criteria.weight[d] = w[d];
		if (d > 0)
			cfg.criteria.ranges[d] = fixed[d];
	}
	cfg.arrival_rate = 1e9;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	mm_criteria_ranges(&cfg, r);
	for (int d = 0; d <= n; d++)
		cells *= r[d];
	return cells;
}

/*
 * Eq. 9 generalised: r_d = lambda f_d, each floor or ceil by the
 * generalised eq. 7, and fixed criteria counted in.
 */
void
test_criteria_auto_ranges(void)
{
	MMConfig	cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 2, 5.0, MM_TIMEOUT_BOTS);
	int			r[MM_MAX_CRITERIA];

	cfg.arrival_rate = 10;
	/*
	 * f = (1, 1), lambda^3 = 2 a t / (k (k+1)) = 16.7, r = 2.55.  Costs
	 * 1/(3 r0) + 1/(3 r1) + r0 r1 / 50: (2,2) 0.413, (3,2) and (2,3)
	 * 0.398, (3,3) 0.402; (3,2) comes first.
	 */
	mm_criteria_ranges(&cfg, r);
	CHECK_INT(r[0], 3);
	CHECK_INT(r[1], 2);
	CHECK_INT(mm_auto_ranges(&cfg), 3);

	/* criterion 1 fixed at 4: lambda^2 = 100 / (6 * 4), r0 = 2.04 -> 2 */
	cfg.criteria.ranges[1] = 4;
	mm_criteria_ranges(&cfg, r);
	CHECK_INT(r[0], 2);
	CHECK_INT(r[1], 4);

	/* a criterion of weight 0 is not split */
	cfg.criteria.ranges[1] = 0;
	cfg.criteria.weight[0] = 1;
	cfg.criteria.weight[1] = 0;
	mm_criteria_ranges(&cfg, r);
	CHECK_INT(r[0], 6);			/* eq. 9 with f = k: as one criterion */
	CHECK_INT(r[1], 1);

	/* fixed ranges stay as they are */
	cfg.criteria.weight[1] = 1;
	cfg.multi_queue.ranges = 5;
	mm_criteria_ranges(&cfg, r);
	CHECK_INT(r[0], 5);
	CHECK_INT(r[1], 5);

	/* no arrival rate: one range for the free ones */
	cfg.multi_queue.ranges = 0;
	cfg.arrival_rate = 0;
	mm_criteria_ranges(&cfg, r);
	CHECK_INT(r[0], 1);
	CHECK_INT(r[1], 1);

	/* a huge rate stays within the cell cap */
	cfg.arrival_rate = 1e300;
	cfg.criteria.n = 3;
	mm_criteria_ranges(&cfg, r);
	{
		double		cells = 1;

		for (int d = 0; d < 4; d++)
		{
			CHECK(r[d] >= 1);
			cells *= r[d];
		}
		CHECK(cells <= MM_MAX_CELLS);
		CHECK(cells > MM_MAX_CELLS / 2);
	}

	/*
	 * A criterion of a tiny weight still gets 1 range, not lambda f_d, so
	 * the others' product must still keep to the cap, shared evenly among
	 * those of equal weight: without it 1e9^3 and 6687403^2 cells (a
	 * product that overflowed a step's 64-bit count).
	 */
	{
		static const double w[2][4] = {{1e6, 1e6, 1e6, 1e-300}, {1, 1, 1e-20, 0}};
		static const int n[2] = {3, 2};
		static const double rate[2] = {1e9, 1e6};

		for (int c = 0; c < 2; c++)
		{
			double		cells = 1;

			cfg = crit_cfg(MM_ALGO_MULTI_QUEUE, 2, 60.0, MM_TIMEOUT_BOTS);
			cfg.criteria.n = n[c];
			for (int d = 0; d <= n[c]; d++)
				cfg.criteria.weight[d] = w[c][d];
			cfg.arrival_rate = rate[c];
			CHECK_INT(mm_config_check(&cfg), MM_OK);
			mm_criteria_ranges(&cfg, r);
			for (int d = 0; d <= n[c]; d++)
				cells *= r[d];
			CHECK(cells <= MM_MAX_CELLS);
			CHECK(cells > MM_MAX_CELLS / 2);
			CHECK_INT(r[n[c]], 1);
			CHECK(r[0] == r[1] || r[0] == r[1] + 1 || r[1] == r[0] + 1);
		}
	}

	/*
	 * Fixed ranges that leave little room: 1e9 and 37 beside six free
	 * criteria, one of a tiny weight, at 10^9 players a second.  The five
	 * others, scaled evenly to the room of 27 the fixed ones leave, all
	 * fell to 1 (3.7 % of the cap); the room the floors left goes to them
	 * a range at a time, in criterion order among equal weights.
	 */
	{
		static const double w[8] = {1, 1, 1, 1, 1, 1, 1, 1e-300};
		static const int fixed[8] = {0, 1000000000, 37};
		double		cells = capped_ranges(7, w, fixed, 60.0, r);

		CHECK_INT(r[1], 1000000000);
		CHECK_INT(r[2], 37);
		CHECK(cells <= MM_MAX_CELLS);
		CHECK(cells > MM_MAX_CELLS / 2);
		/* 1e9 * 37 * 3 * 2 * 2 * 2 = 8.88e11; one more range anywhere passes the cap */
		CHECK_INT(r[0], 3);
		CHECK_INT(r[3], 2);
		CHECK_INT(r[4], 2);
		CHECK_INT(r[5], 2);
		CHECK_INT(r[6], 1);
		CHECK_INT(r[7], 1);
	}

	/*
	 * The room left when a range that wanted 150 fell to 1 and another is
	 * large: equal shares raise only the large one, which takes it all
	 * (a range at a time, 64 rounds left 44 % of the cap unused here).
	 */
	{
		static const double w[5] = {2.4074643680410287e-20, 1e-300, 0.81806197711316275,
		51165.440187785956, 1e6};
		static const int fixed[5] = {0, 308516, 0, 0, 16};
		double		cells = capped_ranges(4, w, fixed, 0.0090958821894485484, r);

		CHECK(cells <= MM_MAX_CELLS);
		CHECK(cells > 0.99 * MM_MAX_CELLS);
		CHECK_INT(r[3], 202582);	/* 308516 * 16 * 202583 passes 10^12 */
		CHECK_INT(r[2], 1);
	}
}

/* What the core refuses. */
void
test_criteria_config(void)
{
	MMConfig	cfg = crit_cfg(MM_ALGO_GREEDY, 2, 10.0, MM_TIMEOUT_BOTS);
	MMConfig	bad;
	CritQueue	q;

	CHECK_INT(mm_config_check(&cfg), MM_OK);
	cfg.algorithm = MM_ALGO_MULTI_QUEUE;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
	/* only greedy, multi_queue and auto take criteria */
	for (int a = MM_ALGO_PERIODIC; a < MM_ALGO_AUTO; a++)
	{
		if (a == MM_ALGO_MULTI_QUEUE)
			continue;
		bad = cfg;
		bad.algorithm = (MMAlgorithm) a;
		CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	}
	bad = cfg;
	bad.criteria.n = MM_MAX_CRITERIA;
	CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	bad = cfg;
	bad.criteria.weight[1] = -1;
	CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	bad = cfg;
	bad.criteria.weight[0] = NAN;
	CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	bad = cfg;
	bad.criteria.ranges[1] = -2;
	CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	/* 10^7 x 10^6 cells is beyond the cap */
	bad = cfg;
	bad.multi_queue.ranges = 10000000;
	bad.criteria.ranges[1] = 1000000;
	CHECK_INT(mm_config_check(&bad), MM_ERR_ARGUMENT);
	bad.criteria.ranges[1] = 100000;
	CHECK_INT(mm_config_check(&bad), MM_OK);

	/* a ticket without a valid row, or a value outside [0, 1] */
	cq_init(&q, &cfg);
	cq_add(&q, 'A', 0.5, 0.5, 0.0);
	q.tickets[0].crow = 1;
	CHECK_DESC(cq_step(&q, 0.0), "error 1");
	q.tickets[0].crow = 0;
	q.crit[0] = 1.5;
	CHECK_DESC(cq_step(&q, 0.0), "error 1");
	q.crit[0] = 0.5;
	q.pool.criteria = NULL;
	CHECK_DESC(cq_step(&q, 0.0), "error 1");
}
