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
 * commits: the committing backend counts the arrival for the queue's name
 * hash in shared memory and, when the queue can use it, sets a bit for
 * that hash and the latch of an idle worker (no lock, no NOTIFY).  A
 * queue whose last tick said how many more arrivals it needs before it can
 * match (a periodic batch, greedy's k) is not woken before they have come:
 * the enqueue only counts, and wakes nobody.  Bursts coalesce: the bits
 * pile up while the workers are busy and one tick serves them all.
 * create_queue, alter_queue and drop_queue bump a version at commit, which
 * tells the workers to read matchmaker.queues again.
 */
#include "schedule.h"

#include "access/xact.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#define MM_TRANCHE			"matchmaker"

MMShared   *mm_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* The databases of matchmaker.database, read at server start. */
static int	mm_ndatabases = 0;
static char mm_db_names[MM_MAX_DATABASES][NAMEDATALEN];

/*
 * Wake-ups (cancel), arrivals (enqueue, by bit, with the words that have
 * some) and queue changes this backend owes the workers when its
 * transaction commits.
 */
static uint32 pending_wake[MM_WAKE_WORDS];
static uint32 pending_arrival_words[MM_WAKE_WORDS];
static uint32 pending_arrivals[MM_WAKE_BITS];
static bool pending_queues = false;
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
			{
				pg_atomic_init_u64(&db->arrivals[b], 0);
				pg_atomic_init_u64(&db->wake_at[b], 0);
			}
			pg_atomic_init_u32(&db->queues_version, 0);
			for (int w = 0; w < MM_MAX_WORKERS; w++)
			{
				pg_atomic_init_u64(&db->workers[w].armed_until, 0);
				pg_atomic_init_u32(&db->workers[w].running, 0);
				for (int i = 0; i < MM_WAKE_WORDS; i++)
					pg_atomic_init_u32(&db->workers[w].armed[i], 0);
			}
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * Remember to wake this database's workers for a queue when the current
 * transaction commits (cancel calls it).  Without the preloaded library
 * there is no worker and nothing to do.
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
 * The same for an arrival (enqueue): counted at commit, it wakes the
 * workers only once the queue's last tick may be followed by a match (see
 * MMDatabase.wake_at).
 */
void
mm_arrival_on_commit(const char *queue)
{
	uint32		bit;

	if (mm_shared == NULL)
		return;
	bit = mm_wake_bit(queue);
	pending_arrival_words[bit / 32] |= (uint32) 1 << (bit % 32);
	pending_arrivals[bit]++;
	pending_any = true;
}

/* A queue is created, altered or dropped: the workers read the queues again after commit. */
void
mm_queues_changed_on_commit(void)
{
	if (mm_shared == NULL)
		return;
	pending_queues = true;
	pending_any = true;
}

/* Set the latches of a database's workers (to stop them, or to read the queues again). */
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

/*
 * Set the latches of up to n workers that are not inside a tick (n: the
 * queues this commit woke; a woken worker runs one queue at a time, so two
 * queues woken by one commit need two workers when one of them is slow);
 * an idle worker already woken counts as one.  A worker inside a tick
 * looks at the wake bits when it ends (the bits are set before busy is
 * read here, and it clears busy before it reads them).
 */
static void
wake_idle_workers(MMDatabase *db, int n)
{
	pg_memory_barrier();
	for (int w = 0; w < MM_MAX_WORKERS && n > 0; w++)
	{
		Latch	   *latch = db->workers[w].latch;

		if (latch == NULL || db->workers[w].busy)
			continue;
		/* one already woken serves one of the queues */
		if (!latch->is_set)
			SetLatch(latch);
		n--;
	}
}

/*
 * The arrival count from which an arrival of name hash bit wakes the
 * workers, after a queue of that hash ran or was added (caller holds the
 * database's lock): the least over its queues (see MMDatabase.wake_at).
 */
void
mm_set_wake_at(MMDatabase *db, MMQueueSlot *queues, uint32 bit)
{
	uint64		at = PG_UINT64_MAX;

	for (int i = 0; i < mm_max_queues; i++)
	{
		MMQueueSlot *q = &queues[i];

		if (q->name[0] == '\0' || q->wake_bit != bit)
			continue;
		at = Min(at, q->need_arrivals > 0 ? q->arrivals_base + (uint64) q->need_arrivals : 0);
	}
	/* no queue of that hash known yet (a new one): any arrival wakes */
	pg_atomic_write_u64(&db->wake_at[bit], at == PG_UINT64_MAX ? 0 : at);
}

/*
 * Take out of set the name hashes that a sleeping worker of db is armed
 * for (see MMWorkerProc): it runs their queues when it wakes by itself.
 */
static void
leave_armed(MMDatabase *db, uint32 *set)
{
	TimestampTz now = 0;

	for (int i = 0; i < MM_MAX_WORKERS; i++)
	{
		MMWorkerProc *wp = &db->workers[i];
		uint64		until = pg_atomic_read_u64(&wp->armed_until);

		if (until == 0)
			continue;
		if (now == 0)
			now = GetCurrentTimestamp();
		if ((TimestampTz) until <= now)
			continue;
		pg_read_barrier();
		for (int w = 0; w < MM_WAKE_WORDS; w++)
			if (set[w] != 0)
				set[w] &= ~pg_atomic_read_u32(&wp->armed[w]);
	}
}

/*
 * Take out of set the name hashes whose queues a worker is running (see
 * MMWorkerProc): it reads their bits once the run ends.
 */
static void
leave_running(MMDatabase *db, uint32 *set)
{
	for (int i = 0; i < MM_MAX_WORKERS; i++)
	{
		uint32		running = pg_atomic_read_u32(&db->workers[i].running);

		if (running != 0)
			set[(running - 1) / 32] &= ~((uint32) 1 << ((running - 1) % 32));
	}
}

/*
 * Hand the pending wake-ups to this database's workers: count the
 * arrivals, set the bits of the queues that can use them (the count is
 * added, a full barrier, before wake_at is read; the worker writes
 * wake_at before it reads the count), and wake an idle worker per queue.
 * No worker is woken for the queues a sleeping worker is armed for
 * (leave_armed): those of its postponed runs, or every queue while
 * matchmaker.enabled is off (a disabled worker runs nothing; the one that
 * reads the bits once it is on again runs them); nor for a queue that a
 * worker is running (leave_running): it runs the queue again, if due, as
 * soon as the run ends.
 */
static void
hand_wake_bits(void)
{
	for (int d = 0; d < mm_shared->ndatabases; d++)
	{
		MMDatabase *db = &mm_shared->dbs[d];
		int			woken = 0;
		uint32		set[MM_WAKE_WORDS];

		if (db->dboid != MyDatabaseId)
			continue;
		for (int w = 0; w < MM_WAKE_WORDS; w++)
		{
			uint32		bits = pending_wake[w];

			for (int b = w * 32; pending_arrival_words[w] != 0 && b < w * 32 + 32; b++)
			{
				uint64		count;

				if (pending_arrivals[b] == 0)
					continue;
				count = pg_atomic_add_fetch_u64(&db->arrivals[b], pending_arrivals[b]);
				if (count >= pg_atomic_read_u64(&db->wake_at[b]))
					bits |= (uint32) 1 << (b % 32);
			}
			if (bits != 0)
				pg_atomic_fetch_or_u32(&db->wake[w], bits);
			set[w] = bits;
		}
		/* the bits are set (a full barrier) before the arms are read */
		leave_armed(db, set);
		leave_running(db, set);
		for (int w = 0; w < MM_WAKE_WORDS; w++)
			woken += pg_popcount32(set[w]);
		if (pending_queues)
		{
			pg_atomic_fetch_add_u32(&db->queues_version, 1);
			mm_wake_workers(db);
		}
		else if (woken > 0)
			wake_idle_workers(db, woken);
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
			if (pending_arrival_words[w] != 0)
				memset(&pending_arrivals[w * 32], 0, 32 * sizeof(uint32));
		memset(pending_wake, 0, sizeof(pending_wake));
		memset(pending_arrival_words, 0, sizeof(pending_arrival_words));
		pending_queues = false;
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
