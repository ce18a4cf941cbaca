/*
 * offline_optimum.c
 *		Schlup's offline optimum OPT for pairs (k = 2, one criterion).
 *
 * OPT sees the whole stream in advance.  It puts every player either in an
 * admissible pair or alone with a computer player, at the least total cost
 * (doc/optimal.md gives the exact definition).  With the bot cost b and a
 * pair cost c_ij, the total is
 *
 *		sum_i b  -  sum_{pairs ij} (2b - c_ij)
 *
 * so OPT is a maximum-weight matching on the graph of admissible pairs,
 * with weight w_ij = 2b - c_ij.  Only the edges with w_ij > 0 are kept.
 *
 * The matching comes from Edmonds' blossom algorithm in its primal-dual
 * form (Galil, "Efficient algorithms for finding maximum matching in
 * graphs", 1986).  Every free vertex roots an alternating tree.  Outer
 * vertices are labelled S and inner ones T.  Tight edges grow the trees.
 * An odd cycle of S-vertices shrinks into a blossom.  A tight edge between
 * two trees is an augmenting path.  When no tight edge is left to use, the
 * dual variables move by the largest delta that keeps them feasible.  The
 * run ends when the free vertices' common dual reaches zero.
 *
 * The textbook algorithm starts a new stage after each augmentation: it
 * clears all labels and rescans every free vertex's edges.  That costs
 * O(m) per augmentation and dominated the run time here, so this code
 * departs from it.  dissolve_trees takes apart only the two trees that the
 * augmentation used, and repairs the best-edge records that pointed into
 * them; the other trees carry on.
 *
 * Cost.  Between two augmentations there are O(n) dual updates of O(n)
 * each.  Scans cost O(m), since a vertex is scanned once when it becomes
 * S, plus one vertex's edges per dual update.  A blossom costs O(n) plus
 * the edges of the children it absorbs, as in Galil's analysis.  Taking
 * two trees apart costs O(n) plus the edges of their vertices and of the
 * ids it repairs.  The worst case is O(n^3 + n m) time and O(n + m)
 * memory.  The measured cost (doc/optimal.md) is far lower: 3 to 4 dual
 * updates and 6 to 8 dissolved vertices per augmentation on Poisson
 * streams.  The edge list stays sparse: one edge per admissible pair, in
 * compressed adjacency lists.
 *
 * Weights are integers: w_ij is scaled by 2^30 and rounded.  The matching
 * is exact for the integer weights.  Its real cost, which the caller gets,
 * is within n * 2^-31 of the real optimum.
 *
 * Notation.  Edge e joins eu[e] and ev[e].  Its two endpoints are 2e (at
 * eu[e]) and 2e + 1 (at ev[e]), so p ^ 1 is the other end of endpoint p.
 * The ids 0 .. nv-1 are vertices, and nv .. 2nv-1 are blossoms.  A blossom
 * keeps its children in a cycle (bnext/bprev) that starts at its base
 * child bfirst.  blink[c] is the endpoint, inside child c, of the cycle
 * edge from c to bnext[c].
 *
 * Dual variables are doubled, so that they stay integers.  The slack of an
 * edge between two different top-level blossoms is
 * dual[u] + dual[v] - 2 w.  A blossom's dual changes by the same delta as
 * its vertices do.  Hence a pair of blossom-internal endpoints loses 2
 * delta, and the blossom regains it through 2 * dual[B].
 */
#include "mm_internal.h"

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Fixed-point unit of the edge weights: 2^30. */
#define OPT_SCALE 1073741824.0
/* Bytes the matching needs per edge (eu, ev, ew, two adj and lnext entries, allowedge). */
#define OPT_EDGE_BYTES 33

/* Largest bot cost accepted: keeps 2^30 * 2 * bot_cost well inside int64. */
#define OPT_MAX_BOT_COST 1.0e6

/* Labels of top-level blossoms (and of vertices inside T-blossoms). */
#define LBL_FREE	0
#define LBL_S		1
#define LBL_T		2
#define LBL_CRUMB	4			/* scan_blossom's mark on an S-blossom */

/* The whole state of one maximum-weight matching run. */
typedef struct Mwm
{
	int			nv;				/* vertices */
	int			ne;				/* edges */
	int		   *eu;				/* ne: first end of each edge */
	int		   *ev;				/* ne: second end */
	int64_t    *ew;				/* ne: integer weight, > 0 */
	int		   *adj_start;		/* nv + 1: CSR offsets into adj */
	int		   *adj;			/* 2 ne: remote endpoints of each vertex's edges */

	int		   *mate;			/* nv: remote endpoint of the matched edge, or -1 */
	int		   *inblossom;		/* nv: top-level blossom holding the vertex */
	int		   *label;			/* 2 nv: LBL_* */
	int		   *labelend;		/* 2 nv: endpoint (outside) that gave the label, or -1 */
	int		   *bparent;		/* 2 nv: enclosing blossom, or -1 at top level */
	int		   *bbase;			/* 2 nv: base vertex; -1 marks an unused blossom id */
	int		   *bfirst;			/* 2 nv: base child of a blossom */
	int		   *bnext;			/* 2 nv: next sibling in the parent's cycle */
	int		   *bprev;			/* 2 nv: previous sibling */
	int		   *blink;			/* 2 nv: endpoint in this child of the edge to bnext */
	int		   *bestedge;		/* 2 nv: least-slack edge, or -1: from an S-blossom
								 * to another one; from a vertex outside the
								 * S-blossoms to an S-vertex */
	int		   *bhead;			/* 2 nv: first endpoint of an S-blossom's best-edge list */
	bool	   *bhaslist;		/* 2 nv: bhead holds a list (S-blossoms formed
								 * in the current tree only) */
	int		   *lnext;			/* 2 ne: next endpoint in a best-edge list */
	int64_t    *dual;			/* 2 nv: doubled dual variables */
	bool	   *allowedge;		/* ne: edge known tight (cleared when a tree at
								 * one of its ends is taken apart) */

	int		   *tree;			/* 2 nv: root vertex of a labelled blossom's tree, or -1 */

	int		   *queue;			/* nv: S vertices whose edges are to scan */
	int			nqueue;
	bool	   *inqueue;		/* nv: the vertex is on the queue */
	int		   *mark;			/* 2 nv: stamp of the last repair that marked the id */
	int			stamp;			/* current repair's stamp */
	int			nfreev;			/* free (unmatched) vertices */
	int64_t		freedual;		/* their common dual */
	int		   *dlist;			/* nv: vertices of the trees being taken apart */
	int		   *rlist;			/* 2 nv: ids whose best edges need repair */
	int		   *freeids;		/* nv: unused blossom ids */
	int			nfree;
	int		   *scratch;		/* 2 nv: paths and cycles being built */
	int		   *scratch2;		/* 2 nv: the same, second list */
	int		   *bestto;			/* 2 nv: best endpoint towards a blossom, or -1 */
	bool		interrupted;	/* mm_interrupt asked the run to stop */
} Mwm;

/* The vertex at endpoint p. */
static inline int
ep_vertex(const Mwm *g, int p)
{
	return (p & 1) ? g->ev[p >> 1] : g->eu[p >> 1];
}

/* Doubled slack of edge e, whose ends lie in different top-level blossoms. */
static inline int64_t
edge_slack(const Mwm *g, int e)
{
	return g->dual[g->eu[e]] + g->dual[g->ev[e]] - 2 * g->ew[e];
}

/* The first leaf (vertex) of blossom or vertex b. */
static int
leaf_first(const Mwm *g, int b)
{
	while (b >= g->nv)
		b = g->bfirst[b];
	return b;
}

/*
 * The leaf after v in a walk over the leaves of root, or -1 when v was the
 * last one.  The walk needs no memory: it climbs from v to the first
 * ancestor that has a next sibling and descends from there.
 */
static int
leaf_next(const Mwm *g, int root, int v)
{
	int			x = v;

	while (x != root)
	{
		int			p = g->bparent[x];
		int			nx = g->bnext[x];

		if (nx != g->bfirst[p])
			return leaf_first(g, nx);
		x = p;
	}
	return -1;
}

/* The neighbour of child c in its parent's cycle, forward or backward. */
static inline int
cyc_step(const Mwm *g, int c, bool fwd)
{
	return fwd ? g->bnext[c] : g->bprev[c];
}

/*
 * The endpoint inside child c of the cycle edge from c to
 * cyc_step(c, fwd).
 */
static inline int
cyc_edge(const Mwm *g, int c, bool fwd)
{
	return fwd ? g->blink[c] : (g->blink[g->bprev[c]] ^ 1);
}

/*
 * Position of child c in blossom b's cycle, counted from the base child,
 * and the cycle's length through *len.
 */
static int
cyc_index(const Mwm *g, int b, int c, int *len)
{
	int			first = g->bfirst[b];
	int			x = first;
	int			i = 0;
	int			pos = -1;

	do
	{
		if (x == c)
			pos = i;
		i++;
		x = g->bnext[x];
	} while (x != first);
	*len = i;
	return pos;
}

/* Put vertex v on the scan queue unless it is there already. */
static inline void
queue_push(Mwm *g, int v)
{
	if (!g->inqueue[v])
	{
		g->inqueue[v] = true;
		g->queue[g->nqueue++] = v;
	}
}

/*
 * Label the top-level blossom of vertex w with t, reached through endpoint
 * p (outside it; -1 for a root).  An S-blossom's vertices are queued for
 * scanning.  A T-blossom's base is matched, and its mate's blossom becomes
 * S in turn.
 */
static void
assign_label(Mwm *g, int w, int t, int p)
{
	int			b = g->inblossom[w];

	g->label[w] = g->label[b] = t;
	g->labelend[w] = g->labelend[b] = p;
	g->bestedge[w] = g->bestedge[b] = -1;
	g->tree[b] = p == -1 ? w : g->tree[g->inblossom[ep_vertex(g, p)]];
	if (t == LBL_S)
	{
		for (int v = leaf_first(g, b); v >= 0; v = leaf_next(g, b, v))
			queue_push(g, v);
	}
	else
	{
		int			mp = g->mate[g->bbase[b]];

		assign_label(g, ep_vertex(g, mp), LBL_S, mp ^ 1);
	}
}

/*
 * S-vertices v and w were just joined by a tight edge.  Trace both back
 * towards their roots, alternately, and return the base of the first
 * blossom common to both paths (a new blossom closes there).  Return -1
 * when the paths reach two different roots (an augmenting path).
 */
static int
scan_blossom(Mwm *g, int v, int w)
{
	int		   *path = g->scratch;
	int			npath = 0;
	int			base = -1;

	while (v != -1)
	{
		int			b = g->inblossom[v];

		if (g->label[b] & LBL_CRUMB)
		{
			base = g->bbase[b];
			break;
		}
		path[npath++] = b;
		g->label[b] = LBL_S | LBL_CRUMB;
		if (g->labelend[b] == -1)
			v = -1;				/* b holds a root */
		else
		{
			/* one step to the T-blossom, one more to the next S-blossom */
			v = ep_vertex(g, g->labelend[b]);
			v = ep_vertex(g, g->labelend[g->inblossom[v]]);
		}
		if (w != -1)
		{
			int			tmp = v;

			v = w;
			w = tmp;
		}
	}
	for (int i = 0; i < npath; i++)
		g->label[path[i]] = LBL_S;
	return base;
}

/*
 * Consider endpoint p, inside new blossom b, for b's best-edge list: keep
 * the least-slack edge towards every other top-level S-blossom.
 */
static void
consider_best(Mwm *g, int b, int p, int *touched, int *ntouched)
{
	int			bj = g->inblossom[ep_vertex(g, p ^ 1)];

	if (bj == b || g->label[bj] != LBL_S)
		return;
	if (g->bestto[bj] == -1)
	{
		touched[(*ntouched)++] = bj;
		g->bestto[bj] = p;
	}
	else if (edge_slack(g, p >> 1) < edge_slack(g, g->bestto[bj] >> 1))
		g->bestto[bj] = p;
}

/*
 * Close a new S-blossom with base vertex base through the tight edge e,
 * whose ends are S-vertices in the same alternating tree.
 */
static void
add_blossom(Mwm *g, int base, int e)
{
	int			bb = g->inblossom[base];
	int			bv = g->inblossom[g->eu[e]];
	int			bw = g->inblossom[g->ev[e]];
	int			b = g->freeids[--g->nfree];
	int		   *order = g->scratch;
	int		   *vchain = g->scratch2;
	int			nv_chain = 0;
	int			k = 0;
	int			ntouched = 0;
	int			c;

	g->bbase[b] = base;
	g->bparent[b] = -1;
	g->bparent[bb] = b;

	/*
	 * The cycle runs bb, then the eu side from bb's neighbour out to bv,
	 * then edge e, then the ev side from bw back to bb.
	 */
	for (c = bv; c != bb; c = g->inblossom[ep_vertex(g, g->labelend[c])])
	{
		g->bparent[c] = b;
		vchain[nv_chain++] = c;
	}
	order[k++] = bb;
	for (int i = nv_chain - 1; i >= 0; i--)
		order[k++] = vchain[i];
	/* order[t + 1] got its label through an endpoint inside order[t] */
	for (int t = 0; t < nv_chain; t++)
		g->blink[order[t]] = g->labelend[order[t + 1]];
	g->blink[order[nv_chain]] = 2 * e;
	for (c = bw; c != bb; c = g->inblossom[ep_vertex(g, g->labelend[c])])
	{
		g->bparent[c] = b;
		g->blink[c] = g->labelend[c] ^ 1;
		order[k++] = c;
	}
	for (int t = 0; t < k; t++)
	{
		int			nx = order[t + 1 < k ? t + 1 : 0];

		g->bnext[order[t]] = nx;
		g->bprev[nx] = order[t];
	}
	g->bfirst[b] = bb;

	g->label[b] = LBL_S;
	g->labelend[b] = g->labelend[bb];
	g->tree[b] = g->tree[bb];
	g->dual[b] = 0;

	/* former T-vertices are S now and must be scanned */
	for (int v = leaf_first(g, b); v >= 0; v = leaf_next(g, b, v))
	{
		if (g->label[g->inblossom[v]] == LBL_T)
			queue_push(g, v);
		g->inblossom[v] = b;
	}

	/*
	 * Best edges towards the other S-blossoms: from the children's lists,
	 * or from all edges of a child that has none (a former T-blossom or a
	 * vertex).
	 */
	c = bb;
	do
	{
		if (g->bhaslist[c])
		{
			for (int p = g->bhead[c]; p != -1; p = g->lnext[p])
				consider_best(g, b, p, g->scratch2, &ntouched);
		}
		else
		{
			for (int v = leaf_first(g, c); v >= 0; v = leaf_next(g, c, v))
				for (int i = g->adj_start[v]; i < g->adj_start[v + 1]; i++)
					consider_best(g, b, g->adj[i] ^ 1, g->scratch2, &ntouched);
		}
		g->bhaslist[c] = false;
		g->bhead[c] = -1;
		g->bestedge[c] = -1;
		c = g->bnext[c];
	} while (c != bb);

	g->bhead[b] = -1;
	g->bhaslist[b] = true;
	g->bestedge[b] = -1;
	for (int i = 0; i < ntouched; i++)
	{
		int			bj = g->scratch2[i];
		int			p = g->bestto[bj];

		g->bestto[bj] = -1;
		g->lnext[p] = g->bhead[b];
		g->bhead[b] = p;
		if (g->bestedge[b] == -1 ||
			edge_slack(g, p >> 1) < edge_slack(g, g->bestedge[b]))
			g->bestedge[b] = p >> 1;
	}
}

/* Return blossom id b to the unused ids. */
static void
free_blossom(Mwm *g, int b)
{
	g->label[b] = LBL_FREE;
	g->labelend[b] = -1;
	g->tree[b] = -1;
	g->bfirst[b] = -1;
	g->bbase[b] = -1;
	g->bestedge[b] = -1;
	g->bhaslist[b] = false;
	g->bhead[b] = -1;
	g->dual[b] = 0;
	g->freeids[g->nfree++] = b;
}

/*
 * Relabel the children of T-blossom b, which is being expanded: the even
 * path from the entry child to the base child alternates T and S; a child
 * on the odd path becomes T only if one of its vertices was reached by a
 * tight edge, and stays free otherwise.
 */
static void
relabel_expanded(Mwm *g, int b)
{
	int			entry = g->inblossom[ep_vertex(g, g->labelend[b] ^ 1)];
	int			basechild = g->bfirst[b];
	int			len;
	int			j = cyc_index(g, b, entry, &len);
	bool		fwd = (j & 1) != 0;
	int			p = g->labelend[b];
	int			t = entry;
	int			u;

	/* even path: T child, matched edge, S child, edge to the next T child */
	while (t != basechild)
	{
		int			q = cyc_edge(g, t, fwd);
		int			s = cyc_step(g, t, fwd);

		g->label[ep_vertex(g, p ^ 1)] = LBL_FREE;
		g->label[ep_vertex(g, q ^ 1)] = LBL_FREE;
		assign_label(g, ep_vertex(g, p ^ 1), LBL_T, p);
		g->allowedge[q >> 1] = true;
		p = cyc_edge(g, s, fwd);
		g->allowedge[p >> 1] = true;
		t = cyc_step(g, s, fwd);
	}
	/* the base child: its mate outside b is S already */
	g->label[ep_vertex(g, p ^ 1)] = g->label[t] = LBL_T;
	g->labelend[ep_vertex(g, p ^ 1)] = g->labelend[t] = p;
	g->bestedge[t] = -1;
	g->tree[t] = g->tree[b];

	/* odd path */
	for (u = cyc_step(g, t, fwd); u != entry; u = cyc_step(g, u, fwd))
	{
		int			v;

		if (g->label[u] == LBL_S)
			continue;			/* made S by its T neighbour below */
		for (v = leaf_first(g, u); v >= 0; v = leaf_next(g, u, v))
			if (g->label[v] != LBL_FREE)
				break;
		if (v >= 0)
		{
			g->label[v] = LBL_FREE;
			g->label[ep_vertex(g, g->mate[g->bbase[u]])] = LBL_FREE;
			assign_label(g, v, LBL_T, g->labelend[v]);
		}
	}
}

/*
 * Expand top-level blossom b: its children become top-level.  When its
 * tree is taken apart (endstage: the textbook's end of a stage), children
 * with a zero dual are expanded too.  Otherwise b is a T-blossom whose
 * dual reached zero, and its children get labels.
 */
static void
expand_blossom(Mwm *g, int b, bool endstage)
{
	int			first = g->bfirst[b];
	int			c = first;

	do
	{
		int			nx = g->bnext[c];

		g->bparent[c] = -1;
		if (c < g->nv)
			g->inblossom[c] = c;
		else if (endstage && g->dual[c] == 0)
			expand_blossom(g, c, endstage);
		else
		{
			for (int v = leaf_first(g, c); v >= 0; v = leaf_next(g, c, v))
				g->inblossom[v] = c;
		}
		c = nx;
	} while (c != first);

	if (!endstage && g->label[b] == LBL_T)
		relabel_expanded(g, b);
	free_blossom(g, b);
}

/*
 * Make vertex v the base of blossom b, swapping matched and unmatched
 * edges along the even path of the cycle from v's child to the old base
 * child, and recursively inside the children on that path.
 */
static void
augment_blossom(Mwm *g, int b, int v)
{
	int			t = v;
	int			oldfirst = g->bfirst[b];
	int			len;
	bool		fwd;
	int			c;

	while (g->bparent[t] != b)
		t = g->bparent[t];
	if (t >= g->nv)
		augment_blossom(g, t, v);
	fwd = (cyc_index(g, b, t, &len) & 1) != 0;
	c = t;
	while (c != oldfirst)
	{
		int			c1 = cyc_step(g, c, fwd);
		int			p = cyc_edge(g, c1, fwd);
		int			c2 = cyc_step(g, c1, fwd);

		if (c1 >= g->nv)
			augment_blossom(g, c1, ep_vertex(g, p));
		if (c2 >= g->nv)
			augment_blossom(g, c2, ep_vertex(g, p ^ 1));
		g->mate[ep_vertex(g, p)] = p ^ 1;
		g->mate[ep_vertex(g, p ^ 1)] = p;
		c = c2;
	}
	g->bfirst[b] = t;
	g->bbase[b] = v;
}

/*
 * Augment along the path through tight edge e between two S-vertices of
 * different trees: from each end back to its tree's root.
 */
static void
augment_matching(Mwm *g, int e)
{
	for (int side = 0; side < 2; side++)
	{
		int			s = side ? g->ev[e] : g->eu[e];
		int			p = side ? 2 * e : 2 * e + 1;	/* the other end */

		for (;;)
		{
			int			bs = g->inblossom[s];
			int			bt;
			int			j;

			if (bs >= g->nv)
				augment_blossom(g, bs, s);
			g->mate[s] = p;
			if (g->labelend[bs] == -1)
				break;			/* reached the root */
			bt = g->inblossom[ep_vertex(g, g->labelend[bs])];
			s = ep_vertex(g, g->labelend[bt]);
			j = ep_vertex(g, g->labelend[bt] ^ 1);
			if (bt >= g->nv)
				augment_blossom(g, bt, j);
			g->mate[j] = g->labelend[bt];
			p = g->labelend[bt] ^ 1;
		}
	}
}

/* Mark id x for repair by the current dissolve_trees; true if newly marked. */
static inline bool
mark_once(Mwm *g, int x)
{
	if (g->mark[x] == g->stamp)
		return false;
	g->mark[x] = g->stamp;
	return true;
}

/*
 * Recompute the least-slack edge from top-level S-blossom b to any other
 * S-blossom, after the one it had lost its S end.  A best-edge list is
 * pruned of entries whose far end is not S any more; without a list every
 * edge of b's vertices is looked at.
 */
static void
repair_s_best(Mwm *g, int b)
{
	g->bestedge[b] = -1;
	if (g->bhaslist[b])
	{
		int			p = g->bhead[b];

		g->bhead[b] = -1;
		while (p != -1)
		{
			int			nx = g->lnext[p];
			int			bj = g->inblossom[ep_vertex(g, p ^ 1)];

			if (bj != b && g->label[bj] == LBL_S)
			{
				g->lnext[p] = g->bhead[b];
				g->bhead[b] = p;
				if (g->bestedge[b] == -1 ||
					edge_slack(g, p >> 1) < edge_slack(g, g->bestedge[b]))
					g->bestedge[b] = p >> 1;
			}
			p = nx;
		}
		return;
	}
	for (int v = leaf_first(g, b); v >= 0; v = leaf_next(g, b, v))
		for (int i = g->adj_start[v]; i < g->adj_start[v + 1]; i++)
		{
			int			e = g->adj[i] >> 1;
			int			bj = g->inblossom[ep_vertex(g, g->adj[i])];

			if (bj != b && g->label[bj] == LBL_S &&
				(g->bestedge[b] == -1 ||
				 edge_slack(g, e) < edge_slack(g, g->bestedge[b])))
				g->bestedge[b] = e;
		}
}

/*
 * Recompute what a vertex v outside the S-blossoms knows about its edges
 * to S-vertices: its least-slack such edge (for a dual update of type 2),
 * and, inside a T-blossom, whether a tight one reaches it.  A tight edge
 * into a free blossom puts the S end back on the queue, so that the scan
 * labels the blossom.
 */
static void
repair_vertex(Mwm *g, int v)
{
	int			bv = g->inblossom[v];

	g->bestedge[v] = -1;
	for (int i = g->adj_start[v]; i < g->adj_start[v + 1]; i++)
	{
		int			p = g->adj[i];
		int			w = ep_vertex(g, p);
		int			bw = g->inblossom[w];
		int64_t		slack;

		if (bw == bv || g->label[bw] != LBL_S)
			continue;
		slack = edge_slack(g, p >> 1);
		if (slack <= 0)
		{
			if (g->label[bv] == LBL_FREE)
				queue_push(g, w);
			else if (g->label[v] == LBL_FREE)
			{
				g->label[v] = LBL_T;
				g->labelend[v] = p;
			}
		}
		if (g->bestedge[v] == -1 || slack < edge_slack(g, g->bestedge[v]))
			g->bestedge[v] = p >> 1;
	}
}

/* Whether mm_interrupt asks the matching to stop; it then stays stopped. */
static bool
mwm_stop(Mwm *g)
{
	if (mm_interrupted())
		g->interrupted = true;
	return g->interrupted;
}

/*
 * After an augmentation through the trees rooted at r1 and r2, take those
 * two trees apart and leave every other tree as it is.  This replaces the
 * restart of a stage in the textbook algorithm, which would rebuild the
 * whole forest after each augmentation at O(m) cost.
 *
 * The trees' vertices are all matched now.  Their top-level blossoms become
 * free (S-blossoms with a zero dual are expanded, as at the end of a
 * stage), and they leave the queue.  Everything else that the two trees
 * made stale is repaired: edges once known tight, best edges of other
 * blossoms and vertices that pointed at their S-vertices, and marks on
 * vertices inside other T-blossoms that were reached from them.  Their
 * own vertices learn their best edges to the remaining S-vertices.
 */
static void
dissolve_trees(Mwm *g, int r1, int r2)
{
	int			nv = g->nv;
	int			nd = 0;
	int			nr = 0;
	int			k = 0;

	g->stamp++;
	for (int v = 0; v < nv; v++)
	{
		int			t = g->tree[g->inblossom[v]];

		if (t == r1 || t == r2)
		{
			g->dlist[nd++] = v;
			g->mark[v] = g->stamp;	/* vertex ids mark membership here */
		}
	}
	for (int i = 0; i < nd; i++)
	{
		int			b = g->inblossom[g->dlist[i]];

		if (b >= nv && g->label[b] == LBL_S && g->dual[b] == 0)
			expand_blossom(g, b, true);
	}

	/*
	 * Clear the labels of the vertices and of every blossom above them,
	 * nested ones included: a blossom keeps its children's labels from
	 * when they were top-level, and a later expansion must find them
	 * clear, as at the start of a textbook stage.
	 */
	for (int i = 0; i < nd; i++)
	{
		int			v = g->dlist[i];

		g->label[v] = LBL_FREE;
		g->labelend[v] = -1;
		g->tree[v] = -1;
		g->bestedge[v] = -1;
		for (int a = g->bparent[v]; a != -1 && g->mark[a] != g->stamp;
			 a = g->bparent[a])
		{
			g->mark[a] = g->stamp;
			g->label[a] = LBL_FREE;
			g->labelend[a] = -1;
			g->tree[a] = -1;
			g->bestedge[a] = -1;
			g->bhaslist[a] = false;
			g->bhead[a] = -1;
		}
	}
	for (int i = 0; i < g->nqueue; i++)
	{
		int			v = g->queue[i];

		if (g->mark[v] == g->stamp)
			g->inqueue[v] = false;
		else
			g->queue[k++] = v;
	}
	g->nqueue = k;

	/*
	 * Outside the two trees, find what pointed at them (the trees'
	 * vertices carry the current stamp), then repair each such id once
	 * (under a new stamp).
	 */
	for (int i = 0; i < nd; i++)
	{
		int			v = g->dlist[i];

		if (mwm_stop(g))
			return;				/* solve stops; the forest is left half-repaired */
		for (int j = g->adj_start[v]; j < g->adj_start[v + 1]; j++)
		{
			int			p = g->adj[j];
			int			e = p >> 1;
			int			y = ep_vertex(g, p);
			int			by = g->inblossom[y];

			g->allowedge[e] = false;
			if (g->mark[y] == g->stamp)
				continue;		/* y is one of the two trees' vertices */
			if (g->label[by] == LBL_S)
			{
				if (g->bestedge[by] == e)
					g->rlist[nr++] = by;
			}
			else
			{
				if (g->label[y] == LBL_T && g->labelend[y] == (p ^ 1))
				{
					/* y, inside a T-blossom, was reached from v */
					g->label[y] = LBL_FREE;
					g->labelend[y] = -1;
					g->rlist[nr++] = y;
				}
				else if (g->bestedge[y] == e)
					g->rlist[nr++] = y;
			}
		}
	}
	for (int i = 0; i < nd; i++)
	{
		if (mwm_stop(g))
			return;
		repair_vertex(g, g->dlist[i]);
	}
	g->stamp++;
	for (int i = 0; i < nr; i++)
	{
		int			x = g->rlist[i];

		if (mwm_stop(g))
			return;
		if (!mark_once(g, x))
			continue;
		if (g->label[x] == LBL_S && g->bparent[x] == -1)
			repair_s_best(g, x);
		else
			repair_vertex(g, x);
	}
}

/*
 * Scan the queued S-vertices' edges: grow trees over tight edges, close
 * blossoms, and record least-slack edges for the dual update.  Returns
 * true after an augmentation (the two trees it used are taken apart and
 * the scan has to start over); false once the queue is empty.
 */
static bool
scan_queue(Mwm *g)
{
	while (g->nqueue > 0)
	{
		int			v;

		if (mwm_stop(g))
			return false;
		v = g->queue[--g->nqueue];

		g->inqueue[v] = false;
		for (int i = g->adj_start[v]; i < g->adj_start[v + 1]; i++)
		{
			int			p = g->adj[i];
			int			e = p >> 1;
			int			w = ep_vertex(g, p);
			int			bw = g->inblossom[w];
			int64_t		kslack = 0;

			if (g->inblossom[v] == bw)
				continue;
			if (!g->allowedge[e])
			{
				kslack = edge_slack(g, e);
				if (kslack <= 0)
					g->allowedge[e] = true;
			}
			if (g->allowedge[e])
			{
				if (g->label[bw] == LBL_FREE)
					assign_label(g, w, LBL_T, p ^ 1);
				else if (g->label[bw] == LBL_S)
				{
					int			base = scan_blossom(g, v, w);

					if (base >= 0)
						add_blossom(g, base, e);
					else
					{
						int			r1 = g->tree[g->inblossom[v]];
						int			r2 = g->tree[bw];

						augment_matching(g, e);
						g->nfreev -= 2;
						dissolve_trees(g, r1, r2);
						return true;
					}
				}
				else if (g->label[w] == LBL_FREE)
				{
					/* w inside a T-blossom: remember how it was reached */
					g->label[w] = LBL_T;
					g->labelend[w] = p ^ 1;
				}
			}
			else if (g->label[bw] == LBL_S)
			{
				int			bv = g->inblossom[v];

				if (g->bestedge[bv] == -1 ||
					kslack < edge_slack(g, g->bestedge[bv]))
					g->bestedge[bv] = e;
			}
			else if (g->label[w] == LBL_FREE)
			{
				if (g->bestedge[w] == -1 ||
					kslack < edge_slack(g, g->bestedge[w]))
					g->bestedge[w] = e;
			}
		}
	}
	return false;
}

/* What limits a dual update: the largest delta, and the kind of event. */
typedef struct DualDelta
{
	int64_t		delta;
	int			type;			/* 1 to 4, as dual_update lists them */
	int			edge;			/* types 2 and 3: the edge that becomes tight */
	int			blossom;		/* type 4: the T-blossom whose dual reaches zero */
} DualDelta;

/* Lower dd->delta to d with its type and edge, when d is less. */
static inline void
lower_delta(DualDelta *dd, int64_t d, int type, int edge)
{
	if (d < dd->delta)
	{
		dd->delta = d;
		dd->type = type;
		dd->edge = edge;
	}
}

/*
 * The largest delta that keeps the duals feasible, starting from type 1
 * (dd->delta the free vertices' dual), and what limits it.
 */
static void
least_delta(const Mwm *g, DualDelta *dd)
{
	int			nv = g->nv;

	/*
	 * 2: an edge from an S-vertex to a free blossom becomes tight (best
	 * edges of vertices in free blossoms); 3: an edge between two
	 * S-blossoms becomes tight (best edges of top-level S-vertices here,
	 * of S-blossoms below).
	 */
	for (int v = 0; v < nv; v++)
	{
		int			top = g->inblossom[v];
		int			l = g->label[top];

		if (g->bestedge[v] == -1)
			continue;
		if (l == LBL_FREE)
			lower_delta(dd, edge_slack(g, g->bestedge[v]), 2, g->bestedge[v]);
		else if (l == LBL_S && top == v)
			lower_delta(dd, edge_slack(g, g->bestedge[v]) / 2, 3, g->bestedge[v]);
	}

	/* 3 for S-blossoms; 4: a T-blossom's dual reaches zero */
	for (int b = nv; b < 2 * nv; b++)
	{
		if (g->bbase[b] < 0 || g->bparent[b] != -1)
			continue;
		if (g->label[b] == LBL_S && g->bestedge[b] != -1)
			lower_delta(dd, edge_slack(g, g->bestedge[b]) / 2, 3, g->bestedge[b]);
		else if (g->label[b] == LBL_T && g->dual[b] < dd->delta)
		{
			dd->delta = g->dual[b];
			dd->type = 4;
			dd->blossom = b;
		}
	}
}

/* Move the duals by delta: S-vertices down, T-vertices up, blossoms the other way. */
static void
apply_delta(Mwm *g, int64_t delta)
{
	int			nv = g->nv;

	for (int v = 0; v < nv; v++)
	{
		int			l = g->label[g->inblossom[v]];

		if (l == LBL_S)
			g->dual[v] -= delta;
		else if (l == LBL_T)
			g->dual[v] += delta;
	}
	for (int b = nv; b < 2 * nv; b++)
	{
		if (g->bbase[b] >= 0 && g->bparent[b] == -1)
		{
			if (g->label[b] == LBL_S)
				g->dual[b] += delta;
			else if (g->label[b] == LBL_T)
				g->dual[b] -= delta;
		}
	}
}

/*
 * One dual update: find the largest delta that keeps the duals feasible,
 * apply it, and act on what limited it.  Returns false when the optimum
 * is reached (the free vertices' dual hit zero).
 */
static bool
dual_update(Mwm *g)
{
	DualDelta	dd;

	/*
	 * 1: the free vertices' dual reaches zero.  They are all S-roots, so
	 * they share one dual, the least of all; with no free vertex left the
	 * matching is perfect and optimal.
	 */
	if (g->nfreev == 0)
		return false;
	dd.delta = g->freedual;
	dd.type = 1;
	dd.edge = -1;
	dd.blossom = -1;
	least_delta(g, &dd);
	apply_delta(g, dd.delta);

	g->freedual -= dd.delta;
	switch (dd.type)
	{
		case 1:
			return false;
		case 2:
			{
				int			i = g->eu[dd.edge];

				g->allowedge[dd.edge] = true;
				if (g->label[g->inblossom[i]] != LBL_S)
					i = g->ev[dd.edge];
				queue_push(g, i);
				break;
			}
		case 3:
			g->allowedge[dd.edge] = true;
			queue_push(g, g->eu[dd.edge]);
			break;
		default:
			expand_blossom(g, dd.blossom, false);
			break;
	}
	return true;
}

/*
 * Run the primal-dual algorithm to a maximum-weight matching in g->mate.
 * Every vertex starts free, as the root of its own tree, with the dual
 * max w.  The forest then only changes locally: scans grow it, dual
 * updates make edges tight, augmentations take two trees apart.  The run
 * ends when the free vertices' dual reaches zero.
 */
static void
solve(Mwm *g)
{
	int			nv = g->nv;
	int64_t		maxw = 0;

	for (int e = 0; e < g->ne; e++)
		if (g->ew[e] > maxw)
			maxw = g->ew[e];
	for (int v = 0; v < nv; v++)
	{
		g->mate[v] = -1;
		g->inblossom[v] = v;
		g->dual[v] = maxw;
		g->bbase[v] = v;
		g->inqueue[v] = false;
	}
	for (int b = 0; b < 2 * nv; b++)
	{
		g->bparent[b] = -1;
		g->bestto[b] = -1;
		g->label[b] = LBL_FREE;
		g->labelend[b] = -1;
		g->tree[b] = -1;
		g->bestedge[b] = -1;
		g->bhaslist[b] = false;
		g->bhead[b] = -1;
		g->mark[b] = 0;
	}
	g->stamp = 0;
	g->nfreev = nv;
	g->freedual = maxw;
	g->nfree = 0;
	for (int b = 2 * nv - 1; b >= nv; b--)
		free_blossom(g, b);
	memset(g->allowedge, 0, sizeof(bool) * (size_t) g->ne);
	g->nqueue = 0;
	for (int v = 0; v < nv; v++)
		assign_label(g, v, LBL_S, -1);

	for (;;)
	{
		/* an augmentation interrupted while it took its trees apart stops here */
		if (scan_queue(g) && !g->interrupted)
			continue;
		if (mwm_stop(g))
			break;
		if (!dual_update(g))
			break;
	}
}

#ifdef MM_OPTIMAL_VERIFY
/* True when blossom b (or vertex) a is b or lies inside b. */
static bool
within(const Mwm *g, int a, int b)
{
	for (; a != -1; a = g->bparent[a])
		if (a == b)
			return true;
	return false;
}

/*
 * Debug check of the optimality certificate (build with
 * -DMM_OPTIMAL_VERIFY): mates symmetric, duals non-negative, free vertices
 * at dual zero, every edge's slack non-negative and zero on matched edges,
 * and every blossom with a positive dual matched inside but for its base.
 */
static bool
verify_certificate(const Mwm *g)
{
	int			nv = g->nv;

	for (int v = 0; v < nv; v++)
	{
		if (g->dual[v] < 0 || (g->mate[v] == -1 && g->dual[v] != 0))
			return false;
		if (g->mate[v] != -1 &&
			g->mate[ep_vertex(g, g->mate[v])] != (g->mate[v] ^ 1))
			return false;
	}
	for (int e = 0; e < g->ne; e++)
	{
		int64_t		s = g->dual[g->eu[e]] + g->dual[g->ev[e]] - 2 * g->ew[e];

		for (int a = g->bparent[g->eu[e]]; a != -1; a = g->bparent[a])
			if (within(g, g->ev[e], a))
				s += 2 * g->dual[a];
		if (s < 0)
			return false;
		if (g->mate[g->eu[e]] == 2 * e + 1 && s != 0)
			return false;
	}
	for (int b = nv; b < 2 * nv; b++)
	{
		int			leaves = 0;
		int			inside = 0;

		if (g->bbase[b] < 0)
			continue;
		if (g->dual[b] < 0)
			return false;
		if (g->dual[b] == 0)
			continue;
		for (int v = leaf_first(g, b); v >= 0; v = leaf_next(g, b, v))
		{
			leaves++;
			if (g->mate[v] != -1 && within(g, ep_vertex(g, g->mate[v]), b))
				inside++;
		}
		if (inside != leaves - 1)
			return false;
	}
	return true;
}
#endif

/* Release every array of g (all pointers may be NULL). */
static void
mwm_free(Mwm *g)
{
	mm_free(g->eu);
	mm_free(g->ev);
	mm_free(g->ew);
	mm_free(g->adj_start);
	mm_free(g->adj);
	mm_free(g->mate);
	mm_free(g->inblossom);
	mm_free(g->label);
	mm_free(g->labelend);
	mm_free(g->bparent);
	mm_free(g->bbase);
	mm_free(g->bfirst);
	mm_free(g->bnext);
	mm_free(g->bprev);
	mm_free(g->blink);
	mm_free(g->bestedge);
	mm_free(g->bhead);
	mm_free(g->bhaslist);
	mm_free(g->lnext);
	mm_free(g->dual);
	mm_free(g->allowedge);
	mm_free(g->tree);
	mm_free(g->queue);
	mm_free(g->inqueue);
	mm_free(g->mark);
	mm_free(g->dlist);
	mm_free(g->rlist);
	mm_free(g->freeids);
	mm_free(g->scratch);
	mm_free(g->scratch2);
	mm_free(g->bestto);
}

/* Allocate every array of g for nv vertices and ne edges. */
static MMStatus
mwm_alloc(Mwm *g, int nv, int ne)
{
	size_t		v1 = (size_t) nv + 1;
	size_t		v2 = 2 * (size_t) nv + 1;
	size_t		e1 = (size_t) ne + 1;
	size_t		e2 = 2 * (size_t) ne + 1;

	memset(g, 0, sizeof(*g));
	g->nv = nv;
	g->ne = ne;
	g->eu = mm_malloc(sizeof(int) * e1);
	g->ev = mm_malloc(sizeof(int) * e1);
	g->ew = mm_malloc(sizeof(int64_t) * e1);
	g->adj_start = mm_malloc(sizeof(int) * (v1 + 1));
	g->adj = mm_malloc(sizeof(int) * e2);
	g->mate = mm_malloc(sizeof(int) * v1);
	g->inblossom = mm_malloc(sizeof(int) * v1);
	g->label = mm_malloc(sizeof(int) * v2);
	g->labelend = mm_malloc(sizeof(int) * v2);
	g->bparent = mm_malloc(sizeof(int) * v2);
	g->bbase = mm_malloc(sizeof(int) * v2);
	g->bfirst = mm_malloc(sizeof(int) * v2);
	g->bnext = mm_malloc(sizeof(int) * v2);
	g->bprev = mm_malloc(sizeof(int) * v2);
	g->blink = mm_malloc(sizeof(int) * v2);
	g->bestedge = mm_malloc(sizeof(int) * v2);
	g->bhead = mm_malloc(sizeof(int) * v2);
	g->bhaslist = mm_malloc(sizeof(bool) * v2);
	g->lnext = mm_malloc(sizeof(int) * e2);
	g->dual = mm_malloc(sizeof(int64_t) * v2);
	g->allowedge = mm_malloc(sizeof(bool) * e1);
	g->tree = mm_malloc(sizeof(int) * v2);
	g->queue = mm_malloc(sizeof(int) * v1);
	g->inqueue = mm_malloc(sizeof(bool) * v1);
	g->mark = mm_malloc(sizeof(int) * v2);
	g->dlist = mm_malloc(sizeof(int) * v1);
	g->rlist = mm_malloc(sizeof(int) * v2);
	g->freeids = mm_malloc(sizeof(int) * v1);
	g->scratch = mm_malloc(sizeof(int) * v2);
	g->scratch2 = mm_malloc(sizeof(int) * v2);
	g->bestto = mm_malloc(sizeof(int) * v2);
	if (!g->eu || !g->ev || !g->ew || !g->adj_start || !g->adj ||
		!g->mate || !g->inblossom || !g->label || !g->labelend ||
		!g->bparent || !g->bbase || !g->bfirst || !g->bnext || !g->bprev ||
		!g->blink || !g->bestedge || !g->bhead || !g->bhaslist ||
		!g->lnext || !g->dual || !g->allowedge || !g->tree ||
		!g->queue || !g->inqueue || !g->mark || !g->dlist || !g->rlist ||
		!g->freeids || !g->scratch || !g->scratch2 || !g->bestto)
	{
		mwm_free(g);
		return MM_ERR_NOMEM;
	}
	return MM_OK;
}

/* Cost of playing i and j (i no later than j) together; see mm_core.h. */
static double
pair_cost(const MMArrival *a, int i, int j, double max_wait)
{
	return 2.0 * fabs(a[i].rating - a[j].rating) +
		(a[j].arrival - a[i].arrival) / max_wait;
}

/* Integer weight of admissible pair (i, j): round(2^30 (2 bot - c_ij)). */
static int64_t
pair_weight(const MMArrival *a, int i, int j, double max_wait,
			double bot_cost)
{
	return (int64_t) llround((2.0 * bot_cost - pair_cost(a, i, j, max_wait)) *
							 OPT_SCALE);
}

/*
 * Schlup's OPT for k = 2: see mm_core.h for the interface and
 * doc/optimal.md for the definition.
 */
MMStatus
mm_optimal_pairs(const MMArrival *arrivals, int n, double max_wait,
				 double bot_cost, int *partner, double *total_cost)
{
	Mwm			g;
	int64_t		ne = 0;
	int			e;
	double		total = 0.0;
	MMStatus	st;

	if (n < 0 || (n > 0 && arrivals == NULL) ||
		!(max_wait > 0) || !isfinite(max_wait) ||
		!(bot_cost >= 0) || !(bot_cost <= OPT_MAX_BOT_COST))
		return MM_ERR_ARGUMENT;
	if (mm_check_arrivals(arrivals, n) != MM_OK)
		return MM_ERR_ARGUMENT;
	if (n == 0)
	{
		if (total_cost != NULL)
			*total_cost = 0.0;
		return MM_OK;
	}

	/* count the admissible pairs with a positive weight */
	for (int i = 0; i < n; i++)
	{
		if (mm_interrupted())
			return MM_ERR_INTERRUPTED;
		for (int j = i + 1;
			 j < n && arrivals[j].arrival - arrivals[i].arrival <= max_wait; j++)
			if (pair_weight(arrivals, i, j, max_wait, bot_cost) > 0)
				ne++;
		/* refuse as soon as the edges alone would pass the memory limit */
		if (mm_memory_limit > 0 && ne > (int64_t) (mm_memory_limit / OPT_EDGE_BYTES))
		{
			mm_memory_refused = 1;
			return MM_ERR_NOMEM;
		}
	}
	if (ne > (INT_MAX - 2) / 2)
		return MM_ERR_NOMEM;	/* beyond what int endpoints can index */

	st = mwm_alloc(&g, n, (int) ne);
	if (st != MM_OK)
		return st;

	/* the edge list, then adjacency lists of remote endpoints (CSR) */
	e = 0;
	for (int i = 0; i < n; i++)
	{
		if (mm_interrupted())
		{
			mwm_free(&g);
			return MM_ERR_INTERRUPTED;
		}
		for (int j = i + 1;
			 j < n && arrivals[j].arrival - arrivals[i].arrival <= max_wait; j++)
		{
			int64_t		w = pair_weight(arrivals, i, j, max_wait, bot_cost);

			if (w > 0)
			{
				g.eu[e] = i;
				g.ev[e] = j;
				g.ew[e] = w;
				e++;
			}
		}
	}
	memset(g.adj_start, 0, sizeof(int) * ((size_t) n + 2));
	for (e = 0; e < g.ne; e++)
	{
		g.adj_start[g.eu[e] + 2]++;
		g.adj_start[g.ev[e] + 2]++;
	}
	for (int v = 0; v < n; v++)
		g.adj_start[v + 2] += g.adj_start[v + 1];
	for (e = 0; e < g.ne; e++)
	{
		g.adj[g.adj_start[g.eu[e] + 1]++] = 2 * e + 1;
		g.adj[g.adj_start[g.ev[e] + 1]++] = 2 * e;
	}

	solve(&g);
	if (g.interrupted)
	{
		mwm_free(&g);
		return MM_ERR_INTERRUPTED;
	}
#ifdef MM_OPTIMAL_VERIFY
	if (!verify_certificate(&g))
		abort();
#endif

	for (int i = 0; i < n; i++)
	{
		int			j = g.mate[i] == -1 ? -1 : ep_vertex(&g, g.mate[i]);

		if (partner != NULL)
			partner[i] = j;
		if (j == -1)
			total += bot_cost;
		else if (j > i)
			total += pair_cost(arrivals, i, j, max_wait);
	}
	if (total_cost != NULL)
		*total_cost = total;
	mwm_free(&g);
	return MM_OK;
}
