/*
 * schedule.h
 *		The shared memory of the workers: for each database of
 *		matchmaker.database, its workers and the schedule of its queues, and
 *		the wake-ups that committing enqueues and cancels hand them.
 *		schedule.c owns it; launcher.c and worker.c read and write it under
 *		each database's lock.
 */
#ifndef MATCHMAKER_SCHEDULE_H
#define MATCHMAKER_SCHEDULE_H

#include "matchmaker.h"

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"

#define MM_WAKE_WORDS		32	/* 1024 bits of queue-name hashes */
#define MM_WAKE_BITS		(MM_WAKE_WORDS * 32)

/* the bytes of a failed run's message a queue's slot keeps, its end included */
#define MM_ERROR_LEN 128

/* One queue of a database's shared schedule; name[0] == '\0': a free entry. */
typedef struct MMQueueSlot
{
	char		name[NAMEDATALEN];
	double		tick;			/* seconds */
	TimestampTz last_run;		/* when it ran last (0: never) */
	TimestampTz next_run;		/* due time of its next timer tick */
	int			failures;		/* its last runs that failed in a row (worker.c) */
	TransactionId row_xmin;		/* its row's xmin when the schedule last read it */
	TimestampTz created_at;		/* its row's created_at then: another for a queue made anew */
	int			need_arrivals;	/* from its last tick: arrivals before an arrival wake-up matters */
	uint64		arrivals_base;	/* the arrival counter of its name hash when it last ran */
	uint32		wake_bit;		/* its name hash in the wake sets (mm_wake_bit) */
	int			running;		/* the worker running it, -1 when none */
	bool		woken;			/* an enqueue or cancel asked for a run */
	bool		busy;			/* its last run began soon after the one before (worker.c) */
	bool		seen;			/* still in matchmaker.queues (during a refresh) */
	/* the last run, for matchmaker.queue_stats (stats.c) */
	TimestampTz last_start;		/* when it began (0: never) */
	double		last_ms;		/* how long it took */
	double		last_lag_ms;	/* how late it began after its timer was due */
	TimestampTz purge_at;		/* when its ended rows are next removed (retention.c) */
	/* its latest failed run, for matchmaker.worker_queues (worker.c) */
	TimestampTz last_error_at;	/* when it failed (0: no failure since it joined the schedule) */
	char		last_error[MM_ERROR_LEN];	/* the error's message, cut at a character boundary */
} MMQueueSlot;

/*
 * One worker process of a database.  While it sleeps until a busy queue's
 * postponed run (matchmaker.arrival_delay), armed_until is when it wakes
 * by itself (0: not armed) and armed the name hashes of those queues: an
 * arrival or cancel of such a hash sets its wake bit but sets no latch,
 * for that worker reads the bits when it wakes, at most arrival_delay
 * later.  While matchmaker.enabled is off it is armed for every hash until
 * its next wake-up (the reload that turns it on wakes it).  The worker
 * writes armed before armed_until and clears armed_until when it wakes,
 * before it reads the wake bits.
 *
 * While it runs a queue whose name hash no other queue of the schedule
 * shares, running is 1 + that hash (0 otherwise): an arrival or cancel
 * of that hash wakes no other worker, for this one reads the wake bits
 * as soon as the run ends (it clears running before it reads them).
 */
typedef struct MMWorkerProc
{
	pid_t		pid;			/* 0 when it does not run */
	Latch	   *latch;
	bool		busy;			/* inside a queue's tick */
	pg_atomic_uint32 running;	/* 1 + the name hash of the queue it runs, or 0 */
	pg_atomic_uint64 armed_until;
	pg_atomic_uint32 armed[MM_WAKE_WORDS];
} MMWorkerProc;

/* A database of matchmaker.database. */
typedef struct MMDatabase
{
	char		name[NAMEDATALEN];
	Oid			dboid;			/* what the launcher started the workers for */
	LWLock	   *lock;			/* the schedule, held_by, stop */
	pid_t		held_by;		/* a backend's DROP/RENAME/...: do not start workers */
	bool		stop;			/* the workers must exit */
	bool		overflow_warned;	/* a queue did not fit in the schedule */
	MMWorkerProc workers[MM_MAX_WORKERS];
	pg_atomic_uint32 wake[MM_WAKE_WORDS];	/* queues to run at once, by name hash */
	pg_atomic_uint64 arrivals[MM_WAKE_BITS];	/* committed enqueues by name hash, ever growing */

	/*
	 * The arrival count of a name hash from which an arrival wakes the
	 * workers: the least, over the queues of that hash, of arrivals_base +
	 * need_arrivals (0 for a queue that any arrival may let match).  Below
	 * it a committing enqueue only counts.
	 */
	pg_atomic_uint64 wake_at[MM_WAKE_BITS];
	pg_atomic_uint32 queues_version;	/* bumped when a queue is created, altered or dropped */
} MMDatabase;

/* The workers' shared memory: the launcher, the databases, then their schedules. */
typedef struct MMShared
{
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	int			ndatabases;
	MMDatabase	dbs[MM_MAX_DATABASES];
	/* then ndatabases * mm_max_queues MMQueueSlot */
} MMShared;

/* The workers' shared memory; NULL unless the library was preloaded. */
extern MMShared *mm_shared;

extern uint32 mm_wake_bit(const char *queue);
extern MMQueueSlot *mm_db_queues(int d);
extern void mm_wake_workers(MMDatabase *db);
extern void mm_set_wake_at(MMDatabase *db, MMQueueSlot *queues, uint32 bit);

/* stats.c: keep a finished run's start, duration and lag in its slot. */
extern void mm_stats_run(MMQueueSlot *slot, TimestampTz started, double ms, double lag_ms);

#endif							/* MATCHMAKER_SCHEDULE_H */
