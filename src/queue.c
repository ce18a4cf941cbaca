/*
 * queue.c
 *		Queues: create_queue, alter_queue, drop_queue, the validation of
 *		their settings and params, and loading a queue for matching.
 */
#include "matchmaker.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(mm_create_queue);
PG_FUNCTION_INFO_V1(mm_alter_queue);
PG_FUNCTION_INFO_V1(mm_drop_queue);

/* Largest match: the team split and the tick's arrays are sized for it. */
#define MM_MAX_PLAYERS	1000

/* Bounds of the intervals, in seconds. */
#define MM_MAX_MAX_WAIT	(365.0 * SECS_PER_DAY)
#define MM_MIN_TICK		0.001
#define MM_MAX_TICK		((double) SECS_PER_DAY)

/* The settings of a queue, as create_queue and alter_queue take them. */
typedef struct QueueSettings
{
	char	   *name;
	int32		team_size;
	int32		teams;
	char	   *algorithm;
	Interval   *max_wait;
	double		rating_min;
	double		rating_max;
	Interval   *tick;
	Jsonb	   *params;
} QueueSettings;

/* Seconds in an interval, counting a month as 30 days like extract(epoch). */
double
mm_interval_seconds(const Interval *iv)
{
	return (double) iv->time / USECS_PER_SEC +
		(double) iv->day * SECS_PER_DAY +
		(double) iv->month * DAYS_PER_MONTH * SECS_PER_DAY;
}

/* An interval as text, for messages. */
static char *
interval_text(Interval *iv)
{
	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(iv)));
}

/* A JSON value as text, for messages. */
static const char *
jsonb_value_text(JsonbValue *v)
{
	Jsonb	   *jb = JsonbValueToJsonb(v);

	return mm_shorten(JsonbToCString(NULL, &jb->root, VARSIZE(jb)));
}

/*
 * A JSON number as a double: one beyond float8's range is +/-Infinity (or
 * 0 when too small), so that range checks refuse it with the key's own
 * message rather than a conversion error.
 */
static double
param_double(JsonbValue *v)
{
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
											  NumericGetDatum(v->val.numeric)));
}

/* Which algorithm a params key applies to, as its SQL name; NULL for all. */
static const char *
param_owner(int key)
{
	switch (key)
	{
		case MM_PARAM_BATCH:
			return "periodic";
		case MM_PARAM_RANGES:
			return "multi_queue";
		case MM_PARAM_WAIT_FACTOR:
			return "difference_wait";
		case MM_PARAM_TEAM_POLICY:
			return "greedy";
		case MM_PARAM_WINDOW:
		case MM_PARAM_WIDEN:
		case MM_PARAM_MAX_WINDOW:
		case MM_PARAM_PERCENTILE:
		case MM_PARAM_REMATCH_LAST:
		case MM_PARAM_REMATCH_PENALTY:
			return "window";
		case MM_PARAM_MIDPOINT:
		case MM_PARAM_STEEPNESS:
		case MM_PARAM_THRESHOLD:
		case MM_PARAM_SHIFT:
			return "cluster";
		case MM_PARAM_ROUND:
		case MM_PARAM_WEIGHTS:
		case MM_PARAM_SKILL_CAP:
		case MM_PARAM_PING_MAX:
		case MM_PARAM_HOST_PING:
		case MM_PARAM_RESTARTS:
		case MM_PARAM_BUDGET_MS:
		case MM_PARAM_SEED:
			return "optimize";
		default:
			return NULL;
	}
}

/* What a params key means, for hints. */
static const char *
param_hint(const char *key)
{
	if (strcmp(key, "batch") == 0)
		return "batch is how many players a period of the periodic algorithm collects before it matches them, for example 8.";
	if (strcmp(key, "ranges") == 0)
		return "ranges is how many rating ranges the multi_queue algorithm keeps, for example 6.";
	if (strcmp(key, "criteria") == 0)
		return "criteria is an object of numeric attributes matched on besides the rating, each with its range and optionally a weight and (multi_queue) ranges, for example {\"latency\": {\"min\": 0, \"max\": 300}}; the key \"rating\" takes the rating's weight.";
	if (strcmp(key, "wait_factor") == 0)
		return "wait_factor is how many seconds a provisional group with rating spread 1 waits before it becomes final, for example 10.";
	if (strcmp(key, "window") == 0)
		return "window is the half-width a ticket of the window algorithm accepts on arrival, as a fraction of the rating range (or of the rating ranks with percentile), for example 0.05.";
	if (strcmp(key, "widen") == 0)
		return "widen is how much a window grows per second of wait, as a fraction of the rating range, or \"auto\" to reach max_window at max_wait.";
	if (strcmp(key, "max_window") == 0)
		return "max_window caps the window, as a fraction of the rating range, for example 0.5; it must not be below window.";
	if (strcmp(key, "recheck") == 0)
		return "recheck is how many seconds apart the windows widen (window) or the waits count (cluster), for example 1.";
	if (strcmp(key, "rematch_last") == 0)
		return "rematch_last is how many of each player's last matches (within the queue's last 10 * max_wait, at most an hour unless max_wait is longer) count for rematch avoidance, 0 for none.";
	if (strcmp(key, "rematch_penalty") == 0)
		return "rematch_penalty is how much farther apart, as a fraction of the rating range, two players who met in those matches count, or \"ban\" to never pair them again.";
	if (strcmp(key, "midpoint") == 0)
		return "midpoint is the wait in seconds at which the cluster algorithm has squashed ratings halfway toward the mean.";
	if (strcmp(key, "steepness") == 0)
		return "steepness is how sharply the squash sets in around the midpoint, per second, for example 10 / max_wait.";
	if (strcmp(key, "threshold") == 0)
		return "threshold is the largest distance from a cluster's centroid at which a ticket joins it, as a fraction of the rating range, for example 0.05.";
	if (strcmp(key, "shift") == 0)
		return "shift is how many seconds a newcomer counts as having waited, or \"auto\" for the queue's recent average wait before a match.";
	if (strcmp(key, "round") == 0)
		return "round is how many seconds apart the optimize algorithm holds its rounds (at the multiples of it on the clock), for example 60.";
	if (strcmp(key, "weights") == 0)
		return "weights is an object of the match score's factors and their weights (numbers from 0 to 1e6, not all 0): balance, spread, premades, ping, variation, hosts.";
	if (strcmp(key, "skill_cap") == 0)
		return "skill_cap is [low, high], fractions of the rating range (0 <= low < high <= 1) to which ratings are capped before the skill factors.";
	if (strcmp(key, "ping_max") == 0)
		return "ping_max is the ping in milliseconds at or above which a pair of opponents scores 0, for example 300.";
	if (strcmp(key, "host_ping") == 0)
		return "host_ping is the largest ping in milliseconds from a player to every other member for it to host the match, for example 150.";
	if (strcmp(key, "restarts") == 0)
		return "restarts is how many times a round starts its search again from a shuffled match-up, for example 4.";
	if (strcmp(key, "budget_ms") == 0)
		return "budget_ms is how many milliseconds a round may spend on restarts, for example 200.";
	if (strcmp(key, "seed") == 0)
		return "seed makes the restarts' shuffles reproducible: a whole number from 0 to 2147483647.";
	if (strcmp(key, "percentile") == 0)
		return "percentile true measures windows in rating ranks among the waiting tickets rather than in ratings.";
	if (strcmp(key, "team_policy") == 0)
		return "\"greedy\" plays the k oldest players at once; \"patient\" waits for one more player when they cannot be split into balanced teams.";
	return "\"bots\" completes a timed-out player's game with computer players; \"expire\" ends the ticket as expired.";
}

/* A JSON number that is a whole number in [lo, hi], or raise an error. */
static int
param_int(JsonbValue *v, const char *key, int lo, int hi, const char *expect)
{
	double		d;

	if (v->type == jbvNumeric)
	{
		d = param_double(v);
		/* whole as written, not only after rounding to a double */
		if (d == floor(d) && d >= lo && d <= hi &&
			DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(v->val.numeric),
											  DirectFunctionCall1(int4_numeric, Int32GetDatum((int) d)))) == 0)
			return (int) d;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("params key \"%s\" must be %s", key, expect),
			 errdetail("Got %s.", jsonb_value_text(v)),
			 errhint("%s", param_hint(key))));
	return 0;					/* keep the compiler quiet */
}

/* A JSON number in [lo, hi], or raise an error. */
static double
param_number(JsonbValue *v, const char *key, double lo, double hi, const char *expect)
{
	double		d = NAN;

	if (v->type == jbvNumeric)
		d = param_double(v);
	if (!(d >= lo && d <= hi))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"%s\" must be %s", key, expect),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", param_hint(key))));
	return d;
}

/* Whether a JSON value is the string s. */
static bool
param_is_string(JsonbValue *v, const char *s)
{
	return v->type == jbvString &&
		v->val.string.len == (int) strlen(s) &&
		memcmp(v->val.string.val, s, v->val.string.len) == 0;
}

/* optimize's weights: an object of factor names and numbers, not all 0. */
static void
parse_weights(JsonbValue *v, MMConfig *cfg)
{
	static const char *const names[] = {"balance", "spread", "premades", "ping", "variation", "hosts"};
	double	   *slots[6];
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;

	slots[0] = &cfg->optimize.weights.balance;
	slots[1] = &cfg->optimize.weights.spread;
	slots[2] = &cfg->optimize.weights.premades;
	slots[3] = &cfg->optimize.weights.ping;
	slots[4] = &cfg->optimize.weights.variation;
	slots[5] = &cfg->optimize.weights.hosts;
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"weights\" must be a JSON object"),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", param_hint("weights"))));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		int			i;
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		for (i = 0; i < 6 && strcmp(name, names[i]) != 0; i++)
			;
		if (i == 6)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown factor \"%s\" in params key \"weights\"", mm_shorten(name)),
					 errhint("%s", param_hint("weights"))));
		tok = JsonbIteratorNext(&it, &val, true);
		*slots[i] = param_number(&val, "weights", 0, 1e6, "an object of numbers from 0 to 1e6");
	}
	if (cfg->optimize.weights.balance + cfg->optimize.weights.spread +
		cfg->optimize.weights.premades + cfg->optimize.weights.ping +
		cfg->optimize.weights.variation + cfg->optimize.weights.hosts <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"weights\" must not make every weight 0"),
				 errhint("%s", param_hint("weights"))));
}

/* optimize's skill_cap: [low, high] with 0 <= low < high <= 1. */
static void
parse_skill_cap(JsonbValue *v, MMConfig *cfg)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	double		b[2];
	int			n = 0;
	bool		ok = v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data) &&
		!JsonContainerIsScalar(v->val.binary.data);

	if (ok)
	{
		it = JsonbIteratorInit(v->val.binary.data);
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
		{
			if (tok != WJB_ELEM)
				continue;
			if (n >= 2 || e.type != jbvNumeric)
			{
				ok = false;
				break;
			}
			b[n++] = param_double(&e);
		}
	}
	if (!ok || n != 2 || !(b[0] >= 0 && b[0] < b[1] && b[1] <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"skill_cap\" must be [low, high] with 0 <= low < high <= 1"),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", param_hint("skill_cap"))));
	cfg->optimize.skill_lo = b[0];
	cfg->optimize.skill_hi = b[1];
}

/* A number of a criterion's settings in [lo, hi] (whole with whole), or raise an error. */
static double
criterion_number(JsonbValue *v, const char *name, const char *field, double lo, double hi,
				 bool whole)
{
	double		d = NAN;

	if (v->type == jbvNumeric)
		d = param_double(v);
	if (!(d >= lo && d <= hi) || (whole && d != floor(d)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" of criterion \"%s\" must be a %s from %s to %s",
						field, mm_shorten(name), whole ? "whole number" : "number",
						mm_float_text(lo), mm_float_text(hi)),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", param_hint("criteria"))));
	return d;
}

/*
 * One criterion's settings, val: an object {"min": lo, "max": hi,
 * "weight": w, "ranges": r} for criterion d named name, with min and max
 * required; the rating (is_rating, d 0) takes only a weight.
 */
static void
parse_criterion(JsonbValue *val, const char *name, bool is_rating, int d,
				MMConfig *cfg, MMCriteria *crit)
{
	bool		has_min = false;
	bool		has_max = false;
	JsonbIterator *eit;
	JsonbValue	ek;
	JsonbValue	ev;
	JsonbIteratorToken etok;

	if (val->type != jbvBinary || !JsonContainerIsObject(val->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("criterion \"%s\" must be a JSON object", mm_shorten(name)),
				 errdetail("Got %s.", jsonb_value_text(val)),
				 errhint("%s", param_hint("criteria"))));
	eit = JsonbIteratorInit(val->val.binary.data);
	while ((etok = JsonbIteratorNext(&eit, &ek, true)) != WJB_DONE)
	{
		char	   *key;

		if (etok != WJB_KEY)
			continue;
		key = pnstrdup(ek.val.string.val, ek.val.string.len);
		etok = JsonbIteratorNext(&eit, &ev, true);
		if (strcmp(key, "weight") == 0)
			cfg->criteria.weight[d] = criterion_number(&ev, name, key, 0, 1e6, false);
		else if (!is_rating && strcmp(key, "min") == 0)
		{
			crit->lo[d] = criterion_number(&ev, name, key, -1e15, 1e15, false);
			has_min = true;
		}
		else if (!is_rating && strcmp(key, "max") == 0)
		{
			crit->hi[d] = criterion_number(&ev, name, key, -1e15, 1e15, false);
			has_max = true;
		}
		else if (!is_rating && strcmp(key, "ranges") == 0 &&
				 cfg->algorithm == MM_ALGO_MULTI_QUEUE)
			cfg->criteria.ranges[d] = (int) criterion_number(&ev, name, key, 1, 10000, true);
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("key \"%s\" does not apply to criterion \"%s\" of algorithm \"%s\"",
							mm_shorten(key), mm_shorten(name), mm_algorithm_name(cfg->algorithm)),
					 errhint(is_rating ? "The rating's range is the queue's rating_min and rating_max, its ranges the params key \"ranges\"; it takes only a weight." :
							 cfg->algorithm == MM_ALGO_MULTI_QUEUE ?
							 "A criterion takes min and max (both required), weight and ranges." :
							 "A criterion takes min and max (both required) and weight; ranges is for multi_queue.")));
	}
	if (!is_rating && (!has_min || !has_max || !(crit->lo[d] < crit->hi[d])))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("criterion \"%s\" needs a min below its max", mm_shorten(name)),
				 errhint("Give the lowest and highest value the attribute takes, for example {\"min\": 0, \"max\": 300}.")));
}

/*
 * params.criteria (greedy, multi_queue): an object of attributes keys,
 * each with its settings (see parse_criterion); the key "rating" takes
 * only the rating's weight.
 */
static void
parse_criteria(JsonbValue *v, MMConfig *cfg, MMCriteria *crit)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;
	double		wsum;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"criteria\" must be a JSON object"),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", param_hint("criteria"))));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;
		bool		is_rating;
		int			d = 0;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		is_rating = strcmp(name, "rating") == 0;
		if (k.val.string.len < 1 || k.val.string.len > 64)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("criterion names must be attributes keys of 1 to 64 bytes"),
					 errdetail("Got \"%s\".", mm_shorten(name)),
					 errhint("%s", param_hint("criteria"))));
		if (!is_rating)
		{
			if (cfg->criteria.n >= MM_MAX_CRITERIA - 1)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("params key \"criteria\" can name at most %d attributes", MM_MAX_CRITERIA - 1),
						 errhint("Match on the %d attributes that matter most.", MM_MAX_CRITERIA - 1)));
			d = ++cfg->criteria.n;
			crit->attribute[d] = name;
		}
		tok = JsonbIteratorNext(&it, &val, true);
		parse_criterion(&val, name, is_rating, d, cfg, crit);
	}
	wsum = 0;
	for (int d = 0; d <= cfg->criteria.n; d++)
		wsum += cfg->criteria.weight[d];
	if (wsum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"criteria\" must not make every weight 0"),
				 errhint("Leave a weight out for the default, 1.")));
}

/*
 * Validate params against cfg's algorithm and k and store them in cfg.
 * Unknown keys, keys of another algorithm and ill-typed values are errors.
 * Absent keys keep the core's defaults (mm_config_init and
 * mm_config_set_max_wait for cfg's max_wait): batch and ranges "auto",
 * on_timeout "bots", wait_factor the queue's max_wait in seconds.
 */
void
mm_parse_params(Jsonb *params, MMConfig *cfg, MMCriteria *criteria,
				bool *wait_factor_set)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	const char *algo = mm_algorithm_name(cfg->algorithm);
	int			k = mm_config_k(cfg);
	bool		widen_auto = true;
	MMConfig	shape;

	/* the core's defaults, keeping the algorithm, shape and max_wait set before */
	shape = *cfg;
	mm_config_init(cfg, shape.algorithm);
	cfg->teams = shape.teams;
	cfg->team_size = shape.team_size;
	cfg->arrival_rate = shape.arrival_rate;
	mm_config_set_max_wait(cfg, shape.max_wait);
	memset(criteria, 0, sizeof(MMCriteria));
	*wait_factor_set = false;

	if (!JB_ROOT_IS_OBJECT(params) || JB_ROOT_IS_SCALAR(params))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params must be a JSON object"),
				 errdetail("Got %s.", mm_shorten(JsonbToCString(NULL, &params->root, VARSIZE(params)))),
				 errhint("Pass for example '{\"on_timeout\": \"expire\"}', or '{}' for the defaults.")));

	it = JsonbIteratorInit(&params->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		int			keybit;
		const char *owner;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		if (strcmp(key, "batch") == 0)
			keybit = MM_PARAM_BATCH;
		else if (strcmp(key, "ranges") == 0)
			keybit = MM_PARAM_RANGES;
		else if (strcmp(key, "wait_factor") == 0)
			keybit = MM_PARAM_WAIT_FACTOR;
		else if (strcmp(key, "on_timeout") == 0)
			keybit = MM_PARAM_ON_TIMEOUT;
		else if (strcmp(key, "team_policy") == 0)
			keybit = MM_PARAM_TEAM_POLICY;
		else if (strcmp(key, "window") == 0)
			keybit = MM_PARAM_WINDOW;
		else if (strcmp(key, "widen") == 0)
			keybit = MM_PARAM_WIDEN;
		else if (strcmp(key, "max_window") == 0)
			keybit = MM_PARAM_MAX_WINDOW;
		else if (strcmp(key, "recheck") == 0)
			keybit = MM_PARAM_RECHECK;
		else if (strcmp(key, "percentile") == 0)
			keybit = MM_PARAM_PERCENTILE;
		else if (strcmp(key, "rematch_last") == 0)
			keybit = MM_PARAM_REMATCH_LAST;
		else if (strcmp(key, "rematch_penalty") == 0)
			keybit = MM_PARAM_REMATCH_PENALTY;
		else if (strcmp(key, "midpoint") == 0)
			keybit = MM_PARAM_MIDPOINT;
		else if (strcmp(key, "steepness") == 0)
			keybit = MM_PARAM_STEEPNESS;
		else if (strcmp(key, "threshold") == 0)
			keybit = MM_PARAM_THRESHOLD;
		else if (strcmp(key, "shift") == 0)
			keybit = MM_PARAM_SHIFT;
		else if (strcmp(key, "round") == 0)
			keybit = MM_PARAM_ROUND;
		else if (strcmp(key, "weights") == 0)
			keybit = MM_PARAM_WEIGHTS;
		else if (strcmp(key, "skill_cap") == 0)
			keybit = MM_PARAM_SKILL_CAP;
		else if (strcmp(key, "ping_max") == 0)
			keybit = MM_PARAM_PING_MAX;
		else if (strcmp(key, "host_ping") == 0)
			keybit = MM_PARAM_HOST_PING;
		else if (strcmp(key, "restarts") == 0)
			keybit = MM_PARAM_RESTARTS;
		else if (strcmp(key, "budget_ms") == 0)
			keybit = MM_PARAM_BUDGET_MS;
		else if (strcmp(key, "seed") == 0)
			keybit = MM_PARAM_SEED;
		else if (strcmp(key, "criteria") == 0)
			keybit = MM_PARAM_CRITERIA;
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown params key \"%s\"", mm_shorten(key)),
					 errhint("Valid keys are batch (periodic), ranges (multi_queue), wait_factor (difference_wait), team_policy (greedy), window, widen, max_window, percentile, rematch_last and rematch_penalty (window), midpoint, steepness, threshold and shift (cluster), recheck (window, cluster), round, weights, skill_cap, ping_max, host_ping, restarts, budget_ms and seed (optimize), criteria (greedy, multi_queue), and on_timeout.")));

		owner = param_owner(keybit);
		if (keybit == MM_PARAM_RECHECK &&
			cfg->algorithm != MM_ALGO_WINDOW && cfg->algorithm != MM_ALGO_CLUSTER)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"%s\" does not apply to algorithm \"%s\"", key, algo),
					 errhint("\"%s\" is a parameter of algorithms \"window\" and \"cluster\"; remove it from params.", key)));
		if (keybit == MM_PARAM_CRITERIA &&
			cfg->algorithm != MM_ALGO_GREEDY && cfg->algorithm != MM_ALGO_MULTI_QUEUE)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"%s\" does not apply to algorithm \"%s\"", key, algo),
					 errhint("Several criteria are matched by algorithms \"greedy\" and \"multi_queue\"; remove \"%s\" from params.", key)));
		if (owner != NULL && strcmp(owner, algo) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"%s\" does not apply to algorithm \"%s\"", key, algo),
					 errhint("\"%s\" is a parameter of algorithm \"%s\"; remove it from params.", key, owner)));

		tok = JsonbIteratorNext(&it, &v, true);
		Assert(tok == WJB_VALUE);

		switch (keybit)
		{
			case MM_PARAM_BATCH:
				if (param_is_string(&v, "auto"))
					cfg->periodic.batch = 0;
				else
				{
					char	   *expect = psprintf("\"auto\" or a positive multiple of %d (players per match)", k);

					cfg->periodic.batch = param_int(&v, key, k, 1000000, expect);
					if (cfg->periodic.batch % k != 0)
						ereport(ERROR,
								(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								 errmsg("params key \"%s\" must be %s", key, expect),
								 errdetail("Got %d.", cfg->periodic.batch),
								 errhint("%s", param_hint(key))));
				}
				break;
			case MM_PARAM_RANGES:
				if (param_is_string(&v, "auto"))
					cfg->multi_queue.ranges = 0;
				else
					cfg->multi_queue.ranges = param_int(&v, key, 1, 10000,
											"\"auto\" or a whole number from 1 to 10000");
				break;
			case MM_PARAM_WAIT_FACTOR:
				cfg->difference_wait.wait_factor = param_number(&v, key, 0, 1e9, "a number of seconds from 0 to 1e9");
				*wait_factor_set = true;
				break;
			case MM_PARAM_WINDOW:
				cfg->window.width = param_number(&v, key, 0, 1, "a number from 0 to 1");
				break;
			case MM_PARAM_WIDEN:
				widen_auto = param_is_string(&v, "auto");
				if (!widen_auto)
					cfg->window.widen = param_number(&v, key, 0, 1, "\"auto\" or a number from 0 to 1 (per second)");
				break;
			case MM_PARAM_MAX_WINDOW:
				cfg->window.max = param_number(&v, key, 0, 1, "a number from 0 to 1");
				break;
			case MM_PARAM_RECHECK:
				cfg->recheck = param_number(&v, key, 0.001, 86400, "a number of seconds from 0.001 to 86400");
				break;
			case MM_PARAM_ROUND:
				cfg->recheck = param_number(&v, key, 0.001, 86400, "a number of seconds from 0.001 to 86400");
				break;
			case MM_PARAM_WEIGHTS:
				parse_weights(&v, cfg);
				break;
			case MM_PARAM_SKILL_CAP:
				parse_skill_cap(&v, cfg);
				break;
			case MM_PARAM_CRITERIA:
				parse_criteria(&v, cfg, criteria);
				break;
			case MM_PARAM_PING_MAX:
				cfg->optimize.ping_max = param_number(&v, key, 1e-3, 1e6, "a number of milliseconds above 0 and at most 1e6");
				break;
			case MM_PARAM_HOST_PING:
				cfg->optimize.host_ping = param_number(&v, key, 1e-3, 1e6, "a number of milliseconds above 0 and at most 1e6");
				break;
			case MM_PARAM_RESTARTS:
				cfg->optimize.restarts = param_int(&v, key, 0, 100000, "a whole number from 0 to 100000");
				break;
			case MM_PARAM_BUDGET_MS:
				cfg->optimize.budget_ms = param_number(&v, key, 1e-3, 600000, "a number of milliseconds above 0 and at most 600000");
				break;
			case MM_PARAM_SEED:
				cfg->optimize.seed = (uint64_t) param_int(&v, key, 0, PG_INT32_MAX, "a whole number from 0 to 2147483647");
				break;
			case MM_PARAM_REMATCH_LAST:
				cfg->window.rematch_last = param_int(&v, key, 0, 100, "a whole number from 0 to 100");
				break;
			case MM_PARAM_REMATCH_PENALTY:
				if (param_is_string(&v, "ban"))
					cfg->window.rematch_penalty = INFINITY;
				else
					cfg->window.rematch_penalty = param_number(&v, key, 0, 1, "\"ban\" or a number from 0 to 1");
				break;
			case MM_PARAM_MIDPOINT:
				cfg->cluster.midpoint = param_number(&v, key, 0, 1e9, "a number of seconds from 0 to 1e9");
				break;
			case MM_PARAM_STEEPNESS:
				cfg->cluster.steepness = param_number(&v, key, 1e-9, 1000, "a number above 0 and at most 1000 (per second)");
				break;
			case MM_PARAM_THRESHOLD:
				cfg->cluster.threshold = param_number(&v, key, 1e-4, 1, "a number from 0.0001 to 1");
				break;
			case MM_PARAM_SHIFT:
				cfg->cluster.shift_auto = param_is_string(&v, "auto") ? 1 : 0;
				if (!cfg->cluster.shift_auto)
					cfg->cluster.shift = param_number(&v, key, 0, 1e9, "\"auto\" or a number of seconds from 0 to 1e9");
				break;
			case MM_PARAM_PERCENTILE:
				if (v.type != jbvBool)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("params key \"%s\" must be true or false", key),
							 errdetail("Got %s.", jsonb_value_text(&v)),
							 errhint("%s", param_hint(key))));
				cfg->window.percentile = v.val.boolean ? 1 : 0;
				break;
			case MM_PARAM_TEAM_POLICY:
				if (param_is_string(&v, "greedy"))
					cfg->greedy.team_policy = MM_TEAMS_GREEDY;
				else if (param_is_string(&v, "patient"))
					cfg->greedy.team_policy = MM_TEAMS_PATIENT;
				else
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("params key \"%s\" must be \"greedy\" or \"patient\"", key),
							 errdetail("Got %s.", jsonb_value_text(&v)),
							 errhint("%s", param_hint(key))));
				if (cfg->greedy.team_policy == MM_TEAMS_PATIENT &&
					(cfg->teams < 2 || cfg->team_size < 2 || k > MM_PATIENT_MAX_K))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("team_policy \"patient\" needs at least two teams of at least two players, and at most %d players per match",
									MM_PATIENT_MAX_K),
							 errdetail("The queue has %d teams of %d.", cfg->teams, cfg->team_size),
							 errhint("Patience compares exact team splits; with one player per team every split is the same. Use \"greedy\".")));
				break;
			case MM_PARAM_ON_TIMEOUT:
				if (param_is_string(&v, "bots"))
					cfg->on_timeout = MM_TIMEOUT_BOTS;
				else if (param_is_string(&v, "expire"))
					cfg->on_timeout = MM_TIMEOUT_EXPIRE;
				else
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("params key \"%s\" must be \"bots\" or \"expire\"", key),
							 errdetail("Got %s.", jsonb_value_text(&v)),
							 errhint("%s", param_hint(key))));
				break;
		}
	}

	if (cfg->algorithm == MM_ALGO_MULTI_QUEUE && mm_criteria_cells(cfg) > MM_MAX_CELLS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("multi_queue can keep at most %.0f cells", MM_MAX_CELLS),
				 errdetail("The criteria's ranges multiply to %g.", mm_criteria_cells(cfg)),
				 errhint("Use fewer ranges per criterion, or \"auto\".")));
	if (cfg->algorithm == MM_ALGO_OPTIMIZE)
	{
		if (cfg->teams < 2 || k > MM_OPTIMIZE_MAX_K)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("algorithm \"optimize\" needs at least two teams and at most %d players per match",
							MM_OPTIMIZE_MAX_K),
					 errdetail("The queue has %d teams of %d.", cfg->teams, cfg->team_size),
					 errhint("optimize splits every match into teams by trying every split.")));
	}
	if (cfg->algorithm == MM_ALGO_WINDOW)
	{
		if (cfg->window.max < cfg->window.width)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"max_window\" must not be below window"),
					 errdetail("Got window %g and max_window %g.", cfg->window.width, cfg->window.max),
					 errhint("%s", param_hint("max_window"))));
		/* auto: the window reaches its cap at max_wait */
		if (widen_auto)
			cfg->window.widen = Min((cfg->window.max - cfg->window.width) / cfg->max_wait, 1.0);
	}
}

/* Refuse a name for a new queue that is empty, too long or hard to read back. */
static void
validate_name(const char *name)
{
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue name must not be empty"),
				 errhint("Name the queue after its game mode, for example 'duel'.")));
	if (strlen(name) > NAMEDATALEN - 1)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("queue name is too long"),
				 errdetail("The name has %zu bytes; at most %d are allowed.",
						   strlen(name), NAMEDATALEN - 1),
				 errhint("Use a shorter name.")));
	for (const unsigned char *c = (const unsigned char *) name; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("queue name must not contain control characters"),
					 errdetail("Byte %d is 0x%02x.", (int) (c - (const unsigned char *) name) + 1, *c),
					 errhint("Name the queue after its game mode, for example 'duel'.")));
	if (name[0] == ' ' || name[strlen(name) - 1] == ' ')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("queue name must not begin or end with a space"),
				 errdetail("Got \"%s\".", name),
				 errhint("Name the queue after its game mode, for example 'duel'.")));
}

/* Refuse settings out of their domain; fill cfg from them. */
static void
validate_settings(QueueSettings *s, MMConfig *cfg, MMCriteria *criteria)
{
	double		max_wait = mm_interval_seconds(s->max_wait);
	double		tick = mm_interval_seconds(s->tick);
	bool		wait_factor_set;
	MMStatus	st;

	if (s->team_size < 1 || s->teams < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at least 1", s->team_size < 1 ? "team_size" : "teams"),
				 errdetail("Got %d.", s->team_size < 1 ? s->team_size : s->teams),
				 errhint("A one-on-one queue has team_size 1 and teams 2.")));
	if ((int64) s->team_size * s->teams < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a match needs at least 2 players"),
				 errdetail("team_size %d times teams %d is %d.",
						   s->team_size, s->teams, s->team_size * s->teams),
				 errhint("A one-on-one queue has team_size 1 and teams 2.")));
	if ((int64) s->team_size * s->teams > MM_MAX_PLAYERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a match can have at most %d players", MM_MAX_PLAYERS),
				 errdetail("team_size %d times teams %d is %lld.",
						   s->team_size, s->teams, (long long) s->team_size * s->teams),
				 errhint("Use fewer or smaller teams.")));
	if (mm_algorithm_parse(s->algorithm, &cfg->algorithm) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown matchmaking algorithm \"%s\"", mm_shorten(s->algorithm)),
				 errhint("Valid algorithms are greedy, periodic, multi_queue, difference_wait, window, cluster and optimize.")));
	if (!(max_wait > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_wait must be positive"),
				 errdetail("Got %s.", interval_text(s->max_wait)),
				 errhint("max_wait is how long a player may wait before on_timeout applies, for example '2 minutes'.")));
	if (!(max_wait <= MM_MAX_MAX_WAIT))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_wait must be at most 365 days"),
				 errdetail("Got %s.", interval_text(s->max_wait)),
				 errhint("max_wait is how long a player may wait before on_timeout applies, for example '2 minutes'.")));
	if (!(tick >= MM_MIN_TICK && tick <= MM_MAX_TICK))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg(tick > 0 ? "tick must be between 1 millisecond and 1 day" : "tick must be positive"),
				 errdetail("Got %s.", interval_text(s->tick)),
				 errhint("tick is how often the queue's timers are checked, for example '1 second'.")));
	if (!isfinite(s->rating_min) || !isfinite(s->rating_max) ||
		!(s->rating_min < s->rating_max))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rating range must be finite with rating_min below rating_max"),
				 errdetail("Got rating_min %s and rating_max %s.",
						   mm_float_text(s->rating_min), mm_float_text(s->rating_max)),
				 errhint("Use the lowest and highest rating your game gives, for example 0 and 3000.")));
	/* ratings are normalised by the width, which must not overflow */
	if (!isfinite(s->rating_max - s->rating_min))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rating range is too wide"),
				 errdetail("rating_max %s minus rating_min %s is not a finite number.",
						   mm_float_text(s->rating_max), mm_float_text(s->rating_min)),
				 errhint("Use the lowest and highest rating your game gives, for example 0 and 3000.")));

	cfg->teams = s->teams;
	cfg->team_size = s->team_size;
	cfg->max_wait = max_wait;
	cfg->arrival_rate = 0;
	mm_parse_params(s->params, cfg, criteria, &wait_factor_set);
	st = mm_config_check(cfg);
	if (st != MM_OK)
		mm_status_error(st, "checking the queue's configuration", NULL,
						"queue configuration failed the core's check");
}

/* The error for a queue that does not exist. */
static void
queue_not_found(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("queue \"%s\" does not exist", mm_shorten(name)),
			 errhint("Create it with matchmaker.create_queue(), or see the queues in matchmaker.queues.")));
}

/*
 * Load a queue's settings (SPI connected; the result lives in the current
 * memory context).  MM_LOCK_UPDATE locks the queue's row FOR UPDATE, which
 * serialises ticks and changes of one queue; MM_LOCK_SKIP does the same but
 * skips a row another transaction holds.  Returns false when the queue does
 * not exist (or, with MM_LOCK_SKIP, is locked).
 */
bool
mm_load_queue(const char *name, MMQueueLock lock, MMQueue *queue)
{
	static const char *const sql[3] = {
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1",
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
		"SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params, created_at "
		"FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE SKIP LOCKED"
	};
	static SPIPlanPtr plans[3];
	Datum		values[1];
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	char	   *algo;

	Oid			argtypes[1] = {TEXTOID};

	mm_keep_plan(&plans[lock], sql[lock], 1, argtypes);
	values[0] = CStringGetTextDatum(name);
	if (SPI_execute_plan(plans[lock], values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up queue \"%s\"", name);
	if (SPI_processed == 0)
		return false;

	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	queue->name = pstrdup(name);
	queue->cfg.team_size = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	queue->cfg.teams = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	algo = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
	if (mm_algorithm_parse(algo, &queue->cfg.algorithm) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("queue \"%s\" has unknown algorithm \"%s\"", name, algo)));
	queue->cfg.max_wait = mm_interval_seconds(DatumGetIntervalP(SPI_getbinval(tup, desc, 4, &isnull)));
	queue->rating_min = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
	queue->rating_max = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
	queue->tick_seconds = mm_interval_seconds(DatumGetIntervalP(SPI_getbinval(tup, desc, 7, &isnull)));
	queue->cfg.arrival_rate = 0;
	queue->created_at = DatumGetTimestampTz(SPI_getbinval(tup, desc, 9, &isnull));
	mm_parse_params(DatumGetJsonbP(SPI_getbinval(tup, desc, 8, &isnull)),
					&queue->cfg, &queue->criteria, &queue->wait_factor_set);
	return true;
}

/* Load a queue named by a text argument, or raise "does not exist". */
MMQueue *
mm_get_queue(text *name, MMQueueLock lock)
{
	MMQueue    *queue = palloc0(sizeof(MMQueue));
	char	   *cname = text_to_cstring(name);

	if (!mm_load_queue(cname, lock, queue))
		queue_not_found(cname);
	return queue;
}

/* The current settings of a queue into s (SPI connected, row locked). */
static bool
load_settings(const char *name, QueueSettings *s)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;

	if (SPI_execute_with_args("SELECT team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params "
							  "FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
							  1, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up queue \"%s\"", name);
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	s->name = pstrdup(name);
	s->team_size = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	s->teams = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
	s->algorithm = TextDatumGetCString(SPI_getbinval(tup, desc, 3, &isnull));
	s->max_wait = DatumGetIntervalP(SPI_getbinval(tup, desc, 4, &isnull));
	s->rating_min = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
	s->rating_max = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull));
	s->tick = DatumGetIntervalP(SPI_getbinval(tup, desc, 7, &isnull));
	s->params = DatumGetJsonbP(SPI_getbinval(tup, desc, 8, &isnull));
	return true;
}

/* The error for a queue name in use. */
static void
duplicate_queue(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("queue \"%s\" already exists", name),
			 errhint("Change it with matchmaker.alter_queue(), or pick another name.")));
}

/* Write a queue's settings (insert or update) through SPI. */
static void
store_settings(QueueSettings *s, bool insert)
{
	Oid			argtypes[9] = {TEXTOID, INT4OID, INT4OID, TEXTOID, INTERVALOID,
	FLOAT8OID, FLOAT8OID, INTERVALOID, JSONBOID};
	Datum		values[9];
	int			rc;

	values[0] = CStringGetTextDatum(s->name);
	values[1] = Int32GetDatum(s->team_size);
	values[2] = Int32GetDatum(s->teams);
	values[3] = CStringGetTextDatum(s->algorithm);
	values[4] = IntervalPGetDatum(s->max_wait);
	values[5] = Float8GetDatum(s->rating_min);
	values[6] = Float8GetDatum(s->rating_max);
	values[7] = IntervalPGetDatum(s->tick);
	values[8] = JsonbPGetDatum(s->params);

	if (insert)
		rc = SPI_execute_with_args("INSERT INTO matchmaker.queues "
								   "(name, team_size, teams, algorithm, max_wait, rating_min, rating_max, tick, params) "
								   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (name) DO NOTHING",
								   9, argtypes, values, NULL, false, 0);
	else
		rc = SPI_execute_with_args("UPDATE matchmaker.queues SET team_size = $2, teams = $3, algorithm = $4, "
								   "max_wait = $5, rating_min = $6, rating_max = $7, tick = $8, params = $9 "
								   "WHERE name OPERATOR(pg_catalog.=) $1",
								   9, argtypes, values, NULL, false, 0);
	if (insert && rc == SPI_OK_INSERT && SPI_processed == 0)
		duplicate_queue(s->name);
	if (rc != (insert ? SPI_OK_INSERT : SPI_OK_UPDATE) || SPI_processed != 1)
		elog(ERROR, "could not store queue \"%s\"", s->name);
}

/*
 * matchmaker.create_queue(name, team_size, teams, algorithm, max_wait,
 *						   rating_min, rating_max, tick, params)
 */
Datum
mm_create_queue(PG_FUNCTION_ARGS)
{
	QueueSettings s;
	MMConfig	cfg;
	MMCriteria	criteria;
	static const char *const argnames[] = {"name", "team_size", "teams", "algorithm",
	"max_wait", "rating_min", "rating_max", "tick", "params"};

	for (int i = 0; i < 9; i++)
		mm_require_arg(fcinfo, i, argnames[i]);

	s.name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	s.team_size = PG_GETARG_INT32(1);
	s.teams = PG_GETARG_INT32(2);
	s.algorithm = text_to_cstring(PG_GETARG_TEXT_PP(3));
	s.max_wait = PG_GETARG_INTERVAL_P(4);
	s.rating_min = PG_GETARG_FLOAT8(5);
	s.rating_max = PG_GETARG_FLOAT8(6);
	s.tick = PG_GETARG_INTERVAL_P(7);
	s.params = PG_GETARG_JSONB_P(8);
	validate_name(s.name);
	validate_settings(&s, &cfg, &criteria);

	SPI_connect();
	store_settings(&s, true);	/* raises duplicate_queue when the name is taken */
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * The number of a queue's waiting tickets whose rating lies outside
 * [lo, hi] (SPI connected).
 */
static int64
waiting_outside(const char *name, double lo, double hi)
{
	Oid			argtypes[3] = {TEXTOID, FLOAT8OID, FLOAT8OID};
	Datum		values[3] = {CStringGetTextDatum(name), Float8GetDatum(lo), Float8GetDatum(hi)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
							  "AND (rating OPERATOR(pg_catalog.<) $2 OR rating OPERATOR(pg_catalog.>) $3)",
							  3, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count waiting tickets");
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * Block enqueues until the end of the transaction (SPI connected): an
 * enqueue takes ROW EXCLUSIVE on tickets before it reads the queue, so
 * once this returns no enqueue can still be working from the queue's old
 * row.  Callers lock the queue's row first, in the same order as tick and
 * cancel, so that the two locks cannot deadlock.
 */
static void
block_enqueues(void)
{
	if (SPI_execute("LOCK TABLE matchmaker.tickets IN SHARE ROW EXCLUSIVE MODE", false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not lock matchmaker.tickets");
}

/* Remove a queue's provisional groups (SPI connected). */
static void
clear_groups(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	if (SPI_execute_with_args("DELETE FROM matchmaker.provisional_groups WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove the provisional groups of queue \"%s\"", name);
}

/* Whether a queue has any ticket or match (SPI connected). */
static bool
queue_has_history(const char *name)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};

	if (SPI_execute_with_args("SELECT 1 FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "UNION ALL SELECT 1 FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1 LIMIT 1",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not look up the tickets of queue \"%s\"", name);
	return SPI_processed > 0;
}

/*
 * Refuse new criteria that a waiting ticket of the queue does not satisfy
 * (SPI connected, enqueues blocked): tick could not match it.
 */
static void
check_waiting_criteria(const char *name, const MMConfig *cfg, const MMCriteria *criteria)
{
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1] = {CStringGetTextDatum(name)};
	MMQueue		queue;
	int64		bad = 0;
	int64		first_id = 0;
	int			first_d = 0;
	MMCriterionProblem first_problem = MM_CRITERION_OK;
	double		first_got = NAN;

	if (cfg->criteria.n == 0)
		return;
	memset(&queue, 0, sizeof(queue));
	queue.name = (char *) name;
	queue.cfg = *cfg;
	queue.criteria = *criteria;
	if (SPI_execute_with_args("SELECT id, attributes FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting' "
							  "ORDER BY id",
							  1, argtypes, values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the waiting tickets of queue \"%s\"", name);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		double		crit[MM_MAX_CRITERIA];
		MMCriterionProblem problem;
		double		got;
		int			d = mm_criteria_read(&queue,
										 DatumGetJsonbP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull)),
										 crit, &problem, &got);

		if (d > 0 && bad++ == 0)
		{
			first_id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
			first_d = d;
			first_problem = problem;
			first_got = got;
		}
	}
	if (bad > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket without a valid value of the new criteria",
							   "queue \"%s\" has %lld waiting tickets without a valid value of the new criteria",
							   bad, name, (long long) bad),
				 first_problem == MM_CRITERION_OUTSIDE ?
				 errdetail("Ticket %lld has \"%s\" %s, outside %s to %s.", (long long) first_id,
						   mm_shorten(criteria->attribute[first_d]), mm_float_text(first_got),
						   mm_float_text(criteria->lo[first_d]), mm_float_text(criteria->hi[first_d])) :
				 errdetail("Ticket %lld has %s \"%s\".", (long long) first_id,
						   first_problem == MM_CRITERION_MISSING ? "no" : "a value that is not a number for",
						   mm_shorten(criteria->attribute[first_d])),
				 errhint("Change the criteria once those tickets have left the queue, or cancel them.")));
}

/* matchmaker.alter_queue(name, ...): NULL arguments leave a setting unchanged. */
Datum
mm_alter_queue(PG_FUNCTION_ARGS)
{
	QueueSettings s;
	MMConfig	cfg;
	MMCriteria	criteria;
	char	   *name = mm_text_arg(fcinfo, 0, "name");
	int64		outside;
	int32		old_team_size;
	int32		old_teams;
	char	   *old_algorithm;

	SPI_connect();
	if (!load_settings(name, &s))
		queue_not_found(name);
	old_team_size = s.team_size;
	old_teams = s.teams;
	old_algorithm = pstrdup(s.algorithm);
	block_enqueues();

	if (!PG_ARGISNULL(1))
		s.team_size = PG_GETARG_INT32(1);
	if (!PG_ARGISNULL(2))
		s.teams = PG_GETARG_INT32(2);
	if (!PG_ARGISNULL(3))
		s.algorithm = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (!PG_ARGISNULL(4))
		s.max_wait = PG_GETARG_INTERVAL_P(4);
	if (!PG_ARGISNULL(5))
		s.rating_min = PG_GETARG_FLOAT8(5);
	if (!PG_ARGISNULL(6))
		s.rating_max = PG_GETARG_FLOAT8(6);
	if (!PG_ARGISNULL(7))
		s.tick = PG_GETARG_INTERVAL_P(7);
	if (!PG_ARGISNULL(8))
		s.params = PG_GETARG_JSONB_P(8);
	validate_name(s.name);
	validate_settings(&s, &cfg, &criteria);

	if ((s.team_size != old_team_size || s.teams != old_teams) && queue_has_history(name))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot change the game shape of queue \"%s\"", name),
				 errdetail("The queue has tickets or matches of %d teams of %d.", old_teams, old_team_size),
				 errhint("Create a new queue for the new game shape.")));

	outside = waiting_outside(name, s.rating_min, s.rating_max);
	if (outside > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket outside the new rating range",
							   "queue \"%s\" has %lld waiting tickets outside the new rating range",
							   outside, name, (long long) outside),
				 errdetail("The new range is %s to %s.", mm_float_text(s.rating_min), mm_float_text(s.rating_max)),
				 errhint("Narrow the range once those tickets have left the queue, or cancel them.")));
	check_waiting_criteria(name, &cfg, &criteria);

	store_settings(&s, false);
	if (strcmp(old_algorithm, "difference_wait") == 0 && strcmp(s.algorithm, "difference_wait") != 0)
		clear_groups(name);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * matchmaker.drop_queue(name, force): remove a queue with its tickets and
 * matches.  Refused while tickets wait, unless force.
 */
Datum
mm_drop_queue(PG_FUNCTION_ARGS)
{
	char	   *name = mm_text_arg(fcinfo, 0, "name");
	bool		force;
	QueueSettings s;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	int64		waiting;
	bool		isnull;

	mm_require_arg(fcinfo, 1, "force");
	force = PG_GETARG_BOOL(1);
	values[0] = CStringGetTextDatum(name);

	SPI_connect();
	/* the queue's row, then the table: the order tick and cancel use */
	if (!load_settings(name, &s))
		queue_not_found(name);
	block_enqueues();

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM matchmaker.tickets "
							  "WHERE queue OPERATOR(pg_catalog.=) $1 AND state OPERATOR(pg_catalog.=) 'waiting'",
							  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not count waiting tickets");
	waiting = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (waiting > 0 && !force)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg_plural("queue \"%s\" has %lld waiting ticket",
							   "queue \"%s\" has %lld waiting tickets",
							   waiting, name, (long long) waiting),
				 errhint("Cancel them first, or drop the queue with matchmaker.drop_queue('%s', force => true).", name)));

	clear_groups(name);
	if (SPI_execute_with_args("DELETE FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args("DELETE FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE ||
		SPI_execute_with_args("DELETE FROM matchmaker.queues WHERE name OPERATOR(pg_catalog.=) $1",
							  1, argtypes, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not drop queue \"%s\"", name);
	SPI_finish();
	PG_RETURN_VOID();
}
