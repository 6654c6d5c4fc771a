/*-------------------------------------------------------------------------
 *
 * pcc.h
 *	  Shared declarations of pg_concurrency_control.
 *
 * Locking rules for the shared state (read this before touching a gate):
 *
 * - PccGate.state packs the number of slots in use (low 32 bits, "running")
 *   and the number of queued backends (high 32 bits, "waiting") into one
 *   64-bit atomic, so that the fast path can test "below the limit and
 *   nobody waiting" and take a slot with a single compare-and-swap.
 * - "waiting" only changes while PccGate.mutex is held.  "running" may be
 *   changed without the mutex only by a compare-and-swap that observed
 *   waiting == 0; with waiters present every change of "running" happens
 *   under the mutex.  Hence a releaser either sees no waiter and simply
 *   decrements, or takes the mutex and hands its slot to a waiter: no
 *   wake-up can be lost and no newcomer can barge past the queue.
 * - PccGate.queues and the counters in the second half of PccGate are
 *   protected by PccGate.mutex.  The queue_ fields of PccBackend are
 *   written by their owner while it is not queued (or under the mutex),
 *   read under the mutex while it is, and racily by monitoring.  Nothing under a
 *   gate mutex reads a clock, allocates, logs or sleeps: callers read the
 *   clock before they take it, and every walk under it is bounded by the
 *   work it hands out (WAKE_BATCH grants) or the lingering list, except
 *   pg_concurrency_control_check()'s, over every waiter: it is for
 *   pg_monitor, and stalls the gate's slow path while it walks.
 * - PccBackend.status goes QUEUED -> GRANTED only under the gate mutex, by
 *   whoever grants, after a write barrier that publishes granted_turn and
 *   granted_at; the waiter reads them after a read barrier.  The owner
 *   resets status to NONE: under the mutex when it leaves the queue itself,
 *   without it once granted, since nobody else touches a granted entry.
 * - PccBackend.held and the hold records (held_since, served_since,
 *   held_ticket, held_turn, held_priority, turn_start) are written only by
 *   the owning backend, in pcc_gate_acquire/release/linger/resume (and
 *   held is cleared when it registers, pcc_register_backend); others
 *   read them racily for monitoring and for the deadlock escape, except
 *   turn_start of a lingering slot, which the owner does not touch while
 *   it lingers and a reclaimer reads under the gate mutex.
 * - PccGate.tickets and turns number queue entries and grants; they are
 *   bumped under the mutex and copied into the waiter's queue_ticket and
 *   granted_turn there, so under fifo, turns follow tickets exactly among
 *   waiters of one class.
 * - A lingering slot (kept between two transactions of one turn, see
 *   pcc_gate_linger) stays counted in "running" and sits on
 *   PccGate.lingering.  PccBackend.linger_gate, linger_node, linger_since
 *   and linger_grace_us change only under that gate's mutex: the owner
 *   sets them when it starts lingering (the grace fixed for this linger)
 *   and whoever ends the linger (the owner resuming or leaving, or anyone
 *   reclaiming a slot whose turn is over, whose gate's next in line is
 *   overdue or whose session stayed idle past its grace) resets
 *   linger_gate.  The owner may read linger_gate without the mutex: if it
 *   reads PCC_NO_GATE, it is not lingering.
 *
 * Who writes the shared settings (one writer each):
 * - The postmaster initialises the segment when it creates it (also after
 *   a crash restart, on fresh memory nobody else has mapped) and never
 *   touches it again: it takes no lock a backend could hold.
 * - Afterwards only the watchdog worker writes the settings (limits,
 *   auto_on, the queue settings in PccShared, the group table), after its
 *   own reload of the configuration (pcc_publish_settings), and the group
 *   table again at its scans while a group waits for a place; backends
 *   read them.  PccGate.stuck, the controller's state, config_loaded and
 *   watchdog_procno are the worker's too.
 * - The group table (group_labels, group_configured) changes only under
 *   groups_lock, where backends also resolve their group and the SQL
 *   functions copy the names they show.  The watchdog
 *   takes a group gate's mutex under it, to reset the totals of a place
 *   that changes hands; nothing takes groups_lock under a gate's mutex.
 *   How a place changes hands safely: find_free_places in pcc_group.c.
 *
 * Clocks: every interval (queue waits and timeouts, aging, turns, service
 * times, the controller's steps) is measured on the monotonic clock,
 * PccTime from pcc_now(); a step of the wall clock changes none of them.
 * Two inputs are PostgreSQL's wall time: where a statement began (from its
 * statement start, which only shortens the client wait service time leaves
 * out) and how old a lock wait is when the watchdog first sees it
 * (PGPROC.waitStart, credited at most the time since its previous pass:
 * LockWait in pcc_watchdog.c).  Wall time (TimestampTz) is kept otherwise
 * only for what users read: held_since, reset_time, config_loaded; PccTime
 * instants are shown to users through pcc_time_to_wall().
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_H
#define PCC_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "lib/ilist.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/spin.h"

/* An instant on the monotonic clock, in microseconds. */
typedef int64 PccTime;

static inline PccTime
pcc_now(void)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	return (PccTime) INSTR_TIME_GET_MICROSEC(t);
}

static inline PccTime
pcc_time_plus_ms(PccTime t, int64 ms)
{
	return t + ms * 1000;
}

/* Has at least ms passed from since to now? */
static inline bool
pcc_time_exceeds(PccTime since, PccTime now, int64 ms)
{
	return now - since >= ms * 1000;
}

/* The gates, in the order the status function lists them. */
typedef enum PccGateId
{
	PCC_GATE_QUERY,
	PCC_GATE_BIGQUERY,
	PCC_GATE_TRANSACTION,
	PCC_GATE_AUTOCOMMIT,
	PCC_NUM_GATES
} PccGateId;

#define PCC_NO_GATE (-1)

/*
 * Workload groups (pcc_group.c) are gates too, after the four above: gate
 * id PCC_NUM_GATES + i is group i.  A group keeps its name while anyone
 * may still hold or wait for one of its slots.
 */
#define PCC_MAX_GROUPS		16
#define PCC_NUM_GATE_IDS	(PCC_NUM_GATES + PCC_MAX_GROUPS)	/* gates and groups */
#define PCC_GROUP_NAME_LEN	32
#define PCC_GROUP_LABEL_LEN	(PCC_GROUP_NAME_LEN + 8)	/* "group:" + name */
#define PCC_IS_GROUP(id)	((id) >= PCC_NUM_GATES)

/* What happens when a waiter's control timeout expires. */
typedef enum PccTimeoutAction
{
	PCC_ACTION_ERROR,			/* TCC_rollback: raise an error */
	PCC_ACTION_PROCEED,			/* TCC_break: run without a slot */
	PCC_ACTION_WAIT				/* TCC_wait: count it, keep waiting */
} PccTimeoutAction;

/* Which waiter a released slot goes to. */
typedef enum PccQueueOrder
{
	PCC_ORDER_FIFO,				/* the oldest waiter, always */
	PCC_ORDER_WARM				/* the newest, unless the first by rank
								 * waited too long */
} PccQueueOrder;

/*
 * Queue classes.  A waiter's class is its session's priority, except that a
 * statement of a transaction block that already holds a slot is served
 * before everyone, and a session whose turn goes on at another gate is
 * ranked as if it had queued when its turn began, in a class of its own
 * per session priority (so that its heads are ranked each by its own
 * priority).  Lower classes age into higher ones (see
 * pcc_gate_first_waiter).
 */
typedef enum PccPriority
{
	PCC_PRIORITY_IN_BLOCK,		/* its block holds a slot: never waits behind
								 * new arrivals */
	PCC_PRIORITY_IN_TURN_HIGH,	/* its turn goes on at this gate (see
								 * pcc_gate_resume): ranked as if it had
								 * queued when its turn began */
	PCC_PRIORITY_IN_TURN_NORMAL,
	PCC_PRIORITY_IN_TURN_LOW,
	PCC_PRIORITY_HIGH,			/* the session priorities */
	PCC_PRIORITY_NORMAL,
	PCC_PRIORITY_LOW,
	PCC_NUM_PRIORITIES
} PccPriority;

/* From a session priority to its "in turn" class, and back. */
#define PCC_PRIORITY_TURN_OFFSET	(PCC_PRIORITY_HIGH - PCC_PRIORITY_IN_TURN_HIGH)
StaticAssertDecl(PCC_PRIORITY_LOW - PCC_PRIORITY_TURN_OFFSET ==
				 PCC_PRIORITY_IN_TURN_LOW, "one \"in turn\" class per priority");

/* Outcome of pcc_gate_acquire(). */
typedef enum PccAdmission
{
	PCC_ADMITTED,				/* holds a slot; must release it */
	PCC_OVERCOMMITTED			/* timed out with TCC_break: holds nothing */
} PccAdmission;

/* A limit GUC's value for an adaptive limit (pcc_auto.c). */
#define PCC_LIMIT_AUTO (-1)

/* PccShared.watchdog_procno while no watchdog runs. */
#define PCC_NO_WATCHDOG PG_UINT32_MAX

/* A limit of "unlimited", as stored in shared memory. */
#define PCC_UNLIMITED PG_UINT32_MAX

/* How often the watchdog steps the adaptive limits, and probes them. */
#define PCC_AUTO_INTERVAL_MS	100
#define PCC_AUTO_PROBE_EVERY_MS	10000

/* An adaptive limit's controller (pcc_auto.c); instants are PccTime. */
typedef struct PccAutoState
{
	double		limit;			/* current limit, fractional */
	double		baseline_us;	/* service time of unloaded work */
	double		service_us;		/* mean service time, last interval */
	double		shift_ref_us;	/* service time before a jump, or 0 */
	double		throughput;		/* completions per second, last interval */
	bool		drained;		/* at most auto_min ran at the last step */
	PccTime next_probe;		/* when to measure the baseline again */
	bool		grew;			/* the last step raised the limit */
	PccTime probe_since;	/* probe under way since, or 0 */
	PccTime probe_ended;	/* when the last probe ended */
	double		probe_saved_limit;	/* limit to restore after the probe */
	bool		probe_for_jump; /* the probe follows a jump of service
								 * time: it judges whether the work
								 * changed */
	int			jump_gap_ms;	/* least time from a probe's end to a
								 * probe for a jump */
	bool		jump_seen;		/* a jump came since the last probe began */
	int			probe_backoff_ms;	/* after probes given up in a row: the
									 * least time from the last one's end to
									 * a probe for the baseline (0: none
									 * given up) */
	bool		lull;			/* an interval had too few completions: the
								 * next sample spans it */
	double		probed_us[2];	/* baselines the last two probes measured,
								 * the last first (0: none) */
	uint64		steps;			/* intervals evaluated */
	PccTime measured_at;	/* when service_us was last measured */
	double		floor_us;		/* lowest baseline of this floor window */
	double		floor_prev_us;	/* and of the window before */
	PccTime floor_since;	/* start of this floor window */
	bool		yielding;		/* shrinking for other gates' work */
	PccTime suffered_at;	/* the bigquery gate's only: when another
								 * gate's work last suffered (or probed,
								 * while held), or 0 */
	double		ceiling;		/* growth stops here, per the last trials */
	double		trial_floor;	/* and shrinking here */
	uint32		bounds_min;		/* the auto_min and auto_max they were */
	uint32		bounds_max;		/* reached within */
	PccTime next_trial;		/* no trial before, whichever way is due */
	PccTime next_down_trial;	/* when a trial may try lower again */
	PccTime next_up_trial;	/* and higher */
	int			down_gap_ms;	/* time between rejected lower trials (or
								 * after a drained queue's verdict) */
	int			up_gap_ms;		/* and between rejected higher ones */
	bool		trial_down;		/* lower first when both ways are due */
	int			trials_lost;	/* lost in a row since one was kept (a
								 * tie in walk_down leaves it) */
	double		tie_limit;		/* the limit the last tie (walk_down) left,
								 * until a trial from it is judged; 0: none */
	double		tie_from;		/* the limit that tie was tried from */
	double		band_from;		/* the limit the band grows from: of the
								 * first clean interval after a trial, a
								 * yield, a lull, new bounds or the last
								 * growth */
	double		band_from_rate; /* that interval's throughput (0: none
								 * yet) */
	bool		trial_on;		/* a throughput trial is under way */
	uint64		trial_ended_step;	/* steps after the last trial's last
									 * interval (0: no trial has ended) */
	double		trial_base;		/* the limit before the trial */
	double		trial_other;	/* and the one tried against it */
	int			trial_steps;	/* intervals measured; odd ones at other */
	bool		trial_other_saturated;	/* other was, at an interval's end */
	bool		trial_last_saturated;	/* so was the last interval */
	double		trial_done[2];	/* completions at base, at other */
	double		trial_seconds[2];	/* and the time each ran */
	double		trial_pair_rate;	/* rate at base in the pair under way */
	int			trial_npairs;	/* pairs with both rates measured */
	double		trial_ln_sum;	/* their ln(rate at other / at base) */
	double		trial_ln_sq;	/* and its square, summed */
} PccAutoState;

/* One gate: a counting semaphore with a wait queue. */
typedef struct PccGate
{
	/* hot: touched by every admission and release */
	pg_atomic_uint64 state;		/* running | waiting << 32 */
	pg_atomic_uint32 limit;		/* effective limit, PCC_UNLIMITED if none */
	pg_atomic_uint32 stuck;		/* holders lock-blocked past
								 * deadlock_timeout, per the watchdog */
	pg_atomic_uint64 admitted;	/* slots handed out, fast or slow */
	pg_atomic_uint64 released;	/* slots given back */
	pg_atomic_uint32 auto_on;	/* the limit is tuned by the controller */
	pg_atomic_uint64 auto_done; /* slots given back on an auto gate */
	pg_atomic_uint64 auto_service_us;	/* and how long they were held */
	char		pad[PG_CACHE_LINE_SIZE];

	/* cold: slow path only, under mutex */
	slock_t		mutex;
	dlist_head	queues[PCC_NUM_PRIORITIES];	/* PccBackend.queue_node, one
											 * list per class, oldest first */
	uint64		queued;			/* admitted after waiting */
	uint64		timeouts;		/* control timeouts expired */
	uint64		rejected;		/* refused: queue full or timeout error */
	uint64		abandoned;		/* waits ended by an error or exit */
	uint64		overcommitted;	/* ran without a slot (TCC_break) */
	uint64		escapes;		/* admitted past a lock-blocked holder */
	uint64		total_wait_us;	/* summed over queued admissions */
	uint64		max_wait_us;
	uint64		admitted_at_reset;	/* admitted when last reset */
	TimestampTz reset_time;
	uint64		tickets;		/* queue entries since start (never reset) */
	uint64		turns;			/* grants to waiters since start */
	dlist_head	lingering;		/* PccBackend.linger_node, slots kept idle
								 * between two transactions of a turn */
	uint32		nlingering;		/* its length (read racily by the watchdog) */
	uint64		resumed;		/* transactions that continued a turn */
	pg_atomic_uint64 recent_wait_us;	/* recent mean queue wait per
										 * transaction admitted from the
										 * queue or resumed (0), while
										 * sessions queue; written under
										 * mutex, read anywhere */

	/* adaptive limit: written by the watchdog only */
	PccAutoState auto_state;
	uint64		auto_seen_done; /* auto_done consumed by the controller */
	uint64		auto_seen_us;
	PccTime		auto_seen_at;	/* when it last consumed */
} PccGate;

typedef union PccGatePadded
{
	PccGate		gate;
	char		pad[8 * PG_CACHE_LINE_SIZE];
} PccGatePadded;

/* Where a backend stands in a gate's queue. */
typedef enum PccWaitStatus
{
	PCC_WAIT_NONE,
	PCC_WAIT_QUEUED,
	PCC_WAIT_GRANTED
} PccWaitStatus;

/* Per-backend shared entry, indexed by pgprocno. */
typedef struct PccBackend
{
	dlist_node	queue_node;		/* link in PccGate.queues while queued */
	pg_atomic_uint32 status;	/* PccWaitStatus */
	int			queue_gate;		/* gate queued on, or PCC_NO_GATE */
	PccPriority queue_priority; /* class of its last admission request */
	PccTime		queue_since;	/* when it joined the queue */
	PccTime		queue_turn_start;	/* in an "in turn" class: when its
									 * turn began */
	uint64		queue_ticket;	/* its number in that queue, 0 if it did
								 * not queue for its last admission */
	uint64		granted_turn;	/* the gate's turn count when it was granted */
	PccTime		granted_at;		/* when its last slot was granted */
	int			pid;			/* owner, 0 when the entry is unused */
	pg_atomic_uint32 held;		/* bitmask of gates this backend holds */
	TimestampTz held_since[PCC_NUM_GATE_IDS];	/* statement start, for users */
	PccTime		served_since[PCC_NUM_GATE_IDS];	/* admitted at (owner only) */
	uint64		held_ticket[PCC_NUM_GATE_IDS]; /* queue_ticket of the held slot */
	uint64		held_turn[PCC_NUM_GATE_IDS];	/* granted_turn of the held slot */
	PccPriority held_priority[PCC_NUM_GATE_IDS];	/* class it was admitted in */
	PccTime		turn_start[PCC_NUM_GATE_IDS];	/* when the turn of the held or
												 * kept slot began, maybe at
												 * another gate; it ends
												 * pcc_gate_turn_us()
												 * later */
	dlist_node	linger_node;	/* link in PccGate.lingering */
	int			linger_gate;	/* gate whose slot it keeps, or PCC_NO_GATE */
	PccTime		linger_since;	/* when its transaction ended, keeping it */
	PccTime		linger_grace_us;	/* how long the kept slot may stay idle,
									 * 0 = the whole turn */
	char		pad[PG_CACHE_LINE_SIZE];	/* keep owners apart */
} PccBackend;

/* The whole shared state. */
typedef struct PccShared
{
	PccGatePadded gates[PCC_NUM_GATE_IDS];
	slock_t		groups_lock;	/* protects the group names below */
	pg_atomic_uint32 groups_generation; /* bumped when a group changes */
	char		group_labels[PCC_MAX_GROUPS][PCC_GROUP_LABEL_LEN];	/* "group:name",
																 * "" if free */
	bool		group_configured[PCC_MAX_GROUPS];	/* in the groups GUC now */
	pg_atomic_uint32 max_waiters;	/* per gate, 0 = unbounded */
	pg_atomic_uint32 queue_order;	/* PccQueueOrder */
	pg_atomic_uint32 warm_max_wait_ms;	/* PCC_ORDER_WARM starvation bound */
	pg_atomic_uint32 quantum_ms;	/* longest turn, 0 = one transaction */
	pg_atomic_uint32 max_turn_wait_ms;	/* turns shrink with the queue and
										 * end once the next in line has
										 * waited this long (or a third of it
										 * over the recent mean wait), 0 = off */
	pg_atomic_uint32 turn_grace_us; /* shortest grace: a kept slot idle this
									 * long may be given back, 0 = only at
									 * the turn's end */
	pg_atomic_uint32 turn_grace_max_us; /* longest grace a quick client
										 * earns (pcc_session_grace_us) */
	pg_atomic_uint32 priority_aging_ms; /* head start of one class over the
										 * next */
	pg_atomic_uint32 auto_min;	/* bounds of adaptive limits */
	pg_atomic_uint32 auto_max;
	pg_atomic_uint64 config_loaded; /* TimestampTz of the worker's last
									 * publication of the settings */
	pg_atomic_uint32 watchdog_procno;	/* the worker's, PCC_NO_WATCHDOG when
										 * it does not run (its own writes) */
	int			nbackends;
	PccBackend	backends[FLEXIBLE_ARRAY_MEMBER];
} PccShared;

/* The halves of PccGate.state. */
static inline uint32
pcc_state_running(uint64 state)
{
	return (uint32) state;
}

static inline uint32
pcc_state_waiting(uint64 state)
{
	return (uint32) (state >> 32);
}

/* pcc_shmem.c: the segment and this backend's place in it */
extern PGDLLIMPORT PccShared *pcc_shared;
extern Size pcc_shmem_size(void);
extern bool pcc_shmem_init(void);
extern PccGate *pcc_gate(PccGateId id);
extern PccBackend *pcc_my_backend(void);
extern void pcc_require_shared(void);

#endif							/* PCC_H */
