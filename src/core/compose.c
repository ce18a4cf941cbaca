/*
 * compose.c
 *		Parties and roles in every algorithm but optimize: a party (the
 *		tickets sharing MMTicket.party) plays whole, in one team; with roles
 *		(cfg->roles) every team can give each of its players one role the
 *		player lists, no role above its places.
 *
 * The algorithm decides as usual, each member of a party at the party's
 * rating (the caller's), so that rating orders keep a party together.
 * mm_compose then rewrites what it decided, match by match in its order:
 *  - a match keeps the units (a whole party, or a solo ticket) it holds
 *    whole, oldest first, each while the kept units can still be placed
 *    in teams (fits: capacities and roles, below); a party the algorithm
 *    split over two matches leaves both;
 *  - a full match that lost players is completed with waiting units that
 *    fit, near the kept players' mean rating, among those in no match the
 *    step formed (the nearest first, then the largest of them first; a
 *    difference_wait provisional group that gives one up is dissolved by
 *    the next step); failing that it is tried without its youngest kept
 *    units, then dissolves;
 *  - a match with computer players keeps what fits, the computer players
 *    taking the places left; a smaller match (min_players) what fits if
 *    that is still min_players;
 *  - the units of the step's full matches left over seed full matches,
 *    oldest first, completed the same way; the others wait;
 *  - an expiry ends its ticket's whole party;
 *  - a unit left out that has reached max_wait then plays with computer
 *    players (timed-out units packed together, in rating order, while
 *    they fit), or expires.
 *
 * Units fit a match when its players can take places in teams of
 * team_size, a party's all in one team, each player a place of a role it
 * lists (no roles: one role with team_size places).  Given the team of
 * each party, that is a flow of players to (team, role) places, found by
 * augmenting paths (Flow below): exact, and kept from one unit added to
 * the next, so a test costs one path per player added.  A party is tried
 * in each team in turn (the teams without a party are interchangeable:
 * players alone move between teams along the paths); when none takes it,
 * every party of the set is placed again by a depth-first search over
 * their teams, a flow at each leaf, within COMPOSE_NODES nodes.  The
 * match takes the teams compose found; finish_matches then balances the
 * teams' rating sums, moving whole units only where each team still
 * passes Hall's condition (for every set X of roles, the team's players
 * whose roles all lie in X are at most X's places): exhaustively for up
 * to COMPOSE_EXACT_UNITS units, by improving swaps above.
 */
#include "mm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Nodes of one search over parties' teams at most; beyond, the units do not fit. */
#define COMPOSE_NODES		64
/* Such searches per match being built at most. */
#define COMPOSE_SEARCHES	2
/*
 * Work of one step's completions at most, counted in places and players
 * looked at (half a second on the benchmark machine in the worst shapes
 * measured); beyond, a match that lost players is not completed and its
 * players wait for the next step.
 */
#define COMPOSE_WORK		1000000000
/* fit_move calls of the balancing by swaps of one match at most. */
#define COMPOSE_SWAP_MOVES	200000
/* Search nodes of the balancing of a formed match's teams at most. */
#define COMPOSE_SPLIT_NODES 20000
/* Units of a match balanced exhaustively at most; above, by swaps. */
#define COMPOSE_EXACT_UNITS 12
/* Improving swaps of the balancing above COMPOSE_EXACT_UNITS at most. */
#define COMPOSE_SWAPS		100
/* Waiting units a completion looks at, at most 64 + this times k. */
#define COMPOSE_SCAN		4

/* Teams tried lightest first when balancing up to this many teams; in order above. */
#define COMPOSE_BALANCE_TEAMS 16

#define ROLE_SETS			(1 << MM_MAX_ROLES)

/* A unit: a party's tickets or a solo ticket. */
typedef struct Unit
{
	int			first;			/* its tickets: c->umem[first .. first + size) */
	int			size;
	double		rating;			/* its players' mean */
	double		arrival;		/* its oldest player's */
	int			oldest;			/* pool index of its oldest player */
	int			whole;			/* the match (index) the step put it in whole, or -1 */
	int			state;
	bool		wanted;			/* in a full match of the step, whole or not */
} Unit;

#define U_FREE		0
#define U_TAKEN		1
#define U_EXPIRED	2
#define U_INSET		3			/* in the set being built */

/*
 * Placing units into teams: the teams' loads, rating sums and, for each
 * set X of roles, how many of their players list only roles of X.
 */
typedef struct Fit
{
	int			teams;
	int			team_size;
	int			nsets;			/* 2^roles (1 without roles) */
	int			places[ROLE_SETS];	/* places of the roles of X in one team */
	int		   *within;			/* teams x nsets */
	int		   *load;
	double	   *sum;
	long		budget;
	/* the units to place, in search order, and their teams */
	int			n;
	const int  *size;
	const uint8_t *const *masks;	/* each unit's players' role masks */
	const double *rsum;			/* each unit's rating sum */
	int		   *team;
	/* balancing: the best placement so far */
	int		   *best;
	double		best_spread;
} Fit;

/* A unit of a formed match for the team split and the role assignment. */
typedef struct Piece
{
	int			size;
	double		rsum;
	int			first;			/* into the member list */
	int			minpos;
} Piece;

/* Allocate a Fit for cfg; false when memory runs out. */
static bool
fit_init(Fit *f, const MMConfig *cfg, int maxunits)
{
	f->teams = cfg->teams;
	f->team_size = cfg->team_size;
	f->nsets = 1 << cfg->roles.n;
	for (int x = 0; x < f->nsets; x++)
	{
		f->places[x] = cfg->roles.n == 0 ? cfg->team_size : 0;
		for (int r = 0; r < cfg->roles.n; r++)
			if (x & (1 << r))
				f->places[x] += cfg->roles.slots[r];
	}
	f->within = mm_calloc((size_t) f->teams * f->nsets, sizeof(int));
	f->load = mm_calloc((size_t) f->teams, sizeof(int));
	f->sum = mm_calloc((size_t) f->teams, sizeof(double));
	f->team = mm_malloc_array((size_t) (maxunits > 0 ? maxunits : 1), sizeof(int));
	f->best = mm_malloc_array((size_t) (maxunits > 0 ? maxunits : 1), sizeof(int));
	return f->within != NULL && f->load != NULL && f->sum != NULL &&
		f->team != NULL && f->best != NULL;
}

static void
fit_free(Fit *f)
{
	mm_free(f->within);
	mm_free(f->load);
	mm_free(f->sum);
	mm_free(f->team);
	mm_free(f->best);
}

/*
 * Put unit i into team t (delta 1) or take it out (-1); returns whether
 * the team's players can still take distinct places of their roles.
 */
static bool
fit_move(Fit *f, int i, int t, int delta)
{
	int		   *w = f->within + (size_t) t * f->nsets;
	int			full = f->nsets - 1;
	bool		ok = true;

	for (int p = 0; p < f->size[i]; p++)
	{
		int			m = f->masks[i] == NULL ? 0 : f->masks[i][p];

		for (int x = m;; x = (x + 1) | m)
		{
			w[x] += delta;
			if (w[x] > f->places[x])
				ok = false;
			if (x == full)
				break;
		}
	}
	f->load[t] += delta * f->size[i];
	f->sum[t] += delta * f->rsum[i];
	return ok;
}

static double
fit_spread(const Fit *f)
{
	double		lo = f->sum[0];
	double		hi = f->sum[0];

	for (int t = 1; t < f->teams; t++)
	{
		lo = f->sum[t] < lo ? f->sum[t] : lo;
		hi = f->sum[t] > hi ? f->sum[t] : hi;
	}
	return hi - lo;
}

/*
 * Depth-first placement of units i .. n, each in a team with room, empty
 * teams being interchangeable (only the first is tried), teams tried
 * lightest first (up to COMPOSE_BALANCE_TEAMS teams, else in order); every
 * leaf's spread is compared with the best so far, until the budget ends
 * or a spread of zero is found.  Returns whether a leaf was reached.
 */
static bool
fit_search(Fit *f, int i)
{
	bool		tried_empty = false;
	bool		found = false;

	if (i == f->n)
	{
		double		s = fit_spread(f);

		if (s < f->best_spread)
		{
			f->best_spread = s;
			memcpy(f->best, f->team, sizeof(int) * (size_t) f->n);
		}
		return true;
	}
	if (--f->budget < 0)
		return false;
	for (int pass = 0; pass < f->teams; pass++)
	{
		int			t = pass;

		if (f->teams <= COMPOSE_BALANCE_TEAMS)
		{
			/* the pass-th lightest team (ties by number) */
			for (t = 0; t < f->teams; t++)
			{
				int			rank = 0;

				for (int u = 0; u < f->teams; u++)
					if (f->sum[u] < f->sum[t] || (f->sum[u] == f->sum[t] && u < t))
						rank++;
				if (rank == pass)
					break;
			}
		}
		if (f->load[t] == 0)
		{
			if (tried_empty)
				continue;
			tried_empty = true;
		}
		if (f->load[t] + f->size[i] > f->team_size)
			continue;
		if (fit_move(f, i, t, 1))
		{
			f->team[i] = t;
			found |= fit_search(f, i + 1);
		}
		fit_move(f, i, t, -1);
		if (f->budget < 0 || f->best_spread <= MM_BALANCE_TOLERANCE)
			break;
	}
	return found;
}

/* ----------------------------------------------------------------
 * Players to (team, role) places: augmenting paths
 * ----------------------------------------------------------------
 */

/*
 * The players of the set being built and their places.  Node v = team *
 * nroles + role holds at most places[role] players (list[v * team_size
 * ..]); a party's player may take only its party's team's nodes, one
 * alone any team's.  Without roles there is one role of team_size places
 * and every mask is 1.
 */
typedef struct Flow
{
	int			teams;
	int			nroles;
	int			team_size;
	int			places[MM_MAX_ROLES];
	int			nnodes;
	int			np;				/* players */
	uint8_t    *pmask;
	int		   *fixed;			/* a party player's team, -1 alone */
	int		   *node;			/* its node, -1 none yet */
	int		   *fill;			/* per node */
	int		   *list;			/* per node, team_size entries */
	int		   *seen;			/* per node: the stamp of the last search that looked */
	int			stamp;
	/* a copy to go back to */
	int			s_np;
	uint8_t    *s_pmask;
	int		   *s_fixed;
	int		   *s_node;
	int		   *s_fill;
	int		   *s_list;
} Flow;

static bool
flow_init(Flow *f, const MMConfig *cfg, int maxplayers)
{
	size_t		nodes;

	memset(f, 0, sizeof(Flow));
	f->teams = cfg->teams;
	f->team_size = cfg->team_size;
	f->nroles = cfg->roles.n > 0 ? cfg->roles.n : 1;
	for (int r = 0; r < f->nroles; r++)
		f->places[r] = cfg->roles.n > 0 ? cfg->roles.slots[r] : cfg->team_size;
	f->nnodes = f->teams * f->nroles;
	nodes = (size_t) f->nnodes;
	f->pmask = mm_malloc_array((size_t) maxplayers, sizeof(uint8_t));
	f->fixed = mm_malloc_array((size_t) maxplayers, sizeof(int));
	f->node = mm_malloc_array((size_t) maxplayers, sizeof(int));
	f->s_node = mm_malloc_array((size_t) maxplayers, sizeof(int));
	f->s_pmask = mm_malloc_array((size_t) maxplayers, sizeof(uint8_t));
	f->s_fixed = mm_malloc_array((size_t) maxplayers, sizeof(int));
	f->fill = mm_calloc(nodes, sizeof(int));
	f->s_fill = mm_calloc(nodes, sizeof(int));
	f->seen = mm_calloc(nodes, sizeof(int));
	f->list = mm_malloc_array(nodes * (size_t) f->team_size, sizeof(int));
	f->s_list = mm_malloc_array(nodes * (size_t) f->team_size, sizeof(int));
	return f->pmask != NULL && f->fixed != NULL && f->node != NULL && f->s_node != NULL &&
		f->s_pmask != NULL && f->s_fixed != NULL &&
		f->fill != NULL && f->s_fill != NULL && f->seen != NULL && f->list != NULL &&
		f->s_list != NULL;
}

static void
flow_free(Flow *f)
{
	mm_free(f->pmask);
	mm_free(f->fixed);
	mm_free(f->node);
	mm_free(f->s_node);
	mm_free(f->s_pmask);
	mm_free(f->s_fixed);
	mm_free(f->fill);
	mm_free(f->s_fill);
	mm_free(f->seen);
	mm_free(f->list);
	mm_free(f->s_list);
}

static void
flow_clear(Flow *f)
{
	f->np = 0;
	memset(f->fill, 0, sizeof(int) * (size_t) f->nnodes);
}

static void
flow_save(Flow *f)
{
	f->s_np = f->np;
	memcpy(f->s_node, f->node, sizeof(int) * (size_t) f->np);
	memcpy(f->s_pmask, f->pmask, sizeof(uint8_t) * (size_t) f->np);
	memcpy(f->s_fixed, f->fixed, sizeof(int) * (size_t) f->np);
	memcpy(f->s_fill, f->fill, sizeof(int) * (size_t) f->nnodes);
	for (int v = 0; v < f->nnodes; v++)
		memcpy(f->s_list + (size_t) v * f->team_size, f->list + (size_t) v * f->team_size,
			   sizeof(int) * (size_t) f->fill[v]);
}

static void
flow_restore(Flow *f)
{
	f->np = f->s_np;
	memcpy(f->node, f->s_node, sizeof(int) * (size_t) f->np);
	memcpy(f->pmask, f->s_pmask, sizeof(uint8_t) * (size_t) f->np);
	memcpy(f->fixed, f->s_fixed, sizeof(int) * (size_t) f->np);
	memcpy(f->fill, f->s_fill, sizeof(int) * (size_t) f->nnodes);
	for (int v = 0; v < f->nnodes; v++)
		memcpy(f->list + (size_t) v * f->team_size, f->s_list + (size_t) v * f->team_size,
			   sizeof(int) * (size_t) f->fill[v]);
}

/*
 * Find player g a place (Kuhn): a node it may take with room, or one whose
 * holder moves on along such a path.  Each node is looked at once per
 * stamp, so a search is O(nodes + players placed).
 */
static bool
flow_augment(Flow *f, int g)
{
	int			lo = f->fixed[g] >= 0 ? f->fixed[g] : 0;
	int			hi = f->fixed[g] >= 0 ? f->fixed[g] + 1 : f->teams;

	for (int t = lo; t < hi; t++)
		for (int r = 0; r < f->nroles; r++)
		{
			int			v = t * f->nroles + r;
			int		   *l = f->list + (size_t) v * f->team_size;

			if (!(f->pmask[g] & (1 << r)) || f->seen[v] == f->stamp)
				continue;
			f->seen[v] = f->stamp;
			if (f->fill[v] < f->places[r])
			{
				l[f->fill[v]++] = g;
				f->node[g] = v;
				return true;
			}
			for (int j = 0; j < f->fill[v]; j++)
				if (flow_augment(f, l[j]))
				{
					l[j] = g;
					f->node[g] = v;
					return true;
				}
		}
	return false;
}

/* Add a player (mask, fixed team or -1) and place it; false when it cannot be. */
static bool
flow_add(Flow *f, uint8_t mask, int fixed)
{
	int			g = f->np++;

	f->pmask[g] = mask;
	f->fixed[g] = fixed;
	f->node[g] = -1;
	f->stamp++;
	return flow_augment(f, g);
}

/* ----------------------------------------------------------------
 * Rewriting a step's decision
 * ----------------------------------------------------------------
 */

typedef struct Compose
{
	const MMConfig *cfg;
	const MMPool *pool;
	int			k;
	int			n;
	int			nunits;
	Unit	   *units;
	int		   *umem;			/* tickets grouped by unit */
	int		   *unit_of;		/* pool index -> unit */
	int		   *byrating;		/* units by rating, then oldest */
	uint8_t    *mask;			/* pool index -> role mask, then by unit (see gather_units) */
	const uint8_t **umask;		/* unit -> its members' masks */
	/* the set being built: its units, their first player, each party's team */
	int		   *set;
	int		   *set_first;
	int		   *set_team;
	int			nset;
	int			players;
	int		   *party_load;		/* per team: players of the set's parties in it */
	Flow		flow;
	/* the depth-first search over parties' teams: the parties, by size, and their teams */
	int		   *order;
	int		   *try_team;
	long		budget;
	int			searches;		/* place_parties searches the set may still make */
	int64_t		work;			/* this step's completions so far (COMPOSE_WORK) */
	int		   *cand;			/* complete's candidates, 64 + COMPOSE_SCAN k */
	double	   *cdist;
	/* players of units still free or in the set, by role mask */
	int64_t		free_by_mask[ROLE_SETS];
	/* the rewritten decision */
	MMMatch    *matches;
	int			nmatches;
	int		   *members;
	int		   *teams;
	int			nmembers;
	int		   *expired;
	int			nexpired;
	int		   *count;			/* per unit, scratch (zeros) */
	struct MemberTeam *mt;		/* set_emit's scratch, k + 1 entries */
} Compose;

/* A member's mask for the flow: its roles, or 1 without roles. */
static uint8_t
flow_mask(const Compose *c, int u, int p)
{
	return c->cfg->roles.n > 0 ? c->umask[u][p] : 1;
}

/* Parties by size (larger first), then oldest: the search order. */
static void
order_parties(Compose *c, int *np)
{
	int			m = 0;

	for (int s = 0; s < c->nset; s++)
		if (c->units[c->set[s]].size > 1)
			c->order[m++] = s;
	for (int i = 1; i < m; i++)
	{
		int			v = c->order[i];
		int			p = i;

		for (; p > 0; p--)
		{
			const Unit *a = &c->units[c->set[c->order[p - 1]]];
			const Unit *b = &c->units[c->set[v]];

			if (a->size > b->size || (a->size == b->size && a->oldest < b->oldest))
				break;
			c->order[p] = c->order[p - 1];
		}
		c->order[p] = v;
	}
	*np = m;
}

/* Build the flow of the whole set with each party in set_team; false when it does not fit. */
static bool
flow_rebuild(Compose *c)
{
	flow_clear(&c->flow);
	for (int s = 0; s < c->nset; s++)
	{
		const Unit *un = &c->units[c->set[s]];

		c->set_first[s] = c->flow.np;
		for (int p = 0; p < un->size; p++)
			if (!flow_add(&c->flow, flow_mask(c, c->set[s], p), un->size > 1 ? c->set_team[s] : -1))
				return false;
	}
	return true;
}

/*
 * Teams for the parties order[i ..] (m of them), each in a team with room
 * for it beside the parties already placed (teams without a party being
 * interchangeable), a flow of the whole set at each leaf.
 */
static bool
place_parties(Compose *c, int i, int m)
{
	bool		tried_empty = false;

	if (i == m)
	{
		c->work += (int64_t) (c->flow.nnodes + c->players) * (c->players + 1);
		return flow_rebuild(c);
	}
	if (--c->budget < 0)
		return false;
	for (int t = 0; t < c->cfg->teams; t++)
	{
		int			s = c->order[i];
		int			size = c->units[c->set[s]].size;

		if (c->party_load[t] == 0)
		{
			if (tried_empty)
				continue;
			tried_empty = true;
		}
		if (c->party_load[t] + size > c->cfg->team_size)
			continue;
		c->party_load[t] += size;
		c->set_team[s] = t;
		if (place_parties(c, i + 1, m))
			return true;
		c->party_load[t] -= size;
		if (c->budget < 0)
			return false;
	}
	return false;
}

/*
 * Whether the set with unit u added still fits; adds it when it does.  u
 * alone: one more path.  A party: each team in turn that has room beside
 * the set's parties; failing those, every party placed again
 * (place_parties).
 */
static bool
set_try(Compose *c, int u)
{
	const Unit *un = &c->units[u];
	int			s = c->nset;
	bool		tried_empty = false;
	bool		placed = false;
	bool		other_party = false;

	if (c->players + un->size > c->k)
		return false;
	c->work += c->flow.nnodes + c->players + 1;
	c->set[s] = u;
	c->set_first[s] = c->flow.np;
	c->set_team[s] = -1;
	if (un->size == 1)
	{
		/* a search that fails changes no place: only the player goes */
		if (!flow_add(&c->flow, flow_mask(c, u, 0), -1))
		{
			c->flow.np--;
			return false;
		}
		c->nset++;
		c->players += un->size;
		c->units[u].state = U_INSET;
		return true;
	}
	flow_save(&c->flow);
	c->work += (int64_t) (c->flow.nnodes + c->players) * (1 + c->cfg->teams);
	for (int t = 0; t < c->cfg->teams && !placed; t++)
	{
		bool		ok = true;

		if (c->party_load[t] == 0)
		{
			if (tried_empty)
				continue;
			tried_empty = true;
		}
		else
			other_party = true;
		if (c->party_load[t] + un->size > c->cfg->team_size)
			continue;
		for (int p = 0; p < un->size && ok; p++)
			ok = flow_add(&c->flow, flow_mask(c, u, p), t);
		if (ok)
		{
			c->set_team[s] = t;
			c->party_load[t] += un->size;
			placed = true;
		}
		else
			flow_restore(&c->flow);
	}
	/*
	 * every party of the set placed again, when another party's team may
	 * be in the way (a few searches per match, each bounded)
	 */
	if (!placed && other_party && c->searches > 0)
	{
		int			m;
		int		   *old = c->try_team;

		c->searches--;
		c->nset++;
		for (int q = 0; q < c->nset; q++)
			old[q] = c->set_team[q];
		order_parties(c, &m);
		for (int t = 0; t < c->cfg->teams; t++)
			c->party_load[t] = 0;
		c->budget = COMPOSE_NODES;
		placed = place_parties(c, 0, m);
		c->nset--;
		if (!placed)
		{
			for (int q = 0; q < c->nset; q++)
				c->set_team[q] = old[q];
			for (int t = 0; t < c->cfg->teams; t++)
				c->party_load[t] = 0;
			for (int q = 0; q < c->nset; q++)
				if (c->set_team[q] >= 0)
					c->party_load[c->set_team[q]] += c->units[c->set[q]].size;
			flow_restore(&c->flow);
		}
	}
	if (!placed)
		return false;
	c->nset++;
	c->players += un->size;
	c->units[u].state = U_INSET;
	return true;
}

/* Start a new set; the units of one not emitted wait again. */
static void
set_clear(Compose *c)
{
	for (int s = 0; s < c->nset; s++)
		if (c->units[c->set[s]].state == U_INSET)
			c->units[c->set[s]].state = U_FREE;
	c->nset = 0;
	c->players = 0;
	c->searches = COMPOSE_SEARCHES;
	flow_clear(&c->flow);
	for (int t = 0; t < c->cfg->teams; t++)
		c->party_load[t] = 0;
}

/* A unit leaves the free players (taken or expired). */
static void
unit_gone(Compose *c, int u)
{
	for (int p = 0; p < c->units[u].size; p++)
		c->free_by_mask[c->umask[u][p]]--;
}

/* A member with its team, to list a match's members in pool order. */
typedef struct MemberTeam
{
	int			member;
	int			team;
} MemberTeam;

static int
member_team_cmp(const void *l, const void *r)
{
	const MemberTeam *a = l;
	const MemberTeam *b = r;

	return (a->member > b->member) - (a->member < b->member);
}

/*
 * Emit the set as a match with bots computer players, each member in the
 * team the flow gave it (1-based; finish_matches balances and numbers
 * them); its units are taken.
 */
static void
set_emit(Compose *c, int bots)
{
	MMMatch    *m = &c->matches[c->nmatches++];
	MemberTeam *mt = c->mt;
	int			cnt = 0;

	for (int s = 0; s < c->nset; s++)
	{
		Unit	   *un = &c->units[c->set[s]];

		for (int p = 0; p < un->size; p++)
		{
			mt[cnt].member = c->umem[un->first + p];
			mt[cnt].team = c->flow.node[c->set_first[s] + p] / c->flow.nroles + 1;
			cnt++;
		}
		un->state = U_TAKEN;
		unit_gone(c, c->set[s]);
	}
	qsort(mt, cnt, sizeof(MemberTeam), member_team_cmp);
	for (int i = 0; i < cnt; i++)
	{
		c->members[c->nmembers + i] = mt[i].member;
		c->teams[c->nmembers + i] = mt[i].team;
	}
	m->first = c->nmembers;
	m->nmembers = cnt;
	m->bots = bots;
	memset(&m->cost, 0, sizeof(MMCost));
	c->nmembers += cnt;
}

/*
 * Whether unit u may complete match j: waiting, not kept for a later
 * match.  A unit of a difference_wait provisional group may: its group,
 * short of a member, is dissolved by the next step (its players look for
 * partners again), where waiting for the group to change would only see
 * it form again around the same split party.
 */
static bool
unit_free(const Compose *c, int u, int j)
{
	const Unit *un = &c->units[u];

	return un->state == U_FREE && !(un->whole > j);
}

/*
 * Whether the players still free (and those of the set) could fill every
 * team's places at all: for each set Y of roles, the places of Y in all
 * teams are no more than the players who list a role of Y.  A necessary
 * condition, O(roles x 2^roles), that spares a completion's scan when
 * roles are short.
 */
static bool
completion_possible(const Compose *c)
{
	int			nr = c->cfg->roles.n;
	int			full = (1 << nr) - 1;
	int64_t		within[ROLE_SETS];
	int64_t		total = 0;

	for (int x = 0; x <= full; x++)
	{
		within[x] = c->free_by_mask[x];
		total += within[x];
	}
	if (total < c->k)
		return false;
	for (int r = 0; r < nr; r++)
		for (int x = 0; x <= full; x++)
			if (x & (1 << r))
				within[x] += within[x & ~(1 << r)];
	for (int y = 1; y <= full; y++)
	{
		int64_t		places = 0;

		for (int r = 0; r < nr; r++)
			if (y & (1 << r))
				places += c->cfg->roles.slots[r];
		/* those listing a role of y: all but those whose roles lie outside y */
		if (places * c->cfg->teams > total - within[full & ~y])
			return false;
	}
	return true;
}

static int cand_cmp(const void *l, const void *r, void *arg);

/* Sort c->cand[0 .. n) by cand_cmp (a merge sort: qsort takes no context). */
static void
qsort_r_units(Compose *c, int n)
{
	int		   *a = c->cand;
	int		   *t = c->cand + n;	/* the second half of the scratch */

	for (int width = 1; width < n; width *= 2)
	{
		for (int lo = 0; lo < n; lo += 2 * width)
		{
			int			mid = lo + width < n ? lo + width : n;
			int			hi = lo + 2 * width < n ? lo + 2 * width : n;
			int			i = lo;
			int			j = mid;
			int			w = lo;

			while (i < mid && j < hi)
				t[w++] = cand_cmp(&a[j], &a[i], c) < 0 ? a[j++] : a[i++];
			while (i < mid)
				t[w++] = a[i++];
			while (j < hi)
				t[w++] = a[j++];
		}
		memcpy(a, t, sizeof(int) * (size_t) n);
	}
}

/* A candidate of a completion: its unit, size and distance from the center. */
static int
cand_cmp(const void *l, const void *r, void *arg)
{
	const Compose *c = arg;
	int			a = *(const int *) l;
	int			b = *(const int *) r;
	int			sa = c->units[a].size;
	int			sb = c->units[b].size;

	if (sa != sb)
		return sa > sb ? -1 : 1;
	if (c->cdist[a] != c->cdist[b])
		return c->cdist[a] < c->cdist[b] ? -1 : 1;
	return (c->units[a].oldest > c->units[b].oldest) - (c->units[a].oldest < c->units[b].oldest);
}

/*
 * Complete the set (for match j) with free units near center in rating:
 * the nearest first, or (largest) the largest of the nearest first, so
 * that parties of sizes that add up to the places left come before a unit
 * that would leave a gap no one fills; returns whether it reached k
 * players.  At most 64 + COMPOSE_SCAN k free units are looked at.
 */
static bool
complete(Compose *c, int j, double center, bool largest)
{
	int			lo;
	int			hi;
	int			a = 0;
	int			b = c->nunits;
	int			scanned = 0;
	int			limit = 64 + COMPOSE_SCAN * c->k;

	if (c->work > COMPOSE_WORK || !completion_possible(c))
		return false;
	while (a < b)
	{
		int			mid = a + (b - a) / 2;

		if (c->units[c->byrating[mid]].rating < center)
			a = mid + 1;
		else
			b = mid;
	}
	hi = a;
	lo = a - 1;
	while (c->players < c->k && (lo >= 0 || hi < c->nunits) && scanned < limit &&
		   c->work <= COMPOSE_WORK)
	{
		int			u;

		if (hi >= c->nunits ||
			(lo >= 0 && center - c->units[c->byrating[lo]].rating <=
			 c->units[c->byrating[hi]].rating - center))
			u = c->byrating[lo--];
		else
			u = c->byrating[hi++];
		if (!unit_free(c, u, j))
			continue;
		if (largest)
		{
			c->cand[scanned] = u;
			c->cdist[u] = fabs(c->units[u].rating - center);
		}
		else
			(void) set_try(c, u);
		scanned++;
	}
	if (largest)
	{
		qsort_r_units(c, scanned);
		for (int i = 0; i < scanned && c->players < c->k && c->work <= COMPOSE_WORK; i++)
			(void) set_try(c, c->cand[i]);
	}
	return c->players == c->k;
}

/*
 * A set of the units seed[0 .. n) (those that fit, in order), completed
 * for match j, nearest units first and then largest first: whether it
 * reached k players (then it stands as the set).
 */
static bool
seeded(Compose *c, int j, const int *seed, int n, double center)
{
	for (int pass = 0; pass < 2; pass++)
	{
		double		mid = center;

		set_clear(c);
		for (int s = 0; s < n; s++)
			(void) set_try(c, seed[s]);
		if (c->players > 0)
		{
			mid = 0;
			for (int s = 0; s < c->nset; s++)
				mid += c->units[c->set[s]].rating * c->units[c->set[s]].size;
			mid /= c->players;
		}
		if (complete(c, j, mid, pass == 1))
			return true;
	}
	return false;
}

/* Insertion sort of a few units by age (a match holds at most k). */
static void
sort_by_age(const Compose *c, int *u, int n)
{
	for (int i = 1; i < n; i++)
	{
		int			v = u[i];
		int			p = i;

		for (; p > 0 && c->units[u[p - 1]].oldest > c->units[v].oldest; p--)
			u[p] = u[p - 1];
		u[p] = v;
	}
}

/* Ticket indices with their party, to gather the units. */
typedef struct PartyIdx
{
	int32_t		party;
	int			idx;
} PartyIdx;

static int
party_idx_cmp(const void *l, const void *r)
{
	const PartyIdx *a = l;
	const PartyIdx *b = r;

	if (a->party != b->party)
		return (a->party > b->party) - (a->party < b->party);
	return (a->idx > b->idx) - (a->idx < b->idx);
}

/* A unit with its rating and oldest ticket, to order units by rating. */
typedef struct RatedUnit
{
	double		rating;
	int			oldest;
	int			unit;
} RatedUnit;

static int
rated_unit_cmp(const void *l, const void *r)
{
	const RatedUnit *a = l;
	const RatedUnit *b = r;

	if (a->rating != b->rating)
		return a->rating < b->rating ? -1 : 1;
	return (a->oldest > b->oldest) - (a->oldest < b->oldest);
}

/* Whether compose rewrites the steps of cfg on pool: roles, or parties outside optimize. */
bool
mm_compose_active(const MMConfig *cfg, const MMPool *pool)
{
	if (cfg->roles.n > 0)
		return true;
	if (cfg->algorithm == MM_ALGO_OPTIMIZE || pool->solo)
		return false;
	for (int i = 0; i < pool->ntickets; i++)
		if (pool->tickets[i].party >= 0)
			return true;
	return false;
}

/* The role mask of pool ticket i (0 without roles). */
static uint8_t
ticket_mask(const MMConfig *cfg, const MMPool *pool, int i)
{
	if (cfg->roles.n == 0)
		return 0;
	return pool->roles[pool->tickets[i].crow];
}

/* Gather the pool's units (c->units, umem, unit_of, umask, byrating). */
static MMStatus
gather_units(Compose *c)
{
	int			n = c->n;
	PartyIdx   *pi = mm_malloc_array((size_t) n, sizeof(PartyIdx));
	RatedUnit  *ru;

	if (pi == NULL)
		return MM_ERR_NOMEM;
	for (int i = 0; i < n; i++)
	{
		int32_t		p = c->pool->tickets[i].party;

		/* solo tickets sort after every party, one unit each */
		pi[i].party = p >= 0 ? p : INT32_MAX;
		pi[i].idx = i;
		c->mask[i] = ticket_mask(c->cfg, c->pool, i);
	}
	qsort(pi, n, sizeof(PartyIdx), party_idx_cmp);
	c->nunits = 0;
	for (int b = 0; b < n;)
	{
		int			e = b + 1;
		Unit	   *un = &c->units[c->nunits];
		double		sum = 0;

		if (pi[b].party != INT32_MAX)
			while (e < n && pi[e].party == pi[b].party)
				e++;
		un->first = b;
		un->size = e - b;
		un->oldest = pi[b].idx;
		un->arrival = c->pool->tickets[pi[b].idx].arrival;
		un->whole = -1;
		un->state = U_FREE;
		un->wanted = false;
		for (int i = b; i < e; i++)
		{
			const MMTicket *t = &c->pool->tickets[pi[i].idx];

			c->umem[i] = pi[i].idx;
			c->unit_of[pi[i].idx] = c->nunits;
			c->mask[i + n] = c->mask[pi[i].idx];
			sum += t->rating;
		}
		un->rating = sum / un->size;
		c->umask[c->nunits] = c->mask + n + b;
		c->nunits++;
		b = e;
	}
	mm_free(pi);
	ru = mm_malloc_array((size_t) (c->nunits > 0 ? c->nunits : 1), sizeof(RatedUnit));
	if (ru == NULL)
		return MM_ERR_NOMEM;
	for (int u = 0; u < c->nunits; u++)
	{
		ru[u].rating = c->units[u].rating;
		ru[u].oldest = c->units[u].oldest;
		ru[u].unit = u;
	}
	qsort(ru, c->nunits, sizeof(RatedUnit), rated_unit_cmp);
	for (int r = 0; r < c->nunits; r++)
		c->byrating[r] = ru[r].unit;
	mm_free(ru);
	return MM_OK;
}

static void
compose_free(Compose *c)
{
	mm_free(c->units);
	mm_free(c->umem);
	mm_free(c->unit_of);
	mm_free(c->byrating);
	mm_free(c->mask);
	mm_free(c->umask);
	mm_free(c->set);
	mm_free(c->set_first);
	mm_free(c->set_team);
	mm_free(c->party_load);
	mm_free(c->order);
	mm_free(c->try_team);
	mm_free(c->mt);
	mm_free(c->matches);
	mm_free(c->members);
	mm_free(c->teams);
	mm_free(c->expired);
	mm_free(c->count);
	mm_free(c->cand);
	mm_free(c->cdist);
	flow_free(&c->flow);
}

/* Expire every ticket of unit u. */
static void
expire_unit(Compose *c, int u)
{
	Unit	   *un = &c->units[u];

	for (int p = 0; p < un->size; p++)
		c->expired[c->nexpired++] = c->umem[un->first + p];
	un->state = U_EXPIRED;
	unit_gone(c, u);
}

/* Rewrite a step's decision so that parties stay whole and roles fill; see the header. */
MMStatus
mm_compose(const MMConfig *cfg, MMPool *pool, double now, MMResult *res)
{
	Compose		c;
	int			n = pool->ntickets;
	int			k = mm_config_k(cfg);
	int			nn = n > 0 ? n : 1;
	int			kk = k + 1;
	MMStatus	st = MM_OK;

	memset(&c, 0, sizeof(c));
	if (n == 0)
		return MM_OK;
	if (cfg->roles.n > 0)
	{
		int			full = (1 << cfg->roles.n) - 1;

		if (pool->roles == NULL)
			return MM_ERR_ARGUMENT;
		for (int i = 0; i < n; i++)
		{
			int			crow = pool->tickets[i].crow;

			if (crow < 0 || crow >= pool->nrole_rows ||
				pool->roles[crow] == 0 || (pool->roles[crow] & ~full) != 0)
				return MM_ERR_ARGUMENT;
		}
	}
	c.cfg = cfg;
	c.pool = pool;
	c.k = k;
	c.n = n;
	c.units = mm_malloc_array((size_t) nn, sizeof(Unit));
	c.umem = mm_malloc_array((size_t) nn, sizeof(int));
	c.unit_of = mm_malloc_array((size_t) nn, sizeof(int));
	c.byrating = mm_malloc_array((size_t) nn, sizeof(int));
	c.mask = mm_calloc((size_t) nn * 2, sizeof(uint8_t));
	c.umask = mm_malloc_array((size_t) nn, sizeof(uint8_t *));
	c.set = mm_malloc_array((size_t) kk, sizeof(int));
	c.set_first = mm_malloc_array((size_t) kk, sizeof(int));
	c.set_team = mm_malloc_array((size_t) kk, sizeof(int));
	c.party_load = mm_calloc((size_t) cfg->teams, sizeof(int));
	c.order = mm_malloc_array((size_t) kk, sizeof(int));
	c.try_team = mm_malloc_array((size_t) kk, sizeof(int));
	c.mt = mm_malloc_array((size_t) kk, sizeof(MemberTeam));
	c.matches = mm_malloc_array((size_t) nn, sizeof(MMMatch));
	c.members = mm_malloc_array((size_t) nn, sizeof(int));
	c.teams = mm_malloc_array((size_t) nn, sizeof(int));
	c.expired = mm_malloc_array((size_t) nn, sizeof(int));
	c.count = mm_calloc((size_t) nn, sizeof(int));
	c.cand = mm_malloc_array((size_t) (64 + COMPOSE_SCAN * k) * 2, sizeof(int));
	c.cdist = mm_malloc_array((size_t) nn, sizeof(double));
	if (c.cand == NULL || c.cdist == NULL || !flow_init(&c.flow, cfg, kk) || c.units == NULL || c.umem == NULL ||
		c.unit_of == NULL || c.byrating == NULL || c.mask == NULL || c.umask == NULL ||
		c.set == NULL || c.set_first == NULL || c.set_team == NULL || c.party_load == NULL ||
		c.order == NULL || c.try_team == NULL || c.mt == NULL || c.matches == NULL ||
		c.members == NULL || c.teams == NULL || c.expired == NULL || c.count == NULL)
	{
		compose_free(&c);
		return MM_ERR_NOMEM;
	}
	st = gather_units(&c);
	if (st != MM_OK)
	{
		compose_free(&c);
		return st;
	}
	for (int u = 0; u < c.nunits; u++)
		for (int p = 0; p < c.units[u].size; p++)
			c.free_by_mask[c.umask[u][p]]++;

	/* the units each match of the step holds whole */
	for (int j = 0; j < res->nmatches; j++)
	{
		const MMMatch *m = &res->matches[j];

		for (int i = 0; i < m->nmembers; i++)
			c.count[c.unit_of[res->members[m->first + i]]]++;
		for (int i = 0; i < m->nmembers; i++)
		{
			int			u = c.unit_of[res->members[m->first + i]];

			if (c.count[u] == c.units[u].size)
				c.units[u].whole = j;
			c.count[u] = 0;
			if (m->bots == 0 && m->nmembers == k)
				c.units[u].wanted = true;
		}
	}

	for (int j = 0; j < res->nmatches && st == MM_OK; j++)
	{
		const MMMatch *m = &res->matches[j];
		int			kept[MM_MAX_K];
		int			nkept = 0;
		double		center = 0;

		if (mm_interrupted())
		{
			st = MM_ERR_INTERRUPTED;
			break;
		}
		for (int i = 0; i < m->nmembers; i++)
		{
			int			idx = res->members[m->first + i];
			int			u = c.unit_of[idx];

			center += pool->tickets[idx].rating;
			if (c.units[u].whole == j && c.units[u].state == U_FREE && c.count[u]++ == 0)
				kept[nkept++] = u;
		}
		for (int s = 0; s < nkept; s++)
			c.count[kept[s]] = 0;
		center /= m->nmembers > 0 ? m->nmembers : 1;
		sort_by_age(&c, kept, nkept);
		if (m->bots == 0 && m->nmembers == k)
		{
			/*
			 * the kept units completed; failing that without the youngest
			 * of them (one, two, then all but the oldest), which may be
			 * what keeps a party out
			 */
			int			last = -1;
			int			tries[4] = {nkept, nkept - 1, nkept - 2, nkept > 0 ? 1 : 0};

			for (int a = 0; a < 4; a++)
			{
				if (tries[a] < 0 || tries[a] == last || (a > 0 && tries[a] > last))
					continue;
				last = tries[a];
				if (seeded(&c, j, kept, tries[a], center))
				{
					set_emit(&c, 0);
					break;
				}
			}
			set_clear(&c);
			continue;
		}
		set_clear(&c);
		for (int s = 0; s < nkept; s++)
			(void) set_try(&c, kept[s]);
		if (m->bots > 0)
		{
			if (c.players > 0)
				set_emit(&c, k - c.players);
		}
		else if (c.players >= (cfg->min_players > 2 ? cfg->min_players : 2))
			set_emit(&c, 0);
		set_clear(&c);
	}

	/*
	 * the units the step meant to play now and that are left (their
	 * matches dissolved), oldest first: each the seed of a full match
	 * completed from the units still free
	 */
	for (int i = 0; i < n && st == MM_OK; i++)
	{
		int			u = c.unit_of[i];

		if (c.units[u].oldest != i || c.units[u].state != U_FREE || !c.units[u].wanted)
			continue;
		if (mm_interrupted())
			st = MM_ERR_INTERRUPTED;
		else if (seeded(&c, res->nmatches, &u, 1, c.units[u].rating))
			set_emit(&c, 0);
		set_clear(&c);
	}

	/* an expiry ends its whole party */
	for (int e = 0; e < res->nexpired && st == MM_OK; e++)
	{
		int			u = c.unit_of[res->expired[e]];

		if (c.units[u].state == U_FREE)
			expire_unit(&c, u);
	}

	/* units left out at max_wait: games with computer players, or expiry */
	if (st == MM_OK)
	{
		set_clear(&c);
		for (int r = 0; r < c.nunits; r++)
		{
			int			u = c.byrating[r];
			Unit	   *un = &c.units[u];

			if (un->state != U_FREE || !(now >= un->arrival + cfg->max_wait))
				continue;
			if (cfg->on_timeout == MM_TIMEOUT_EXPIRE)
			{
				expire_unit(&c, u);
				continue;
			}
			if (set_try(&c, u))
				continue;
			if (c.nset > 0)
				set_emit(&c, k - c.players);
			set_clear(&c);
			if (!set_try(&c, u))
				expire_unit(&c, u); /* fits no team alone: refused on arrival */
		}
		if (c.nset > 0)
			set_emit(&c, k - c.players);
	}

	if (st == MM_OK)
	{
		res->nmatches = c.nmatches;
		memcpy(res->matches, c.matches, sizeof(MMMatch) * (size_t) c.nmatches);
		memcpy(res->members, c.members, sizeof(int) * (size_t) c.nmembers);
		memcpy(res->teams, c.teams, sizeof(int) * (size_t) c.nmembers);
		res->nexpired = c.nexpired;
		memcpy(res->expired, c.expired, sizeof(int) * (size_t) c.nexpired);
	}
	compose_free(&c);
	return st;
}

/* ----------------------------------------------------------------
 * Teams and roles of a formed match
 * ----------------------------------------------------------------
 */

/* A match's members as units: pieces (by party, in member order). */
typedef struct MatchUnits
{
	int			n;
	int			npieces;
	Piece		pieces[MM_MAX_K];
	int			order[MM_MAX_K];	/* member positions grouped by piece */
	uint8_t		masks[MM_MAX_K];	/* in order */
	const uint8_t *pmask[MM_MAX_K];
	int			size[MM_MAX_K];
	double		rsum[MM_MAX_K];
	int			team[MM_MAX_K];	/* 0-based */
} MatchUnits;

static void
match_units(const MMConfig *cfg, const MMPool *pool, const int *mem, const int *tm, int n,
			MatchUnits *mu)
{
	bool		done[MM_MAX_K] = {false};
	int			w = 0;

	mu->n = n;
	mu->npieces = 0;
	for (int i = 0; i < n; i++)
	{
		int32_t		party;
		Piece	   *p;

		if (done[i])
			continue;
		party = pool->tickets[mem[i]].party;
		p = &mu->pieces[mu->npieces];
		mu->team[mu->npieces++] = tm[i] - 1;
		p->first = w;
		p->size = 0;
		p->rsum = 0;
		p->minpos = i;
		for (int j = i; j < n; j++)
		{
			if (done[j] || (j != i && (party < 0 || pool->tickets[mem[j]].party != party)))
				continue;
			done[j] = true;
			mu->order[w] = j;
			mu->masks[w] = ticket_mask(cfg, pool, mem[j]);
			w++;
			p->size++;
			p->rsum += pool->tickets[mem[j]].rating;
		}
	}
	for (int q = 0; q < mu->npieces; q++)
	{
		mu->pmask[q] = mu->masks + mu->pieces[q].first;
		mu->size[q] = mu->pieces[q].size;
		mu->rsum[q] = mu->pieces[q].rsum;
	}
}

/*
 * Improve the teams of a large match by moves of whole pieces between the
 * team of the largest rating sum and that of the smallest: a swap of two
 * pieces of one size, or a piece moved where there is room, whichever
 * lowers the spread most while both teams pass Hall's condition; at most
 * COMPOSE_SWAPS of them.
 */
static void
balance_by_swaps(Fit *f, MatchUnits *mu)
{
	long		moves = 0;

	for (int q = 0; q < mu->npieces; q++)
		(void) fit_move(f, q, mu->team[q], 1);
	for (int round = 0; round < COMPOSE_SWAPS && moves < COMPOSE_SWAP_MOVES; round++)
	{
		int			hi = 0;
		int			lo = 0;
		double		best = fit_spread(f) - MM_BALANCE_TOLERANCE;
		int			ba = -1;
		int			bb = -1;

		for (int t = 1; t < f->teams; t++)
		{
			if (f->sum[t] > f->sum[hi])
				hi = t;
			if (f->sum[t] < f->sum[lo])
				lo = t;
		}
		if (hi == lo)
			break;
		for (int a = 0; a < mu->npieces; a++)
		{
			if (mu->team[a] != hi)
				continue;
			/* b = -1: a moves alone, where lo has room */
			for (int b = -1; b < mu->npieces; b++)
			{
				bool		ok;
				double		s;

				if (b >= 0 && (mu->team[b] != lo || mu->size[b] != mu->size[a]))
					continue;
				if (b < 0 && f->load[lo] + mu->size[a] > f->team_size)
					continue;
				if ((moves += 8) > COMPOSE_SWAP_MOVES)
					break;
				ok = fit_move(f, a, hi, -1);
				ok = fit_move(f, a, lo, 1) && ok;
				if (b >= 0)
				{
					ok = fit_move(f, b, lo, -1) && ok;
					ok = fit_move(f, b, hi, 1) && ok;
				}
				/* the removals cannot break Hall's condition: ok tells the additions */
				s = fit_spread(f);
				if (b >= 0)
				{
					(void) fit_move(f, b, hi, -1);
					(void) fit_move(f, b, lo, 1);
				}
				(void) fit_move(f, a, lo, -1);
				(void) fit_move(f, a, hi, 1);
				if (ok && s < best)
				{
					best = s;
					ba = a;
					bb = b;
				}
			}
		}
		if (ba < 0)
			break;
		(void) fit_move(f, ba, hi, -1);
		(void) fit_move(f, ba, lo, 1);
		mu->team[ba] = lo;
		if (bb >= 0)
		{
			(void) fit_move(f, bb, lo, -1);
			(void) fit_move(f, bb, hi, 1);
			mu->team[bb] = hi;
		}
	}
}

/*
 * Balance the teams of a match compose formed (members mem[0 .. n), pool
 * indices, in the teams tm compose gave them) and number them by
 * ascending rating sum (ties by their first member), as mm_split_teams
 * numbers its teams; see the header.
 */
MMStatus
mm_compose_split(const MMConfig *cfg, const MMPool *pool, const int *mem, int n, int *tm)
{
	MatchUnits *mu = mm_malloc(sizeof(MatchUnits));
	Fit			f;
	MMStatus	st = MM_OK;

	memset(&f, 0, sizeof(f));
	if (mu == NULL || !fit_init(&f, cfg, MM_MAX_K))
		st = MM_ERR_NOMEM;
	else
	{
		double		sum[MM_MAX_K];
		int			first[MM_MAX_K];
		int			rank[MM_MAX_K];

		match_units(cfg, pool, mem, tm, n, mu);
		f.n = mu->npieces;
		f.size = mu->size;
		f.masks = mu->pmask;
		f.rsum = mu->rsum;
		if (mu->npieces <= COMPOSE_EXACT_UNITS)
		{
			/* every placement (within the budget), from compose's as the best so far */
			for (int q = 0; q < mu->npieces; q++)
				(void) fit_move(&f, q, mu->team[q], 1);
			f.best_spread = fit_spread(&f) - MM_BALANCE_TOLERANCE;
			for (int q = 0; q < mu->npieces; q++)
			{
				(void) fit_move(&f, q, mu->team[q], -1);
				f.best[q] = mu->team[q];
			}
			f.budget = COMPOSE_SPLIT_NODES;
			if (f.best_spread > 0)
				(void) fit_search(&f, 0);
			for (int q = 0; q < mu->npieces; q++)
				mu->team[q] = f.best[q];
		}
		else
			balance_by_swaps(&f, mu);

		for (int t = 0; t < cfg->teams; t++)
		{
			sum[t] = 0;
			first[t] = INT32_MAX;
		}
		for (int q = 0; q < mu->npieces; q++)
		{
			sum[mu->team[q]] += mu->pieces[q].rsum;
			if (mu->pieces[q].minpos < first[mu->team[q]])
				first[mu->team[q]] = mu->pieces[q].minpos;
		}
		for (int t = 0; t < cfg->teams; t++)
		{
			rank[t] = 0;
			for (int u = 0; u < cfg->teams; u++)
				if (sum[u] < sum[t] || (sum[u] == sum[t] && first[u] < first[t]))
					rank[t]++;
		}
		for (int q = 0; q < mu->npieces; q++)
			for (int p = 0; p < mu->pieces[q].size; p++)
				tm[mu->order[mu->pieces[q].first + p]] = rank[mu->team[q]] + 1;
	}
	fit_free(&f);
	mm_free(mu);
	return st;
}

/* One team's places and who holds them, for Kuhn's augmenting paths. */
typedef struct Places
{
	int			n;
	int			role[MM_MAX_K];
	int			holder[MM_MAX_K];
	bool		seen[MM_MAX_K];
	const uint8_t *masks;
} Places;

/* Find player v a place, moving holders along an augmenting path. */
static bool
augment(Places *pl, int v)
{
	for (int p = 0; p < pl->n; p++)
	{
		if (pl->seen[p] || !(pl->masks[v] & (1 << pl->role[p])))
			continue;
		pl->seen[p] = true;
		if (pl->holder[p] < 0 || augment(pl, pl->holder[p]))
		{
			pl->holder[p] = v;
			return true;
		}
	}
	return false;
}

/*
 * Give the players of one team (masks[0 .. n)) distinct places of roles
 * they list; role_out gets each player's role.  False when they cannot.
 */
static bool
team_roles(const MMConfig *cfg, const uint8_t *masks, int n, int *role_out)
{
	Places	   *pl = mm_malloc(sizeof(Places));
	bool		ok = true;

	if (pl == NULL)
		return false;
	pl->n = 0;
	pl->masks = masks;
	for (int r = 0; r < cfg->roles.n; r++)
		for (int s = 0; s < cfg->roles.slots[r]; s++)
			pl->role[pl->n++] = r;
	for (int p = 0; p < pl->n; p++)
		pl->holder[p] = -1;
	for (int i = 0; i < n && ok; i++)
	{
		memset(pl->seen, 0, sizeof(pl->seen));
		ok = augment(pl, i);
	}
	if (ok)
		for (int p = 0; p < pl->n; p++)
			if (pl->holder[p] >= 0)
				role_out[pl->holder[p]] = pl->role[p];
	mm_free(pl);
	return ok;
}

/* The roles of res's members; see mm_core.h. */
MMStatus
mm_assign_roles(const MMConfig *cfg, const MMPool *pool, const MMResult *res, int *roles_out)
{
	if (cfg == NULL || pool == NULL || res == NULL || roles_out == NULL ||
		mm_config_check(cfg) != MM_OK || cfg->roles.n == 0 || pool->roles == NULL)
		return MM_ERR_ARGUMENT;
	for (int j = 0; j < res->nmatches; j++)
	{
		const MMMatch *m = &res->matches[j];

		for (int t = 1; t <= cfg->teams; t++)
		{
			uint8_t		masks[MM_MAX_K];
			int			who[MM_MAX_K];
			int			role[MM_MAX_K];
			int			n = 0;

			for (int i = 0; i < m->nmembers; i++)
			{
				int			idx = res->members[m->first + i];
				int			crow;

				if (res->teams[m->first + i] != t)
					continue;
				if (idx < 0 || idx >= pool->ntickets || n >= cfg->team_size)
					return MM_ERR_ARGUMENT;
				crow = pool->tickets[idx].crow;
				if (crow < 0 || crow >= pool->nrole_rows)
					return MM_ERR_ARGUMENT;
				masks[n] = pool->roles[crow];
				who[n++] = m->first + i;
			}
			if (!team_roles(cfg, masks, n, role))
				return MM_ERR_ARGUMENT;
			for (int i = 0; i < n; i++)
				roles_out[who[i]] = role[i];
		}
	}
	return MM_OK;
}

/* Whether a party fits one team; see mm_core.h. */
bool
mm_party_fits(const MMConfig *cfg, int n, const uint8_t *roles)
{
	int			role[MM_MAX_K];
	int			full;

	if (cfg == NULL || n < 1 || n > cfg->team_size || n > MM_MAX_K)
		return false;
	if (cfg->roles.n == 0)
		return true;
	if (roles == NULL)
		return false;
	full = (1 << cfg->roles.n) - 1;
	for (int i = 0; i < n; i++)
		if (roles[i] == 0 || (roles[i] & ~full) != 0)
			return false;
	return team_roles(cfg, roles, n, role);
}
