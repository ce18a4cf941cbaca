/*
 * filters.c
 *		params.filters: players meet only players with the same values of
 *		the filtered attributes ("equal": a game mode, a build), or sharing
 *		at least one value of a list ("intersect": maps, regions).
 *
 * A ticket's combined value is its filtered attributes' strings in the
 * order params names them, each preceded by its length (4 bytes, big
 * endian), so that two tickets have the same combined value exactly when
 * they agree on every filter; with intersect filters a ticket has one
 * for every way of taking one value of each list.  A set of tickets (a
 * tick's pool, a simulated stream) is numbered by the sorted distinct
 * combined values: the key of a ticket is its value's place (MMPool.key),
 * or with intersect filters its values' places are its candidate keys
 * (MMPool.cand), of which each step gives it one; the core runs the
 * algorithm on each key's tickets apart (core/filters.c).
 */
#include "matchmaker.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"

/* Bytewise order of two combined values (defined below). */
static int	value_cmp(const char *a, int alen, const char *b, int blen);

/* Order of one filter's values, as in combined values: length, then bytes. */
static int
string_cmp(const void *x, const void *y)
{
	const JsonbValue *a = x;
	const JsonbValue *b = y;

	if (a->val.string.len != b->val.string.len)
		return a->val.string.len < b->val.string.len ? -1 : 1;
	return memcmp(a->val.string.val, b->val.string.val, a->val.string.len);
}

/*
 * Filter f's values in attributes into vals (at most MM_FILTER_LIST_MAX,
 * distinct, in combined-value order), their number into *n; returns NULL,
 * or what makes them unusable.  An equal filter has one string; an
 * intersect filter a string or a list of them.
 */
static const char *
filter_strings(const MMQueue *queue, int f, Jsonb *attributes, JsonbValue *vals, int *n)
{
	const char *key = queue->criteria.filter[f];
	JsonbValue *v = attributes == NULL ? NULL :
		getKeyJsonValueFromContainer(&attributes->root, key, strlen(key), NULL);

	*n = 0;
	if (v == NULL)
		return psprintf("attributes lack \"%s\", a filter of the queue", mm_shorten(key));
	if (v->type == jbvString)
		vals[(*n)++] = *v;
	else if (queue->criteria.intersect[f] && v->type == jbvBinary &&
			 JsonContainerIsArray(v->val.binary.data))
	{
		JsonbIterator *it = JsonbIteratorInit(v->val.binary.data);
		JsonbValue	e;
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
		{
			if (tok != WJB_ELEM)
				continue;
			if (e.type != jbvString)
				return psprintf("attribute \"%s\" lists a value that is not a string", mm_shorten(key));
			if (*n >= MM_FILTER_LIST_MAX)
				return psprintf("attribute \"%s\" lists more than %d values", mm_shorten(key),
								MM_FILTER_LIST_MAX);
			vals[(*n)++] = e;
		}
		if (*n == 0)
			return psprintf("attribute \"%s\" is an empty list", mm_shorten(key));
	}
	else
		return psprintf(queue->criteria.intersect[f]
						? "attribute \"%s\" is neither a string nor a list of strings"
						: "attribute \"%s\" is not a string", mm_shorten(key));
	for (int i = 0; i < *n; i++)
		if (vals[i].val.string.len > MM_FILTER_VALUE_MAX)
			return psprintf(v->type == jbvString ? "attribute \"%s\" is longer than %d bytes"
							: "attribute \"%s\" lists a value longer than %d bytes", mm_shorten(key),
							MM_FILTER_VALUE_MAX);
	if (*n > 1)
	{
		int			m = 1;

		qsort(vals, *n, sizeof(JsonbValue), string_cmp);
		for (int i = 1; i < *n; i++)
			if (string_cmp(&vals[i], &vals[m - 1]) != 0)
				vals[m++] = vals[i];
		*n = m;
	}
	return NULL;
}

/*
 * Append a ticket's combined values to out, one after the other, their
 * lengths into lens (room for MM_FILTER_COMBOS_MAX) and their number into
 * *ncombos: one for each way to take a value of every filter (one only
 * without intersect filters), ascending.  Each is the filtered values in
 * the order params names them, each preceded by its length (4 bytes, big
 * endian), so that two tickets agree on every filter exactly when they
 * share a combined value.  Returns NULL, or what makes the attributes
 * unusable (a filter missing, not a string, too long, too many values).
 */
const char *
mm_filter_values(const MMQueue *queue, Jsonb *attributes, StringInfo out, int *lens, int *ncombos)
{
	int			nf = queue->criteria.nfilters;
	JsonbValue	vals[MM_MAX_FILTERS][MM_FILTER_LIST_MAX];
	int			nvals[MM_MAX_FILTERS];
	int			pick[MM_MAX_FILTERS];
	int			total = 1;

	*ncombos = 0;
	/* the block list is checked with the values, though it gives no key */
	if (queue->criteria.exclude != NULL)
	{
		JsonbValue	names[MM_EXCLUDE_MAX];
		int			n;
		const char *problem = mm_exclude_names(queue, attributes, names, &n);

		if (problem != NULL)
			return problem;
	}
	for (int f = 0; f < nf; f++)
	{
		const char *problem = filter_strings(queue, f, attributes, vals[f], &nvals[f]);

		if (problem != NULL)
			return problem;
		total *= nvals[f];
		if (total > MM_FILTER_COMBOS_MAX)
			return psprintf("attributes allow more than %d combinations of the values of %s",
							MM_FILTER_COMBOS_MAX, mm_filter_names(queue));
		pick[f] = 0;
	}
	/* what the combinations take when written out: each filter's values, total / nvals times each */
	{
		int64		bytes = 0;

		for (int f = 0; f < nf; f++)
		{
			int64		sum = 0;

			for (int i = 0; i < nvals[f]; i++)
				sum += 4 + vals[f][i].val.string.len;
			bytes += sum * (total / nvals[f]);
		}
		if (bytes > MM_FILTER_BYTES_MAX)
			return psprintf("attributes' combinations of the values of %s take more than %d bytes",
							mm_filter_names(queue), MM_FILTER_BYTES_MAX);
	}
	for (int c = 0; c < total; c++)
	{
		int			from = out->len;

		for (int f = 0; f < nf; f++)
		{
			JsonbValue *v = &vals[f][pick[f]];
			uint32		len = (uint32) v->val.string.len;
			unsigned char be[4];

			be[0] = (unsigned char) (len >> 24);
			be[1] = (unsigned char) (len >> 16);
			be[2] = (unsigned char) (len >> 8);
			be[3] = (unsigned char) len;
			appendBinaryStringInfo(out, (const char *) be, 4);
			appendBinaryStringInfo(out, v->val.string.val, v->val.string.len);
		}
		lens[(*ncombos)++] = out->len - from;
		/* the next combination, the last filter's value first */
		for (int f = nf - 1; f >= 0; f--)
		{
			if (++pick[f] < nvals[f])
				break;
			pick[f] = 0;
		}
	}
	return NULL;
}

/*
 * Append a ticket's one combined value to out (mm_filter_values; with
 * intersect filters their first combination, for attributes of one value
 * each, as a match's filters); returns NULL or the problem.
 */
const char *
mm_filter_value(const MMQueue *queue, Jsonb *attributes, StringInfo out)
{
	int			lens[MM_FILTER_COMBOS_MAX];
	int			n;
	int			from = out->len;
	const char *problem = mm_filter_values(queue, attributes, out, lens, &n);

	if (problem == NULL && n > 1)
		out->len = from + lens[0];
	return problem;
}

/* mm_filter_value, raising an error for a problem. */
void
mm_filter_require(const MMQueue *queue, Jsonb *attributes, const char *whose)
{
	StringInfoData buf;
	const char *problem;

	if (!mm_filters_any(queue))
		return;
	initStringInfo(&buf);
	problem = mm_filter_value(queue, attributes, &buf);
	if (problem != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %s, for queue \"%s\"", whose, problem, queue->name),
				 errdetail("%s", mm_filter_detail(queue)),
				 queue->criteria.nfilters == 0
				 ? errhint("Send the players it blocks as a list, for example '{\"%s\": [\"player-1\"]}', or leave the key out.",
						   mm_shorten(queue->criteria.exclude))
				 : queue->criteria.intersect[0]
				 ? errhint("Send them in the attributes, for example '{\"%s\": [\"first\", \"second\"]}'.",
						   mm_shorten(queue->criteria.filter[0]))
				 : errhint("Send them in the attributes, for example '{\"%s\": \"ranked\"}'.",
						   mm_shorten(queue->criteria.filter[0]))));
	pfree(buf.data);
}

/* Whether the queue has filters of any kind. */
bool
mm_filters_any(const MMQueue *queue)
{
	return queue->criteria.nfilters > 0 || queue->criteria.exclude != NULL;
}

/*
 * The players a ticket's block list names (the exclude filter's attribute:
 * none when it is missing or null, else a list of at most MM_EXCLUDE_MAX
 * strings of at most MM_EXCLUDE_NAME_MAX bytes) into names and *n;
 * returns NULL or the problem.
 */
const char *
mm_exclude_names(const MMQueue *queue, Jsonb *attributes, JsonbValue *names, int *n)
{
	const char *key = queue->criteria.exclude;
	JsonbValue *v = attributes == NULL ? NULL :
		getKeyJsonValueFromContainer(&attributes->root, key, strlen(key), NULL);
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

	*n = 0;
	if (v == NULL || v->type == jbvNull)
		return NULL;
	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		return psprintf("attribute \"%s\" is not a list of players", mm_shorten(key));
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString)
			return psprintf("attribute \"%s\" lists a player that is not a string", mm_shorten(key));
		if (e.val.string.len > MM_EXCLUDE_NAME_MAX)
			return psprintf("attribute \"%s\" lists a player longer than %d bytes", mm_shorten(key),
							MM_EXCLUDE_NAME_MAX);
		if (*n >= MM_EXCLUDE_MAX)
			return psprintf("attribute \"%s\" lists more than %d players", mm_shorten(key), MM_EXCLUDE_MAX);
		names[(*n)++] = e;
	}
	return NULL;
}

/* What the queue's filters ask of the attributes, for an error's detail. */
char *
mm_filter_detail(const MMQueue *queue)
{
	if (queue->criteria.nfilters == 0)
		return psprintf("The queue's players may send in \"%s\" a list of at most %d players (identifiers of at most %d bytes) they never meet.",
						mm_shorten(queue->criteria.exclude), MM_EXCLUDE_MAX, MM_EXCLUDE_NAME_MAX);
	if (!queue->criteria.any_intersect)
		return psprintf("The queue matches only players with equal values of %s, each a string of at most %d bytes.",
						mm_filter_names(queue), MM_FILTER_VALUE_MAX);
	return psprintf("The queue filters on %s: each a string of at most %d bytes, an intersect filter "
					"also a list of at most %d of them, at most %d combinations in all, taking at most %d bytes.",
					mm_filter_names(queue), MM_FILTER_VALUE_MAX, MM_FILTER_LIST_MAX,
					MM_FILTER_COMBOS_MAX, MM_FILTER_BYTES_MAX);
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

/* Sort context of one filter's values across a dictionary's entries. */
typedef struct FilterColumn
{
	const char **val;
	int		   *len;
} FilterColumn;

static int
column_cmp(const void *x, const void *y, void *arg)
{
	const FilterColumn *c = arg;
	int			a = *(const int *) x;
	int			b = *(const int *) y;

	if (c->len[a] != c->len[b])
		return c->len[a] < c->len[b] ? -1 : 1;
	return memcmp(c->val[a], c->val[b], c->len[a]);
}

/*
 * Each dictionary entry's value of each filter, numbered per filter (the
 * core's MMPool.key_values): dict->n rows of nfilters ids.
 */
int32 *
mm_filter_key_values(const MMQueue *queue, const MMFilterDict *dict)
{
	int			nf = queue->criteria.nfilters;
	int			n = dict->n;
	int32	   *out = palloc_extended(sizeof(int32) * (Size) Max(n, 1) * nf, MCXT_ALLOC_HUGE);
	int		   *at = palloc0_array(int, Max(n, 1));
	int		   *order = palloc_array(int, Max(n, 1));
	FilterColumn col;

	col.val = palloc_array(const char *, Max(n, 1));
	col.len = palloc_array(int, Max(n, 1));
	for (int f = 0; f < nf; f++)
	{
		int32		id = -1;

		for (int k = 0; k < n; k++)
		{
			const unsigned char *be = (const unsigned char *) dict->values[k] + at[k];
			uint32		len;

			if (at[k] + 4 > dict->lens[k])
				elog(ERROR, "filter value of %d bytes ends before filter %d", dict->lens[k], f + 1);
			len = ((uint32) be[0] << 24) | ((uint32) be[1] << 16) | ((uint32) be[2] << 8) | be[3];
			if (len > (uint32) (dict->lens[k] - at[k] - 4))
				elog(ERROR, "filter value of %d bytes ends inside filter %d", dict->lens[k], f + 1);
			col.val[k] = dict->values[k] + at[k] + 4;
			col.len[k] = (int) len;
			at[k] += 4 + (int) len;
			order[k] = k;
		}
		qsort_arg(order, n, sizeof(int), column_cmp, &col);
		for (int i = 0; i < n; i++)
		{
			if (i == 0 || column_cmp(&order[i - 1], &order[i], &col) != 0)
				id++;
			out[(Size) order[i] * nf + f] = id;
		}
	}
	pfree(at);
	pfree(order);
	pfree(col.val);
	pfree(col.len);
	return out;
}

/* The queue's optional_after of each filter, INFINITY for none (the core's relax_after). */
double *
mm_filter_relax_seconds(const MMQueue *queue)
{
	double	   *out = palloc_array(double, Max(queue->criteria.nfilters, 1));

	for (int f = 0; f < queue->criteria.nfilters; f++)
		out[f] = queue->criteria.relax_after[f] > 0 ? queue->criteria.relax_after[f] : INFINITY;
	return out;
}

/*
 * The names of the filters in mask (bit f: filter f) as a JSON array, or
 * NULL for none.
 */
char *
mm_filter_mask_array(const MMQueue *queue, uint32 mask)
{
	StringInfoData buf;
	bool		first = true;

	if (mask == 0)
		return NULL;
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int f = 0; f < queue->criteria.nfilters; f++)
		if (mask & ((uint32) 1 << f))
		{
			appendStringInfoString(&buf, first ? "" : ", ");
			escape_json(&buf, queue->criteria.filter[f]);
			first = false;
		}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* Sort context of player names. */
static int
name_cmp(const void *x, const void *y, void *arg)
{
	char	  **names = arg;

	return strcmp(names[*(const int *) x], names[*(const int *) y]);
}

/*
 * Block lists for the core (MMPool.player, block_start, block): row r is
 * player players[r] and blocks the players named in names[r][0 ..
 * nnames[r]); names of no row's player are left out (nobody of them
 * waits), the rest become the rows' player numbers, sorted.
 */
void
mm_exclude_rows(char **players, char ***names, const int *nnames, int n,
				int32 **player_out, int32 **start_out, int32 **block_out)
{
	int		   *order = palloc_array(int, Max(n, 1));
	int32	   *player = palloc_array(int32, Max(n, 1));
	int32	   *start = palloc_array(int32, n + 1);
	int64		total = 0;
	int32	   *block;
	int32		at = 0;

	for (int r = 0; r < n; r++)
	{
		order[r] = r;
		total += nnames[r];
	}
	qsort_arg(order, n, sizeof(int), name_cmp, players);
	for (int i = 0; i < n; i++)
		player[order[i]] = (i > 0 && strcmp(players[order[i]], players[order[i - 1]]) == 0)
			? player[order[i - 1]] : i;
	block = palloc_extended(sizeof(int32) * Max(total, 1), MCXT_ALLOC_HUGE);
	for (int r = 0; r < n; r++)
	{
		int32		from = at;

		start[r] = at;
		for (int j = 0; j < nnames[r]; j++)
		{
			int			lo = 0;
			int			hi = n;

			while (lo < hi)
			{
				int			mid = lo + (hi - lo) / 2;

				if (strcmp(players[order[mid]], names[r][j]) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < n && strcmp(players[order[lo]], names[r][j]) == 0)
				block[at++] = player[order[lo]];
		}
		/* sorted, each once */
		qsort(block + from, at - from, sizeof(int32), mm_int32_cmp);
		{
			int32		w = from;

			for (int32 j = from; j < at; j++)
				if (j == from || block[j] != block[j - 1])
					block[w++] = block[j];
			at = w;
		}
	}
	start[n] = at;
	pfree(order);
	*player_out = player;
	*start_out = start;
	*block_out = block;
}
