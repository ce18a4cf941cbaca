/*
 * filters.c
 *		params.filters, "equal": players meet only players with the same
 *		values of the filtered attributes (a game mode, a build).
 *
 * A ticket's combined value is its filtered attributes' strings in the
 * order params names them, each preceded by its length (4 bytes, big
 * endian), so that two tickets have the same combined value exactly when
 * they agree on every filter.  A set of tickets (a tick's pool, a
 * simulated stream) is numbered by the sorted distinct combined values:
 * the key of a ticket is its value's place (MMPool.key), and the core
 * runs the algorithm on each key's tickets apart (core/filters.c).
 */
#include "matchmaker.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"

/*
 * Append a ticket's combined value to out; returns NULL, or what makes
 * the attributes unusable (a filter missing, not a string, too long).
 */
const char *
mm_filter_value(const MMQueue *queue, Jsonb *attributes, StringInfo out)
{
	for (int f = 0; f < queue->criteria.nfilters; f++)
	{
		const char *key = queue->criteria.filter[f];
		JsonbValue *v = attributes == NULL ? NULL :
			getKeyJsonValueFromContainer(&attributes->root, key, strlen(key), NULL);
		uint32		len;
		unsigned char be[4];

		if (v == NULL)
			return psprintf("attributes lack \"%s\", a filter of the queue", mm_shorten(key));
		if (v->type != jbvString)
			return psprintf("attribute \"%s\" is not a string", mm_shorten(key));
		if (v->val.string.len > MM_FILTER_VALUE_MAX)
			return psprintf("attribute \"%s\" is longer than %d bytes", mm_shorten(key),
							MM_FILTER_VALUE_MAX);
		len = (uint32) v->val.string.len;
		be[0] = (unsigned char) (len >> 24);
		be[1] = (unsigned char) (len >> 16);
		be[2] = (unsigned char) (len >> 8);
		be[3] = (unsigned char) len;
		appendBinaryStringInfo(out, (const char *) be, 4);
		appendBinaryStringInfo(out, v->val.string.val, v->val.string.len);
	}
	return NULL;
}

/* mm_filter_value, raising an error for a problem. */
void
mm_filter_require(const MMQueue *queue, Jsonb *attributes, const char *whose)
{
	StringInfoData buf;
	const char *problem;

	if (queue->criteria.nfilters == 0)
		return;
	initStringInfo(&buf);
	problem = mm_filter_value(queue, attributes, &buf);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %s, for queue \"%s\"", whose, problem, queue->name),
				 errdetail("The queue matches only players with equal values of %s, each a string of at most %d bytes.",
						   mm_filter_names(queue), MM_FILTER_VALUE_MAX),
				 errhint("Send them in the attributes, for example '{\"%s\": \"ranked\"}'.",
						 mm_shorten(queue->criteria.filter[0]))));
	pfree(buf.data);
}

/* The queue's filters for a message: "a", "b" (quoted, shortened). */
char *
mm_filter_names(const MMQueue *queue)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (int f = 0; f < queue->criteria.nfilters; f++)
		appendStringInfo(&buf, "%s\"%s\"", f > 0 ? ", " : "",
						 mm_shorten(queue->criteria.filter[f]));
	return buf.data;
}

/* Bytewise order of two combined values. */
static int
value_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* Sort context of row_cmp. */
typedef struct ValueRows
{
	char	  **values;
	int		   *lens;
} ValueRows;

static int
row_cmp(const void *x, const void *y, void *arg)
{
	const ValueRows *v = arg;
	int			a = *(const int *) x;
	int			b = *(const int *) y;

	return value_cmp(v->values[a], v->lens[a], v->values[b], v->lens[b]);
}

/*
 * The keys of n combined values (one per row), and into dict the sorted
 * distinct values they index.
 */
int32 *
mm_filter_number(char **values, int *lens, int n, MMFilterDict *dict)
{
	int32	   *keys = palloc_extended(sizeof(int32) * Max(n, 1), MCXT_ALLOC_HUGE);
	int		   *rows = palloc_extended(sizeof(int) * Max(n, 1), MCXT_ALLOC_HUGE);
	ValueRows	ctx = {values, lens};

	dict->n = 0;
	dict->values = palloc_extended(sizeof(char *) * Max(n, 1), MCXT_ALLOC_HUGE);
	dict->lens = palloc_extended(sizeof(int) * Max(n, 1), MCXT_ALLOC_HUGE);
	for (int i = 0; i < n; i++)
		rows[i] = i;
	qsort_arg(rows, n, sizeof(int), row_cmp, &ctx);
	for (int i = 0; i < n; i++)
	{
		int			r = rows[i];

		if (dict->n == 0 ||
			value_cmp(values[r], lens[r], dict->values[dict->n - 1], dict->lens[dict->n - 1]) != 0)
		{
			dict->values[dict->n] = values[r];
			dict->lens[dict->n] = lens[r];
			dict->n++;
		}
		keys[r] = dict->n - 1;
	}
	pfree(rows);
	return keys;
}

/* The key of a combined value in dict, or -1 when no ticket has it. */
int32
mm_filter_find(const MMFilterDict *dict, const char *value, int len)
{
	int			lo = 0;
	int			hi = dict->n - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		int			c = value_cmp(dict->values[mid], dict->lens[mid], value, len);

		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/*
 * The JSON object of a combined value (as mm_filter_value writes it):
 * {"attr": "value", ...}, the filters in the order params names them.
 */
char *
mm_filter_json(const MMQueue *queue, const char *value, int len)
{
	StringInfoData buf;
	int			at = 0;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int f = 0; f < queue->criteria.nfilters; f++)
	{
		const unsigned char *be = (const unsigned char *) value + at;
		uint32		n;

		if (at + 4 > len)
			elog(ERROR, "filter value of %d bytes ends before filter %d", len, f + 1);
		n = ((uint32) be[0] << 24) | ((uint32) be[1] << 16) | ((uint32) be[2] << 8) | be[3];
		at += 4;
		if (n > (uint32) (len - at))
			elog(ERROR, "filter value of %d bytes ends inside filter %d", len, f + 1);
		appendStringInfoString(&buf, f > 0 ? ", " : "");
		escape_json(&buf, queue->criteria.filter[f]);
		appendStringInfoString(&buf, ": ");
		{
			/* a jsonb string holds no NUL: it ends where the value does */
			char	   *v = pnstrdup(value + at, n);

			escape_json(&buf, v);
			pfree(v);
		}
		at += (int) n;
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}
