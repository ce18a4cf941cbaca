/*
 * bench_random.h
 *		A small deterministic generator (splitmix64) shared by the benchmark
 *		programs, so that every run of a benchmark sees the same streams,
 *		and the clock they time with.
 */
#ifndef BENCH_RANDOM_H
#define BENCH_RANDOM_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/core/mm_core.h"

/* Seconds on a monotonic clock. */
static inline double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The next 64 random bits of the stream in *state. */
static inline uint64_t
next_random(uint64_t *state)
{
	uint64_t	z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static inline double
uniform(uint64_t *state)
{
	return (next_random(state) >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * Inverse of the standard normal CDF (Acklam's rational approximation,
 * refined by one Halley step with erfc); p in (0, 1).
 */
static inline double
bench_probit(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02,
		-3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01,
	-1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00,
	4.374664141464968e+00, 2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
	2.445134137142996e+00, 3.754408661907416e+00};
	double		q,
				r,
				x,
				e,
				u;

	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < 0.02425)
	{
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
			((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	else if (p > 1 - 0.02425)
	{
		q = sqrt(-2 * log(1 - p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
			((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	else
	{
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
			(((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	}
	e = 0.5 * erfc(-x / sqrt(2)) - p;
	u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

static inline double
bench_clip01(double x)
{
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/*
 * A rating from one uniform u in [0, 1), by the distribution named in the
 * environment variable BENCH_RATINGS (default uniform):
 *   normal   N(0.5, 0.15) clipped to [0, 1]
 *   bimodal  equal mixture of N(0.3, 0.08) and N(0.7, 0.08), clipped
 *            (u < 0.5 picks the low mode, the rest of u is its quantile)
 *   skewed   u^2
 * Exactly one uniform is drawn per rating whatever the distribution, so
 * the arrival times are those of the uniform streams.
 */
static inline double
bench_rating(double u)
{
	static int	kind = -1;

	if (kind < 0)
	{
		const char *e = getenv("BENCH_RATINGS");

		kind = 0;
		if (e == NULL || strcmp(e, "uniform") == 0)
			kind = 0;
		else if (strcmp(e, "normal") == 0)
			kind = 1;
		else if (strcmp(e, "bimodal") == 0)
			kind = 2;
		else if (strcmp(e, "skewed") == 0)
			kind = 3;
		else
		{
			fprintf(stderr, "BENCH_RATINGS: unknown distribution %s\n", e);
			exit(2);
		}
	}
	switch (kind)
	{
		case 1:
			return bench_clip01(0.5 + 0.15 * bench_probit(u));
		case 2:
			if (u < 0.5)
				return bench_clip01(0.3 + 0.08 * bench_probit(2 * u));
			return bench_clip01(0.7 + 0.08 * bench_probit(2 * u - 1));
		case 3:
			return u * u;
	}
	return u;
}

/*
 * n arrivals of one of Schlup's specs (Table 2) with uniform ratings.
 * Constant rate: a Poisson stream.  Rising 0..rate: a Poisson stream whose
 * rate grows linearly from 0 to rate over the time the n players take
 * (times from unit-rate Poisson times s by t = sqrt(2 T s / rate),
 * T = 2 n / rate).  Exits when memory runs out.
 */
static inline MMArrival *
make_schlup_stream(int n, double rate, int rising, uint64_t seed)
{
	MMArrival  *a = malloc(sizeof(MMArrival) * n);
	uint64_t	state = seed;
	double		s = 0.0;
	double		horizon = 2.0 * n / rate;

	if (a == NULL)
		exit(1);
	for (int i = 0; i < n; i++)
	{
		s += -log(1.0 - uniform(&state));
		a[i].id = i + 1;
		a[i].rating = bench_rating(uniform(&state));
		a[i].arrival = rising ? sqrt(2.0 * horizon * s / rate) : s / rate;
	}
	return a;
}

#endif							/* BENCH_RANDOM_H */
