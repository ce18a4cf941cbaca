/*
 * worker.c
 *		The background worker and its wake-ups.
 *
 * With shared_preload_libraries = 'matchmaker', one worker per database in
 * matchmaker.database ticks every queue of that database when the queue's
 * tick interval is due, when one of the queue's timers (a timeout, a
 * provisional group) falls due, and at once when an enqueue or cancel of
 * the queue commits: the committing backend sets a bit for the queue in shared memory
 * and sets the worker's latch (no lock, no NOTIFY).  Bursts coalesce: the
 * bits pile up while the worker is busy and one tick serves them all.
 * Each queue runs in its own transaction, by the same code as
 * matchmaker.tick, so a failing queue is logged and the others go on.
 */
#include "matchmaker.h"

#include "access/xact.h"
#include "commands/extension.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

PGDLLEXPORT void mm_worker_main(Datum main_arg);

#define MM_MAX_DATABASES	16
#define MM_WAKE_WORDS		32	/* 1024 bits of queue-name hashes */
#define MM_WAKE_BITS		(MM_WAKE_WORDS * 32)
#define MM_FAILURE_BACKOFF	10.0	/* seconds before a failed queue runs again */

/* One worker's shared state. */
typedef struct MMWorkerSlot
{
	Oid			dboid;			/* the worker's database, once connected */
	Latch	   *latch;			/* its latch while it runs, else NULL */
	pg_atomic_uint32 wake[MM_WAKE_WORDS];	/* queues to run at once, by name hash */
	pg_atomic_uint32 arrivals[MM_WAKE_BITS];	/* committed enqueues by name hash, ever growing */
} MMWorkerSlot;

typedef struct MMShared
{
	MMWorkerSlot slots[MM_MAX_DATABASES];
} MMShared;

static MMShared *mm_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* Wake-ups (and arrivals) this backend owes the workers when its transaction commits. */
static uint32 pending_wake[MM_WAKE_WORDS];
static uint32 pending_arrivals[MM_WAKE_BITS];
static bool pending_any = false;

/* The bit of a queue name in a wake set. */
static uint32
wake_bit(const char *queue)
{
	return hash_bytes((const unsigned char *) queue, strlen(queue)) % MM_WAKE_BITS;
}

/* Reserve shared memory for the workers' slots. */
static void
mm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(MMShared)));
}

/* Create or attach to the workers' slots. */
static void
mm_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	mm_shared = ShmemInitStruct("matchmaker", sizeof(MMShared), &found);
	if (!found)
	{
		for (int i = 0; i < MM_MAX_DATABASES; i++)
		{
			mm_shared->slots[i].dboid = InvalidOid;
			mm_shared->slots[i].latch = NULL;
			for (int w = 0; w < MM_WAKE_WORDS; w++)
				pg_atomic_init_u32(&mm_shared->slots[i].wake[w], 0);
			for (int b = 0; b < MM_WAKE_BITS; b++)
				pg_atomic_init_u32(&mm_shared->slots[i].arrivals[b], 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Remember to wake this database's worker for a queue when the current
 * transaction commits (enqueue and cancel call it).  Without the preloaded
 * library there is no worker and nothing to do.
 */
void
mm_wake_on_commit(const char *queue)
{
	uint32		bit;

	if (mm_shared == NULL)
		return;
	bit = wake_bit(queue);
	pending_wake[bit / 32] |= (uint32) 1 << (bit % 32);
	pending_any = true;
}

/*
 * The same for an arrival (enqueue): the worker also counts arrivals per
 * queue, so that a queue that needs more players before it can match is
 * not ticked at every enqueue.
 */
void
mm_arrival_on_commit(const char *queue)
{
	if (mm_shared == NULL)
		return;
	mm_wake_on_commit(queue);
	pending_arrivals[wake_bit(queue)]++;
}

/* At commit, hand the pending wake-ups to the worker; at abort, forget them. */
static void
mm_xact_callback(XactEvent event, void *arg)
{
	if (!pending_any)
		return;
	if (event == XACT_EVENT_COMMIT && mm_shared != NULL)
	{
		for (int i = 0; i < MM_MAX_DATABASES; i++)
		{
			MMWorkerSlot *slot = &mm_shared->slots[i];
			Latch	   *latch;

			if (slot->dboid != MyDatabaseId)
				continue;
			for (int w = 0; w < MM_WAKE_WORDS; w++)
			{
				if (pending_wake[w] == 0)
					continue;
				for (int b = w * 32; b < w * 32 + 32; b++)
					if (pending_arrivals[b] != 0)
						pg_atomic_fetch_add_u32(&slot->arrivals[b], pending_arrivals[b]);
				pg_atomic_fetch_or_u32(&slot->wake[w], pending_wake[w]);
			}
			pg_memory_barrier();
			latch = slot->latch;
			if (latch != NULL)
				SetLatch(latch);
		}
	}
	/*
	 * A prepared transaction's tickets wake nobody: they wait for the
	 * queue's next timer or arrival after COMMIT PREPARED.
	 */
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		for (int w = 0; w < MM_WAKE_WORDS; w++)
			if (pending_wake[w] != 0)
				memset(&pending_arrivals[w * 32], 0, 32 * sizeof(uint32));
		memset(pending_wake, 0, sizeof(pending_wake));
		pending_any = false;
	}
}

/*
 * Watch this backend's commits for wake-ups and, when loaded by
 * shared_preload_libraries, reserve shared memory and register one worker
 * per database of matchmaker.database (mm_settings_init has run).
 */
void
mm_worker_init(void)
{
	char	   *rawlist;
	List	   *names = NIL;
	int			slot = 0;

	RegisterXactCallback(mm_xact_callback, NULL);

	if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = mm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = mm_shmem_startup;

	rawlist = pstrdup(mm_database);
	if (!SplitIdentifierString(rawlist, ',', &names))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("matchmaker.database must be a comma-separated list of database names"),
				 errdetail("Got \"%s\".", mm_database),
				 errhint("Set it for example to 'game' or 'game_eu, game_us'.")));
	if (list_length(names) > MM_MAX_DATABASES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("matchmaker.database names more than %d databases", MM_MAX_DATABASES),
				 errhint("Run the queues of the other databases with matchmaker.tick() from a scheduler.")));

	for (ListCell *lc = list_head(names); lc != NULL; lc = lnext(names, lc))
	{
		BackgroundWorker worker;
		const char *db = (const char *) lfirst(lc);

		memset(&worker, 0, sizeof(worker));
		worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
		worker.bgw_restart_time = 5;
		snprintf(worker.bgw_library_name, BGW_MAXLEN, "matchmaker");
		snprintf(worker.bgw_function_name, BGW_MAXLEN, "mm_worker_main");
		snprintf(worker.bgw_name, BGW_MAXLEN, "matchmaker worker for database %s", db);
		snprintf(worker.bgw_type, BGW_MAXLEN, "matchmaker worker");
		strlcpy(worker.bgw_extra, db, BGW_EXTRALEN);
		worker.bgw_main_arg = Int32GetDatum(slot++);
		RegisterBackgroundWorker(&worker);
	}
}

/* A queue the worker knows, with when it ran last. */
typedef struct WorkerQueue
{
	char		name[NAMEDATALEN];
	double		tick;			/* seconds */
	TimestampTz last_run;		/* when it ran last (0: never) */
	TimestampTz next_run;		/* due time of its next timer tick */
	TimestampTz failed_until;	/* after a failure, wake-ups wait until then */
	int			need_arrivals;	/* from its last tick: arrivals before an arrival wake-up matters */
	uint32		arrivals_base;	/* the arrival counter of its name hash when it last ran */
	bool		seen;			/* still in matchmaker.queues */
} WorkerQueue;

static MMWorkerSlot *my_slot = NULL;

static bool refresh_queues_guts(HTAB *queues);

/* Detach from the slot when the worker exits. */
static void
mm_worker_exit(int code, Datum arg)
{
	if (my_slot != NULL)
		my_slot->latch = NULL;
}

/*
 * Refresh the list of queues (in a transaction of its own).  Returns false
 * when the extension is absent, being created or dropped, or the server is
 * in recovery: then there is nothing to do, and nothing is logged above
 * DEBUG1, so an idle worker leaves the log alone.
 */
static bool
refresh_queues(HTAB *queues, MemoryContext loopcxt)
{
	volatile bool ok = false;

	PG_TRY();
	{
		ok = refresh_queues_guts(queues);
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

/* The body of refresh_queues, which may raise an error. */
static bool
refresh_queues_guts(HTAB *queues)
{
	bool		ok = false;
	HASH_SEQ_STATUS seq;
	WorkerQueue *wq;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (!RecoveryInProgress() && OidIsValid(get_extension_oid("matchmaker", true)))
	{
		hash_seq_init(&seq, queues);
		while ((wq = hash_seq_search(&seq)) != NULL)
			wq->seen = false;

		SPI_connect();
		if (SPI_execute("SELECT name, tick FROM matchmaker.queues", true, 0) == SPI_OK_SELECT)
		{
			for (uint64 i = 0; i < SPI_processed; i++)
			{
				bool		isnull;
				char	   *name = TextDatumGetCString(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
				Interval   *tick = DatumGetIntervalP(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &isnull));
				bool		found;
				char		key[NAMEDATALEN];

				if (strlen(name) >= NAMEDATALEN)
					continue;
				memset(key, 0, sizeof(key));
				strlcpy(key, name, NAMEDATALEN);
				wq = hash_search(queues, key, HASH_ENTER, &found);
				if (!found)
				{
					wq->last_run = 0;
					wq->next_run = 0;
					wq->failed_until = 0;
					wq->need_arrivals = 0;
					wq->arrivals_base = 0;
					wq->tick = mm_interval_seconds(tick);
				}
				else if (mm_interval_seconds(tick) != wq->tick)
				{
					/* a changed interval counts from the last run */
					wq->tick = mm_interval_seconds(tick);
					wq->next_run = Min(wq->next_run,
									   wq->last_run + (TimestampTz) (wq->tick * USECS_PER_SEC));
				}
				wq->seen = true;
			}
			ok = true;
		}
		SPI_finish();

		hash_seq_init(&seq, queues);
		while ((wq = hash_seq_search(&seq)) != NULL)
			if (!wq->seen)
				hash_search(queues, wq->name, HASH_REMOVE, NULL);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	return ok;
}

/* Tick one queue in a transaction of its own; log a failure and go on. */
static void
run_queue(WorkerQueue *wq, MemoryContext loopcxt)
{
	TimestampTz now = GetCurrentTimestamp();
	MMTickInfo	info = {0, DT_NOEND, true, 0};
	int			made = 0;
	char		activity[NAMEDATALEN + 32];

	snprintf(activity, sizeof(activity), "tick queue %s", wq->name);
	pgstat_report_activity(STATE_RUNNING, activity);

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SPI_connect();
		/* arrivals from here on count for the next run (some also for this one: early, not late) */
		wq->arrivals_base = pg_atomic_read_u32(&my_slot->arrivals[wake_bit(wq->name)]);
		info.prev_step = wq->last_run;
		made = mm_tick_queue(wq->name, now, MM_LOCK_SKIP, &info);
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
			wq->next_run = now + Min((TimestampTz) (wq->tick * USECS_PER_SEC), 100 * 1000);
		}
		else
		{
			/*
			 * Run again when the tick interval has passed, or earlier when
			 * a timer of the queue (a timeout, a provisional group) falls
			 * due.
			 */
			wq->last_run = now;
			wq->next_run = Min(now + (TimestampTz) (wq->tick * USECS_PER_SEC), info.next_deadline);
			wq->need_arrivals = info.need_arrivals;
			elog(DEBUG1, "matchmaker: queue \"%s\" made %d matches", wq->name, made);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(loopcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		ereport(WARNING,
				(errmsg("matchmaker: queue \"%s\" failed: %s", wq->name, edata->message),
				 edata->detail ? errdetail("%s", edata->detail) : 0,
				 errhint("The worker runs the queue again in %g seconds; the other queues go on.",
						 Max(wq->tick, MM_FAILURE_BACKOFF))));
		FreeErrorData(edata);
		wq->next_run = now + (TimestampTz) (Max(wq->tick, MM_FAILURE_BACKOFF) * USECS_PER_SEC);
		wq->failed_until = wq->next_run;
	}
	PG_END_TRY();
	pgstat_report_stat(false);
}

/* Take (and clear) the worker's pending wake bits. */
static bool
take_wake_bits(uint32 *bits)
{
	bool		any = false;

	for (int w = 0; w < MM_WAKE_WORDS; w++)
	{
		bits[w] = pg_atomic_exchange_u32(&my_slot->wake[w], 0);
		any |= bits[w] != 0;
	}
	return any;
}

/* Re-read the configuration file after SIGHUP, logging the worker's changed settings. */
static void
reload_settings(void)
{
	int			old_naptime = mm_naptime;
	bool		old_enabled = mm_enabled;

	ConfigReloadPending = false;
	ProcessConfigFile(PGC_SIGHUP);
	if (mm_naptime != old_naptime)
		ereport(LOG, (errmsg("matchmaker worker: naptime is now %d ms", mm_naptime)));
	if (mm_enabled != old_enabled)
		ereport(LOG, (errmsg("matchmaker worker: %s", mm_enabled ? "enabled" : "disabled")));
}

/*
 * Run the queues that are due: their timer has fallen due, or a wake-up
 * bit of theirs is set (woken: bits holds the wake-ups) and they are not
 * backing off after a failure.  Returns how long to sleep until the next
 * queue is due, timeout (the naptime) at most, in milliseconds.
 */
static long
run_due_queues(HTAB *queues, bool woken, const uint32 *bits, long timeout,
			   MemoryContext loopcxt)
{
	HASH_SEQ_STATUS seq;
	WorkerQueue *wq;
	TimestampTz now = GetCurrentTimestamp();
	WorkerQueue **due;
	int			ndue = 0;

	/*
	 * Collect the due queues first: a hash scan must not stay open across
	 * the transactions that run them.
	 */
	due = palloc(sizeof(WorkerQueue *) * Max(hash_get_num_entries(queues), 1));
	hash_seq_init(&seq, queues);
	while ((wq = hash_seq_search(&seq)) != NULL)
	{
		uint32		bit = wake_bit(wq->name);
		bool		wake = woken && (bits[bit / 32] & ((uint32) 1 << (bit % 32)));

		/*
		 * A queue that its last tick left needing more arrivals runs on a
		 * wake-up only once that many have come (the counter is shared by
		 * queues of the same name hash, so at worst it runs early, never
		 * late).
		 */
		if (wake && wq->need_arrivals > 0 &&
			pg_atomic_read_u32(&my_slot->arrivals[bit]) - wq->arrivals_base <
			(uint32) wq->need_arrivals)
			wake = false;
		if (now >= wq->next_run || (wake && now >= wq->failed_until))
			due[ndue++] = wq;
	}
	for (int i = 0; i < ndue; i++)
	{
		run_queue(due[i], loopcxt);
		MemoryContextSwitchTo(loopcxt);
		CHECK_FOR_INTERRUPTS();
	}

	/* Sleep until the next queue is due, naptime at most. */
	now = GetCurrentTimestamp();
	hash_seq_init(&seq, queues);
	while ((wq = hash_seq_search(&seq)) != NULL)
	{
		long		ms = (long) ((wq->next_run - now) / 1000);

		timeout = Min(timeout, Max(ms, 1));
	}
	return timeout;
}

/* The worker's entry point. */
void
mm_worker_main(Datum main_arg)
{
	int			slotno = DatumGetInt32(main_arg);
	char		dbname[BGW_EXTRALEN];
	HASHCTL		ctl;
	HTAB	   *queues;
	MemoryContext loopcxt;

	strlcpy(dbname, MyBgworkerEntry->bgw_extra, sizeof(dbname));
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(dbname, NULL, 0);
	/* a tick needs READ COMMITTED, whatever the server's default */
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);

	my_slot = &mm_shared->slots[slotno];
	my_slot->dboid = MyDatabaseId;
	pg_write_barrier();
	my_slot->latch = MyLatch;
	on_shmem_exit(mm_worker_exit, (Datum) 0);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = NAMEDATALEN;
	ctl.entrysize = sizeof(WorkerQueue);
	queues = hash_create("matchmaker worker queues", 64, &ctl, HASH_ELEM | HASH_STRINGS);
	loopcxt = AllocSetContextCreate(TopMemoryContext, "matchmaker worker loop", ALLOCSET_DEFAULT_SIZES);

	ereport(LOG, (errmsg("matchmaker worker started for database \"%s\"", dbname)));

	for (;;)
	{
		long		timeout = mm_naptime;
		uint32		bits[MM_WAKE_WORDS];

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
			reload_settings();

		MemoryContextSwitchTo(loopcxt);
		if (mm_enabled)
		{
			bool		woken = take_wake_bits(bits);
			bool		have_queues = refresh_queues(queues, loopcxt);

			/* the transactions above leave TopMemoryContext current */
			MemoryContextSwitchTo(loopcxt);
			if (have_queues)
				timeout = run_due_queues(queues, woken, bits, timeout, loopcxt);
		}
		pgstat_report_activity(STATE_IDLE, NULL);
		MemoryContextReset(loopcxt);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
