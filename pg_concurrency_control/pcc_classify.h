/*-------------------------------------------------------------------------
 *
 * pcc_classify.h
 *	  Statement classification of pg_concurrency_control.
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_CLASSIFY_H
#define PCC_CLASSIFY_H

#include "executor/execdesc.h"

extern bool pcc_comment_is_bigsql_hint(const char *body, const char *end);
extern bool pcc_text_has_bigsql_hint(const char *text, int location, int len);
extern bool pcc_plan_is_costly(PlannedStmt *ps, double cost_threshold);
extern bool pcc_statement_writes(QueryDesc *qd);
extern void pcc_plans_classify(List *stmts, double cost_threshold, bool *big,
							   bool *writes);

#endif							/* PCC_CLASSIFY_H */
