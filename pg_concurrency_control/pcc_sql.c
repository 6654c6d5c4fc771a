/*-------------------------------------------------------------------------
 *
 * pcc_sql.c
 *	  SQL interface: status, backends, reset, the consistency check, when
 *	  the configuration was applied, and the adaptive limit's simulation.
 *
 * Gating works without CREATE EXTENSION; only these functions need it.
 * The set-returning ones fill the columns their installed SQL definition
 * declares (PccResult), so that library and SQL script of neighbouring
 * versions work together between a package upgrade and ALTER EXTENSION.
 * The simulation is a test model, not part of the extension's API: the
 * tests bind it themselves (a superuser's CREATE FUNCTION ... LANGUAGE C).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"
#include "pcc_gate.h"

PG_FUNCTION_INFO_V1(pg_concurrency_control_status);
PG_FUNCTION_INFO_V1(pg_concurrency_control_backends);
PG_FUNCTION_INFO_V1(pg_concurrency_control_reset);
PG_FUNCTION_INFO_V1(pg_concurrency_control_check);
PG_FUNCTION_INFO_V1(pg_concurrency_control_config_loaded);
PG_FUNCTION_INFO_V1(pg_concurrency_control_auto_simulate);

/*
 * The columns each function fills, in its own order.  The installed SQL
 * definition says which the caller gets (PccResult): later versions only
 * append columns, never rename, retype or drop one.
 */
typedef struct PccColumn
{
	const char *name;
	Oid			type;
} PccColumn;

static const PccColumn status_columns[] = {
	{"gate", TEXTOID}, {"max_concurrency", INT4OID}, {"running", INT4OID},
	{"waiting", INT4OID}, {"admitted", INT8OID}, {"queued", INT8OID},
	{"timeouts", INT8OID}, {"rejected", INT8OID}, {"abandoned", INT8OID},
	{"overcommitted", INT8OID},
	{"lock_escapes", INT8OID}, {"lock_blocked", INT4OID},
	{"total_wait_ms", FLOAT8OID}, {"max_wait_ms", FLOAT8OID},
	{"mean_wait_ms", FLOAT8OID}, {"stats_reset", TIMESTAMPTZOID},
	{"lingering", INT4OID}, {"resumed", INT8OID}, {"turn_budget_ms", FLOAT8OID},
	{"auto", BOOLOID}, {"baseline_ms", FLOAT8OID}, {"service_ms", FLOAT8OID},
	{"throughput", FLOAT8OID}, {"yielding", BOOLOID}, {"ceiling", INT4OID},
	{"floor", INT4OID}
};

static const PccColumn backends_columns[] = {
	{"pid", INT4OID}, {"gate", TEXTOID}, {"state", TEXTOID},
	{"since", TIMESTAMPTZOID}, {"ticket", INT8OID}, {"turn", INT8OID},
	{"priority", TEXTOID}
};

static const PccColumn check_columns[] = {
	{"gate", TEXTOID}, {"problem", TEXTOID}
};

#define STATUS_COLS		lengthof(status_columns)
#define AUTO_INPUT_COLS		6	/* status: baseline_ms .. floor */
#define BACKENDS_COLS	lengthof(backends_columns)
#define CHECK_COLS		lengthof(check_columns)
#define SIMULATE_COLS	7

/*
 * The rows of a set-returning function, shaped as its installed SQL
 * definition declares them, matched to ours by name: a definition older
 * than the library (a package upgrade before ALTER EXTENSION UPDATE) gets
 * the columns it knows; one newer (a standby whose library lags its
 * primary's extension) gets NULL in the columns this library does not
 * know.
 */
typedef struct PccResult
{
	ReturnSetInfo *rsinfo;
	int		   *source;			/* per declared column: ours, or -1 */
	Datum	   *values;			/* one declared row */
	bool	   *nulls;
} PccResult;

/*
 * In the model with turns, a queue keeps itself while the limit times this
 * is below the sessions: at 64 connections select-only kept a queue at a
 * limit of 8 and drained it at 16.
 */
#define SIM_QUEUE_KEEPS 4
/*
 * The model's shortest unloaded hold, 1 us: a step then completes at most
 * auto_max x 2 x 10^5 holds (holds shrink to half at most), which a 64-bit
 * count holds.
 */
#define SIM_MIN_UNLOADED_MS 0.001

/* A gate's numbers, copied out under its mutex (O(1) hold). */
typedef struct GateSnapshot
{
	uint32		limit;
	uint32		running;
	uint32		waiting;
	uint32		stuck;
	uint64		admitted;
	uint64		released;
	uint64		queued;
	uint64		timeouts;
	uint64		rejected;
	uint64		abandoned;
	uint64		overcommitted;
	uint64		escapes;
	uint64		total_wait_us;
	uint64		max_wait_us;
	uint64		admitted_at_reset;
	TimestampTz reset_time;
	uint64		resumed;
	int64		turn_budget_us;
	bool		auto_on;
	PccAutoState auto_state;
	int			lingering;
} GateSnapshot;

/* What check() finds walking a gate's lists, under its mutex. */
typedef struct GateLists
{
	uint32		waiting;		/* per the state word */
	int			queue_length;
	bool		queue_consistent;
	int			lingering;		/* length of the lingering list */
	bool		lingering_consistent;
} GateLists;

/*
 * Start a materialised result for the columns the caller declares.  A
 * declared column of ours with another type is an error: the definition
 * is not one of this extension's versions.
 */
static void
result_begin(FunctionCallInfo fcinfo, PccResult *r,
			 const PccColumn *columns, int ncolumns)
{
	TupleDesc	desc;

	InitMaterializedSRF(fcinfo, 0);
	r->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	desc = r->rsinfo->setDesc;
	r->source = palloc(desc->natts * sizeof(int));
	r->values = palloc(desc->natts * sizeof(Datum));
	r->nulls = palloc(desc->natts * sizeof(bool));
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		r->source[i] = -1;
		if (att->attisdropped)
			continue;
		for (int c = 0; c < ncolumns; c++)
		{
			if (strcmp(NameStr(att->attname), columns[c].name) != 0)
				continue;
			if (att->atttypid != columns[c].type)
				ereport(ERROR,
						(errcode(ERRCODE_DATATYPE_MISMATCH),
						 errmsg("column \"%s\" of the result is declared as %s, but pg_concurrency_control returns %s",
								columns[c].name, format_type_be(att->atttypid),
								format_type_be(columns[c].type)),
						 errhint("Install the library and the extension's SQL script of one release, then run ALTER EXTENSION pg_concurrency_control UPDATE.")));
			r->source[i] = c;
			break;
		}
	}
}

/* Add one row, given in the function's own column order. */
static void
result_put(PccResult *r, const Datum *values, const bool *nulls)
{
	TupleDesc	desc = r->rsinfo->setDesc;

	for (int i = 0; i < desc->natts; i++)
	{
		int			c = r->source[i];

		r->values[i] = c < 0 ? (Datum) 0 : values[c];
		r->nulls[i] = c < 0 || nulls[c];
	}
	tuplestore_putvalues(r->rsinfo->setResult, desc, r->values, r->nulls);
}

/*
 * A row's gate: the four gates, and the group places that carry a group's
 * name.  Copies the name into name (PCC_GROUP_LABEL_LEN bytes); false for
 * a free place.
 */
static bool
gate_listed(PccGateId id, char *name)
{
	pcc_gate_name_copy(id, name);
	return name[0] != '\0';
}

static void
snapshot_gate(PccGateId id, GateSnapshot *s)
{
	PccGate    *gate = pcc_gate(id);
	uint64		state;

	SpinLockAcquire(&gate->mutex);
	state = pg_atomic_read_u64(&gate->state);
	s->limit = pg_atomic_read_u32(&gate->limit);
	s->running = pcc_state_running(state);
	s->waiting = pcc_state_waiting(state);
	s->stuck = pg_atomic_read_u32(&gate->stuck);
	s->admitted = pg_atomic_read_u64(&gate->admitted);
	s->released = pg_atomic_read_u64(&gate->released);
	s->queued = gate->queued;
	s->timeouts = gate->timeouts;
	s->rejected = gate->rejected;
	s->abandoned = gate->abandoned;
	s->overcommitted = gate->overcommitted;
	s->escapes = gate->escapes;
	s->total_wait_us = gate->total_wait_us;
	s->max_wait_us = gate->max_wait_us;
	s->admitted_at_reset = gate->admitted_at_reset;
	s->reset_time = gate->reset_time;
	s->resumed = gate->resumed;
	s->turn_budget_us = PCC_IS_GROUP(id) ? 0 : pcc_gate_turn_budget_us(gate);
	s->auto_on = pg_atomic_read_u32(&gate->auto_on) != 0;
	s->lingering = (int) gate->nlingering;
	SpinLockRelease(&gate->mutex);
	s->auto_state = gate->auto_state;	/* racy: the watchdog writes it */
}

/*
 * Walk a gate's queues and lingering list.  For check() only: it holds the
 * gate's mutex for O(waiters), which is why check() is for pg_monitor.
 */
static void
walk_gate_lists(PccGateId id, GateLists *l)
{
	PccGate    *gate = pcc_gate(id);
	dlist_iter	iter;

	SpinLockAcquire(&gate->mutex);
	l->waiting = pcc_state_waiting(pg_atomic_read_u64(&gate->state));
	l->queue_length = 0;
	l->queue_consistent = true;
	for (int p = 0; p < PCC_NUM_PRIORITIES; p++)
	{
		dlist_foreach(iter, &gate->queues[p])
		{
			PccBackend *be = dlist_container(PccBackend, queue_node, iter.cur);

			l->queue_length++;
			if (be->queue_gate != (int) id || (int) be->queue_priority != p ||
				pg_atomic_read_u32(&be->status) != PCC_WAIT_QUEUED)
				l->queue_consistent = false;
		}
	}
	l->lingering = 0;
	l->lingering_consistent = true;
	dlist_foreach(iter, &gate->lingering)
	{
		PccBackend *be = dlist_container(PccBackend, linger_node, iter.cur);

		l->lingering++;
		if (be->linger_gate != (int) id)
			l->lingering_consistent = false;
	}
	if (l->lingering != (int) gate->nlingering)
		l->lingering_consistent = false;
	SpinLockRelease(&gate->mutex);
}

/*
 * The controller's inputs and verdict, NULL unless the gate is auto and has
 * run.  Returns the number of columns filled.
 */
static int
put_auto_inputs(const GateSnapshot *s, Datum *values, bool *nulls)
{
	const PccAutoState *st = &s->auto_state;
	bool		none = !s->auto_on || st->steps == 0;

	values[0] = Float8GetDatum(st->baseline_us / 1000.0);
	values[1] = Float8GetDatum(st->service_us / 1000.0);
	values[2] = Float8GetDatum(st->throughput);
	values[3] = BoolGetDatum(st->yielding);
	values[4] = Int32GetDatum((int32) rint(st->ceiling));
	values[5] = Int32GetDatum((int32) rint(st->trial_floor));
	for (int i = 0; i < AUTO_INPUT_COLS; i++)
		nulls[i] = none;
	return AUTO_INPUT_COLS;
}

/* pg_concurrency_control_status(): one row per gate. */
Datum
pg_concurrency_control_status(PG_FUNCTION_ARGS)
{
	PccResult	result;

	pcc_require_shared();
	result_begin(fcinfo, &result, status_columns, STATUS_COLS);

	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
	{
		GateSnapshot s;
		Datum		values[STATUS_COLS];
		bool		nulls[STATUS_COLS] = {0};
		char		name[PCC_GROUP_LABEL_LEN];
		int			i = 0;

		if (!gate_listed(id, name))
			continue;
		snapshot_gate(id, &s);
		values[i++] = CStringGetTextDatum(name);
		values[i++] = Int32GetDatum(s.limit == PCC_UNLIMITED ? 0 : (int32) s.limit);
		values[i++] = Int32GetDatum((int32) s.running);
		values[i++] = Int32GetDatum((int32) s.waiting);
		values[i++] = Int64GetDatum((int64) (s.admitted - s.admitted_at_reset));
		values[i++] = Int64GetDatum((int64) s.queued);
		values[i++] = Int64GetDatum((int64) s.timeouts);
		values[i++] = Int64GetDatum((int64) s.rejected);
		values[i++] = Int64GetDatum((int64) s.abandoned);
		values[i++] = Int64GetDatum((int64) s.overcommitted);
		values[i++] = Int64GetDatum((int64) s.escapes);
		values[i++] = Int32GetDatum((int32) s.stuck);
		values[i++] = Float8GetDatum(s.total_wait_us / 1000.0);
		values[i++] = Float8GetDatum(s.max_wait_us / 1000.0);
		values[i++] = Float8GetDatum(s.queued > 0 ?
									 s.total_wait_us / 1000.0 / s.queued : 0.0);
		values[i++] = TimestampTzGetDatum(s.reset_time);
		values[i++] = Int32GetDatum(s.lingering);
		values[i++] = Int64GetDatum((int64) s.resumed);
		values[i++] = Float8GetDatum(s.turn_budget_us / 1000.0);
		nulls[i - 1] = s.turn_budget_us == 0;
		values[i++] = BoolGetDatum(s.auto_on);
		i += put_auto_inputs(&s, values + i, nulls + i);
		Assert(i == STATUS_COLS);
		result_put(&result, values, nulls);
	}
	return (Datum) 0;
}

/*
 * A monotonic instant as the wall-clock time users read: now on the wall
 * clock minus how long ago it was.
 */
static TimestampTz
pcc_time_to_wall(PccTime t)
{
	return GetCurrentTimestamp() - (pcc_now() - t);
}

/* One row of backends(); ticket and turn are NULL when zero. */
static void
put_backend_row(PccResult *result, int pid, PccGateId id,
				const char *state, TimestampTz since, uint64 ticket,
				uint64 turn, PccPriority priority)
{
	Datum		values[BACKENDS_COLS];
	bool		nulls[BACKENDS_COLS] = {0};
	char		name[PCC_GROUP_LABEL_LEN];

	/* a group's place freed since the slot was read */
	if (!gate_listed(id, name))
		return;
	values[0] = Int32GetDatum(pid);
	values[1] = CStringGetTextDatum(name);
	values[2] = CStringGetTextDatum(state);
	values[3] = TimestampTzGetDatum(since);
	values[4] = Int64GetDatum((int64) ticket);
	nulls[4] = ticket == 0;
	values[5] = Int64GetDatum((int64) turn);
	nulls[5] = turn == 0;
	values[6] = CStringGetTextDatum(pcc_priority_name(priority));
	result_put(result, values, nulls);
}

/* pg_concurrency_control_backends(): who holds, keeps or waits for a slot. */
Datum
pg_concurrency_control_backends(PG_FUNCTION_ARGS)
{
	PccResult	result;

	pcc_require_shared();
	result_begin(fcinfo, &result, backends_columns, BACKENDS_COLS);

	for (int i = 0; i < pcc_shared->nbackends; i++)
	{
		PccBackend *be = &pcc_shared->backends[i];
		int			pid = be->pid;
		uint32		held;
		int			linger_gate;
		int			queue_gate;

		if (pid == 0)
			continue;
		held = pg_atomic_read_u32(&be->held);
		for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
			if (held & (1U << id))
				put_backend_row(&result, pid, id, "running", be->held_since[id],
								be->held_ticket[id], be->held_turn[id],
								be->held_priority[id]);
		linger_gate = be->linger_gate;
		if (linger_gate != PCC_NO_GATE)
			put_backend_row(&result, pid, linger_gate, "lingering",
							pcc_time_to_wall(be->turn_start[linger_gate]),
							be->held_ticket[linger_gate],
							be->held_turn[linger_gate],
							be->held_priority[linger_gate]);
		queue_gate = be->queue_gate;
		if (queue_gate != PCC_NO_GATE &&
			pg_atomic_read_u32(&be->status) == PCC_WAIT_QUEUED)
			put_backend_row(&result, pid, queue_gate, "waiting",
							pcc_time_to_wall(be->queue_since),
							be->queue_ticket, 0,
							be->queue_priority);
	}
	return (Datum) 0;
}

/* pg_concurrency_control_reset(): zero the totals (not running/waiting). */
Datum
pg_concurrency_control_reset(PG_FUNCTION_ARGS)
{
	TimestampTz now = GetCurrentTimestamp();

	pcc_require_shared();
	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
		pcc_gate_reset_stats(pcc_gate(id), now);
	PG_RETURN_VOID();
}

static void
put_problem(PccResult *result, const char *gate, const char *problem)
{
	Datum		values[CHECK_COLS];
	bool		nulls[CHECK_COLS] = {0};

	values[0] = CStringGetTextDatum(gate);
	values[1] = CStringGetTextDatum(problem);
	result_put(result, values, nulls);
}

/*
 * pg_concurrency_control_check(): one row per broken invariant, none when
 * all is well.  The queue checks hold at any moment; the counting checks
 * compare numbers updated one after the other, so they are exact only
 * while no session is being admitted or released.
 */
Datum
pg_concurrency_control_check(PG_FUNCTION_ARGS)
{
	PccResult	result;

	pcc_require_shared();
	result_begin(fcinfo, &result, check_columns, CHECK_COLS);

	for (int id = 0; id < PCC_NUM_GATE_IDS; id++)
	{
		GateSnapshot s;
		GateLists	l;
		uint32		holders = 0;
		char		name[PCC_GROUP_LABEL_LEN];

		if (!gate_listed(id, name))
			continue;
		walk_gate_lists(id, &l);
		snapshot_gate(id, &s);
		for (int i = 0; i < pcc_shared->nbackends; i++)
			if (pg_atomic_read_u32(&pcc_shared->backends[i].held) & (1U << id))
				holders++;

		if (l.queue_length != (int) l.waiting)
			put_problem(&result, name, psprintf("queue holds %d backends but waiting is %u",
											 l.queue_length, l.waiting));
		if (!l.queue_consistent)
			put_problem(&result, name, "a queued backend is not marked as queued on this gate in its class");
		if (!l.lingering_consistent)
			put_problem(&result, name, "the lingering list does not match the backends keeping a slot");
		if (holders + s.lingering != s.running)
			put_problem(&result, name, psprintf("%u backends hold a slot and %d keep one but running is %u",
											 holders, s.lingering, s.running));
		if (s.admitted - s.released != s.running)
			put_problem(&result, name, psprintf("admitted - released = " UINT64_FORMAT " but running is %u",
											 s.admitted - s.released, s.running));
		if (s.waiting > 0 && s.limit != PCC_UNLIMITED &&
			s.running - Min(s.running, s.stuck) < s.limit)
			put_problem(&result, name, psprintf("%u waiting while only %u of %u slots are in use",
											 s.waiting, s.running, s.limit));
	}
	return (Datum) 0;
}

/* pg_concurrency_control_config_loaded(): when the worker last applied it. */
Datum
pg_concurrency_control_config_loaded(PG_FUNCTION_ARGS)
{
	pcc_require_shared();
	PG_RETURN_TIMESTAMPTZ((TimestampTz)
						  pg_atomic_read_u64(&pcc_shared->config_loaded));
}

/*
 * pg_concurrency_control_auto_simulate(unloaded_ms[], knee[], auto_min,
 * auto_max, start, client_ms, hidden_ms, demand, sessions, lull_steps,
 * lull_demand, idle_holders): run the
 * adaptive limit's controller against a model server, one row per
 * PCC_AUTO_INTERVAL_MS step, to test and explain it.
 * In step i the model serves up to knee[i] holders at once in unloaded_ms[i]
 * each; more holders share that capacity, so their service time grows in
 * proportion.  demand sessions want a slot at once (0: always more than
 * the limit, so that sessions wait); the gate is saturated when they
 * occupy every slot, and then sessions queue.  With sessions > 0 (and a
 * demand) the model has turns: a queue keeps itself, every slot held, while
 * the limit is below the sessions over SIM_QUEUE_KEEPS (a holder keeps its
 * slot while others wait); while nobody queues, all the sessions run
 * (their clients' round trips, parsing) and count as holders for
 * hidden_ms below.  Each holder
 * also spends client_ms of its hold waiting for its client, loading
 * nothing; the controller's service time leaves that out, as it does live.
 * Each holder past the knee adds hidden_ms to every hold outside the
 * service time (as runnable backends take CPU from clients on the same
 * machine): throughput falls past the knee while service time does not
 * show why.  A negative hidden_ms is a gain service time does not show:
 * each holder past the knee shortens every hold by that much (holders that
 * wait for a CPU overlap their clients' round trips), down to half its
 * service time, so throughput still rises where service time says stop.
 * For the first lull_steps steps only lull_demand sessions (at least
 * one) want a slot, as while a thousand backends re-read the
 * configuration after a reload; demand after.  idle_holders of the
 * holders (of the limit, when sessions queue) are idle in transaction:
 * they count as running and complete nothing.
 */
Datum
pg_concurrency_control_auto_simulate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *unloaded_arr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *knee_arr = PG_GETARG_ARRAYTYPE_P(1);
	int32		auto_min = PG_GETARG_INT32(2);
	int32		auto_max = PG_GETARG_INT32(3);
	int32		start = PG_GETARG_INT32(4);
	float8		client_ms = PG_GETARG_FLOAT8(5);
	float8		hidden_ms = PG_GETARG_FLOAT8(6);
	int32		demand = PG_GETARG_INT32(7);
	int32		sessions = PG_GETARG_INT32(8);
	int32		lull_steps = PG_GETARG_INT32(9);
	int32		lull_demand = PG_GETARG_INT32(10);
	int32		idle_holders = PG_GETARG_INT32(11);
	bool		queued = false;
	Datum	   *unloaded;
	Datum	   *knee;
	int			nunloaded;
	int			nknee;
	PccAutoState st;
	PccAutoSample pending = {0};
	double		interval_s = PCC_AUTO_INTERVAL_MS / 1000.0;
	PccTime		now = 1;		/* 0 would mean "not probing" */

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != SIMULATE_COLS)
		elog(ERROR, "incorrect number of output arguments");
	if (ARR_NDIM(unloaded_arr) > 1 || ARR_NDIM(knee_arr) > 1 ||
		array_contains_nulls(unloaded_arr) || array_contains_nulls(knee_arr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unloaded_ms and knee must be one-dimensional arrays without nulls")));
	deconstruct_array(unloaded_arr, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &unloaded, NULL, &nunloaded);
	deconstruct_array(knee_arr, INT4OID, sizeof(int32), true, TYPALIGN_INT,
					  &knee, NULL, &nknee);
	if (nunloaded != nknee)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unloaded_ms has %d elements but knee has %d", nunloaded, nknee),
				 errdetail("Each step needs one of each.")));
	if (auto_min < 1 || auto_max < 1 || start < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("auto_min, auto_max and start must be at least 1")));
	if (demand < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("demand must not be negative"),
				 errhint("Use 0 for more sessions than any limit.")));
	if (lull_steps < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lull_steps must not be negative")));
	if (lull_steps > 0 && lull_demand < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lull_demand must be at least 1 when lull_steps is not 0"),
				 errdetail("For the first lull_steps steps, only lull_demand sessions run.")));
	if (idle_holders < 0 ||
		(demand > 0 && idle_holders > demand) ||
		(lull_steps > 0 && idle_holders > lull_demand))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idle_holders must not be negative nor exceed demand or lull_demand"),
				 errdetail("Sessions idle in transaction are among those that want a slot.")));
	if (sessions < 0 || (sessions > 0 && sessions < Max(demand, lull_demand)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sessions must be 0 or at least demand"),
				 errhint("Use 0 for a model without turns.")));
	if (!(client_ms >= 0) || isinf(client_ms) || isnan(hidden_ms) ||
		isinf(hidden_ms))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("client_ms must be finite and not negative, hidden_ms finite")));

	pcc_auto_start(&st, (uint32) start, (uint32) auto_min, (uint32) auto_max, now);
	for (int step = 0; step < nunloaded; step++)
	{
		double		base_ms = DatumGetFloat8(unloaded[step]);
		int32		capacity = DatumGetInt32(knee[step]);
		uint32		limit = (uint32) rint(st.limit);
		uint32		holders;
		uint32		busy;		/* holders not idle in transaction */
		uint32		runnable;	/* sessions counted for hidden_ms */
		PccAutoSample s;
		Datum		values[SIMULATE_COLS];
		bool		nulls[SIMULATE_COLS] = {0};
		double		service_us;
		double		at_server;
		double		hold_us;
		double		done;
		int32		wanting = step < lull_steps ? lull_demand : demand;

		CHECK_FOR_INTERRUPTS();
		if (!(base_ms >= SIM_MIN_UNLOADED_MS) || isinf(base_ms))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("step %d: unloaded_ms must be finite and at least %g",
							step + 1, SIM_MIN_UNLOADED_MS),
					 errdetail("A step's completions must fit a 64-bit count.")));
		if (capacity < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("step %d: knee must be at least 1", step + 1)));
		queued = wanting == 0 || (uint32) wanting >= limit ||
			(queued && (uint64) limit * SIM_QUEUE_KEEPS < (uint64) sessions);
		holders = queued ? limit : (uint32) wanting;
		busy = holders > (uint32) idle_holders ? holders - idle_holders : 0;
		runnable = sessions > 0 && !queued ? Max(busy, (uint32) sessions) :
			busy;
		/* past the knee, holders at the server share it */
		at_server = busy * base_ms / (base_ms + client_ms);
		service_us = 1000.0 * (at_server <= capacity ? base_ms :
							   base_ms * busy / capacity - client_ms);
		hold_us = service_us + 1000.0 * (client_ms +
										 hidden_ms * Max(0, (int32) runnable - capacity));
		done = rint(busy * interval_s * 1e6 / Max(hold_us, service_us / 2));
		/* what this interval brought, added to what is not consumed yet */
		s.seconds = pending.seconds + interval_s;
		s.done = pending.done + (uint64) done;
		s.service_us = pending.service_us + service_us * done;
		s.running = holders;
		s.saturated = queued;
		s.yield = false;
		s.held = false;
		now = pcc_time_plus_ms(now, PCC_AUTO_INTERVAL_MS);
		if (pcc_auto_step(&st, &s, (uint32) auto_min, (uint32) auto_max, now))
			memset(&pending, 0, sizeof(pending));
		else
			pending = s;

		values[0] = Int32GetDatum(step + 1);
		values[1] = Int32GetDatum((int32) limit);
		values[2] = Float8GetDatum(service_us / 1000.0);
		values[3] = Float8GetDatum(done / interval_s);
		values[4] = Float8GetDatum(st.baseline_us / 1000.0);
		values[5] = Int32GetDatum((int32) rint(st.limit));
		values[6] = BoolGetDatum(st.probe_since != 0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
