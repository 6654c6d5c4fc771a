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
 * It also frees kept slots whose turn is over or whose gate's next in
 * line is overdue (see pcc_gate_linger) and steps the controllers of
 * adaptive limits (see pcc_auto.c).  Workload groups are gates here like
 * the others.
 *
 * It is the one writer of the shared settings: at its start and after
 * each reload of the configuration it publishes them (pcc_guc.c), and the
 * groups again at each scan while one waits for a place, and admits
 * whoever a raised limit lets in.  Past its start (joining as a
 * backend connected to no database, which on failure exits and is
 * retried), nothing it does can fail: SIGTERM only sets a flag that the
 * loop acts on between passes, so the worker never leaves a gate's
 * spinlock or the group table half-written.
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
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"
#include "pcc_compat.h"
#include "pcc_gate.h"
#include "pcc_guc.h"
#include "pcc_watchdog.h"

/*
 * The shortest sleep while slots are kept: a wake-up per millisecond (the
 * default turn_grace is 0.2 ms) would cost more than a kept slot idle a
 * few milliseconds past its grace on a gate where nothing else moves.
 */
#define PCC_KEPT_POLL_MIN_MS	5

/*
 * The lock wait of a backend, timed on the monotonic clock.  PostgreSQL
 * records when a wait began on the wall clock (PGPROC.waitStart), where a
 * step of the clock would make every wait look hours long, or not begun.
 * So the pass that first sees a slot holder's wait times it from then,
 * crediting its wall-clock age up to the time since the pass before, which
 * would have seen it had it begun earlier: a backend waits for a lock only
 * after it has taken its slot.  A restarted worker times every wait anew,
 * so the escape may then come up to deadlock_timeout late.  Indexed like
 * pcc_shared->backends; the worker's own memory.
 */
typedef struct LockWait
{
	TimestampTz start;			/* its waitStart, which names it; 0: none */
	PccTime		since;			/* when it began, on the monotonic clock */
} LockWait;

static LockWait *lock_waits = NULL;

/*
 * The start of a wait whose waitStart PostgreSQL has cleared while it goes
 * on (ProcWakeup, called by a waiting backend's own deadlock check, clears
 * the caller's), first seen so: timed from then, without credit.
 */
#define LOCK_WAIT_UNTIMED	((TimestampTz) -1)

/* When the last full pass timed the lock waits; 0 before the first. */
static PccTime lock_waits_timed = 0;

/*
 * How often to make a full pass: a quarter of deadlock_timeout, within
 * [10ms, 250ms]; with adaptive limits, at least every PCC_AUTO_INTERVAL_MS.
 */
static long
pcc_watchdog_scan_interval(void)
{
	long		interval = Max(10, Min(DeadlockTimeout / 4, 250));

	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pg_atomic_read_u32(&pcc_gate(id)->auto_on))
			interval = Min(interval, PCC_AUTO_INTERVAL_MS);
	return interval;
}

/*
 * How soon to look at kept slots again, in ms, or -1 if no gate has any:
 * a quarter of the shortest turn of a gate that keeps slots, or of
 * max_turn_wait if shorter (at least 10ms; the turn budget is longer), so
 * that one nobody resumes is freed soon after its turn ends or its gate's
 * next in line is overdue; when turn_grace is set, no longer than it (the
 * shortest grace), but not below PCC_KEPT_POLL_MIN_MS.  Under load every
 * release frees idle kept slots sooner; this is for a gate where nothing
 * else moves.  Only gates (not groups) keep slots.
 */
static long
pcc_watchdog_kept_interval(void)
{
	uint32		grace_us = pg_atomic_read_u32(&pcc_shared->turn_grace_us);
	int64		budget_ms = pg_atomic_read_u32(&pcc_shared->max_turn_wait_ms);
	long		interval = -1;

	for (int id = 0; id < PCC_NUM_GATES; id++)
	{
		PccGate    *gate = pcc_gate(id);
		int64		quarter_ms;
		long		turn_ms;

		if (gate->nlingering == 0)
			continue;
		quarter_ms = pcc_gate_turn_us(gate) / 4000;
		if (budget_ms > 0)
			quarter_ms = Min(quarter_ms, budget_ms / 4);
		turn_ms = (long) Max(10, quarter_ms);
		if (interval < 0 || turn_ms < interval)
			interval = turn_ms;
	}
	if (interval >= 0 && grace_us > 0)
		interval = Min(interval, Max(PCC_KEPT_POLL_MIN_MS, (long) (grace_us / 1000)));
	return interval;
}

/*
 * Note the lock waits of slot holders begun and ended since the last pass
 * (LockWait), and count per gate the holders blocked on a heavyweight lock
 * for at least deadlock_timeout into stuck.  Such a holder may be waiting
 * for a lock that a queued backend holds, a deadlock the lock manager
 * cannot see; the grant logic does not count them against the limit.
 * Only holders: their PGPROCs are few, and a pass reads no other backend's.
 */
static void
pcc_watchdog_time_lock_waits(PccTime now, uint32 stuck[PCC_NUM_GATE_IDS])
{
	TimestampTz wall_now = GetCurrentTimestamp();
	int64		most_credit = lock_waits_timed == 0 ? 0 : now - lock_waits_timed;

	memset(stuck, 0, PCC_NUM_GATE_IDS * sizeof(uint32));
	for (int i = 0; i < pcc_shared->nbackends; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		uint32		held = pg_atomic_read_u32(&pcc_shared->backends[i].held);
		TimestampTz start = 0;

		if (held != 0 && proc->waitLock != NULL)
		{
			start = PCC_PROC_LOCK_WAIT_START(proc);
			if (start == 0)
				start = lock_waits[i].start != 0 ? lock_waits[i].start :
					LOCK_WAIT_UNTIMED;
		}
		if (start != 0 && start != lock_waits[i].start)
			lock_waits[i].since = now - (start == LOCK_WAIT_UNTIMED ? 0 :
										 Max(0, Min(wall_now - start, most_credit)));
		lock_waits[i].start = start;
		if (start != 0 &&
			now - lock_waits[i].since >= (int64) DeadlockTimeout * 1000)
			for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
				if (held & (1U << id))
					stuck[id]++;
	}
	lock_waits_timed = now;
}

/*
 * The full pass over the gates: adaptive limits, holders stuck on
 * heavyweight locks, grants.
 */
static void
pcc_watchdog_scan(void)
{
	PccTime		now = pcc_now();
	uint32		stuck_holders[PCC_NUM_GATE_IDS];

	pcc_watchdog_time_lock_waits(now, stuck_holders);
	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
	{
		PccGate    *gate = pcc_gate(id);
		uint64		state = pg_atomic_read_u64(&gate->state);
		uint32		stuck = 0;

		bool		grew = pcc_auto_tick(id, now,
										 pcc_log_auto ? pcc_gate_name(id) : NULL);

		if (pcc_state_waiting(state) > 0)
			stuck = stuck_holders[id];
		if (pg_atomic_read_u32(&gate->stuck) != stuck)
			pg_atomic_write_u32(&gate->stuck, stuck);
		if (grew || pcc_state_waiting(state) > 0 || gate->nlingering > 0)
			pcc_gate_grant_waiters(gate);
	}
}

/* Between full passes: free the kept slots that are due, and grant them. */
static void
pcc_watchdog_free_kept(void)
{
	for (int id = 0; id < PCC_NUM_GATES; id++)
		if (pcc_gate(id)->nlingering > 0)
			pcc_gate_grant_waiters(pcc_gate(id));
}

/* ms from now until t, rounded up, at least 0. */
static long
pcc_ms_until(PccTime t)
{
	PccTime		now = pcc_now();

	return t > now ? (long) ((t - now + 999) / 1000) : 0;
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
	PccTime		next_scan = 0;	/* when the next full pass is due */
	bool		groups_pending; /* a group waits for a place to drain */

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	/* pg_cancel_backend(): there is no statement to cancel */
	pqsignal(SIGINT, SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: in pg_stat_activity and ProcSignal (pcc_register_watchdog) */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	lock_waits = MemoryContextAllocZero(TopMemoryContext,
										pcc_shared->nbackends * sizeof(LockWait));
	wait_event = pcc_wait_event("ConcurrencyControlWatchdog");
	pg_atomic_write_u32(&pcc_shared->watchdog_procno, (uint32) PCC_MY_PROCNO());
	on_shmem_exit(pcc_watchdog_exit, (Datum) 0);
	/* a reload may have come while it was not running */
	groups_pending = pcc_publish_settings();
	while (!ShutdownRequestPending)
	{
		long		sleep_ms;
		long		kept_ms;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			groups_pending = pcc_publish_settings();
			next_scan = 0;
		}
		if (pcc_now() >= next_scan)
		{
			if (groups_pending)
				groups_pending = pcc_publish_groups(true);
			pcc_watchdog_scan();
			next_scan = pcc_time_plus_ms(pcc_now(), pcc_watchdog_scan_interval());
		}
		else
			pcc_watchdog_free_kept();
		sleep_ms = pcc_ms_until(next_scan);
		kept_ms = pcc_watchdog_kept_interval();
		if (kept_ms >= 0)
			sleep_ms = Min(sleep_ms, kept_ms);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 sleep_ms, wait_event);
		ResetLatch(MyLatch);
		/* also absorbs ProcSignal barriers: DROP DATABASE waits for them */
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
 *
 * The worker connects to no database, as the logical replication
 * launcher does, so that it is in pg_stat_activity (its backend_type and
 * wait event) and a superuser's pg_terminate_backend() can restart it;
 * it then also answers ProcSignal barriers, at every wake-up.  PostgreSQL
 * starts such a worker only once the server takes connections, read-only
 * ones on a hot standby included: before that no session can queue.
 */
void
pcc_register_watchdog(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
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
