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
 * It also frees kept slots whose turn is over (see pcc_gate_linger) and
 * steps the controllers of adaptive limits (see pcc_auto.c).  Workload
 * groups are gates here like the others.
 *
 * It is the one writer of the shared settings: at its start and after
 * each reload of the configuration it publishes them (pcc_guc.c) and
 * admits whoever a raised limit lets in.  Nothing else it does can fail:
 * SIGTERM only sets a flag that the loop acts on between passes, so the
 * worker never leaves a gate's spinlock or the group table half-written.
 * The server does not start without it (pcc_register_watchdog): a kept
 * slot nobody resumes, the deadlock escape and adaptive limits rely on it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"
#include "pcc_compat.h"
#include "pcc_gate.h"
#include "pcc_guc.h"
#include "pcc_watchdog.h"

/*
 * How often to look: a quarter of deadlock_timeout, within [10ms, 250ms];
 * with adaptive limits, at least every PCC_AUTO_INTERVAL_MS; while slots
 * are kept between transactions, a quarter of a turn (at least 10ms),
 * so that one nobody resumes is freed soon after its turn ends, or the
 * turn_grace (at least 1ms): under load every release frees idle kept
 * slots sooner, this pass is for a gate where nothing else moves.  With a
 * quantum of 0 the next pass frees them all.
 */
static long
pcc_watchdog_interval(void)
{
	long		interval = Max(10, Min(DeadlockTimeout / 4, 250));
	long		grace_us = pg_atomic_read_u32(&pcc_shared->turn_grace_us);

	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pg_atomic_read_u32(&pcc_gate(id)->auto_on))
			interval = Min(interval, PCC_AUTO_INTERVAL_MS);
	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pcc_gate(id)->nlingering > 0)
		{
			long		turn_ms = Max(10, pcc_gate_turn_us(pcc_gate(id)) / 4000);

			if (grace_us > 0)
				turn_ms = Min(turn_ms, Max(1, grace_us / 1000));
			return Min(interval, turn_ms);
		}
	return interval;
}

/*
 * One pass over the gates.  Lock waits are timed on the wall clock, as
 * PostgreSQL records their start (PGPROC.waitStart).
 */
static void
pcc_watchdog_scan(void)
{
	PccTime		now = pcc_now();
	TimestampTz wall_now = GetCurrentTimestamp();

	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
	{
		PccGate    *gate = pcc_gate(id);
		uint64		state = pg_atomic_read_u64(&gate->state);
		uint32		stuck = 0;

		bool		grew = pcc_auto_tick(id, now);

		if (pcc_state_waiting(state) > 0)
			stuck = pcc_gate_count_stuck_holders(id, wall_now);
		if (pg_atomic_read_u32(&gate->stuck) != stuck)
			pg_atomic_write_u32(&gate->stuck, stuck);
		if (grew || pcc_state_waiting(state) > 0 || gate->nlingering > 0)
			pcc_gate_grant_waiters(gate);
	}
}

/* on_shmem_exit: nobody should set a latch that is no longer ours. */
static void
pcc_watchdog_exit(int code, Datum arg)
{
	pg_atomic_write_u32(&pcc_shared->watchdog_procno, PCC_NO_WATCHDOG);
}

/*
 * Entry point of the worker.  Exits with 1 on SIGTERM, so that the
 * postmaster starts it again unless the server is shutting down.
 */
void
pcc_watchdog_main(Datum main_arg)
{
	uint32		wait_event;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	wait_event = pcc_wait_event("ConcurrencyControlWatchdog");
	pg_atomic_write_u32(&pcc_shared->watchdog_procno, (uint32) PCC_MY_PROCNO());
	on_shmem_exit(pcc_watchdog_exit, (Datum) 0);
	/* a reload may have come while it was not running */
	pcc_publish_settings();
	while (!ShutdownRequestPending)
	{
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			pcc_publish_settings();
		}
		pcc_watchdog_scan();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 pcc_watchdog_interval(), wait_event);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	proc_exit(1);
}

/* Is a worker calling function registered (by this library)? */
static bool
pcc_worker_registered(const char *function)
{
	PCC_BGWORKER_ITER iter;

	pcc_bgworker_foreach(iter)
	{
		RegisteredBgWorker *rw = pcc_bgworker_current(iter);

		if (strcmp(rw->rw_worker.bgw_library_name, "pg_concurrency_control") == 0 &&
			strcmp(rw->rw_worker.bgw_function_name, function) == 0)
			return true;
	}
	return false;
}

/*
 * Called from _PG_init.  Without the worker, a waiter behind a slot kept
 * by an idle session could sleep forever: refuse to start instead.
 * RegisterBackgroundWorker() only logs when max_worker_processes is used
 * up.
 */
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
	/* the postmaster itself; single-user mode runs no worker */
	if (IsPostmasterEnvironment && !IsUnderPostmaster &&
		!pcc_worker_registered(worker.bgw_function_name))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("pg_concurrency_control cannot register its watchdog worker"),
				 errdetail("max_worker_processes is %d and other modules use every slot.",
						   max_worker_processes),
				 errhint("Raise max_worker_processes by one, or remove pg_concurrency_control from shared_preload_libraries.")));
}
