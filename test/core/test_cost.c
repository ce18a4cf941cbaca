/*
 * test_cost.c
 *		Unit tests of the cost model (Schlup eq. 1) and configuration checks.
 */
#include "mm_test.h"
#include "tests.h"
#include "../../src/core/mm_core.h"

/* The two examples of the foundation: a 1v1 game and a game with a bot. */
void
test_cost_examples(void)
{
	MMCost		c;
	double		r2[] = {0.2, 0.5};
	double		w2[] = {0.0, 3.0};
	double		r1[] = {0.2};
	double		w1[] = {5.0};

	CHECK_INT(mm_game_cost(2, 2, 1, r2, NULL, w2, 5.0, &c), MM_OK);
	CHECK_NEAR(c.criteria, 0.6, 1e-12);
	CHECK_NEAR(c.wait, 0.6, 1e-12);
	CHECK_NEAR(c.total, 1.2, 1e-12);

	CHECK_INT(mm_game_cost(2, 1, 1, r1, NULL, w1, 5.0, &c), MM_OK);
	CHECK_NEAR(c.criteria, 2.0, 1e-12);
	CHECK_NEAR(c.wait, 2.0, 1e-12);
	CHECK_NEAR(c.total, 4.0, 1e-12);
}

/* Several criteria: f_d = k / D by default, or explicit weights. */
void
test_cost_criteria(void)
{
	MMCost		c;
	/* three players, two criteria each */
	double		crit[] = {0.1, 0.9, 0.4, 0.8, 0.3, 0.5};
	double		waits[] = {1.0, 2.0, 3.0};
	double		weights[] = {1.0, 0.0};

	CHECK_INT(mm_game_cost(3, 3, 2, crit, NULL, waits, 10.0, &c), MM_OK);
	/* q_1 = 0.3, q_2 = 0.4, f = 3/2 */
	CHECK_NEAR(c.criteria, 1.5 * 0.3 + 1.5 * 0.4, 1e-12);
	CHECK_NEAR(c.wait, 0.6, 1e-12);

	CHECK_INT(mm_game_cost(3, 3, 2, crit, weights, waits, 10.0, &c), MM_OK);
	CHECK_NEAR(c.criteria, 0.3, 1e-12);
}

/* Out-of-domain arguments are refused. */
void
test_cost_invalid(void)
{
	MMCost		c;
	double		r[] = {0.2, 0.5};
	double		w[] = {0.0, 3.0};
	double		wneg[] = {0.0, -1.0};
	double		wnan[] = {0.0, NAN};

	CHECK_INT(mm_game_cost(1, 1, 1, r, NULL, w, 5.0, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_game_cost(2, 3, 1, r, NULL, w, 5.0, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_game_cost(2, 0, 1, r, NULL, w, 5.0, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_game_cost(2, 2, 1, r, NULL, w, 0.0, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_game_cost(2, 2, 1, r, NULL, wneg, 5.0, &c), MM_ERR_ARGUMENT);
	CHECK_INT(mm_game_cost(2, 2, 1, r, NULL, wnan, 5.0, &c), MM_ERR_ARGUMENT);
}

/* Algorithm names round-trip and configurations are checked. */
void
test_config(void)
{
	MMAlgorithm a;
	MMConfig	cfg;

	mm_config_init(&cfg, MM_ALGO_PERIODIC);
	mm_config_set_max_wait(&cfg, 5.0);
	cfg.periodic.batch = 8;
	cfg.difference_wait.wait_factor = 1.0;

	CHECK_INT(mm_algorithm_parse("multi_queue", &a), 0);
	CHECK_INT(a, MM_ALGO_MULTI_QUEUE);
	CHECK_INT(mm_algorithm_parse("fifo", &a), -1);
	CHECK(mm_algorithm_name((MMAlgorithm) 99) == NULL);

	CHECK_INT(mm_config_check(&cfg), MM_OK);
	cfg.periodic.batch = 7;				/* not a multiple of k = 2 */
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.periodic.batch = 8;
	cfg.teams = 1;				/* k = 1 */
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.teams = 2;
	cfg.max_wait = 0;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	/* below MM_MAX_WAIT_MIN a wait's cost overflows (a denormal max_wait) */
	cfg.max_wait = 4.9e-324;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.max_wait = 0.99e-9;
	CHECK_INT(mm_config_check(&cfg), MM_ERR_ARGUMENT);
	cfg.max_wait = MM_MAX_WAIT_MIN;
	CHECK_INT(mm_config_check(&cfg), MM_OK);
}
