/*
 * simulate.c
 *		Trying parameters on traffic and measuring quality: simulate and
 *		simulate_summary (a queue's algorithm over an arrival stream in
 *		virtual time, through the same core code as tick), optimal_cost
 *		(Schlup's offline optimum OPT for k = 2) and audit (a live queue's
 *		matches against OPT for the same tickets).
 */
#include "matchmaker.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/params.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/plancache.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(mm_simulate_rows);
PG_FUNCTION_INFO_V1(mm_simulate_summary);
PG_FUNCTION_INFO_V1(mm_optimal_cost);
PG_FUNCTION_INFO_V1(mm_audit);

/* Cost of a player given a computer player in OPT: at arrival, q = 1 (2), waits 0 + 1. */
#define MM_OPT_BOT_COST 3.0

/*
 * Largest arrival time, in seconds from any origin, either side of it:
 * about 31,700 years, where a double still resolves a tenth of a
 * millisecond, so that waits (differences of times) keep their meaning.
 */
#define MM_MAX_ARRIVAL	1e12

/* Most players optimal_cost and audit take (see optimal_of). */
#define MM_OPT_MAX_PLAYERS 50000

/*
 * Sorts with the comparison inlined (PostgreSQL's sort template): arrivals
 * by (arrival time, id), and ids.  Both return at once on input that is
 * already in order, as a stream read from a table often is.
 */
#define ST_SORT sort_arrivals
#define ST_ELEMENT_TYPE MMArrival
#define ST_COMPARE(a, b) \
	((a)->arrival != (b)->arrival ? ((a)->arrival < (b)->arrival ? -1 : 1) : \
	 ((a)->id > (b)->id) - ((a)->id < (b)->id))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT sort_ids
#define ST_ELEMENT_TYPE int64
#define ST_COMPARE(a, b) ((*(a) > *(b)) - (*(a) < *(b)))
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/*
 * Receives the rows of an arrivals query straight from the executor into
 * a growing array, without copying each row into an SPI tuple table.  The
 * first invalid row stops the query and is kept in bad, so that its error
 * is raised after the query, without the wrapping query as context.
 */
typedef struct ArrivalReceiver
{
	DestReceiver pub;
	MemoryContext cxt;			/* the caller's: what a row keeps lives there */
	MMQueue    *queue;
	bool		clamp;
	MMArrival  *arr;
	int64		n;
	int64		cap;
	int			natts;			/* 3, or 4 with attributes */
	Oid			id_type;		/* the id column's: int8, int4 or int2 */
	double	   *crit;			/* with the queue's criteria: ncriteria per row */
	Jsonb	  **attrs;			/* optimize: each row's attributes */
	double	   *leaves;			/* simulate: each row's leaves_after, NAN for none */
	char	  **fvalues;		/* with filters: each row's combined values, one after the other */
	int		  **flens;			/* their lengths */
	int		   *fcount;			/* how many: one without intersect filters */
	char	 ***blocks;			/* with an exclude filter: the players each row blocks */
	int		   *nblocks;
	char	  **players;		/* and its player: attributes.player, or its id */
	char	  **pnames;			/* not optimize: each row's attributes.party, or NULL */
	uint8	   *rmask;			/* with roles: each row's role mask */
	const char *bad_filter;		/* the bad row's filter problem, or NULL */
	const char *bad_party;		/* the bad row's party or roles problem, or NULL */
	bool		any_leaves;		/* some row has one */
	bool		has_bad;		/* bad holds the first invalid row */
	bool		bad_nulls[4];
	MMArrival	bad;			/* its values, the rating as given */
	int			bad_criterion;	/* > 0: this criterion of its attributes is wrong */
	bool		bad_leaves;		/* its leaves_after is wrong */
	char	   *bad_leaves_text;	/* what it is, in cxt */
	MMCriterionProblem bad_problem;
	double		bad_got;
} ArrivalReceiver;

/*
 * The stream's filter keys into data, rows[i] being arrival i's row of r:
 * each arrival's key, or with intersect filters its candidate keys.
 */
static void
filter_stream(MMQueue *queue, ArrivalReceiver *r, const int *rows, int n, MMStreamData *data)
{
	int64		total = 0;
	char	  **fvalues;
	int		   *flens;
	int32	   *start;
	MMFilterDict dict;

	for (int i = 0; i < n; i++)
		total += r->fcount[rows[i]];
	if (total > PG_INT32_MAX / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the arrivals have more than %d combinations of filter values", PG_INT32_MAX / 2)));
	fvalues = palloc_extended(sizeof(char *) * Max(total, 1), MCXT_ALLOC_HUGE);
	flens = palloc_extended(sizeof(int) * Max(total, 1), MCXT_ALLOC_HUGE);
	start = palloc_extended(sizeof(int32) * (n + 1), MCXT_ALLOC_HUGE);
	total = 0;
	for (int i = 0; i < n; i++)
	{
		int			row = rows[i];
		int			at = 0;

		start[i] = (int32) total;
		for (int c = 0; c < r->fcount[row]; c++)
		{
			fvalues[total] = r->fvalues[row] + at;
			flens[total++] = r->flens[row][c];
			at += r->flens[row][c];
		}
	}
	start[n] = (int32) total;
	if (!queue->criteria.any_intersect && !queue->criteria.any_relax)
		data->key = mm_filter_number(fvalues, flens, n, &dict);
	else
	{
		data->cand = mm_filter_number(fvalues, flens, (int) total, &dict);
		data->cand_start = start;
		data->ncand_keys = Max(dict.n, 1);
		data->nfilters = queue->criteria.nfilters;
		data->key_values = mm_filter_key_values(queue, &dict);
		if (queue->criteria.any_relax)
			data->relax_after = mm_filter_relax_seconds(queue);
	}
}

/*
 * The stream's block lists into data (an exclude filter): an arrival's
 * player is its attributes' "player", or else its id written in decimal.
 */
static void
exclude_stream(ArrivalReceiver *r, const int *rows, int n, MMStreamData *data)
{
	char	  **players = palloc_extended(sizeof(char *) * Max(n, 1), MCXT_ALLOC_HUGE);
	char	 ***names = palloc_extended(sizeof(char **) * Max(n, 1), MCXT_ALLOC_HUGE);
	int		   *nnames = palloc_extended(sizeof(int) * Max(n, 1), MCXT_ALLOC_HUGE);
	int32	   *player;
	int32	   *start;
	int32	   *block;

	for (int i = 0; i < n; i++)
	{
		players[i] = r->players[rows[i]];
		names[i] = r->blocks[rows[i]];
		nnames[i] = r->nblocks[rows[i]];
	}
	mm_exclude_rows(players, names, nnames, n, &player, &start, &block);
	data->player = player;
	data->block_start = start;
	data->block = block;
}

/*
 * An arrival's leaves_after attribute (simulate's backfill): NAN when
 * absent or null; a bad one sets *bad and copies it into *got.
 */
static double
arrival_leaves_after(Jsonb *attributes, bool *bad, JsonbValue *got)
{
	JsonbValue	k;
	JsonbValue *v;
	double		x;

	k.type = jbvString;
	k.val.string.val = "leaves_after";
	k.val.string.len = strlen("leaves_after");
	v = findJsonbValueFromContainer(&attributes->root, JB_FOBJECT, &k);
	if (v == NULL || v->type == jbvNull)
		return NAN;
	if (v->type == jbvNumeric)
	{
		x = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
											   NumericGetDatum(v->val.numeric)));
		if (x > 0.0 && x <= MM_MAX_ARRIVAL)
			return x;
	}
	*bad = true;
	*got = *v;
	return NAN;
}

/*
 * A past ticket's rating normalised by the queue's range now, clamped into
 * it (alter_queue may have narrowed the range since).
 */
static double
past_rating(const MMQueue *queue, double rating)
{
	double		x = (rating - queue->rating_min) / (queue->rating_max - queue->rating_min);

	return Min(Max(x, 0.0), 1.0);
}

/*
 * The executor calls this in its per-query memory context, which ends
 * with the query: what a row keeps (optimize's attributes, the filter
 * values) is allocated in the caller's context, r->cxt.
 */
static bool
arrival_receive(TupleTableSlot *slot, DestReceiver *self)
{
	ArrivalReceiver *r = (ArrivalReceiver *) self;
	MMQueue    *queue = r->queue;
	MMArrival  *a;
	bool	   *nulls;
	Datum	   *v;
	double		rating;

	slot_getsomeattrs(slot, r->natts);
	v = slot->tts_values;
	nulls = slot->tts_isnull;
	if (r->n >= r->cap)
	{
		if (r->cap >= INT_MAX / 2)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many arrivals"),
					 errhint("Simulate at most %d arrivals at a time.", INT_MAX / 2)));
		r->cap = Min(r->cap * 2, INT_MAX / 2);
		r->arr = repalloc_huge(r->arr, sizeof(MMArrival) * r->cap);
		if (r->crit != NULL)
			r->crit = repalloc_huge(r->crit, sizeof(double) * r->cap * queue->cfg.criteria.n);
		if (r->attrs != NULL)
			r->attrs = repalloc_huge(r->attrs, sizeof(Jsonb *) * r->cap);
		if (r->leaves != NULL)
			r->leaves = repalloc_huge(r->leaves, sizeof(double) * r->cap);
		if (r->pnames != NULL)
			r->pnames = repalloc_huge(r->pnames, sizeof(char *) * r->cap);
		if (r->rmask != NULL)
			r->rmask = repalloc_huge(r->rmask, sizeof(uint8) * r->cap);
		if (r->fvalues != NULL)
		{
			r->fvalues = repalloc_huge(r->fvalues, sizeof(char *) * r->cap);
			r->flens = repalloc_huge(r->flens, sizeof(int *) * r->cap);
			r->fcount = repalloc_huge(r->fcount, sizeof(int) * r->cap);
			if (r->blocks != NULL)
			{
				r->blocks = repalloc_huge(r->blocks, sizeof(char **) * r->cap);
				r->nblocks = repalloc_huge(r->nblocks, sizeof(int) * r->cap);
				r->players = repalloc_huge(r->players, sizeof(char *) * r->cap);
			}
		}
	}
	a = &r->arr[r->n];
	if (nulls[0] || nulls[1] || nulls[2] || (r->natts > 3 && nulls[3]))
	{
		memcpy(r->bad_nulls, nulls, sizeof(r->bad_nulls));
		r->has_bad = true;
		return false;
	}
	a->id = r->id_type == INT4OID ? DatumGetInt32(v[0]) :
		r->id_type == INT2OID ? DatumGetInt16(v[0]) : DatumGetInt64(v[0]);
	rating = DatumGetFloat8(v[1]);
	a->arrival = DatumGetFloat8(v[2]);
	if (r->clamp)
		a->rating = past_rating(queue, rating);
	else if (isfinite(rating) && rating >= queue->rating_min && rating <= queue->rating_max)
		a->rating = (rating - queue->rating_min) / (queue->rating_max - queue->rating_min);
	else
	{
		r->bad = *a;
		r->bad.rating = rating;
		r->has_bad = true;
		return false;
	}
	if (!isfinite(a->arrival) || fabs(a->arrival) > MM_MAX_ARRIVAL)
	{
		r->bad = *a;
		r->bad.rating = rating;
		r->has_bad = true;
		return false;
	}
	if (r->attrs != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(r->cxt);

		r->attrs[r->n] = DatumGetJsonbPCopy(v[3]);
		MemoryContextSwitchTo(old);
	}
	if (r->leaves != NULL)
	{
		JsonbValue	got = {0};

		r->leaves[r->n] = arrival_leaves_after(DatumGetJsonbP(v[3]), &r->bad_leaves, &got);
		r->any_leaves |= !isnan(r->leaves[r->n]);
		if (r->bad_leaves)
		{
			/* the value lives in the executor's memory, which the query's end frees */
			r->bad_leaves_text = MemoryContextStrdup(r->cxt, got.type == jbvNumeric
													 ? DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(got.val.numeric)))
													 : "that is not a number");
			r->bad = *a;
			r->has_bad = true;
			return false;
		}
	}
	if (r->fvalues != NULL)
	{
		StringInfoData buf;
		const char *problem;

		int			lens[MM_FILTER_COMBOS_MAX];
		int			nc = 1;

		/* built in the executor's memory, kept at its size in the caller's */
		initStringInfo(&buf);
		problem = mm_filter_values(queue, DatumGetJsonbP(v[3]), &buf, lens, &nc);
		if (problem != NULL && r->clamp)
		{
			/* past tickets from before the filters: a key of their own */
			resetStringInfo(&buf);
			appendStringInfoChar(&buf, (char) 0xFF);
			lens[0] = 1;
			nc = 1;
			problem = NULL;
		}
		else if (problem != NULL)
		{
			r->bad = *a;
			r->bad_filter = MemoryContextStrdup(r->cxt, problem);
			r->has_bad = true;
			return false;
		}
		if (r->blocks != NULL)
		{
			JsonbValue	names[MM_EXCLUDE_MAX];
			int			nn = 0;

			/* checked with the values above; none for past tickets without one */
			if (mm_exclude_names(queue, DatumGetJsonbP(v[3]), names, &nn) != NULL)
				nn = 0;
			{
				JsonbValue *pv = getKeyJsonValueFromContainer(&DatumGetJsonbP(v[3])->root, "player", 6, NULL);

				r->players[r->n] = pv != NULL && pv->type == jbvString
					? MemoryContextStrdup(r->cxt, pnstrdup(pv->val.string.val, pv->val.string.len))
					: MemoryContextStrdup(r->cxt, psprintf(INT64_FORMAT, a->id));
			}
			r->nblocks[r->n] = nn;
			r->blocks[r->n] = MemoryContextAlloc(r->cxt, sizeof(char *) * Max(nn, 1));
			for (int j = 0; j < nn; j++)
				r->blocks[r->n][j] = MemoryContextStrdup(r->cxt,
														 pnstrdup(names[j].val.string.val, names[j].val.string.len));
		}
		r->fvalues[r->n] = MemoryContextAlloc(r->cxt, Max(buf.len, 1));
		memcpy(r->fvalues[r->n], buf.data, buf.len);
		r->flens[r->n] = MemoryContextAlloc(r->cxt, sizeof(int) * nc);
		memcpy(r->flens[r->n], lens, sizeof(int) * nc);
		r->fcount[r->n] = nc;
		pfree(buf.data);
	}
	if (r->pnames != NULL)
	{
		JsonbValue *pv = getKeyJsonValueFromContainer(&DatumGetJsonbP(v[3])->root, "party", 5, NULL);

		r->pnames[r->n] = NULL;
		if (pv != NULL && (pv->type != jbvString || pv->val.string.len < 1 || pv->val.string.len > 64))
		{
			r->bad = *a;
			r->bad_party = "attribute \"party\" must be a string of 1 to 64 bytes, the party's name";
			r->has_bad = true;
			return false;
		}
		if (pv != NULL)
			r->pnames[r->n] = MemoryContextStrdup(r->cxt, pnstrdup(pv->val.string.val, pv->val.string.len));
	}
	if (r->rmask != NULL)
	{
		const char *problem = mm_roles_problem(queue, DatumGetJsonbP(v[3]), &r->rmask[r->n]);

		/* past tickets from before the roles: any role */
		if (problem != NULL && r->clamp)
			r->rmask[r->n] = (uint8) ((1 << queue->cfg.roles.n) - 1);
		else if (problem != NULL)
		{
			r->bad = *a;
			r->bad_party = MemoryContextStrdup(r->cxt, problem);
			r->has_bad = true;
			return false;
		}
	}
	if (r->crit != NULL)
	{
		r->bad_criterion = mm_criteria_read(queue, DatumGetJsonbP(v[3]),
											r->crit + (Size) r->n * queue->cfg.criteria.n,
											&r->bad_problem, &r->bad_got);
		if (r->bad_criterion > 0)
		{
			r->bad = *a;
			r->has_bad = true;
			return false;
		}
	}
	r->n++;
	return true;
}

/* Raise the error of the invalid row a receiver stopped at. */
static void
arrival_raise_bad(ArrivalReceiver *r)
{
	bool	   *nulls = r->bad_nulls;

	if (nulls[0] || nulls[1] || nulls[2] || nulls[3])
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("arrivals must not contain nulls"),
				 errdetail("Row %lld has a null %s.", (long long) r->n + 1,
						   nulls[0] ? "id" : nulls[1] ? "rating" : nulls[2] ? "arrival" : "attributes"),
				 errhint("Every arrival needs an id, a rating and an arrival time in seconds (and attributes, '{}' for none, when the query returns them).")));
	if (r->bad_criterion > 0)
		mm_criteria_report(r->queue, r->bad_criterion, r->bad_problem, r->bad_got,
						   psprintf("arrival %lld's", (long long) r->bad.id));
	if (r->bad_filter != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival %lld's %s, for queue \"%s\"", (long long) r->bad.id, r->bad_filter,
						r->queue->name),
				 errdetail("%s", mm_filter_detail(r->queue)),
				 errhint("Return the attributes as enqueue would get them.")));
	if (r->bad_party != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival %lld's %s, for queue \"%s\"", (long long) r->bad.id, r->bad_party,
						r->queue->name),
				 r->queue->cfg.roles.n > 0 ? errdetail("%s", mm_roles_detail(r->queue)) : 0,
				 errhint("Name a party's players' party in their attributes, for example '{\"party\": \"p1\"}', and with roles list each player's, for example '{\"roles\": [\"dps\"]}'.")));
	if (r->bad_leaves)
	{
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("leaves_after must be a number of seconds above 0 and at most 1e12"),
				 errdetail("Arrival %lld has leaves_after %s.", (long long) r->bad.id, r->bad_leaves_text),
				 errhint("Give the seconds after its match forms at which the player leaves it, or leave the key out (or null) for a player who stays.")));
	}
	if (!r->clamp)
		(void) mm_normalise_rating(r->queue, r->bad.rating, "arrival rating");
	if (!isfinite(r->bad.arrival))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrival times must be finite"),
				 errdetail("Arrival %lld has time %s.", (long long) r->bad.id, mm_float_text(r->bad.arrival)),
				 errhint("Give arrival times in seconds from any origin.")));
	if (fabs(r->bad.arrival) > MM_MAX_ARRIVAL)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("arrival times must lie between -1e12 and 1e12 seconds"),
				 errdetail("Arrival %lld has time %s.", (long long) r->bad.id, mm_float_text(r->bad.arrival)),
				 errhint("Give arrival times in seconds, not milliseconds or microseconds, for example counted from the first arrival.")));
	elog(ERROR, "arrival row %lld stopped the query without a reason", (long long) r->n + 1);
}

static void
arrival_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	if (typeinfo->natts != ((ArrivalReceiver *) self)->natts)
		elog(ERROR, "the arrivals query must return %d columns", ((ArrivalReceiver *) self)->natts);
}

static void
arrival_shutdown(DestReceiver *self)
{
}

static void
arrival_destroy(DestReceiver *self)
{
}

/* Order row numbers by their arrivals' (arrival, id). */
static int
arrival_row_cmp(const void *a, const void *b, void *arg)
{
	const MMArrival *x = &((const MMArrival *) arg)[*(const int *) a];
	const MMArrival *y = &((const MMArrival *) arg)[*(const int *) b];

	if (x->arrival != y->arrival)
		return x->arrival < y->arrival ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Reports which arrival's attributes an error is about. */
static void
arrival_error_context(void *arg)
{
	errcontext("attributes of arrival %lld", (long long) *(const int64 *) arg);
}

/* A party's or a region's name with an arrival (and its ping to the region). */
typedef struct NamedRow
{
	const char *name;
	int			len;
	int			row;
	float		ms;
} NamedRow;

/* Order NamedRow by name. */
static int
named_row_cmp(const void *a, const void *b)
{
	const NamedRow *x = a;
	const NamedRow *y = b;
	int			c = memcmp(x->name, y->name, Min(x->len, y->len));

	if (c != 0)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* Most distinct regions the pings of a simulated optimize stream may name. */
#define MM_SIM_MAX_REGIONS 256

/*
 * optimize's parties and pings of n arrivals from their attributes, as a
 * live round reads them from the tickets: parties numbered by name (one
 * number per name over the stream), regions by name, each arrival its own
 * row of pings (NAN where it gave none).
 */
static void
optimize_stream(Jsonb **attrs, const MMArrival *arr, int n, MMStreamData *data)
{
	int32	   *party = palloc_extended(sizeof(int32) * Max(n, 1), MCXT_ALLOC_HUGE);
	NamedRow   *names = palloc_extended(sizeof(NamedRow) * Max(n, 1), MCXT_ALLOC_HUGE);
	int			nnames = 0;
	NamedRow   *rows = palloc(sizeof(NamedRow) * 64);	/* (region, arrival, ms) */
	int			npings = 0;
	int			cap = 64;
	int			nregions = 0;
	float	   *table;
	int64		id = 0;
	ErrorContextCallback ctx;

	ctx.callback = arrival_error_context;
	ctx.arg = &id;
	ctx.previous = error_context_stack;
	error_context_stack = &ctx;
	for (int i = 0; i < n; i++)
	{
		JsonbValue *p;
		JsonbValue *g;

		id = arr[i].id;
		party[i] = -1;
		mm_optimize_attributes(attrs[i], &p, &g);
		if (p != NULL)
		{
			names[nnames].name = p->val.string.val;
			names[nnames].len = p->val.string.len;
			names[nnames].row = i;
			nnames++;
		}
		if (g != NULL)
		{
			JsonbIterator *it = JsonbIteratorInit(g->val.binary.data);
			JsonbValue	v;
			JsonbIteratorToken tok;

			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok == WJB_KEY)
				{
					if (npings == cap)
					{
						cap *= 2;
						rows = repalloc_huge(rows, sizeof(NamedRow) * cap);
					}
					rows[npings].name = v.val.string.val;
					rows[npings].len = v.val.string.len;
					rows[npings].row = i;
				}
				else if (tok == WJB_VALUE)
					rows[npings++].ms = (float) DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
																				   NumericGetDatum(v.val.numeric)));
			}
		}
	}
	error_context_stack = ctx.previous;

	/* parties: one number per name */
	qsort(names, nnames, sizeof(NamedRow), named_row_cmp);
	for (int i = 0, num = -1; i < nnames; i++)
	{
		if (i == 0 || named_row_cmp(&names[i - 1], &names[i]) != 0)
			num++;
		party[names[i].row] = num;
	}
	data->party = party;

	/* pings: regions numbered by name */
	if (npings == 0)
		return;
	qsort(rows, npings, sizeof(NamedRow), named_row_cmp);
	for (int i = 0; i < npings; i++)
		if (i == 0 || named_row_cmp(&rows[i - 1], &rows[i]) != 0)
			nregions++;
	if (nregions > MM_SIM_MAX_REGIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the arrivals' pings name %d regions", nregions),
				 errdetail("A simulation takes at most %d distinct regions.", MM_SIM_MAX_REGIONS),
				 errhint("Give the pings to the game's server regions only.")));
	table = palloc_extended(sizeof(float) * (Size) n * nregions, MCXT_ALLOC_HUGE);
	for (Size i = 0; i < (Size) n * nregions; i++)
		table[i] = NAN;
	for (int i = 0, region = -1; i < npings; i++)
	{
		if (i == 0 || named_row_cmp(&rows[i - 1], &rows[i]) != 0)
			region++;
		table[(Size) rows[i].row * nregions + region] = rows[i].ms;
	}
	data->ping = table;
	data->nregions = nregions;
}

/*
 * Parties and roles of a stream, rows[i] being arrival i's row of r: each
 * arrival's role mask, and the parties its attributes name ("party": one
 * name per party over the stream), at the party's rating
 * (params.party_rating).  A party's players arrive at one instant, and it
 * must fit a team; past tickets (clamp) whose party does not play alone.
 */
static void
party_stream(MMQueue *queue, ArrivalReceiver *r, const int *rows, MMArrival *arr, int n,
			 MMStreamData *data)
{
	uint8	   *masks = NULL;
	int32	   *party;
	NamedRow   *names;
	int			nnames = 0;
	int32		next = 0;

	if (r->rmask != NULL)
	{
		masks = palloc_extended(sizeof(uint8) * Max(n, 1), MCXT_ALLOC_HUGE);
		for (int i = 0; i < n; i++)
			masks[i] = r->rmask[rows[i]];
		data->roles = masks;
	}
	if (r->pnames == NULL)
		return;
	party = palloc_extended(sizeof(int32) * Max(n, 1), MCXT_ALLOC_HUGE);
	names = palloc_extended(sizeof(NamedRow) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
	{
		party[i] = -1;
		if (r->pnames[rows[i]] != NULL)
		{
			names[nnames].name = r->pnames[rows[i]];
			names[nnames].len = strlen(r->pnames[rows[i]]);
			names[nnames].row = i;
			nnames++;
		}
	}
	qsort(names, nnames, sizeof(NamedRow), named_row_cmp);
	for (int b = 0; b < nnames;)
	{
		int			e = b + 1;
		const char *problem = NULL;

		while (e < nnames && named_row_cmp(&names[b], &names[e]) == 0)
			e++;
		for (int j = b + 1; j < e && problem == NULL; j++)
			if (arr[names[j].row].arrival != arr[names[b].row].arrival)
				problem = "arrive at different times; a party enters all at once";
		if (problem == NULL && e - b > queue->cfg.team_size)
			problem = psprintf("are %d, more than a team of %d", e - b, queue->cfg.team_size);
		if (problem == NULL && masks != NULL)
		{
			uint8	   *pm = palloc(e - b);

			for (int j = b; j < e; j++)
				pm[j - b] = masks[names[j].row];
			if (!mm_party_fits(&queue->cfg, e - b, pm))
				problem = "cannot take different places of one team";
			pfree(pm);
		}
		if (problem != NULL && !r->clamp)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("the players of party \"%s\" %s", mm_shorten(names[b].name), problem),
					 errdetail("Arrival %lld is one of them.", (long long) arr[names[b].row].id),
					 errhint("Give a party's players one arrival time, at most a team of them, with roles they can fill together.")));
		if (problem == NULL && e - b > 1)
		{
			for (int j = b; j < e; j++)
				party[names[j].row] = next;
			next++;
		}
		b = e;
	}
	pfree(names);
	if (next > 0 && queue->cfg.algorithm != MM_ALGO_OPTIMIZE)
	{
		double	   *rating = palloc_extended(sizeof(double) * Max(n, 1), MCXT_ALLOC_HUGE);
		int		   *order = palloc_extended(sizeof(int) * Max(n, 1), MCXT_ALLOC_HUGE);

		for (int i = 0; i < n; i++)
			rating[i] = arr[i].rating;
		mm_party_ratings(queue, n, party, rating, order);
		for (int i = 0; i < n; i++)
			arr[i].rating = rating[i];
		pfree(rating);
		pfree(order);
	}
	data->party = party;
}

/* The type of a prepared query's result column i. */
static Oid
col_type(CachedPlanSource *source, int i)
{
	return TupleDescAttr(source->resultDesc, i)->atttypid;
}

/*
 * Read arrivals from a prepared statement with its parameters (SPI
 * connected): rows of (id bigint, rating float8, arrival float8) with the
 * arrival in seconds on any origin, and with natts 4 the attributes
 * (jsonb).  Returns them with ratings normalised by the queue (a rating
 * outside its range is an error, or with clamp is clamped into it),
 * sorted by (arrival, id).  With attributes, data gets what they tell the
 * queue's algorithm (criteria; optimize's parties and pings), in the
 * arrivals' sorted order.
 */
static MMArrival *
read_arrivals_plan(MMQueue *queue, SPIPlanPtr plan, ParamListInfo params, bool clamp,
				   int natts, MMStreamData *data, int *n_out)
{
	ArrivalReceiver r = {0};
	SPIExecuteOptions opts = {0};
	int64	   *ids;
	int			n;
	int			rc;

	memset(data, 0, sizeof(MMStreamData));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the arrivals query must be a single query that returns rows"),
				 errhint("Pass one SELECT of (id, rating, arrival), without a trailing statement.")));
	r.pub.receiveSlot = arrival_receive;
	r.pub.rStartup = arrival_startup;
	r.pub.rShutdown = arrival_shutdown;
	r.pub.rDestroy = arrival_destroy;
	r.pub.mydest = DestNone;
	r.cxt = CurrentMemoryContext;
	r.queue = queue;
	r.clamp = clamp;
	r.natts = natts;
	r.id_type = col_type(linitial(SPI_plan_get_plan_sources(plan)), 0);
	r.cap = 1024;
	r.arr = palloc(sizeof(MMArrival) * r.cap);
	if (natts > 3 && queue->cfg.criteria.n > 0)
		r.crit = palloc(sizeof(double) * r.cap * queue->cfg.criteria.n);
	if (natts > 3 && queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
		r.attrs = palloc(sizeof(Jsonb *) * r.cap);
	if (natts > 3 && !clamp)
		r.leaves = palloc(sizeof(double) * r.cap);
	if (natts > 3 && mm_filters_any(queue))
	{
		r.fvalues = palloc(sizeof(char *) * r.cap);
		r.flens = palloc(sizeof(int *) * r.cap);
		r.fcount = palloc(sizeof(int) * r.cap);
	}
	if (natts > 3 && queue->cfg.algorithm != MM_ALGO_OPTIMIZE)
		r.pnames = palloc(sizeof(char *) * r.cap);
	if (natts > 3 && queue->cfg.roles.n > 0)
		r.rmask = palloc(sizeof(uint8) * r.cap);
	if (natts > 3 && queue->criteria.exclude != NULL)
	{
		r.blocks = palloc(sizeof(char **) * r.cap);
		r.nblocks = palloc(sizeof(int) * r.cap);
		r.players = palloc(sizeof(char *) * r.cap);
	}
	opts.params = params;
	opts.read_only = true;
	opts.dest = &r.pub;
	/* SPI reports a SELECT into a receiver of its own as SPI_OK_UTILITY */
	rc = SPI_execute_plan_extended(plan, &opts);
	if (rc < 0)
		elog(ERROR, "could not run the arrivals query: %s", SPI_result_code_string(rc));
	if (r.has_bad)
		arrival_raise_bad(&r);
	n = (int) r.n;

	/* ids must be unique: they name the players in the output */
	ids = palloc(sizeof(int64) * Max(n, 1));
	for (int i = 0; i < n; i++)
		ids[i] = r.arr[i].id;
	sort_ids(ids, n);
	for (int i = 1; i < n; i++)
		if (ids[i] == ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("arrival id %lld appears more than once", (long long) ids[i]),
					 errhint("Give every arrival its own id.")));
	pfree(ids);

	if (!r.any_leaves && r.leaves != NULL)
	{
		pfree(r.leaves);
		r.leaves = NULL;
	}
	if (r.pnames != NULL)
	{
		bool		any = false;

		for (int i = 0; i < n && !any; i++)
			any = r.pnames[i] != NULL;
		if (!any)
			r.pnames = NULL;
	}
	if (r.crit != NULL || r.attrs != NULL || r.leaves != NULL || r.fvalues != NULL ||
		r.pnames != NULL || r.rmask != NULL)
	{
		/* the criteria and attributes follow their arrivals through the sort */
		int			nc = queue->cfg.criteria.n;
		int		   *rows = palloc(sizeof(int) * Max(n, 1));
		MMArrival  *sorted = palloc_extended(sizeof(MMArrival) * Max(n, 1), MCXT_ALLOC_HUGE);

		for (int i = 0; i < n; i++)
			rows[i] = i;
		qsort_arg(rows, n, sizeof(int), arrival_row_cmp, r.arr);
		for (int i = 0; i < n; i++)
			sorted[i] = r.arr[rows[i]];
		if (r.crit != NULL)
		{
			double	   *crit = palloc_extended(sizeof(double) * Max(n, 1) * nc, MCXT_ALLOC_HUGE);

			for (int i = 0; i < n; i++)
				memcpy(crit + (Size) i * nc, r.crit + (Size) rows[i] * nc, sizeof(double) * nc);
			pfree(r.crit);
			data->criteria = crit;
		}
		if (r.attrs != NULL)
		{
			Jsonb	  **attrs = palloc_extended(sizeof(Jsonb *) * Max(n, 1), MCXT_ALLOC_HUGE);

			for (int i = 0; i < n; i++)
				attrs[i] = r.attrs[rows[i]];
			optimize_stream(attrs, sorted, n, data);
		}
		if (r.fvalues != NULL)
			filter_stream(queue, &r, rows, n, data);
		if (r.blocks != NULL)
			exclude_stream(&r, rows, n, data);
		if (r.pnames != NULL || r.rmask != NULL)
			party_stream(queue, &r, rows, sorted, n, data);
		if (r.leaves != NULL)
		{
			double	   *leaves = palloc_extended(sizeof(double) * Max(n, 1), MCXT_ALLOC_HUGE);

			for (int i = 0; i < n; i++)
				leaves[i] = r.leaves[rows[i]];
			pfree(r.leaves);
			data->leaves_after = leaves;
		}
		pfree(rows);
		pfree(r.arr);
		*n_out = n;
		return sorted;
	}
	sort_arrivals(r.arr, n);
	*n_out = n;
	return r.arr;
}

/*
 * Run a user's arrivals query: it must return three columns, castable to
 * bigint (id), float8 (rating on the queue's scale) and float8 (arrival in
 * seconds), and a fourth, jsonb (the player's attributes), for a queue
 * with criteria.  The query is the caller's own SQL, run as the caller.
 */
static MMArrival *
read_arrivals(MMQueue *queue, const char *query, MMStreamData *data, int *n_out)
{
	int			natts;
	Oid			id_type;
	int			start;
	int			len;

	char	   *sql;
	SPIPlanPtr	plan;
	List	   *sources;
	CachedPlanSource *source;

	/*
	 * Prepare the query alone first, so that its own errors quote it as
	 * written, and check its shape: one statement that returns rows, of
	 * three columns.
	 */
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the arrivals query: %s", SPI_result_code_string(SPI_result));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrivals must be one query"),
				 errdetail("Got %d statements.", list_length(sources)),
				 errhint("Pass one SELECT or VALUES query of (id, rating, arrival).")));
	source = linitial(sources);
	if (source->commandTag != CMDTAG_SELECT || source->resultDesc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrivals must be a SELECT or VALUES query"),
				 source->commandTag == CMDTAG_SELECT ?
				 errdetail("The statement returns no rows.") :
				 errdetail("The statement is %s.", GetCommandTagName(source->commandTag)),
				 errhint("Pass one SELECT or VALUES query of (id, rating, arrival).")));
	natts = source->resultDesc->natts;
	if (natts != 3 && natts != 4)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrivals must return three or four columns"),
				 errdetail("The query returns %d columns.", natts),
				 errhint("Return (id, rating, arrival): a bigint id, a rating on the queue's scale and an arrival time in seconds, and the attributes (jsonb) for a queue with criteria.")));
	if (natts == 4 && TupleDescAttr(source->resultDesc, 3)->atttypid != JSONBOID &&
		TupleDescAttr(source->resultDesc, 3)->atttypid != JSONOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the fourth column of arrivals must be the attributes, of type jsonb"),
				 errdetail("The query's fourth column is of type %s.",
						   format_type_be(TupleDescAttr(source->resultDesc, 3)->atttypid)),
				 errhint("Return (id, rating, arrival, attributes), the attributes as enqueue would get them.")));
	if (natts == 3 && (queue->cfg.criteria.n > 0 || queue->criteria.nfilters > 0 || queue->cfg.roles.n > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("arrivals must return the players' attributes for queue \"%s\"", queue->name),
				 errdetail("The queue also matches players on %s, read from their attributes.",
						   queue->cfg.criteria.n > 0 ? mm_criteria_names(queue) :
						   queue->cfg.roles.n > 0 ? "roles" : mm_filter_names(queue)),
				 errhint("Return (id, rating, arrival, attributes), the attributes as enqueue would get them.")));

	if (source->query_list != NIL && ((Query *) linitial(source->query_list))->hasModifyingCTE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("arrivals must not modify data"),
				 errdetail("The query has a WITH clause that inserts, updates or deletes."),
				 errhint("Pass one SELECT or VALUES query of (id, rating, arrival).")));

	/*
	 * Columns of the types read as they are run the query itself, planned
	 * once and without a projection; others are cast to them in a query
	 * around it, of the statement's own text (without a trailing
	 * semicolon) and a line break, which ends a trailing comment.
	 */
	id_type = col_type(source, 0);
	if ((id_type == INT8OID || id_type == INT4OID || id_type == INT2OID) &&
		col_type(source, 1) == FLOAT8OID && col_type(source, 2) == FLOAT8OID &&
		(natts == 3 || col_type(source, 3) == JSONBOID))
		return read_arrivals_plan(queue, plan, NULL, false, natts, data, n_out);
	start = Max(source->raw_parse_tree->stmt_location, 0);
	len = source->raw_parse_tree->stmt_len > 0 ? source->raw_parse_tree->stmt_len :
		(int) strlen(query + start);
	sql = psprintf("SELECT a.id::pg_catalog.int8, a.rating::pg_catalog.float8, "
				   "a.arrival::pg_catalog.float8%s FROM (%.*s\n) AS a(id, rating, arrival%s)",
				   natts == 4 ? ", a.attributes::pg_catalog.jsonb" : "", len, query + start,
				   natts == 4 ? ", attributes" : "");
	SPI_freeplan(plan);
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the arrivals query: %s", SPI_result_code_string(SPI_result));
	return read_arrivals_plan(queue, plan, NULL, false, natts, data, n_out);
}

/*
 * The queue's configuration with params overriding its own (keys of the
 * override replace the queue's), validated like create_queue's.
 */
static void
simulation_config(MMQueue *queue, Jsonb *override)
{
	if (override != NULL)
	{
		Datum		merged;
		bool		isnull;
		Oid			argtypes[2] = {TEXTOID, JSONBOID};
		Datum		values[2];
		char	   *sql = "SELECT params OPERATOR(pg_catalog.||) $2 FROM matchmaker.queues "
			"WHERE name OPERATOR(pg_catalog.=) $1::pg_catalog.text";

		values[0] = CStringGetTextDatum(queue->name);
		values[1] = JsonbPGetDatum(override);
		if (!JB_ROOT_IS_OBJECT(override) || JB_ROOT_IS_SCALAR(override))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("params must be a JSON object"),
					 errhint("Pass for example '{\"batch\": 8}', or NULL for the queue's own params.")));
		if (SPI_execute_with_args(sql, 2, argtypes, values, NULL, true, 1) != SPI_OK_SELECT ||
			SPI_processed != 1)
			elog(ERROR, "could not merge params");
		merged = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		mm_parse_params(DatumGetJsonbP(merged), &queue->cfg, &queue->criteria,
						&queue->wait_factor_set);
	}
}

/*
 * A batch or range count of "auto" is taken from the stream's mean arrival
 * rate (auto measures its own as it goes).
 */
void
mm_stream_rate(MMConfig *cfg, const MMArrival *arr, int n)
{
	if (n >= 2 && arr[n - 1].arrival > arr[0].arrival)
		cfg->arrival_rate = Min((n - 1) / (arr[n - 1].arrival - arr[0].arrival), 1e9);
	else
		cfg->arrival_rate = 0;
}

/* Run the simulation of a call's arguments; fills outcomes and summary. */
static MMArrival *
run_simulation(FunctionCallInfo fcinfo, MMQueue **queue_out, int *n_out,
			   MMOutcome **outcomes, MMSimSummary *summary)
{
	MMQueue    *queue;
	char	   *query;
	MMArrival  *arr;
	MMStreamData data;
	int			n;
	MMStatus	st;

	mm_require_arg(fcinfo, 0, "queue");
	query = mm_text_arg(fcinfo, 1, "arrivals");
	queue = mm_get_queue(PG_GETARG_TEXT_PP(0), MM_LOCK_NONE);
	simulation_config(queue, PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2));
	arr = read_arrivals(queue, query, &data, &n);
	if (data.leaves_after != NULL && queue->cfg.algorithm == MM_ALGO_OPTIMIZE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" uses algorithm \"optimize\", which takes no backfill", queue->name),
				 errdetail("Some arrivals have leaves_after in their attributes."),
				 errhint("Leave leaves_after out of the stream, or simulate a queue of another algorithm.")));
	if (data.leaves_after != NULL && data.block_start != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("queue \"%s\" has an exclude filter, and backfill does not check block lists", queue->name),
				 errdetail("Some arrivals have leaves_after in their attributes."),
				 errhint("Leave leaves_after out of the stream, or simulate a queue without block lists.")));
	mm_stream_rate(&queue->cfg, arr, n);

	if (outcomes != NULL)
		*outcomes = palloc(sizeof(MMOutcome) * Max(n, 1));
	st = mm_simulate(&queue->cfg, arr, &data, n, outcomes ? *outcomes : NULL, summary);
	if (st != MM_OK)
		mm_status_error(st, psprintf("simulating queue \"%s\"", queue->name),
						psprintf("simulation of queue \"%s\" was interrupted", queue->name), NULL);
	*queue_out = queue;
	*n_out = n;
	return arr;
}

/*
 * Most memory, in kB, that simulate's result keeps before writing the rest
 * to a temporary file (less when work_mem is lower).  A stream of 10^6
 * arrivals gives about 80 MB of rows in memory, each in memory the backend
 * has not touched before; writing them to a file and reading them back was
 * measured faster (bench/simulate.sh) as well as lighter.
 */
#define MM_SIM_ROWS_MEMORY 4096

/*
 * Set up a set-returning call in materialize mode, as InitMaterializedSRF
 * does, but with the result's memory bounded by MM_SIM_ROWS_MEMORY.
 */
static void
init_rows_store(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		(rsinfo->allowedModes & SFRM_Materialize) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set"),
				 errhint("Call matchmaker.simulate in the FROM clause.")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "simulate must return rows");
	desc = CreateTupleDescCopy(desc);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
											  false, Min(work_mem, MM_SIM_ROWS_MEMORY));
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
}

/*
 * simulate's rows put into the result without forming each one.  Every row
 * without a NULL has the same header, and the four by-value columns sit at
 * the same places in it, so one such row is formed and each row's values
 * are written over its own before the store copies it; a row with a NULL
 * (an expired player) is formed as usual.  Forming a row took about 640
 * instructions of the 920 a row cost to put into the store
 * (bench/simulate_cpu.sh).
 */
typedef struct RowWriter
{
	MinimalTuple tuple;			/* a formed row, its values overwritten */
	char	   *data;			/* where its columns begin */
	int			off[4];			/* each column's place from there */
	TupleTableSlot *slot;		/* NULL where a column is not by value */
} RowWriter;

static void
row_writer_init(RowWriter *w, TupleDesc desc)
{
	Datum		values[4] = {0};
	bool		nulls[4] = {false, false, false, false};
	int			off = 0;

	w->slot = NULL;
	if (desc->natts != 4)
		return;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attbyval || att->attlen <= 0)
			return;
		off = att_align_nominal(off, att->attalign);
		w->off[i] = off;
		off += att->attlen;
	}
	w->tuple = heap_form_minimal_tuple(desc, values, nulls);
	w->data = (char *) w->tuple + w->tuple->t_hoff - MINIMAL_TUPLE_OFFSET;
	w->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
}

static void
row_put(RowWriter *w, ReturnSetInfo *rsinfo, Datum *values, bool *nulls)
{
	if (w->slot == NULL || nulls[0] || nulls[1] || nulls[2] || nulls[3])
	{
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return;
	}
	for (int i = 0; i < 4; i++)
		store_att_byval(w->data + w->off[i], values[i], TupleDescAttr(rsinfo->setDesc, i)->attlen);
#ifdef USE_ASSERT_CHECKING
	{
		MinimalTuple formed = heap_form_minimal_tuple(rsinfo->setDesc, values, nulls);

		Assert(formed->t_len == w->tuple->t_len);
		Assert(memcmp(formed, w->tuple, formed->t_len) == 0);
		pfree(formed);
	}
#endif
	ExecStoreMinimalTuple(w->tuple, w->slot, false);
	tuplestore_puttupleslot(rsinfo->setResult, w->slot);
}

/*
 * matchmaker.simulate(queue, arrivals, params): one row per real player,
 * (match_no, id, team, matched_at); match_no NULL for an expired player,
 * whose matched_at is then the time it expired.
 */
Datum
mm_simulate_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MMQueue    *queue;
	MMArrival  *arr;
	MMOutcome  *out;
	MMSimSummary summary;
	RowWriter	writer = {0};
	int			n;

	init_rows_store(fcinfo);
	SPI_connect();
	arr = run_simulation(fcinfo, &queue, &n, &out, &summary);
	row_writer_init(&writer, rsinfo->setDesc);
	for (int i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};

		values[0] = Int64GetDatum(out[i].match_no);
		nulls[0] = out[i].match_no == 0;
		values[1] = Int64GetDatum(arr[i].id);
		values[2] = Int32GetDatum(out[i].team);
		nulls[2] = out[i].match_no == 0;
		values[3] = Float8GetDatum(out[i].matched_at);
		row_put(&writer, rsinfo, values, nulls);
	}
	if (writer.slot != NULL)
		ExecDropSingleTupleTableSlot(writer.slot);
	SPI_finish();
	return (Datum) 0;
}

/*
 * matchmaker.simulate_summary(queue, arrivals, params): the totals of a
 * simulation in one row, so that a sweep over parameters is one query.
 */
Datum
mm_simulate_summary(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	MMQueue    *queue;
	MMSimSummary s;
	int			n;
	Datum		values[10];
	bool		nulls[10] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "simulate_summary must return a row");
	SPI_connect();
	(void) run_simulation(fcinfo, &queue, &n, NULL, &s);
	SPI_finish();

	values[0] = Int64GetDatum(s.players);
	values[1] = Int64GetDatum(s.games);
	values[2] = Int64GetDatum(s.bots);
	values[3] = Int64GetDatum(s.expired);
	values[4] = Float8GetDatum(s.cost);
	values[5] = Float8GetDatum(s.criteria_cost);
	values[6] = Float8GetDatum(s.wait_cost);
	values[7] = Float8GetDatum(s.games > 0 ? s.cost / s.games : 0);
	nulls[7] = s.games == 0;
	values[8] = Float8GetDatum(s.mean_wait);
	values[9] = Float8GetDatum(s.max_wait);
	nulls[8] = nulls[9] = s.players == 0;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}

/* Refuse OPT for a queue that does not match pairs. */
static void
require_pairs(MMQueue *queue, const char *what)
{
	if (queue->cfg.criteria.n > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs a queue that matches on the rating alone", what),
				 errdetail("Queue \"%s\" also matches players on %s.", queue->name,
						   mm_criteria_names(queue)),
				 errhint("The offline optimum is computed for one criterion (Schlup, section 5).")));
	if (mm_config_k(&queue->cfg) != 2)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs a queue of two players per match", what),
				 errdetail("Queue \"%s\" has %d players per match.", queue->name, mm_config_k(&queue->cfg)),
				 errhint("The offline optimum is a minimum-weight matching of pairs (Schlup, section 5).")));
}

/* Union-find root of x, halving the path. */
static int32
uf_root(int32 *parent, int32 x)
{
	while (parent[x] != x)
	{
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Join the union-find sets of a and b (the lower root stays). */
static void
uf_join(int32 *parent, int32 a, int32 b)
{
	a = uf_root(parent, a);
	b = uf_root(parent, b);
	if (a != b)
		parent[Max(a, b)] = Min(a, b);
}

/* Order of keys by their values of the filters that never relax. */
static int
strict_cmp(const void *x, const void *y, void *arg)
{
	const MMStreamData *data = arg;
	int32		a = *(const int32 *) x;
	int32		b = *(const int32 *) y;

	for (int f = 0; f < data->nfilters; f++)
	{
		int32		va = data->key_values[(Size) a * data->nfilters + f];
		int32		vb = data->key_values[(Size) b * data->nfilters + f];

		if (isfinite(data->relax_after[f]) || va == vb)
			continue;
		return va < vb ? -1 : 1;
	}
	return 0;
}

/*
 * The keys by which the optimum splits a stream: with equal filters each
 * arrival's key; with intersect filters the connected set of combined
 * values its candidates belong to (values that one player lists together
 * are joined), numbered from 0, so that players who could ever meet are
 * in one part: the optimum over the parts is then a lower bound of the
 * optimum under the filters, exact when no player lists two values.  NULL
 * without filters.
 */
static const int32 *
optimum_keys(const MMStreamData *data, int n)
{
	int32	   *parent;
	int32	   *number;
	int32	   *key;
	int32		next = 0;

	if (data->cand == NULL)
		return data->key;
	parent = palloc_extended(sizeof(int32) * data->ncand_keys, MCXT_ALLOC_HUGE);
	number = palloc_extended(sizeof(int32) * data->ncand_keys, MCXT_ALLOC_HUGE);
	key = palloc_extended(sizeof(int32) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (int32 k = 0; k < data->ncand_keys; k++)
	{
		parent[k] = k;
		number[k] = -1;
	}
	for (int i = 0; i < n; i++)
		for (int32 c = data->cand_start[i] + 1; c < data->cand_start[i + 1]; c++)
			uf_join(parent, data->cand[data->cand_start[i]], data->cand[c]);
	/* filters that relax: keys that agree on the others may meet */
	if (data->relax_after != NULL)
	{
		int32	   *order = palloc_extended(sizeof(int32) * data->ncand_keys, MCXT_ALLOC_HUGE);

		for (int32 k = 0; k < data->ncand_keys; k++)
			order[k] = k;
		qsort_arg(order, data->ncand_keys, sizeof(int32), strict_cmp, (void *) data);
		for (int32 k = 1; k < data->ncand_keys; k++)
			if (strict_cmp(&order[k - 1], &order[k], (void *) data) == 0)
				uf_join(parent, order[k - 1], order[k]);
		pfree(order);
	}
	for (int i = 0; i < n; i++)
	{
		int32		root = uf_root(parent, data->cand[data->cand_start[i]]);

		if (number[root] < 0)
			number[root] = next++;
		key[i] = number[root];
	}
	pfree(parent);
	pfree(number);
	return key;
}

/*
 * OPT's cost for arrivals; raises the core's failures.  The stream is
 * bounded: at MM_OPT_MAX_PLAYERS it takes under a minute at 10 arrivals per
 * second.  Its pairs are bounded by matchmaker.core_memory_limit, and the
 * matching stops when the query is cancelled.
 */
static double
optimal_of(MMQueue *queue, MMArrival *arr, int n, const int32 *key)
{
	double		total = 0;
	MMStatus	st;

	if (n > MM_OPT_MAX_PLAYERS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the optimum is computed for at most %d players", MM_OPT_MAX_PLAYERS),
				 errdetail("The stream has %d players.", n),
				 errhint("Compute it over a shorter period, and add up the costs of the periods.")));
	if (key == NULL)
		st = mm_optimal_pairs(arr, n, queue->cfg.max_wait, MM_OPT_BOT_COST, NULL, &total);
	else
	{
		/*
		 * Equal filters: players of different keys never meet, so the
		 * optimum is the sum of each key's own (arr is in arrival order,
		 * and so is each key's part).
		 */
		MMArrival  *byKey = palloc_extended(sizeof(MMArrival) * Max(n, 1), MCXT_ALLOC_HUGE);
		int		   *start = palloc0_array(int, n + 2);

		/* a counting sort by key, stable, so each part stays in arrival order */
		for (int i = 0; i < n; i++)
			start[key[i] + 2]++;
		for (int k = 2; k <= n + 1; k++)
			start[k] += start[k - 1];
		for (int i = 0; i < n; i++)
			byKey[start[key[i] + 1]++] = arr[i];
		st = MM_OK;
		for (int k = 0; k < n && st == MM_OK; k++)
		{
			double		cost = 0;

			if (start[k + 1] > start[k])
				st = mm_optimal_pairs(byKey + start[k], start[k + 1] - start[k],
									  queue->cfg.max_wait, MM_OPT_BOT_COST, NULL, &cost);
			total += cost;
		}
		pfree(byKey);
		pfree(start);
	}
	if (st != MM_OK)
		mm_status_error(st, psprintf("computing the optimum of queue \"%s\"", queue->name),
						NULL, NULL);
	return total;
}

/*
 * matchmaker.optimal_cost(queue, arrivals): the cost of Schlup's offline
 * optimum for the arrival stream in a queue of pairs.
 */
Datum
mm_optimal_cost(PG_FUNCTION_ARGS)
{
	MMQueue    *queue;
	MMArrival  *arr;
	MMStreamData data;
	int			n;
	double		total;
	char	   *query;

	mm_require_arg(fcinfo, 0, "queue");
	query = mm_text_arg(fcinfo, 1, "arrivals");
	SPI_connect();
	queue = mm_get_queue(PG_GETARG_TEXT_PP(0), MM_LOCK_NONE);
	require_pairs(queue, "optimal_cost");
	arr = read_arrivals(queue, query, &data, &n);
	total = optimal_of(queue, arr, n, optimum_keys(&data, n));
	SPI_finish();
	PG_RETURN_FLOAT8(total);
}

/*
 * The players of the queue's matches made in [from, to), as an arrival
 * stream in seconds (audit's and tuning's history): those of the latest
 * limit matches (limit <= 0: all); with criteria, their attributes too.
 */
MMArrival *
mm_read_history(MMQueue *queue, TimestampTz from, TimestampTz to, int limit,
				MMStreamData *data, int *n_out)
{
	static SPIPlanPtr plans[3];
	Oid			argtypes[4] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT8OID};
	Datum		args[4];
	ParamListInfo params;
	/* from 0.3.0 on the attributes, a party's name its first ticket id (as a stream names it) */
	int			crit = mm_ready_available() ? 2 :
		queue->cfg.criteria.n > 0 || queue->criteria.nfilters > 0 ? 1 : 0;

	mm_keep_plan(&plans[crit],
				 psprintf("SELECT t.id, t.rating, pg_catalog.date_part('epoch', t.enqueued_at)%s "
						  "FROM matchmaker.tickets t JOIN (SELECT id FROM matchmaker.matches "
						  "WHERE queue OPERATOR(pg_catalog.=) $1 "
						  "AND created_at OPERATOR(pg_catalog.>=) $2 AND created_at OPERATOR(pg_catalog.<) $3 "
						  "ORDER BY created_at DESC LIMIT $4) m ON m.id OPERATOR(pg_catalog.=) t.match_id",
						  crit == 2 ? ", CASE WHEN t.party IS NULL THEN t.attributes "
						  "ELSE t.attributes OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_object('party', t.party::pg_catalog.text) END"
						  : crit ? ", t.attributes" : ""),
				 4, argtypes);
	args[0] = CStringGetTextDatum(queue->name);
	args[1] = TimestampTzGetDatum(from);
	args[2] = TimestampTzGetDatum(to);
	args[3] = Int64GetDatum(limit > 0 ? (int64) limit : PG_INT64_MAX);
	params = makeParamList(4);
	for (int i = 0; i < 4; i++)
	{
		params->params[i].value = args[i];
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = argtypes[i];
	}
	{
		MMArrival  *arr = read_arrivals_plan(queue, plans[crit], params, true, crit ? 4 : 3, data, n_out);

		/* history arrivals are tickets, not players: block lists name players, so none apply */
		data->player = NULL;
		data->block_start = NULL;
		data->block = NULL;
		return arr;
	}
}

/*
 * The cost (eq. 1) of the queue's matches made in [from, to) (args) under
 * its settings now, the ones the optimum is computed with: each match's
 * players' ratings as mm_read_history reads them (past_rating), their
 * waits until the match, its computer players.  The costs stored with the
 * matches were computed under the settings of their time, which
 * alter_queue may have changed since (the rating range, max_wait).
 */
static double
audit_cost(MMQueue *queue, Datum *args)
{
	static SPIPlanPtr plan;
	Oid			argtypes[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	int			k = mm_config_k(&queue->cfg);
	double	   *ratings = palloc(sizeof(double) * k);
	double	   *waits = palloc(sizeof(double) * k);
	double		f[MM_MAX_CRITERIA];
	double		total = 0;
	uint64		r = 0;

	mm_criteria_factors(&queue->cfg, f);
	mm_keep_plan(&plan,
				 "SELECT t.match_id, t.rating, "
				 "pg_catalog.date_part('epoch', m.created_at OPERATOR(pg_catalog.-) t.enqueued_at), m.bots "
				 "FROM matchmaker.matches m JOIN matchmaker.tickets t ON t.match_id OPERATOR(pg_catalog.=) m.id "
				 "WHERE m.queue OPERATOR(pg_catalog.=) $1 "
				 "AND m.created_at OPERATOR(pg_catalog.>=) $2 AND m.created_at OPERATOR(pg_catalog.<) $3 "
				 "ORDER BY t.match_id, t.id",
				 3, argtypes);
	if (SPI_execute_plan(plan, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the players of the queue's matches");
	while (r < SPI_processed)
	{
		bool		isnull;
		TupleDesc	desc = SPI_tuptable->tupdesc;
		int64		match = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], desc, 1, &isnull));
		int			bots = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[r], desc, 4, &isnull));
		int			m = 0;
		MMCost		cost;

		/* the match's players, at most k */
		for (; r < SPI_processed; r++)
		{
			HeapTuple	tup = SPI_tuptable->vals[r];
			double		w;

			if (DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull)) != match)
				break;
			if (m >= k)
				continue;
			ratings[m] = past_rating(queue, DatumGetFloat8(SPI_getbinval(tup, desc, 2, &isnull)));
			w = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
			waits[m] = w > 0 && isfinite(w) ? w : 0.0;
			m++;
		}
		if (mm_game_cost(k, m, 1, ratings, f, waits, queue->cfg.max_wait, &cost) != MM_OK)
			elog(ERROR, "could not compute the cost of match " INT64_FORMAT " with %d players and %d computer players",
				 match, m, bots);
		total += cost.total;
	}
	SPI_freetuptable(SPI_tuptable);
	pfree(ratings);
	pfree(waits);
	return total;
}

/*
 * matchmaker.audit(queue, from, to): the matches the queue made between
 * from and to, against the offline optimum for the same tickets.  Returns
 * (matches, players, bots, expired, cost, optimal_cost, ratio); expired
 * tickets of the period are counted but take no part in either cost.
 */
Datum
mm_audit(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	MMQueue    *queue;
	Oid			argtypes[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum		args[3];
	Datum		values[7];
	bool		nulls[7] = {0};
	bool		isnull;
	MMArrival  *arr;
	MMStreamData data;
	int			n;
	int64		matches;
	int64		bots;
	int64		expired;
	double		cost;
	double		opt;

	for (int i = 0; i < 3; i++)
		mm_require_arg(fcinfo, i, (const char *[]) {"queue", "from", "to"}[i]);
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "audit must return a row");

	if (PG_GETARG_TIMESTAMPTZ(1) > PG_GETARG_TIMESTAMPTZ(2))
	{
		/* timestamptz_to_str returns a static buffer: copy each in turn */
		char	   *from = pstrdup(timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(1)));
		char	   *to = pstrdup(timestamptz_to_str(PG_GETARG_TIMESTAMPTZ(2)));

		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("from must not be later than to"),
				 errdetail("Got from %s and to %s.", from, to),
				 errhint("audit covers the matches made from \"from\" up to, not including, \"to\".")));
	}

	SPI_connect();
	queue = mm_get_queue(PG_GETARG_TEXT_PP(0), MM_LOCK_NONE);
	require_pairs(queue, "audit");
	args[0] = CStringGetTextDatum(queue->name);
	args[1] = PG_GETARG_DATUM(1);
	args[2] = PG_GETARG_DATUM(2);

	if (SPI_execute_with_args("SELECT pg_catalog.count(*), COALESCE(pg_catalog.sum(bots), 0)::pg_catalog.int8, "
							  "(SELECT pg_catalog.count(*) FROM matchmaker.tickets WHERE queue OPERATOR(pg_catalog.=) $1 "
							  " AND state OPERATOR(pg_catalog.=) 'expired' AND ended_at OPERATOR(pg_catalog.>=) $2 "
							  " AND ended_at OPERATOR(pg_catalog.<) $3) "
							  "FROM matchmaker.matches WHERE queue OPERATOR(pg_catalog.=) $1 "
							  "AND created_at OPERATOR(pg_catalog.>=) $2 AND created_at OPERATOR(pg_catalog.<) $3",
							  3, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's matches");
	matches = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	bots = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	expired = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));

	/* The players of those matches, as an arrival stream in seconds. */
	arr = mm_read_history(queue, PG_GETARG_TIMESTAMPTZ(1), PG_GETARG_TIMESTAMPTZ(2), 0,
						  &data, &n);
	cost = audit_cost(queue, args);
	opt = optimal_of(queue, arr, n, optimum_keys(&data, n));
	SPI_finish();

	values[0] = Int64GetDatum(matches);
	values[1] = Int64GetDatum(n);
	values[2] = Int64GetDatum(bots);
	values[3] = Int64GetDatum(expired);
	values[4] = Float8GetDatum(cost);
	values[5] = Float8GetDatum(opt);
	values[6] = Float8GetDatum(opt > 0 ? cost / opt : 0);
	nulls[6] = !(opt > 0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), values, nulls)));
}
