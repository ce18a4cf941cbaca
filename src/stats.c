/*
 * stats.c
 *		What matchmaker.queue_stats reads: per queue and 10-second bucket,
 *		what the ticks decided (matchmaker.queue_buckets, written by the
 *		tick that decided it), and the workers' last run of each queue
 *		(shared memory).
 *
 * A tick that matched or expired tickets adds its counts to the bucket
 * of its time with one upsert, and deletes the queue's buckets older than
 * MM_STATS_KEEP seconds; a tick that decided nothing writes nothing.  The
 * waits of the matched players go into a histogram of MM_WAIT_BUCKETS
 * logarithmic buckets (four per doubling from 0.1 s), from which
 * wait_quantile reads percentiles to within 19 % (a bucket spans a
 * factor of 2^(1/4)).  So queue_stats reads at
 * most MM_STATS_KEEP / 10 rows per queue, however long the history.
 *
 * A worker's ticks do not write these rows themselves: each tick's counts
 * are held in the worker's memory once its transaction commits, and the
 * worker writes what it holds at most once a second (mm_stats_flush), one
 * upsert per queue and bucket instead of two or three per tick (measured:
 * the per-tick upserts took a sixth of a busy worker's time and 143 bytes
 * of WAL per matched player).  A crash or stop of the worker loses at most
 * the last second's counts (while writing them fails, all it holds), never
 * a match; a tick run by tick() writes its own.  Rows of a queue dropped
 * (or dropped and created again) before they are written are not written.
 * A client holding a lock on them costs the flush a lock_timeout, not the
 * worker's matching.
 *
 * The same tick adds its matched players' waits to a histogram per tenth
 * of the queue's rating range and minute (matchmaker.queue_bands, kept
 * MM_BAND_KEEP seconds), from which ticket_status estimates a waiting
 * ticket's remaining wait: at most MM_BAND_KEEP / MM_BAND_BUCKET rows of
 * one band (all bands when its own has nobody who waited as long).
 */
#include "matchmaker.h"
#include "schedule.h"

#include <math.h>

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* Seconds of a bucket, and how long a queue's buckets are kept. */
#define MM_STATS_BUCKET		10
#define MM_STATS_KEEP		(2 * 3600)

/* Waits: bucket 0 below 0.1 s, then four per doubling, the last open-ended. */
#define MM_WAIT_BUCKETS		116
#define MM_WAIT_FIRST		0.1
#define MM_WAIT_STEPS		4.0

/* Rating bands of the expected wait: tenths of the rating range, per minute, kept an hour. */
#define MM_BANDS			10
#define MM_BAND_BUCKET		60
#define MM_BAND_KEEP		3600

PG_FUNCTION_INFO_V1(mm_wait_quantile);
PG_FUNCTION_INFO_V1(mm_worker_queues);
PG_FUNCTION_INFO_V1(mm_waits_add);

/* The histogram bucket of a wait of seconds. */
static int
wait_bucket(double seconds)
{
	double		b;

	if (!(seconds >= MM_WAIT_FIRST))
		return 0;
	b = floor(log2(seconds / MM_WAIT_FIRST) * MM_WAIT_STEPS) + 1;
	return b >= MM_WAIT_BUCKETS - 1 ? MM_WAIT_BUCKETS - 1 : (int) b;
}

/* The lower bound of bucket b (seconds); 0 for the first. */
static double
bucket_low(int b)
{
	return b == 0 ? 0.0 : MM_WAIT_FIRST * pow(2.0, (b - 1) / MM_WAIT_STEPS);
}

/*
 * The wait at fraction f (0 to 1) of the way through bucket b: linear from
 * 0 in the first bucket, logarithmic in the others (the last, open-ended,
 * taken as one step wide).
 */
static double
bucket_at(int b, double f)
{
	if (b == 0)
		return f * MM_WAIT_FIRST;
	return bucket_low(b) * pow(2.0, f / MM_WAIT_STEPS);
}

/* Where a wait of seconds lies within its bucket, 0 to 1 (the inverse of bucket_at). */
static double
bucket_position(double seconds)
{
	int			b = wait_bucket(seconds);
	double		f;

	if (b == 0)
		f = seconds / MM_WAIT_FIRST;
	else
		f = log2(seconds / bucket_low(b)) * MM_WAIT_STEPS;
	return f > 0 ? (f < 1 ? f : 1) : 0;
}

/* The start of the bucket of width seconds that holds t. */
static TimestampTz
bucket_floor(TimestampTz t, int width)
{
	TimestampTz w = (TimestampTz) width * USECS_PER_SEC;
	TimestampTz b = t - (t % w);

	return t < 0 && t % w != 0 ? b - w : b;
}

/* The band (0 to MM_BANDS - 1) of a rating normalised to the queue's range. */
static int
rating_band(double normalised)
{
	if (!(normalised > 0))
		return 0;
	if (normalised >= 1)
		return MM_BANDS - 1;
	return Min((int) floor(normalised * MM_BANDS), MM_BANDS - 1);
}

/*
 * Whether this backend should drop the old rows of queue's table kind
 * (0: buckets, 1: bands) for the bucket that starts at bucket: once per
 * bucket and queue, not at every tick (a small cache by name hash; a miss
 * only trims again, which changes nothing).
 */
#define MM_TRIM_SLOTS	64
static bool
trim_due(const char *queue, int kind, TimestampTz bucket)
{
	static struct
	{
		char		name[NAMEDATALEN];
		TimestampTz bucket;
	}			done[2][MM_TRIM_SLOTS];
	int			slot = (int) (hash_bytes((const unsigned char *) queue, strlen(queue)) % MM_TRIM_SLOTS);

	if (done[kind][slot].bucket == bucket && strncmp(done[kind][slot].name, queue, NAMEDATALEN) == 0)
		return false;
	strlcpy(done[kind][slot].name, queue, NAMEDATALEN);
	done[kind][slot].bucket = bucket;
	return true;
}

/* Delete queue's rows of kind (0: queue_buckets, 1: queue_bands) whose bucket starts before before. */
static void
trim_rows(int kind, const char *queue, TimestampTz before)
{
	static SPIPlanPtr plans[2];
	static const char *const sql[2] = {
		"DELETE FROM matchmaker.queue_buckets WHERE queue OPERATOR(pg_catalog.=) $1 "
		"AND bucket_start OPERATOR(pg_catalog.<) $2",
		"DELETE FROM matchmaker.queue_bands WHERE queue OPERATOR(pg_catalog.=) $1 "
		"AND bucket_start OPERATOR(pg_catalog.<) $2"
	};
	Oid			argtypes[2] = {TEXTOID, TIMESTAMPTZOID};
	Datum		values[2] = {CStringGetTextDatum(queue), TimestampTzGetDatum(before)};

	mm_keep_plan(&plans[kind], sql[kind], 2, argtypes);
	if (SPI_execute_plan(plans[kind], values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not trim the queue's statistics");
}

/* Whether the installed schema keeps statistics (0.3.0 on). */
static bool
stats_available(void)
{
	return mm_table_exists("queue_buckets");
}

/*
 * Add the waits of matched players (band_hist: MM_BANDS histograms one
 * after the other) to the queue's band rows of the minute that starts at
 * minute, and
 * drop its band rows older than MM_BAND_KEEP (once a bucket).  One
 * upsert of the bands that matched someone.
 */
static void
record_bands(const char *queue, TimestampTz minute, const int64 *band_hist)
{
	static SPIPlanPtr add_plan;
	Oid			argtypes[4] = {TEXTOID, TIMESTAMPTZOID, INT2ARRAYOID, INT8ARRAYOID};
	Datum		values[4];
	Datum		bands[MM_BANDS];
	Datum	   *waits = palloc(sizeof(Datum) * MM_BANDS * MM_WAIT_BUCKETS);
	int			nbands = 0;

	for (int band = 0; band < MM_BANDS; band++)
	{
		const int64 *h = band_hist + band * MM_WAIT_BUCKETS;
		bool		any = false;

		for (int b = 0; b < MM_WAIT_BUCKETS && !any; b++)
			any = h[b] > 0;
		if (!any)
			continue;
		for (int b = 0; b < MM_WAIT_BUCKETS; b++)
			waits[nbands * MM_WAIT_BUCKETS + b] = Int64GetDatum(h[b]);
		bands[nbands++] = Int16GetDatum(band);
	}
	if (nbands == 0)
		return;

	/* row i of the bands takes elements (i - 1) * MM_WAIT_BUCKETS + 1 on of the waits */
	mm_keep_generic_plan(&add_plan,
				 "INSERT INTO matchmaker.queue_bands AS s (queue, band, bucket_start, waits) "
				 "SELECT $1, u.band, $2, "
				 "$4[((u.i OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.*) " CppAsString2(MM_WAIT_BUCKETS)
				 " OPERATOR(pg_catalog.+) 1):(u.i OPERATOR(pg_catalog.*) " CppAsString2(MM_WAIT_BUCKETS) ")] "
				 "FROM pg_catalog.unnest($3) WITH ORDINALITY AS u(band, i) "
				 "ON CONFLICT (queue, band, bucket_start) DO UPDATE SET "
				 "waits = matchmaker.waits_add(s.waits, excluded.waits)",
				 4, argtypes);
	values[0] = CStringGetTextDatum(queue);
	values[1] = TimestampTzGetDatum(minute);
	values[2] = PointerGetDatum(construct_array(bands, nbands, INT2OID, 2, true, TYPALIGN_SHORT));
	values[3] = PointerGetDatum(construct_array(waits, nbands * MM_WAIT_BUCKETS, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (SPI_execute_plan(add_plan, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the queue's waits by rating");
	pfree(waits);
	if (trim_due(queue, 1, minute))
		trim_rows(1, queue, minute - (TimestampTz) MM_BAND_KEEP * USECS_PER_SEC);
}

/* What ticks add to a queue's bucket row. */
typedef struct BucketCounts
{
	int64		matches;
	int64		players;
	int64		bot_games;
	int64		expired;
	double		cost;
	int64		waits[MM_WAIT_BUCKETS];
} BucketCounts;

/*
 * Add counts to queue's bucket that starts at bucket, and drop its buckets
 * older than MM_STATS_KEEP (once a bucket).
 */
static void
record_bucket(const char *queue, TimestampTz bucket, const BucketCounts *c)
{
	static SPIPlanPtr add_plan;
	Oid			argtypes[8] = {TEXTOID, TIMESTAMPTZOID, INT8OID, INT8OID, INT8OID, INT8OID,
	FLOAT8OID, INT8ARRAYOID};
	Datum		values[8];
	Datum		waits[MM_WAIT_BUCKETS];

	for (int b = 0; b < MM_WAIT_BUCKETS; b++)
		waits[b] = Int64GetDatum(c->waits[b]);
	mm_keep_generic_plan(&add_plan,
				 "INSERT INTO matchmaker.queue_buckets AS s "
				 "(queue, bucket_start, matches, players, bot_games, expired, cost, waits) "
				 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
				 "ON CONFLICT (queue, bucket_start) DO UPDATE SET "
				 "matches = s.matches OPERATOR(pg_catalog.+) excluded.matches, "
				 "players = s.players OPERATOR(pg_catalog.+) excluded.players, "
				 "bot_games = s.bot_games OPERATOR(pg_catalog.+) excluded.bot_games, "
				 "expired = s.expired OPERATOR(pg_catalog.+) excluded.expired, "
				 "cost = s.cost OPERATOR(pg_catalog.+) excluded.cost, "
				 "waits = matchmaker.waits_add(s.waits, excluded.waits)",
				 8, argtypes);
	values[0] = CStringGetTextDatum(queue);
	values[1] = TimestampTzGetDatum(bucket);
	values[2] = Int64GetDatum(c->matches);
	values[3] = Int64GetDatum(c->players);
	values[4] = Int64GetDatum(c->bot_games);
	values[5] = Int64GetDatum(c->expired);
	values[6] = Float8GetDatum(c->cost);
	values[7] = PointerGetDatum(construct_array(waits, MM_WAIT_BUCKETS, INT8OID, 8,
												FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (SPI_execute_plan(add_plan, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the queue's statistics");

	if (trim_due(queue, 0, bucket))
		trim_rows(0, queue, bucket - (TimestampTz) MM_STATS_KEEP * USECS_PER_SEC);
}

/*
 * The statistics a worker holds (see the header comment): per queue (and
 * its created_at), bucket start and band (-1 for the queue's bucket row,
 * else the band's row of the minute), the counts of the ticks committed
 * and not yet written (held), and of the current transaction's (pending).
 */
typedef struct HeldKey
{
	char		queue[NAMEDATALEN];
	TimestampTz created_at;
	TimestampTz bucket;
	int32		band;
} HeldKey;

typedef struct HeldRow
{
	HeldKey		key;
	bool		done;			/* written (or gone) by the flush under way */
	BucketCounts counts;		/* a band's row uses counts.waits only */
} HeldRow;

static bool stats_deferred = false;
static HTAB *pending_rows;
static HTAB *held_rows;
static TimestampTz flush_due;	/* when the held rows are written next */
static bool flushing;			/* a flush's transaction is under way */
static int	flush_failures;		/* flushes in a row in which a queue failed */

static HTAB *
held_table(const char *name)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(HeldKey);
	ctl.entrysize = sizeof(HeldRow);
	ctl.hcxt = TopMemoryContext;
	return hash_create(name, 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* Add c to the row of key in table; false when memory ran out (the counts are then dropped). */
static bool
held_add(HTAB *table, const HeldKey *key, const BucketCounts *c)
{
	bool		found;
	HeldRow    *row = hash_search(table, key, HASH_ENTER_NULL, &found);

	if (row == NULL)
		return false;
	if (!found)
	{
		memset(&row->counts, 0, sizeof(row->counts));
		row->done = false;
	}
	row->counts.matches += c->matches;
	row->counts.players += c->players;
	row->counts.bot_games += c->bot_games;
	row->counts.expired += c->expired;
	row->counts.cost += c->cost;
	for (int b = 0; b < MM_WAIT_BUCKETS; b++)
		row->counts.waits[b] += c->waits[b];
	return true;
}

static void
held_key(HeldKey *key, const MMQueue *queue, TimestampTz bucket, int band)
{
	memset(key, 0, sizeof(*key));
	strlcpy(key->queue, queue->name, NAMEDATALEN);
	key->created_at = queue->created_at;
	key->bucket = bucket;
	key->band = band;
}

/* Remove every row of table (the done ones only, when done_only). */
static void
held_clear(HTAB *table, bool done_only)
{
	HASH_SEQ_STATUS seq;
	HeldRow    *row;

	if (table == NULL)
		return;
	hash_seq_init(&seq, table);
	while ((row = hash_seq_search(&seq)) != NULL)
		if (!done_only || row->done)
			(void) hash_search(table, &row->key, HASH_REMOVE, NULL);
}

/*
 * At commit, the transaction's counts join the held ones (and a flush's
 * written rows go); at abort they go (and a flush's rows stay held).
 * Nothing here may fail: the commit is already durable.
 */
static void
stats_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS seq;
	HeldRow    *row;

	if (event == XACT_EVENT_COMMIT)
	{
		if (flushing)
			held_clear(held_rows, true);
		if (hash_get_num_entries(pending_rows) > 0)
		{
			if (hash_get_num_entries(held_rows) == 0)
				flush_due = GetCurrentTimestamp() + USECS_PER_SEC;
			hash_seq_init(&seq, pending_rows);
			while ((row = hash_seq_search(&seq)) != NULL)
				(void) held_add(held_rows, &row->key, &row->counts);
			held_clear(pending_rows, false);
		}
	}
	else if (event == XACT_EVENT_ABORT)
	{
		held_clear(pending_rows, false);
		if (flushing)
		{
			hash_seq_init(&seq, held_rows);
			while ((row = hash_seq_search(&seq)) != NULL)
				row->done = false;
			/* the whole flush failed: try again later, as after a queue's failure */
			flush_failures = Min(flush_failures + 1, 6);
			flush_due = GetCurrentTimestamp() + ((TimestampTz) 1 << flush_failures) * USECS_PER_SEC;
		}
	}
	else
		return;
	flushing = false;
}

/* Worker: from now on this process's ticks hold their statistics (see the header comment). */
void
mm_stats_defer(void)
{
	if (stats_deferred)
		return;
	pending_rows = held_table("matchmaker statistics of this transaction");
	held_rows = held_table("matchmaker statistics held");
	RegisterXactCallback(stats_xact_callback, NULL);
	stats_deferred = true;
}

/*
 * When the held statistics are due to be written (DT_NOEND when none are
 * held): a second after the first of them was held, or after the last
 * flush; later after failures (see mm_stats_flush).
 */
TimestampTz
mm_stats_due(void)
{
	if (!stats_deferred || hash_get_num_entries(held_rows) == 0)
		return DT_NOEND;
	return flush_due;
}

/* qsort: held rows by queue, created_at, band, bucket. */
static int
held_cmp(const void *a, const void *b)
{
	const HeldKey *x = &(*(HeldRow *const *) a)->key;
	const HeldKey *y = &(*(HeldRow *const *) b)->key;
	int			c = strcmp(x->queue, y->queue);

	if (c != 0)
		return c;
	if (x->created_at != y->created_at)
		return x->created_at < y->created_at ? -1 : 1;
	if (x->band != y->band)
		return x->band < y->band ? -1 : 1;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return 0;
}

/* One queue's share of a flush (flush_queue). */
typedef struct FlushQueue
{
	HeldRow   **rows;			/* the queue's held rows */
	int			n;
	bool		keep;			/* out: hold them for the next flush */
} FlushQueue;

/*
 * Write one queue's held rows (in a subtransaction of the flush), under
 * its enqueue lock in share mode, which drop_queue takes exclusively
 * before it removes the queue's rows: a queue being dropped keeps its rows
 * for the next flush; the rows of a queue gone, or dropped and created
 * again since, are dropped.
 */
static void
flush_queue(void *arg)
{
	FlushQueue *f = arg;
	const HeldKey *first = &f->rows[0]->key;
	MMQueue		queue;

	f->keep = false;
	if (!mm_lock_queue_key(first->queue, MM_LOCK_KIND_ENQUEUE, 0, ShareLock, false))
	{
		f->keep = true;
		return;
	}
	memset(&queue, 0, sizeof(queue));
	if (!mm_load_queue(first->queue, MM_LOCK_NONE, &queue) || queue.created_at != first->created_at)
		return;
	for (int i = 0; i < f->n; i++)
	{
		const HeldKey *key = &f->rows[i]->key;

		if (key->band < 0)
			record_bucket(key->queue, key->bucket, &f->rows[i]->counts);
		else
		{
			int64	   *band_hist = palloc0(sizeof(int64) * MM_BANDS * MM_WAIT_BUCKETS);

			memcpy(band_hist + key->band * MM_WAIT_BUCKETS, f->rows[i]->counts.waits,
				   sizeof(int64) * MM_WAIT_BUCKETS);
			record_bands(key->queue, key->bucket, band_hist);
			pfree(band_hist);
		}
	}
}

/*
 * Write the held statistics (worker, in a transaction of its own, SPI
 * connected), each queue in a subtransaction of its own with lock_timeout
 * MM_FLUSH_LOCK_TIMEOUT ms: a lock a client holds on a queue's statistics
 * rows (a tick() left open) or on the tables costs the worker that long,
 * not its matching, and that queue's rows stay held, as do those of a
 * queue whose write fails.  Rows older than their tables keep are dropped
 * unwritten (a long failure holds at most that much).  Written rows leave
 * the held ones when the transaction commits.  After a flush in which a
 * queue failed the next one waits twice as long, up to a minute; the
 * first failure of a streak is logged (returned, in the current memory
 * context; NULL when none).
 */
#define MM_FLUSH_LOCK_TIMEOUT	"100"
ErrorData *
mm_stats_flush(void)
{
	HASH_SEQ_STATUS seq;
	HeldRow    *row;
	HeldRow   **rows;
	int			n = 0;
	bool		present;
	TimestampTz now = GetCurrentTimestamp();
	ErrorData  *first_error = NULL;
	bool		failed = false;

	if (mm_stats_due() == DT_NOEND)
		return NULL;
	rows = palloc(sizeof(HeldRow *) * hash_get_num_entries(held_rows));
	hash_seq_init(&seq, held_rows);
	while ((row = hash_seq_search(&seq)) != NULL)
		rows[n++] = row;
	qsort(rows, n, sizeof(HeldRow *), held_cmp);
	flushing = true;
	present = OidIsValid(get_namespace_oid("matchmaker", true)) && stats_available();
	(void) set_config_option("lock_timeout", MM_FLUSH_LOCK_TIMEOUT, PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	for (int i = 0; i < n;)
	{
		int			j = i;
		int			live = 0;
		FlushQueue	f;

		while (j < n && strcmp(rows[j]->key.queue, rows[i]->key.queue) == 0 &&
			   rows[j]->key.created_at == rows[i]->key.created_at)
			j++;
		/* the rows still within what their tables keep go first */
		for (int k = i; k < j; k++)
		{
			TimestampTz keep = rows[k]->key.band < 0 ? MM_STATS_KEEP : MM_BAND_KEEP;

			if (rows[k]->key.bucket >= now - keep * USECS_PER_SEC)
			{
				HeldRow    *r = rows[i + live];

				rows[i + live++] = rows[k];
				rows[k] = r;
			}
			else
				rows[k]->done = true;
		}
		f.rows = rows + i;
		f.n = live;
		f.keep = false;
		if (present && live > 0)
		{
			ErrorData  *e = mm_in_subtransaction(flush_queue, &f);

			if (e != NULL)
			{
				failed = true;
				f.keep = true;
				if (first_error == NULL)
					first_error = e;
				else
					FreeErrorData(e);
			}
		}
		for (int k = i; k < i + live; k++)
			rows[k]->done = !f.keep;
		i = j;
	}
	pfree(rows);
	flush_failures = failed ? Min(flush_failures + 1, 6) : 0;
	flush_due = now + ((TimestampTz) 1 << flush_failures) * USECS_PER_SEC;
	if (first_error != NULL && flush_failures > 1)
	{
		/* logged at the first failure of a streak only */
		FreeErrorData(first_error);
		first_error = NULL;
	}
	return first_error;
}

/*
 * Add what a tick decided at now (res over pool: matches, expiries) to the
 * queue's bucket and band rows: written now, or held by a worker.
 */
void
mm_stats_record(const MMQueue *queue, TimestampTz now, const MMPool *pool, const MMResult *res)
{
	BucketCounts c;
	int64	   *band_hist;
	TimestampTz bucket;
	TimestampTz minute;

	if (res->nmatches == 0 && res->nexpired == 0)
		return;
	if (!stats_available())
		return;
	/* a tick at a time ahead of the clock (tick(queue, now)) is not real time */
	if (now > GetCurrentTimestamp() + (TimestampTz) MM_STATS_BUCKET * USECS_PER_SEC)
		return;
	memset(&c, 0, sizeof(c));
	band_hist = palloc0(sizeof(int64) * MM_BANDS * MM_WAIT_BUCKETS);
	for (int j = 0; j < res->nmatches; j++)
	{
		const MMMatch *m = &res->matches[j];

		c.players += m->nmembers;
		c.bot_games += m->bots > 0;
		c.cost += m->cost.total;
		for (int i = 0; i < m->nmembers; i++)
		{
			const MMTicket *t = &pool->tickets[res->members[m->first + i]];
			int			b = wait_bucket(-t->arrival);

			c.waits[b]++;
			band_hist[rating_band(t->rating) * MM_WAIT_BUCKETS + b]++;
		}
	}
	c.matches = res->nmatches;
	c.expired = res->nexpired;
	bucket = bucket_floor(now, MM_STATS_BUCKET);
	minute = bucket_floor(now, MM_BAND_BUCKET);

	if (stats_deferred)
	{
		HeldKey		key;

		held_key(&key, queue, bucket, -1);
		(void) held_add(pending_rows, &key, &c);
		for (int band = 0; band < MM_BANDS && res->nmatches > 0; band++)
		{
			BucketCounts bc;
			bool		any = false;

			memset(&bc, 0, sizeof(bc));
			for (int b = 0; b < MM_WAIT_BUCKETS; b++)
			{
				bc.waits[b] = band_hist[band * MM_WAIT_BUCKETS + b];
				any = any || bc.waits[b] > 0;
			}
			if (!any)
				continue;
			held_key(&key, queue, minute, band);
			(void) held_add(pending_rows, &key, &bc);
		}
	}
	else
	{
		record_bucket(queue->name, bucket, &c);
		/* queue_bands comes with queue_buckets (0.3.0) */
		if (res->nmatches > 0)
			record_bands(queue->name, minute, band_hist);
	}
	pfree(band_hist);
}

/*
 * The counts of a waits histogram (at most MM_WAIT_BUCKETS, none null or
 * negative) into elems; returns how many.
 */
static int
histogram_counts(ArrayType *a, Datum **elems)
{
	bool	   *nulls;
	int			n;

	if (ARR_ELEMTYPE(a) != INT8OID || ARR_NDIM(a) > 1 || (ARR_NDIM(a) == 1 && ARR_LBOUND(a)[0] != 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a waits histogram is a one-dimensional bigint array"),
				 errdetail("Its first element, at index 1, counts the waits below 0.1 s.")));
	deconstruct_array(a, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, elems, &nulls, &n);
	if (n > MM_WAIT_BUCKETS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a waits histogram has at most %d buckets, not %d", MM_WAIT_BUCKETS, n)));
	for (int b = 0; b < n; b++)
		if (nulls[b] || DatumGetInt64((*elems)[b]) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a waits histogram cannot count null or negative numbers")));
	return n;
}

/*
 * matchmaker.wait_quantile(waits bigint[], q float8): the wait (seconds)
 * below which a fraction q of a waits histogram lies, interpolated within
 * its bucket on a logarithmic scale; NULL for an empty histogram.
 */
Datum
mm_wait_quantile(PG_FUNCTION_ARGS)
{
	ArrayType  *a = PG_GETARG_ARRAYTYPE_P(0);
	double		q = PG_GETARG_FLOAT8(1);
	Datum	   *elems;
	int			n;
	double		total = 0;
	double		below = 0;

	if (!(q >= 0 && q <= 1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("quantile %g is not between 0 and 1", q),
				 errhint("Ask for 0.5 for the median, 0.95 for the 95th percentile.")));
	if (q == 0)
		q = 0;					/* -0 asks for the lowest wait too, not for -0 s */
	n = histogram_counts(a, &elems);
	for (int b = 0; b < n; b++)
		total += (double) DatumGetInt64(elems[b]);
	if (total <= 0)
		PG_RETURN_NULL();
	for (int b = 0; b < n; b++)
	{
		double		c = (double) DatumGetInt64(elems[b]);

		if (c > 0 && below + c >= q * total)
		{
			double		f = (q * total - below) / c;

			PG_RETURN_FLOAT8(bucket_at(b, f));
		}
		below += c;
	}
	PG_RETURN_FLOAT8(bucket_low(n - 1));
}

/*
 * Add the histograms of the queue's band rows of the minutes from since to
 * now (of band, or of all bands when band < 0) into hist; false when there
 * are none with a count.
 */
static bool
read_bands(const MMQueue *queue, int band, TimestampTz since, TimestampTz now, double *hist)
{
	static SPIPlanPtr plans[2];
	Oid			argtypes[4] = {TEXTOID, TIMESTAMPTZOID, INT2OID, TIMESTAMPTZOID};
	Datum		values[4];
	bool		any = false;

	if (band >= 0)
		mm_keep_plan(&plans[0],
					 "SELECT waits FROM matchmaker.queue_bands WHERE queue OPERATOR(pg_catalog.=) $1 "
					 "AND band OPERATOR(pg_catalog.=) $3 AND bucket_start OPERATOR(pg_catalog.>=) $2 "
					 "AND bucket_start OPERATOR(pg_catalog.<=) $4",
					 4, argtypes);
	else
		mm_keep_plan(&plans[1],
					 "SELECT waits FROM matchmaker.queue_bands WHERE queue OPERATOR(pg_catalog.=) $1 "
					 "AND bucket_start OPERATOR(pg_catalog.>=) $2 AND bucket_start OPERATOR(pg_catalog.<=) $4",
					 4, argtypes);
	values[0] = CStringGetTextDatum(queue->name);
	values[1] = TimestampTzGetDatum(bucket_floor(since, MM_BAND_BUCKET));
	values[2] = Int16GetDatum(Max(band, 0));
	values[3] = TimestampTzGetDatum(now);
	if (SPI_execute_plan(plans[band >= 0 ? 0 : 1], values, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the queue's waits by rating");
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull);
		Datum	   *elems;
		int			n;

		if (isnull)
			continue;
		n = histogram_counts(DatumGetArrayTypeP(d), &elems);
		for (int b = 0; b < n; b++)
		{
			hist[b] += (double) DatumGetInt64(elems[b]);
			any |= DatumGetInt64(elems[b]) > 0;
		}
	}
	return any;
}

/*
 * The median of the waits of a histogram that are longer than waited
 * (inside its bucket the counts are taken as spread evenly on the scale of
 * bucket_at); false when none is.
 */
static bool
median_above(const double *hist, double waited, double *median)
{
	int			first = wait_bucket(waited);
	double		from = bucket_position(waited);
	double		above = hist[first] * (1 - from);
	double		half;

	for (int b = first + 1; b < MM_WAIT_BUCKETS; b++)
		above += hist[b];
	if (!(above > 0))
		return false;
	half = above / 2;
	for (int b = first; b < MM_WAIT_BUCKETS; b++)
	{
		double		start = b == first ? from : 0;
		double		c = hist[b] * (1 - start);

		if (c > 0 && c >= half)
		{
			*median = bucket_at(b, start + (1 - start) * half / c);
			return true;
		}
		half -= c;
	}
	*median = bucket_at(MM_WAIT_BUCKETS - 1, 1);
	return true;
}

/*
 * A waiting ticket's expected remaining wait (seconds) into *estimate, from
 * the waits of the players matched in the queue over its history window
 * (at most MM_BAND_KEEP seconds, in whole minutes): the median wait of those
 * in the ticket's tenth of the rating range who waited longer than it has
 * so far (of all such players when none of its tenth did), less what it
 * has waited, at most the time it has left to max_wait; that time left when
 * nobody recent waited longer.  false without recent matched players:
 * then there is no estimate.  Needs 0.3.0's tables (the caller checks).
 */
bool
mm_stats_expected_wait(const MMQueue *queue, TimestampTz now, double rating,
					   double waited, double *estimate)
{
	double		window = Min(mm_history_window(queue, now), (double) MM_BAND_KEEP);
	TimestampTz since = now - (TimestampTz) (window * USECS_PER_SEC);
	double		left = Max(queue->cfg.max_wait - Max(waited, 0), 0);
	double		hist[MM_WAIT_BUCKETS] = {0};
	double		median;
	int			band;

	band = rating_band((rating - queue->rating_min) / (queue->rating_max - queue->rating_min));
	if (!(read_bands(queue, band, since, now, hist) && median_above(hist, waited, &median)))
	{
		memset(hist, 0, sizeof(hist));
		if (!read_bands(queue, -1, since, now, hist))
			return false;
		if (!median_above(hist, waited, &median))
		{
			/* everyone recent was matched sooner: at the latest at max_wait */
			*estimate = left;
			return true;
		}
	}
	*estimate = Min(Max(median - waited, 0), left);
	return true;
}

/* The run a worker just finished, kept in the queue's schedule slot. */
void
mm_stats_run(MMQueueSlot *slot, TimestampTz started, double ms, double lag_ms)
{
	slot->last_start = started;
	slot->last_ms = ms;
	slot->last_lag_ms = lag_ms;
}

/*
 * matchmaker.worker_queues(): for each queue in this database's schedule,
 * when the worker last started its tick, how long it took (ms), how late
 * it started after the time it was due (ms; 0 for a run asked for by an
 * enqueue), when it is due next, its runs that failed in a row (0 after a
 * run that did not fail), and the message and time of its latest failure
 * (kept after it recovers).  No rows unless the library is preloaded and
 * this database is in matchmaker.database.  The columns are the first
 * ones the function's SQL declaration has; one with more than the library
 * knows is refused.
 */
#define MM_WORKER_QUEUES_COLS 8
Datum
mm_worker_queues(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			natts;

	InitMaterializedSRF(fcinfo, 0);
	natts = rsinfo->setDesc->natts;
	if (natts > MM_WORKER_QUEUES_COLS)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("matchmaker.worker_queues() is declared with %d columns, the library knows %d",
						natts, MM_WORKER_QUEUES_COLS),
				 errhint("Install the library of the extension's version (make install), then restart the server.")));
	if (mm_shared == NULL)
		PG_RETURN_VOID();
	for (int d = 0; d < mm_shared->ndatabases; d++)
	{
		MMDatabase *db = &mm_shared->dbs[d];
		MMQueueSlot *slots;

		if (db->dboid != MyDatabaseId)
			continue;
		slots = mm_db_queues(d);
		LWLockAcquire(db->lock, LW_SHARED);
		for (int i = 0; i < mm_max_queues; i++)
		{
			MMQueueSlot *q = &slots[i];
			Datum		values[MM_WORKER_QUEUES_COLS];
			bool		nulls[MM_WORKER_QUEUES_COLS];

			if (q->name[0] == '\0')
				continue;
			memset(nulls, 0, sizeof(nulls));
			values[0] = CStringGetTextDatum(q->name);
			values[1] = TimestampTzGetDatum(q->last_start);
			nulls[1] = q->last_start == 0;
			values[2] = Float8GetDatum(q->last_ms);
			nulls[2] = q->last_start == 0;
			values[3] = Float8GetDatum(q->last_lag_ms);
			nulls[3] = q->last_start == 0;
			values[4] = TimestampTzGetDatum(q->next_run);
			nulls[4] = q->next_run == 0;
			values[5] = Int32GetDatum(q->failures);
			values[6] = CStringGetTextDatum(q->last_error);
			nulls[6] = q->last_error_at == 0;
			values[7] = TimestampTzGetDatum(q->last_error_at);
			nulls[7] = q->last_error_at == 0;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
		LWLockRelease(db->lock);
	}
	PG_RETURN_VOID();
}

/*
 * matchmaker.waits_add(a bigint[], b bigint[]): two waits histograms added
 * bucket by bucket (the step of the aggregate waits_sum); a null side is
 * the other.
 */
Datum
mm_waits_add(PG_FUNCTION_ARGS)
{
	Datum		sum[MM_WAIT_BUCKETS];
	int			n = 0;

	for (int side = 0; side < 2; side++)
	{
		Datum	   *elems;
		int			m;

		if (PG_ARGISNULL(side))
			continue;
		m = histogram_counts(PG_GETARG_ARRAYTYPE_P(side), &elems);
		for (int b = n; b < m; b++)
			sum[b] = Int64GetDatum(0);
		n = Max(n, m);
		for (int b = 0; b < m; b++)
		{
			int64		r;

			if (pg_add_s64_overflow(DatumGetInt64(sum[b]), DatumGetInt64(elems[b]), &r))
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("waits histogram count out of range")));
			sum[b] = Int64GetDatum(r);
		}
	}
	if (PG_ARGISNULL(0) && PG_ARGISNULL(1))
		PG_RETURN_NULL();
	PG_RETURN_ARRAYTYPE_P(construct_array(sum, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}
