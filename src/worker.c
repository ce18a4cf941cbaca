/*
 * worker.c
 *		The per-database background workers and their loop.
 *
 * The launcher (launcher.c) starts matchmaker.workers_per_database
 * workers for each database of matchmaker.database.  The workers of a
 * database share its queues' schedule in shared memory (schedule.c): each
 * worker claims one due queue at a time (the one run least recently),
 * runs it in its own transaction, by the same code as matchmaker.tick,
 * and claims the next, so while one worker is inside a long tick the
 * others serve the other queues.  A queue is due when its tick interval
 * has passed, when one of its timers (a timeout, a provisional group)
 * falls due, and at once when an enqueue or cancel of the queue commits
 * (the wake-ups of schedule.c).  A failing queue is logged and the others
 * go on.  Asked to let go of its database (DROP DATABASE, RENAME: see
 * launcher.c), a worker cancels its tick and exits quietly.
 */
#include "schedule.h"

#include "access/xact.h"
#include "commands/dbcommands.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "commands/extension.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

PGDLLEXPORT void mm_worker_main(Datum main_arg);

#define MM_FAILURE_BACKOFF_MIN	1.0 /* seconds before a queue that failed once runs again */
#define MM_FAILURE_BACKOFF_MAX	60.0	/* the longest wait after failures in a row */
#define MM_ARRIVAL_SHARE	10.0	/* a busy queue's arrival runs: this many times the last run's duration apart */
#define MM_PURGE_EVERY		10		/* seconds between removals of a queue's old rows */
#define MM_PURGE_BATCH		1000	/* most rows of each kind one removal takes */

/* What a worker takes from the schedule to run a queue. */
typedef struct ClaimedQueue
{
	int			index;			/* in the schedule */
	char		name[NAMEDATALEN];
	double		tick;
	TimestampTz last_run;
	double		lag_ms;			/* how late after its timer's due time it was claimed */
	TimestampTz purge_at;		/* when its ended rows are due for removal */
	int			failures;		/* its runs that failed in a row before this one */
} ClaimedQueue;

static MMDatabase *my_db = NULL;
static MMQueueSlot *my_queues = NULL;
static int	my_index = -1;		/* the worker's number in its database */

static bool refresh_queues_guts(MemoryContext loopcxt, bool changed);

/* The schedule as last read from matchmaker.queues (see mm_worker_main). */
static bool schedule_ok = false;	/* read, and the extension was there */
static Oid	schedule_extension = InvalidOid;	/* the extension the schedule was read from */
static uint32 seen_version = 0;		/* the queues' version it was read at */

/*
 * The busy queues whose runs the last claim_queue postponed (their name
 * hashes; any_postponed: at least one): what the worker arms itself for
 * when it then sleeps (see MMWorkerProc).
 */
static uint32 postponed[MM_WAKE_WORDS];
static bool any_postponed = false;
static bool armed = false;		/* armed_until is set (arm, disarm) */
static TimestampTz last_refresh = 0;

/* Let go of the worker's slot and of a queue it was running. */
static void
mm_worker_exit(int code, Datum arg)
{
	bool		was_running;

	if (my_db == NULL)
		return;
	LWLockReleaseAll();
	LWLockAcquire(my_db->lock, LW_EXCLUSIVE);
	for (int i = 0; i < mm_max_queues; i++)
		if (my_queues[i].running == my_index)
			my_queues[i].running = -1;
	my_db->workers[my_index].busy = false;
	my_db->workers[my_index].latch = NULL;
	my_db->workers[my_index].pid = 0;
	pg_atomic_write_u64(&my_db->workers[my_index].armed_until, 0);
	/* arrivals of the queue it ran woke nobody: the others read them */
	was_running = pg_atomic_exchange_u32(&my_db->workers[my_index].running, 0) != 0;
	LWLockRelease(my_db->lock);
	if (was_running)
		mm_wake_workers(my_db);
	if (mm_shared->launcher_latch != NULL)
		SetLatch(mm_shared->launcher_latch);
}

/*
 * Between ticks: exit quietly when asked to (the launcher starts the
 * workers again when it may), drop a cancel that came after a tick ended
 * (it was for that tick), and answer other interrupts.
 */
static void
idle_interrupts(void)
{
	if (my_db->stop)
		proc_exit(0);
	QueryCancelPending = false;
	CHECK_FOR_INTERRUPTS();
}

/*
 * Refresh the schedule from matchmaker.queues (in a transaction of its
 * own); changed: a queue was created, altered or dropped since the last
 * refresh.  Returns false when the extension is absent, being created or
 * dropped, or the server is in recovery: then there is nothing to do, and
 * nothing is logged above DEBUG1, so an idle worker leaves the log alone.
 * With the extension absent the schedule is emptied, so that a queue of
 * the same name in an extension created again starts afresh.
 */
static bool
refresh_queues(MemoryContext loopcxt, bool changed)
{
	volatile bool ok = false;

	PG_TRY();
	{
		ok = refresh_queues_guts(loopcxt, changed);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(loopcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		elog(DEBUG1, "matchmaker: could not read the queues: %s", edata->message);
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* A queue read from matchmaker.queues. */
typedef struct ListedQueue
{
	char		name[NAMEDATALEN];
	double		tick;
	TransactionId row_xmin;		/* of its row: another when the row is updated or made anew */
	TimestampTz created_at;		/* of its row: another when the queue is made anew */
	bool		placed;			/* has its entry in the schedule */
} ListedQueue;

/*
 * Merge the queues read (a hash table of ListedQueue) into the schedule.
 * After a change (an alter_queue may have changed a queue's algorithm or
 * batch), no queue waits for the arrivals its last tick said it needed
 * (but one backing off after failures, which runs when its wait ends).
 * A queue whose own row was updated (or dropped and created again) since
 * it failed is tried again at once, its failures forgotten.
 */
static void
merge_queues(HTAB *listed, bool changed)
{
	HASH_SEQ_STATUS seq;
	ListedQueue *lq;
	int			free_slot = 0;

	LWLockAcquire(my_db->lock, LW_EXCLUSIVE);
	for (int i = 0; i < mm_max_queues; i++)
	{
		MMQueueSlot *q = &my_queues[i];

		if (q->name[0] == '\0')
			continue;
		lq = hash_search(listed, q->name, HASH_FIND, NULL);
		if (lq == NULL)
		{
			/* dropped: forget it, unless a worker still runs it */
			if (q->running < 0)
				q->name[0] = '\0';
			continue;
		}
		lq->placed = true;
		/*
		 * The same name, another queue (dropped and created again between
		 * two reads): the failures were the other queue's.
		 */
		if (lq->created_at != q->created_at && q->running < 0)
		{
			q->created_at = lq->created_at;
			q->last_error_at = 0;
			q->last_error[0] = '\0';
		}
		if (changed && q->need_arrivals != 0 && q->failures == 0)
		{
			q->need_arrivals = 0;
			mm_set_wake_at(my_db, my_queues, q->wake_bit);
		}
		/* its row changed (a fix, maybe) while it backs off after failures: try again now */
		if (lq->row_xmin != q->row_xmin && q->running < 0)
		{
			if (q->failures > 0)
			{
				q->failures = 0;
				q->next_run = 0;
				q->need_arrivals = 0;
				mm_set_wake_at(my_db, my_queues, q->wake_bit);
			}
			q->row_xmin = lq->row_xmin;
		}
		if (lq->tick != q->tick)
		{
			/* a changed interval counts from the last run */
			q->tick = lq->tick;
			q->next_run = Min(q->next_run,
							  q->last_run + (TimestampTz) (q->tick * USECS_PER_SEC));
		}
	}
	hash_seq_init(&seq, listed);
	while ((lq = hash_seq_search(&seq)) != NULL)
	{
		MMQueueSlot *q;

		if (lq->placed)
			continue;
		while (free_slot < mm_max_queues && my_queues[free_slot].name[0] != '\0')
			free_slot++;
		if (free_slot >= mm_max_queues)
		{
			if (!my_db->overflow_warned)
				ereport(WARNING,
						(errmsg("matchmaker: database \"%s\" has more than %d queues; the workers do not run queue \"%s\" and others",
								my_db->name, mm_max_queues, lq->name),
						 errhint("Raise matchmaker.max_queues (needs a restart), or run those queues with matchmaker.tick().")));
			my_db->overflow_warned = true;
			hash_seq_term(&seq);
			break;
		}
		q = &my_queues[free_slot];
		memset(q, 0, sizeof(MMQueueSlot));
		strlcpy(q->name, lq->name, NAMEDATALEN);
		q->tick = lq->tick;
		q->row_xmin = lq->row_xmin;
		q->created_at = lq->created_at;
		q->running = -1;
		q->wake_bit = mm_wake_bit(q->name);
		/* until its first run, any arrival wakes it */
		mm_set_wake_at(my_db, my_queues, q->wake_bit);
		/* nor does a worker running a queue of the same hash speak for it any more */
		for (int w = 0; w < MM_MAX_WORKERS; w++)
		{
			uint32		expected = q->wake_bit + 1;

			(void) pg_atomic_compare_exchange_u32(&my_db->workers[w].running, &expected, 0);
		}
	}
	LWLockRelease(my_db->lock);
}

/* The body of refresh_queues, which may raise an error. */
static bool
refresh_queues_guts(MemoryContext loopcxt, bool changed)
{
	bool		ok = false;
	bool		absent = false;
	HASHCTL		ctl;
	HTAB	   *listed;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(ListedQueue);
	ctl.hcxt = loopcxt;
	listed = hash_create("matchmaker listed queues", 64, &ctl,
						 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	schedule_extension = get_extension_oid("matchmaker", true);
	absent = !RecoveryInProgress() && !OidIsValid(schedule_extension);
	if (!RecoveryInProgress() && !absent)
	{
		SPI_connect();
		if (SPI_execute("SELECT name, tick, xmin, created_at FROM matchmaker.queues", true, 0) == SPI_OK_SELECT)
		{
			for (uint64 i = 0; i < SPI_processed; i++)
			{
				bool		isnull;
				char	   *name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
				Interval   *tick = DatumGetIntervalP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
				char		key[NAMEDATALEN];
				ListedQueue *lq;

				if (strlen(name) >= NAMEDATALEN)
					continue;
				memset(key, 0, sizeof(key));
				strlcpy(key, name, NAMEDATALEN);
				lq = hash_search(listed, key, HASH_ENTER, NULL);
				lq->tick = mm_interval_seconds(tick);
				lq->row_xmin = DatumGetTransactionId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3, &isnull));
				lq->created_at = DatumGetTimestampTz(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 4, &isnull));
				lq->placed = false;
			}
			ok = true;
		}
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (ok || absent)
		merge_queues(listed, changed);
	return ok;
}

/*
 * Claim the due queue run least recently: its timer has fallen due, or a
 * wake-up of its (the bits taken here) asks for a run and it is not backing
 * off after a failure nor waiting for more arrivals.  Queues that another
 * worker runs are left alone.  Returns false when none is due, with
 * *timeout lowered to the time until the next one is, in milliseconds.
 */
static bool
claim_queue(ClaimedQueue *claim, long *timeout)
{
	uint32		bits[MM_WAKE_WORDS];
	bool		woken = false;
	TimestampTz now;
	int			best = -1;
	uint8		sharing[MM_WAKE_BITS];	/* queues of each name hash, up to 2 */

	memset(postponed, 0, sizeof(postponed));
	memset(sharing, 0, sizeof(sharing));
	any_postponed = false;
	LWLockAcquire(my_db->lock, LW_EXCLUSIVE);
	if (my_db->stop)
	{
		/* the database is being dropped or renamed: claim nothing more */
		LWLockRelease(my_db->lock);
		return false;
	}
	for (int w = 0; w < MM_WAKE_WORDS; w++)
	{
		bits[w] = pg_atomic_exchange_u32(&my_db->wake[w], 0);
		woken |= bits[w] != 0;
	}
	now = GetCurrentTimestamp();
	for (int i = 0; i < mm_max_queues; i++)
	{
		MMQueueSlot *q = &my_queues[i];
		uint32		bit;

		if (q->name[0] == '\0')
			continue;
		bit = q->wake_bit;
		if (sharing[bit] < 2)
			sharing[bit]++;
		if (woken && (bits[bit / 32] & ((uint32) 1 << (bit % 32))))
			q->woken = true;
		if (q->running >= 0)
			continue;

		/*
		 * A queue that its last tick left needing more arrivals runs on a
		 * wake-up only once that many have come (the counter is shared by
		 * queues of the same name hash, so at worst it runs early, never
		 * late).  A queue backing off after a failure needs more than
		 * can come (run_queue): it runs when its wait ends.
		 */
		if (q->need_arrivals > 0)
		{
			/*
			 * Enough arrivals also wake a queue whose wake_at was crossed
			 * before its last run set it (those enqueues woke nobody).
			 */
			q->woken = pg_atomic_read_u64(&my_db->arrivals[bit]) - q->arrivals_base >=
				(uint64) q->need_arrivals;
		}

		/*
		 * A busy queue (its last run began within twice
		 * matchmaker.arrival_delay of the run before) woken by arrivals,
		 * not due for a timer, waits until MM_ARRIVAL_SHARE times its last
		 * run's duration after that run began, at most arrival_delay:
		 * under a steady feed one run then serves the arrivals of that
		 * time, not one or two each.  A quiet queue runs at once, a pair
		 * arriving together included.
		 */
		if (q->woken && q->busy && now < q->next_run && mm_arrival_delay > 0)
		{
			double		gap_ms = Min(MM_ARRIVAL_SHARE * q->last_ms, (double) mm_arrival_delay);
			TimestampTz at = q->last_start + (TimestampTz) (gap_ms * 1000.0);

			if (now < at)
			{
				/* its timer (tick interval, max_wait, a deadline) is not held back */
				TimestampTz wake = Min(at, q->next_run);

				*timeout = Min(*timeout, Max((long) ((wake - now + 999) / 1000), 1));
				postponed[bit / 32] |= (uint32) 1 << (bit % 32);
				any_postponed = true;
				continue;
			}
		}
		if (q->woken || now >= q->next_run)
		{
			if (best < 0 || q->last_run < my_queues[best].last_run)
				best = i;
		}
		else
			*timeout = Min(*timeout, Max((long) ((q->next_run - now) / 1000), 1));
	}
	if (best >= 0)
	{
		MMQueueSlot *q = &my_queues[best];

		q->running = my_index;
		/* claimed late for its timer (a wake-up or a first run is not late) */
		claim->lag_ms = !q->woken && q->next_run > 0 && now > q->next_run
			? (double) (now - q->next_run) / 1000.0 : 0.0;
		q->woken = false;
		/* arrivals from here on count for the next run (some also for this one: early, not late) */
		q->arrivals_base = pg_atomic_read_u64(&my_db->arrivals[q->wake_bit]);
		claim->index = best;
		strlcpy(claim->name, q->name, NAMEDATALEN);
		claim->tick = q->tick;
		claim->last_run = q->last_run;
		claim->purge_at = q->purge_at;
		claim->failures = q->failures;
		my_db->workers[my_index].busy = true;
		/* its arrivals need wake no other worker, unless its name hash is shared */
		pg_atomic_write_u32(&my_db->workers[my_index].running,
							sharing[q->wake_bit] > 1 ? 0 : q->wake_bit + 1);
	}
	LWLockRelease(my_db->lock);
	return best >= 0;
}

/* Give a claimed queue back to the schedule, with what its run decided. */
static void
unclaim_queue(const ClaimedQueue *claim, const MMQueueSlot *outcome)
{
	MMQueueSlot *q = &my_queues[claim->index];

	LWLockAcquire(my_db->lock, LW_EXCLUSIVE);
	if (q->running == my_index && strcmp(q->name, claim->name) == 0)
	{
		q->last_run = outcome->last_run;
		q->next_run = outcome->next_run;
		q->failures = outcome->failures;
		q->need_arrivals = outcome->need_arrivals;
		q->busy = q->last_start > 0 &&
			outcome->last_start - q->last_start <= (TimestampTz) mm_arrival_delay * 2 * 1000;
		mm_stats_run(q, outcome->last_start, outcome->last_ms, outcome->last_lag_ms);
		q->purge_at = outcome->purge_at;
		if (outcome->last_error_at != 0)
		{
			q->last_error_at = outcome->last_error_at;
			memcpy(q->last_error, outcome->last_error, MM_ERROR_LEN);
		}
		q->running = -1;
		mm_set_wake_at(my_db, my_queues, q->wake_bit);
	}
	my_db->workers[my_index].busy = false;
	/* before the next claim reads the wake bits (see MMWorkerProc) */
	pg_atomic_write_u32(&my_db->workers[my_index].running, 0);
	LWLockRelease(my_db->lock);
}

/*
 * In a PG_CATCH of the worker's loop: the error, copied into loopcxt, its
 * transaction aborted.  An error because the database is being dropped or
 * renamed ends the worker quietly.
 */
static ErrorData *
caught_error(MemoryContext loopcxt)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(loopcxt);
	edata = CopyErrorData();
	FlushErrorState();
	AbortCurrentTransaction();
	if (my_db->stop)
		proc_exit(0);
	return edata;
}

/*
 * Remove the queue's ended rows older than matchmaker.retention, at most
 * MM_PURGE_BATCH of each kind, in a transaction of its own; returns when
 * to do it again: at once while there is more, else MM_PURGE_EVERY
 * seconds on.  A failure is logged and does not stop the queue.
 */
static TimestampTz
purge_claimed(const ClaimedQueue *claim, MemoryContext loopcxt)
{
	TimestampTz now = GetCurrentTimestamp();
	TimestampTz next = now + (TimestampTz) MM_PURGE_EVERY * USECS_PER_SEC;

	PG_TRY();
	{
		int64		removed;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SPI_connect();
		/* it skips what others hold; a wait it cannot skip gives up rather than stall the queue */
		(void) set_config_option("lock_timeout", "1000", PGC_SUSET, PGC_S_SESSION,
								 GUC_ACTION_LOCAL, true, 0, false);
		removed = mm_purge(claim->name, now - (TimestampTz) mm_retention * USECS_PER_SEC,
						   MM_PURGE_BATCH, false);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		if (removed >= MM_PURGE_BATCH)
			next = now;
	}
	PG_CATCH();
	{
		ErrorData  *edata = caught_error(loopcxt);

		ereport(WARNING,
				(errmsg("matchmaker: removing old rows of queue \"%s\" failed: %s", claim->name, edata->message),
				 errhint("The worker tries again in %d seconds; matching goes on.", MM_PURGE_EVERY)));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	return next;
}

/*
 * Whether the extension the schedule was read from is still there (in a
 * transaction of its own; after an abort): not when it was dropped, nor
 * dropped and created again.
 */
static bool
extension_unchanged(void)
{
	bool		same;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	same = !RecoveryInProgress() && OidIsValid(schedule_extension) &&
		get_extension_oid("matchmaker", true) == schedule_extension;
	CommitTransactionCommand();
	return same;
}

/*
 * Tick a claimed queue in a transaction of its own; log a failure and go
 * on.  A tick cancelled because the database is being dropped or renamed
 * ends the worker quietly.
 */
static void
run_queue(const ClaimedQueue *claim, MemoryContext loopcxt)
{
	TimestampTz now = GetCurrentTimestamp();
	MMTickInfo	info = {0, DT_NOEND, true, 0};
	int			made = 0;
	char		activity[NAMEDATALEN + 32];
	MMQueueSlot outcome;
	double		tick = claim->tick;

	memset(&outcome, 0, sizeof(outcome));
	outcome.last_run = claim->last_run;
	/* a run that is skipped neither fails nor succeeds */
	outcome.failures = claim->failures;
	snprintf(activity, sizeof(activity), "tick queue %s", claim->name);
	pgstat_report_activity(STATE_RUNNING, activity);

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SPI_connect();
		info.prev_step = claim->last_run;

		/*
		 * The schedule is read every naptime, not at every run: the
		 * extension may have been dropped since, or the server be a
		 * standby now.  Then read it again, quietly, before any run.
		 */
		if (RecoveryInProgress() || !OidIsValid(get_namespace_oid("matchmaker", true)))
		{
			schedule_ok = false;
			made = -1;
		}
		else
			made = mm_tick_queue(claim->name, now, MM_LOCK_SKIP, &info);
		SPI_finish();

		/*
		 * A tick that changed nothing has only locked the queue's row; its
		 * commit need not wait for the WAL flush, as a crash would lose
		 * that lock only.  The worker runs a tick at every enqueue, and
		 * most of them find too few tickets to match: with synchronous
		 * commits they would compete with the enqueues' own flushes.
		 */
		if (made <= 0 && !info.wrote)
			(void) set_config_option("synchronous_commit", "off", PGC_SUSET, PGC_S_SESSION,
									 GUC_ACTION_LOCAL, true, 0, false);
		PopActiveSnapshot();
		CommitTransactionCommand();

		if (made < 0)
		{
			/*
			 * Another transaction holds the queue (a manual tick, an
			 * alter_queue): do not wait for it, the other queues go on;
			 * look again soon.
			 */
			outcome.next_run = now + Min((TimestampTz) (tick * USECS_PER_SEC), 100 * 1000);
		}
		else
		{
			/*
			 * Run again when the tick interval has passed, or earlier when
			 * a timer of the queue (a timeout, a provisional group) falls
			 * due.
			 */
			outcome.last_run = now;
			outcome.failures = 0;
			outcome.next_run = Min(now + (TimestampTz) (tick * USECS_PER_SEC), info.next_deadline);
			outcome.need_arrivals = info.need_arrivals;
			elog(DEBUG1, "matchmaker: queue \"%s\" made %d matches", claim->name, made);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata = caught_error(loopcxt);

		if (!extension_unchanged())
		{
			/*
			 * DROP EXTENSION committed while the tick waited for it (and
			 * maybe CREATE EXTENSION since): not a failure of the queue;
			 * read the schedule again.
			 */
			elog(DEBUG1, "matchmaker: queue \"%s\" went with the extension: %s", claim->name, edata->message);
			schedule_ok = false;
			outcome.next_run = now + Min((TimestampTz) (tick * USECS_PER_SEC), 100 * 1000);
		}
		else
		{
			/*
			 * Retried after 1 s, then after twice as long at each failure
			 * in a row, up to a minute, counted from the failure: a queue
			 * that failed once (a cancelled run, a deadlock) is soon back,
			 * whatever its tick interval; one that keeps failing takes
			 * little of the worker and writes a line a minute to the log.
			 * An update of its row ends the wait (merge_queues).
			 */
			double		backoff = MM_FAILURE_BACKOFF_MAX;

			outcome.failures = Min(claim->failures, 1000) + 1;
			if (outcome.failures <= 6)
				backoff = Min(MM_FAILURE_BACKOFF_MIN * (double) (1 << (outcome.failures - 1)),
							  MM_FAILURE_BACKOFF_MAX);
			ereport(WARNING,
					(errmsg("matchmaker: queue \"%s\" failed: %s", claim->name, edata->message),
					 edata->detail ? errdetail("%s", edata->detail) : 0,
					 outcome.failures > 1 ?
					 errhint("The worker runs the queue again in %g s (it failed %d times in a row); the other queues go on.",
							 backoff, outcome.failures) :
					 errhint("The worker runs the queue again in %g s; the other queues go on.",
							 backoff)));
			outcome.next_run = GetCurrentTimestamp() + (TimestampTz) (backoff * USECS_PER_SEC);
			/* for worker_queues(): what failed, cut to fit */
			outcome.last_error_at = now;
			if (edata->message != NULL)
			{
				int			len = pg_mbcliplen(edata->message, strlen(edata->message),
											   MM_ERROR_LEN - 1);

				memcpy(outcome.last_error, edata->message, len);
				outcome.last_error[len] = '\0';
			}
			/* its arrivals and cancels meanwhile wake nobody: it runs at next_run */
			outcome.need_arrivals = PG_INT32_MAX;
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();
	outcome.last_start = now;
	outcome.last_ms = (double) (GetCurrentTimestamp() - now) / 1000.0;
	outcome.last_lag_ms = claim->lag_ms;
	/* then, now and then, its old rows (not counted in the tick's time) */
	outcome.purge_at = claim->purge_at;
	if (mm_retention > 0 && GetCurrentTimestamp() >= claim->purge_at)
		outcome.purge_at = purge_claimed(claim, loopcxt);
	unclaim_queue(claim, &outcome);
	pgstat_report_stat(false);
}

/* Re-read the configuration file after SIGHUP, logging the worker's changed settings. */
static void
reload_settings(void)
{
	int			old_naptime = mm_naptime;
	bool		old_enabled = mm_enabled;

	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	/* one worker of the database says it */
	if (my_index != 0)
		return;
	if (mm_naptime != old_naptime)
		ereport(LOG, (errmsg("matchmaker worker: naptime is now %d ms", mm_naptime)));
	if (mm_enabled != old_enabled)
		ereport(LOG, (errmsg("matchmaker worker: %s", mm_enabled ? "enabled" : "disabled")));
}

/*
 * Write the statistics the worker's ticks hold, in a transaction of its
 * own, when they are due (mm_stats_due); log a failure and go on (they
 * stay held and are tried again, later while writes fail).
 */
static void
flush_stats(MemoryContext loopcxt)
{
	ErrorData  *failure;

	if (GetCurrentTimestamp() < mm_stats_due())
		return;
	pgstat_report_activity(STATE_RUNNING, "write queue statistics");
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SPI_connect();
		failure = mm_stats_flush();
		if (failure != NULL)
			ereport(WARNING,
					(errmsg("matchmaker: writing the statistics of a queue failed: %s", failure->message),
					 errhint("The worker keeps them and tries again, less often while it fails (logged once a streak); matching goes on.")));
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata = caught_error(loopcxt);

		ereport(WARNING,
				(errmsg("matchmaker: writing the queues' statistics failed: %s", edata->message),
				 errhint("The worker keeps them and tries again, less often while it fails; matching goes on.")));
		FreeErrorData(edata);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(loopcxt);
}

/*
 * Run due queues one at a time until none is due, every queue of the
 * schedule has had a turn (then the list of queues is read again first),
 * or a reload between two runs has disabled the worker.
 * Returns how long to sleep until the next queue is due, timeout (the
 * naptime) at most, in milliseconds: 0 when some may still be due.
 */
static long
run_due_queues(long timeout, MemoryContext loopcxt)
{
	ClaimedQueue claim;

	for (int turns = 0; turns <= mm_max_queues; turns++)
	{
		long		sleep = timeout;

		if (!claim_queue(&claim, &sleep))
			return sleep;
		run_queue(&claim, loopcxt);
		MemoryContextSwitchTo(loopcxt);
		flush_stats(loopcxt);
		idle_interrupts();
		/* a reload that disables the worker stops it between two runs, not after the pass */
		if (ConfigReloadPending)
		{
			reload_settings();
			MemoryContextSwitchTo(loopcxt);
			if (!mm_enabled)
				return 0;
		}
	}
	return 0;
}

/* Leave when the database is not the one of that name any more (renamed meanwhile). */
static void
check_database_name(void)
{
	char	   *name;
	bool		same;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	name = get_database_name(MyDatabaseId);
	same = name != NULL && strcmp(name, my_db->name) == 0;
	CommitTransactionCommand();
	if (!same)
		proc_exit(0);
}

/*
 * Before sleeping timeout ms: arm this worker until it wakes by itself
 * (see MMWorkerProc), so that arrivals meanwhile set no latch, for the
 * name hashes of the busy queues the last claim postponed, or for all
 * while matchmaker.enabled is off.
 */
static void
arm(long timeout)
{
	MMWorkerProc *me = &my_db->workers[my_index];

	if (mm_enabled && !any_postponed)
		return;
	for (int w = 0; w < MM_WAKE_WORDS; w++)
		pg_atomic_write_u32(&me->armed[w], mm_enabled ? postponed[w] : PG_UINT32_MAX);
	pg_write_barrier();
	pg_atomic_write_u64(&me->armed_until,
						(uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout));
	pg_memory_barrier();
	armed = true;
}

/* Awake: arrivals set the latch again, before this worker reads the wake bits. */
static void
disarm(void)
{
	any_postponed = false;
	if (!armed)
		return;
	pg_atomic_write_u64(&my_db->workers[my_index].armed_until, 0);
	pg_memory_barrier();
	armed = false;
}

/* The worker's entry point. */
void
mm_worker_main(Datum main_arg)
{
	int			arg = DatumGetInt32(main_arg);
	Oid			dboid;
	MemoryContext loopcxt;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	my_db = &mm_shared->dbs[arg / MM_MAX_WORKERS];
	my_queues = mm_db_queues(arg / MM_MAX_WORKERS);
	my_index = arg % MM_MAX_WORKERS;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	LWLockAcquire(my_db->lock, LW_EXCLUSIVE);
	if (my_db->stop || my_db->workers[my_index].pid != 0)
	{
		LWLockRelease(my_db->lock);
		my_db = NULL;
		proc_exit(0);
	}
	my_db->workers[my_index].pid = MyProcPid;
	my_db->workers[my_index].busy = false;
	pg_atomic_write_u32(&my_db->workers[my_index].running, 0);
	my_db->workers[my_index].latch = MyLatch;
	LWLockRelease(my_db->lock);
	on_shmem_exit(mm_worker_exit, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	/* a tick needs READ COMMITTED, whatever the server's default */
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	check_database_name();

	loopcxt = AllocSetContextCreate(TopMemoryContext, "matchmaker worker loop", ALLOCSET_DEFAULT_SIZES);
	mm_stats_defer();

	ereport(LOG, (errmsg("matchmaker worker %d of %d started for database \"%s\"",
						 my_index + 1, mm_workers_per_database, my_db->name)));

	for (;;)
	{
		long		timeout;
		uint32		version = pg_atomic_read_u32(&my_db->queues_version);
		TimestampTz now = GetCurrentTimestamp();

		idle_interrupts();
		if (ConfigReloadPending)
			reload_settings();
		/* after the reload: a naptime lowered meanwhile applies to this sleep */
		timeout = mm_naptime;

		/*
		 * Read the queues again when one was created, altered or dropped,
		 * and at least every naptime (a restore, the extension dropped or
		 * created, a promotion); not at every wake-up.
		 */
		MemoryContextSwitchTo(loopcxt);
		if (!mm_enabled)
			schedule_ok = false;
		else if (!schedule_ok || version != seen_version ||
				 now >= TimestampTzPlusMilliseconds(last_refresh, mm_naptime))
		{
			bool		changed = version != seen_version;

			seen_version = version;
			last_refresh = now;
			schedule_ok = refresh_queues(loopcxt, changed);
		}
		if (schedule_ok)
		{
			/* the transactions above leave TopMemoryContext current */
			MemoryContextSwitchTo(loopcxt);
			timeout = run_due_queues(timeout, loopcxt);
			now = GetCurrentTimestamp();
			timeout = Min(timeout,
						  Max((long) ((TimestampTzPlusMilliseconds(last_refresh, mm_naptime) - now) / 1000), 1));
		}
		flush_stats(loopcxt);
		/* held statistics are written a second after the first was held */
		if (mm_stats_due() != DT_NOEND)
			timeout = Min(timeout, Max((long) ((mm_stats_due() - GetCurrentTimestamp()) / 1000), 1));
		pgstat_report_activity(STATE_IDLE, NULL);
		MemoryContextReset(loopcxt);

		if (timeout <= 0)
			any_postponed = false;	/* no sleep: the next claim decides again */
		else
		{
			arm(timeout);
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout, PG_WAIT_EXTENSION);
			disarm();
		}
		ResetLatch(MyLatch);
	}
}
