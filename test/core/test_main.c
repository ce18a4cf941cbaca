/*
 * test_main.c
 *		Runs every unit test of the core and prints "N passed, N failed".
 *
 * Usage: test_core [name-substring]
 */
#include "mm_test.h"
#include "tests.h"

#include <string.h>

int			mm_test_failed;

static const MMTestCase tests[] = {
	{"cost_examples", test_cost_examples},
	{"cost_criteria", test_cost_criteria},
	{"cost_invalid", test_cost_invalid},
	{"config", test_config},
};

int
main(int argc, char **argv)
{
	int			passed = 0;
	int			failed = 0;

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
	{
		if (argc > 1 && strstr(tests[i].name, argv[1]) == NULL)
			continue;
		mm_test_failed = 0;
		tests[i].fn();
		printf("%s %s\n", mm_test_failed ? "FAIL" : "ok  ", tests[i].name);
		if (mm_test_failed)
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
