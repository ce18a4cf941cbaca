/*
 * mm_internal.h
 *		Declarations shared between the core's own files; not part of the
 *		interface that mm_core.h gives the PostgreSQL side.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include "mm_core.h"

/*
 * Whether a ticket has waited max_wait at time now.  Written as the
 * deadline mm_next_deadline reports, so that a step at that deadline sees
 * the timeout whatever the rounding.
 */
static inline int
mm_timed_out(const MMTicket *t, double now, double max_wait)
{
	return now >= t->arrival + max_wait;
}

/* Largest k mm_config_check accepts; bounds the stack scratch. */
#define MM_MAX_K			1000

/* Largest value mm_auto_batch and mm_auto_ranges return. */
#define MM_AUTO_MAX			1e9

/* ----------------------------------------------------------------
 * Bounds (limits.c): memory and interrupts
 * ----------------------------------------------------------------
 */

/*
 * The core's allocator: as malloc, calloc, realloc and free, but a request
 * that would take the core's live memory (mm_memory_used) above
 * mm_memory_limit fails (NULL), as does a size that overflows.  Every
 * block the core allocates comes from here and goes back through mm_free.
 */
extern void *mm_malloc(size_t size);
extern void *mm_calloc(size_t n, size_t size);
extern void *mm_malloc_array(size_t n, size_t size);
extern void *mm_realloc(void *p, size_t size);
extern void mm_free(void *p);

/* How many polls go by between two calls of mm_interrupt. */
#define MM_POLL_EVERY		64

extern unsigned int mm_poll_count;

/*
 * Whether mm_interrupt asks the running computation to stop.  Cheap: long
 * loops call it once per iteration, and it calls the hook once every
 * MM_POLL_EVERY polls.  A computation that sees 1 releases its memory and
 * returns MM_ERR_INTERRUPTED.
 */
static inline int
mm_interrupted(void)
{
	if (mm_interrupt == NULL || ++mm_poll_count % MM_POLL_EVERY != 0)
		return 0;
	return mm_interrupt() != 0;
}

/* ----------------------------------------------------------------
 * Helpers every algorithm may use; they call no algorithm.
 * ----------------------------------------------------------------
 */

/*
 * config.c: check the shared fields, and those every configuration keeps in
 * their domain whatever its algorithm; mm_config_check (step.c) adds the
 * algorithm's own check from the table of algorithms.
 */
extern MMStatus mm_config_check_shared(const MMConfig *cfg);

/*
 * teams.c: mm_split_teams on a configuration the caller has checked (a
 * step's); mm_split_teams (step.c) checks it first.
 */
extern MMStatus mm_teams_split(const MMConfig *cfg, int nmembers,
							   const double *ratings, int *teams_out);

/*
 * teams.c: split a smaller match (n < k real players and no computer
 * player, see smaller.c) into teams whose sizes differ by at most one.
 */
extern MMStatus mm_teams_split_even(const MMConfig *cfg, int n,
									const double *ratings, int *teams_out);

/*
 * smaller.c: after a step, turn matches with computer players and
 * expiries into smaller matches of real players (params.min_players),
 * when mm_smaller_active says the configuration asks for them.
 */
extern bool mm_smaller_active(const MMConfig *cfg);
extern MMStatus mm_smaller_matches(const MMConfig *cfg, MMPool *pool, MMResult *res);

/*
 * compose.c: parties and roles.  Whether a step of cfg on pool needs them
 * (roles, or a party outside optimize); the rewriting of a step's decision
 * so that parties stay whole and every team's roles fill (after smaller
 * matches, before finish_matches); and the team split of a match it
 * formed, mem[0 .. n) its members (pool indices), 1-based teams into tm.
 */
#define MM_COMPOSE_RETRY 50
extern bool mm_compose_active(const MMConfig *cfg, const MMPool *pool);
extern MMStatus mm_compose(const MMConfig *cfg, MMPool *pool, double now, MMResult *res);
extern MMStatus mm_compose_split(const MMConfig *cfg, const MMPool *pool, const int *mem,
								 int n, int *tm);

/* match.c: order ints ascending (for qsort). */
extern int	mm_int_cmp(const void *a, const void *b);

/* match.c: append a match of the n tickets idx[0 .. n) and k - n computer players. */
extern void mm_add_match(MMResult *res, const int *idx, int n, int k);

/* match.c: append a match of the n consecutive tickets from start (k - n bots). */
extern void mm_add_match_range(MMResult *res, int start, int n, int k);

/*
 * match.c: what happens to the tickets from start on (fewer than k, the
 * oldest timed out) when nothing better can be done: with bots they all
 * play one game completed with computer players; with expire the
 * timed-out ones (a prefix, the pool being in arrival order) expire and
 * the rest wait.
 */
extern void mm_timeout_rest(const MMConfig *cfg, const MMPool *pool,
							double now, MMResult *res, int start);

/*
 * The recheck grid (recheck.c): instants that are whole multiples of
 * cfg->recheck on the absolute clock (pool->epoch + t).  The number of
 * instants in (arrival, now], and the first instant after the pool's last
 * step (INFINITY beyond the clock's precision).
 */
extern double mm_recheck_count(const MMConfig *cfg, const MMPool *pool,
							   double arrival, double now);
extern double mm_recheck_next(const MMConfig *cfg, const MMPool *pool);
/* The m-th grid instant after t (m >= 1), as mm_recheck_count counts them. */
extern double mm_recheck_after(const MMConfig *cfg, const MMPool *pool,
							   double t, double m);
/* The last grid instant at or before t. */
extern double mm_recheck_last(const MMConfig *cfg, const MMPool *pool, double t);

/* ----------------------------------------------------------------
 * The algorithms, one file each, as step.c's table lists them
 * ----------------------------------------------------------------
 */

/*
 * Decide one step at time now; prev is the time of the pool's previous
 * step.  A step only fills in the membership of matches and the expiries
 * (mm_step adds teams and costs; optimize also writes the teams).  Only
 * difference_wait writes to the pool: it rewrites the provisional groups.
 */
typedef MMStatus (*MMStepFn) (const MMConfig *cfg, MMPool *pool, double prev,
							  double now, MMResult *result);

/*
 * The earliest time after which a step with no new arrivals would act; the
 * pool holds at least one ticket.
 */
typedef double (*MMDeadlineFn) (const MMConfig *cfg, const MMPool *pool);

/*
 * Whether the algorithm's step at now on pool (at least one ticket) would
 * decide nothing, by the test its step begins with: the step itself
 * returns at once when this holds.
 */
typedef bool (*MMIdleFn) (const MMConfig *cfg, const MMPool *pool, double now);

/*
 * Whether a pool is plain: one key, without parties (pool->solo),
 * intersect filters, block lists, roles or smaller matches.  None of
 * these changes during a simulation, which asks once.
 */
extern bool mm_pool_plain(const MMConfig *cfg, const MMPool *pool);

/*
 * On a plain pool: whether a whole step (mm_step) at now would decide
 * nothing and change nothing but pool->stepped_at, as the algorithm's idle
 * test tells (greedy, periodic, multi_queue); then *deadline is what
 * mm_next_deadline would give after the step.  mm_simulate skips such
 * steps at arrivals.
 */
extern bool mm_step_idle(const MMConfig *cfg, const MMPool *pool, double now,
						 double *deadline);

/* On a plain pool: mm_next_deadline, without its other cases. */
extern double mm_plain_deadline(const MMConfig *cfg, const MMPool *pool);

/* The instant past which a step need not tell its deadline exactly (MMPool.horizon). */
extern double mm_pool_horizon(const MMPool *pool);

/*
 * Equal filters (filters.c).  A step of one key's sub-pool: the
 * algorithm's step, then what mm_step adds (smaller matches, teams,
 * costs).
 */
typedef MMStatus (*MMPartStepFn) (const MMConfig *cfg, MMPool *pool, double prev,
								  double now, MMResult *result);

/* Whether the pool's tickets have more than one key (pool->key). */
extern bool mm_pool_keyed(const MMPool *pool);

/*
 * Run part_step on each key's sub-pool, ascending by key, and merge what
 * they decided into result (pool indices) and their provisional groups
 * into the pool.
 */
extern MMStatus mm_keyed_step(const MMConfig *cfg, MMPool *pool, double prev,
							  double now, MMResult *result, MMPartStepFn part_step);

/*
 * The first place in ascending v[0 .. n) whose value is not below x.  The
 * answer lies in [base, base + n]; each round halves n by a comparison
 * whose outcome only moves base, without a branch to mispredict; inline,
 * as auto looks up ratings' places among the recent ones several times per
 * pair.
 */
static inline int
mm_sorted_position(const double *v, int n, double x)
{
	const double *base = v;

	if (n <= 0)
		return 0;
	while (n > 1)
	{
		int			half = n / 2;

		base = base[half] < x ? base + half : base;
		n -= half;
	}
	return (int) (base - v) + (*base < x);
}

/*
 * The simulator's window of auto's recent ratings: put x into the
 * ascending v[0 .. *n); a full window (MM_DENSITY_ARRIVALS) gives up old,
 * a value it holds.
 */
extern void mm_window_push(double *v, int *n, double x, double old);

/*
 * The configuration for a pool of one key: cfg, or a copy in *local with
 * the key's arrival rate (pool->key_rate) when the pool has it.
 */
extern const MMConfig *mm_key_config(const MMConfig *cfg, const MMPool *pool,
									 MMConfig *local);

/*
 * mm_step for mm_simulate, which checked the configuration with
 * mm_config_check and the rows of its stream once (mm_check_arrivals,
 * sim_check_criteria, sim_check_parties), so that a step checks only
 * what its instant can break: that every ticket's wait is finite.  The
 * pool's tickets must be the stream's, in its order.  With intersect
 * filters and no block lists, *cand_deadline gets the earliest deadline
 * the sub-pools' steps told (NAN when one did not, or otherwise): it is
 * mm_next_deadline's as long as assigning the keys again (mm_filter_assign
 * at the step's instant) gives every ticket left the key it had.
 */
extern MMStatus mm_step_checked(const MMConfig *cfg, MMPool *pool, double now,
								MMResult *result, double *cand_deadline);

/*
 * mm_simulate with intersect filters: when set, the next deadline after
 * each step is always mm_next_deadline's, not the steps' own where every
 * ticket left keeps its key; the two decide alike, and the unit tests
 * compare them.  Never set outside them.
 */
extern bool mm_sim_exact_cand_deadline;

/* A step over a whole pool (keyed or not), as mm_step runs it. */
typedef MMStatus (*MMRunFn) (const MMConfig *cfg, MMPool *pool, double prev,
							 double now, MMResult *result);

/* Block lists (exclude.c): the rows are usable (MM_OK) or not. */
extern MMStatus mm_exclude_check(const MMPool *pool);

/* Block lists: run until no match holds a blocked pair (exclude.c). */
extern MMStatus mm_exclude_step(const MMConfig *cfg, MMPool *pool, double prev,
								double now, MMResult *res, MMRunFn run);

/* Block lists: deadline over the keys of the last step's held-out tickets. */
extern double mm_exclude_deadline(const MMConfig *cfg, const MMPool *pool,
								  MMDeadlineFn deadline);

/* The earliest of deadline over the key's sub-pools. */
extern double mm_keyed_deadline(const MMConfig *cfg, const MMPool *pool,
								MMDeadlineFn deadline);

/* An algorithm's check of its own parameters: MM_ERR_ARGUMENT when one is out of its domain. */
typedef MMStatus (*MMCheckFn) (const MMConfig *cfg);

/*
 * The met pairs (pool->met) of two distinct waiting tickets, as pool
 * indices: pair c is (ends[2c], ends[2c + 1]), from pool->met[which[c]]
 * (which may be NULL); ends holds 2 * nmet entries.  Returns the count, or
 * -1 when memory runs short (match.c).
 */
extern int	mm_met_pair_tickets(const MMPool *pool, int *ends, int *which);

/* The oldest ticket's timeout (match.c): greedy, periodic and multi_queue. */
extern double mm_timeout_deadline(const MMConfig *cfg, const MMPool *pool);

/* The oldest timeout or the next recheck instant (recheck.c): cluster and optimize. */
extern double mm_recheck_deadline(const MMConfig *cfg, const MMPool *pool);

extern MMStatus mm_greedy_step(const MMConfig *cfg, MMPool *pool,
							   double prev, double now, MMResult *result);
extern bool mm_greedy_idle(const MMConfig *cfg, const MMPool *pool, double now);
extern MMStatus mm_periodic_step(const MMConfig *cfg, MMPool *pool,
								 double prev, double now, MMResult *result);
extern bool mm_periodic_idle(const MMConfig *cfg, const MMPool *pool, double now);
extern MMStatus mm_multi_queue_step(const MMConfig *cfg, MMPool *pool,
									double prev, double now, MMResult *result);
extern bool mm_multi_queue_idle(const MMConfig *cfg, const MMPool *pool, double now);

extern MMStatus mm_difference_wait_step(const MMConfig *cfg, MMPool *pool,
										double prev, double now,
										MMResult *result);
extern double mm_difference_wait_deadline(const MMConfig *cfg,
										  const MMPool *pool);

/* window: the oldest timeout, or the next time a ticket's window widens. */
extern MMStatus mm_window_step(const MMConfig *cfg, MMPool *pool,
							   double prev, double now, MMResult *result);
extern double mm_window_deadline(const MMConfig *cfg, const MMPool *pool);
extern MMStatus mm_window_check(const MMConfig *cfg);

extern MMStatus mm_cluster_step(const MMConfig *cfg, MMPool *pool,
								double prev, double now, MMResult *result);
extern MMStatus mm_cluster_check(const MMConfig *cfg);
/* cluster's next deadline (cluster.c). */
extern double mm_cluster_deadline(const MMConfig *cfg, const MMPool *pool);

/*
 * When set, cluster's next deadline is mm_recheck_deadline's on every
 * pool, closed ones included (MMPool.closed); the two decide alike, and
 * the unit tests compare them.  Never set outside them.
 */
extern bool mm_cluster_every_recheck;

/*
 * optimize: a round is held when a ticket has timed out, or when a recheck
 * instant lies in (prev, now] at which k tickets waited.
 */
extern MMStatus mm_optimize_step(const MMConfig *cfg, MMPool *pool,
								 double prev, double now, MMResult *result);
extern MMStatus mm_optimize_check(const MMConfig *cfg);

/*
 * auto: a group is committed at the first instant its spread cost is
 * covered by its members' values; the deadline is the earliest such
 * instant or the oldest timeout.
 */
extern MMStatus mm_auto_step(const MMConfig *cfg, MMPool *pool,
							 double prev, double now, MMResult *result);
extern double mm_auto_deadline(const MMConfig *cfg, const MMPool *pool);
extern MMStatus mm_auto_check(const MMConfig *cfg);

/*
 * difference_wait: when set, a step always puts the pool in rating order
 * and scans it for each candidate, where without it fewer than k tickets
 * ungrouped weigh every group (improve_only) and none ungrouped skip the
 * order; the two decide alike, and the unit tests compare them.  Never
 * set outside them.
 */
extern bool mm_dw_always_sort;

/*
 * auto, k = 2: when set, a step's passes collect and sort every eligible
 * pair, as for groups, instead of merging each ticket's pairs as it goes;
 * the two decide alike, and the unit tests compare them.  Never set
 * outside them.
 */
extern bool mm_auto_collect_all;

/*
 * auto, k = 2 with the rating alone: when set, every pair within reach has
 * its instant computed, none is passed over on bounds of its densities
 * (myopic_earliest); the two decide alike, and the unit tests compare them.
 * Never set outside them.
 */
extern bool mm_auto_exact_pairs;

/*
 * mm_simulate, auto with equal filters: when set, every key's sub-pool
 * steps again at every arrival, with the next arrival of any key for
 * its horizon (without it, only where the recent ratings an arrival
 * changes matter: mm_simulate, sim_key_horizons); the two decide alike,
 * and the unit tests compare them.  Never set outside them.
 */
extern bool mm_sim_step_every_key;

/*
 * For the unit tests: when above 0, the allocation that counts it down to
 * 0 fails (as if the memory limit refused it).  Never set outside them.
 */
extern int	mm_fail_allocation;

/*
 * auto, for the unit tests: the pairs of pool whose instant comes before a
 * bound the pruning takes for no later (none, when the bounds hold).
 */
extern int	mm_auto_bound_violations(const MMConfig *cfg, const MMPool *pool, int *checked);

/*
 * optimize: the oldest timeout or the next round instant; when a round
 * left timed-out tickets waiting (more than round_max of them), at once:
 * the first representable time after the pool's last step.
 */
extern double mm_optimize_deadline(const MMConfig *cfg, const MMPool *pool);

/*
 * mm_optimize_round with every climb (the first start's and each
 * restart's) stopped after max_swaps improving swaps (< 0: no limit, 0:
 * the starts as they are).  For the benchmark.
 */
extern MMStatus mm_optimize_search(const MMConfig *cfg, const MMPool *pool,
								   double now, MMResult *res, double *score,
								   int *climbs, int max_swaps);

/*
 * Check an arrival stream (arrivals.c): finite times, ratings in [0, 1],
 * sorted by (arrival, id).  MM_ERR_ARGUMENT otherwise.
 */
extern MMStatus mm_check_arrivals(const MMArrival *arrivals, int n);

/* mm_arrival_rate of n arrivals (at least MM_RATE_MIN) from first to last (arrivals.c). */
extern double mm_arrival_rate_span(double first, double last, int n);

/* mm_arrival_rate of a stream's n arrivals from arrivals[0] (arrivals.c). */
extern double mm_arrival_rate_of(const MMArrival *arrivals, int n);

#endif							/* MM_INTERNAL_H */
