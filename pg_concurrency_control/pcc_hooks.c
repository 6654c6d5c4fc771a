/*-------------------------------------------------------------------------
 *
 * pcc_hooks.c
 *	  Where statements meet the gates: what the planner, executor and
 *	  utility hooks and the transaction callbacks decide (they are installed
 *	  by pg_concurrency_control.c).
 *
 * What takes a slot (top-level statements of client backends only):
 * - A transaction block takes a transaction slot and keeps it until the
 *   transaction ends (COMMIT, ROLLBACK, PREPARE TRANSACTION, the error that
 *   aborts it): BEGIN / START TRANSACTION takes it before the block starts
 *   (after statements of a pipeline without Sync, in place of the slot
 *   they took); a block xact.c starts otherwise (COMMIT AND CHAIN,
 *   ROLLBACK AND CHAIN, the implicit block of a multi-statement query
 *   string) at its first statement that reaches the executor.  Whether a
 *   statement runs in a block is xact.c's answer (IsTransactionBlock()),
 *   read when it starts.
 * - Outside a block, the first statement that reaches the executor takes
 *   a bigquery, autocommit (writes) or query (reads) slot, held until its
 *   transaction ends.
 * - Inside a block, or after the first statement of a pipeline without
 *   Sync (whose statements share its transaction's slot), a big statement
 *   takes a bigquery slot until its executor ends, or, if it cannot
 *   scroll, until a forward fetch finds no more rows (a cursor that can:
 *   until it is closed); a portal that failed gives it back when its
 *   savepoint aborts.
 * A session in a workload group takes its group's slot first, for the
 * same span as the transaction-scoped slot (pcc_group.c).
 * With pg_concurrency_control.quantum, the transaction-scoped slot may be
 * kept for the session's next transaction (pcc_gate_linger), except while
 * a group slot is held; a next transaction of another kind gives it back
 * and goes on with the turn at its own gate (pcc_gate_resume).
 * "Top level" is a statement the client sent: the active portal's, not
 * run by another statement (functions, triggers, SPI, DO and CALL bodies,
 * whatever planning or ExecutorStart evaluates, and what a utility runs
 * before its query: EXECUTE's parameters, event triggers).  Work
 * PostgreSQL does while committing runs with no active portal (deferred
 * triggers, other modules' pre-commit callbacks) or starts no executor (a
 * holdable cursor run to its end in its own portal), and is never gated:
 * a COMMIT never waits for a slot.  Neither is a fast-path function call
 * (the protocol's FunctionCall message, libpq's PQfn): no portal runs it
 * and it is no statement.  Utility statements take no slot, except that
 * EXPLAIN ANALYZE, CREATE TABLE AS / SELECT INTO, COPY (query) TO,
 * DECLARE CURSOR and EXECUTE are gated by the query they run, and REFRESH
 * MATERIALIZED VIEW takes the transaction's slot before it runs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "commands/prepare.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/planner.h"
#include "storage/ipc.h"
#include "tcop/pquery.h"
#include "tcop/utility.h"
#include "utils/memutils.h"

#include "pcc_auto.h"
#include "pcc_classify.h"
#include "pcc_compat.h"
#include "pcc_gate.h"
#include "pcc_group.h"
#include "pcc_guc.h"
#include "pcc_hooks.h"

/* A statement's bigquery slot, held by its open executor (see above). */
typedef struct PccStatementSlot
{
	QueryDesc  *query;			/* the executor that holds it */
	char	   *portal_name;	/* the portal that runs it */
	int			nest_level;		/* subtransaction it belongs to */
} PccStatementSlot;

/* Depth of statements run by other statements; 0 at top level. */
static int	nesting_level = 0;

/*
 * The gate this transaction's admission asked for (whether or not it got
 * a slot there), or PCC_NO_GATE until it goes through admission.
 */
static int	admitted_gate = PCC_NO_GATE;

/* Gate whose slot this transaction holds, or PCC_NO_GATE. */
static int	transaction_gate = PCC_NO_GATE;

/* Open executors holding the statement-scoped bigquery slot. */
static List *statement_slots = NIL;

/*
 * The query a top-level utility runs (pcc_utility_runs_query) is gated
 * as the client's statement.  The utility itself runs nested, so that
 * what it runs before that query is not: EXECUTE's parameters, the event
 * triggers of CREATE TABLE AS.  Like a DO block's, that work may take
 * locks the query then holds while it queues; the watchdog's deadlock
 * escape covers holders that need them.  The query's executor is known
 * by its text (see pcc_utility_query_starts).
 */
typedef struct PccUtilityQuery
{
	int			level;			/* nesting level its executor starts at */
	Portal		portal;			/* the client's portal running the utility */
	const char *text;			/* the utility's text */
	const char *prepared;		/* a copy of the text EXECUTE runs, or NULL */
	bool		writes;			/* its statement writes (see
								 * pcc_describe_utility_query) */
	bool		hinted;			/* the utility carries the bigsql hint */
} PccUtilityQuery;

static PccUtilityQuery *utility_query = NULL;

static bool exit_hook_registered = false;

/* The hooks ours chain to, saved by _PG_init. */
planner_hook_type pcc_prev_planner = NULL;
ExecutorStart_hook_type pcc_prev_ExecutorStart = NULL;
ExecutorRun_hook_type pcc_prev_ExecutorRun = NULL;
ExecutorFinish_hook_type pcc_prev_ExecutorFinish = NULL;
ExecutorEnd_hook_type pcc_prev_ExecutorEnd = NULL;
ProcessUtility_hook_type pcc_prev_ProcessUtility = NULL;


/*
 * Is this a statement the client sent?  A portal runs it, and no other
 * statement of ours runs it.  Commit-time work has no active portal.
 */
static bool
pcc_at_top_level(void)
{
	return nesting_level == 0 && ActivePortal != NULL;
}

/* Does admission control apply to this backend's statements? */
static bool
pcc_gating_enabled(void)
{
	return pcc_shared != NULL && pcc_enabled && !pcc_bypass &&
		MyBackendType == B_BACKEND && !IsParallelWorker();
}

/* Does admission control apply to what this backend is about to run? */
static bool
pcc_gating_applies(void)
{
	return pcc_at_top_level() && pcc_gating_enabled();
}

/* Free a statement slot's record (not the slot: it is one per backend). */
static void
pcc_free_statement_slot(PccStatementSlot *slot)
{
	pfree(slot->portal_name);
	pfree(slot);
}

/*
 * Release every slot this backend holds: at transaction end, where with
 * may_keep the transaction's slot may be kept for the next one of its
 * turn, and at exit.
 */
static void
pcc_release_all(bool may_keep)
{
	int			kept = may_keep ? transaction_gate : PCC_NO_GATE;
	PccBackend *me;
	uint32		held;

	while (statement_slots != NIL)
	{
		pcc_free_statement_slot(linitial(statement_slots));
		statement_slots = list_delete_first(statement_slots);
	}
	transaction_gate = PCC_NO_GATE;
	pcc_auto_transaction_ends();
	admitted_gate = PCC_NO_GATE;
	if (pcc_shared == NULL || MyProc == NULL)
		return;

	me = pcc_my_backend();
	held = pg_atomic_read_u32(&me->held);
	if (held == 0)
		return;					/* the common case: nothing to give back */
	/* a slot kept past a group slot would be held while taking the next */
	if (held >> PCC_NUM_GATES)
		kept = PCC_NO_GATE;
	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
	{
		if ((held & (1U << id)) == 0)
			continue;
		if (id == kept)
			pcc_gate_linger(id);
		else
			pcc_gate_release(id);
	}
}

/* before_shmem_exit: leave any queue and give every slot back. */
static void
pcc_backend_exit(int code, Datum arg)
{
	pcc_gate_abandon_wait();
	pcc_release_all(false);
	if (pcc_shared != NULL && MyProc != NULL)
	{
		(void) pcc_gate_resume(PCC_NO_GATE, NULL);	/* give back a kept slot */
		pcc_my_backend()->pid = 0;
	}
}

static void
pcc_register_backend(void)
{
	PccBackend *me = pcc_my_backend();

	pg_atomic_write_u32(&me->held, 0);
	me->queue_gate = PCC_NO_GATE;
	Assert(me->linger_gate == PCC_NO_GATE);
	me->pid = MyProcPid;
	before_shmem_exit(pcc_backend_exit, (Datum) 0);
	exit_hook_registered = true;
}

/*
 * Wait for a slot of gate id, for a fresh turn or (turn_start not 0) for
 * the turn that began then.  Returns true if one is now held (and recorded
 * by the gate), false if the control timeout let us through without one.
 */
static bool
pcc_take_slot(PccGateId id, PccPriority priority, PccTime turn_start)
{
	bool		big = id == PCC_GATE_BIGQUERY;

	if (!exit_hook_registered)
		pcc_register_backend();
	return pcc_gate_acquire(id,
							big ? pcc_bigsql_control_timeout : pcc_control_timeout,
							big ? pcc_bigsql_timeout_action : pcc_timeout_action,
							priority, turn_start) == PCC_ADMITTED;
}

/*
 * Continue this session's turn with the slot of gate id kept from its last
 * transaction, if it kept one.  If it kept another gate's, *turn_start
 * says whether its turn goes on (see pcc_gate_resume).
 */
static bool
pcc_resume_turn(PccGateId id, PccTime *turn_start)
{
	/* without the exit hook, this session has never held a slot */
	return exit_hook_registered && pcc_gate_resume(id, turn_start);
}

/*
 * A group member's transaction takes its group's slot first, and returns
 * its group's gate (PCC_NO_GATE outside a group).  A slot kept from before
 * the session joined is never held meanwhile.  The group's slot may be
 * held already: this transaction's admission failed waiting for the gate
 * (cancel, timeout) and the transaction lives on in a savepoint; it is
 * given back with the transaction's.  If the session has changed group
 * since, that slot goes back now: a slot of one group held while waiting
 * for another's could deadlock two such sessions.  A place whose group
 * was resolved before a reload may change hands before its slot is taken
 * (pcc_group.c); the slot then goes back and the group is resolved again.
 */
static int
pcc_admit_group(void)
{
	for (;;)
	{
		int			group = pcc_session_group_gate(pcc_workload_group);
		uint32		held = pg_atomic_read_u32(&pcc_my_backend()->held);

		for (int id = PCC_NUM_GATES; id < PCC_NUM_GATE_IDS; id++)
			if (id != group && (held & (1U << id)) != 0)
				pcc_gate_release(id);
		if (group == PCC_NO_GATE)
			return group;
		(void) pcc_gate_resume(PCC_NO_GATE, NULL);
		if (!pcc_gate_held(group) && !pcc_take_slot(group, pcc_priority, 0))
			return group;		/* let through without a slot */
		if (pcc_session_group_confirmed(group, pcc_workload_group))
			return group;
		pcc_gate_release(group);
	}
}

/*
 * Admission for a whole transaction, in the given gate: the session's
 * group first, if it is in one, then the gate (see pcc_group.c).  Outside
 * a group, a slot kept from the session's last transaction continues its
 * turn, and a turn not over goes on at this gate ahead of new turns.
 */
static void
pcc_admit_transaction(PccGateId id)
{
	int			group;
	PccTime		turn_start = 0;

	if (!exit_hook_registered)
		pcc_register_backend();
	group = pcc_admit_group();
	if ((group == PCC_NO_GATE && pcc_resume_turn(id, &turn_start)) ||
		pcc_take_slot(id, pcc_priority, turn_start))
		transaction_gate = id;
	admitted_gate = id;
}

/*
 * A BEGIN after statements of a pipeline without Sync makes their
 * transaction a block, which holds a transaction slot until it ends: the
 * query or autocommit slot the first statement took goes back, then it
 * waits ahead of newcomers, as it holds its statements' locks and
 * snapshot.  A pipeline that holds a bigquery slot (its first statement's,
 * or an open big portal's) keeps its slots instead, as before: given
 * back, its open portal would run on unbounded; kept while it waits, the
 * slot could close a cycle with a block waiting for it.
 */
static void
pcc_pipeline_becomes_block(void)
{
	if (transaction_gate == PCC_GATE_BIGQUERY || statement_slots != NIL)
		return;
	if (transaction_gate != PCC_NO_GATE && pcc_gate_held(transaction_gate))
		pcc_gate_release(transaction_gate);
	transaction_gate = PCC_NO_GATE;
	admitted_gate = PCC_GATE_TRANSACTION;
	if (pcc_take_slot(PCC_GATE_TRANSACTION, PCC_PRIORITY_IN_BLOCK, 0))
		transaction_gate = PCC_GATE_TRANSACTION;
}

/*
 * A big statement of a transaction admitted to another gate: a bigquery
 * slot while its executor lives.
 */
static void
pcc_admit_big_statement(QueryDesc *qd)
{
	PccStatementSlot *slot;
	MemoryContext old;

	/* recorded first: no failed allocation can lose a slot once taken */
	old = MemoryContextSwitchTo(TopMemoryContext);
	slot = palloc(sizeof(PccStatementSlot));
	slot->query = qd;
	slot->portal_name = pstrdup(ActivePortal->name);
	slot->nest_level = GetCurrentTransactionNestLevel();
	statement_slots = lappend(statement_slots, slot);
	MemoryContextSwitchTo(old);

	/*
	 * One slot per backend, shared by its open big statements.  A
	 * transaction that holds a slot already waits ahead of newcomers: it
	 * holds locks and a snapshot while it waits.  An error while waiting
	 * leaves the record to its (sub)transaction's abort.
	 */
	if (!(exit_hook_registered && pcc_gate_held(PCC_GATE_BIGQUERY)) &&
		!pcc_take_slot(PCC_GATE_BIGQUERY,
					   transaction_gate != PCC_NO_GATE ?
					   PCC_PRIORITY_IN_BLOCK : pcc_priority, 0))
	{
		statement_slots = list_delete_last(statement_slots);
		pcc_free_statement_slot(slot);
	}
}

/*
 * Has the executor holding slot died with no ExecutorEnd to come?  A
 * portal marked failed never ends its executor (PortalCleanup skips it):
 * a cursor declared outside a savepoint whose FETCH failed inside it.
 */
static bool
pcc_statement_slot_dead(PccStatementSlot *slot)
{
	Portal		portal = GetPortalByName(slot->portal_name);

	return portal == NULL || portal->status == PORTAL_FAILED;
}

/*
 * Drop statement slots matching qd, or (qd NULL, at a subtransaction's
 * abort) all of nest_level and deeper and those whose executor died.
 */
static void
pcc_drop_statement_slots(QueryDesc *qd, int nest_level)
{
	ListCell   *lc;

	foreach(lc, statement_slots)
	{
		PccStatementSlot *slot = lfirst(lc);

		if (qd ? slot->query == qd :
			slot->nest_level >= nest_level || pcc_statement_slot_dead(slot))
		{
			statement_slots = foreach_delete_current(statement_slots, lc);
			pcc_free_statement_slot(slot);
		}
	}
	if (statement_slots == NIL && pcc_gate_held(PCC_GATE_BIGQUERY) &&
		transaction_gate != PCC_GATE_BIGQUERY)
		pcc_gate_release(PCC_GATE_BIGQUERY);
}

/*
 * The gate whose slot a transaction takes at its first gated statement: a
 * block's, else by that statement, big, a write or a read.
 */
static PccGateId
pcc_transaction_gate(bool big, bool writes)
{
	if (IsTransactionBlock())
		return PCC_GATE_TRANSACTION;
	return big ? PCC_GATE_BIGQUERY :
		writes ? PCC_GATE_AUTOCOMMIT : PCC_GATE_QUERY;
}

/* Do the statements of qd's portal include others (rules' actions)? */
static bool
pcc_portal_runs_several(QueryDesc *qd)
{
	return ActivePortal != NULL && list_length(ActivePortal->stmts) > 1 &&
		list_member_ptr(ActivePortal->stmts, qd->plannedstmt);
}

/*
 * Does the statement qd starts carry the bigsql hint?  A utility's query
 * has the utility's; EXECUTE's the prepared statement's too, where
 * PostgreSQL located it in the prepared text (PREPARE before 18, its query
 * on 18).  A query's own counts only where it has a location in this
 * text: before 18 a query nested in a utility has none (0, which would
 * read a string of several statements from its start), nor has a rule's
 * action (the rewritten statement's is read instead), and the stored
 * query CREATE MATERIALIZED VIEW runs (on 17 and later, as REFRESH does)
 * has one in another text.
 */
static bool
pcc_statement_hinted(QueryDesc *qd)
{
	const PccUtilityQuery *u = utility_query;
	PlannedStmt *ps = qd->plannedstmt;

	if (u == NULL && pcc_portal_runs_several(qd))
	{
		PlannedStmt *primary = PortalGetPrimaryStmt(ActivePortal);

		if (primary != NULL)
			ps = primary;
	}
	else if (u != NULL)
	{
		bool		prepared = u->prepared != NULL &&
			strcmp(qd->sourceText, u->prepared) == 0;
		bool		located = ps->stmt_location > 0 || ps->stmt_len > 0;

		if (u->hinted)
			return true;
		if (!prepared &&
			(!located || (qd->dest != NULL &&
						  qd->dest->mydest == DestTransientRel)))
			return false;
	}
	return pcc_text_has_bigsql_hint(qd->sourceText, ps->stmt_location,
									ps->stmt_len);
}

/*
 * The gate of the transaction qd's statement admits: of all the statements
 * its portal runs, which rules may have rewritten it into (also under
 * EXECUTE, whose portal runs the prepared statement's).
 */
static PccGateId
pcc_statement_transaction_gate(QueryDesc *qd, bool big, bool writes)
{
	if (pcc_portal_runs_several(qd))
		pcc_plans_classify(ActivePortal->stmts, pcc_bigquery_cost_threshold,
						   &big, &writes);
	return pcc_transaction_gate(big, writes);
}

/*
 * Decide and take what a top-level statement needs before it runs: its
 * transaction's slot if the transaction has none yet (a block's, or one
 * for this statement's kind), and for a big statement of a transaction
 * admitted elsewhere (a block, a pipeline) its own.
 */
static void
pcc_admit_statement(QueryDesc *qd)
{
	bool		big = pcc_plan_is_costly(qd->plannedstmt,
										 pcc_bigquery_cost_threshold) ||
		pcc_statement_hinted(qd);

	bool		writes = pcc_statement_writes(qd) ||
		(utility_query != NULL && utility_query->writes);

	/*
	 * In a read-only transaction (every one on a standby; on a primary,
	 * one begun READ ONLY, set so, or so by default_transaction_read_only)
	 * ExecutorStart rejects a write to a relation that is not temporary: a
	 * slot would make it wait only to fail, or to time out with our error,
	 * not PostgreSQL's.  A write it lets run (to a temporary table, or a
	 * MERGE whose actions all do nothing) is gated.
	 */
	if (writes && XactReadOnly &&
		pcc_plan_rejected_read_only(qd->plannedstmt))
		return;
	if (admitted_gate == PCC_NO_GATE)
		pcc_admit_transaction(pcc_statement_transaction_gate(qd, big, writes));

	/*
	 * A big statement runs under a bigquery slot: its transaction's, or its
	 * own where the transaction was admitted to another gate (a block's, or
	 * by an earlier statement of a pipeline without Sync).
	 */
	if (big && admitted_gate != PCC_GATE_BIGQUERY)
		pcc_admit_big_statement(qd);
}

/* planner_hook: functions evaluated while planning are not top level. */
PlannedStmt *
pcc_planner(Query *parse, const char *query_string, int cursorOptions,
			ParamListInfo boundParams)
{
	PlannedStmt *result;

	nesting_level++;
	PG_TRY();
	{
		if (pcc_prev_planner)
			result = pcc_prev_planner(parse, query_string, cursorOptions,
									   boundParams);
		else
			result = standard_planner(parse, query_string, cursorOptions,
									  boundParams);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
	return result;
}

/*
 * Is qd the query of the utility the client sent?  Its executor starts at
 * the utility's level (what it evaluates before runs there too), either
 * in the client's portal with the utility's text (EXPLAIN, CREATE TABLE
 * AS, SELECT INTO, CREATE MATERIALIZED VIEW, COPY) or with the prepared
 * statement's (EXPLAIN EXECUTE), or in a portal of its own that runs a
 * copy of one of them (DECLARE, EXECUTE).  Statements of functions run
 * with their own text.
 */
static bool
pcc_utility_query_starts(QueryDesc *qd)
{
	const PccUtilityQuery *u = utility_query;

	if (u == NULL || nesting_level != u->level || ActivePortal == NULL ||
		qd->sourceText == NULL)
		return false;
	if (ActivePortal == u->portal)
		return strcmp(qd->sourceText, u->text) == 0 ||
			(u->prepared && strcmp(qd->sourceText, u->prepared) == 0);
	return qd->sourceText == ActivePortal->sourceText &&
		strcmp(qd->sourceText, u->prepared ? u->prepared : u->text) == 0;
}

/*
 * ExecutorStart_hook: admission happens here, once the plan is known.
 * What ExecutorStart evaluates (initial partition pruning, say) is nested.
 */
void
pcc_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bool		top = pcc_at_top_level() ||
		pcc_utility_query_starts(queryDesc);

	if (top)
		pcc_auto_statement_begins();
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && top && pcc_gating_enabled())
		pcc_admit_statement(queryDesc);

	nesting_level++;
	PG_TRY();
	{
		if (pcc_prev_ExecutorStart)
			pcc_prev_ExecutorStart(queryDesc, eflags);
		else
			standard_ExecutorStart(queryDesc, eflags);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
}

/* The previous or standard ExecutorRun, with what it runs nested. */
static void
pcc_executor_run_nested(QueryDesc *queryDesc, ScanDirection direction,
						uint64 count PCC_EXECUTE_ONCE_PARAM)
{
	nesting_level++;
	PG_TRY();
	{
		if (pcc_prev_ExecutorRun)
			pcc_prev_ExecutorRun(queryDesc, direction, count
								 PCC_EXECUTE_ONCE_ARG);
		else
			standard_ExecutorRun(queryDesc, direction, count
								 PCC_EXECUTE_ONCE_ARG);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
}

/*
 * Has a run of qd, holding a statement's slot, left a big query nothing
 * more to do?  A forward run that returned fewer rows than asked for has
 * reached the end of its plan, and a portal that cannot scroll runs it no
 * more (backward fetches need SCROLL).  Not a run that moves nowhere
 * (FETCH 0): it returns no row wherever the portal stands.  Yet the portal
 * stays open, and ExecutorEnd with it, until it is closed, its transaction
 * ends or, for the protocol's unnamed portal, the next Bind: a client idle
 * in its block would keep the bigquery slot.  Only a plain SELECT: other
 * work's AFTER triggers run at ExecutorFinish.
 */
static bool
pcc_big_run_done(QueryDesc *qd, ScanDirection direction, uint64 count)
{
	return qd->operation == CMD_SELECT && !qd->plannedstmt->hasModifyingCTE &&
		ActivePortal != NULL &&
		(ActivePortal->cursorOptions & CURSOR_OPT_SCROLL) == 0 &&
		ScanDirectionIsForward(direction) &&
		(count == 0 || qd->estate->es_processed < count);
}

/*
 * ExecutorRun_hook: what runs inside is nested.  A top-level run (an
 * Execute or FETCH of an open portal, too) is a statement's work.  A big
 * query holding a statement's slot gives it back once done
 * (pcc_big_run_done).
 */
void
pcc_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction,
				uint64 count PCC_EXECUTE_ONCE_PARAM)
{
	bool		top = pcc_at_top_level();

	if (top)
		pcc_auto_statement_begins();
	pcc_executor_run_nested(queryDesc, direction, count PCC_EXECUTE_ONCE_ARG);
	if (top)
		pcc_auto_statement_ends();
	if (statement_slots != NIL &&
		pcc_big_run_done(queryDesc, direction, count))
		pcc_drop_statement_slots(queryDesc, 0);
}

/* ExecutorFinish_hook: AFTER triggers are nested too. */
void
pcc_ExecutorFinish(QueryDesc *queryDesc)
{
	nesting_level++;
	PG_TRY();
	{
		if (pcc_prev_ExecutorFinish)
			pcc_prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
}

/* ExecutorEnd_hook: a big statement gives its statement's slot back. */
void
pcc_ExecutorEnd(QueryDesc *queryDesc)
{
	if (statement_slots != NIL)
		pcc_drop_statement_slots(queryDesc, 0);

	if (pcc_prev_ExecutorEnd)
		pcc_prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/* Utility statements whose executor run is gated as a top-level query. */
static bool
pcc_utility_runs_query(Node *stmt)
{
	switch (nodeTag(stmt))
	{
		case T_ExplainStmt:
		case T_CreateTableAsStmt:
		case T_DeclareCursorStmt:
		case T_ExecuteStmt:
			return true;
		case T_CopyStmt:
			return ((CopyStmt *) stmt)->query != NULL;
		default:
			return false;
	}
}

/* BEGIN and START TRANSACTION wait for the block's slot before it starts. */
static bool
pcc_starts_block(Node *stmt)
{
	return IsA(stmt, TransactionStmt) &&
		(((TransactionStmt *) stmt)->kind == TRANS_STMT_BEGIN ||
		 ((TransactionStmt *) stmt)->kind == TRANS_STMT_START);
}

/* The previous or standard ProcessUtility. */
static void
pcc_call_utility(PlannedStmt *pstmt, const char *queryString,
				 PCC_UTILITY_READONLY_PARAM
				 ProcessUtilityContext context, ParamListInfo params,
				 QueryEnvironment *queryEnv, DestReceiver *dest,
				 QueryCompletion *qc)
{
	if (pcc_prev_ProcessUtility)
		pcc_prev_ProcessUtility(pstmt, queryString, PCC_UTILITY_READONLY_ARG
							context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, PCC_UTILITY_READONLY_ARG
								context, params, queryEnv, dest, qc);
}

/*
 * What a top-level utility runs, looked for through EXPLAIN and CREATE
 * TABLE AS, into u: the text an EXECUTE runs, copied (an event trigger may
 * deallocate the statement before it runs), and whether its statement
 * writes, whatever runs first.  CREATE TABLE AS fills a table, and the
 * first query an explained or executed write runs may be a rule's action
 * that reads.
 */
static void
pcc_describe_utility_query(Node *stmt, PccUtilityQuery *u)
{
	u->prepared = NULL;
	u->writes = false;
	while (stmt != NULL)
	{
		if (IsA(stmt, ExecuteStmt))
		{
			PreparedStatement *entry =
				FetchPreparedStatement(((ExecuteStmt *) stmt)->name, false);
			CommandTag	tag;

			if (entry == NULL)
				return;
			u->prepared = pstrdup(entry->plansource->query_string);
			tag = entry->plansource->commandTag;
			u->writes |= tag == CMDTAG_INSERT || tag == CMDTAG_UPDATE ||
				tag == CMDTAG_DELETE || tag == CMDTAG_MERGE;
			return;
		}
		if (IsA(stmt, CreateTableAsStmt))
		{
			u->writes = true;
			stmt = ((CreateTableAsStmt *) stmt)->query;
		}
		else if (IsA(stmt, ExplainStmt))
			stmt = ((ExplainStmt *) stmt)->query;
		else if (IsA(stmt, Query) &&
				 ((Query *) stmt)->commandType == CMD_UTILITY)
			stmt = ((Query *) stmt)->utilityStmt;
		else
		{
			if (IsA(stmt, Query))
				u->writes |= ((Query *) stmt)->commandType != CMD_SELECT;
			return;
		}
	}
}

/*
 * The previous or standard ProcessUtility, with what it runs nested.  A
 * top-level utility whose query is the client's statement passes query,
 * to have that query known when its executor starts.
 */
static void
pcc_call_utility_nested(PccUtilityQuery *query,
						PlannedStmt *pstmt, const char *queryString,
						PCC_UTILITY_READONLY_PARAM
						ProcessUtilityContext context, ParamListInfo params,
						QueryEnvironment *queryEnv, DestReceiver *dest,
						QueryCompletion *qc)
{
	nesting_level++;
	if (query != NULL)
	{
		Assert(utility_query == NULL);
		query->level = nesting_level;
		utility_query = query;
	}
	PG_TRY();
	{
		pcc_call_utility(pstmt, queryString, PCC_UTILITY_READONLY_ARG
						 context, params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		nesting_level--;
		if (query != NULL)
			utility_query = NULL;
	}
	PG_END_TRY();
}

/*
 * ProcessUtility_hook: BEGIN's admission and nesting.  The query of a
 * utility statement that runs one (pcc_utility_runs_query) is gated in
 * ExecutorStart as the client's.
 */
void
pcc_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				   PCC_UTILITY_READONLY_PARAM
				   ProcessUtilityContext context, ParamListInfo params,
				   QueryEnvironment *queryEnv, DestReceiver *dest,
				   QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;
	bool		top = context == PROCESS_UTILITY_TOPLEVEL && pcc_at_top_level();
	PccUtilityQuery query;
	PccUtilityQuery *runs_query = NULL;

	if (top)
		pcc_auto_statement_begins();
	/*
	 * BEGIN takes a transaction slot, or moves a pipeline's transaction to
	 * one; in a block that went through admission it only warns.
	 */
	if (top && pcc_starts_block(stmt) && pcc_gating_applies())
	{
		if (admitted_gate == PCC_NO_GATE)
			pcc_admit_transaction(PCC_GATE_TRANSACTION);
		else if (admitted_gate != PCC_GATE_TRANSACTION)
			pcc_pipeline_becomes_block();
	}

	/*
	 * REFRESH MATERIALIZED VIEW takes its transaction's slot before it runs
	 * (with the statement's snapshot, as a gated query waits), not when its
	 * query reaches the executor: by then it holds its lock on the view,
	 * and a CONCURRENTLY one runs statements of its own through SPI.  A
	 * write, big by its hint (the cost is not known yet).  In a read-only
	 * transaction it fails at once, as other writes do in ExecutorStart.
	 */
	if (top && IsA(stmt, RefreshMatViewStmt) &&
		admitted_gate == PCC_NO_GATE && pcc_gating_applies() && !XactReadOnly)
	{
		bool		big = pcc_text_has_bigsql_hint(queryString,
												   pstmt->stmt_location,
												   pstmt->stmt_len);

		pcc_admit_transaction(pcc_transaction_gate(big, true));
	}

	if (top && pcc_utility_runs_query(stmt))
	{
		query.portal = ActivePortal;
		query.text = queryString;
		pcc_describe_utility_query(stmt, &query);
		query.hinted = pcc_text_has_bigsql_hint(queryString,
												pstmt->stmt_location,
												pstmt->stmt_len);
		runs_query = &query;
	}
	pcc_call_utility_nested(runs_query, pstmt, queryString,
							PCC_UTILITY_READONLY_ARG
							context, params, queryEnv, dest, qc);
	if (top)
		pcc_auto_statement_ends();
}

/*
 * Transaction end releases the transaction's and its statements' slots;
 * the next transaction, chained or not, goes through admission afresh.
 */
void
pcc_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			pcc_release_all(true);
			break;
		case XACT_EVENT_ABORT:

			/*
			 * ROLLBACK ends a transaction of the turn as COMMIT does; xact.c
			 * runs its abort with the block already marked aborting ('E').
			 * An error aborts while the block is still in progress ('T'), or
			 * outside one ('I'): its slot goes back at once, kept for no
			 * turn, so that a failed block holds none until its ROLLBACK.
			 */
			pcc_release_all(TransactionBlockStatusCode() == 'E');
			break;
		default:
			break;
	}
}

/* A failed or released subtransaction takes its statement slots along. */
void
pcc_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	int			level = GetCurrentTransactionNestLevel();
	ListCell   *lc;

	if (statement_slots == NIL)
		return;
	if (event == SUBXACT_EVENT_ABORT_SUB)
		pcc_drop_statement_slots(NULL, level);
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		foreach(lc, statement_slots)
		{
			PccStatementSlot *slot = lfirst(lc);

			if (slot->nest_level >= level)
				slot->nest_level = level - 1;
		}
	}
}
