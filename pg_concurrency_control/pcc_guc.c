/*-------------------------------------------------------------------------
 *
 * pcc_guc.c
 *	  Configuration parameters of pg_concurrency_control.
 *
 * Parameters that the gates share (limits, enabled, queue settings,
 * groups) are PGC_SIGHUP.  They reach shared memory through one writer:
 * pcc_publish_settings(), run by the postmaster when it creates the
 * segment and afterwards only by the watchdog worker, after its own reload
 * (and the groups at its scans while one waits for a place; see pcc.h).
 * No assign hook touches shared memory, so the postmaster, which runs
 * every assign hook on a reload, takes no lock a backend could hold.
 * Per-session parameters that could let a user dodge a limit (bypass, the
 * timeouts and their actions, the cost threshold) are PGC_SUSET.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"
#include "pcc_compat.h"
#include "pcc_gate.h"
#include "pcc_group.h"
#include "pcc_guc.h"

bool		pcc_enabled = true;
bool		pcc_bypass = false;
static int		pcc_limits[PCC_NUM_GATES] = {64, 8, 64, 64};
double		pcc_bigquery_cost_threshold = -1;
int			pcc_control_timeout = 0;
int			pcc_bigsql_control_timeout = 0;
int			pcc_timeout_action = PCC_ACTION_ERROR;
int			pcc_bigsql_timeout_action = PCC_ACTION_ERROR;
static int		pcc_max_waiters = 0;
static int		pcc_queue_order = PCC_ORDER_FIFO;
static int		pcc_warm_max_wait = 1;
static int		pcc_quantum = 2;
static int		pcc_max_turn_wait = 300;
static double pcc_turn_grace = 0.2;
static double pcc_turn_grace_max = 5;
int			pcc_priority = PCC_PRIORITY_NORMAL;
static int		pcc_priority_aging = 10 * 1000;
static int		pcc_auto_min = 2;
static int		pcc_auto_max = 64;
bool		pcc_log_auto = false;
char	   *pcc_workload_group = NULL;
static char *pcc_groups = NULL;

/* The RDS module's spellings first-class, with readable aliases. */
static const struct config_enum_entry timeout_action_options[] = {
	{"error", PCC_ACTION_ERROR, false},
	{"proceed", PCC_ACTION_PROCEED, false},
	{"wait", PCC_ACTION_WAIT, false},
	{"TCC_rollback", PCC_ACTION_ERROR, false},
	{"TCC_break", PCC_ACTION_PROCEED, false},
	{"TCC_wait", PCC_ACTION_WAIT, false},
	{NULL, 0, false}
};

static const struct config_enum_entry priority_options[] = {
	{"high", PCC_PRIORITY_HIGH, false},
	{"normal", PCC_PRIORITY_NORMAL, false},
	{"low", PCC_PRIORITY_LOW, false},
	{NULL, 0, false}
};

static const struct config_enum_entry queue_order_options[] = {
	{"fifo", PCC_ORDER_FIFO, false},
	{"warm", PCC_ORDER_WARM, false},
	{NULL, 0, false}
};

/*
 * Write one gate's effective limit to shared memory.  An auto limit is
 * left to the controller (pcc_auto.c).
 */
static void
publish_limit(PccGateId id, int limit, bool enabled)
{
	PccGate    *gate = pcc_gate(id);

	if (enabled && limit == PCC_LIMIT_AUTO)
	{
		pcc_auto_switch_on(id);
		return;
	}
	pg_atomic_write_u32(&gate->auto_on, 0);
	pg_atomic_write_u32(&gate->limit,
						(!enabled || limit == 0) ? PCC_UNLIMITED : (uint32) limit);
}

static bool
check_group(char **newval, void **extra, GucSource source)
{
	if (**newval == '\0' || pcc_group_name_valid(*newval))
		return true;
	GUC_check_errdetail("A group name is 1 to %d lower-case letters, digits or underscores.",
						PCC_GROUP_NAME_LEN - 1);
	return false;
}

static void
assign_group(const char *newval, void *extra)
{
	pcc_session_group_changed();
}

static bool
check_groups(char **newval, void **extra, GucSource source)
{
	PccGroupList list;

	return pcc_groups_parse(*newval, &list);
}

/*
 * Apply the groups setting as this process sees it, again (retry) while a
 * group waits for a place; true while one does (pcc_groups_publish).
 */
bool
pcc_publish_groups(bool retry)
{
	PccGroupList groups;

	return pcc_groups_parse(pcc_groups ? pcc_groups : "", &groups) &&
		pcc_groups_publish(&groups, pcc_enabled, retry);
}

/*
 * Copy every shared setting into shared memory, as this process sees the
 * configuration now.  The one writer of the settings (see pcc.h).
 * Returns pcc_publish_groups()'s verdict.
 */
bool
pcc_publish_settings(void)
{
	bool		groups_pending = pcc_publish_groups(false);

	pg_atomic_write_u32(&pcc_shared->auto_min, (uint32) pcc_auto_min);
	pg_atomic_write_u32(&pcc_shared->auto_max, (uint32) pcc_auto_max);
	for (int id = 0; id < PCC_NUM_GATES; id++)
		publish_limit(id, pcc_limits[id], pcc_enabled);
	pg_atomic_write_u32(&pcc_shared->max_waiters, (uint32) pcc_max_waiters);
	pg_atomic_write_u32(&pcc_shared->queue_order, (uint32) pcc_queue_order);
	pg_atomic_write_u32(&pcc_shared->warm_max_wait_ms, (uint32) pcc_warm_max_wait);
	pg_atomic_write_u32(&pcc_shared->quantum_ms, (uint32) pcc_quantum);
	pg_atomic_write_u32(&pcc_shared->max_turn_wait_ms, (uint32) pcc_max_turn_wait);
	pg_atomic_write_u32(&pcc_shared->turn_grace_us,
						(uint32) rint(pcc_turn_grace * 1000.0));
	pg_atomic_write_u32(&pcc_shared->turn_grace_max_us,
						(uint32) rint(pcc_turn_grace_max * 1000.0));
	pg_atomic_write_u32(&pcc_shared->priority_aging_ms, (uint32) pcc_priority_aging);
	pg_atomic_write_u64(&pcc_shared->config_loaded, (uint64) PgReloadTime);

	/*
	 * The watchdog's scan then reads each gate's queue, as an enqueuer
	 * reads the limit after joining it: a full barrier on both sides, so
	 * that one of them sees a raised limit meet a new waiter.
	 */
	pg_memory_barrier();
	return groups_pending;
}

static void
define_limit(PccGateId id, const char *desc)
{
	DefineCustomIntVariable(pcc_limit_guc_name(id), desc,
							"0 means unlimited, -1 tunes the limit automatically between auto_min and auto_max.",
							&pcc_limits[id], pcc_limits[id], PCC_LIMIT_AUTO,
							MAX_BACKENDS, PGC_SIGHUP, 0, NULL, NULL, NULL);
}

static void
define_timeout(const char *name, const char *desc, int *var)
{
	DefineCustomIntVariable(name, desc,
							"0 waits without limit (statement_timeout still applies).",
							var, 0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MS, NULL, NULL, NULL);
}

static void
define_timeout_action(const char *name, const char *desc, int *var)
{
	DefineCustomEnumVariable(name, desc,
							 "error (TCC_rollback) raises an error, proceed (TCC_break) runs without a slot, wait (TCC_wait) keeps waiting.",
							 var, PCC_ACTION_ERROR, timeout_action_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* Called from _PG_init. */
void
pcc_define_gucs(void)
{
	DefineCustomBoolVariable("pg_concurrency_control.enabled",
							 "Turns admission control on or off.",
							 NULL, &pcc_enabled, true,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	define_limit(PCC_GATE_QUERY,
				 "Read-only statements outside a transaction block allowed to run at once.");
	define_limit(PCC_GATE_BIGQUERY,
				 "Big statements (hinted /*+bigsql*/ or over the cost threshold) allowed to run at once.");
	define_limit(PCC_GATE_TRANSACTION,
				 "Transaction blocks (explicit, chained or implicit) allowed to be open at once.");
	define_limit(PCC_GATE_AUTOCOMMIT,
				 "Writing statements outside a transaction block allowed to run at once.");
	DefineCustomRealVariable("pg_concurrency_control.bigquery_cost_threshold",
							 "Planned total cost from which a statement counts as a big query.",
							 "-1 disables classification by cost.",
							 &pcc_bigquery_cost_threshold, -1, -1, DBL_MAX,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	define_timeout("pg_concurrency_control.control_timeout",
				   "Longest wait for a query, transaction or autocommit slot.",
				   &pcc_control_timeout);
	define_timeout("pg_concurrency_control.bigsql_control_timeout",
				   "Longest wait for a bigquery slot.",
				   &pcc_bigsql_control_timeout);
	define_timeout_action("pg_concurrency_control.timeout_action",
						  "What happens when control_timeout expires.",
						  &pcc_timeout_action);
	define_timeout_action("pg_concurrency_control.bigsql_timeout_action",
						  "What happens when bigsql_control_timeout expires.",
						  &pcc_bigsql_timeout_action);
	DefineCustomIntVariable("pg_concurrency_control.max_waiters",
							"Longest queue allowed per gate; newcomers beyond it fail at once.",
							"0 means unbounded.",
							&pcc_max_waiters, 0, 0, MAX_BACKENDS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_concurrency_control.bypass",
							 "Exempts this session from admission control.",
							 NULL, &pcc_bypass, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("pg_concurrency_control.queue_order",
							 "Which waiter a freed slot goes to.",
							 "fifo: the oldest; warm: the newest, unless the oldest has waited warm_max_wait.",
							 &pcc_queue_order, PCC_ORDER_FIFO, queue_order_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.warm_max_wait",
							"With queue_order = warm, a waiter older than this is admitted first.",
							NULL, &pcc_warm_max_wait, 1, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.quantum",
							"Longest turn: while others wait, a session keeps its slot for the next transaction until this long after it was admitted.",
							"0 gives the slot back after every transaction.",
							&pcc_quantum, 2, 0, 60 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.max_turn_wait",
							"Once the session next in line has waited this long, or a third of it more than its gate's recent mean wait if that is longer, or would have by the end of a session's grace, the turns at its gate end at their next COMMIT.",
							"Turns also shrink as the queue grows: with that budget B (the status column turn_budget_ms), W sessions queued and a limit of L, a turn lasts at most B * L / W (and never longer than quantum). 0 leaves turns at quantum.",
							&pcc_max_turn_wait, 300, 0, 60 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomRealVariable("pg_concurrency_control.turn_grace",
							 "Shortest grace: a kept slot whose session sends nothing for this long is given back before its turn ends.",
							 "0 keeps it for the whole turn (turn_grace_max then does nothing). Sessions whose clients reply quickly earn longer ones, see turn_grace_max. Microseconds are accepted, as '200us'. On a gate where nothing else moves, the slot goes back up to 5 ms, or the grace if longer, after the grace.",
							 &pcc_turn_grace, 0.2, 0, 1000,
							 PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomRealVariable("pg_concurrency_control.turn_grace_max",
							 "Longest grace of a session whose client usually sends its next transaction quickly.",
							 "A session's grace is twice its client's usual time from COMMIT to the next transaction, at least turn_grace; a client usually slower than half of this thinks between transactions and gets turn_grace. At or below turn_grace, every session gets turn_grace.",
							 &pcc_turn_grace_max, 5, 0, 1000,
							 PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("pg_concurrency_control.priority",
							 "Queue priority of this session's statements: high, normal or low.",
							 "Higher priority waiters are admitted first; see priority_aging.",
							 &pcc_priority, PCC_PRIORITY_NORMAL, priority_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.priority_aging",
							"Head start of a waiter over waiters one priority lower.",
							"A waiter passes lower priority waiters that arrived less than this before it (twice this for two levels), and nobody else. 0 makes the queues FIFO regardless of priority.",
							&pcc_priority_aging, 10 * 1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.auto_min",
							"Lowest limit an automatically tuned gate (limit -1) goes down to.",
							NULL, &pcc_auto_min, 2, 1, MAX_BACKENDS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("pg_concurrency_control.auto_max",
							"Highest limit an automatically tuned gate (limit -1) goes up to.",
							"Below auto_min, auto_min is used.",
							&pcc_auto_max, 64, 1, MAX_BACKENDS,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("pg_concurrency_control.log_auto",
							 "Logs what the adaptive limits' controller decides: probes and trials.",
							 "The watchdog logs each probe's baseline and each trial's throughputs and verdict.",
							 &pcc_log_auto, false,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("pg_concurrency_control.groups",
							   "Workload groups and their limits, as name=limit, ...",
							   "A session in a group (pg_concurrency_control.workload_group) takes its group's slot before its gate's. A limit of 0 means unlimited.",
							   &pcc_groups, "", PGC_SIGHUP, 0,
							   check_groups, NULL, NULL);
	DefineCustomStringVariable("pg_concurrency_control.workload_group",
							   "Workload group of this session (see pg_concurrency_control.groups).",
							   "Empty: no group. A group not in pg_concurrency_control.groups gates nothing.",
							   &pcc_workload_group, "", PGC_SUSET, 0,
							   check_group, assign_group, NULL);
	MarkGUCPrefixReserved("pg_concurrency_control");
}
