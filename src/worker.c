/*
 * worker.c
 *		The background workers, their launcher and their wake-ups.
 *
 * With shared_preload_libraries = 'matchmaker', a launcher (a background
 * worker connected to no database, like PostgreSQL's logical replication
 * launcher) starts matchmaker.workers_per_database workers for each
 * database of matchmaker.database that exists, restarts one that exits
 * 5 s later, and logs once that a named database does not exist.
 *
 * The workers of a database share its queues' schedule in shared memory:
 * each worker claims one due queue at a time (the one run least recently),
 * runs it in its own transaction, by the same code as matchmaker.tick,
 * and claims the next, so while one worker is inside a long tick the
 * others serve the other queues.  A queue is due when its tick interval
 * has passed, when one of its timers (a timeout, a provisional group)
 * falls due, and at once when an enqueue or cancel of the queue commits:
 * the committing backend sets a bit for the queue in shared memory and
 * sets the workers' latches (no lock, no NOTIFY).  Bursts coalesce: the
 * bits pile up while the workers are busy and one tick serves them all.
 * A failing queue is logged and the others go on.
 *
 * DROP DATABASE, ALTER DATABASE ... RENAME and SET TABLESPACE of a
 * worker's database, and CREATE DATABASE with it as template, need no
 * other session in it: a ProcessUtility hook, in the backend that runs
 * the statement and when its role owns the database, asks that database's
 * workers to exit (cancelling a tick in progress), waits for them, and
 * keeps the launcher from starting them again until its transaction ends.
 */
#include "matchmaker.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
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
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include <signal.h>

PGDLLEXPORT void mm_launcher_main(Datum main_arg);
PGDLLEXPORT void mm_worker_main(Datum main_arg);

#define MM_WAKE_WORDS		32	/* 1024 bits of queue-name hashes */
#define MM_WAKE_BITS		(MM_WAKE_WORDS * 32)
#define MM_FAILURE_BACKOFF	10.0	/* seconds before a failed queue runs again */
#define MM_RESTART_DELAY	5	/* seconds before an exited worker is started again */
#define MM_RELEASE_WAIT		10	/* seconds a DROP DATABASE waits for the workers */
#define MM_TRANCHE			"matchmaker"

/* One queue of a database's shared schedule; name[0] == '\0': a free entry. */
typedef struct MMQueueSlot
{
	char		name[NAMEDATALEN];
	double		tick;			/* seconds */
	TimestampTz last_run;		/* when it ran last (0: never) */
	TimestampTz next_run;		/* due time of its next timer tick */
	TimestampTz failed_until;	/* after a failure, wake-ups wait until then */
	int			need_arrivals;	/* from its last tick: arrivals before an arrival wake-up matters */
	uint32		arrivals_base;	/* the arrival counter of its name hash when it last ran */
	int			running;		/* the worker running it, -1 when none */
	bool		woken;			/* an enqueue or cancel asked for a run */
	bool		seen;			/* still in matchmaker.queues (during a refresh) */
} MMQueueSlot;

/* One worker process of a database. */
typedef struct MMWorkerProc
{
	pid_t		pid;			/* 0 when it does not run */
	Latch	   *latch;
	bool		busy;			/* inside a queue's tick */
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
	pg_atomic_uint32 arrivals[MM_WAKE_BITS];	/* committed enqueues by name hash, ever growing */
} MMDatabase;

typedef struct MMShared
{
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	int			ndatabases;
	MMDatabase	dbs[MM_MAX_DATABASES];
	/* then ndatabases * mm_max_queues MMQueueSlot */
} MMShared;

static MMShared *mm_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/* The databases of matchmaker.database, read at server start. */
static int	mm_ndatabases = 0;
static char mm_db_names[MM_MAX_DATABASES][NAMEDATALEN];

/* Wake-ups (and arrivals) this backend owes the workers when its transaction commits. */
static uint32 pending_wake[MM_WAKE_WORDS];
static uint32 pending_arrivals[MM_WAKE_BITS];
static bool pending_any = false;

/* The database this backend keeps the workers out of until its transaction ends (-1: none). */
static int	holding_db = -1;

/* The bit of a queue name in a wake set. */
static uint32
wake_bit(const char *queue)
{
	return hash_bytes((const unsigned char *) queue, strlen(queue)) % MM_WAKE_BITS;
}

/* The shared schedule of database d. */
static MMQueueSlot *
db_queues(int d)
{
	return (MMQueueSlot *) ((char *) mm_shared + MAXALIGN(sizeof(MMShared))) +
		(Size) d * mm_max_queues;
}

static Size
mm_shmem_size(void)
{
	return add_size(MAXALIGN(sizeof(MMShared)),
					mul_size(sizeof(MMQueueSlot), mul_size(mm_ndatabases, mm_max_queues)));
}

/* Reserve shared memory and locks for the databases' slots. */
static void
mm_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(mm_shmem_size());
	RequestNamedLWLockTranche(MM_TRANCHE, MM_MAX_DATABASES);
}

/* Create or attach to the databases' slots. */
static void
mm_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	mm_shared = ShmemInitStruct("matchmaker", mm_shmem_size(), &found);
	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche(MM_TRANCHE);

		memset(mm_shared, 0, mm_shmem_size());
		mm_shared->ndatabases = mm_ndatabases;
		for (int d = 0; d < MM_MAX_DATABASES; d++)
		{
			MMDatabase *db = &mm_shared->dbs[d];

			if (d < mm_ndatabases)
				strlcpy(db->name, mm_db_names[d], NAMEDATALEN);
			db->dboid = InvalidOid;
			db->lock = &locks[d].lock;
			for (int w = 0; w < MM_WAKE_WORDS; w++)
				pg_atomic_init_u32(&db->wake[w], 0);
			for (int b = 0; b < MM_WAKE_BITS; b++)
				pg_atomic_init_u32(&db->arrivals[b], 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Remember to wake this database's workers for a queue when the current
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
 * The same for an arrival (enqueue): the workers also count arrivals per
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

/* Set the latches of a database's workers. */
static void
wake_workers(MMDatabase *db)
{
	pg_memory_barrier();
	for (int w = 0; w < MM_MAX_WORKERS; w++)
	{
		Latch	   *latch = db->workers[w].latch;

		if (latch != NULL)
			SetLatch(latch);
	}
}

/* Hand the pending wake-ups to this database's workers. */
static void
hand_wake_bits(void)
{
	for (int d = 0; d < mm_shared->ndatabases; d++)
	{
		MMDatabase *db = &mm_shared->dbs[d];

		if (db->dboid != MyDatabaseId)
			continue;
		for (int w = 0; w < MM_WAKE_WORDS; w++)
		{
			if (pending_wake[w] == 0)
				continue;
			for (int b = w * 32; b < w * 32 + 32; b++)
				if (pending_arrivals[b] != 0)
					pg_atomic_fetch_add_u32(&db->arrivals[b], pending_arrivals[b]);
			pg_atomic_fetch_or_u32(&db->wake[w], pending_wake[w]);
		}
		wake_workers(db);
	}
}

/* Let the launcher start the workers of the database this backend holds. */
static void
release_hold(void)
{
	MMDatabase *db = &mm_shared->dbs[holding_db];
	Latch	   *latch;

	LWLockAcquire(db->lock, LW_EXCLUSIVE);
	if (db->held_by == MyProcPid)
		db->held_by = 0;
	LWLockRelease(db->lock);
	holding_db = -1;
	latch = mm_shared->launcher_latch;
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * At commit, hand the pending wake-ups to the workers; at abort, forget
 * them.  At either, let go of a database held for DROP DATABASE and the
 * like.
 */
static void
mm_xact_callback(XactEvent event, void *arg)
{
	bool		end = (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
					   event == XACT_EVENT_PREPARE ||
					   event == XACT_EVENT_PARALLEL_COMMIT ||
					   event == XACT_EVENT_PARALLEL_ABORT);

	if (end && holding_db >= 0 && mm_shared != NULL)
		release_hold();
	if (!pending_any)
		return;
	if (event == XACT_EVENT_COMMIT && mm_shared != NULL)
		hand_wake_bits();

	/*
	 * A prepared transaction's tickets wake nobody: they wait for the
	 * queue's next timer or arrival after COMMIT PREPARED.
	 */
	if (end)
	{
		for (int w = 0; w < MM_WAKE_WORDS; w++)
			if (pending_wake[w] != 0)
				memset(&pending_arrivals[w * 32], 0, 32 * sizeof(uint32));
		memset(pending_wake, 0, sizeof(pending_wake));
		pending_any = false;
	}
}

/* Whether the workers of database db have all exited. */
static bool
workers_gone(MMDatabase *db)
{
	for (int w = 0; w < MM_MAX_WORKERS; w++)
		if (db->workers[w].pid != 0)
			return false;
	return true;
}

/*
 * Before a statement that needs the database named dbname to have no
 * other session: when it is a worker's database and the current role owns
 * it, ask its workers to exit (cancelling a tick in progress, which rolls
 * back), keep the launcher from starting them until this transaction
 * ends, and wait for them to be gone, MM_RELEASE_WAIT seconds at most
 * (PostgreSQL then waits 5 s more for the sessions it counts).
 */
static void
release_database(const char *dbname)
{
	Oid			dboid;
	int			d;
	MMDatabase *db = NULL;
	TimestampTz give_up;

	if (mm_shared == NULL || dbname == NULL)
		return;
	for (d = 0; d < mm_shared->ndatabases; d++)
		if (strcmp(mm_shared->dbs[d].name, dbname) == 0)
		{
			db = &mm_shared->dbs[d];
			break;
		}
	if (db == NULL || holding_db >= 0)
		return;
	/* a role that may not run the statement must not stop the workers either */
	dboid = get_database_oid(dbname, true);
	if (!OidIsValid(dboid) || !pg_database_ownercheck(dboid, GetUserId()))
		return;

	LWLockAcquire(db->lock, LW_EXCLUSIVE);
	db->held_by = MyProcPid;
	db->stop = true;
	holding_db = d;
	for (int w = 0; w < MM_MAX_WORKERS; w++)
		if (db->workers[w].pid != 0 && db->workers[w].busy)
			kill(db->workers[w].pid, SIGINT);
	LWLockRelease(db->lock);
	wake_workers(db);
	elog(DEBUG1, "matchmaker: stopping the workers of database \"%s\"", dbname);

	give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), MM_RELEASE_WAIT * 1000);
	while (!workers_gone(db) && GetCurrentTimestamp() < give_up)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* The value of a statement's option, or NULL. */
static const char *
option_string(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *def = (DefElem *) lfirst(lc);

		if (strcmp(def->defname, name) == 0 && def->arg != NULL)
			return defGetString(def);
	}
	return NULL;
}

/*
 * The ProcessUtility hook: before DROP DATABASE, ALTER DATABASE ... RENAME
 * or SET TABLESPACE of a worker's database, or CREATE DATABASE from it as
 * template, the workers let go of it.
 */
static void
mm_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	const char *dbname = NULL;

	switch (nodeTag(parsetree))
	{
		case T_DropdbStmt:
			dbname = ((DropdbStmt *) parsetree)->dbname;
			break;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
				dbname = ((RenameStmt *) parsetree)->subname;
			break;
		case T_AlterDatabaseStmt:
			if (option_string(((AlterDatabaseStmt *) parsetree)->options, "tablespace") != NULL)
				dbname = ((AlterDatabaseStmt *) parsetree)->dbname;
			break;
		case T_CreatedbStmt:
			dbname = option_string(((CreatedbStmt *) parsetree)->options, "template");
			break;
		default:
			break;
	}
	if (dbname != NULL)
		release_database(dbname);

	if (prev_process_utility_hook)
		prev_process_utility_hook(pstmt, queryString, readOnlyTree, context, params,
								  queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params,
								queryEnv, dest, qc);
}

/*
 * Watch this backend's commits for wake-ups and, when loaded by
 * shared_preload_libraries, reserve shared memory, hook the statements
 * that need a database to themselves, and register the launcher
 * (mm_settings_init has run).
 */
void
mm_worker_init(void)
{
	char	   *rawlist;
	List	   *names = NIL;
	BackgroundWorker worker;

	RegisterXactCallback(mm_xact_callback, NULL);

	if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
		return;

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
	mm_ndatabases = 0;
	for (ListCell *lc = list_head(names); lc != NULL; lc = lnext(names, lc))
	{
		const char *db = (const char *) lfirst(lc);
		bool		dup = false;

		for (int d = 0; d < mm_ndatabases; d++)
			dup |= strcmp(mm_db_names[d], db) == 0;
		if (!dup)
			strlcpy(mm_db_names[mm_ndatabases++], db, NAMEDATALEN);
	}

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = mm_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = mm_shmem_startup;
	prev_process_utility_hook = ProcessUtility_hook;
	ProcessUtility_hook = mm_process_utility;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = MM_RESTART_DELAY;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "matchmaker");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "mm_launcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "matchmaker launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "matchmaker launcher");
	RegisterBackgroundWorker(&worker);
}

/* ----------------------------------------------------------------
 * The launcher
 * ----------------------------------------------------------------
 */

/* What the launcher knows of a database's workers. */
typedef struct LauncherDb
{
	BackgroundWorkerHandle *handles[MM_MAX_WORKERS];
	TimestampTz restart_at;		/* no start before then */
	bool		missing_logged; /* said that the database does not exist */
	bool		start_failed_logged;	/* said that no worker slot was free */
} LauncherDb;

static void
mm_launcher_exit(int code, Datum arg)
{
	if (mm_shared != NULL && mm_shared->launcher_pid == MyProcPid)
	{
		mm_shared->launcher_latch = NULL;
		mm_shared->launcher_pid = 0;
	}
}

/*
 * The oid of the database of that name, else InvalidOid.  The launcher is
 * connected to no database: it reads the shared catalog pg_database with
 * a heap scan, as its indexes cannot be opened without a database.
 */
static Oid
launcher_database_oid(const char *name)
{
	Oid			oid = InvalidOid;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database form = (Form_pg_database) GETSTRUCT(tup);

		if (strcmp(NameStr(form->datname), name) == 0)
		{
			oid = form->oid;
			break;
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return oid;
}

/* Whether worker w of database d runs or is being started. */
static bool
launcher_worker_alive(LauncherDb *ld, MMDatabase *db, int w, bool *exited)
{
	pid_t		pid;

	*exited = false;
	if (ld->handles[w] != NULL)
	{
		if (GetBackgroundWorkerPid(ld->handles[w], &pid) != BGWH_STOPPED)
			return true;
		pfree(ld->handles[w]);
		ld->handles[w] = NULL;
		*exited = true;
	}
	return db->workers[w].pid != 0;
}

/* Register worker w of database d, connected to dboid. */
static bool
launcher_start_worker(LauncherDb *ld, int d, int w, Oid dboid)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "matchmaker");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "mm_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "matchmaker worker %d for database %s", w + 1,
			 mm_shared->dbs[d].name);
	snprintf(worker.bgw_type, BGW_MAXLEN, "matchmaker worker");
	memcpy(worker.bgw_extra, &dboid, sizeof(Oid));
	worker.bgw_main_arg = Int32GetDatum(d * MM_MAX_WORKERS + w);
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, &ld->handles[w]);
}

/*
 * Start the missing workers of database d when it is not held and not
 * backing off.  Returns how long to wait before looking again, in ms.
 */
static long
launcher_serve_database(LauncherDb *ld, int d, long timeout)
{
	MMDatabase *db = &mm_shared->dbs[d];
	TimestampTz now = GetCurrentTimestamp();
	bool		missing[MM_MAX_WORKERS];
	int			nmissing = 0;
	bool		any_alive = false;
	pid_t		held_by;
	Oid			dboid;

	for (int w = 0; w < MM_MAX_WORKERS; w++)
	{
		bool		exited;
		bool		alive = launcher_worker_alive(ld, db, w, &exited);

		/* a worker that exited unasked is started again after a delay */
		if (exited && !alive && !db->stop)
			ld->restart_at = Max(ld->restart_at,
								 TimestampTzPlusMilliseconds(now, MM_RESTART_DELAY * 1000));
		missing[w] = !alive && w < mm_workers_per_database;
		nmissing += missing[w];
		any_alive |= alive;
	}

	/* a hold lasts until its backend's transaction ends (or the backend is gone) */
	LWLockAcquire(db->lock, LW_EXCLUSIVE);
	held_by = db->held_by;
	if (held_by != 0 && BackendPidGetProc(held_by) == NULL)
		db->held_by = held_by = 0;
	if (held_by == 0 && db->stop && !any_alive)
		db->stop = false;
	LWLockRelease(db->lock);
	if (held_by != 0 || db->stop || nmissing == 0)
		return timeout;
	if (now < ld->restart_at)
		return Min(timeout, Max((long) ((ld->restart_at - now) / 1000), 1));

	dboid = launcher_database_oid(db->name);
	if (!OidIsValid(dboid))
	{
		if (!ld->missing_logged)
			ereport(LOG,
					(errmsg("matchmaker: database \"%s\" of matchmaker.database does not exist; no worker runs its queues",
							db->name),
					 errhint("Create the database, or remove it from matchmaker.database; the launcher starts its workers once it exists.")));
		ld->missing_logged = true;
		return timeout;
	}
	ld->missing_logged = false;

	LWLockAcquire(db->lock, LW_EXCLUSIVE);
	if (db->dboid != dboid)
	{
		/* another database than before under that name: a fresh schedule */
		if (!any_alive)
		{
			memset(db_queues(d), 0, sizeof(MMQueueSlot) * mm_max_queues);
			for (int w = 0; w < MM_WAKE_WORDS; w++)
				pg_atomic_write_u32(&db->wake[w], 0);
			db->overflow_warned = false;
		}
		db->dboid = dboid;
	}
	LWLockRelease(db->lock);

	for (int w = 0; w < mm_workers_per_database; w++)
	{
		if (!missing[w])
			continue;
		if (!launcher_start_worker(ld, d, w, dboid))
		{
			if (!ld->start_failed_logged)
				ereport(WARNING,
						(errmsg("matchmaker: could not start a worker for database \"%s\": no background worker slot is free",
								db->name),
						 errhint("Raise max_worker_processes: the launcher needs one, and each database of matchmaker.database matchmaker.workers_per_database.")));
			ld->start_failed_logged = true;
			ld->restart_at = TimestampTzPlusMilliseconds(now, MM_RESTART_DELAY * 1000);
			return Min(timeout, MM_RESTART_DELAY * 1000L);
		}
	}
	ld->start_failed_logged = false;
	return timeout;
}

/* The launcher's entry point. */
void
mm_launcher_main(Datum main_arg)
{
	LauncherDb	ldbs[MM_MAX_DATABASES];

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	memset(ldbs, 0, sizeof(ldbs));
	mm_shared->launcher_pid = MyProcPid;
	pg_write_barrier();
	mm_shared->launcher_latch = MyLatch;
	on_shmem_exit(mm_launcher_exit, (Datum) 0);

	for (;;)
	{
		long		timeout = mm_naptime;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		for (int d = 0; d < mm_shared->ndatabases; d++)
			timeout = launcher_serve_database(&ldbs[d], d, timeout);

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* ----------------------------------------------------------------
 * The workers
 * ----------------------------------------------------------------
 */

/* What a worker takes from the schedule to run a queue. */
typedef struct ClaimedQueue
{
	int			index;			/* in the schedule */
	char		name[NAMEDATALEN];
	double		tick;
	TimestampTz last_run;
} ClaimedQueue;

static MMDatabase *my_db = NULL;
static MMQueueSlot *my_queues = NULL;
static int	my_index = -1;		/* the worker's number in its database */

static bool refresh_queues_guts(MemoryContext loopcxt);

/* Let go of the worker's slot and of a queue it was running. */
static void
mm_worker_exit(int code, Datum arg)
{
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
	LWLockRelease(my_db->lock);
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
 * own).  Returns false when the extension is absent, being created or
 * dropped, or the server is in recovery: then there is nothing to do, and
 * nothing is logged above DEBUG1, so an idle worker leaves the log alone.
 */
static bool
refresh_queues(MemoryContext loopcxt)
{
	volatile bool ok = false;

	PG_TRY();
	{
		ok = refresh_queues_guts(loopcxt);
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
	bool		placed;			/* has its entry in the schedule */
} ListedQueue;

/* Merge the queues read (a hash table of ListedQueue) into the schedule. */
static void
merge_queues(HTAB *listed)
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
		q->running = -1;
	}
	LWLockRelease(my_db->lock);
}

/* The body of refresh_queues, which may raise an error. */
static bool
refresh_queues_guts(MemoryContext loopcxt)
{
	bool		ok = false;
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
	if (!RecoveryInProgress() && OidIsValid(get_extension_oid("matchmaker", true)))
	{
		SPI_connect();
		if (SPI_execute("SELECT name, tick FROM matchmaker.queues", true, 0) == SPI_OK_SELECT)
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
				lq->placed = false;
			}
			ok = true;
		}
		SPI_finish();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (ok)
		merge_queues(listed);
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
		bit = wake_bit(q->name);
		if (woken && (bits[bit / 32] & ((uint32) 1 << (bit % 32))))
			q->woken = true;
		if (q->running >= 0)
			continue;

		/*
		 * A queue that its last tick left needing more arrivals runs on a
		 * wake-up only once that many have come (the counter is shared by
		 * queues of the same name hash, so at worst it runs early, never
		 * late); a queue backing off after a failure ignores wake-ups.
		 */
		if (q->woken &&
			((q->need_arrivals > 0 &&
			  pg_atomic_read_u32(&my_db->arrivals[bit]) - q->arrivals_base <
			  (uint32) q->need_arrivals) ||
			 now < q->failed_until))
			q->woken = false;
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
		q->woken = false;
		/* arrivals from here on count for the next run (some also for this one: early, not late) */
		q->arrivals_base = pg_atomic_read_u32(&my_db->arrivals[wake_bit(q->name)]);
		claim->index = best;
		strlcpy(claim->name, q->name, NAMEDATALEN);
		claim->tick = q->tick;
		claim->last_run = q->last_run;
		my_db->workers[my_index].busy = true;
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
		q->failed_until = outcome->failed_until;
		q->need_arrivals = outcome->need_arrivals;
		q->running = -1;
	}
	my_db->workers[my_index].busy = false;
	LWLockRelease(my_db->lock);
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
	snprintf(activity, sizeof(activity), "tick queue %s", claim->name);
	pgstat_report_activity(STATE_RUNNING, activity);

	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		SPI_connect();
		info.prev_step = claim->last_run;
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
			outcome.next_run = Min(now + (TimestampTz) (tick * USECS_PER_SEC), info.next_deadline);
			outcome.need_arrivals = info.need_arrivals;
			elog(DEBUG1, "matchmaker: queue \"%s\" made %d matches", claim->name, made);
		}
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(loopcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		if (my_db->stop)
			proc_exit(0);
		ereport(WARNING,
				(errmsg("matchmaker: queue \"%s\" failed: %s", claim->name, edata->message),
				 edata->detail ? errdetail("%s", edata->detail) : 0,
				 errhint("The worker runs the queue again in %g seconds; the other queues go on.",
						 Max(tick, MM_FAILURE_BACKOFF))));
		FreeErrorData(edata);
		outcome.next_run = now + (TimestampTz) (Max(tick, MM_FAILURE_BACKOFF) * USECS_PER_SEC);
		outcome.failed_until = outcome.next_run;
	}
	PG_END_TRY();
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
 * Run due queues one at a time until none is due, or every queue of the
 * schedule has had a turn (then the list of queues is read again first).
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
		idle_interrupts();
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

/* The worker's entry point. */
void
mm_worker_main(Datum main_arg)
{
	int			arg = DatumGetInt32(main_arg);
	Oid			dboid;
	MemoryContext loopcxt;

	memcpy(&dboid, MyBgworkerEntry->bgw_extra, sizeof(Oid));
	my_db = &mm_shared->dbs[arg / MM_MAX_WORKERS];
	my_queues = db_queues(arg / MM_MAX_WORKERS);
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
	my_db->workers[my_index].latch = MyLatch;
	LWLockRelease(my_db->lock);
	on_shmem_exit(mm_worker_exit, (Datum) 0);

	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	/* a tick needs READ COMMITTED, whatever the server's default */
	SetConfigOption("default_transaction_isolation", "read committed", PGC_SUSET, PGC_S_OVERRIDE);
	check_database_name();

	loopcxt = AllocSetContextCreate(TopMemoryContext, "matchmaker worker loop", ALLOCSET_DEFAULT_SIZES);

	ereport(LOG, (errmsg("matchmaker worker %d of %d started for database \"%s\"",
						 my_index + 1, mm_workers_per_database, my_db->name)));

	for (;;)
	{
		long		timeout = mm_naptime;

		idle_interrupts();
		if (ConfigReloadPending)
			reload_settings();

		MemoryContextSwitchTo(loopcxt);
		if (mm_enabled && refresh_queues(loopcxt))
		{
			/* the transactions above leave TopMemoryContext current */
			MemoryContextSwitchTo(loopcxt);
			timeout = run_due_queues(timeout, loopcxt);
		}
		pgstat_report_activity(STATE_IDLE, NULL);
		MemoryContextReset(loopcxt);

		if (timeout > 0)
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
