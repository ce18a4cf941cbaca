/*
 * mm_test.h
 *		A very small unit-test harness for the pure-C core.
 *
 * Each test is a function registered in test_main.c; a failed check prints
 * its file, line and expression and marks the running test failed.
 */
#ifndef MM_TEST_H
#define MM_TEST_H

#include <math.h>
#include <stdio.h>

extern int	mm_test_failed;		/* set by a failing check in the running test */

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			mm_test_failed = 1; \
		} \
	} while (0)

#define CHECK_NEAR(a, b, tol) \
	do { \
		double _a = (a), _b = (b); \
		if (!(fabs(_a - _b) <= (tol))) { \
			fprintf(stderr, "%s:%d: check failed: %s = %.9g, expected %.9g (+/- %g)\n", \
					__FILE__, __LINE__, #a, _a, _b, (double) (tol)); \
			mm_test_failed = 1; \
		} \
	} while (0)

#define CHECK_INT(a, b) \
	do { \
		long long _a = (long long) (a), _b = (long long) (b); \
		if (_a != _b) { \
			fprintf(stderr, "%s:%d: check failed: %s = %lld, expected %lld\n", \
					__FILE__, __LINE__, #a, _a, _b); \
			mm_test_failed = 1; \
		} \
	} while (0)

/* For qsort: ascending doubles. */
static inline int
test_cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

typedef struct MMTestCase
{
	const char *name;
	void		(*fn) (void);
} MMTestCase;

#endif							/* MM_TEST_H */
