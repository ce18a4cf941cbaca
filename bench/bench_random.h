/*
 * bench_random.h
 *		A small deterministic generator (splitmix64) shared by the benchmark
 *		programs, so that every run of a benchmark sees the same streams.
 */
#ifndef BENCH_RANDOM_H
#define BENCH_RANDOM_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "../src/core/mm_core.h"

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
		a[i].rating = uniform(&state);
		a[i].arrival = rising ? sqrt(2.0 * horizon * s / rate) : s / rate;
	}
	return a;
}

#endif							/* BENCH_RANDOM_H */
