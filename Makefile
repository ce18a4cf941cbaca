# matchmaker: PGXS build
EXTENSION = matchmaker
MODULE_big = matchmaker
CORE_OBJS = $(patsubst %.c,%.o,$(wildcard src/core/*.c))
OBJS = src/matchmaker.o src/settings.o src/util.o src/criteria.o src/filters.o src/party.o src/params.o src/queue.o src/owner.o src/ticket.o src/cost.o src/tick.o src/tick_rows.o src/waiting.o src/events.o src/ready.o src/backfill.o src/schedule.o src/launcher.o src/worker.o src/simulate.o src/tune.o src/stats.o src/retention.o $(CORE_OBJS)
# Install and update scripts live in extension/ (sql/ and expected/ hold the
# pg_regress tests).  The current version's install script is built from the
# one source file extension/matchmaker.sql; older versions' full scripts and
# the update scripts are kept frozen.
EXTVERSION := $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" matchmaker.control)
DATA = $(filter-out extension/matchmaker--$(EXTVERSION).sql,$(wildcard extension/matchmaker--*.sql))
DATA_built = extension/matchmaker--$(EXTVERSION).sql
PGFILEDESC = "matchmaker - game matchmaking inside PostgreSQL"

REGRESS = create_queue alter_drop_queue enqueue_cancel match_cost tick simulate auto tune criteria check dump_config ready_check min_players backfill simulate_backfill filters parties queue_stats retention \
	privileges hostile upgrade cancel_provisional tick_now bad_input robustness ticket_owner node_id tick_plans
REGRESS_OPTS = --load-extension=matchmaker
ISOLATION = tick_cancel tick_unlocked tick_tick tick_queue_lock notify_payload cancel_idle alter_fresh admin_other_queue party_enqueue ready_races events backfill_races retention_races upgrade_enqueue queue_cache enqueue_races enqueue_insert enqueue_index lock_context
ISOLATION_OPTS = --inputdir=test
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

PG_CONFIG ?= pg_config
PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers
EXTRA_CLEAN = results output_iso tmp_check log test/core/test_core test/core/test_core_vg src/core/*.o src/core/*.bc

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

extension/matchmaker--$(EXTVERSION).sql: extension/matchmaker.sql
	cp $< $@

# The router extension (router/, SQL only, over PL/Proxy) installs with matchmaker.
.PHONY: install-router uninstall-router
install: install-router
uninstall: uninstall-router
install-router:
	$(MAKE) -C router PG_CONFIG=$(PG_CONFIG) install
uninstall-router:
	$(MAKE) -C router PG_CONFIG=$(PG_CONFIG) uninstall

# The core's unit tests: plain C, no server needed.
CORE_SRCS = $(wildcard src/core/*.c)
CORE_TEST_SRCS = $(wildcard test/core/*.c)
CORE_TEST_CFLAGS ?= -O2 -g
test/core/test_core: $(CORE_SRCS) $(CORE_TEST_SRCS) src/core/*.h test/core/*.h
	$(CC) -std=gnu99 -Wall -Wextra -Werror $(CORE_TEST_CFLAGS) -o $@ $(CORE_TEST_SRCS) $(CORE_SRCS) -lm

.PHONY: core-check
core-check: test/core/test_core
	test/core/test_core

# The core's unit tests under valgrind (unoptimised build, leaks are errors).
.PHONY: core-valgrind
core-valgrind: $(CORE_SRCS) $(CORE_TEST_SRCS)
	$(CC) -std=gnu99 -Wall -Wextra -Werror -O0 -g -o test/core/test_core_vg $(CORE_TEST_SRCS) $(CORE_SRCS) -lm
	valgrind -q --leak-check=full --error-exitcode=1 test/core/test_core_vg

# PGXS does not track header dependencies: rebuild every object when a header changes.
$(OBJS): $(wildcard src/*.h src/core/*.h)
