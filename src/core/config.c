/*
 * config.c
 *		A queue's configuration: the algorithms' names, every default
 *		(mm_config_init) and the check of the fields every algorithm shares
 *		(window, cluster and optimize check their own in their files).
 */
#include "mm_internal.h"

#include <math.h>
#include <string.h>

static const char *const algorithm_names[] = {
	[MM_ALGO_GREEDY] = "greedy",
	[MM_ALGO_PERIODIC] = "periodic",
	[MM_ALGO_MULTI_QUEUE] = "multi_queue",
	[MM_ALGO_DIFFERENCE_WAIT] = "difference_wait",
	[MM_ALGO_WINDOW] = "window",
	[MM_ALGO_CLUSTER] = "cluster",
	[MM_ALGO_OPTIMIZE] = "optimize",
	[MM_ALGO_AUTO] = "auto",
};

#define NUM_ALGORITHMS ((int) (sizeof(algorithm_names) / sizeof(algorithm_names[0])))

/* The SQL spelling of an algorithm. */
const char *
mm_algorithm_name(MMAlgorithm algo)
{
	if ((int) algo < 0 || (int) algo >= NUM_ALGORITHMS)
		return NULL;
	return algorithm_names[algo];
}

/* Look an algorithm up by its SQL spelling. */
int
mm_algorithm_parse(const char *name, MMAlgorithm *out)
{
	for (int i = 0; i < NUM_ALGORITHMS; i++)
	{
		if (strcmp(name, algorithm_names[i]) == 0)
		{
			*out = (MMAlgorithm) i;
			return 0;
		}
	}
	return -1;
}

/*
 * Every default of a configuration.  The SQL API starts from these and
 * overwrites what a queue's params set.
 */
void
mm_config_init(MMConfig *cfg, MMAlgorithm algorithm)
{
	memset(cfg, 0, sizeof(MMConfig));
	cfg->algorithm = algorithm;
	cfg->teams = 2;
	cfg->team_size = 1;
	cfg->on_timeout = MM_TIMEOUT_BOTS;
	cfg->arrival_rate = 0;		/* measured by the caller when auto needs it */
	cfg->rate_last = NAN;
	cfg->rate_gaps = 0;
	cfg->recheck = 1;

	/* criteria: only the rating, every weight 1 (f_d = k / D) */
	cfg->criteria.n = 0;
	for (int d = 0; d < MM_MAX_CRITERIA; d++)
	{
		cfg->criteria.weight[d] = 1;
		cfg->criteria.ranges[d] = 0;	/* follow multi_queue.ranges */
	}

	cfg->greedy.team_policy = MM_TEAMS_GREEDY;
	cfg->periodic.batch = 0;	/* auto */
	cfg->multi_queue.ranges = 0;	/* auto */

	/* window: +-5 % on arrival, at most +-50 %; widen is auto (set by the caller) */
	cfg->window.width = 0.05;
	cfg->window.widen = 0;
	cfg->window.max = 0.5;
	cfg->window.percentile = 0;
	cfg->window.rematch_penalty = INFINITY;	/* a recent rematch is banned ... */
	cfg->window.rematch_last = 0;	/* ... but no past match is read */

	/* cluster: threshold as window's width; shift the mean wait */
	cfg->cluster.threshold = 0.05;
	cfg->cluster.shift = 0;
	cfg->cluster.shift_auto = 1;

	/* optimize */
	cfg->optimize.weights.balance = 1;
	cfg->optimize.weights.spread = 1;
	cfg->optimize.weights.premades = 0.5;
	cfg->optimize.weights.ping = 1;
	cfg->optimize.weights.variation = 0.2;
	cfg->optimize.weights.hosts = 0;
	cfg->optimize.skill_lo = 0;
	cfg->optimize.skill_hi = 1;
	cfg->optimize.ping_max = 300;
	cfg->optimize.host_ping = 150;
	cfg->optimize.restarts = 4;
	cfg->optimize.budget_ms = 200;
	cfg->optimize.round_max = MM_OPTIMIZE_ROUND_MAX;
	cfg->optimize.seed = 1;

	mm_config_set_max_wait(cfg, MM_DEFAULT_MAX_WAIT);
}

/* max_wait, and the defaults derived from it. */
void
mm_config_set_max_wait(MMConfig *cfg, double max_wait)
{
	cfg->max_wait = max_wait;
	cfg->difference_wait.wait_factor = max_wait;
	cfg->cluster.midpoint = max_wait / 2;
	cfg->cluster.steepness = fmin(10.0 / max_wait, 1000.0);
	/* optimize: four rounds within max_wait */
	if (cfg->algorithm == MM_ALGO_OPTIMIZE)
		cfg->recheck = fmin(fmax(max_wait / 4, 0.001), 86400);
}

/*
 * Check the shared fields, and those every configuration keeps in their
 * domain whatever its algorithm (the criteria, periodic's batch,
 * multi_queue's ranges, difference_wait's wait_factor and greedy's team
 * policy).  mm_config_check adds the algorithm's own check.
 */
MMStatus
mm_config_check_shared(const MMConfig *cfg)
{
	if (cfg == NULL || mm_algorithm_name(cfg->algorithm) == NULL)
		return MM_ERR_ARGUMENT;
	if (cfg->teams < 1 || cfg->team_size < 1)
		return MM_ERR_ARGUMENT;
	if ((int64_t) cfg->teams * cfg->team_size < 2 ||
		(int64_t) cfg->teams * cfg->team_size > 1000)
		return MM_ERR_ARGUMENT;
	if (!(cfg->max_wait >= MM_MAX_WAIT_MIN) || !isfinite(cfg->max_wait))
		return MM_ERR_ARGUMENT;
	if (cfg->on_timeout != MM_TIMEOUT_BOTS && cfg->on_timeout != MM_TIMEOUT_EXPIRE)
		return MM_ERR_ARGUMENT;
	if (cfg->nrecent < 0 || cfg->nrecent > MM_DENSITY_ARRIVALS ||
		(cfg->nrecent > 0 && cfg->recent == NULL))
		return MM_ERR_ARGUMENT;
	/* normalised ratings, ascending: auto's density searches them by rank */
	for (int i = 0; i < cfg->nrecent; i++)
		if (!(cfg->recent[i] >= 0.0 && cfg->recent[i] <= 1.0) ||
			(i > 0 && !(cfg->recent[i - 1] <= cfg->recent[i])))
			return MM_ERR_ARGUMENT;
	if (cfg->periodic.batch < 0 || (cfg->periodic.batch > 0 && cfg->periodic.batch % mm_config_k(cfg) != 0))
		return MM_ERR_ARGUMENT;
	if (cfg->multi_queue.ranges < 0)
		return MM_ERR_ARGUMENT;
	if (cfg->min_players != 0 &&
		(cfg->min_players < 2 || cfg->min_players > mm_config_k(cfg)))
		return MM_ERR_ARGUMENT;
	if (!(cfg->difference_wait.wait_factor >= 0) || !isfinite(cfg->difference_wait.wait_factor))
		return MM_ERR_ARGUMENT;
	if (!(cfg->arrival_rate >= 0 && cfg->arrival_rate <= MM_RATE_MAX) || cfg->rate_gaps < 0)
		return MM_ERR_ARGUMENT;
	if (cfg->greedy.team_policy != MM_TEAMS_GREEDY &&
		(cfg->greedy.team_policy != MM_TEAMS_PATIENT || cfg->algorithm != MM_ALGO_GREEDY ||
		 cfg->teams < 2 || cfg->team_size < 2 ||
		 (int64_t) cfg->teams * cfg->team_size > MM_PATIENT_MAX_K))
		return MM_ERR_ARGUMENT;
	if (cfg->criteria.n < 0 || cfg->criteria.n >= MM_MAX_CRITERIA ||
		(cfg->criteria.n > 0 && cfg->algorithm != MM_ALGO_GREEDY &&
		 cfg->algorithm != MM_ALGO_MULTI_QUEUE && cfg->algorithm != MM_ALGO_AUTO))
		return MM_ERR_ARGUMENT;
	for (int d = 0; d <= cfg->criteria.n; d++)
		if (!(cfg->criteria.weight[d] >= 0 && cfg->criteria.weight[d] <= 1e6) ||
			(d > 0 && (cfg->criteria.ranges[d] < 0 || cfg->criteria.ranges[d] > 1000000000)))
			return MM_ERR_ARGUMENT;
	/* the cells a multi_queue step numbers must fit its counters */
	if (mm_criteria_cells(cfg) > MM_MAX_CELLS)
		return MM_ERR_ARGUMENT;
	/* roles: places of every role, as many as a team's; optimize splits its own teams */
	if (cfg->roles.n < 0 || cfg->roles.n > MM_MAX_ROLES ||
		(cfg->roles.n > 0 && cfg->algorithm == MM_ALGO_OPTIMIZE))
		return MM_ERR_ARGUMENT;
	if (cfg->roles.n > 0)
	{
		int			places = 0;

		for (int r = 0; r < cfg->roles.n; r++)
		{
			if (cfg->roles.slots[r] < 1 || cfg->roles.slots[r] > cfg->team_size)
				return MM_ERR_ARGUMENT;
			places += cfg->roles.slots[r];
		}
		if (places != cfg->team_size)
			return MM_ERR_ARGUMENT;
	}
	return MM_OK;
}

/* The product of the fixed ranges of every criterion ("auto" counting 1). */
double
mm_criteria_cells(const MMConfig *cfg)
{
	double		cells = cfg->multi_queue.ranges > 0 ? cfg->multi_queue.ranges : 1;

	for (int d = 1; d <= cfg->criteria.n; d++)
	{
		int			r = cfg->criteria.ranges[d] > 0 ? cfg->criteria.ranges[d] : cfg->multi_queue.ranges;

		cells *= r > 0 ? r : 1;
	}
	return cells;
}
