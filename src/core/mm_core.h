/*
 * mm_core.h
 *		The pure-C core of matchmaker: cost model, matching algorithms and
 *		the virtual-time simulator.
 *
 * Nothing here includes PostgreSQL headers.  The core works on arrays that
 * the caller owns; scratch memory needed inside one call is taken with
 * the core's allocator (limits.c, within mm_memory_limit) and released
 * before the call returns, so a caller never has to
 * free anything the core made.  Functions report failure through MMStatus.
 *
 * Ratings handed to the core are already normalised to [0, 1] (Schlup's
 * criterion gamma); times are seconds on any clock the caller chooses.
 */
#ifndef MM_CORE_H
#define MM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum MMStatus
{
	MM_OK = 0,
	MM_ERR_ARGUMENT,			/* an argument is out of its domain */
	MM_ERR_NOMEM,				/* malloc() failed, or mm_memory_limit refused */
	MM_ERR_INTERRUPTED			/* mm_interrupt asked a long computation to stop */
} MMStatus;

/*
 * When set, every loop of the core that can run long (a step over a large
 * pool, an optimize round, the simulator, the offline optimum's matching)
 * calls this every few dozen iterations and stops with MM_ERR_INTERRUPTED,
 * releasing its memory, when it returns nonzero.  The PostgreSQL side
 * points it at its query-cancel and terminate flags.
 */
extern int	(*mm_interrupt) (void);

/*
 * The core's memory: every scratch block it allocates counts in
 * mm_memory_used (bytes, live), whose high-water mark is mm_memory_peak (a
 * caller may reset it to 0).  When mm_memory_limit is not 0, an allocation
 * that would take mm_memory_used above it fails and the computation
 * returns MM_ERR_NOMEM, as when malloc() fails.  The PostgreSQL side sets
 * the limit from matchmaker.core_memory_limit.
 */
extern size_t mm_memory_limit;
extern size_t mm_memory_used;
extern size_t mm_memory_peak;

/*
 * Set to 1 when mm_memory_limit refused an allocation (rather than malloc
 * failing); the caller clears it when it reports the failure.
 */
extern int	mm_memory_refused;

/*
 * How many allocations the core could not make (the limit refused them,
 * or malloc failed).  mm_next_deadline cannot report MM_ERR_NOMEM: without
 * the memory it needs it falls back to a deadline that may come late, so
 * its callers compare this count before and after.
 */
extern unsigned int mm_alloc_failures;

/* ----------------------------------------------------------------
 * Cost model (Schlup, eq. 1)
 * ----------------------------------------------------------------
 */

/* The cost of one game, split into its two sums. */
typedef struct MMCost
{
	double		criteria;		/* sum_d f_d * q_d(G) */
	double		wait;			/* sum_P wait(P) / max_wait, computer players count 1 */
	double		total;			/* criteria + wait */
} MMCost;

/*
 * Cost of one game of k players of which n are real and bots = k - n are
 * computer players.  criteria holds n * ncriteria normalised values, player
 * by player (player i's criterion d at criteria[i * ncriteria + d]); weights
 * holds ncriteria weights f_d, or is NULL for the default f_d = k / D.
 * waits are the players' waiting times in seconds (>= 0); max_wait > 0.
 * A game with a computer player has q_d = 1 for every criterion, and each
 * computer player counts a wait of max_wait.
 */
extern MMStatus mm_game_cost(int k, int n, int ncriteria,
							 const double *criteria, const double *weights,
							 const double *waits, double max_wait,
							 MMCost *out);

/* ----------------------------------------------------------------
 * Queue configuration
 * ----------------------------------------------------------------
 */

typedef enum MMAlgorithm
{
	MM_ALGO_GREEDY = 0,
	MM_ALGO_PERIODIC,
	MM_ALGO_MULTI_QUEUE,
	MM_ALGO_DIFFERENCE_WAIT,
	MM_ALGO_WINDOW,				/* widening acceptance windows (1v1 thread, hplus0603) */
	MM_ALGO_CLUSTER,			/* sigmoid decay and fixed-size clusters (CS:GO post) */
	MM_ALGO_OPTIMIZE,			/* scored batch rounds with swap search (Awesomenauts) */
	MM_ALGO_AUTO				/* thresholds that adapt to the measured traffic */
} MMAlgorithm;

/* How many algorithms there are. */
#define MM_NUM_ALGORITHMS ((int) MM_ALGO_AUTO + 1)

typedef enum MMTimeout
{
	MM_TIMEOUT_BOTS = 0,		/* complete the game with computer players */
	MM_TIMEOUT_EXPIRE			/* end the ticket as expired */
} MMTimeout;

typedef enum MMTeamPolicy
{
	MM_TEAMS_GREEDY = 0,		/* form a match as soon as k players are at hand */
	MM_TEAMS_PATIENT			/* Wu: wait for one more player rather than play unbalanced */
} MMTeamPolicy;

/* Criteria per ticket at most: the rating and seven more. */
#define MM_MAX_CRITERIA 8

/* Roles per queue at most (MMRolesParams). */
#define MM_MAX_ROLES 8

/* multi_queue keeps at most this many cells (the product of the criteria's ranges). */
#define MM_MAX_CELLS 1e12

/*
 * Criteria beyond the rating (greedy, multi_queue): criterion 0 is the
 * rating, criteria 1 .. n come from MMPool.criteria.  The cost's factor of
 * criterion d is f_d = k * weight[d] / sum(weight), or k / D (D = n + 1)
 * when every weight is 0.
 */
typedef struct MMCriteriaParams
{
	int			n;				/* 0 .. MM_MAX_CRITERIA - 1 */
	double		weight[MM_MAX_CRITERIA];	/* relative weights, 0 to 1e6 */
	int			ranges[MM_MAX_CRITERIA];	/* multi_queue: ranges of criterion
											 * d >= 1, 0 to follow
											 * multi_queue.ranges ([0] unused) */
} MMCriteriaParams;

/*
 * Roles (every algorithm but optimize): each team has slots[r] places of
 * role r (n roles, each at least 1 place, summing to team_size); a ticket
 * lists the roles it can play as a bit mask (MMPool.roles), and a match
 * forms only when every team can give each of its players one role it
 * lists, no role above its places (compose.c).  n = 0: no roles.
 */
typedef struct MMRolesParams
{
	int			n;
	int			slots[MM_MAX_ROLES];
} MMRolesParams;

/* greedy */
typedef struct MMGreedyParams
{
	MMTeamPolicy team_policy;	/* patient needs teams >= 2, team_size >= 2, k <= MM_PATIENT_MAX_K */
} MMGreedyParams;

/* periodic */
typedef struct MMPeriodicParams
{
	int			batch;			/* players per period n (multiple of k), 0 = auto */
} MMPeriodicParams;

/* multi_queue */
typedef struct MMMultiQueueParams
{
	int			ranges;			/* rating ranges r (>= 1), 0 = auto */
} MMMultiQueueParams;

/* difference_wait */
typedef struct MMDifferenceWaitParams
{
	double		wait_factor;	/* seconds per unit of q (>= 0) */
} MMDifferenceWaitParams;

/* window: a ticket accepts partners within its window, which widens with its wait */
typedef struct MMWindowParams
{
	double		width;			/* half-width on arrival, in [0, 1] (of the rating range, or of ranks) */
	double		widen;			/* added per second of wait (>= 0), applied at each recheck instant */
	double		max;			/* cap of the half-width, in [width, 1] */
	int			percentile;		/* 1: distances in rating rank among the waiting tickets */
	double		rematch_penalty;	/* added to the distance of two tickets whose players
									 * met recently (MMPool.met), >= 0; INFINITY bans the pair */
	int			rematch_last;	/* how many of a player's last matches the caller reads
								 * for MMPool.met (0: none); not used by the core */
} MMWindowParams;

/* cluster: ratings decay toward the mean along a logistic curve of the wait */
typedef struct MMClusterParams
{
	double		midpoint;		/* seconds at which the decay is about 1/2 (>= 0) */
	double		steepness;		/* of the logistic, per second (> 0) */
	double		threshold;		/* largest distance to a centroid to join it, [1e-4, 1] */
	double		shift;			/* seconds a newcomer counts as having waited (>= 0) */
	int			shift_auto;		/* 1: mm_simulate sets shift to the mean wait so far */
} MMClusterParams;

/*
 * auto: each waiting ticket's value is S * (base + growth * wait / max_wait),
 * S = (arrival_rate * max_wait)^(-1/(D + 1)); a group is committed when its
 * spread cost is covered by its members' values (doc/algorithms.md).
 * 0 takes the measured defaults; the SQL API sets neither.
 */
typedef struct MMAutoParams
{
	double		base;			/* >= 0 */
	double		growth;			/* >= 0 */
	double		curve;			/* >= 0: adds curve * (wait / max_wait)^2 */
} MMAutoParams;

/*
 * optimize: the weights of a match's factors, each factor in [0, 1]; see
 * doc/algorithms.md.  Weights are >= 0, not all 0.
 */
typedef struct MMOptimizeWeights
{
	double		balance;		/* equal team mean ratings */
	double		spread;			/* equal ratings over all player pairs */
	double		premades;		/* premades face premades of the same shape */
	double		ping;			/* low ping between opponents */
	double		variation;		/* not the same opponents/teammates as last match */
	double		hosts;			/* two players who can host */
} MMOptimizeWeights;

/*
 * optimize: rounds at the recheck instants (and at timeouts) score each
 * match as a weighted average of factors.
 */
typedef struct MMOptimizeParams
{
	MMOptimizeWeights weights;
	double		skill_lo;		/* ratings are capped to [skill_lo, skill_hi] ... */
	double		skill_hi;		/* ... and stretched to [0, 1]; 0 <= lo < hi <= 1 */
	double		ping_max;		/* ms (> 0): a ping at or above scores 0 */
	double		host_ping;		/* ms (> 0): largest ping from a host to every member */
	int			restarts;		/* random restarts after the first start (>= 0) */
	double		budget_ms;		/* wall-clock budget of a round's search, the first
								 * climb included (> 0) */
	int			round_max;		/* tickets in a round at most, the oldest units first
								 * (k to MM_OPTIMIZE_MAX_ROUND) */
	uint64_t	seed;			/* for the restarts' shuffles */
} MMOptimizeParams;

/*
 * The least max_wait (seconds) mm_config_check accepts: a wait's cost is
 * the wait over max_wait, which a smaller one (down to denormals) makes
 * infinite.  SQL's intervals count microseconds, so it never binds there.
 */
#define MM_MAX_WAIT_MIN 1e-9

/*
 * A queue's configuration: the shared fields at the top, then one struct
 * per algorithm (a field of another algorithm than cfg->algorithm is
 * ignored).  mm_config_init sets every field to its default.
 */
struct MMDensity;

typedef struct MMConfig
{
	MMAlgorithm algorithm;
	int			teams;			/* teams per match (>= 1) */
	int			team_size;		/* players per team (>= 1); k = teams * team_size >= 2 */
	double		max_wait;		/* tau_max, seconds, MM_MAX_WAIT_MIN or more */
	MMTimeout	on_timeout;
	double		arrival_rate;	/* players per second, measured by the caller; used by auto */
	/*
	 * auto: the time of the latest arrival arrival_rate was measured over
	 * (the pool's clock), and the gaps between those arrivals (their
	 * number less one).  auto spreads the gaps over the span from the
	 * first of them until its step, so the rate falls while nobody arrives
	 * (in steps; doc/algorithms.md).  rate_gaps 0 or rate_last not finite:
	 * the rate stays as measured.
	 */
	double		rate_last;
	int			rate_gaps;
	/*
	 * auto, k = 2 with the rating its only criterion: the normalised
	 * ratings of the latest arrivals (waiting or not), ascending, at most
	 * MM_DENSITY_ARRIVALS, from which it estimates where the next ones are
	 * likely to lie; set by the caller as arrival_rate is (mm_config_check
	 * refuses more than MM_DENSITY_ARRIVALS, a count without ratings, and
	 * ratings outside [0, 1] or out of order).  May be NULL.  mm_simulate
	 * ignores it and keeps the stream's own.
	 */
	const double *recent;
	int			nrecent;
	/*
	 * With recent: where the caller keeps auto's estimate made from it
	 * (MMDensity), so that the pools stepped with one sample (a step and
	 * its deadline, the sub-pools of equal filters) make it once.  The
	 * caller clears its valid and lookups whenever recent changes.  May be
	 * NULL: each step then makes what it needs itself.  mm_simulate keeps
	 * its own.
	 */
	struct MMDensity *density;
	int			min_players;	/* the smallest match a ticket at max_wait plays instead of
								 * computer players or an expiry, 2 to k; 0 (or k): none */
	double		accept_timeout; /* seconds a formed match waits for its players' ready
								 * check (0: none); the database's, not the core's */
	double		recheck;		/* window, cluster: windows widen and waits count at the multiples
								 * of recheck seconds on the absolute clock (MMPool.epoch);
								 * optimize: its rounds are held there,
								 * 0.001 to 86400 */
	MMCriteriaParams criteria;	/* greedy, multi_queue, auto */
	MMRolesParams roles;		/* every algorithm but optimize */
	MMGreedyParams greedy;
	MMPeriodicParams periodic;
	MMMultiQueueParams multi_queue;
	MMDifferenceWaitParams difference_wait;
	MMWindowParams window;
	MMClusterParams cluster;
	MMOptimizeParams optimize;
	MMAutoParams automatic;
} MMConfig;

/* The patient policy compares exact team splits, so it is offered up to this k. */
#define MM_PATIENT_MAX_K 12

/* optimize splits every match by brute force, so it is offered up to this k. */
#define MM_OPTIMIZE_MAX_K 12

/* optimize's round_max: the default, and the largest accepted. */
#define MM_OPTIMIZE_ROUND_MAX 2000
#define MM_OPTIMIZE_MAX_ROUND 1000000

/* The max_wait of mm_config_init, seconds (as create_queue's default, 5 minutes). */
#define MM_DEFAULT_MAX_WAIT 300.0

/* Team rating sums that differ by no more than this count as balanced. */
#define MM_BALANCE_TOLERANCE 1e-9

/* Players per match. */
static inline int
mm_config_k(const MMConfig *cfg)
{
	return cfg->teams * cfg->team_size;
}

/*
 * Set every field of cfg to its default for the algorithm: a one-on-one
 * queue (teams 2, team_size 1) with max_wait MM_DEFAULT_MAX_WAIT, timeouts
 * completed by bots, and each parameter as the SQL API takes it when a
 * queue's params leave it out (doc/algorithms.md).  The defaults that
 * follow max_wait are set by mm_config_set_max_wait.
 */
extern void mm_config_init(MMConfig *cfg, MMAlgorithm algorithm);

/*
 * Set max_wait and the defaults that follow it: difference_wait's
 * wait_factor (max_wait), cluster's midpoint (max_wait / 2) and steepness
 * (10 / max_wait, at most 1000), and optimize's recheck (max_wait / 4
 * within [0.001, 86400]).  Overwrites those fields.
 */
extern void mm_config_set_max_wait(MMConfig *cfg, double max_wait);

/* Validate a configuration; returns MM_ERR_ARGUMENT when a field is out of its domain. */
extern MMStatus mm_config_check(const MMConfig *cfg);

/* Algorithm names as the SQL API spells them; NULL for an unknown value. */
extern const char *mm_algorithm_name(MMAlgorithm algo);
/* Parse an algorithm name; returns 0 on success, -1 when unknown. */
extern int	mm_algorithm_parse(const char *name, MMAlgorithm *out);

/* auto measures the arrival rate over this many of the latest arrivals. */
#define MM_RATE_ARRIVALS 50

/*
 * auto (k = 2, the rating its only criterion) estimates where the next
 * arrivals' ratings are likely to lie from the ratings of at most
 * MM_DENSITY_ARRIVALS of the latest arrivals (MMConfig.recent), each
 * estimate over a run of MM_DENSITY_NEIGHBOURS + 1 of them around the
 * rating; with MM_DENSITY_NEIGHBOURS or fewer, ratings count as spread
 * evenly.
 */
#define MM_DENSITY_ARRIVALS 200
#define MM_DENSITY_NEIGHBOURS 40

/* The slices of the rating range MMDensity finds a rating's rank through. */
#define MM_DENSITY_SLICES 64

/*
 * auto's estimate of the density of MMConfig.recent: the estimate for each
 * rank a rating may take among the n recent ones (rho), its least and
 * greatest, and for each of MM_DENSITY_SLICES equal slices of the ratings'
 * range the first rank at or above its start.  Made once the steps with
 * one sample have looked up enough ratings to pay for it (lookups), then
 * kept for them.  The caller owns it and clears valid and lookups whenever
 * recent changes; the core fills the rest.
 */
typedef struct MMDensity
{
	bool		valid;
	int			lookups;		/* made without the table since cleared */
	int			n;
	double		rmin;
	double		rmax;
	double		dmin;
	double		dmax;
	double		slice_width;
	double		rho[MM_DENSITY_ARRIVALS + 1];
	int			slice[MM_DENSITY_SLICES + 1];
} MMDensity;

/*
 * The arrival rate (per second) that n arrival times show, ascending:
 * (n - 1) over their span, at most MM_RATE_MAX; 0 (unknown) for fewer
 * than MM_RATE_MIN, too few to tell a burst from a steady rate.  auto's
 * rate: the caller passes the latest MM_RATE_ARRIVALS.
 */
#define MM_RATE_MIN 10
#define MM_RATE_MAX 1e9
extern double mm_arrival_rate(const double *times, int n);

/* Periodic batch size n from eq. 6 for the configured k, max_wait and arrival_rate. */
extern int	mm_auto_batch(const MMConfig *cfg);
/* Multi-queue range count r from eq. 9 for the configured k, max_wait and arrival_rate. */
extern int	mm_auto_ranges(const MMConfig *cfg);

/*
 * multi_queue's ranges of every criterion (criteria.n + 1 entries): the
 * fixed ones as configured, the others (ranges 0 = auto) from eq. 9
 * generalised to D criteria (doc/algorithms.md).
 */
extern void mm_criteria_ranges(const MMConfig *cfg, int *ranges);

/* The cells of the criteria's fixed ranges: their product, "auto" counting 1. */
extern double mm_criteria_cells(const MMConfig *cfg);

/* The cost factors f_d of the criteria.n + 1 criteria (see MMCriteriaParams). */
extern void mm_criteria_factors(const MMConfig *cfg, double *f);

/* The cluster algorithm's decay factor after tau seconds of wait, in (0, 1]. */
extern double mm_cluster_decay(const MMConfig *cfg, double tau);

/* ----------------------------------------------------------------
 * Pool of waiting tickets and one matching step
 * ----------------------------------------------------------------
 */

typedef struct MMTicket
{
	int64_t		id;
	double		rating;			/* normalised to [0, 1] */
	double		arrival;		/* seconds */
	int32_t		group;			/* difference_wait: index into MMPool.groups, or -1;
								 * INT32_MIN is reserved (mm_pool_compact's mark) */
	int32_t		party;			/* premade number (>= 0) shared by its members, -1 solo:
								 * a party plays whole, in one team (compose.c; optimize
								 * forms its units itself) */
	int32_t		attr;			/* optimize: row of MMPool.ping, or -1 without ping data */
	int32_t		crow;			/* with criteria: row of MMPool.criteria */
} MMTicket;

/* A difference_wait provisional group. */
typedef struct MMGroup
{
	double		formed_at;		/* when the group got its current members */
	double		finalize_at;	/* when it becomes a match unless improved */
	double		q;				/* rating spread of its members: a step writes it; it
								 * does not read it, but the members' ratings */
} MMGroup;

/*
 * Two waiting tickets (ids, a < b) whose players met recently.  relation
 * (optimize): 0 when they were opponents in their previous match, 1 when
 * teammates; window ignores it.
 */
typedef struct MMMetPair
{
	int64_t		a;
	int64_t		b;
	int32_t		relation;
} MMMetPair;

/*
 * The waiting tickets of one queue, in arrival order (arrival, then id).
 * groups has room for ngroups_cap entries (ntickets is always enough).
 */
typedef struct MMPool
{
	MMTicket   *tickets;
	int			ntickets;
	MMGroup    *groups;
	int			ngroups;
	int			ngroups_cap;
	double		stepped_at;		/* set by mm_step: the time of its last step (optimize: a
								 * caller that rebuilds the pool sets its previous step's
								 * time, or -INFINITY, see doc/algorithms.md) */
	double		epoch;			/* absolute time of t = 0, for the recheck grid (window, cluster) */
	const MMMetPair *met;		/* window, optimize: pairs that met recently, sorted by (a, b);
								 * may be NULL */
	int			nmet;
	/*
	 * optimize: ping[attr * nregions + r] is a ticket's ping in ms to
	 * region r, NAN when unknown; rows are the caller's (a ticket's attr
	 * must name one).  The ping between two players is the least
	 * ping_i[r] + ping_j[r] over the regions both know.  May be NULL.
	 */
	const float *ping;
	int			nregions;
	/*
	 * With cfg->criteria.n > 0: criteria[crow * criteria.n + d - 1] is a
	 * ticket's criterion d, normalised to [0, 1]; ncrows rows.
	 */
	const double *criteria;
	int			ncrows;
	/*
	 * optimize, instead of ping (which is then ignored) when ping_start is
	 * not NULL: the pings as lists, so that memory is O(known pings) rather
	 * than rows x regions.  Row r (a ticket's attr, below nping_rows) knows
	 * the regions ping_region[ping_start[r] .. ping_start[r + 1]), ascending
	 * and below nregions, with the pings ping_ms[...] in ms.
	 */
	const int32_t *ping_start;
	const int32_t *ping_region;
	const float *ping_ms;
	int			nping_rows;
	/*
	 * Equal filters: key[crow] is a ticket's key (nkeys rows), and tickets
	 * of different keys never meet: a step runs the algorithm on each
	 * key's tickets apart.  NULL: one pool.
	 */
	const int32_t *key;
	int			nkeys;
	/*
	 * With key: key_rate[k] (nkey_rates entries) is the arrival rate of
	 * key k's players, which auto's step on that key's sub-pool uses in
	 * place of cfg->arrival_rate, as a queue of its own would measure it
	 * (the recent ratings, cfg->recent, stay the queue's).  NULL: every
	 * sub-pool uses cfg->arrival_rate.
	 */
	const double *key_rate;
	int			nkey_rates;
	/* With key_rate: each key's rate_last and rate_gaps (MMConfig); may be NULL */
	const double *key_rate_last;
	const int  *key_rate_gaps;
	/*
	 * Intersect filters: a ticket may play under any of several keys (a
	 * list of maps, of regions).  Row crow may play under the keys
	 * cand[cand_start[crow] .. cand_start[crow + 1]) (at least one, each
	 * below ncand_keys).  mm_step and mm_next_deadline first assign each
	 * ticket one of them (mm_filter_assign) into cand_key, which key must
	 * then be (nkeys = ncand_rows), and run as with key.  cand_count is
	 * scratch of ncand_keys zeros, left zeroed.  NULL cand: key as given.
	 */
	const int32_t *cand_start;
	const int32_t *cand;
	int			ncand_rows;
	int			ncand_keys;
	int32_t    *cand_key;
	int32_t    *cand_count;
	/*
	 * Filters that relax after a wait (optional_after), with cand: there
	 * are nfilters filters (at most MM_MAX_FILTER_BITS), key k has the
	 * value key_values[k * nfilters + f] of filter f (ids of any order),
	 * and a ticket that has waited relax_after[f] seconds (arrival +
	 * relax_after[f] <= now; INFINITY: never) may play under a key of
	 * another value of f, if it agrees with one of its candidates on every
	 * filter that has not relaxed.  NULL relax_after: none relaxes.
	 */
	int			nfilters;
	const int32_t *key_values;
	const double *relax_after;
	/*
	 * Block lists (an exclude filter): row crow is player player[crow] (ids
	 * of any numbering, nblock_rows rows), who never meets the players
	 * block[block_start[crow] .. block_start[crow + 1]) (ascending), nor
	 * one whose list names it.  mm_step holds out of the step the younger
	 * player of a blocked pair that a match would join (see step.c),
	 * marking it in held (scratch of nblock_rows entries, which
	 * mm_next_deadline reads); block_key is scratch of nblock_rows
	 * entries.  NULL block: no block lists.
	 */
	const int32_t *player;
	const int32_t *block_start;
	const int32_t *block;
	int			nblock_rows;
	int32_t    *block_key;
	uint8_t    *held;
	/*
	 * With cfg->roles.n > 0: roles[crow] (nrole_rows rows) is the mask of
	 * the roles the ticket's player can play (bit r for role r), not 0.
	 */
	const uint8_t *roles;
	int			nrole_rows;
	/*
	 * mm_simulate: the time of the next arrival.  A step need not find a
	 * deadline at or after it: MMResult.deadline is then horizon, which is
	 * all the simulator needs (it steps at the arrival then), and so may
	 * mm_next_deadline's (auto; fewer than k tickets of a key are told
	 * their timeout exactly).  0: none, the deadline is exact.
	 */
	double		horizon;
	/*
	 * mm_simulate with equal filters: key_due[k] (nkey_due entries) is the
	 * deadline that key k's sub-pool found at its last step, NAN when
	 * unknown.  A keyed step skips a sub-pool whose entry lies after now
	 * (nothing in it can act before then) and records each step's.  The
	 * owner sets an entry to NAN whenever anything but that key's own step
	 * changes its sub-pool or what its step reads (an arrival, the
	 * configuration).  NULL: every sub-pool steps.
	 */
	double	   *key_due;
	int			nkey_due;
	/*
	 * mm_simulate with equal filters, where a key's step reads nothing the
	 * other keys' arrivals change (auto, but for pairs on the rating
	 * alone, which read the queue's recent ratings): key_horizon[k]
	 * (nkey_due entries) is key k's next arrival (0: none), its sub-pool's
	 * horizon in place of the pool's.  NULL: every sub-pool has the pool's.
	 */
	const double *key_horizon;
	/*
	 * Set by a caller that knows every ticket's party is -1 (mm_simulate
	 * of a stream without parties): a step then does not look through the
	 * pool for one.  false: it looks.
	 */
	bool		solo;
	/*
	 * Set by a caller that changes the pool and its configuration only
	 * through the steps it runs and the arrivals it adds (mm_simulate):
	 * no ticket leaves and no parameter moves between two steps.  cluster's
	 * next deadline then passes over the recheck instants at which no two
	 * tickets can come within its threshold.  false (a live queue, whose
	 * tickets are cancelled and whose auto shift follows the clock): the
	 * next recheck instant, with k tickets waiting.
	 */
	bool		closed;
} MMPool;

/* Whether the players of pool rows a and b may not meet (block lists). */
extern bool mm_blocked(const MMPool *pool, int a, int b);

#define MM_MAX_FILTER_BITS 8

/*
 * With pool->cand: give each ticket of the pool, at time now, the key
 * among its candidates that the most tickets of the pool have among theirs
 * (the lowest among equals), into pool->cand_key[crow].  A ticket with
 * relaxed filters takes, among the keys some ticket of the pool has, the
 * one of most tickets that agrees with one of its candidates on the
 * filters that have not relaxed.  O(candidates of the pool), plus with
 * relaxed tickets sorting the pool's keys and O(keys x filters x
 * candidates) per relaxed ticket at worst.  MM_ERR_ARGUMENT for a row or
 * key out of range, or a row without one; MM_ERR_NOMEM.
 */
extern MMStatus mm_filter_assign(const MMPool *pool, double now);

/*
 * Whether pool row crow may play under key: it is among its candidates
 * (pool->cand; relaxed filters do not count), or its key (pool->key).
 */
extern bool mm_filter_may_play(const MMPool *pool, int crow, int32_t key);

/*
 * The filters (bit f for filter f) on which key's value is none of row
 * crow's: those the row's player waived to play under key.  0 without
 * relaxing filters.
 */
extern uint32_t mm_filter_waived(const MMPool *pool, int crow, int32_t key);

/*
 * The earliest instant after pool->stepped_at at which a waiting ticket's
 * filter relaxes, INFINITY when none will.
 */
extern double mm_filter_relax_deadline(const MMPool *pool);

/* The order of MMPool.met: by a, then b (for qsort). */
extern int	mm_met_pair_cmp(const void *l, const void *r);

/* The met pair of tickets with ids x and y (either order) in pool->met, or NULL. */
extern const MMMetPair *mm_met_pair_find(const MMPool *pool, int64_t x, int64_t y);

/* One match formed by a step. */
typedef struct MMMatch
{
	int			first;			/* index of its first member in MMResult.members */
	int			nmembers;		/* real tickets */
	int			bots;			/* computer players; nmembers + bots = k, except in a
								 * smaller match (min_players): no bots, nmembers < k */
	MMCost		cost;
} MMMatch;

/*
 * What a step decided.  The caller allocates every array with room for
 * pool->ntickets entries.  members and teams run parallel: members[i] is
 * an index into pool->tickets, teams[i] its 1-based team number.
 */
typedef struct MMResult
{
	MMMatch    *matches;
	int			nmatches;
	int		   *members;
	int		   *teams;
	int		   *expired;		/* indices into pool->tickets */
	int			nexpired;

	/*
	 * Set by mm_step: what mm_next_deadline gives for the pool, with the
	 * same horizon, once the tickets of this result are removed
	 * (mm_pool_compact) and nothing else changed, when the algorithm's step
	 * found it on the way (auto, without block lists, intersect or relaxing
	 * filters, parties and roles, or min_players); NAN otherwise.  With
	 * MMPool.key_horizon each key's sub-pool has its own horizon instead,
	 * so it may lie past the pool's.
	 */
	double		deadline;
} MMResult;

/*
 * Run the configured algorithm on the pool at time now.  Fills result;
 * for difference_wait also rewrites the pool's provisional groups (the
 * tickets' group fields and pool->groups) to the state after the step,
 * forgetting tickets that were matched or expired.  The pool's ticket
 * array itself is left in place: the caller removes matched and expired
 * tickets (mm_pool_compact does it).
 */
extern MMStatus mm_step(const MMConfig *cfg, MMPool *pool, double now,
						MMResult *result);

/*
 * The earliest time after which a step with no new arrivals would do
 * something (a timeout, a provisional group's finalisation, a window's
 * widening after the pool's last step), or INFINITY when nothing is
 * pending; with a horizon (MMPool.horizon), the horizon may stand for an
 * instant after it.
 */
extern double mm_next_deadline(const MMConfig *cfg, const MMPool *pool);

/*
 * Remove matched and expired tickets (those named in result) from the
 * pool, keeping arrival order and remapping group indices.
 */
extern void mm_pool_compact(MMPool *pool, const MMResult *result);

/*
 * Backfill: pick up to want tickets of pool for open places in a running
 * match whose fixed members' ratings span [lo, hi] (lo = INFINITY when
 * none are left): slot by slot the ticket that widens the span least (eq.
 * 1's spread over the completed game), the first in pool order among
 * equals, never one in a provisional group, nor a party's (a party
 * never backfills), nor one taken[] already marks, and with filters only tickets whose own values (lists included)
 * hold key's: relaxed filters do not apply to backfill.  Marks and writes the picked pool indices into
 * out; returns how many (fewer when the pool runs out).
 */
extern int	mm_backfill_pick(const MMPool *pool, bool *taken, double lo, double hi,
							 int32_t key, int want, int *out);

/*
 * With roles (cfg->roles.n > 0): the role of each member of res's
 * matches, parallel to res->members (roles_out[i] for res->members[i], a
 * role number below roles.n), each team filling no role above its places.
 * The teams are those of the step that decided res (mm_step keeps only
 * matches whose teams can be given roles).  MM_ERR_ARGUMENT when a team
 * cannot (a result of another configuration or pool).
 */
extern MMStatus mm_assign_roles(const MMConfig *cfg, const MMPool *pool,
								const MMResult *res, int *roles_out);

/*
 * Whether a party of n players with the role masks roles[0 .. n) (NULL
 * without roles) fits in one team: n <= team_size and, with roles, its
 * players can take n different places of one team.
 */
extern bool mm_party_fits(const MMConfig *cfg, int n, const uint8_t *roles);

/*
 * Split a match's members into cfg->teams teams of cfg->team_size,
 * minimising the spread of team rating sums (exact for small k).
 * ratings: the nmembers real players' ratings; bots fill the remaining
 * places.  Writes 1-based team numbers to teams_out.
 */
extern MMStatus mm_split_teams(const MMConfig *cfg, int nmembers,
							   const double *ratings, int *teams_out);

/*
 * optimize: the score in [0, 1] of one match of the n tickets
 * members[0 .. n) (indices into pool->tickets) with 1-based team numbers
 * teams[0 .. n), as a round scores it (doc/algorithms.md); NAN when an
 * argument is invalid (a team over team_size, an index out of the pool).
 */
extern double mm_optimize_match_score(const MMConfig *cfg, const MMPool *pool,
									  const int *members, const int *teams,
									  int n);

/*
 * optimize: hold one round at time now over the waiting tickets (at most
 * round_max of them, the oldest units first), whether or not one is due (mm_step holds them at the recheck instants and at
 * timeouts), and settle the timed-out tickets left over.  Fills res like
 * mm_step, teams included, members of a match in pool order.  score (may
 * be NULL) gets the round score, the mean score of the matches the search
 * formed (0 when none); climbs (may be NULL) the number of improving swaps
 * applied over all starts.
 */
extern MMStatus mm_optimize_round(const MMConfig *cfg, const MMPool *pool,
								  double now, MMResult *res, double *score,
								  int *climbs);

/* ----------------------------------------------------------------
 * Virtual-time simulation
 * ----------------------------------------------------------------
 */

/* One arrival of a simulated stream. */
typedef struct MMArrival
{
	int64_t		id;
	double		rating;			/* normalised to [0, 1] */
	double		arrival;		/* seconds */
} MMArrival;

/* Per-player outcome of a simulation, parallel to the arrivals. */
typedef struct MMOutcome
{
	int64_t		match_no;		/* 1-based match number, 0 when expired */
	int			team;			/* 1-based, 0 when expired */
	double		matched_at;		/* seconds; the expiry time when expired */
} MMOutcome;

/* Totals of a simulation. */
typedef struct MMSimSummary
{
	int64_t		players;
	int64_t		games;
	int64_t		bots;
	int64_t		expired;
	double		cost;
	double		criteria_cost;
	double		wait_cost;
	double		mean_wait;
	double		max_wait;
} MMSimSummary;

/*
 * What a stream tells of its arrivals besides MMArrival; every array is in
 * arrival order, one entry (or row) per arrival, and may be NULL.
 */
typedef struct MMStreamData
{
	const double *criteria;		/* cfg->criteria.n values per arrival, in [0, 1];
								 * required when cfg->criteria.n > 0 */
	const int32_t *party;		/* premade number (>= 0), -1 solo; members of a party
								 * arrive at the same time, at the party's rating
								 * (optimize: any time, each at its own), at most
								 * team_size of them */
	const float *ping;			/* optimize: nregions pings in ms per arrival
								 * (0 to 1e9, NAN unknown), as MMPool.ping */
	int			nregions;
	/*
	 * Backfill (not optimize): seconds (> 0) after a player's match
	 * forms, or after it joins one, at which it leaves the match; NAN:
	 * it stays.  A leaving player opens a backfill request for one place
	 * in its team, which expires after MM_SIM_BACKFILL_EXPIRES seconds.
	 */
	const double *leaves_after;
	/* equal filters: each arrival's key (as MMPool.key); NULL: one pool */
	const int32_t *key;
	/*
	 * intersect filters, instead of key: each arrival's candidate keys,
	 * as MMPool.cand (rows are arrivals); a step assigns them
	 */
	const int32_t *cand_start;
	const int32_t *cand;
	int			ncand_keys;
	/* filters that relax after a wait, as MMPool's (keys of cand) */
	int			nfilters;
	const int32_t *key_values;
	const double *relax_after;
	/* block lists, as MMPool's (rows are arrivals) */
	const int32_t *player;
	const int32_t *block_start;
	const int32_t *block;
	const uint8_t *roles;		/* with cfg->roles.n > 0: each arrival's role mask */
} MMStreamData;

/* Seconds a simulated backfill request stays open (backfill()'s default). */
#define MM_SIM_BACKFILL_EXPIRES 60.0

/*
 * Run the algorithm over n arrivals sorted by (arrival, id), deciding at
 * each arrival and at each deadline (mm_next_deadline) in between, exactly
 * as a step would live.  data (may be NULL) gives the arrivals' further
 * criteria, parties and pings.  outcomes (n entries, may be NULL) and
 * summary (may be NULL) are filled.  A stream with a party below -1, a
 * party larger than a team or a criterion outside [0, 1] on any row is
 * refused (MM_ERR_ARGUMENT) before the first step.
 */
extern MMStatus mm_simulate(const MMConfig *cfg, const MMArrival *arrivals,
							const MMStreamData *data, int n,
							MMOutcome *outcomes, MMSimSummary *summary);

/* ----------------------------------------------------------------
 * Offline optimum (Schlup's OPT, k = 2)
 * ----------------------------------------------------------------
 */

/*
 * The least total cost (eq. 1, k = 2, one criterion, f = 2) of any way to
 * split n arrivals, sorted by (arrival, id) as for mm_simulate, into pairs
 * and players who get a computer player.  The pair (i, j) with
 * arrival_i <= arrival_j is admissible when arrival_j - arrival_i <=
 * max_wait; it plays at arrival_j and costs
 * 2 |rating_i - rating_j| + (arrival_j - arrival_i) / max_wait.  A player
 * alone costs bot_cost: 3 when OPT gives the bot at arrival (q = 1: 2, own
 * wait 0, the bot's wait 1), 4 to give it at max_wait as the online
 * algorithms do.  bot_cost must lie in [0, 1e6].
 *
 * Solved exactly as a maximum-weight matching (Edmonds' blossom algorithm,
 * primal-dual) on weights 2 bot_cost - cost rounded to multiples of 2^-30,
 * so total_cost is within n * 2^-31 of the real optimum; see
 * doc/optimal.md.  partner (n entries, may be NULL) gets the index of each
 * player's partner, or -1 for a bot; total_cost (may be NULL) the cost of
 * that solution.  MM_ERR_ARGUMENT on bad input, MM_ERR_NOMEM when memory
 * (O(n + admissible pairs), about 40 bytes a pair) runs out or would pass
 * mm_memory_limit, MM_ERR_INTERRUPTED when mm_interrupt stops it.
 */
extern MMStatus mm_optimal_pairs(const MMArrival *arrivals, int n,
								 double max_wait, double bot_cost,
								 int *partner, double *total_cost);

#endif							/* MM_CORE_H */
