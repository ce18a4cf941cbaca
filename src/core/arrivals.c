/*
 * arrivals.c
 *		The check of an arrival stream, shared by the simulator and the
 *		offline optimum.
 */
#include "mm_internal.h"

#include <math.h>

/* Check an arrival stream (see mm_internal.h). */
MMStatus
mm_check_arrivals(const MMArrival *arrivals, int n)
{
	for (int j = 0; j < n; j++)
	{
		const MMArrival *a = &arrivals[j];

		if (!isfinite(a->arrival) || !(a->rating >= 0.0 && a->rating <= 1.0))
			return MM_ERR_ARGUMENT;
		if (j > 0 && (arrivals[j - 1].arrival > a->arrival ||
					  (arrivals[j - 1].arrival == a->arrival &&
					   arrivals[j - 1].id > a->id)))
			return MM_ERR_ARGUMENT;
	}
	return MM_OK;
}
