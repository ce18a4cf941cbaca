# matchmaker: PGXS build
EXTENSION = matchmaker
MODULE_big = matchmaker
CORE_OBJS = src/core/mm_cost.o
OBJS = src/matchmaker.o src/queue.o src/ticket.o src/cost.o $(CORE_OBJS)
DATA = $(wildcard sql/matchmaker--*.sql)
PGFILEDESC = "matchmaker - game matchmaking inside PostgreSQL"

REGRESS = create_queue alter_drop_queue enqueue_cancel match_cost dump_config
REGRESS_OPTS = --load-extension=matchmaker

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
EXTRA_CLEAN = results output_iso test/core/test_core src/core/*.o

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The core's unit tests: plain C, no server needed.
CORE_SRCS = $(wildcard src/core/*.c)
CORE_TEST_SRCS = $(wildcard test/core/*.c)
CORE_TEST_CFLAGS ?= -O2 -g
test/core/test_core: $(CORE_SRCS) $(CORE_TEST_SRCS) src/core/mm_core.h test/core/*.h
	$(CC) -std=gnu99 -Wall -Wextra -Werror $(CORE_TEST_CFLAGS) -o $@ $(CORE_TEST_SRCS) $(CORE_SRCS) -lm

.PHONY: core-check
core-check: test/core/test_core
	test/core/test_core
