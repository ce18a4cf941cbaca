/*
 * bench_random.h
 *		A small deterministic generator (splitmix64) shared by the benchmark
 *		programs, so that every run of a benchmark sees the same streams.
 */
#ifndef BENCH_RANDOM_H
#define BENCH_RANDOM_H

#include <stdint.h>

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

#endif							/* BENCH_RANDOM_H */
