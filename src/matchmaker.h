/*
 * matchmaker.h
 *		Declarations shared by the PostgreSQL side of matchmaker.
 */
#ifndef MATCHMAKER_H
#define MATCHMAKER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "storage/lockdefs.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"

#include "core/mm_core.h"

/* params.filters: at most this many attributes, values of at most this many bytes. */
#define MM_MAX_FILTERS		8
#define MM_FILTER_VALUE_MAX	256
#define MM_FILTER_LIST_MAX	16		/* values of one intersect filter */
#define MM_FILTER_COMBOS_MAX	64	/* a ticket's combinations of them */
#define MM_FILTER_BYTES_MAX	4096	/* its combined values, written out */
#define MM_EXCLUDE_MAX		64		/* players in a block list */
#define MM_EXCLUDE_NAME_MAX	256		/* bytes of each (a player identifier's most) */

/*
 * The criteria beyond the rating that a queue reads from the tickets'
 * attributes (params.criteria): entry d (1 .. cfg.criteria.n) is an
 * attributes key with the range its numbers are normalised from.
 */
typedef struct MMCriteria
{
	char	   *attribute[MM_MAX_CRITERIA];
	double		lo[MM_MAX_CRITERIA];
	double		hi[MM_MAX_CRITERIA];
	/* params.filters: the filtered attributes, in params order, and their kinds */
	char	   *filter[MM_MAX_FILTERS];
	bool		intersect[MM_MAX_FILTERS];	/* false: equal */
	double		relax_after[MM_MAX_FILTERS];	/* optional_after, seconds; 0: never */
	int			nfilters;
	bool		any_intersect;
	bool		any_relax;
	/* params.filters' exclude filter: the attribute of a player's block list, or NULL */
	char	   *exclude;
	/* params.roles: role r's name (cfg.roles.n of them, in params order) */
	char	   *role[MM_MAX_ROLES];
	/* params.party_rating "max": a party groups at its best player's rating, not the mean */
	bool		party_max;
} MMCriteria;

/*
 * The distinct combined values of a set of tickets' filtered attributes,
 * sorted bytewise: a ticket's key is its value's place here (filters.c).
 */
typedef struct MMFilterDict
{
	int			n;
	char	  **values;
	int		   *lens;
} MMFilterDict;

/* What is wrong with a ticket's value of a criterion. */
typedef enum MMCriterionProblem
{
	MM_CRITERION_OK = 0,
	MM_CRITERION_MISSING,		/* the attributes lack the key */
	MM_CRITERION_NOT_NUMBER,	/* the value is not a JSON number */
	MM_CRITERION_OUTSIDE		/* the number is outside [lo, hi] */
} MMCriterionProblem;

/*
 * params.tune: how often (every, seconds) a tick replays the queue's
 * recent history (over, seconds) through the simulator with candidate
 * algorithms and parameters (algorithms: a mask of 1 << MMAlgorithm) and
 * adopts the best (tune.c).
 */
typedef struct MMTune
{
	bool		on;
	double		every;
	double		over;
	uint32		algorithms;
} MMTune;

/*
 * A queue as stored in matchmaker.queues, resolved for matching.  Its
 * pointers are all strings, which queue_copy (queue.c) copies: a new
 * pointer field must be copied there too.
 */
typedef struct MMQueue
{
	char	   *name;
	MMConfig	cfg;			/* batch / ranges 0 mean "auto" */
	MMCriteria	criteria;
	bool		wait_factor_set;	/* params had wait_factor */
	double		rating_min;
	double		rating_max;
	double		tick_seconds;
	TimestampTz created_at;
	MMTune		tune;			/* params.tune */
	char	   *channel;		/* the queue's own NOTIFY channel, or NULL */
} MMQueue;

/*
 * events.c: NOTIFY payloads are JSON objects {"event": ..., "queue": ...,
 * ...}, below PostgreSQL's limit of 8000 bytes.
 */
#define MM_EVENT_MAX_BYTES	8000
extern void mm_event_start(StringInfo buf, const char *event, const char *queue);
extern void mm_event_send(const char *channel, const char *payload);
extern void mm_event_ids(StringInfo buf, const char *key, const int64 *ids, int n);
extern void mm_event_finish(StringInfo buf, int head, const char *channel);

/* How mm_load_queue locks the queue's row. */
typedef enum MMQueueLock
{
	MM_LOCK_NONE = 0,
	MM_LOCK_UPDATE,				/* FOR UPDATE: wait for the row */
	MM_LOCK_SKIP				/* FOR UPDATE SKIP LOCKED: give up when it is held */
} MMQueueLock;

/* params.c */
extern void mm_parse_params(Jsonb *params, MMConfig *cfg, MMCriteria *criteria,
							bool *wait_factor_set);

/* params.c: params.tune */
extern void mm_tune_parse(JsonbValue *v, MMTune *tune);
extern void mm_tune_read(Jsonb *params, MMTune *tune);
extern char *mm_channel_read(Jsonb *params);
extern char *mm_queue_channel(const char *queue);

/* tune.c */
extern void mm_tune_queue(MMQueue *queue, TimestampTz now);

/* simulate.c */
extern MMArrival *mm_read_history(MMQueue *queue, TimestampTz from, TimestampTz to,
								  int limit, MMStreamData *data, int *n_out);
extern void mm_stream_rate(MMConfig *cfg, const MMArrival *arr, int n);

/* queue.c */
extern bool mm_load_queue(const char *name, MMQueueLock lock, MMQueue *queue);
extern bool mm_load_queue_cached(const char *name, MMQueue *queue);
extern MMQueue *mm_get_queue(text *name, MMQueueLock lock);
extern double mm_interval_seconds(const Interval *iv);
extern bool mm_lock_queue_key(const char *name, uint16 kind, uint32 extra, LOCKMODE mode, bool wait);

/* The kinds of mm_lock_queue_key's locks (field4 of an advisory lock tag). */
#define MM_LOCK_KIND_ENQUEUE	0x4d01	/* enqueue (share) against drop_queue (exclusive) */
#define MM_LOCK_KIND_PARTY		0x4d02	/* a party's enqueues, one at a time */

/* settings.c */
extern char *mm_database;
extern int	mm_naptime;
extern int	mm_arrival_delay;
extern int	mm_retention;
extern bool mm_enabled;
extern char *mm_test_hold_tick;
extern int	mm_test_pause_ticket;
extern int	mm_workers_per_database;
extern int	mm_max_queues;
extern int	mm_core_memory_limit;	/* kB, matchmaker.core_memory_limit */
extern void mm_settings_init(void);

#define MM_MAX_DATABASES	16	/* in matchmaker.database */
#define MM_MAX_WORKERS		8	/* matchmaker.workers_per_database at most */

/* schedule.c (the rest of the workers' shared memory: schedule.h) */
extern void mm_schedule_init(void);
extern void mm_wake_on_commit(const char *queue);
extern void mm_arrival_on_commit(const char *queue);
extern void mm_queues_changed_on_commit(void);

/* launcher.c */
extern void mm_launcher_init(void);

/* tick.c */
/* What a tick tells the worker about the queue after it. */
typedef struct MMTickInfo
{
	TimestampTz prev_step;		/* in: when the worker last ran the queue (0: unknown) */
	TimestampTz next_deadline;	/* next timer, DT_NOEND when none */
	bool		wrote;			/* it changed something (not only locked the queue row) */
	int			need_arrivals;	/* arrivals before a tick can match again (0: any wake-up may) */
} MMTickInfo;

extern int	mm_tick_queue(const char *name, TimestampTz now, MMQueueLock lock,
						  MMTickInfo *info);
extern double mm_history_window(const MMQueue *queue, TimestampTz now);

/* waiting.c: a tick's read of its queue's waiting tickets, through tickets_waiting */
typedef struct MMWaitingScan MMWaitingScan;
typedef struct MMWaitingRow
{
	int64		id;
	ItemPointerData tid;		/* where the version read is */
	double		rating;
	TimestampTz enqueued_at;
	int64		party;			/* -1 alone */
	Datum		attributes;		/* jsonb, in the current tuple */
	Datum		player;			/* text, in the current tuple */
} MMWaitingRow;
extern MMWaitingScan *mm_waiting_begin(const char *queue, TimestampTz until, TimestampTz ahead);
extern bool mm_waiting_next(MMWaitingScan *scan, MMWaitingRow *row);
extern void mm_waiting_end(MMWaitingScan *scan);
extern bool mm_index_has_queue(const char *table, const char *index, const char *queue,
							   LOCKMODE lockmode);
extern AttrNumber mm_rel_column(Relation rel, const char *name, bool missing_ok);

/* tick_rows.c: writes without statements (a tick's locks and updates of tickets by address, matches in batches; enqueue's insert) */
#define MM_TICKET_ROWS_MAX_COLUMNS	8
typedef struct MMTicketRows MMTicketRows;
extern MMTicketRows *mm_ticket_rows_open(const char *const *columns, int ncolumns);
extern bool mm_ticket_rows_lock(MMTicketRows *r, ItemPointer tid, int64 id);
extern void mm_ticket_rows_update(MMTicketRows *r, ItemPointer tid, int64 id,
								  const Datum *values, const bool *nulls);
extern bool mm_ticket_rows_check(MMTicketRows *r, ItemPointer tid, int64 id);
extern bool mm_ticket_rows_try_update(MMTicketRows *r, ItemPointer tid, int64 id,
									  const Datum *values, const bool *nulls);
extern void mm_ticket_rows_undo(MMTicketRows *r, ItemPointer old_tid, ItemPointer tid, int64 id);
extern void mm_ticket_rows_close(MMTicketRows *r);
extern bool mm_match_rows_insert(const char *queue, TimestampTz now, const MMResult *res,
								 const int64 *ids);
typedef enum MMTicketInsert
{
	MM_TICKET_INSERTED,			/* a new waiting ticket */
	MM_TICKET_WAITING,			/* the player's ticket waits already */
	MM_TICKET_INSERT_STATEMENT	/* nothing done: the statement must insert */
} MMTicketInsert;
extern MMTicketInsert mm_ticket_insert(SPIPlanPtr statement, const Datum *values, int64 *id);

/* Longest caller's string an error message repeats (see mm_shorten). */
#define MM_MESSAGE_MAX_BYTES	64

/*
 * owner.c: the calling role, and the switch to the extension's owner for
 * the table access of the functions game backends call.
 */
typedef struct MMCaller
{
	Oid			role;			/* who called */
	int			sec_context;	/* the caller's security context */
} MMCaller;
extern void mm_act_as_owner(MMCaller *caller);
extern void mm_act_as_caller(const MMCaller *caller);
extern bool mm_caller_owns(const MMCaller *caller, Oid owner, const char *owner_name);

/* backfill.c: backfill requests of running matches */
extern bool mm_backfill_tick(const MMQueue *queue, TimestampTz now, MMPool *pool,
							 const MMFilterDict *dict, TimestampTz *next_expiry);

/* ready.c: ready checks (params.accept_timeout) */
extern bool mm_ready_available(void);
extern void mm_ready_require(const MMQueue *queue);
extern int	mm_ready_expire(const MMQueue *queue, TimestampTz now, bool *pending);
extern TimestampTz mm_ready_next_deadline(const MMQueue *queue, TimestampTz now);
extern char *mm_ready_answer(int64 ticket, const char *queue, bool accepted);
extern bool mm_ready_cancel(int64 ticket, const char *queue);

/* util.c */
extern const char *mm_shorten(const char *s);
extern const char *mm_float_text(double d);
extern char *mm_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname);
extern void mm_require_arg(FunctionCallInfo fcinfo, int argno, const char *argname);
extern SPIPlanPtr mm_keep_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern SPIPlanPtr mm_keep_generic_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern int	mm_execute_by_key(SPIPlanPtr plan, Datum *values);
extern SPIPlanPtr mm_keep_custom_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes);
extern ErrorData *mm_in_subtransaction(void (*fn) (void *), void *arg);
extern void mm_require_read_committed(const char *function);
extern void mm_ticket_not_found(int64 ticket) pg_attribute_noreturn();
extern bool mm_table_exists(const char *name);
extern int	mm_int64_cmp(const void *a, const void *b);
extern int	mm_int32_cmp(const void *a, const void *b);
extern Datum mm_int8_array(const int64 *ids, int n);
extern int64 *mm_spi_ids(int col, int *n);
extern void mm_status_error(MMStatus st, const char *doing,
							const char *interrupted, const char *refused) pg_attribute_noreturn();

/* filters.c */
extern const char *mm_filter_value(const MMQueue *queue, Jsonb *attributes, StringInfo out);
extern const char *mm_filter_values(const MMQueue *queue, Jsonb *attributes, StringInfo out,
									int *lens, int *ncombos);
extern void mm_filter_require(const MMQueue *queue, Jsonb *attributes, const char *whose);
extern char *mm_filter_names(const MMQueue *queue);
extern char *mm_filter_detail(const MMQueue *queue);
extern int32 *mm_filter_number(char **values, int *lens, int n, MMFilterDict *dict);
extern int32 mm_filter_find(const MMFilterDict *dict, const char *value, int len);
extern char *mm_filter_json(const MMQueue *queue, const char *value, int len);
extern int32 *mm_filter_key_values(const MMQueue *queue, const MMFilterDict *dict);
extern double *mm_filter_relax_seconds(const MMQueue *queue);
extern char *mm_filter_mask_array(const MMQueue *queue, uint32 mask);
/* party.c: roles and party ratings */
extern const char *mm_roles_value_problem(const MMQueue *queue, JsonbValue *v, uint8 *mask);
extern const char *mm_roles_problem(const MMQueue *queue, Jsonb *attributes, uint8 *mask);
extern char *mm_roles_detail(const MMQueue *queue);
extern void mm_roles_error(const MMQueue *queue, const char *problem, const char *whose) pg_attribute_noreturn();
extern void mm_party_ratings(const MMQueue *queue, int n, const int32 *party, double *ratings,
							 int *order);

extern bool mm_filters_any(const MMQueue *queue);
extern const char *mm_exclude_names(const MMQueue *queue, Jsonb *attributes, JsonbValue *names, int *n);
extern void mm_exclude_rows(char **players, char ***names, const int *nnames, int n,
							int32 **player_out, int32 **start_out, int32 **block_out);

/*
 * retention.c: remove at most max_rows ended rows of queue from before
 * before; without wait, nothing while a drop_queue of it is under way.
 */
extern int64 mm_purge(const char *queue, TimestampTz before, int max_rows, bool wait);

/* stats.c: add a tick's matches and expiries to the queue's statistics. */
extern void mm_stats_defer(void);
extern TimestampTz mm_stats_due(void);
extern ErrorData *mm_stats_flush(void);
extern void mm_stats_record(const MMQueue *queue, TimestampTz now, const MMPool *pool,
							const MMResult *res);
extern bool mm_stats_expected_wait(const MMQueue *queue, TimestampTz now, double rating,
								   double waited, double *estimate);

/* criteria.c */
extern double mm_normalise_rating(const MMQueue *queue, double rating, const char *what);
extern int	mm_criteria_read(const MMQueue *queue, Jsonb *attributes, double *out,
							 MMCriterionProblem *problem, double *got);
extern void mm_criteria_report(const MMQueue *queue, int d, MMCriterionProblem problem,
							   double got, const char *whose);
extern char *mm_criteria_names(const MMQueue *queue);
extern void mm_criteria_values(const MMQueue *queue, Jsonb *attributes, double *out,
							   const char *whose);
extern const char *const MM_BAD_PARTY;
extern const char *const MM_BAD_PING;
extern const char *mm_optimize_attributes_problem(Jsonb *attributes, JsonbValue **party,
												  JsonbValue **ping);
extern void mm_optimize_attributes(Jsonb *attributes, JsonbValue **party, JsonbValue **ping);

#endif							/* MATCHMAKER_H */
