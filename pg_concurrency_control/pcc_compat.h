/*-------------------------------------------------------------------------
 *
 * pcc_compat.h
 *	  Everything that depends on the PostgreSQL major version, in one place.
 *
 * The module is built and tested on PostgreSQL 15, 17 and 18 (see
 * scripts/test.sh); 16 is not tested and earlier versions are refused.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_COMPAT_H
#define PCC_COMPAT_H

#include "postgres.h"
#include "catalog/namespace.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "storage/proc.h"
#include "utils/lsyscache.h"
#include "utils/wait_event.h"

#if PG_VERSION_NUM < 150000
#error "pg_concurrency_control requires PostgreSQL 15 or later"
#endif

/* PG17 replaced PGPROC->pgprocno with MyProcNumber. */
#if PG_VERSION_NUM >= 170000
#define PCC_MY_PROCNO() (MyProcNumber)
#else
#define PCC_MY_PROCNO() (MyProc->pgprocno)
#endif

/* PG18 moved MAX_BACKENDS next to the procnumbers. */
#if PG_VERSION_NUM >= 180000
#include "storage/procnumber.h"
#else
#include "postmaster/postmaster.h"
#endif

/*
 * PG18 starts a statement's location at its first token, after the
 * comments in front of it; before, right after the previous ';'.
 */
#if PG_VERSION_NUM >= 180000
#define PCC_LOCATION_SKIPS_COMMENTS 1
#endif

/* PG18 dropped ExecutorRun's execute_once. */
#if PG_VERSION_NUM >= 180000
#define PCC_EXECUTE_ONCE_PARAM
#define PCC_EXECUTE_ONCE_ARG
#else
#define PCC_EXECUTE_ONCE_PARAM , bool execute_once
#define PCC_EXECUTE_ONCE_ARG , execute_once
#endif

/* PG18 made the list of registered background workers a dlist. */
#if PG_VERSION_NUM >= 180000
#define PCC_BGWORKER_ITER dlist_iter
#define pcc_bgworker_foreach(iter) dlist_foreach(iter, &BackgroundWorkerList)
#define pcc_bgworker_current(iter) \
	dlist_container(RegisteredBgWorker, rw_lnode, (iter).cur)
#else
#define PCC_BGWORKER_ITER slist_iter
#define pcc_bgworker_foreach(iter) slist_foreach(iter, &BackgroundWorkerList)
#define pcc_bgworker_current(iter) \
	slist_container(RegisteredBgWorker, rw_lnode, (iter).cur)
#endif

/*
 * PG17 lets an extension name its wait events, shown in
 * pg_stat_activity.wait_event; before, every wait is "Extension".
 */
#if PG_VERSION_NUM >= 170000
#define pcc_wait_event(name) WaitEventExtensionNew(name)
#else
#define pcc_wait_event(name) PG_WAIT_EXTENSION
#endif

/*
 * Would a read-only transaction reject the plan: does it ask more than
 * SELECT of a relation that is not temporary?  ExecutorStart's
 * ExecCheckXactReadOnly asks just this, where XactReadOnly is set and the
 * plan is not only explained (the caller's conditions).  PG16 moved the
 * permissions a plan asks from its range table to permInfos.
 */
static inline bool
pcc_plan_rejected_read_only(PlannedStmt *ps)
{
	ListCell   *lc;

#if PG_VERSION_NUM >= 160000
	foreach(lc, ps->permInfos)
	{
		RTEPermissionInfo *perm = lfirst_node(RTEPermissionInfo, lc);

		if ((perm->requiredPerms & ~ACL_SELECT) != 0 &&
			!isTempNamespace(get_rel_namespace(perm->relid)))
			return true;
	}
#else
	foreach(lc, ps->rtable)
	{
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind == RTE_RELATION &&
			(rte->requiredPerms & ~ACL_SELECT) != 0 &&
			!isTempNamespace(get_rel_namespace(rte->relid)))
			return true;
	}
#endif
	return false;
}

/* ProcessUtility's readOnlyTree (since PG14). */
#define PCC_UTILITY_READONLY_PARAM bool readOnlyTree,
#define PCC_UTILITY_READONLY_ARG readOnlyTree,

/* The start of a lock wait, which the deadlock escape reads. */
#define PCC_PROC_LOCK_WAIT_START(proc) \
	((TimestampTz) pg_atomic_read_u64(&(proc)->waitStart))

#endif							/* PCC_COMPAT_H */
