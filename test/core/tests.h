/*
 * tests.h
 *		The unit tests of the core, one declaration per test.
 */
#ifndef MM_TESTS_H
#define MM_TESTS_H

/* test_cost.c */
extern void test_cost_examples(void);
extern void test_cost_criteria(void);
extern void test_cost_invalid(void);
extern void test_config(void);

/* test_algorithms.c */
extern void test_greedy_arrival(void);
extern void test_window_thread(void);
extern void test_window_percentile(void);
extern void test_window_groups(void);
extern void test_window_deadline_skips(void);
extern void test_window_rematch(void);
extern void test_cluster_decay(void);
extern void test_cluster_deadline_skips(void);
extern void test_sim_cluster_skips(void);
extern void test_cluster_groups(void);
extern void test_greedy_timeout(void);
extern void test_periodic_batch(void);
extern void test_periodic_timeout(void);
extern void test_auto_params(void);
extern void test_split_teams(void);
extern void test_split_exact(void);
extern void test_split_large(void);
extern void test_multi_queue(void);
extern void test_multi_queue_phase1(void);
extern void test_diffwait_pairs(void);
extern void test_diffwait_newcomer_first(void);
extern void test_diffwait_due_rounding(void);
extern void test_diffwait_k3(void);
extern void test_diffwait_dissolve(void);
extern void test_next_deadline(void);
extern void test_pool_compact(void);
extern void test_step_invalid(void);

/* test_filters.c */
extern void test_filters_step(void);
extern void test_filters_equivalence(void);
extern void test_filters_auto_sample(void);
extern void test_filters_auto_dues(void);
extern void test_filters_cand_deadline(void);
extern void test_filters_nomem(void);
extern void test_filters_intersect_assign(void);
extern void test_filters_intersect_sim(void);
extern void test_filters_relax(void);
extern void test_filters_intersect_due(void);
extern void test_filters_exclude(void);
extern void test_filters_exclude_griefer(void);
extern void test_filters_relax_sim(void);
extern void test_filters_mixed_group(void);

/* test_backfill.c */
extern void test_backfill_pick(void);
extern void test_backfill_simulate(void);
extern void test_backfill_simulate_stream(void);

/* test_smaller.c */
extern void test_smaller_bots(void);
extern void test_smaller_expire(void);
extern void test_smaller_nearest(void);
extern void test_smaller_config(void);

/* test_auto.c */
extern void test_auto_rate(void);
extern void test_auto_instant(void);
extern void test_auto_rate_falls(void);
extern void test_auto_density(void);
extern void test_auto_recheck(void);
extern void test_auto_recent_config(void);
extern void test_auto_constants_check(void);
extern void test_auto_pair_pass(void);
extern void test_auto_passed_over(void);
extern void test_auto_pair_bounds(void);
extern void test_auto_density_table(void);
extern void test_auto_density_narrow(void);
extern void test_auto_step_deadline(void);
extern void test_auto_sorted_position(void);
extern void test_auto_timeout(void);
extern void test_auto_groups(void);
extern void test_auto_quality(void);

/* test_sim.c */
extern void test_sim_small(void);
extern void test_sim_invariants(void);
extern void test_sim_deterministic(void);
extern void test_sim_interrupt(void);
extern void test_sim_recent_window(void);
extern void test_sim_periodic_cost(void);
extern void test_sim_multi_queue_cost(void);
extern void test_sim_criteria_one_range(void);
extern void test_sim_criteria_cost(void);
extern void test_sim_optimize_stream_data(void);
extern void test_sim_rows_once(void);
extern void test_sim_idle_steps(void);
extern void test_sim_auto_sizes(void);
extern void test_sim_dw_burst(void);
extern void test_sim_dw_orders(void);
extern void test_dw_loaded_groups(void);
extern void test_pair_finish(void);

/* test_criteria.c */
extern void test_criteria_cost(void);
extern void test_criteria_multi_queue(void);
extern void test_criteria_auto_ranges(void);
extern void test_criteria_config(void);
extern void test_step_fuzz(void);

/* test_optimal.c */
extern void test_optimal_brute(void);
extern void test_optimal_window_dp(void);
extern void test_optimal_cases(void);
extern void test_optimal_invalid(void);
extern void test_optimal_large(void);
extern void test_optimal_vs_online(void);

/* test_patient.c */
extern void test_patient_waits(void);
extern void test_patient_balanced(void);
extern void test_patient_timeout(void);
extern void test_patient_config(void);
extern void test_patient_burst(void);
extern void test_step_bounds(void);

/* test_optimize.c */
extern void test_optimize_score(void);
extern void test_optimize_premades(void);
extern void test_optimize_regions(void);
extern void test_optimize_split(void);
extern void test_optimize_variation(void);
extern void test_optimize_parties(void);
extern void test_optimize_timeout(void);
extern void test_optimize_deterministic(void);
extern void test_optimize_config(void);
extern void test_optimize_deadline(void);

/* test_bounds.c */
extern void test_interrupt_steps(void);
extern void test_interrupt_split(void);
extern void test_interrupt_optimal(void);
extern void test_interrupt_optimal_dense(void);
extern void test_interrupt_optimize(void);
extern void test_interrupt_auto_falls(void);
extern void test_cluster_pass_cap(void);
extern void test_memory_limit(void);
extern void test_optimize_round_max(void);
extern void test_optimize_budget(void);
extern void test_optimize_memory(void);
extern void test_optimize_ping_lists(void);
extern void test_optimize_round_max_burst(void);

/* test_compose.c */
extern void test_compose_parties(void);
extern void test_compose_roles(void);
extern void test_compose_complete(void);
extern void test_compose_roles_wait(void);
extern void test_compose_retry_large_clock(void);
extern void test_compose_config(void);
extern void test_compose_sim(void);
extern void test_compose_large_roles(void);
extern void test_compose_not_stuck(void);

#endif							/* MM_TESTS_H */
