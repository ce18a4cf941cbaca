/*
 * settings.c
 *		The module's settings (GUCs): which databases the background workers
 *		serve, how many workers each database has, how many queues their
 *		shared schedule holds, how long they nap, whether they run, the
 *		core's memory limit, and the test-only hold of a tick before it
 *		commits.
 */
#include "matchmaker.h"

#include "miscadmin.h"
#include "utils/guc.h"

char	   *mm_database = NULL;
int			mm_retention = 7 * 24 * 3600;
int			mm_naptime = 1000;
int			mm_arrival_delay = 5;
bool		mm_enabled = true;
char	   *mm_test_hold_tick = NULL;
int			mm_test_pause_ticket = 0;
int			mm_workers_per_database = 2;
int			mm_max_queues = 1024;
int			mm_core_memory_limit = 1024 * 1024;	/* kB */

/* The core's allocator refuses to hold more than the setting. */
static void
assign_core_memory_limit(int newval, void *extra)
{
	mm_memory_limit = (size_t) newval * 1024;
}

/*
 * Define the settings.  matchmaker.database, workers_per_database and
 * max_queues are server-start settings, which can only be defined while
 * the library is preloaded (they size shared memory).
 */
void
mm_settings_init(void)
{
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomStringVariable("matchmaker.database",
								   "Databases whose queues the background workers run (comma-separated).",
								   NULL, &mm_database, "postgres",
								   PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("matchmaker.workers_per_database",
								"Background workers that run each database's queues.",
								"Each runs one queue at a time; while one is inside a long tick, the others run the other queues.",
								&mm_workers_per_database, 2, 1, MM_MAX_WORKERS,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
		DefineCustomIntVariable("matchmaker.max_queues",
								"Most queues per database that the background workers run.",
								"The workers of a database share their queues' schedule in shared memory of this many entries.",
								&mm_max_queues, 1024, 16, 1000000,
								PGC_POSTMASTER, 0, NULL, NULL, NULL);
	}
	DefineCustomIntVariable("matchmaker.naptime",
							"Longest time the worker sleeps before it looks at the queues again.",
							"Each queue also runs when its tick interval is due and when a ticket arrives or leaves.",
							&mm_naptime, 1000, 10, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("matchmaker.retention",
							"How long ended tickets and matches are kept before the workers remove them.",
							"0 keeps them forever.  Removed in batches of at most 1000 rows per queue and transaction.",
							&mm_retention, 7 * 24 * 3600, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("matchmaker.arrival_delay",
							"Longest time a busy queue's run waits after arrivals woke it, so that one run serves more of them.",
							"A busy queue's runs that arrivals wake start at least ten times the last run's duration apart, at most this long after the previous run began; a queue is busy while its runs begin within twice this of each other.  Timers are never delayed.  0 runs at every wake-up.",
							&mm_arrival_delay, 5, 0, 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomBoolVariable("matchmaker.enabled",
							 "Whether the background worker runs queues.",
							 NULL, &mm_enabled, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("matchmaker.test_hold_tick",
							   "For tests only: a tick of this queue that makes matches waits before it commits.",
							   "The tick waits, its matches written and not committed, until its process is cancelled, terminated or killed.",
							   &mm_test_hold_tick, "",
							   PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("matchmaker.test_pause_ticket",
							"For tests only: a tick that writes this ticket without locking it first pauses between its check and its update; an enqueue that draws this id, between its check for the player's waiting ticket and its insert.",
							"It waits there until it can take the advisory lock on the ticket's id (pg_advisory_lock(id) held by another session).  0 never pauses.",
							&mm_test_pause_ticket, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL, NULL, NULL);
	DefineCustomIntVariable("matchmaker.core_memory_limit",
							"Most memory one matchmaking computation (a tick's step, a simulation, the offline optimum) may hold outside PostgreSQL's memory contexts.",
							"A computation that would need more fails with an out-of-memory error naming this setting.",
							&mm_core_memory_limit, 1024 * 1024, 1024, MAX_KILOBYTES,
							PGC_SUSET, GUC_UNIT_KB, NULL, assign_core_memory_limit, NULL);
	MarkGUCPrefixReserved("matchmaker");
}
