/*-------------------------------------------------------------------------
 *
 * pcc_group.c
 *	  Workload groups: named gates that sessions join by role or database.
 *
 * pg_concurrency_control.groups (reload) lists the groups and their limits,
 * "reporting=4, batch=2"; pg_concurrency_control.workload_group (superuser,
 * set per role or database) puts a session in one.  A statement that needs a
 * transaction-scoped slot first takes its group's slot, then the gate's;
 * both are released together.  Nothing takes a group slot while holding a
 * gate slot (statements inside a block take none), so the two kinds of
 * gate cannot deadlock each other.  A slot of a group the session has left,
 * or of a place that changed hands since it was resolved, goes back before
 * the next is taken (pcc_admit_group in pcc_hooks.c).
 *
 * Group i is gate PCC_NUM_GATES + i.  A group that leaves the list keeps
 * its name, with no limit, until nobody holds or waits for one of its
 * slots (it is forgotten when the list is next applied: at a reload, or at
 * the watchdog's next scan while a group waits for a place), so that slots
 * are given back where they were taken; only then may another group reuse
 * its place.  The list is applied by the one writer of the settings (see
 * pcc.h); groups_lock lets backends resolve names meanwhile.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "utils/guc.h"
#include "utils/timestamp.h"

#include "pcc_compat.h"
#include "pcc_gate.h"
#include "pcc_group.h"

static const char GROUP_PREFIX[] = "group:";

/* The session's group as last resolved, and when. */
static int	session_gate = PCC_NO_GATE;
static uint32 session_generation = 0;	/* 0: resolve again */

/* The gate name of group name: "group:name". */
static void
group_label(char *label, const char *name)
{
	snprintf(label, PCC_GROUP_LABEL_LEN, "%s%s", GROUP_PREFIX, name);
}

/* A group name: 1 to PCC_GROUP_NAME_LEN - 1 of [a-z0-9_]. */
bool
pcc_group_name_valid(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0 || len >= PCC_GROUP_NAME_LEN)
		return false;
	for (const char *p = name; *p; p++)
		if (!(islower((unsigned char) *p) || isdigit((unsigned char) *p) ||
			  *p == '_'))
			return false;
	return true;
}

/*
 * Parse "name=limit, ..." into list.  On a syntax error, returns false
 * with the message in GUC_check_errdetail.
 */
bool
pcc_groups_parse(const char *value, PccGroupList *list)
{
	const char *p = value;

	memset(list, 0, sizeof(*list));
	while (*p)
	{
		char		name[PCC_GROUP_NAME_LEN];
		int			len = 0;
		char	   *end;
		long		limit;

		while (isspace((unsigned char) *p) || *p == ',')
			p++;
		if (*p == '\0')
			break;
		while (*p && *p != '=' && *p != ',' && !isspace((unsigned char) *p))
		{
			if (len < PCC_GROUP_NAME_LEN - 1)
				name[len] = *p;
			len++;
			p++;
		}
		name[Min(len, PCC_GROUP_NAME_LEN - 1)] = '\0';
		while (isspace((unsigned char) *p))
			p++;
		if (len >= PCC_GROUP_NAME_LEN || !pcc_group_name_valid(name) || *p != '=')
		{
			GUC_check_errdetail("Expected a list of name=limit, names of 1 to %d lower-case letters, digits or underscores.",
								PCC_GROUP_NAME_LEN - 1);
			return false;
		}
		p++;
		limit = strtol(p, &end, 10);
		if (end == p || limit < 0 || limit > MAX_BACKENDS)
		{
			GUC_check_errdetail("The limit of group \"%s\" must be an integer from 0 (unlimited) to %d.",
								name, MAX_BACKENDS);
			return false;
		}
		p = end;
		while (isspace((unsigned char) *p))
			p++;
		if (*p != '\0' && *p != ',')
		{
			GUC_check_errdetail("Expected a comma after the limit of group \"%s\".", name);
			return false;
		}
		for (int i = 0; i < list->ngroups; i++)
			if (strcmp(list->names[i], name) == 0)
			{
				GUC_check_errdetail("Group \"%s\" is listed twice.", name);
				return false;
			}
		if (list->ngroups == PCC_MAX_GROUPS)
		{
			GUC_check_errdetail("At most %d groups can be defined.", PCC_MAX_GROUPS);
			return false;
		}
		strlcpy(list->names[list->ngroups], name, PCC_GROUP_NAME_LEN);
		list->limits[list->ngroups++] = (int) limit;
	}
	return true;
}

/* Does anyone hold, keep or wait for a slot of gate id? */
static bool
pcc_group_in_use(int id)
{
	PccGate    *gate = pcc_gate(id);
	uint64		state = pg_atomic_read_u64(&gate->state);

	return pcc_state_running(state) > 0 || pcc_state_waiting(state) > 0;
}

/* The group named label, or -1.  Caller holds groups_lock. */
static int
group_named(const char *label)
{
	for (int i = 0; i < PCC_MAX_GROUPS; i++)
		if (strcmp(pcc_shared->group_labels[i], label) == 0)
			return i;
	return -1;
}

/* Make every backend resolve its group again at its next admission. */
static void
bump_generation(void)
{
	/* 0 would match a session that has not resolved its group yet */
	if (pg_atomic_add_fetch_u32(&pcc_shared->groups_generation, 1) == 0)
		pg_atomic_add_fetch_u32(&pcc_shared->groups_generation, 1);
}

/*
 * Mark free[i] the places that may change hands in this pass: no
 * configured group uses them, nobody holds, keeps or waits for one of
 * their slots, and they carry a removed group's name or (need_place) a
 * group needs one.  A backend that resolved its group before this pass
 * may still take a slot of such a place after its last look at the
 * generation, so the generation moves before the places are looked at,
 * and each is looked at again after: a backend whose take comes later
 * than that look sees the new generation and gives the slot back
 * (pcc_session_group_confirmed; both sides pass a full barrier between).
 * The first look spares backends a needless resolution when no place is
 * free.  Caller holds groups_lock.
 */
static void
find_free_places(bool *free, bool need_place)
{
	bool		any = false;

	for (int i = 0; i < PCC_MAX_GROUPS; i++)
	{
		free[i] = !pcc_shared->group_configured[i] &&
			(need_place || pcc_shared->group_labels[i][0] != '\0') &&
			!pcc_group_in_use(PCC_NUM_GATES + i);
		any |= free[i];
	}
	if (!any)
		return;
	bump_generation();			/* a full barrier */
	for (int i = 0; i < PCC_MAX_GROUPS; i++)
		free[i] = free[i] && !pcc_group_in_use(PCC_NUM_GATES + i);
}

/* Returns true if place i changes hands (its totals are then stale). */
static bool
configure_group(int i, const char *label, int limit)
{
	bool		new_name = strcmp(pcc_shared->group_labels[i], label) != 0;

	strlcpy(pcc_shared->group_labels[i], label, PCC_GROUP_LABEL_LEN);
	pcc_shared->group_configured[i] = true;
	pg_atomic_write_u32(&pcc_gate(PCC_NUM_GATES + i)->limit,
						limit == 0 ? PCC_UNLIMITED : (uint32) limit);
	return new_name;
}

/*
 * Apply a parsed list to shared memory (pcc_publish_settings):
 * groups keep their places, new ones take free places, removed ones lose
 * their limit.  While the module is not enabled, the groups keep their
 * places without a limit, as the gates do: enabled = off must admit
 * everyone queued, also behind a group member idle in its transaction.
 * Returns true while a group found no place (every free one still drains
 * a removed group): the watchdog applies the list again at its scans
 * (retry), and the log tells once, at the reload or when that changes.
 * Backends resolve their group again only when a place changed hands.
 */
bool
pcc_groups_publish(const PccGroupList *list, bool enabled, bool retry)
{
	/* the watchdog's (at creation the postmaster finds every place free) */
	static int	lost_logged = 0;

	bool		was_configured[PCC_MAX_GROUPS];
	bool		placed[PCC_MAX_GROUPS] = {0};
	bool		free[PCC_MAX_GROUPS];
	char		labels[PCC_MAX_GROUPS][PCC_GROUP_LABEL_LEN];
	int			unplaced = 0;
	int			lost = 0;
	bool		moved = false;	/* a place's name or configured flag */
	TimestampTz now = GetCurrentTimestamp();

	if (pcc_shared == NULL)
		return false;
	for (int g = 0; g < list->ngroups; g++)
		group_label(labels[g], list->names[g]);

	SpinLockAcquire(&pcc_shared->groups_lock);
	for (int i = 0; i < PCC_MAX_GROUPS; i++)
	{
		was_configured[i] = pcc_shared->group_configured[i];
		pcc_shared->group_configured[i] = false;
	}
	for (int g = 0; g < list->ngroups; g++)
	{
		int			i = group_named(labels[g]);

		if (i >= 0)
		{
			configure_group(i, labels[g], enabled ? list->limits[g] : 0);
			placed[g] = true;
		}
		else
			unplaced++;
	}
	find_free_places(free, unplaced > 0);
	for (int g = 0, i = 0; g < list->ngroups; g++)
	{
		if (placed[g])
			continue;
		while (i < PCC_MAX_GROUPS && !free[i])
			i++;
		if (i == PCC_MAX_GROUPS)
		{
			lost++;				/* every place is busy draining */
			continue;
		}
		/* a new group starts with its own totals */
		if (configure_group(i, labels[g], enabled ? list->limits[g] : 0))
		{
			pcc_gate_reset_stats(pcc_gate(PCC_NUM_GATES + i), now);
			moved = true;
		}
		free[i] = false;
	}
	for (int i = 0; i < PCC_MAX_GROUPS; i++)
	{
		moved |= was_configured[i] != pcc_shared->group_configured[i];
		if (pcc_shared->group_configured[i])
			continue;
		pg_atomic_write_u32(&pcc_gate(PCC_NUM_GATES + i)->limit, PCC_UNLIMITED);
		if (pcc_shared->group_labels[i][0] != '\0' && free[i])
		{
			pcc_shared->group_labels[i][0] = '\0';	/* drained: forget it */
			moved = true;
		}
	}
	if (moved)
		bump_generation();
	SpinLockRelease(&pcc_shared->groups_lock);

	/* waiters of a group that is gone run at once */
	for (int i = 0; i < PCC_MAX_GROUPS; i++)
		if (was_configured[i] && !pcc_shared->group_configured[i])
			pcc_gate_grant_waiters(pcc_gate(PCC_NUM_GATES + i));
	if (lost > 0 && (!retry || lost != lost_logged))
		ereport(LOG,
				(errmsg("pg_concurrency_control: %d group(s) not applied yet: every place is still in use by a removed group",
						lost),
				 errdetail("They are applied once the removed groups' slots are given back.")));
	else if (lost == 0 && lost_logged > 0)
		ereport(LOG,
				(errmsg("pg_concurrency_control: every group is applied")));
	lost_logged = lost;
	return lost > 0;
}

/* The group GUC changed: resolve it again at the next admission. */
void
pcc_session_group_changed(void)
{
	session_generation = 0;
}

/*
 * Is gate still this session's group, now that it holds a slot of gate?
 * The barrier orders that take before the look at the generation (see
 * find_free_places); if the generation moved, the group is resolved again.
 */
bool
pcc_session_group_confirmed(int gate, const char *group)
{
	pg_memory_barrier();
	return pcc_session_group_gate(group) == gate;
}

/*
 * The gate id of this session's group (its workload_group setting), or
 * PCC_NO_GATE when it is in none or in one that is not configured.  One
 * atomic read unless the groups or the session's group changed.
 */
int
pcc_session_group_gate(const char *group)
{
	uint32		generation = pg_atomic_read_u32(&pcc_shared->groups_generation);
	char		label[PCC_GROUP_LABEL_LEN];
	int			i;

	if (generation == session_generation)
		return session_gate;
	session_gate = PCC_NO_GATE;
	session_generation = generation;
	if (group == NULL || group[0] == '\0')
		return session_gate;
	group_label(label, group);
	SpinLockAcquire(&pcc_shared->groups_lock);
	i = group_named(label);
	if (i >= 0 && pcc_shared->group_configured[i])
		session_gate = PCC_NUM_GATES + i;
	SpinLockRelease(&pcc_shared->groups_lock);
	return session_gate;
}
