/*
 * test_main.c
 *		Runs every unit test of the core and prints "N passed, N failed".
 *
 * Usage: test_core [name-substring]
 */
#include "mm_test.h"
#include "tests.h"

#include <string.h>

int			mm_test_failed;

static const MMTestCase tests[] = {
	{"cost_examples", test_cost_examples},
	{"cost_criteria", test_cost_criteria},
	{"cost_invalid", test_cost_invalid},
	{"config", test_config},
	{"greedy_arrival", test_greedy_arrival},
	{"greedy_timeout", test_greedy_timeout},
	{"periodic_batch", test_periodic_batch},
	{"periodic_timeout", test_periodic_timeout},
	{"auto_params", test_auto_params},
	{"split_teams", test_split_teams},
	{"split_exact", test_split_exact},
	{"split_large", test_split_large},
	{"multi_queue", test_multi_queue},
	{"multi_queue_phase1", test_multi_queue_phase1},
	{"diffwait_pairs", test_diffwait_pairs},
	{"diffwait_newcomer_first", test_diffwait_newcomer_first},
	{"diffwait_due_rounding", test_diffwait_due_rounding},
	{"diffwait_k3", test_diffwait_k3},
	{"diffwait_dissolve", test_diffwait_dissolve},
	{"next_deadline", test_next_deadline},
	{"window_thread", test_window_thread},
	{"window_percentile", test_window_percentile},
	{"window_groups", test_window_groups},
	{"window_deadline_skips", test_window_deadline_skips},
	{"window_rematch", test_window_rematch},
	{"cluster_decay", test_cluster_decay},
	{"cluster_groups", test_cluster_groups},
	{"cluster_deadline_skips", test_cluster_deadline_skips},
	{"pool_compact", test_pool_compact},
	{"step_invalid", test_step_invalid},
	{"auto_rate", test_auto_rate},
	{"auto_instant", test_auto_instant},
	{"auto_rate_falls", test_auto_rate_falls},
	{"auto_density", test_auto_density},
	{"auto_recheck", test_auto_recheck},
	{"auto_recent_config", test_auto_recent_config},
	{"auto_constants_check", test_auto_constants_check},
	{"auto_density_table", test_auto_density_table},
	{"auto_density_narrow", test_auto_density_narrow},
	{"auto_step_deadline", test_auto_step_deadline},
	{"auto_sorted_position", test_auto_sorted_position},
	{"auto_timeout", test_auto_timeout},
	{"auto_groups", test_auto_groups},
	{"auto_pair_pass", test_auto_pair_pass},
	{"auto_passed_over", test_auto_passed_over},
	{"auto_pair_bounds", test_auto_pair_bounds},
	{"auto_quality", test_auto_quality},
	{"sim_small", test_sim_small},
	{"sim_invariants", test_sim_invariants},
	{"sim_deterministic", test_sim_deterministic},
	{"sim_interrupt", test_sim_interrupt},
	{"sim_recent_window", test_sim_recent_window},
	{"sim_periodic_cost", test_sim_periodic_cost},
	{"sim_multi_queue_cost", test_sim_multi_queue_cost},
	{"criteria_cost", test_criteria_cost},
	{"criteria_multi_queue", test_criteria_multi_queue},
	{"criteria_auto_ranges", test_criteria_auto_ranges},
	{"criteria_config", test_criteria_config},
	{"sim_criteria_one_range", test_sim_criteria_one_range},
	{"sim_criteria_cost", test_sim_criteria_cost},
	{"sim_optimize_stream_data", test_sim_optimize_stream_data},
	{"sim_rows_once", test_sim_rows_once},
	{"sim_idle_steps", test_sim_idle_steps},
	{"sim_auto_sizes", test_sim_auto_sizes},
	{"sim_dw_burst", test_sim_dw_burst},
	{"sim_dw_orders", test_sim_dw_orders},
	{"sim_cluster_skips", test_sim_cluster_skips},
	{"dw_loaded_groups", test_dw_loaded_groups},
	{"pair_finish", test_pair_finish},
	{"step_fuzz", test_step_fuzz},
	{"optimal_brute", test_optimal_brute},
	{"optimal_window_dp", test_optimal_window_dp},
	{"optimal_cases", test_optimal_cases},
	{"optimal_invalid", test_optimal_invalid},
	{"optimal_large", test_optimal_large},
	{"optimal_vs_online", test_optimal_vs_online},
	{"patient_waits", test_patient_waits},
	{"patient_balanced", test_patient_balanced},
	{"patient_timeout", test_patient_timeout},
	{"patient_config", test_patient_config},
	{"patient_burst", test_patient_burst},
	{"step_bounds", test_step_bounds},
	{"optimize_score", test_optimize_score},
	{"optimize_premades", test_optimize_premades},
	{"optimize_regions", test_optimize_regions},
	{"optimize_split", test_optimize_split},
	{"optimize_variation", test_optimize_variation},
	{"optimize_parties", test_optimize_parties},
	{"optimize_timeout", test_optimize_timeout},
	{"optimize_deterministic", test_optimize_deterministic},
	{"optimize_config", test_optimize_config},
	{"optimize_deadline", test_optimize_deadline},
	{"interrupt_steps", test_interrupt_steps},
	{"interrupt_split", test_interrupt_split},
	{"interrupt_optimal", test_interrupt_optimal},
	{"interrupt_optimal_dense", test_interrupt_optimal_dense},
	{"interrupt_optimize", test_interrupt_optimize},
	{"interrupt_auto_falls", test_interrupt_auto_falls},
	{"cluster_pass_cap", test_cluster_pass_cap},
	{"memory_limit", test_memory_limit},
	{"optimize_round_max", test_optimize_round_max},
	{"optimize_budget", test_optimize_budget},
	{"optimize_memory", test_optimize_memory},
	{"optimize_ping_lists", test_optimize_ping_lists},
	{"optimize_round_max_burst", test_optimize_round_max_burst},
	{"compose_parties", test_compose_parties},
	{"compose_roles", test_compose_roles},
	{"compose_complete", test_compose_complete},
	{"compose_roles_wait", test_compose_roles_wait},
	{"compose_retry_large_clock", test_compose_retry_large_clock},
	{"compose_config", test_compose_config},
	{"compose_sim", test_compose_sim},
	{"compose_large_roles", test_compose_large_roles},
	{"compose_not_stuck", test_compose_not_stuck},
	{"filters_step", test_filters_step},
	{"filters_equivalence", test_filters_equivalence},
	{"filters_auto_sample", test_filters_auto_sample},
	{"filters_auto_dues", test_filters_auto_dues},
	{"filters_cand_deadline", test_filters_cand_deadline},
	{"filters_nomem", test_filters_nomem},
	{"filters_mixed_group", test_filters_mixed_group},
	{"filters_intersect_assign", test_filters_intersect_assign},
	{"filters_intersect_sim", test_filters_intersect_sim},
	{"filters_relax", test_filters_relax},
	{"filters_intersect_due", test_filters_intersect_due},
	{"filters_exclude", test_filters_exclude},
	{"filters_exclude_griefer", test_filters_exclude_griefer},
	{"filters_relax_sim", test_filters_relax_sim},
	{"backfill_pick", test_backfill_pick},
	{"backfill_simulate", test_backfill_simulate},
	{"backfill_simulate_stream", test_backfill_simulate_stream},
	{"smaller_bots", test_smaller_bots},
	{"smaller_expire", test_smaller_expire},
	{"smaller_nearest", test_smaller_nearest},
	{"smaller_config", test_smaller_config},
};

int
main(int argc, char **argv)
{
	int			passed = 0;
	int			failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
	{
		if (argc > 1 && strstr(tests[i].name, argv[1]) == NULL)
			continue;
		mm_test_failed = 0;
		tests[i].fn();
		printf("%s %s\n", mm_test_failed ? "FAIL" : "ok  ", tests[i].name);
		if (mm_test_failed)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
