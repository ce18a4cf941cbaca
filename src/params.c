/*
 * params.c
 *		A queue's params: the table of its keys, which drives their parsing,
 *		their validation and the hints of their errors.
 *
 * A key's row gives the algorithms it applies to, the kind of its value,
 * its bounds, the MMConfig field it sets and what its errors say.  The
 * defaults are not in the table: mm_config_init and mm_config_set_max_wait
 * set them, and the keys a params object names overwrite them.  Keys whose
 * values have a structure of their own (weights, skill_cap, criteria, the
 * batch's multiple of k, the enumerations team_policy and on_timeout) have
 * a parse function.
 */
#include "matchmaker.h"

#include <math.h>

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

/* What a key's value is. */
typedef enum MMParamKind
{
	MM_PARAM_INT,				/* a whole number in [lo, hi], into an int */
	MM_PARAM_UINT64,			/* a whole number in [lo, hi], into a uint64_t */
	MM_PARAM_NUMBER,			/* a number in [lo, hi], into a double */
	MM_PARAM_BOOL,				/* true or false, into an int (1 or 0) */
	MM_PARAM_CUSTOM				/* parsed by the row's parse function */
} MMParamKind;

typedef struct MMParamDef MMParamDef;

/* Parse a value of a MM_PARAM_CUSTOM key into cfg (and criteria). */
typedef void (*MMParamParse) (JsonbValue *v, const MMParamDef *def, MMConfig *cfg,
							  MMCriteria *criteria);

/* One params key. */
struct MMParamDef
{
	const char *name;
	uint32		algorithms;		/* the algorithms it applies to: ALGO() bits */
	MMParamKind kind;
	double		lo;				/* bounds of a number */
	double		hi;
	const char *word;			/* a word it takes besides numbers ("auto"), or NULL */
	double		word_value;		/* what the word sets the field to; NAN: it leaves the
								 * field to mm_parse_params' derived values */
	int			offset;			/* of its field in MMConfig, -1 for none */
	const char *expect;			/* "params key \"name\" must be <expect>" */
	const char *hint;			/* what the key means */
	const char *owner_hint;		/* a "does not apply" hint of its own, or NULL */
	MMParamParse parse;			/* MM_PARAM_CUSTOM */
};

#define ALGO(a)			(1u << (a))
#define ALL_ALGOS		(ALGO(MM_NUM_ALGORITHMS) - 1)
#define FIELD(f)		((int) offsetof(MMConfig, f))
#define NO_FIELD		(-1)

static void parse_batch(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_team_policy(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_on_timeout(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_weights(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_skill_cap(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_criteria(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_tune(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_channel(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_min_players(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_filters(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_roles(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);
static void parse_party_rating(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria);

/*
 * The params keys.  Rows of the same algorithms stand together, in the
 * order the hint of an unknown key lists them (see keys_hint).  Each row
 * opens with a line "{" and the key's name in quotes on a line of its own
 * (test/params_doc.sh reads the names from there).
 */
/* BEGIN PARAMS TABLE */
static const MMParamDef params[] = {
	{
		"batch",
		ALGO(MM_ALGO_PERIODIC), MM_PARAM_CUSTOM, 0, 0, "auto", 0, FIELD(periodic.batch),
		NULL,
		"batch is how many players a period of the periodic algorithm collects before it matches them, for example 8.",
		NULL, parse_batch
	},
	{
		"ranges",
		ALGO(MM_ALGO_MULTI_QUEUE), MM_PARAM_INT, 1, 10000, "auto", 0, FIELD(multi_queue.ranges),
		"\"auto\" or a whole number from 1 to 10000",
		"ranges is how many rating ranges the multi_queue algorithm keeps, for example 6.",
		NULL, NULL
	},
	{
		"wait_factor",
		ALGO(MM_ALGO_DIFFERENCE_WAIT), MM_PARAM_NUMBER, 0, 1e9, NULL, 0, FIELD(difference_wait.wait_factor),
		"a number of seconds from 0 to 1e9",
		"wait_factor is how many seconds a provisional group with rating spread 1 waits before it becomes final, for example 10.",
		NULL, NULL
	},
	{
		"team_policy",
		ALGO(MM_ALGO_GREEDY), MM_PARAM_CUSTOM, 0, 0, NULL, 0, FIELD(greedy.team_policy),
		"\"greedy\" or \"patient\"",
		"\"greedy\" plays the k oldest players at once; \"patient\" waits for one more player when they cannot be split into balanced teams.",
		NULL, parse_team_policy
	},
	{
		"window",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_NUMBER, 0, 1, NULL, 0, FIELD(window.width),
		"a number from 0 to 1",
		"window is the half-width a ticket of the window algorithm accepts on arrival, as a fraction of the rating range (or of the rating ranks with percentile), for example 0.05.",
		NULL, NULL
	},
	{
		"widen",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_NUMBER, 0, 1, "auto", NAN, FIELD(window.widen),
		"\"auto\" or a number from 0 to 1 (per second)",
		"widen is how much a window grows per second of wait, as a fraction of the rating range, or \"auto\" to reach max_window at max_wait.",
		NULL, NULL
	},
	{
		"max_window",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_NUMBER, 0, 1, NULL, 0, FIELD(window.max),
		"a number from 0 to 1",
		"max_window caps the window, as a fraction of the rating range, for example 0.5; it must not be below window.",
		NULL, NULL
	},
	{
		"percentile",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_BOOL, 0, 1, NULL, 0, FIELD(window.percentile),
		"true or false",
		"percentile true measures windows in rating ranks among the waiting tickets rather than in ratings.",
		NULL, NULL
	},
	{
		"rematch_last",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_INT, 0, 100, NULL, 0, FIELD(window.rematch_last),
		"a whole number from 0 to 100",
		"rematch_last is how many of each player's last matches (within the queue's last 10 * max_wait, at most an hour unless max_wait is longer) count for rematch avoidance, 0 for none.",
		NULL, NULL
	},
	{
		"rematch_penalty",
		ALGO(MM_ALGO_WINDOW), MM_PARAM_NUMBER, 0, 1, "ban", INFINITY, FIELD(window.rematch_penalty),
		"\"ban\" or a number from 0 to 1",
		"rematch_penalty is how much farther apart, as a fraction of the rating range, two players who met in those matches count, or \"ban\" to never pair them again.",
		NULL, NULL
	},
	{
		"midpoint",
		ALGO(MM_ALGO_CLUSTER), MM_PARAM_NUMBER, 0, 1e9, NULL, 0, FIELD(cluster.midpoint),
		"a number of seconds from 0 to 1e9",
		"midpoint is the wait in seconds at which the cluster algorithm has squashed ratings halfway toward the mean.",
		NULL, NULL
	},
	{
		"steepness",
		ALGO(MM_ALGO_CLUSTER), MM_PARAM_NUMBER, 1e-9, 1000, NULL, 0, FIELD(cluster.steepness),
		"a number above 0 and at most 1000 (per second)",
		"steepness is how sharply the squash sets in around the midpoint, per second, for example 10 / max_wait.",
		NULL, NULL
	},
	{
		"threshold",
		ALGO(MM_ALGO_CLUSTER), MM_PARAM_NUMBER, 1e-4, 1, NULL, 0, FIELD(cluster.threshold),
		"a number from 0.0001 to 1",
		"threshold is the largest distance from a cluster's centroid at which a ticket joins it, as a fraction of the rating range, for example 0.05.",
		NULL, NULL
	},
	{
		"shift",
		ALGO(MM_ALGO_CLUSTER), MM_PARAM_NUMBER, 0, 1e9, "auto", NAN, FIELD(cluster.shift),
		"\"auto\" or a number of seconds from 0 to 1e9",
		"shift is how many seconds a newcomer counts as having waited, or \"auto\" for the queue's recent average wait before a match.",
		NULL, NULL
	},
	{
		"recheck",
		ALGO(MM_ALGO_WINDOW) | ALGO(MM_ALGO_CLUSTER), MM_PARAM_NUMBER, 0.001, 86400, NULL, 0, FIELD(recheck),
		"a number of seconds from 0.001 to 86400",
		"recheck is how many seconds apart the windows widen (window) or the waits count (cluster), for example 1.",
		NULL, NULL
	},
	{
		"round",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_NUMBER, 0.001, 86400, NULL, 0, FIELD(recheck),
		"a number of seconds from 0.001 to 86400",
		"round is how many seconds apart the optimize algorithm holds its rounds (at the multiples of it on the clock), for example 60.",
		NULL, NULL
	},
	{
		"weights",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 0, 1e6, NULL, 0, NO_FIELD,
		"an object of numbers from 0 to 1e6",
		"weights is an object of the match score's factors and their weights (numbers from 0 to 1e6, not all 0): balance, spread, premades, ping, variation, hosts.",
		NULL, parse_weights
	},
	{
		"skill_cap",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 0, 1, NULL, 0, NO_FIELD,
		"[low, high] with 0 <= low < high <= 1",
		"skill_cap is [low, high], fractions of the rating range (0 <= low < high <= 1) to which ratings are capped before the skill factors.",
		NULL, parse_skill_cap
	},
	{
		"ping_max",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_NUMBER, 1e-3, 1e6, NULL, 0, FIELD(optimize.ping_max),
		"a number of milliseconds above 0 and at most 1e6",
		"ping_max is the ping in milliseconds at or above which a pair of opponents scores 0, for example 300.",
		NULL, NULL
	},
	{
		"host_ping",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_NUMBER, 1e-3, 1e6, NULL, 0, FIELD(optimize.host_ping),
		"a number of milliseconds above 0 and at most 1e6",
		"host_ping is the largest ping in milliseconds from a player to every other member for it to host the match, for example 150.",
		NULL, NULL
	},
	{
		"restarts",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_INT, 0, 100000, NULL, 0, FIELD(optimize.restarts),
		"a whole number from 0 to 100000",
		"restarts is how many times a round starts its search again from a shuffled match-up, for example 4.",
		NULL, NULL
	},
	{
		"budget_ms",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_NUMBER, 1e-3, 600000, NULL, 0, FIELD(optimize.budget_ms),
		"a number of milliseconds above 0 and at most 600000",
		"budget_ms is how many milliseconds a round may spend on restarts, for example 200.",
		NULL, NULL
	},
	{
		"seed",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_UINT64, 0, PG_INT32_MAX, NULL, 0, FIELD(optimize.seed),
		"a whole number from 0 to 2147483647",
		"seed makes the restarts' shuffles reproducible: a whole number from 0 to 2147483647.",
		NULL, NULL
	},
	{
		"round_max",
		ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_INT, MM_OPTIMIZE_MAX_K, MM_OPTIMIZE_MAX_ROUND, NULL, 0, FIELD(optimize.round_max),
		"a whole number from 12 to 1000000",
		"round_max is how many waiting tickets a round takes at most, the oldest first (the others wait for the next round), for example 2000.",
		NULL, NULL
	},
	{
		"criteria",
		ALGO(MM_ALGO_GREEDY) | ALGO(MM_ALGO_MULTI_QUEUE) | ALGO(MM_ALGO_AUTO), MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		NULL,
		"criteria is an object of numeric attributes matched on besides the rating, each with its range and optionally a weight and (multi_queue) ranges, for example {\"latency\": {\"min\": 0, \"max\": 300}}; the key \"rating\" takes the rating's weight.",
		"Several criteria are matched by algorithms \"greedy\", \"multi_queue\" and \"auto\"; remove \"criteria\" from params.",
		parse_criteria
	},
	{
		"tune",
		ALL_ALGOS & ~ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		NULL,
		"tune asks a tick to replay the queue's recent players with candidate algorithms now and then and adopt the cheapest, for example {\"every\": 600, \"over\": 3600, \"algorithms\": [\"auto\", \"multi_queue\"]}.",
		"optimize scores matches its own way, so tuning by eq. 1 does not apply to it; remove \"tune\" from params.",
		parse_tune
	},
	{
		"min_players",
		ALL_ALGOS & ~ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 2, 0, NULL, 0, FIELD(min_players),
		"a whole number from 2 to the players per match",
		"min_players lets a player who reaches max_wait play a smaller match, of at least this many players and no computer player, when they are at hand, for example 6 in a 5v5 queue.",
		"optimize forms its own matches; remove \"min_players\" from params.",
		parse_min_players
	},
	{
		"roles",
		ALL_ALGOS & ~ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		NULL,
		"roles is an object of role names and the places each team has of them, adding up to the team size, for example {\"tank\": 1, \"healer\": 1, \"dps\": 3}; each player lists the roles it can play in its attribute \"roles\".",
		"optimize splits its own teams and takes no roles; remove \"roles\" from params.",
		parse_roles
	},
	{
		"party_rating",
		ALL_ALGOS & ~ALGO(MM_ALGO_OPTIMIZE), MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		"\"mean\" or \"max\"",
		"party_rating is the rating a party is grouped at: \"mean\" (the default), the mean of its players' ratings, or \"max\", its best player's.",
		"optimize rates each player of a party at its own rating; remove \"party_rating\" from params.",
		parse_party_rating
	},
	{
		"on_timeout",
		ALL_ALGOS, MM_PARAM_CUSTOM, 0, 0, NULL, 0, FIELD(on_timeout),
		"\"bots\" or \"expire\"",
		"\"bots\" completes a timed-out player's game with computer players; \"expire\" ends the ticket as expired.",
		NULL, parse_on_timeout
	},
	{
		"accept_timeout",
		ALL_ALGOS, MM_PARAM_NUMBER, 0, 3600, NULL, 0, FIELD(accept_timeout),
		"a number of seconds from 0 to 3600",
		"accept_timeout turns on ready checks: a match forms as proposed and its players answer with matchmaker.accept() within this many seconds, for example 15; 0 turns them off.",
		NULL, NULL
	},
	{
		"filters",
		ALL_ALGOS, MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		NULL,
		"filters is an object of attributes, each with its kind, for example {\"mode\": \"equal\", \"map\": \"intersect\"}: players meet only players with the same value of each equal filter (a string) and sharing a value of each intersect filter (a string or a list of strings), never one an exclude filter's list names (player identifiers); {\"kind\": \"equal\", \"optional_after\": 30} lets a player who waited 30 s meet players of other values.",
		NULL, parse_filters
	},
	{
		"channel",
		ALL_ALGOS, MM_PARAM_CUSTOM, 0, 0, NULL, 0, NO_FIELD,
		"a channel name of 1 to 63 bytes",
		"channel names a NOTIFY channel that receives the queue's events besides \"matchmaker\", for example \"mm_ranked\".",
		NULL, parse_channel
	},
};
/* END PARAMS TABLE */

#define NPARAMS lengthof(params)

/* The row of a key, or NULL. */
static const MMParamDef *
param_def(const char *key)
{
	for (int i = 0; i < (int) NPARAMS; i++)
		if (strcmp(params[i].name, key) == 0)
			return &params[i];
	return NULL;
}

/* What a params key means, for hints. */
static const char *
param_hint(const char *key)
{
	return param_def(key)->hint;
}

/*
 * The names of the algorithms of a mask, each quoted with q, as a list:
 * "a", "a and b" (and) or "a, b" (not and).
 */
static void
append_algorithms(StringInfo buf, uint32 algorithms, const char *q, bool and)
{
	int			n = 0;
	int			total = 0;

	for (int a = 0; a < MM_NUM_ALGORITHMS; a++)
		total += (algorithms & ALGO(a)) != 0;
	for (int a = 0; a < MM_NUM_ALGORITHMS; a++)
	{
		if (!(algorithms & ALGO(a)))
			continue;
		if (n > 0)
			appendStringInfoString(buf, and && n == total - 1 ? " and " : ", ");
		appendStringInfo(buf, "%s%s%s", q, mm_algorithm_name((MMAlgorithm) a), q);
		n++;
	}
}

/*
 * The hint of an unknown key: every key of the table, each run of keys of
 * the same algorithms followed by them, and last the keys of every
 * algorithm.
 */
static char *
keys_hint(void)
{
	StringInfoData buf;
	int			i;
	bool		first = true;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "Valid keys are ");
	for (int pass = 0; pass < 2; pass++)
	{
		/* pass 0: the keys of some algorithms; pass 1: those of all */
		i = 0;
		while (i < (int) NPARAMS)
		{
			int			j = i;

			while (j < (int) NPARAMS && params[j].algorithms == params[i].algorithms)
				j++;
			if ((params[i].algorithms == ALL_ALGOS) == (pass == 1))
			{
				if (!first)
					appendStringInfoString(&buf, pass == 1 ? ", and " : ", ");
				first = false;
				for (int m = i; m < j; m++)
					appendStringInfo(&buf, "%s%s", m == i ? "" : m == j - 1 ? " and " : ", ",
									 params[m].name);
				if (pass == 0)
				{
					appendStringInfoString(&buf, " (");
					append_algorithms(&buf, params[i].algorithms, "", false);
					appendStringInfoChar(&buf, ')');
				}
			}
			i = j;
		}
	}
	appendStringInfoChar(&buf, '.');
	return buf.data;
}

/* Refuse a key that does not apply to cfg's algorithm. */
static void
check_owner(const MMParamDef *def, const MMConfig *cfg)
{
	StringInfoData hint;

	if (def->algorithms & ALGO(cfg->algorithm))
		return;
	initStringInfo(&hint);
	if (def->owner_hint != NULL)
		appendStringInfoString(&hint, def->owner_hint);
	else
	{
		appendStringInfo(&hint, "\"%s\" is a parameter of algorithm%s ", def->name,
						 (def->algorithms & (def->algorithms - 1)) ? "s" : "");
		append_algorithms(&hint, def->algorithms, "\"", true);
		appendStringInfoString(&hint, "; remove it from params.");
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("params key \"%s\" does not apply to algorithm \"%s\"", def->name,
					mm_algorithm_name(cfg->algorithm)),
			 errhint("%s", hint.data)));
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
parse_weights(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
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
		*slots[i] = param_number(&val, def->name, def->lo, def->hi, def->expect);
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
parse_skill_cap(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
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
parse_criteria(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *crit)
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


/* periodic's batch: "auto" (0) or a positive multiple of k up to 1000000. */
static void
parse_batch(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	int			k = mm_config_k(cfg);
	char	   *expect;

	if (param_is_string(v, "auto"))
	{
		cfg->periodic.batch = 0;
		return;
	}
	expect = psprintf("\"auto\" or a positive multiple of %d (players per match)", k);
	cfg->periodic.batch = param_int(v, def->name, k, 1000000, expect);
	if (cfg->periodic.batch % k != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"%s\" must be %s", def->name, expect),
				 errdetail("Got %d.", cfg->periodic.batch),
				 errhint("%s", def->hint)));
}

/* Refuse a value of a key that takes words only. */
static void
bad_word(JsonbValue *v, const MMParamDef *def)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("params key \"%s\" must be %s", def->name, def->expect),
			 errdetail("Got %s.", jsonb_value_text(v)),
			 errhint("%s", def->hint)));
}

/* greedy's team_policy: "greedy" or "patient", which needs teams of at least two. */
static void
parse_team_policy(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	int			k = mm_config_k(cfg);

	if (param_is_string(v, "greedy"))
		cfg->greedy.team_policy = MM_TEAMS_GREEDY;
	else if (param_is_string(v, "patient"))
		cfg->greedy.team_policy = MM_TEAMS_PATIENT;
	else
		bad_word(v, def);
	if (cfg->greedy.team_policy == MM_TEAMS_PATIENT &&
		(cfg->teams < 2 || cfg->team_size < 2 || k > MM_PATIENT_MAX_K))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("team_policy \"patient\" needs at least two teams of at least two players, and at most %d players per match",
						MM_PATIENT_MAX_K),
				 errdetail("The queue has %d teams of %d.", cfg->teams, cfg->team_size),
				 errhint("Patience compares exact team splits; with one player per team every split is the same. Use \"greedy\".")));
}

/* on_timeout: "bots" or "expire". */
/* ----------------------------------------------------------------
 * params.tune (tune.c runs the tuning)
 * ----------------------------------------------------------------
 */

/* The algorithms tried when params.tune names none. */
#define MM_TUNE_DEFAULT_ALGORITHMS \
	((1u << MM_ALGO_AUTO) | (1u << MM_ALGO_PERIODIC) | \
	 (1u << MM_ALGO_MULTI_QUEUE) | (1u << MM_ALGO_DIFFERENCE_WAIT))

/* The error every bad tune value raises. */
static void
bad_tune(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("params key \"tune\" must be an object of \"every\", \"over\" and \"algorithms\""),
			 errdetail("%s", detail),
			 errhint("For example {\"every\": 600, \"over\": 3600, \"algorithms\": [\"auto\", \"multi_queue\"]}: "
					 "every 600 seconds, replay the last hour's players with each algorithm and adopt the cheapest.")));
}

/* A number of seconds of tune, within [lo, hi]. */
static double
tune_seconds(JsonbValue *v, const char *key, double lo, double hi)
{
	double		x;

	if (v->type != jbvNumeric)
		bad_tune(psprintf("\"%s\" must be a number of seconds.", key));
	x = param_double(v);
	if (!(x >= lo && x <= hi))
		bad_tune(psprintf("\"%s\" must be from %.0f to %.0f seconds; got %g.", key, lo, hi, x));
	return x;
}

/* The mask of the algorithms of a JSON array of their names. */
static uint32
tune_algorithms(JsonbValue *v)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	uint32		mask = 0;

	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		bad_tune("\"algorithms\" must be an array of algorithm names.");
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		MMAlgorithm a;
		char	   *name;

		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString)
			bad_tune("\"algorithms\" must be an array of algorithm names.");
		name = pnstrdup(e.val.string.val, Min(e.val.string.len, 64));
		if (mm_algorithm_parse(name, &a) != 0 || a == MM_ALGO_OPTIMIZE)
			bad_tune(psprintf("\"%s\" is not an algorithm tuning can try: one of auto, greedy, periodic, "
							  "multi_queue, difference_wait, window and cluster (optimize scores matches its own way).",
							  mm_shorten(name)));
		mask |= 1u << a;
	}
	if (mask == 0)
		bad_tune("\"algorithms\" must name at least one algorithm.");
	return mask;
}

/* Parse and check a params.tune value into tune; raises an error when bad. */
void
mm_tune_parse(JsonbValue *v, MMTune *tune)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;

	tune->on = true;
	tune->every = 600;
	tune->over = 3600;
	tune->algorithms = MM_TUNE_DEFAULT_ALGORITHMS;
	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		bad_tune("It is not a JSON object.");
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *key;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(k.val.string.val, Min(k.val.string.len, 64));
		tok = JsonbIteratorNext(&it, &val, true);
		if (strcmp(key, "every") == 0)
			tune->every = tune_seconds(&val, key, 60, 31536000);
		else if (strcmp(key, "over") == 0)
			tune->over = tune_seconds(&val, key, 1, 604800);
		else if (strcmp(key, "algorithms") == 0)
			tune->algorithms = tune_algorithms(&val);
		else
			bad_tune(psprintf("Unknown key \"%s\".", mm_shorten(key)));
	}
}

/* The queue's params.tune (checked when the params were stored), or off. */
void
mm_tune_read(Jsonb *params, MMTune *tune)
{
	JsonbValue *v;

	memset(tune, 0, sizeof(MMTune));
	v = getKeyJsonValueFromContainer(&params->root, "tune", 4, NULL);
	if (v != NULL)
		mm_tune_parse(v, tune);
}

/* params.tune: checked here, read by the tick (tune.c). */
static void
parse_tune(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	MMTune		tune;

	mm_tune_parse(v, &tune);
}

/*
 * params.channel: a string NOTIFY takes as a channel name (1 to
 * NAMEDATALEN - 1 bytes, no NUL, as text cannot hold one).
 */
static void
parse_channel(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	if (v->type != jbvString || v->val.string.len < 1 || v->val.string.len >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"%s\" must be %s", def->name, def->expect),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", def->hint)));
}

/* params.min_players: a whole number from 2 to k. */
static void
parse_min_players(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	int			k = mm_config_k(cfg);

	cfg->min_players = param_int(v, def->name, 2, k,
								 psprintf("a whole number from 2 to %d (the players per match)", k));
}

/*
 * A filter given as an object, {"kind": ..., "optional_after": seconds}:
 * its seconds into criteria (at the filter's place) and its kind into *v.
 */
static void
filter_object(JsonbValue *v, const char *name, const MMParamDef *def, MMCriteria *criteria)
{
	JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
	JsonbValue	k;
	JsonbValue	val;
	JsonbValue	kind = {0};
	JsonbIteratorToken tok;

	kind.type = jbvNull;
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &val, true);
		if (k.val.string.len == 4 && memcmp(k.val.string.val, "kind", 4) == 0)
			kind = val;
		else if (k.val.string.len == 14 && memcmp(k.val.string.val, "optional_after", 14) == 0)
		{
			double		d = val.type == jbvNumeric ? param_double(&val) : NAN;

			if (!(d >= 0.001 && d <= 1e9))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("optional_after of filter \"%s\" must be a number of seconds from 0.001 to 1e9",
								mm_shorten(name)),
						 errdetail("Got %s.", jsonb_value_text(&val)),
						 errhint("%s", def->hint)));
			/* whole microseconds, as the clock of a tick counts them */
			criteria->relax_after[criteria->nfilters] = rint(d * 1e6) / 1e6;
			criteria->any_relax = true;
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("filter \"%s\" has the unknown key \"%s\"", mm_shorten(name),
							mm_shorten(pnstrdup(k.val.string.val, k.val.string.len))),
					 errhint("A filter is its kind, or an object of \"kind\" and \"optional_after\" (seconds), for example {\"kind\": \"equal\", \"optional_after\": 30}.")));
	}
	if (kind.type == jbvNull)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("filter \"%s\" names no \"kind\"", mm_shorten(name)),
				 errhint("A filter is its kind, or an object of \"kind\" and \"optional_after\" (seconds), for example {\"kind\": \"equal\", \"optional_after\": 30}.")));
	*v = kind;
}

/*
 * params.filters: an object of at most MM_MAX_FILTERS attributes keys (1
 * to 64 bytes, not a criterion's), each with its kind: "equal", "intersect"
 * or (one of them) "exclude".
 */
static void
parse_filters(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"filters\" must be a JSON object"),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", def->hint)));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		if (k.val.string.len < 1 || k.val.string.len > 64)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("filter names must be attributes keys of 1 to 64 bytes"),
					 errdetail("Got \"%s\".", mm_shorten(name)),
					 errhint("%s", def->hint)));
		if (criteria->nfilters >= MM_MAX_FILTERS)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"filters\" can name at most %d attributes", MM_MAX_FILTERS),
					 errhint("Combine values into one attribute, for example \"ranked-eu\".")));
		tok = JsonbIteratorNext(&it, &val, true);
		if (val.type == jbvBinary && JsonContainerIsObject(val.val.binary.data))
			filter_object(&val, name, def, criteria);
		if (param_is_string(&val, "exclude"))
		{
			if (criteria->relax_after[criteria->nfilters] > 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("exclude filter \"%s\" cannot have an optional_after", mm_shorten(name)),
						 errdetail("A block list holds however long a player waits."),
						 errhint("Write it \"%s\": \"exclude\".", mm_shorten(name))));
			if (criteria->exclude != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("params key \"filters\" can name one exclude filter"),
						 errdetail("Filters \"%s\" and \"%s\" are both exclude filters.",
								   mm_shorten(criteria->exclude), mm_shorten(name)),
						 errhint("Put the players a player blocks in one attribute.")));
			if (cfg->algorithm == MM_ALGO_OPTIMIZE)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("algorithm \"optimize\" takes no exclude filter"),
						 errdetail("Holding a player out of a round would split its party."),
						 errhint("Use another algorithm for a queue with block lists.")));
			criteria->exclude = name;
			continue;
		}
		if (!param_is_string(&val, "equal") && !param_is_string(&val, "intersect"))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("filter \"%s\" must have the kind \"equal\", \"intersect\" or \"exclude\"", mm_shorten(name)),
					 errdetail("Got %s.", jsonb_value_text(&val)),
					 errhint("%s", def->hint)));
		criteria->intersect[criteria->nfilters] = param_is_string(&val, "intersect");
		criteria->any_intersect |= criteria->intersect[criteria->nfilters];
		criteria->filter[criteria->nfilters++] = name;
	}
}

/*
 * params.roles: an object of 1 to MM_MAX_ROLES role names (1 to 64 bytes)
 * and the places of each in a team (whole numbers from 1), adding up to
 * team_size.
 */
static void
parse_roles(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	JsonbIterator *it;
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;
	int			places = 0;

	if (v->type != jbvBinary || !JsonContainerIsObject(v->val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"roles\" must be a JSON object"),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", def->hint)));
	cfg->roles.n = 0;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		char	   *name;
		int			r = cfg->roles.n;

		if (tok != WJB_KEY)
			continue;
		name = pnstrdup(k.val.string.val, k.val.string.len);
		if (k.val.string.len < 1 || k.val.string.len > 64)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("role names must have 1 to 64 bytes"),
					 errdetail("Got \"%s\".", mm_shorten(name)),
					 errhint("%s", def->hint)));
		if (r >= MM_MAX_ROLES)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params key \"roles\" can name at most %d roles", MM_MAX_ROLES),
					 errhint("Merge roles that share places.")));
		tok = JsonbIteratorNext(&it, &val, true);
		{
			double		d = val.type == jbvNumeric ? param_double(&val) : NAN;

			if (!(d >= 1 && d <= cfg->team_size && d == floor(d)))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("the places of role \"%s\" must be a whole number from 1 to %d (the team size)",
								mm_shorten(name), cfg->team_size),
						 errdetail("Got %s.", jsonb_value_text(&val)),
						 errhint("%s", def->hint)));
			cfg->roles.slots[r] = (int) d;
		}
		places += cfg->roles.slots[r];
		criteria->role[r] = name;
		cfg->roles.n++;
	}
	if (cfg->roles.n == 0 || places != cfg->team_size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the places of params key \"roles\" must add up to the team size, %d", cfg->team_size),
				 errdetail("They add up to %d.", places),
				 errhint("Give each role its places in one team, for example {\"tank\": 1, \"healer\": 1, \"dps\": %d} for teams of %d.",
						 Max(cfg->team_size - 2, 1), cfg->team_size)));
}

/* params.party_rating: "mean" or "max". */
static void
parse_party_rating(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	if (!param_is_string(v, "mean") && !param_is_string(v, "max"))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params key \"%s\" must be %s", def->name, def->expect),
				 errdetail("Got %s.", jsonb_value_text(v)),
				 errhint("%s", def->hint)));
	criteria->party_max = param_is_string(v, "max");
}

/* The queue's params.channel (checked when the params were stored), or NULL. */
char *
mm_channel_read(Jsonb *params)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&params->root, "channel", 7, NULL);

	if (v == NULL || v->type != jbvString)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static void
parse_on_timeout(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	if (param_is_string(v, "bots"))
		cfg->on_timeout = MM_TIMEOUT_BOTS;
	else if (param_is_string(v, "expire"))
		cfg->on_timeout = MM_TIMEOUT_EXPIRE;
	else
		bad_word(v, def);
}

/*
 * Parse the value of a key into its field.  Returns whether the value was
 * the row's word.
 */
static bool
parse_value(JsonbValue *v, const MMParamDef *def, MMConfig *cfg, MMCriteria *criteria)
{
	char	   *field = (char *) cfg + def->offset;

	if (def->kind == MM_PARAM_CUSTOM)
	{
		def->parse(v, def, cfg, criteria);
		return false;
	}
	if (def->word != NULL && param_is_string(v, def->word))
	{
		if (isnan(def->word_value))
			return true;
		if (def->kind == MM_PARAM_INT)
			*(int *) field = (int) def->word_value;
		else
			*(double *) field = def->word_value;
		return true;
	}
	switch (def->kind)
	{
		case MM_PARAM_INT:
			*(int *) field = param_int(v, def->name, (int) def->lo, (int) def->hi, def->expect);
			break;
		case MM_PARAM_UINT64:
			*(uint64_t *) field = (uint64_t) param_int(v, def->name, (int) def->lo, (int) def->hi,
													   def->expect);
			break;
		case MM_PARAM_NUMBER:
			*(double *) field = param_number(v, def->name, def->lo, def->hi, def->expect);
			break;
		case MM_PARAM_BOOL:
			if (v->type != jbvBool)
				bad_word(v, def);
			*(int *) field = v->val.boolean ? 1 : 0;
			break;
		case MM_PARAM_CUSTOM:
			break;
	}
	return false;
}

/* The bit of a key in a set of keys. */
static uint64
param_bit(const char *key)
{
	return UINT64CONST(1) << (param_def(key) - params);
}

/*
 * What follows from every key once all are read: the "auto" forms of
 * shift and widen, and the checks between keys.  numbered: the keys
 * params gave a number rather than their word.
 */
static void
derive_params(MMConfig *cfg, uint64 numbered)
{
	int			k = mm_config_k(cfg);

	cfg->cluster.shift_auto = (numbered & param_bit("shift")) ? 0 : 1;
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
		if (!(numbered & param_bit("widen")))
			cfg->window.widen = Min((cfg->window.max - cfg->window.width) / cfg->max_wait, 1.0);
	}
}

/*
 * Validate params against cfg's algorithm and k and store them in cfg.
 * Unknown keys, keys of another algorithm and ill-typed values are errors,
 * raised in the order of the keys in params.  Absent keys keep the core's
 * defaults (mm_config_init, and mm_config_set_max_wait for cfg's
 * max_wait); *wait_factor_set tells whether params had wait_factor.
 */
void
mm_parse_params(Jsonb *params_jb, MMConfig *cfg, MMCriteria *criteria,
				bool *wait_factor_set)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	uint64		given = 0;
	uint64		numbered = 0;
	MMConfig	shape;

	/* the core's defaults, keeping the algorithm, shape and max_wait set before */
	shape = *cfg;
	mm_config_init(cfg, shape.algorithm);
	cfg->teams = shape.teams;
	cfg->team_size = shape.team_size;
	cfg->arrival_rate = shape.arrival_rate;
	mm_config_set_max_wait(cfg, shape.max_wait);
	memset(criteria, 0, sizeof(MMCriteria));

	if (!JB_ROOT_IS_OBJECT(params_jb) || JB_ROOT_IS_SCALAR(params_jb))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("params must be a JSON object"),
				 errdetail("Got %s.", mm_shorten(JsonbToCString(NULL, &params_jb->root, VARSIZE(params_jb)))),
				 errhint("Pass for example '{\"on_timeout\": \"expire\"}', or '{}' for the defaults.")));

	it = JsonbIteratorInit(&params_jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		const MMParamDef *def;
		uint64		bit;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		def = param_def(key);
		if (def == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown params key \"%s\"", mm_shorten(key)),
					 errhint("%s", keys_hint())));
		check_owner(def, cfg);

		tok = JsonbIteratorNext(&it, &v, true);
		Assert(tok == WJB_VALUE);
		bit = UINT64CONST(1) << (def - params);
		given |= bit;
		if (!parse_value(&v, def, cfg, criteria))
			numbered |= bit;
	}
	*wait_factor_set = (given & param_bit("wait_factor")) != 0;
	derive_params(cfg, numbered);
}
