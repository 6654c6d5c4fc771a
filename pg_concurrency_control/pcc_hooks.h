/*-------------------------------------------------------------------------
 *
 * pcc_hooks.h
 *	  The hooks and callbacks of pcc_hooks.c, and the hooks they chain to,
 *	  installed by _PG_init (pg_concurrency_control.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_HOOKS_H
#define PCC_HOOKS_H

#include "access/xact.h"
#include "executor/executor.h"
#include "optimizer/planner.h"
#include "tcop/utility.h"

#include "pcc_compat.h"

extern planner_hook_type pcc_prev_planner;
extern ExecutorStart_hook_type pcc_prev_ExecutorStart;
extern ExecutorRun_hook_type pcc_prev_ExecutorRun;
extern ExecutorFinish_hook_type pcc_prev_ExecutorFinish;
extern ExecutorEnd_hook_type pcc_prev_ExecutorEnd;
extern ProcessUtility_hook_type pcc_prev_ProcessUtility;

extern PlannedStmt *pcc_planner(Query *parse, const char *query_string,
								int cursorOptions, ParamListInfo boundParams);
extern void pcc_ExecutorStart(QueryDesc *queryDesc, int eflags);
extern void pcc_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
							uint64 count PCC_EXECUTE_ONCE_PARAM);
extern void pcc_ExecutorFinish(QueryDesc *queryDesc);
extern void pcc_ExecutorEnd(QueryDesc *queryDesc);
extern void pcc_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
							   PCC_UTILITY_READONLY_PARAM
							   ProcessUtilityContext context,
							   ParamListInfo params,
							   QueryEnvironment *queryEnv, DestReceiver *dest,
							   QueryCompletion *qc);
extern void pcc_xact_callback(XactEvent event, void *arg);
extern void pcc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								 SubTransactionId parentSubid, void *arg);

#endif							/* PCC_HOOKS_H */
