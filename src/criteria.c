/*
 * criteria.c
 *		What a queue matches players on, read from the caller's values: the
 *		rating on the queue's scale, the further criteria from the tickets'
 *		attributes (params.criteria), and optimize's "party" and "ping".
 */
#include "matchmaker.h"

const char *const MM_BAD_PARTY = "attribute \"party\" must be a string of 1 to 64 bytes";
const char *const MM_BAD_PING = "attribute \"ping\" must be an object of at most 64 regions and their pings in milliseconds (0 to 1e6)";

#include <math.h>

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

/*
 * Map a rating on the queue's scale to Schlup's criterion in [0, 1].
 * NULL is caught by the caller; NaN, infinities and ratings outside the
 * queue's range are refused (never clamped), so what is matched is what
 * the backend sent.
 */
double
mm_normalise_rating(const MMQueue *queue, double rating, const char *what)
{
	if (isnan(rating) || isinf(rating))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a finite number", what),
				 errdetail("Got %s.", mm_float_text(rating)),
				 errhint("Send the player's rating on the scale of queue \"%s\" (%s to %s).",
						 queue->name, mm_float_text(queue->rating_min),
						 mm_float_text(queue->rating_max))));
	if (rating < queue->rating_min || rating > queue->rating_max)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s %s is outside the rating range of queue \"%s\"",
						what, mm_float_text(rating), queue->name),
				 errdetail("The queue accepts ratings from %s to %s.",
						   mm_float_text(queue->rating_min), mm_float_text(queue->rating_max)),
				 errhint("Widen the range with matchmaker.alter_queue(name => '%s', rating_min => ..., rating_max => ...).",
						 queue->name)));
	return (rating - queue->rating_min) / (queue->rating_max - queue->rating_min);
}

/* A top-level key of a jsonb object, or NULL. */
static JsonbValue *
attribute(Jsonb *attributes, const char *key)
{
	JsonbValue	k;

	k.type = jbvString;
	k.val.string.val = (char *) key;
	k.val.string.len = strlen(key);
	return findJsonbValueFromContainer(&attributes->root, JB_FOBJECT, &k);
}

/*
 * A ticket's further criteria (queue->criteria) from its attributes, each
 * normalised to [0, 1] into out[0 .. ncriteria).  Returns 0 when all are
 * there, or the first criterion d (>= 1) that is missing, not a number or
 * outside its range, with *problem and the number *got (NAN when none).
 */
int
mm_criteria_read(const MMQueue *queue, Jsonb *attributes, double *out,
				 MMCriterionProblem *problem, double *got)
{
	for (int d = 1; d <= queue->cfg.criteria.n; d++)
	{
		JsonbValue *v = attribute(attributes, queue->criteria.attribute[d]);
		double		x;

		*got = NAN;
		if (v == NULL)
			*problem = MM_CRITERION_MISSING;
		else if (v->type != jbvNumeric)
			*problem = MM_CRITERION_NOT_NUMBER;
		else
		{
			x = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
												   NumericGetDatum(v->val.numeric)));
			*got = x;
			if (!(x >= queue->criteria.lo[d] && x <= queue->criteria.hi[d]))
				*problem = MM_CRITERION_OUTSIDE;
			else
			{
				x = (x - queue->criteria.lo[d]) / (queue->criteria.hi[d] - queue->criteria.lo[d]);
				out[d - 1] = Min(Max(x, 0.0), 1.0);
				continue;
			}
		}
		return d;
	}
	*problem = MM_CRITERION_OK;
	return 0;
}

/* Raise the error of criterion d's problem; whose names the value's owner. */
void
mm_criteria_report(const MMQueue *queue, int d, MMCriterionProblem problem,
				   double got, const char *whose)
{
	const char *key = mm_shorten(queue->criteria.attribute[d]);
	const char *lo = mm_float_text(queue->criteria.lo[d]);
	const char *hi = mm_float_text(queue->criteria.hi[d]);

	/* a number beyond float8 (1e400) arrives as an infinity: say so, not "Infinity" */
	if (problem == MM_CRITERION_OUTSIDE)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 isinf(got) ?
				 errmsg("%s attribute \"%s\" is outside the range of queue \"%s\"",
						whose, key, queue->name) :
				 errmsg("%s attribute \"%s\" %s is outside the range of queue \"%s\"",
						whose, key, mm_float_text(got), queue->name),
				 isinf(got) ?
				 errdetail("The value is %s, beyond any float8; the queue's criterion \"%s\" takes numbers from %s to %s.",
						   got > 0 ? "above 1.8e308" : "below -1.8e308", key, lo, hi) :
				 errdetail("The queue's criterion \"%s\" takes numbers from %s to %s.", key, lo, hi),
				 errhint("Widen the criterion's min and max with matchmaker.alter_queue(name => '%s', params => ...).",
						 queue->name)));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg(problem == MM_CRITERION_MISSING ?
					"%s attributes lack \"%s\", a criterion of queue \"%s\"" :
					"%s attribute \"%s\" must be a number for queue \"%s\"",
					whose, key, queue->name),
			 errdetail("The queue matches players on \"%s\", a number from %s to %s.", key, lo, hi),
			 errhint("Send it in the attributes, for example '{\"%s\": %s}'.", key, lo)));
}

/* The queue's further criteria for a message: "a", "b" (quoted, shortened). */
char *
mm_criteria_names(const MMQueue *queue)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int d = 1; d <= queue->cfg.criteria.n; d++)
		appendStringInfo(&buf, "%s\"%s\"", d > 1 ? ", " : "",
						 mm_shorten(queue->criteria.attribute[d]));
	return buf.data;
}

/* mm_criteria_read, raising the error of the first problem. */
void
mm_criteria_values(const MMQueue *queue, Jsonb *attributes, double *out,
				   const char *whose)
{
	MMCriterionProblem problem;
	double		got;
	int			d = mm_criteria_read(queue, attributes, out, &problem, &got);

	if (d > 0)
		mm_criteria_report(queue, d, problem, got, whose);
}

/*
 * optimize reads "party" (a string of 1 to 64 bytes: the premade's name)
 * and "ping" (an object of at most 64 region names of 1 to 64 bytes and
 * their pings in milliseconds, 0 to 1e6) from a player's attributes:
 * anything else is a problem: MM_BAD_PARTY or MM_BAD_PING (the text of
 * the rule), NULL when both are usable.  *party and *ping get the values,
 * or NULL.
 */
const char *
mm_optimize_attributes_problem(Jsonb *attributes, JsonbValue **party, JsonbValue **ping)
{
	*party = attribute(attributes, "party");
	*ping = attribute(attributes, "ping");

	if (*party != NULL &&
		((*party)->type != jbvString || (*party)->val.string.len == 0 || (*party)->val.string.len > 64))
		return MM_BAD_PARTY;
	if (*ping != NULL)
	{
		bool		ok = (*ping)->type == jbvBinary && JsonContainerIsObject((*ping)->val.binary.data);
		int			regions = 0;

		if (ok)
		{
			JsonbIterator *it = JsonbIteratorInit((*ping)->val.binary.data);
			JsonbValue	v;
			JsonbIteratorToken tok;

			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok == WJB_KEY)
				{
					regions++;
					ok = ok && v.val.string.len > 0 && v.val.string.len <= 64;
				}
				else if (tok == WJB_VALUE)
				{
					double		ms = -1;

					if (v.type == jbvNumeric)
						ms = DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow,
																NumericGetDatum(v.val.numeric)));
					ok = ok && ms >= 0 && ms <= 1e6;
				}
			}
		}
		if (!ok || regions > 64)
			return MM_BAD_PING;
	}
	return NULL;
}

/* mm_optimize_attributes_problem, raising the error of the problem. */
void
mm_optimize_attributes(Jsonb *attributes, JsonbValue **party, JsonbValue **ping)
{
	const char *problem = mm_optimize_attributes_problem(attributes, party, ping);

	if (problem == MM_BAD_PARTY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("attribute \"party\" must be a string of 1 to 64 bytes"),
				 errhint("Give the members of a premade the same party name, for example {\"party\": \"clan-42\"}.")));
	if (problem == MM_BAD_PING)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("attribute \"ping\" must be an object of at most 64 regions and their pings in milliseconds (0 to 1e6)"),
				 errhint("Send the player's measured pings, for example {\"ping\": {\"eu\": 30, \"us-east\": 110}}.")));
}

