/*
 * launcher.c
 *		The workers' launcher, and the hook that makes the workers let go of
 *		a database.
 *
 * With shared_preload_libraries = 'matchmaker', a launcher (a background
 * worker connected to no database, like PostgreSQL's logical replication
 * launcher) starts matchmaker.workers_per_database workers (worker.c) for
 * each database of matchmaker.database that exists, restarts one that
 * exits 5 s later, and logs once that a named database does not exist.
 *
 * DROP DATABASE, ALTER DATABASE ... RENAME and SET TABLESPACE of a
 * worker's database, and CREATE DATABASE with it as template, need no
 * other session in it: a ProcessUtility hook, in the backend that runs
 * the statement and when its role owns the database, asks that database's
 * workers to exit (cancelling a tick in progress), waits for them, and
 * keeps the launcher from starting them again until its transaction ends.
 */
#include "schedule.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include <signal.h>

PGDLLEXPORT void mm_launcher_main(Datum main_arg);

#define MM_RESTART_DELAY	5	/* seconds before an exited worker is started again */
#define MM_RELEASE_WAIT		10	/* seconds a DROP DATABASE waits for the workers */

static ProcessUtility_hook_type prev_process_utility_hook = NULL;

/* The database this backend keeps the workers out of until its transaction ends (-1: none). */
static int	holding_db = -1;

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

/* When the transaction ends, let go of a database held for DROP DATABASE and the like. */
static void
mm_hold_xact_callback(XactEvent event, void *arg)
{
	bool		end = (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
					   event == XACT_EVENT_PREPARE ||
					   event == XACT_EVENT_PARALLEL_COMMIT ||
					   event == XACT_EVENT_PARALLEL_ABORT);

	if (end && holding_db >= 0 && mm_shared != NULL)
		release_hold();
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
	mm_wake_workers(db);
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
 * Let go of a held database when this backend's transaction ends and, when
 * loaded by shared_preload_libraries, hook the statements that need a
 * database to themselves and register the launcher (mm_schedule_init has
 * run).
 */
void
mm_launcher_init(void)
{
	BackgroundWorker worker;

	RegisterXactCallback(mm_hold_xact_callback, NULL);

	if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
		return;

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
			memset(mm_db_queues(d), 0, sizeof(MMQueueSlot) * mm_max_queues);
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
