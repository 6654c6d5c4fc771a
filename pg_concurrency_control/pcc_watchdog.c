/*-------------------------------------------------------------------------
 *
 * pcc_watchdog.c
 *	  Background worker that breaks deadlocks the lock manager cannot see.
 *
 * A queued backend may hold a heavyweight lock (taken while parsing, or
 * earlier in its transaction block) that a slot holder needs.  If every
 * holder is stuck like that, nobody releases a slot and nothing detects
 * it.  Several times per deadlock_timeout this worker counts, for each gate
 * with waiters, the holders blocked on a heavyweight lock for longer than
 * deadlock_timeout, publishes that count, and hands slots to waiters as if
 * those holders were not there (as InnoDB does for innodb_thread_concurrency).
 * It also applies reloaded limits in case no waiter woke to do it, frees
 * kept slots whose turn is over (see pcc_gate_linger), and steps the
 * controllers of adaptive limits (see pcc_auto.c).  Workload groups are
 * gates here like the others.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pcc.h"

PGDLLEXPORT void pcc_watchdog_main(Datum main_arg);

/*
 * How often to look: a quarter of deadlock_timeout, within [10ms, 250ms];
 * with adaptive limits, at least every PCC_AUTO_INTERVAL_MS; while slots
 * are kept between transactions, a quarter of the quantum, so that one
 * nobody resumes is freed soon after its turn ends.
 */
static long
pcc_watchdog_interval(void)
{
	long		interval = Max(10, Min(DeadlockTimeout / 4, 250));
	long		quantum_ms = pg_atomic_read_u32(&pcc_shared->quantum_ms);

	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pg_atomic_read_u32(&pcc_gate(id)->auto_on))
			interval = Min(interval, PCC_AUTO_INTERVAL_MS);
	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pcc_gate(id)->nlingering > 0)
			return Min(interval, Max(1, quantum_ms / 4));
	return interval;
}

/* One pass over the gates. */
static void
pcc_watchdog_scan(void)
{
	TimestampTz now = GetCurrentTimestamp();

	for (int id = 0; id < PCC_NUM_SLOTS; id++)
	{
		PccGate    *gate = pcc_gate(id);
		uint64		state = pg_atomic_read_u64(&gate->state);
		uint32		stuck = 0;

		pcc_auto_tick(id, now);
		if (pcc_state_waiting(state) > 0)
			stuck = pcc_gate_count_stuck_holders(id, now);
		if (pg_atomic_read_u32(&gate->stuck) != stuck)
			pg_atomic_write_u32(&gate->stuck, stuck);
		if (pcc_state_waiting(state) > 0 || gate->nlingering > 0)
			pcc_gate_grant_waiters(gate);
	}
}

/* Entry point of the worker. */
void
pcc_watchdog_main(Datum main_arg)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	for (;;)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 pcc_watchdog_interval(), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		pcc_watchdog_scan();
	}
}

/* Called from _PG_init. */
void
pcc_register_watchdog(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS;
	worker.bgw_start_time = BgWorkerStart_PostmasterStart;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "pg_concurrency_control");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "pcc_watchdog_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "pg_concurrency_control watchdog");
	snprintf(worker.bgw_type, BGW_MAXLEN, "pg_concurrency_control watchdog");
	RegisterBackgroundWorker(&worker);
}
