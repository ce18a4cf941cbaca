/*
 * schedule.c
 *		The workers' shared memory and the wake-ups at commit.
 *
 * With shared_preload_libraries = 'matchmaker', shared memory holds, for
 * each database of matchmaker.database, its workers (pid, latch, whether
 * inside a tick) and the schedule of its queues (interval, last and next
 * run, the worker running it), which launcher.c and worker.c read and
 * write under the database's lock (see schedule.h).
 *
 * An enqueue or cancel asks for a run of its queue when its transaction
 * commits: the committing backend sets a bit for the queue's name hash in
 * shared memory, counts the arrival, and sets the workers' latches (no
 * lock, no NOTIFY).  Bursts coalesce: the bits pile up while the workers
 * are busy and one tick serves them all.
 */
#include "schedule.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/varlena.h"

#define MM_TRANCHE			"matchmaker"

MMShared   *mm_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The databases of matchmaker.database, read at server start. */
static int	mm_ndatabases = 0;
static char mm_db_names[MM_MAX_DATABASES][NAMEDATALEN];

/* Wake-ups (and arrivals) this backend owes the workers when its transaction commits. */
static uint32 pending_wake[MM_WAKE_WORDS];
static uint32 pending_arrivals[MM_WAKE_BITS];
static bool pending_any = false;

/* The bit of a queue name in a wake set. */
uint32
mm_wake_bit(const char *queue)
{
	return hash_bytes((const unsigned char *) queue, strlen(queue)) % MM_WAKE_BITS;
}

/* The shared schedule of database d. */
MMQueueSlot *
mm_db_queues(int d)
{
	return (MMQueueSlot *) ((char *) mm_shared + MAXALIGN(sizeof(MMShared))) +
		(Size) d * mm_max_queues;
}

/* The size of the workers' shared memory. */
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
	bit = mm_wake_bit(queue);
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
	pending_arrivals[mm_wake_bit(queue)]++;
}

/* Set the latches of a database's workers. */
void
mm_wake_workers(MMDatabase *db)
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
		mm_wake_workers(db);
	}
}

/* At commit, hand the pending wake-ups to the workers; at abort, forget them. */
static void
mm_wake_xact_callback(XactEvent event, void *arg)
{
	bool		end = (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
					   event == XACT_EVENT_PREPARE ||
					   event == XACT_EVENT_PARALLEL_COMMIT ||
					   event == XACT_EVENT_PARALLEL_ABORT);

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

/*
 * Watch this backend's commits for wake-ups and, when loaded by
 * shared_preload_libraries, read matchmaker.database and reserve the
 * shared memory of its databases (mm_settings_init has run).
 */
void
mm_schedule_init(void)
{
	char	   *rawlist;
	List	   *names = NIL;

	RegisterXactCallback(mm_wake_xact_callback, NULL);

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
}
