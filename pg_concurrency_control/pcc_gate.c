/*-------------------------------------------------------------------------
 *
 * pcc_gate.c
 *	  Admission gates: counting semaphores with a FIFO wait queue per
 *	  class.
 *
 * Fast path (below the limit, nobody queued): one compare-and-swap to take
 * a slot and one to give it back.  Slow path: the backend queues under the
 * gate's spinlock and sleeps on its own latch; a releaser hands its slot
 * straight to the next waiter chosen by pcc_gate_next_waiter() and sets
 * that waiter's latch.  With pg_concurrency_control.quantum, a session
 * admitted to the transaction-scoped slot of a gate keeps it between the
 * transactions of its turn (see pcc_gate_linger), and its turn goes on
 * when it needs another gate (see pcc_gate_resume).  See pcc.h for the
 * locking rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "libpq/libpq.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"
#include "pcc_compat.h"
#include "pcc_gate.h"

#define WAITING_ONE		((uint64) 1 << 32)

/* Latches are set after the spinlock is released, in batches this big. */
#define WAKE_BATCH		64

/*
 * Weight of the newest gap in this session's usual reply time: a few
 * transactions make the usual, so one long pause does not end a quick
 * client's turns, nor does one quick reply earn a thinking client a grace.
 */
#define REPLY_WEIGHT	0.25

/*
 * A quick client's grace is this many times its usual (geometric mean)
 * reply: it covers most of the spread of the replies around it, and
 * keeps the slot at most that long idle when the client does not come.
 */
#define GRACE_PER_REPLY	2

/*
 * Weight of one transaction's queue wait in its gate's recent mean wait
 * (PccGate.recent_wait_us), as a divisor: the mean follows a change of
 * load within a few dozen transactions, and with turns it averages their
 * first transactions' waits with their next ones' (0) over several turns.
 * Only transactions that queue or resume count: while nobody queues the
 * mean stays, and a mean left by an earlier queue fades within a few
 * dozen transactions of the next.
 */
#define WAIT_MEAN_DIVISOR	16

/*
 * Where the mean wait is long, turns may add max_turn_wait divided by this
 * to it (pcc_gate_turn_budget_us): a turn's first transaction then waits
 * at most a little longer than the mean, so the longest waits stay close
 * to what a queue that long costs anyway, while turns still run more than
 * one transaction.  Where the mean is under two thirds of max_turn_wait,
 * max_turn_wait alone is the bound.
 */
#define TURN_WAIT_OVER_MEAN	3

static void pcc_gate_give_back(PccGate *gate);
static PccTime pcc_usual_reply_us(void);

/*
 * This session's client's usual reply time: a moving geometric mean (so
 * that a rare long pause weighs little) of the time from the end of a
 * transaction that ended while others waited at its gate to the admission
 * of the next transaction (the client's reply or its thinking, and the
 * next statement's parse and plan, all of it time a kept slot stays idle),
 * as the log of microseconds; local, read only by this session's
 * decisions to keep its slot.  The gap runs to the next admission to a
 * gate, across transactions that take no slot.  ended_at is when the last
 * such transaction ended, 0 once its gap is counted or dropped (at exit,
 * at a group's admission).
 */
static double reply_ln = 0;
static bool reply_known = false;
static PccTime ended_at = 0;

static const char *const gate_names[PCC_NUM_GATES] = {
	"query", "bigquery", "transaction", "autocommit"
};

static const char *const limit_guc_names[PCC_NUM_GATES] = {
	"pg_concurrency_control.query_concurrency",
	"pg_concurrency_control.bigquery_concurrency",
	"pg_concurrency_control.transaction_concurrency",
	"pg_concurrency_control.autocommit_concurrency"
};

/* The parameter that sets gate id's limit. */
const char *
pcc_limit_guc_name(PccGateId id)
{
	if (PCC_IS_GROUP(id))
		return "pg_concurrency_control.groups";
	return limit_guc_names[id];
}

/*
 * A gate's name; a group's is "group:name" (read without its lock: for the
 * watchdog, the group table's one writer).
 */
const char *
pcc_gate_name(PccGateId id)
{
	if (PCC_IS_GROUP(id))
		return pcc_shared->group_labels[id - PCC_NUM_GATES];
	return gate_names[id];
}

/*
 * Copy a gate's name into buf, PCC_GROUP_LABEL_LEN bytes: a group's under
 * groups_lock, since a reload may give its place to another group ("" for
 * a free place).
 */
void
pcc_gate_name_copy(PccGateId id, char *buf)
{
	if (!PCC_IS_GROUP(id))
	{
		strlcpy(buf, gate_names[id], PCC_GROUP_LABEL_LEN);
		return;
	}
	SpinLockAcquire(&pcc_shared->groups_lock);
	strlcpy(buf, pcc_shared->group_labels[id - PCC_NUM_GATES],
			PCC_GROUP_LABEL_LEN);
	SpinLockRelease(&pcc_shared->groups_lock);
}

static const char *const priority_names[PCC_NUM_PRIORITIES] = {
	"in block", "in turn", "in turn", "in turn", "high", "normal", "low"
};

const char *
pcc_priority_name(PccPriority priority)
{
	return priority_names[priority];
}

/*
 * The waiter that has waited longest once each class's head start is
 * counted: a waiter of a higher priority counts as having arrived
 * priority_aging earlier per class, so it passes lower ones that came less
 * than that before it, and nobody else.  A session whose turn goes on from
 * another gate (an "in turn" class) counts as having arrived when its turn
 * began, in its session's priority; those of one class are served in the
 * order they queued (at most a turn apart).  Statements of a transaction
 * holding a slot (a block's, a pipeline's) go first.  Caller holds the
 * gate mutex; the queue is not empty.
 */
static PccBackend *
pcc_gate_first_waiter(PccGate *gate)
{
	PccTime		aging_us =
		(PccTime) pg_atomic_read_u32(&pcc_shared->priority_aging_ms) * 1000;
	PccBackend *first = NULL;
	PccTime		first_at = 0;

	if (!dlist_is_empty(&gate->queues[PCC_PRIORITY_IN_BLOCK]))
		return dlist_head_element(PccBackend, queue_node,
								  &gate->queues[PCC_PRIORITY_IN_BLOCK]);
	for (int p = PCC_PRIORITY_IN_TURN_HIGH; p < PCC_NUM_PRIORITIES; p++)
	{
		PccBackend *head;
		PccTime		arrived;
		int			priority = p;
		PccTime		aged_at;

		if (dlist_is_empty(&gate->queues[p]))
			continue;
		head = dlist_head_element(PccBackend, queue_node, &gate->queues[p]);
		arrived = head->queue_since;
		if (p < PCC_PRIORITY_HIGH)
		{
			arrived = head->queue_turn_start;
			priority = p + PCC_PRIORITY_TURN_OFFSET;
		}
		aged_at = arrived + (priority - PCC_PRIORITY_HIGH) * aging_us;
		if (first == NULL || aged_at < first_at)
		{
			first = head;
			first_at = aged_at;
		}
	}
	Assert(first != NULL);
	return first;
}

/*
 * The newest waiter of the highest class present (sessions in turn before
 * fresh ones, whatever their priority).
 */
static PccBackend *
pcc_gate_newest_waiter(PccGate *gate)
{
	for (int p = 0; p < PCC_NUM_PRIORITIES; p++)
		if (!dlist_is_empty(&gate->queues[p]))
			return dlist_tail_element(PccBackend, queue_node, &gate->queues[p]);
	pg_unreachable();
}

/*
 * Pick the waiter the next free slot goes to.  The one place where the
 * admission order is decided.  Caller holds the gate mutex.
 */
static PccBackend *
pcc_gate_next_waiter(PccGate *gate, PccTime now)
{
	PccBackend *first = pcc_gate_first_waiter(gate);
	uint32		bound_ms;

	if (pg_atomic_read_u32(&pcc_shared->queue_order) == PCC_ORDER_FIFO)
		return first;

	/* WARM: newest first (its caches are hot), unless the first starves. */
	bound_ms = pg_atomic_read_u32(&pcc_shared->warm_max_wait_ms);
	if (pcc_time_exceeds(first->queue_since, now, bound_ms))
		return first;
	return pcc_gate_newest_waiter(gate);
}

/* Account for a waiter leaving the queue.  Caller holds the gate mutex. */
static void
pcc_gate_unqueue(PccGate *gate, PccBackend *be, PccWaitStatus new_status)
{
	dlist_delete(&be->queue_node);
	pg_atomic_fetch_sub_u64(&gate->state, WAITING_ONE);
	pg_atomic_write_u32(&be->status, new_status);
}

/* Take be off the lingering list.  Caller holds the gate mutex. */
static void
pcc_gate_unlinger_locked(PccGate *gate, PccBackend *be)
{
	dlist_delete(&be->linger_node);
	be->linger_gate = PCC_NO_GATE;
	gate->nlingering--;
}

/*
 * How long, in microseconds, the turns at gate may make the session next
 * in line wait (0: no bound): max_turn_wait, or, where every session
 * waits nearly that long anyway, the gate's recent mean wait per
 * transaction plus a third of max_turn_wait.  By Little's law that mean
 * is the number queued over the transactions done a second: with a few
 * thousand sessions it exceeds any fixed bound that suits a few hundred,
 * which then leaves one transaction per turn.  Turns lengthen nobody's
 * mean wait (they raise the throughput) but the wait of a turn's first
 * transaction, so the third is what they add to the longest waits there.
 * Where the mean is shorter (fewer sessions, shorter transactions), the
 * fixed bound keeps turns long enough to run several transactions.
 */
int64
pcc_gate_turn_budget_us(PccGate *gate)
{
	int64		fixed_us = (int64) pg_atomic_read_u32(&pcc_shared->max_turn_wait_ms) * 1000;
	int64		mean_us = (int64) pg_atomic_read_u64(&gate->recent_wait_us);

	if (fixed_us == 0)
		return 0;
	return Max(fixed_us, mean_us + fixed_us / TURN_WAIT_OVER_MEAN);
}

/*
 * Count one transaction's queue wait (0 for a turn's next transaction) in
 * gate's recent mean wait, up to the turn budget: one wait far longer
 * (behind a holder idle in its transaction, in a low priority) must not
 * lengthen everyone's turns, and the budget grows with the mean, so that
 * steady waits longer than it still raise the mean to theirs.  Caller
 * holds the gate mutex, which makes it the only writer.
 */
static void
pcc_gate_count_wait_locked(PccGate *gate, uint64 waited_us)
{
	int64		mean_us = (int64) pg_atomic_read_u64(&gate->recent_wait_us);
	int64		counted_us = Min((int64) waited_us, pcc_gate_turn_budget_us(gate));

	mean_us += (counted_us - mean_us) / WAIT_MEAN_DIVISOR;
	pg_atomic_write_u64(&gate->recent_wait_us, (uint64) mean_us);
}

/*
 * How long a turn at gate lasts now, in microseconds: the quantum, cut to
 * the turn budget (pcc_gate_turn_budget_us) * limit / waiting so that a
 * session queued behind the others' turns waits about that budget for all
 * of them, however many are queued.  Computed afresh at every check, so
 * that a growing queue or a shorter quantum (or 0) ends turns already
 * under way.  This spreads the wait over the turns ahead;
 * pcc_gate_overdue_locked bounds it.
 */
int64
pcc_gate_turn_us(PccGate *gate)
{
	int64		turn_us = (int64) pg_atomic_read_u32(&pcc_shared->quantum_ms) * 1000;
	int64		budget_us = pcc_gate_turn_budget_us(gate);
	uint32		waiting = pcc_state_waiting(pg_atomic_read_u64(&gate->state));
	uint32		limit = pg_atomic_read_u32(&gate->limit);

	if (budget_us > 0 && waiting > 0)
	{
		int64		cut_us = budget_us * Max(limit, 1) / waiting;

		turn_us = Min(turn_us, cut_us);
	}
	return turn_us;
}

/*
 * Whether the session next in line at gate (see pcc_gate_first_waiter)
 * has queued for the turn budget (pcc_gate_turn_budget_us) or longer:
 * then no turn there goes on, so that its wait ends with the transactions
 * under way.  The turns' length alone does not bound it: a queue that was
 * short when the turns ahead began, transactions that run past their
 * turn's end, and a session that queued before the turns ahead began all
 * make it longer.  An "in turn" waiter is next in line by when its turn
 * began, so until it is served its own (short) wait is the one that
 * counts.  Under warm order a freed slot goes to the first only once it
 * has waited warm_max_wait: ending turns sooner would serve newer
 * waiters.  Caller holds the gate mutex; now may be a little older than
 * the newest queue_since, which only errs towards keeping a turn until
 * the next check.  now may also be a time to come: whether the next in
 * line will be overdue by then, if it and the budget stay
 * (pcc_gate_linger).
 */
static bool
pcc_gate_overdue_locked(PccGate *gate, PccTime now)
{
	int64		budget_us = pcc_gate_turn_budget_us(gate);

	if (budget_us == 0 ||
		pcc_state_waiting(pg_atomic_read_u64(&gate->state)) == 0)
		return false;
	if (pg_atomic_read_u32(&pcc_shared->queue_order) == PCC_ORDER_WARM)
		budget_us = Max(budget_us, (int64)
						pg_atomic_read_u32(&pcc_shared->warm_max_wait_ms) * 1000);
	return now - pcc_gate_first_waiter(gate)->queue_since >= budget_us;
}

/* When the turn that began at turn_start at gate ends. */
static PccTime
pcc_turn_end(PccGate *gate, PccTime turn_start)
{
	return turn_start + pcc_gate_turn_us(gate);
}

/*
 * Can the turn that began at turn_start at gate go on past a transaction
 * that holds its slot at now: is it still on by the time this session's
 * client usually replies (reply_us, see pcc_usual_reply_us)?
 */
static bool
pcc_turn_outlasts_reply(PccGate *gate, PccTime turn_start, PccTime now,
						PccTime reply_us)
{
	return now + reply_us < pcc_turn_end(gate, turn_start);
}

/*
 * Free the lingering slots whose turn is over, whose session has sent
 * nothing for its grace (a client that thinks between transactions would
 * keep the slot idle: the turn is only for back-to-back work), any that a
 * lowered limit no longer allows, all of them once the next in line is
 * overdue, and all of them once nobody waits (the waiters they were kept
 * against left).  Caller holds the gate mutex.
 */
static void
pcc_gate_reclaim_locked(PccGate *gate, PccTime now)
{
	uint32		limit = pg_atomic_read_u32(&gate->limit);
	/* the queue cannot change under the mutex: one verdict for all */
	int64		turn_us = pcc_gate_turn_us(gate);
	bool		overdue = pcc_gate_overdue_locked(gate, now);
	dlist_mutable_iter iter;

	dlist_foreach_modify(iter, &gate->lingering)
	{
		PccBackend *be = dlist_container(PccBackend, linger_node, iter.cur);
		uint64		state = pg_atomic_read_u64(&gate->state);

		if (be->turn_start[be->linger_gate] + turn_us > now && !overdue &&
			(be->linger_grace_us == 0 ||
			 now - be->linger_since < be->linger_grace_us) &&
			pcc_state_running(state) <= limit &&
			pcc_state_waiting(state) > 0)
			continue;
		pcc_gate_unlinger_locked(gate, be);
		pg_atomic_fetch_sub_u64(&gate->state, 1);
		pg_atomic_fetch_add_u64(&gate->released, 1);
	}
}

/*
 * Hand free slots to waiters while there are both.  A slot is free while
 * running, minus holders stuck on heavyweight locks, is under the limit.
 * now was read before the mutex was taken.  Fills wake[] with the procnos
 * whose latch the caller must set after releasing the mutex; returns how
 * many, at most WAKE_BATCH.
 */
static int
pcc_gate_grant_locked(PccGate *gate, PccTime now, int *wake, bool *more)
{
	uint32		limit = pg_atomic_read_u32(&gate->limit);
	uint32		stuck = pg_atomic_read_u32(&gate->stuck);
	int			nwake = 0;

	*more = false;
	if (gate->nlingering > 0)
		pcc_gate_reclaim_locked(gate, now);
	for (;;)
	{
		uint64		state = pg_atomic_read_u64(&gate->state);
		uint32		running = pcc_state_running(state);
		uint32		counted = running > stuck ? running - stuck : 0;
		PccBackend *be;
		uint64		waited_us;

		if (pcc_state_waiting(state) == 0 || counted >= limit)
			break;
		if (nwake == WAKE_BATCH)
		{
			*more = true;
			break;
		}

		be = pcc_gate_next_waiter(gate, now);
		dlist_delete(&be->queue_node);
		/* transfer: one more running, one less waiting, in one step */
		pg_atomic_fetch_add_u64(&gate->state, 1 - WAITING_ONE);
		/* the entry is the waiter's again once status says so: read first */
		waited_us = now > be->queue_since ? now - be->queue_since : 0;
		be->granted_turn = ++gate->turns;
		be->granted_at = now;
		pg_write_barrier();
		pg_atomic_write_u32(&be->status, PCC_WAIT_GRANTED);

		if (running >= limit)
			gate->escapes++;
		gate->queued++;
		gate->total_wait_us += waited_us;
		pcc_gate_count_wait_locked(gate, waited_us);
		if (waited_us > gate->max_wait_us)
			gate->max_wait_us = waited_us;
		pg_atomic_fetch_add_u64(&gate->admitted, 1);
		wake[nwake++] = be - pcc_shared->backends;
	}
	return nwake;
}

static void
pcc_wake(const int *wake, int nwake)
{
	for (int i = 0; i < nwake; i++)
		SetLatch(&ProcGlobal->allProcs[wake[i]].procLatch);
}

/* Set the watchdog's latch, if it runs. */
static void
pcc_wake_watchdog(void)
{
	uint32		procno = pg_atomic_read_u32(&pcc_shared->watchdog_procno);

	if (procno != PCC_NO_WATCHDOG)
		SetLatch(&ProcGlobal->allProcs[procno].procLatch);
}

/* Admit as many waiters as there are free slots (after a reload, say). */
void
pcc_gate_grant_waiters(PccGate *gate)
{
	int			wake[WAKE_BATCH];
	int			nwake;
	bool		more;

	do
	{
		PccTime		now = pcc_now();

		SpinLockAcquire(&gate->mutex);
		nwake = pcc_gate_grant_locked(gate, now, wake, &more);
		SpinLockRelease(&gate->mutex);
		pcc_wake(wake, nwake);
	} while (more);
}

/* Fast path: take a slot if one is free and nobody is queued. */
static inline bool
pcc_gate_try_fast(PccGate *gate)
{
	uint64		state = pg_atomic_read_u64(&gate->state);
	uint32		limit = pg_atomic_read_u32(&gate->limit);

	while (pcc_state_waiting(state) == 0 && pcc_state_running(state) < limit)
	{
		if (pg_atomic_compare_exchange_u64(&gate->state, &state, state + 1))
		{
			pg_atomic_fetch_add_u64(&gate->admitted, 1);
			return true;
		}
	}
	return false;
}

/*
 * Error for a refused admission: queue full or control timeout.  The name
 * is a copy: the waiter has left the queue, and its group's place may
 * change hands at a reload meanwhile.
 */
static void
pcc_gate_refuse(PccGateId id, bool queue_full, uint32 waiting, long waited_ms)
{
	PccGate    *gate = pcc_gate(id);
	char		name[PCC_GROUP_LABEL_LEN];
	uint32		limit = pg_atomic_read_u32(&gate->limit);
	const char *timeout_guc = id == PCC_GATE_BIGQUERY ?
		"pg_concurrency_control.bigsql_control_timeout" :
		"pg_concurrency_control.control_timeout";

	pcc_gate_name_copy(id, name);
	if (queue_full)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many sessions waiting for the %s gate",
						name),
				 errdetail_plural("The gate admits %u at a time and %u session is already queued.",
								  "The gate admits %u at a time and %u sessions are already queued.",
								  waiting, limit, waiting),
				 errhint("Retry later, or raise pg_concurrency_control.max_waiters or %s.",
						 pcc_limit_guc_name(id))));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
			 errmsg("timed out after %ld ms waiting for the %s gate",
					waited_ms, name),
			 errdetail_plural("The gate admits %u at a time and %u session was queued.",
							  "The gate admits %u at a time and %u sessions were queued.",
							  waiting, limit, waiting),
			 errhint("Raise %s or %s, or set %s to TCC_wait.",
					 pcc_limit_guc_name(id), timeout_guc,
					 id == PCC_GATE_BIGQUERY ?
					 "pg_concurrency_control.bigsql_timeout_action" :
					 "pg_concurrency_control.timeout_action")));
}

/*
 * Join the queue, unless a slot is free and nobody is ahead.  Returns true
 * when the slot was taken on the way.  Errors out when the queue is full.
 */
static bool
pcc_gate_enqueue(PccGateId id, PccGate *gate, PccBackend *me,
				 PccPriority priority)
{
	uint32		max_waiters = pg_atomic_read_u32(&pcc_shared->max_waiters);
	PccTime		now = pcc_now();
	uint64		state;
	int			wake[WAKE_BATCH];
	int			nwake;
	bool		more;

	SpinLockAcquire(&gate->mutex);
	state = pg_atomic_read_u64(&gate->state);
	for (;;)
	{
		uint32		limit = pg_atomic_read_u32(&gate->limit);
		uint32		waiting = pcc_state_waiting(state);

		if (waiting == 0 && pcc_state_running(state) < limit)
		{
			if (pg_atomic_compare_exchange_u64(&gate->state, &state, state + 1))
			{
				SpinLockRelease(&gate->mutex);
				pg_atomic_fetch_add_u64(&gate->admitted, 1);
				return true;
			}
			continue;
		}
		if (max_waiters > 0 && waiting >= max_waiters)
		{
			gate->rejected++;
			SpinLockRelease(&gate->mutex);
			pcc_gate_refuse(id, true, waiting, 0);
		}
		if (pg_atomic_compare_exchange_u64(&gate->state, &state,
										   state + WAITING_ONE))
			break;
	}
	me->queue_gate = id;
	me->queue_since = now;
	me->queue_ticket = ++gate->tickets;
	pg_atomic_write_u32(&me->status, PCC_WAIT_QUEUED);
	dlist_push_tail(&gate->queues[priority], &me->queue_node);
	/* a raised limit not yet acted on may leave a slot free: use it */
	nwake = pcc_gate_grant_locked(gate, now, wake, &more);
	SpinLockRelease(&gate->mutex);
	pcc_wake(wake, nwake);
	if (more)
		pcc_gate_grant_waiters(gate);
	return false;
}

/*
 * The control timeout expired.  Returns true if the caller should stop
 * waiting without a slot; errors out for TCC_rollback.  A slot granted in
 * the meantime wins over the timeout.
 */
static bool
pcc_gate_timed_out(PccGateId id, PccGate *gate, PccBackend *me,
				   PccTimeoutAction action, PccTime start)
{
	uint32		waiting;
	long		waited_ms;

	SpinLockAcquire(&gate->mutex);
	if (pg_atomic_read_u32(&me->status) == PCC_WAIT_GRANTED)
	{
		SpinLockRelease(&gate->mutex);
		return false;
	}
	gate->timeouts++;
	if (action == PCC_ACTION_WAIT)
	{
		SpinLockRelease(&gate->mutex);
		return false;
	}
	waiting = pcc_state_waiting(pg_atomic_read_u64(&gate->state));
	pcc_gate_unqueue(gate, me, PCC_WAIT_NONE);
	me->queue_gate = PCC_NO_GATE;
	if (action == PCC_ACTION_PROCEED)
	{
		gate->overcommitted++;
		SpinLockRelease(&gate->mutex);
		return true;
	}
	gate->rejected++;
	SpinLockRelease(&gate->mutex);
	waited_ms = (long) ((pcc_now() - start) / 1000);
	pcc_gate_refuse(id, false, waiting, waited_ms);
	return true;				/* not reached */
}

/*
 * Sleep until the latch is set or timeout_ms (-1: no limit) passes, on the
 * wait set of the client connection, which also reports the client's
 * socket closing: a waiter whose client is gone ends at once instead of
 * holding its place (and whatever locks its block took) until granted.
 * Returns false on timeout.
 */
static bool
pcc_gate_sleep(long timeout_ms)
{
	static uint32 wait_event = 0;
	WaitEvent	event;
	int			rc;

	if (wait_event == 0)
		wait_event = pcc_wait_event("ConcurrencyControlQueue");
	/*
	 * As pq_check_connection() does; every user of the set re-arms it.
	 * Where the kernel cannot report a closed socket (no epoll or kqueue),
	 * the session ends at its next read instead.
	 */
	if (WaitEventSetCanReportClosed())
		ModifyWaitEvent(FeBeWaitSet, FeBeWaitSetSocketPos, WL_SOCKET_CLOSED,
						NULL);
	rc = WaitEventSetWait(FeBeWaitSet, timeout_ms, &event, 1, wait_event);
	if (rc == 0)
		return false;
	if (event.events & WL_POSTMASTER_DEATH)
		ereport(FATAL,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("terminating connection due to unexpected postmaster exit")));
	if (event.events & WL_SOCKET_CLOSED)
	{
		/* CHECK_FOR_INTERRUPTS() reports it and ends the session */
		ClientConnectionLost = true;
		InterruptPending = true;
	}
	ResetLatch(MyLatch);
	return true;
}

/* Is this waiter's slot granted?  Then what the granter wrote is visible. */
static bool
pcc_gate_granted(PccBackend *me)
{
	if (pg_atomic_read_u32(&me->status) != PCC_WAIT_GRANTED)
		return false;
	pg_read_barrier();
	return true;
}

/* Wait until granted, interrupted or timed out. */
static PccAdmission
pcc_gate_wait(PccGateId id, PccGate *gate, PccBackend *me, int timeout_ms,
			  PccTimeoutAction action)
{
	PccTime		start = me->queue_since;
	bool		timer = timeout_ms > 0;

	while (!pcc_gate_granted(me))
	{
		long		remaining = -1;
		bool		woken;

		if (timer)
			remaining = Max(0, timeout_ms - (long) ((pcc_now() - start) / 1000));
		woken = pcc_gate_sleep(remaining);
		CHECK_FOR_INTERRUPTS();

		if (pcc_gate_granted(me))
			break;
		if (!woken)
		{
			timer = false;
			if (pcc_gate_timed_out(id, gate, me, action, start))
				return PCC_OVERCOMMITTED;
			continue;
		}
		/* a raised limit not yet acted on may leave a slot free */
		pcc_gate_grant_waiters(gate);
	}

	/* once granted, nobody but this backend touches its entry again */
	pg_atomic_write_u32(&me->status, PCC_WAIT_NONE);
	me->queue_gate = PCC_NO_GATE;
	return PCC_ADMITTED;
}

/*
 * Record that this backend holds a slot of gate id, served from
 * served_since, before anything can interrupt it: the slot is given back
 * at transaction end or exit by whoever finds the bit.
 */
static void
pcc_gate_record_hold(PccBackend *me, PccGateId id, PccTime served_since)
{
	uint32		was_held PG_USED_FOR_ASSERTS_ONLY;

	me->held_since[id] = GetCurrentStatementStartTimestamp();
	me->served_since[id] = served_since;
	pcc_auto_slot_taken(id);
	was_held = pg_atomic_fetch_or_u32(&me->held, 1U << id);
	Assert((was_held & (1U << id)) == 0);
}

/*
 * The hold of gate id ends: report its service time, except at exit, where
 * the session's last wait for its client was never measured.
 */
static void
pcc_gate_forget_hold(PccBackend *me, PccGateId id)
{
	pg_atomic_fetch_and_u32(&me->held, ~(1U << id));
	if (!proc_exit_inprogress)
		pcc_auto_report(id, me->served_since[id]);
}

/*
 * Take a slot of gate id, waiting in the queue of the given class if
 * needed, and record the hold: a fresh hold starts a turn, unless
 * turn_start is not 0: then the session's turn that began then goes on,
 * and it queues in the "in turn" class of its priority (see
 * pcc_gate_resume).  Granted the slot too late for the turn to go on
 * past this transaction (pcc_turn_outlasts_reply, as pcc_gate_linger
 * will ask at its end), the hold starts a new turn; else the slot would
 * serve one transaction and go to the next waiter, and the session's next
 * transaction would queue again, behind those it was ranked ahead of.
 * Errors out on cancel, a full queue or a timeout with TCC_rollback;
 * returns PCC_OVERCOMMITTED, holding nothing, for a timeout with
 * TCC_break.
 */
PccAdmission
pcc_gate_acquire(PccGateId id, int timeout_ms, PccTimeoutAction action,
				 PccPriority priority, PccTime turn_start)
{
	PccGate    *gate = pcc_gate(id);
	PccBackend *me = pcc_my_backend();

	me->queue_ticket = 0;		/* until it joins a queue */
	me->granted_turn = 0;
	me->granted_at = pcc_now();
	Assert(turn_start == 0 || priority >= PCC_PRIORITY_HIGH);
	me->queue_priority = turn_start != 0 ?
		priority - PCC_PRIORITY_TURN_OFFSET : priority;
	me->queue_turn_start = turn_start;
	if (!pcc_gate_try_fast(gate) &&
		!pcc_gate_enqueue(id, gate, me, me->queue_priority))
	{
		PccAdmission result;

		PG_TRY();
		{
			result = pcc_gate_wait(id, gate, me, timeout_ms, action);
		}
		PG_CATCH();
		{
			pcc_gate_abandon_wait();
			PG_RE_THROW();
		}
		PG_END_TRY();
		if (result != PCC_ADMITTED)
			return result;
	}

	me->held_ticket[id] = me->queue_ticket;
	me->held_turn[id] = me->granted_turn;
	me->held_priority[id] = me->queue_priority;
	me->turn_start[id] = turn_start != 0 &&
		pcc_turn_outlasts_reply(gate, turn_start, me->granted_at,
								pcc_usual_reply_us()) ?
		turn_start : me->granted_at;
	pcc_gate_record_hold(me, id, me->granted_at);
	return PCC_ADMITTED;
}

/* Does this backend hold a slot of gate id? */
bool
pcc_gate_held(PccGateId id)
{
	return (pg_atomic_read_u32(&pcc_my_backend()->held) & (1U << id)) != 0;
}

/* Give back the slot of gate id this backend holds. */
void
pcc_gate_release(PccGateId id)
{
	pcc_gate_forget_hold(pcc_my_backend(), id);
	pcc_gate_give_back(pcc_gate(id));
}

/* Give a slot of gate back; hand it to the next waiter if there is one. */
static void
pcc_gate_give_back(PccGate *gate)
{
	uint64		state = pg_atomic_read_u64(&gate->state);
	PccTime		now;
	int			wake[WAKE_BATCH];
	int			nwake;
	bool		more;

	pg_atomic_fetch_add_u64(&gate->released, 1);
	while (pcc_state_waiting(state) == 0)
	{
		Assert(pcc_state_running(state) > 0);
		if (pg_atomic_compare_exchange_u64(&gate->state, &state, state - 1))
			return;
	}

	now = pcc_now();
	SpinLockAcquire(&gate->mutex);
	pg_atomic_fetch_sub_u64(&gate->state, 1);
	nwake = pcc_gate_grant_locked(gate, now, wake, &more);
	SpinLockRelease(&gate->mutex);
	pcc_wake(wake, nwake);
	if (more)
		pcc_gate_grant_waiters(gate);
}

/*
 * Leave the queue after an error or at exit: cancel, statement_timeout,
 * termination, a lost client, any other error in the wait.  Counted as
 * abandoned; a control timeout with error or proceed has left the queue
 * already, one with wait has not and counts if such an end follows.  If a
 * slot was granted at the same moment, it is passed on rather than lost
 * (and the wait counts as queued, not abandoned).
 */
void
pcc_gate_abandon_wait(void)
{
	PccBackend *me;
	PccGate    *gate;
	int			id;
	bool		granted;

	if (pcc_shared == NULL || MyProc == NULL)
		return;
	me = pcc_my_backend();
	id = me->queue_gate;
	if (id == PCC_NO_GATE)
		return;
	gate = pcc_gate(id);

	SpinLockAcquire(&gate->mutex);
	granted = pg_atomic_read_u32(&me->status) == PCC_WAIT_GRANTED;
	if (granted)
		pg_atomic_write_u32(&me->status, PCC_WAIT_NONE);
	else if (pg_atomic_read_u32(&me->status) == PCC_WAIT_QUEUED)
	{
		pcc_gate_unqueue(gate, me, PCC_WAIT_NONE);
		gate->abandoned++;
	}
	me->queue_gate = PCC_NO_GATE;
	SpinLockRelease(&gate->mutex);

	if (granted)
		pcc_gate_give_back(gate);
}

/* Count a gap after one of this session's transactions in its reply time. */
static void
pcc_learn_reply(PccTime gap_us)
{
	double		gap_ln = log((double) Max(gap_us, 1));

	reply_ln = reply_known ? reply_ln + REPLY_WEIGHT * (gap_ln - reply_ln) : gap_ln;
	reply_known = true;
}

/* This session's client's usual reply (see reply_ln); 0 until known. */
static PccTime
pcc_usual_reply_us(void)
{
	return reply_known ? (PccTime) exp(reply_ln) : 0;
}

/*
 * How long this session's kept slot may stay idle (0: the whole turn).
 * turn_grace, or for a client that usually replies quickly,
 * GRACE_PER_REPLY times its usual reply reply_us up to turn_grace_max
 * (never before its first reply is known): a grace fixed for all must be
 * short enough for clients that think between transactions, and then
 * ends the turns of clients that merely reply slowly (a network, a busy
 * client host).  A client whose earned grace would exceed turn_grace_max
 * is taken to think, and keeping its slot through that would idle it.
 */
static PccTime
pcc_session_grace_us(PccTime reply_us)
{
	PccTime		grace_us = pg_atomic_read_u32(&pcc_shared->turn_grace_us);
	PccTime		max_us = pg_atomic_read_u32(&pcc_shared->turn_grace_max_us);
	PccTime		earned_us;

	if (grace_us == 0 || reply_us == 0)
		return grace_us;
	earned_us = GRACE_PER_REPLY * reply_us;
	return earned_us <= max_us ? Max(grace_us, earned_us) : grace_us;
}

/*
 * At the end of a transaction that holds the slot of gate id: keep the slot
 * for this session's next transaction while others wait, its turn (see
 * pcc_gate_turn_us) would not be over by the time its client usually
 * replies, and the next in line would not be overdue (see
 * pcc_gate_overdue_locked) by the end of this session's grace.  A
 * warm backend then runs the transactions of its turn back to back
 * instead of handing the slot to a cold one after each, which on a small
 * machine with many sessions costs more than the work.  A kept slot
 * nobody resumes is freed when the turn ends, the next in line is overdue
 * or the session stays idle past its grace (pcc_session_grace_us;
 * pcc_gate_reclaim_locked, the watchdog making sure it happens); one
 * whose session needs another gate is given back by pcc_gate_resume.
 *
 * Why the reply and the grace count: a slot that idles through them only
 * to be taken back when the turn ends, or for an overdue waiter, runs
 * nothing meanwhile.  With thousands of sessions queued, turns short
 * enough for the budget last about as long as a client's reply and leave
 * the next in line waiting about the budget, and such slots cost more
 * than a hand-off at every COMMIT.  Without a grace (turn_grace 0) the
 * slot may idle the whole turn, by the user's choice, and only the usual
 * reply and whether the next in line is overdue now count.  The usual
 * reply is a forecast: a client that comes back sooner queues for a new
 * turn.
 */
void
pcc_gate_linger(PccGateId id)
{
	PccGate    *gate = pcc_gate(id);
	PccBackend *me = pcc_my_backend();
	uint64		state;
	PccTime		now;
	PccTime		reply_us;
	PccTime		grace_us;
	bool		first;

	pcc_gate_forget_hold(me, id);
	/* nobody waits (the common case): no clock read */
	if (pcc_state_waiting(pg_atomic_read_u64(&gate->state)) == 0)
	{
		pcc_gate_give_back(gate);
		return;
	}
	now = pcc_now();
	ended_at = now;
	reply_us = pcc_usual_reply_us();
	/* a turn over by the next transaction does not go on (pcc_gate_resume) */
	if (!pcc_turn_outlasts_reply(gate, me->turn_start[id], now, reply_us))
	{
		pcc_gate_give_back(gate);
		return;
	}
	grace_us = pcc_session_grace_us(reply_us);

	SpinLockAcquire(&gate->mutex);
	state = pg_atomic_read_u64(&gate->state);
	if (pcc_state_waiting(state) == 0 ||
		pcc_state_running(state) > pg_atomic_read_u32(&gate->limit) ||
		pcc_gate_overdue_locked(gate, now + grace_us))
	{
		SpinLockRelease(&gate->mutex);
		pcc_gate_give_back(gate);
		return;
	}
	me->linger_gate = id;
	me->linger_since = now;
	me->linger_grace_us = grace_us;
	dlist_push_tail(&gate->lingering, &me->linger_node);
	first = gate->nlingering++ == 0;
	SpinLockRelease(&gate->mutex);
	/*
	 * The watchdog sleeps out its pass (up to 250 ms) unless a gate keeps
	 * slots: wake it at the first one so that it polls them (see
	 * pcc_watchdog_kept_interval).  It resets its latch before it counts
	 * them, so the later ones find it polling.
	 */
	if (first)
		pcc_wake_watchdog();
}

/*
 * At the start of a transaction that wants a slot of gate id: if this
 * session still keeps a slot from its last transaction, continue the turn
 * with it when it is of that gate, the turn is not over and the next in
 * line there is not overdue (the hold is recorded again; its ticket, turn
 * and turn start stay those of the turn), otherwise give it back.  Returns
 * true if the session now holds a slot of gate id.
 *
 * A turn goes on across gates: when the kept slot is another gate's and
 * the turn, as long as gate id's queue makes it, is not over, *turn_start
 * is set to when the turn began (else to 0), and the caller takes gate
 * id's slot with it (pcc_gate_acquire).  A session that alternates reads
 * and writes then keeps its warm backend running instead of queueing
 * behind everyone at each change of gate.  It holds no slot while it
 * waits there, so nobody waits for a slot a waiter keeps: no deadlock.
 * It is ranked as if it had queued when its turn began (see
 * pcc_gate_first_waiter), so under fifo a turn that began after a session
 * of the same priority queued never goes before it, and the turns that
 * began before end (a turn lasts at most quantum).  Granted too late to
 * go on with its turn, it starts a new one (pcc_gate_acquire): it holds
 * the slot at most a turn ahead of those it passed.
 *
 * The time since this session's previous transaction ended, if others
 * waited then, counts in its client's reply time (reply_ln), whether a
 * slot is still kept or not; not at exit or a group's admission
 * (turn_start NULL), which are no reply.
 *
 * PCC_NO_GATE (turn_start NULL) just gives back what is kept.
 */
bool
pcc_gate_resume(PccGateId id, PccTime *turn_start)
{
	PccBackend *me = pcc_my_backend();
	int			kept = me->linger_gate;
	PccGate    *gate;
	PccTime		now;
	bool		resume;
	PccTime		reply_since;	/* the last transaction's end, if a reply
								 * counts */

	if (turn_start != NULL)
		*turn_start = 0;
	reply_since = turn_start != NULL ? ended_at : 0;
	ended_at = 0;
	if (kept == PCC_NO_GATE && reply_since == 0)
		return false;
	now = pcc_now();
	if (reply_since != 0)
		pcc_learn_reply(now - reply_since);
	if (kept == PCC_NO_GATE)
		return false;
	gate = pcc_gate(kept);

	SpinLockAcquire(&gate->mutex);
	if (me->linger_gate != kept)
	{
		/* reclaimed meanwhile: the slot is no longer ours */
		SpinLockRelease(&gate->mutex);
		return false;
	}
	pcc_gate_unlinger_locked(gate, me);
	resume = kept == (int) id && now < pcc_turn_end(gate, me->turn_start[kept]) &&
		pcc_state_running(pg_atomic_read_u64(&gate->state)) <=
		pg_atomic_read_u32(&gate->limit) &&
		!pcc_gate_overdue_locked(gate, now);
	if (resume)
	{
		gate->resumed++;
		pcc_gate_count_wait_locked(gate, 0);
	}
	SpinLockRelease(&gate->mutex);

	if (resume)
	{
		pcc_gate_record_hold(me, id, now);
		return true;
	}
	pcc_gate_give_back(gate);
	if (turn_start != NULL && kept != (int) id &&
		now < pcc_turn_end(pcc_gate(id), me->turn_start[kept]))
		*turn_start = me->turn_start[kept];
	return false;
}

/* Zero a gate's totals (not running, waiting or admitted - released). */
void
pcc_gate_reset_stats(PccGate *gate, TimestampTz now)
{
	SpinLockAcquire(&gate->mutex);
	gate->admitted_at_reset = pg_atomic_read_u64(&gate->admitted);
	gate->queued = 0;
	gate->timeouts = 0;
	gate->rejected = 0;
	gate->abandoned = 0;
	gate->overcommitted = 0;
	gate->escapes = 0;
	gate->total_wait_us = 0;
	gate->max_wait_us = 0;
	gate->resumed = 0;
	gate->reset_time = now;
	SpinLockRelease(&gate->mutex);
}
