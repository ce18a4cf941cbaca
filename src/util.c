/*
 * util.c
 *		What the SQL functions share: checks of their arguments, the
 *		caller's values in messages, kept plans and the core's failures.
 */
#include "matchmaker.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/array.h"
#include "utils/float.h"
#include "utils/lsyscache.h"

/*
 * A caller's string for an error message: at most MM_MESSAGE_MAX_BYTES
 * bytes, cut at a character boundary and marked with "...", so that a
 * hostile argument cannot flood the client and the server log.
 */
const char *
mm_shorten(const char *s)
{
	int			len = strlen(s);
	int			cut;

	if (len <= MM_MESSAGE_MAX_BYTES)
		return s;
	cut = pg_mbcliplen(s, len, MM_MESSAGE_MAX_BYTES);
	return psprintf("%.*s...", cut, s);
}

/* A double as text for a message, as float8 output writes it (no digits lost). */
const char *
mm_float_text(double d)
{
	return float8out_internal(d);
}

/* Raise the error for a NULL argument that must not be NULL. */
void
mm_require_arg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname),
				 errhint("Pass a value for %s.", argname)));
}

/* A text argument that must not be NULL, as a C string. */
char *
mm_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	mm_require_arg(fcinfo, argno, argname);
	return text_to_cstring(PG_GETARG_TEXT_PP(argno));
}

/* Prepare a statement once per backend, with cursor options, and keep it in *slot. */
static SPIPlanPtr
keep_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes, int options)
{
	if (*slot == NULL)
	{
		SPIPlanPtr	plan = SPI_prepare_cursor(sql, nargs, argtypes, options);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "could not prepare \"%s\": %s", sql, SPI_result_code_string(SPI_result));
		*slot = plan;
	}
	return *slot;
}

/* Prepare a statement once per backend and keep it in *slot. */
SPIPlanPtr
mm_keep_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	return keep_plan(slot, sql, nargs, argtypes, 0);
}

/*
 * The same, always with the generic plan: for the writes a tick makes by
 * id (arrays of ids, a queue's own rows), whose plan does not depend on
 * the values, so that no execution pays for planning again.
 */
SPIPlanPtr
mm_keep_generic_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	return keep_plan(slot, sql, nargs, argtypes, CURSOR_OPT_GENERIC_PLAN);
}

/*
 * Run a plan kept for statements that take arrays of ids or ctids
 * (mm_keep_generic_plan), with sequential scans and nested loops disabled
 * while it runs, and so while it is planned.  The generic plan of such a
 * statement is made once, with the table's size of that moment: made
 * while the table was small (after a TRUNCATE, one scan of it costs less
 * than ten tid or index probes), it was a scan of the table kept while the
 * table grew (measured: a worker then spent two thirds of its time
 * scanning the tickets' history at every tick); planning each call
 * instead cost a sixth of the worker's time.  The statements are written
 * so that nothing else can drive them: each restricts the table by its
 * ctids or primary keys and by nothing a partial index could serve (the
 * state is checked from what they return), and a join with the arrays is
 * a hash or merge join of two inputs of the arrays' size, never a loop
 * over one for each row of the other.
 */
int
mm_execute_by_key(SPIPlanPtr plan, Datum *values)
{
	int			nest = NewGUCNestLevel();
	int			rc;

	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("enable_nestloop", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	rc = SPI_execute_plan(plan, values, NULL, false, 0);
	AtEOXact_GUC(true, nest);
	return rc;
}

/*
 * Prepare a statement once per backend, always planned for the call's
 * values: for statements by arrays of ids that run rarely (ready checks,
 * backfills), whose plans then follow the table's size as it is.
 */
SPIPlanPtr
mm_keep_custom_plan(SPIPlanPtr *slot, const char *sql, int nargs, Oid *argtypes)
{
	return keep_plan(slot, sql, nargs, argtypes, CURSOR_OPT_CUSTOM_PLAN);
}


/*
 * Raise the error of a core function's failure st (not MM_OK).  doing
 * names the computation ("matching queue \"duel\""), for "out of memory
 * while ..." and "... failed with status N"; interrupted, when not NULL,
 * is the message of an interruption the backend's own check did not
 * raise (else "... was interrupted"); refused, when not NULL, the message
 * of arguments the core refused (else the status is reported).
 */
void
mm_status_error(MMStatus st, const char *doing, const char *interrupted,
				const char *refused)
{
	switch (st)
	{
		case MM_ERR_NOMEM:
			if (mm_memory_refused)
			{
				mm_memory_refused = 0;
				ereport(ERROR,
						(errcode(ERRCODE_OUT_OF_MEMORY),
						 errmsg("out of memory while %s: it needs more than matchmaker.core_memory_limit (%d kB)",
								doing, mm_core_memory_limit),
						 errhint("Raise matchmaker.core_memory_limit, or give the computation less input (fewer tickets, players or regions, or a smaller round_max).")));
			}
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("out of memory while %s", doing)));
			break;
		case MM_ERR_INTERRUPTED:
			CHECK_FOR_INTERRUPTS();
			if (interrupted != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_QUERY_CANCELED),
						 errmsg("%s", interrupted)));
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("%s was interrupted", doing)));
			break;
		case MM_ERR_ARGUMENT:
			if (refused != NULL)
				elog(ERROR, "%s", refused);
			break;
		case MM_OK:
			break;
	}
	elog(ERROR, "%s failed with status %d", doing, (int) st);
}

/*
 * Refuse a REPEATABLE READ or SERIALIZABLE transaction: function waits for
 * locks and then must see what committed before they were granted, which
 * a transaction snapshot taken earlier would not show.
 */
void
mm_require_read_committed(const char *function)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("matchmaker.%s must run at isolation level READ COMMITTED", function),
				 errdetail("The current transaction uses %s.",
						   IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errhint("Call %s outside a REPEATABLE READ or SERIALIZABLE transaction.", function)));
}

/*
 * Whether the schema matchmaker has the table name (tables added by an
 * update: the library also serves the SQL definitions of earlier versions).
 */
bool
mm_table_exists(const char *name)
{
	return OidIsValid(get_relname_relid(name, get_namespace_oid("matchmaker", false)));
}

/* qsort's comparison of int64s, ascending. */
int
mm_int64_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/* Ascending order of int32s (for qsort). */
int
mm_int32_cmp(const void *a, const void *b)
{
	int32		x = *(const int32 *) a;
	int32		y = *(const int32 *) b;

	return (x > y) - (x < y);
}

/* ids[0 .. n) as a bigint[] datum. */
Datum
mm_int8_array(const int64 *ids, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	ArrayType  *a;

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(ids[i]);
	a = construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	pfree(d);
	return PointerGetDatum(a);
}

/*
 * The int8 column col of every row of the last SPI result, sorted, with
 * their number in *n; frees the result.
 */
int64 *
mm_spi_ids(int col, int *n)
{
	int64	   *ids = palloc(sizeof(int64) * Max(SPI_processed, 1));

	*n = (int) SPI_processed;
	for (int r = 0; r < *n; r++)
	{
		bool		isnull;

		ids[r] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, col, &isnull));
	}
	SPI_freetuptable(SPI_tuptable);
	qsort(ids, *n, sizeof(int64), mm_int64_cmp);
	return ids;
}

/* The error for a ticket id that does not exist (any more). */
void
mm_ticket_not_found(int64 ticket)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("ticket %lld does not exist", (long long) ticket),
			 errhint("Pass an id returned by matchmaker.enqueue().")));
}

/*
 * Run fn(arg) in a subtransaction.  Returns NULL when it succeeded, or its
 * error (in the caller's memory context) once the subtransaction is rolled
 * back; a cancel or terminate is raised again, not returned.
 */
ErrorData *
mm_in_subtransaction(void (*fn) (void *), void *arg)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile failure = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
			edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
			QueryCancelPending || ProcDiePending)
			ReThrowError(edata);
		failure = edata;
	}
	PG_END_TRY();
	return failure;
}
