/*
 * tests.h
 *		The unit tests of the core, one declaration per test.
 */
#ifndef MM_TESTS_H
#define MM_TESTS_H

/* test_cost.c */
extern void test_cost_examples(void);
extern void test_cost_criteria(void);
extern void test_cost_invalid(void);
extern void test_config(void);

#endif							/* MM_TESTS_H */
