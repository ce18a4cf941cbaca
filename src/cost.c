/*
 * cost.c
 *		matchmaker.match_cost: Schlup's eq. 1 for one game of a queue, by the
 *		same core function that scores the matches tick makes.
 */
#include "matchmaker.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(mm_match_cost);

/* The elements of a one-dimensional float8[] without NULLs, or an error. */
static double *
float8_array(ArrayType *arr, const char *argname, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	double	   *out;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", argname),
				 errhint("Pass one value per real player, for example '{0.2, 0.5}'.")));
	deconstruct_array(arr, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, n);
	out = palloc(sizeof(double) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", argname),
					 errdetail("Element %d is null.", i + 1),
					 errhint("Pass one value per real player; count computer players with bots.")));
		out[i] = DatumGetFloat8(elems[i]);
	}
	return out;
}

/*
 * The players' further criteria of a queue with criteria, from attributes
 * (jsonb[], one object per real player): n rows of ncriteria values.
 */
static double *
criteria_of(const MMQueue *queue, ArrayType *arr, int n)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nattrs;
	int			nc = queue->cfg.criteria.n;
	double	   *out = palloc(sizeof(double) * Max(n, 1) * nc);

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("attributes must be a one-dimensional array"),
				 errhint("Pass one attributes object per real player.")));
	deconstruct_array(arr, JSONBOID, -1, false, TYPALIGN_INT, &elems, &nulls, &nattrs);
	if (nattrs != n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ratings and attributes must have the same length"),
				 errdetail("ratings has %d elements and attributes has %d.", n, nattrs),
				 errhint("Give one attributes object per real player.")));
	for (int i = 0; i < n; i++)
	{
		Jsonb	   *j;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("attributes must not contain nulls"),
					 errdetail("Element %d is null.", i + 1),
					 errhint("Pass the player's attributes as enqueue got them.")));
		j = DatumGetJsonbP(elems[i]);
		if (!JB_ROOT_IS_OBJECT(j) || JB_ROOT_IS_SCALAR(j))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("attributes must be JSON objects"),
					 errdetail("Element %d is not an object.", i + 1),
					 errhint("Pass the player's attributes as enqueue got them.")));
		mm_criteria_values(queue, j, out + (Size) i * nc, psprintf("player %d's", i + 1));
	}
	return out;
}

/*
 * matchmaker.match_cost(queue, ratings, waits, bots, attributes): the cost
 * of a game of the queue with those real players (ratings on the queue's
 * scale, waits in seconds, and for a queue with criteria their attributes)
 * and bots computer players; the players and bots must make k.  The 0.1.0
 * definition has no attributes argument.
 */
Datum
mm_match_cost(PG_FUNCTION_ARGS)
{
	MMQueue    *queue;
	double	   *ratings;
	double	   *waits;
	int			nratings;
	int			nwaits;
	int			bots;
	int			k;
	MMCost		cost;
	MMStatus	st;
	int			dims;
	double	   *crit;
	double		f[MM_MAX_CRITERIA];

	for (int i = 0; i < 4; i++)
		mm_require_arg(fcinfo, i, (const char *[]) {"queue", "ratings", "waits", "bots"}[i]);

	ratings = float8_array(PG_GETARG_ARRAYTYPE_P(1), "ratings", &nratings);
	waits = float8_array(PG_GETARG_ARRAYTYPE_P(2), "waits", &nwaits);
	bots = PG_GETARG_INT32(3);

	SPI_connect();
	queue = mm_get_queue(PG_GETARG_TEXT_PP(0), MM_LOCK_NONE);
	k = mm_config_k(&queue->cfg);

	if (nratings != nwaits)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ratings and waits must have the same length"),
				 errdetail("ratings has %d elements and waits has %d.", nratings, nwaits),
				 errhint("Give one rating and one wait per real player.")));
	if (bots < 0 || nratings < 1 || nratings + bots != k)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a match of queue \"%s\" has %d players", queue->name, k),
				 errdetail("Got %d real players and %d computer players.", nratings, bots),
				 errhint("Pass at least one real player, and as many computer players as make %d.", k)));
	for (int i = 0; i < nratings; i++)
	{
		ratings[i] = mm_normalise_rating(queue, ratings[i], "rating");
		if (!(waits[i] >= 0) || !isfinite(waits[i]))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("waits must be finite and not negative"),
					 errdetail("Element %d is %s.", i + 1, mm_float_text(waits[i])),
					 errhint("Give each player's time in the queue in seconds.")));
	}

	dims = queue->cfg.criteria.n + 1;
	crit = ratings;
	if (dims > 1)
	{
		double	   *extra;

		if (PG_NARGS() < 5 || PG_ARGISNULL(4))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("queue \"%s\" also matches players on %s", queue->name,
							mm_criteria_names(queue)),
					 errhint("Pass the players' attributes, for example attributes => ARRAY['{\"%s\": %s}', ...]::jsonb[].",
							 mm_shorten(queue->criteria.attribute[1]),
							 mm_float_text(queue->criteria.lo[1]))));
		extra = criteria_of(queue, PG_GETARG_ARRAYTYPE_P(4), nratings);
		crit = palloc(sizeof(double) * nratings * dims);
		for (int i = 0; i < nratings; i++)
		{
			crit[(Size) i * dims] = ratings[i];
			for (int d = 1; d < dims; d++)
				crit[(Size) i * dims + d] = extra[(Size) i * (dims - 1) + d - 1];
		}
	}
	mm_criteria_factors(&queue->cfg, f);
	st = mm_game_cost(k, nratings, dims, crit, f, waits, queue->cfg.max_wait, &cost);
	if (st != MM_OK)
		mm_status_error(st, psprintf("computing a match cost of queue \"%s\"", queue->name),
						NULL, "core refused the cost arguments");
	if (!isfinite(cost.total))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("match cost is out of range"),
				 errdetail("The waits are too long for max_wait %s seconds of queue \"%s\".",
						   mm_float_text(queue->cfg.max_wait), queue->name),
				 errhint("Give each player's time in the queue in seconds.")));
	SPI_finish();
	PG_RETURN_FLOAT8(cost.total);
}
