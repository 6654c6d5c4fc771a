/*-------------------------------------------------------------------------
 *
 * pcc_shmem.c
 *	  Allocation and initialisation of the shared gate state.
 *
 * The state lives in PostgreSQL's main shared memory segment, which is
 * mapped at the same address in every backend, so the gate queues are
 * plain dlists of pointers.  A crash-restart of the postmaster recreates
 * the segment and with it clean counters.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "pcc.h"
#include "pcc_compat.h"

PccShared  *pcc_shared = NULL;	/* NULL without the preload */

/* Gates start on cache-line boundaries and never share one. */
StaticAssertDecl(sizeof(PccGate) <= sizeof(PccGatePadded) &&
				 sizeof(PccGatePadded) % PG_CACHE_LINE_SIZE == 0,
				 "PccGatePadded does not pad a gate to whole cache lines");

/* Entries for every PGPROC a client backend can have. */
static int
pcc_backend_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

/* How much shared memory the state needs. */
Size
pcc_shmem_size(void)
{
	return add_size(offsetof(PccShared, backends),
					mul_size(pcc_backend_slots(), sizeof(PccBackend)));
}

/*
 * Create the state, or attach to it (EXEC_BACKEND).  Returns true if it
 * was created: the caller then publishes the settings.  Caller holds
 * AddinShmemInitLock.
 */
bool
pcc_shmem_init(void)
{
	bool		found;

	pcc_shared = ShmemInitStruct("pg_concurrency_control",
								 pcc_shmem_size(), &found);
	if (!found)
	{
		/* new memory, which no other process has mapped yet */
		TimestampTz now = GetCurrentTimestamp();

		memset(pcc_shared, 0, pcc_shmem_size());
		for (int i = 0; i < PCC_NUM_GATE_IDS; i++)
		{
			PccGate    *gate = &pcc_shared->gates[i].gate;

			pg_atomic_init_u64(&gate->state, 0);
			pg_atomic_init_u32(&gate->limit, PCC_UNLIMITED);
			pg_atomic_init_u32(&gate->stuck, 0);
			pg_atomic_init_u64(&gate->admitted, 0);
			pg_atomic_init_u64(&gate->released, 0);
			pg_atomic_init_u32(&gate->auto_on, 0);
			pg_atomic_init_u64(&gate->auto_done, 0);
			pg_atomic_init_u64(&gate->auto_service_us, 0);
			pg_atomic_init_u64(&gate->recent_wait_us, 0);
			SpinLockInit(&gate->mutex);
			for (int p = 0; p < PCC_NUM_PRIORITIES; p++)
				dlist_init(&gate->queues[p]);
			dlist_init(&gate->lingering);
			gate->reset_time = now;
		}
		SpinLockInit(&pcc_shared->groups_lock);
		pg_atomic_init_u32(&pcc_shared->groups_generation, 1);
		pg_atomic_init_u32(&pcc_shared->max_waiters, 0);
		pg_atomic_init_u32(&pcc_shared->queue_order, PCC_ORDER_FIFO);
		pg_atomic_init_u32(&pcc_shared->warm_max_wait_ms, 0);
		pg_atomic_init_u32(&pcc_shared->quantum_ms, 0);
		pg_atomic_init_u32(&pcc_shared->max_turn_wait_ms, 0);
		pg_atomic_init_u32(&pcc_shared->turn_grace_us, 0);
		pg_atomic_init_u32(&pcc_shared->turn_grace_max_us, 0);
		pg_atomic_init_u32(&pcc_shared->priority_aging_ms, 0);
		pg_atomic_init_u32(&pcc_shared->auto_min, 1);
		pg_atomic_init_u32(&pcc_shared->auto_max, 1);
		pg_atomic_init_u64(&pcc_shared->config_loaded, 0);
		pg_atomic_init_u32(&pcc_shared->watchdog_procno, PCC_NO_WATCHDOG);
		pcc_shared->nbackends = pcc_backend_slots();
		for (int i = 0; i < pcc_shared->nbackends; i++)
		{
			PccBackend *be = &pcc_shared->backends[i];

			pg_atomic_init_u32(&be->status, PCC_WAIT_NONE);
			pg_atomic_init_u32(&be->held, 0);
			be->queue_gate = PCC_NO_GATE;
			be->linger_gate = PCC_NO_GATE;
		}
	}
	return !found;
}

PccGate *
pcc_gate(PccGateId id)
{
	return &pcc_shared->gates[id].gate;
}

/* This backend's shared entry. */
PccBackend *
pcc_my_backend(void)
{
	return &pcc_shared->backends[PCC_MY_PROCNO()];
}

/* SQL functions call this first: without the preload there is no state. */
void
pcc_require_shared(void)
{
	if (pcc_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_concurrency_control must be loaded via shared_preload_libraries"),
				 errhint("Add pg_concurrency_control to shared_preload_libraries in postgresql.conf and restart the server.")));
}
