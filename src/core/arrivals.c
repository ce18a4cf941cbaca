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

/* (n - 1) arrivals over the span from the first to the last (n >= 2), capped. */
static double
rate_over(int n, double span)
{
	if (!(span > (n - 1) / MM_RATE_MAX))
		return MM_RATE_MAX;
	return (n - 1) / span;
}

/* The arrival rate n ascending arrival times show (see mm_core.h). */
double
mm_arrival_rate(const double *times, int n)
{
	if (times == NULL || n < MM_RATE_MIN)
		return 0.0;
	return rate_over(n, times[n - 1] - times[0]);
}

/* The same for n arrivals (at least MM_RATE_MIN) from first to last. */
double
mm_arrival_rate_span(double first, double last, int n)
{
	return rate_over(n, last - first);
}

/* The same over a stream's arrivals. */
double
mm_arrival_rate_of(const MMArrival *arrivals, int n)
{
	if (arrivals == NULL || n < MM_RATE_MIN)
		return 0.0;
	return rate_over(n, arrivals[n - 1].arrival - arrivals[0].arrival);
}
