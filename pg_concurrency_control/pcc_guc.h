/*-------------------------------------------------------------------------
 *
 * pcc_guc.h
 *	  Configuration parameters (pcc_guc.c) and their one way into shared
 *	  memory, pcc_publish_settings().
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_GUC_H
#define PCC_GUC_H

#include "pcc.h"

extern PGDLLIMPORT bool pcc_enabled;
extern PGDLLIMPORT bool pcc_bypass;
extern PGDLLIMPORT double pcc_bigquery_cost_threshold;
extern PGDLLIMPORT int pcc_control_timeout;
extern PGDLLIMPORT int pcc_bigsql_control_timeout;
extern PGDLLIMPORT int pcc_timeout_action;
extern PGDLLIMPORT int pcc_bigsql_timeout_action;
extern PGDLLIMPORT int pcc_priority;
extern PGDLLIMPORT char *pcc_workload_group;
extern PGDLLIMPORT bool pcc_log_auto;

extern void pcc_define_gucs(void);
extern bool pcc_publish_settings(void);
extern bool pcc_publish_groups(bool retry);

#endif							/* PCC_GUC_H */
