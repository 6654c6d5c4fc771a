# pg_concurrency_control: in-backend admission control for PostgreSQL (PGXS)
#
#   make && make install          build and install (as root)
#   make regresscheck             pg_regress on a temporary instance
#   make tapcheck                 TAP tests (PROVE_TESTS=t/001_gates.pl for one)
# Both suites need an OS user that may run initdb (not root); scripts/test.sh
# runs everything as a newcomer would.

MODULE_big = pg_concurrency_control
OBJS = $(patsubst %.c,%.o,$(wildcard pg_concurrency_control/*.c))
EXTENSION = pg_concurrency_control
DATA = $(wildcard pg_concurrency_control--*.sql)
PGFILEDESC = "pg_concurrency_control - admission control gates"

# pg_regress and TAP run their own instance with the module preloaded.
REGRESS = setup guc classify nested xact auto interface
REGRESS_OPTS = --temp-config=$(srcdir)/t/pcc_test.conf --temp-instance=./tmp_check
TAP_TESTS = 1

# Warnings on; the project's own test runner adds COPT=-Werror.
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies unless the server was configured with
# --enable-depend: every object depends on every header.
$(OBJS): $(wildcard pg_concurrency_control/*.h)

.PHONY: regresscheck tapcheck
regresscheck: submake $(REGRESS_PREP)
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)
tapcheck:
	$(prove_installcheck)
