/*-------------------------------------------------------------------------
 *
 * pcc_group.h
 *	  Workload groups (pcc_group.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef PCC_GROUP_H
#define PCC_GROUP_H

#include "pcc.h"

/* pg_concurrency_control.groups, parsed. */
typedef struct PccGroupList
{
	int			ngroups;
	char		names[PCC_MAX_GROUPS][PCC_GROUP_NAME_LEN];
	int			limits[PCC_MAX_GROUPS];
} PccGroupList;

extern bool pcc_groups_parse(const char *value, PccGroupList *list);
extern bool pcc_groups_publish(const PccGroupList *list, bool enabled,
							   bool retry);
extern bool pcc_group_name_valid(const char *name);
extern int	pcc_session_group_gate(const char *group);
extern bool pcc_session_group_confirmed(int gate, const char *group);
extern void pcc_session_group_changed(void);

#endif							/* PCC_GROUP_H */
