/*
 * matchmaker.c
 *		Module start-up: the settings, the core's interrupt check, and the
 *		background worker when the library is preloaded.
 */
#include "matchmaker.h"

#include "fmgr.h"
#include "miscadmin.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* The core's long computations stop when the query is cancelled or the backend must exit. */
static int
interrupt_pending(void)
{
	return QueryCancelPending || ProcDiePending;
}

/* Module load: settings, the core's interrupt check, and the worker when preloaded. */
void
_PG_init(void)
{
	mm_interrupt = interrupt_pending;
	mm_settings_init();
	mm_schedule_init();
	mm_launcher_init();
}
