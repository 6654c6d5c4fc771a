/*-------------------------------------------------------------------------
 *
 * pg_concurrency_control.c
 *	  Module load: parameters, shared memory, hooks and the watchdog.
 *
 * Nothing happens unless the library is in shared_preload_libraries: the
 * gates live in the main shared memory segment, and the watchdog worker
 * can only be registered at postmaster start.  The order of the files,
 * from the bottom up: pcc_shmem (the segment), pcc_auto (adaptive limits),
 * pcc_gate (admission), pcc_group, pcc_guc (parameters and their
 * publication), pcc_classify and pcc_hooks (what a statement takes),
 * pcc_watchdog and pcc_sql; none calls a file above it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"

#include "pcc.h"
#include "pcc_compat.h"
#include "pcc_guc.h"
#include "pcc_hooks.h"
#include "pcc_watchdog.h"

PG_MODULE_MAGIC;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

/* shmem_request_hook: reserve the state's space. */
static void
pcc_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(pcc_shmem_size());
}

/*
 * shmem_startup_hook: create the state, or attach to it.  The postmaster
 * creates it (also at a crash restart) and publishes the settings into
 * memory nobody else has mapped yet; after that only the watchdog writes
 * them.
 */
static void
pcc_shmem_startup(void)
{
	bool		created;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	created = pcc_shmem_init();
	if (created)
		(void) pcc_publish_settings();
	LWLockRelease(AddinShmemInitLock);
}

/* Module load: only via shared_preload_libraries does anything happen. */
void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	pcc_define_gucs();
	pcc_register_watchdog();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = pcc_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = pcc_shmem_startup;

	pcc_prev_planner = planner_hook;
	planner_hook = pcc_planner;
	pcc_prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = pcc_ExecutorStart;
	pcc_prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = pcc_ExecutorRun;
	pcc_prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = pcc_ExecutorFinish;
	pcc_prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = pcc_ExecutorEnd;
	pcc_prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = pcc_ProcessUtility;

	RegisterXactCallback(pcc_xact_callback, NULL);
	RegisterSubXactCallback(pcc_subxact_callback, NULL);
}
