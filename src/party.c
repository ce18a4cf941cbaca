/*
 * party.c
 *		Roles (params.roles, a ticket's attribute "roles") and the rating a
 *		party groups at (params.party_rating); enqueue_party itself is in
 *		ticket.c, next to enqueue.
 *
 * A ticket of a queue with roles lists the roles its player can play:
 * attributes.roles is a list of 1 to MM_MAX_ROLES distinct role names of
 * the queue.  The core works on masks (bit r for the queue's role r, in
 * params order).
 */
#include "matchmaker.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

/*
 * The role mask of a "roles" value (a JSON list of role names), or a
 * problem (NULL when usable).
 */
const char *
mm_roles_value_problem(const MMQueue *queue, JsonbValue *v, uint8 *mask)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	int			n = 0;

	*mask = 0;
	if (v == NULL)
		return "attributes lack \"roles\", the roles the player can play";
	if (v->type != jbvBinary || !JsonContainerIsArray(v->val.binary.data))
		return "attribute \"roles\" is not a list of role names";
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		int			r;

		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString)
			return "attribute \"roles\" is not a list of role names";
		for (r = 0; r < queue->cfg.roles.n; r++)
			if (strlen(queue->criteria.role[r]) == (size_t) e.val.string.len &&
				memcmp(queue->criteria.role[r], e.val.string.val, e.val.string.len) == 0)
				break;
		if (r == queue->cfg.roles.n)
			return psprintf("attribute \"roles\" names \"%s\", not a role of the queue",
							mm_shorten(pnstrdup(e.val.string.val, e.val.string.len)));
		if (*mask & (1 << r))
			return psprintf("attribute \"roles\" names \"%s\" twice", mm_shorten(queue->criteria.role[r]));
		*mask |= 1 << r;
		n++;
	}
	if (n == 0)
		return "attribute \"roles\" is an empty list";
	return NULL;
}

/*
 * The role mask of a ticket's attributes, or a problem (NULL when usable);
 * 0 and no problem when the queue has no roles.
 */
const char *
mm_roles_problem(const MMQueue *queue, Jsonb *attributes, uint8 *mask)
{
	*mask = 0;
	if (queue->cfg.roles.n == 0)
		return NULL;
	return mm_roles_value_problem(queue, attributes == NULL ? NULL :
								  getKeyJsonValueFromContainer(&attributes->root, "roles", 5, NULL),
								  mask);
}

/* The queue's roles as a detail: "The roles of queue \"q\" are tank, healer and dps." */
char *
mm_roles_detail(const MMQueue *queue)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfo(&buf, "The roles of queue \"%s\" are ", queue->name);
	for (int r = 0; r < queue->cfg.roles.n; r++)
		appendStringInfo(&buf, "%s\"%s\" (%d per team)",
						 r == 0 ? "" : r == queue->cfg.roles.n - 1 ? " and " : ", ",
						 mm_shorten(queue->criteria.role[r]), queue->cfg.roles.slots[r]);
	appendStringInfoChar(&buf, '.');
	return buf.data;
}

/* Raise the error of a roles problem of whose (e.g. "the player's") attributes. */
void
mm_roles_error(const MMQueue *queue, const char *problem, const char *whose)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s %s, for queue \"%s\"", whose, problem, queue->name),
			 errdetail("%s", mm_roles_detail(queue)),
			 errhint("List the roles the player can play, for example '{\"roles\": [\"%s\"]}'.",
					 mm_shorten(queue->criteria.role[0]))));
}

/* Order ticket indices by their party number, then index (qsort_arg). */
static int
party_cmp(const void *l, const void *r, void *arg)
{
	const int32 *party = arg;
	int			a = *(const int *) l;
	int			b = *(const int *) r;

	if (party[a] != party[b])
		return party[a] < party[b] ? -1 : 1;
	return (a > b) - (a < b);
}

/*
 * Set each party's members' (normalised) ratings to the party's rating
 * (params.party_rating: the mean, or the max, of the members' ratings).
 * party[i] is ticket i's party number (-1 alone), ratings[i] its rating;
 * order is scratch of n entries.
 */
void
mm_party_ratings(const MMQueue *queue, int n, const int32 *party, double *ratings,
				 int *order)
{
	int			m = 0;

	for (int i = 0; i < n; i++)
		if (party[i] >= 0)
			order[m++] = i;
	qsort_arg(order, m, sizeof(int), party_cmp, (void *) party);
	for (int b = 0; b < m;)
	{
		int			e = b + 1;
		double		sum = ratings[order[b]];
		double		best = ratings[order[b]];
		double		r;

		for (; e < m && party[order[e]] == party[order[b]]; e++)
		{
			sum += ratings[order[e]];
			best = Max(best, ratings[order[e]]);
		}
		r = queue->criteria.party_max ? best : sum / (e - b);
		for (int i = b; i < e; i++)
			ratings[order[i]] = r;
		b = e;
	}
}
