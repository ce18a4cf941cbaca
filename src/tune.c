/*
 * tune.c
 *		Self-tuning (params.tune): now and then a tick replays the queue's
 *		recent history through the simulator with candidate algorithms and
 *		parameters, adopts the one that would have cost least (eq. 1) when
 *		it beats the queue's own by a margin, and records each decision in
 *		matchmaker.tunings.
 *
 * The history is the players of the queue's matches of the last `over`
 * seconds (the latest matches, MM_TUNE_MAX_PLAYERS / k of them at most), as audit reads
 * it.  Each candidate runs through mm_simulate on that stream; the queue's
 * own configuration is the baseline.  Adopting goes through alter_queue in
 * a subtransaction, so a candidate the queue cannot take (which the
 * candidate list avoids) is recorded as refused and never fails the tick.
 */
#include "matchmaker.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "miscadmin.h"

/* The players a tuning replays at most: those of the latest matches. */
#define MM_TUNE_MAX_PLAYERS 20000

/*
 * The wall-clock time a tuning may spend replaying, in milliseconds: the
 * candidates not replayed by then are left out of this tuning.
 */
#define MM_TUNE_BUDGET_MS 1000

/* Fewer players than this in the history: nothing is adopted. */
#define MM_TUNE_MIN_PLAYERS 50

/* A candidate is adopted when it costs less than this share of the queue's own cost. */
#define MM_TUNE_MARGIN 0.98

/* One configuration tried. */
typedef struct TuneCandidate
{
	MMConfig	cfg;
	char	   *params;			/* its params keys as JSON, besides those kept */
	double		cost;
	int64		games;
	int64		bots;
} TuneCandidate;

/* Whether the tuning of the queue is due at now. */
static bool
tune_due(MMQueue *queue, TimestampTz now)
{
	static SPIPlanPtr plan;
	Oid			argtypes[1] = {TEXTOID};
	Datum		values[1];
	bool		isnull;
	Datum		last;

	mm_keep_plan(&plan,
				 "SELECT pg_catalog.max(tuned_at) FROM matchmaker.tunings "
				 "WHERE queue OPERATOR(pg_catalog.=) $1",
				 1, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	if (SPI_execute_plan(plan, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's last tuning");
	last = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ||
		(double) (now - DatumGetTimestampTz(last)) / USECS_PER_SEC >= queue->tune.every;
}

/* A candidate of algorithm a for the queue, at a's defaults. */
static MMConfig
candidate_config(MMQueue *queue, MMAlgorithm a)
{
	MMConfig	cfg;

	mm_config_init(&cfg, a);
	cfg.teams = queue->cfg.teams;
	cfg.team_size = queue->cfg.team_size;
	cfg.on_timeout = queue->cfg.on_timeout;
	mm_config_set_max_wait(&cfg, queue->cfg.max_wait);
	cfg.criteria = queue->cfg.criteria;
	cfg.min_players = queue->cfg.min_players;
	return cfg;
}

/*
 * Add a candidate with its params keys as JSON, when the queue can take it
 * (per-criterion ranges are multi_queue's own).
 */
static void
add_candidate(const MMConfig *cfg, const char *params, TuneCandidate *c, int *n)
{
	if (cfg->algorithm != MM_ALGO_MULTI_QUEUE)
		for (int d = 1; d <= cfg->criteria.n; d++)
			if (cfg->criteria.ranges[d] != 0)
				return;
	if (mm_config_check(cfg) != MM_OK)
		return;
	c[*n].cfg = *cfg;
	c[*n].params = pstrdup(params);
	(*n)++;
}

/* The candidates of the algorithms in mask: each with a few values of its parameter. */
static int
candidates(MMQueue *queue, uint32 mask, TuneCandidate *c)
{
	int			n = 0;
	int			k = mm_config_k(&queue->cfg);
	double		T = queue->cfg.max_wait;

	for (int a = 0; a < MM_NUM_ALGORITHMS; a++)
	{
		MMConfig	cfg = candidate_config(queue, (MMAlgorithm) a);

		if (!(mask & (1u << a)))
			continue;
		switch ((MMAlgorithm) a)
		{
			case MM_ALGO_PERIODIC:
				add_candidate(&cfg, "{\"batch\": \"auto\"}", c, &n);
				for (int m = 1; m <= 8; m *= 2)
				{
					cfg.periodic.batch = m * k;
					add_candidate(&cfg, psprintf("{\"batch\": %d}", m * k), c, &n);
				}
				break;
			case MM_ALGO_MULTI_QUEUE:
				add_candidate(&cfg, "{\"ranges\": \"auto\"}", c, &n);
				for (int r = 2; r <= 10; r += 2)
				{
					cfg.multi_queue.ranges = r;
					add_candidate(&cfg, psprintf("{\"ranges\": %d}", r), c, &n);
				}
				break;
			case MM_ALGO_DIFFERENCE_WAIT:
				for (double f = 0.05; f <= 0.81; f *= 2)
				{
					cfg.difference_wait.wait_factor = f * T;
					add_candidate(&cfg, psprintf("{\"wait_factor\": %.17g}", f * T), c, &n);
				}
				break;
			case MM_ALGO_WINDOW:
				for (double w = 0.02; w <= 0.17; w *= 2)
				{
					cfg.window.width = w;
					cfg.window.widen = Min((cfg.window.max - w) / T, 1.0);	/* "auto" */
					add_candidate(&cfg, psprintf("{\"window\": %.17g}", w), c, &n);
				}
				break;
			case MM_ALGO_CLUSTER:
				for (double t = 0.02; t <= 0.17; t *= 2)
				{
					cfg.cluster.threshold = t;
					add_candidate(&cfg, psprintf("{\"threshold\": %.17g}", t), c, &n);
				}
				break;
			default:
				add_candidate(&cfg, "{}", c, &n);
				break;
		}
	}
	return n;
}

/* The end of the current tuning's budget, and the interrupt hook it wraps. */
static TimestampTz tune_deadline;
static int	(*tune_outer_interrupt) (void);

/* Stop a replay on the outer hook's request, or when the budget is spent. */
static int
tune_interrupt(void)
{
	if (tune_outer_interrupt != NULL && tune_outer_interrupt())
		return 1;
	return GetCurrentTimestamp() >= tune_deadline;
}

/*
 * Run one configuration over the history; false when the budget ran out
 * first (a cancel or terminate raises its error as usual).
 */
static bool
replay(MMQueue *queue, MMConfig *cfg, const MMArrival *arr, const MMStreamData *data, int n,
	   double *cost, int64 *games, int64 *bots)
{
	MMSimSummary s;
	MMStatus	st;

	if (GetCurrentTimestamp() >= tune_deadline)
		return false;
	mm_stream_rate(cfg, arr, n);
	st = mm_simulate(cfg, arr, data, n, NULL, &s);
	if (st == MM_ERR_INTERRUPTED &&
		!(tune_outer_interrupt != NULL && tune_outer_interrupt()))
		return false;
	if (st != MM_OK)
		mm_status_error(st, psprintf("tuning queue \"%s\"", queue->name),
						psprintf("tuning of queue \"%s\" was interrupted", queue->name), NULL);
	*cost = s.cost;
	*games = s.games;
	*bots = s.bots;
	return true;
}

/* One tried configuration as JSON. */
static void
append_tried(StringInfo buf, const char *algorithm, const char *params, double cost,
			 int64 games, int64 bots, int players)
{
	appendStringInfo(buf, "{\"algorithm\": \"%s\", \"params\": %s, \"cost\": %.6f, "
					 "\"cost_per_player\": %.6f, \"games\": " INT64_FORMAT ", \"bots\": " INT64_FORMAT "}",
					 algorithm, params, cost, players > 0 ? cost / players : 0.0, games, bots);
}

/* What adopt_call needs. */
typedef struct AdoptArgs
{
	MMQueue    *queue;
	const TuneCandidate *c;
} AdoptArgs;

/* alter_queue with the candidate's algorithm and params, keeping the keys every algorithm shares. */
static void
adopt_call(void *arg)
{
	AdoptArgs  *a = arg;
	Oid			argtypes[3] = {TEXTOID, TEXTOID, JSONBOID};
	Datum		values[3];

	values[0] = CStringGetTextDatum(a->queue->name);
	values[1] = CStringGetTextDatum(mm_algorithm_name(a->c->cfg.algorithm));
	values[2] = DirectFunctionCall1(jsonb_in, CStringGetDatum(a->c->params));
	if (SPI_execute_with_args("SELECT matchmaker.alter_queue($1, algorithm => $2, params => "
							  "COALESCE((SELECT pg_catalog.jsonb_object_agg(key, value) "
							  "FROM pg_catalog.jsonb_each(q.params) "
							  "WHERE key OPERATOR(pg_catalog.=) ANY ('{tune,on_timeout,criteria,min_players,accept_timeout,channel,filters}')), '{}') "
							  "OPERATOR(pg_catalog.||) $3) "
							  "FROM matchmaker.queues q WHERE q.name OPERATOR(pg_catalog.=) $1",
							  3, argtypes, values, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not alter the queue");
}

/*
 * Adopt a candidate through alter_queue; returns NULL, or the error's
 * message when the queue refused it (the tick goes on).
 */
static char *
adopt(MMQueue *queue, const TuneCandidate *c)
{
	AdoptArgs	args = {queue, c};
	ErrorData  *failure = mm_in_subtransaction(adopt_call, &args);

	return failure ? failure->message : NULL;
}

/* Write the decision to matchmaker.tunings. */
static void
record(MMQueue *queue, TimestampTz now, int players, const char *current,
	   const char *tried, const char *adopted, const char *note)
{
	Oid			argtypes[7] = {TEXTOID, TIMESTAMPTZOID, INT4OID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};
	Datum		values[7];
	char		nulls[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};

	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(now);
	values[2] = Int32GetDatum(players);
	values[3] = CStringGetTextDatum(current);
	values[4] = CStringGetTextDatum(tried);
	values[5] = adopted ? CStringGetTextDatum(adopted) : (Datum) 0;
	nulls[5] = adopted ? ' ' : 'n';
	values[6] = note ? CStringGetTextDatum(note) : (Datum) 0;
	nulls[6] = note ? ' ' : 'n';
	if (SPI_execute_with_args("INSERT INTO matchmaker.tunings (queue, tuned_at, players, current, tried, adopted, note) "
							  "VALUES ($1, $2, $3, $4::pg_catalog.jsonb, $5::pg_catalog.jsonb, $6::pg_catalog.jsonb, $7)",
							  7, argtypes, values, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the tuning");
}

/* One tuning (see the header comment); errors are mm_tune_queue's to catch. */
static void
tune_run(MMQueue *queue, TimestampTz now)
{
	MMArrival  *arr;
	MMStreamData data;
	int			n;
	int			nc;
	TuneCandidate *c;
	MMConfig	own = queue->cfg;
	double		own_cost;
	int64		own_games;
	int64		own_bots;
	int			best = -1;
	StringInfoData tried;
	StringInfoData current;
	char	   *adopted = NULL;
	char	   *note = NULL;
	char	   *own_params;
	int			skipped = 0;

	arr = mm_read_history(queue, now - (TimestampTz) (queue->tune.over * USECS_PER_SEC), now,
						  Max(MM_TUNE_MAX_PLAYERS / mm_config_k(&queue->cfg), 1), &data, &n);
	{
		bool		isnull;
		Oid			argtypes[1] = {TEXTOID};
		Datum		values[1];

		values[0] = CStringGetTextDatum(queue->name);
		if (SPI_execute_with_args("SELECT params::pg_catalog.text FROM matchmaker.queues "
								  "WHERE name OPERATOR(pg_catalog.=) $1",
								  1, argtypes, values, NULL, true, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "could not read the queue's params");
		own_params = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}

	if (n < MM_TUNE_MIN_PLAYERS)
		note = psprintf("%d players in the history, fewer than %d: nothing replayed or adopted",
						n, MM_TUNE_MIN_PLAYERS);
	else if (!replay(queue, &own, arr, &data, n, &own_cost, &own_games, &own_bots))
		note = psprintf("the queue's own replay took more than the budget of %d ms: nothing adopted",
						MM_TUNE_BUDGET_MS);
	if (note != NULL)
	{
		record(queue, now, n,
			   psprintf("{\"algorithm\": \"%s\", \"params\": %s}",
						mm_algorithm_name(own.algorithm), own_params),
			   "[]", NULL, note);
		return;
	}

	initStringInfo(&current);
	initStringInfo(&tried);
	appendStringInfoChar(&tried, '[');
	append_tried(&current, mm_algorithm_name(own.algorithm), own_params, own_cost,
				 own_games, own_bots, n);

	c = palloc(sizeof(TuneCandidate) * 64);
	nc = candidates(queue, queue->tune.algorithms, c);
	for (int i = 0; i < nc; i++)
	{
		if (!replay(queue, &c[i].cfg, arr, &data, n, &c[i].cost, &c[i].games, &c[i].bots))
		{
			skipped = nc - i;
			break;
		}
		if (i > 0)
			appendStringInfoString(&tried, ", ");
		append_tried(&tried, mm_algorithm_name(c[i].cfg.algorithm), c[i].params, c[i].cost,
					 c[i].games, c[i].bots, n);
		if (best < 0 || c[i].cost < c[best].cost)
			best = i;
	}
	appendStringInfoChar(&tried, ']');

	if (best < 0 || !(c[best].cost < MM_TUNE_MARGIN * own_cost))
		note = psprintf("no candidate costs %d %% less than the queue's own", (int) round(100 * (1 - MM_TUNE_MARGIN)));
	else
	{
		StringInfoData a;

		note = adopt(queue, &c[best]);
		if (note == NULL)
		{
			initStringInfo(&a);
			append_tried(&a, mm_algorithm_name(c[best].cfg.algorithm), c[best].params,
						 c[best].cost, c[best].games, c[best].bots, n);
			adopted = a.data;
		}
		else
			note = psprintf("alter_queue refused the best candidate: %s", note);
	}
	if (skipped > 0)
		note = psprintf("%s%s%d candidates not replayed within the budget of %d ms",
						note ? note : "", note ? "; " : "", skipped, MM_TUNE_BUDGET_MS);
	record(queue, now, n, current.data, tried.data, adopted, note);
}

/* What tune_call needs: tune_run's arguments. */
typedef struct TuneArgs
{
	MMQueue    *queue;
	TimestampTz now;
} TuneArgs;

static void
tune_call(void *arg)
{
	TuneArgs   *a = arg;

	tune_run(a->queue, a->now);
}

/*
 * Tune the queue at time now when its params ask for it and the last
 * tuning is older than tune.every (SPI connected, at the end of a tick).
 * The tuning runs in a subtransaction within a budget of
 * MM_TUNE_BUDGET_MS: whatever goes wrong in it (history the queue's
 * current settings cannot read, for instance) is rolled back, logged and
 * recorded, and never fails the tick; a cancel or terminate still does.
 */
void
mm_tune_queue(MMQueue *queue, TimestampTz now)
{
	TuneArgs	args = {queue, now};
	ErrorData  *volatile failure = NULL;

	if (!queue->tune.on || !mm_table_exists("tunings") || !tune_due(queue, now))
		return;

	tune_deadline = GetCurrentTimestamp() + (TimestampTz) MM_TUNE_BUDGET_MS * 1000;
	tune_outer_interrupt = mm_interrupt;
	mm_interrupt = tune_interrupt;
	PG_TRY();
	{
		failure = mm_in_subtransaction(tune_call, &args);
	}
	PG_FINALLY();
	{
		mm_interrupt = tune_outer_interrupt;
	}
	PG_END_TRY();
	if (failure != NULL)
	{
		ereport(WARNING,
				(errmsg("matchmaker: tuning queue \"%s\" failed: %s", queue->name, failure->message),
				 errhint("The queue keeps its settings; the failure is recorded in matchmaker.tunings.")));
		record(queue, now, 0, "{}", "[]", NULL,
			   psprintf("the tuning failed: %s", failure->message));
		FreeErrorData(failure);
	}
}
