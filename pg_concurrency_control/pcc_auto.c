/*-------------------------------------------------------------------------
 *
 * pcc_auto.c
 *	  Adaptive limits: a gate whose limit is set to -1 (auto) tunes it.
 *
 * Holders report, when they give a slot back, how long they held it (the
 * service time, excluding the wait for the slot and the waits for their
 * client between statements): two atomic additions, and only on auto
 * gates.  Every PCC_AUTO_INTERVAL_MS the watchdog compares the interval's
 * mean service time with the baseline, the service time of unloaded work,
 * as TCP Vegas and Netflix's concurrency-limits do with round-trip times:
 * while work runs less than three times as slow as unloaded and the gate
 * is saturated, the limit grows by a tenth; once it runs more than four
 * times as slow, the limit shrinks by a tenth; in between it holds; always
 * within [auto_min, auto_max].
 *
 * The baseline is the lowest service time seen, and it is measured afresh
 * at low concurrency so that it can also rise after the workload changes:
 * whenever the limit sits at auto_min, and by a probe that holds the limit
 * at auto_min until the running work has drained to it, takes one
 * interval's service time as the new baseline and restores the limit.  A
 * probe runs when the controller starts, every PCC_AUTO_PROBE_EVERY_MS
 * while the gate is saturated, when service time doubles or halves at a
 * steady limit for two intervals, and after a higher trial drained a
 * queue that was faster (below); after probes that gave up (the work did
 * not drain to auto_min in time), none but the last kind runs before a
 * gap that doubles (PROBE_BACKOFF_MAX_MS).  A probe after such a jump whose
 * baseline moved as much from both probes before it shows that the work
 * changed: the trials below start afresh (else the jump was holders
 * waiting for a CPU or for locks, and the gap before the next probe for a
 * jump doubles: see PROBE_GAP_MS).
 *
 * Service time does not see everything that more holders cost: a woken
 * backend's wait for a CPU, the CPU that runnable backends take from
 * clients on the same machine, the wake-ups of a queue.  So throughput has
 * the last word: trials alternate, interval by interval, between the
 * limit and half of it, or twice it (the limit times the square root of
 * two after a lost trial, over it after two lost in a row; from the limit
 * a tie left, the limit the tie came from), and compare the throughput of
 * both.  The lower limit is kept unless it is worse, the higher only if it
 * is measurably better (by a margin, and beyond the noise of the trial's
 * pairs of intervals, except from the limit a tie left, see from_tie, and
 * where it drained the queue, see judge_drained_trial); an other limit
 * clearly worse after a few pairs ends the trial at once, as does a lower
 * one clearly better, kept (decided_early).
 * The verdict is the ceiling the band may grow the limit to, and a kept
 * higher limit is also the floor it may shrink to (holders that wait for a
 * CPU run slower, yet overlap their clients' round trips: service time
 * rises while throughput still does).  A kept limit is tried again at once
 * the same way, and resets the gaps below (but for a drained queue's); so
 * does a limit the band has grown by BAND_GROWTH without raising
 * throughput (a lower trial at once).  A way that lost is tried again
 * after a gap that doubles while it loses, from twice TRIAL_GAP_MS up to
 * TRIAL_GAP_MAX_MS: at the knee every trial costs (with turns, twice the
 * best limit can run at two thirds of its throughput).  A higher limit is
 * also tried at once after a lost lower one (the knee is not below); after
 * a lost higher one, any trial waits TRIAL_GAP_MS.  The first trial starts
 * at the first clean interval after the first probe, of half the limit the
 * controller starts from (twice it at auto_min, if the gate is saturated),
 * and the band holds the limit until that trial ends
 * (first_trial_pending); a lower one lost there leaves the band to go on
 * first, and the higher trial waits TRIAL_GAP_MS (plan_next_trial).
 * Alternating cancels the slow drift of a noisy machine.  A gate that is
 * not saturated runs lower trials only: a limit that binds can be faster
 * there (fewer backends switch, and with turns a warm backend runs its
 * session's next work), and a lower limit that stays unsaturated is a tie
 * that ends its trial early (walk_down).  A higher trial after which
 * neither limit binds anybody has drained the queue, which with turns
 * keeps itself: the base's first interval without it says which is
 * faster.  If the queue was, as it often is (a warm backend runs its
 * session's next work), the trial has lost and a probe forms the queue
 * again; if not, the higher limit is kept, and lower trials wait as after
 * a lost one.  Work completing fewer than TRIAL_MIN_RATE times a second,
 * and a yielding gate, run no trials; a lull (an interval with fewer than
 * MIN_SAMPLES completions, whose time the next sample spans) cuts a trial
 * short, unjudged, as does an interval of a trial that runs long without
 * a sample, which loses it at a lower trial's lower limit where the gate
 * is full (trial_interrupted).
 *
 * Each gate's controller sees only its own work's slowdown, and a burst
 * of big queries slows the other gates' work more than its own.  So the
 * bigquery gate, when auto, yields: while the work of another auto gate
 * runs past that gate's band, or that gate's baseline has risen to
 * SHIFT_FACTOR times the lowest of the last FLOOR_WINDOW_MS or two
 * (something else loads the server), its limit shrinks by a step every
 * interval and never grows, nor for YIELD_HOLD_MS after.  The price falls
 * on big queries alone: after a real change of the other work, they stay
 * held down until the old floor is forgotten.
 *
 * The controller's state is written only by the watchdog (or, for the
 * simulation function, in local memory); the status function reads it
 * racily.  With log_auto on, the watchdog logs each probe, each trial's
 * verdict and each lower trial the band's growth started (the model logs
 * nothing).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "utils/timestamp.h"

#include "pcc_auto.h"

/* Fewer completions than this make no sample: keep accumulating. */
#define MIN_SAMPLES			8

/* Longest a probe may take to drain before it gives up. */
#define PROBE_MAX_MS		2000

/*
 * A probe given up held the gate at auto_min for PROBE_MAX_MS for nothing,
 * and one given up will be again where holders never drain to auto_min
 * (sessions idle in transaction, reports that run for minutes) or finish
 * too seldom there to be measured (holds of a few hundred milliseconds):
 * every PCC_AUTO_PROBE_EVERY_MS, or at each jump of service time, the
 * gate would stall.  After each probe given up, the least time before the
 * next probe for the baseline (periodic or for a jump; not one that forms
 * a queue again) doubles, from twice PCC_AUTO_PROBE_EVERY_MS up to this;
 * a measured probe, or a new auto_min, ends the backoff.
 */
#define PROBE_BACKOFF_MAX_MS	(16 * PCC_AUTO_PROBE_EVERY_MS)

/*
 * Service time over the baseline between which the limit holds.  Below
 * the knee, service time stays near the baseline; past it, every holder
 * added only adds to everyone's service time.  The band sits well above 1
 * because throughput still grows while service time rises: holders wait
 * for their clients between statements, and a backend woken by its
 * client's next message waits for a CPU; the more holders, the more of
 * that the others overlap.  Measured on TPC-B and simple-update at 1024
 * and 2048 connections, a band of 2-2.5 settled at limits of 7-11 where
 * 16-32 ran 10-20% faster, and no static limit above the best lost more
 * than a few per cent: stopping short costs more than going past.
 */
#define GROW_BELOW			3.0
#define SHRINK_ABOVE		4.0

/* The limit moves by this fraction of itself, and at least by one. */
#define STEP_FRACTION		0.1

/*
 * Service time growing or shrinking this much for two intervals at a
 * steady limit is a jump (probe), a baseline this far from both probes'
 * before it a change of work, and another gate's baseline this far above
 * its floor makes big queries yield.
 */
#define SHIFT_FACTOR		2.0

/*
 * Least time between the end of a probe and a probe for a jump of service
 * time, at first.  Work that waits for locks or CPUs jumps by twice and
 * back every second or two, and each such probe holds the limit at
 * auto_min to find the baseline where it was.  While probes after jumps
 * find the work unchanged (measured, with two probes before to compare),
 * the gap doubles, up to PROBE_GAP_MAX_MS; a probe given up leaves it
 * (and holds back probes for the baseline, PROBE_BACKOFF_MAX_MS).  A
 * jump within the gap makes no probe, but the next probe, the periodic one
 * at the latest, judges whether the work changed, as a probe for it does.
 * The gap is back at PROBE_GAP_MS once a probe finds the work changed, or
 * starts with no jump since the last one began: the work no longer
 * swings.  A jump within PROBE_GAP_MS of a probe's end counts for nothing:
 * it is the limit the probe restored, compared with the probe's own
 * interval at auto_min.
 */
#define PROBE_GAP_MS		1000
#define PROBE_GAP_MAX_MS	PCC_AUTO_PROBE_EVERY_MS

/* A baseline's floor remembers the lowest of this window and the last. */
#define FLOOR_WINDOW_MS		30000

/* Another gate's measurement older than this is stale unless it has waiters. */
#define FRESH_MS			1000

/* Big queries stay held down this long after other work last suffered. */
#define YIELD_HOLD_MS		1000

/*
 * Throughput trials: intervals at each of the two limits; the pause after
 * a lost higher trial (or one cut short), from which the gaps before a
 * way that keeps losing double, and their most; and how much better a
 * higher limit must be to be kept (a lower one is kept unless worse: the
 * same throughput with fewer holders is lower latency).
 */
#define TRIAL_PAIRS			10
#define TRIAL_GAP_MS		3000
#define TRIAL_GAP_MAX_MS	24000
/*
 * Completions per second below which no trial runs: too few per interval
 * to compare, and work that slow is not what wake-ups and switches hurt.
 */
#define TRIAL_MIN_RATE		1000
#define TRIAL_HIGHER_MARGIN 0.03

/*
 * A higher limit must also be better beyond the trial's noise: each pair
 * of intervals (base, then other) gives ln(rate at other / rate at base),
 * and their mean must exceed this many standard errors of it.  Pairs
 * cancel most of the machine's drift; their spread is its noise, which on
 * a busy small VM is often larger than the margin (standard errors of
 * 3-10%).  A kept higher limit is also the floor, so one kept by chance
 * binds until the next trial.  Not from the limit a tie left (from_tie).
 */
#define TRIAL_HIGHER_SE		2.0

/*
 * A trial ends at once, lost, when from its TRIAL_EARLY_PAIRS-th pair on
 * the other limit has run more than TRIAL_EARLY_LOSS slower than the base
 * and its pairs' mean stays below zero by the one-sided 97.5% quantile of
 * Student's t times its standard error (few pairs estimate their spread
 * poorly: simulated at this machine's noise of 0.10-0.16 per pair, a
 * factor of 2 and a 10% loss end an equal limit's trial early in 3-11% of
 * trials; t and 15%, in 0.1-2%, and 85-94% of those of a limit 18% slower
 * after 4-5 pairs).  Live, a lower limit below the knee or a higher one
 * past it cost 15-37% while they ran; the rest of a full trial only pays
 * longer.  Not in a trial's last pair (the full verdict), nor where the
 * higher limit may have drained the queue (judge_drained_trial decides).
 * A version that ended trials a fifth worse after three pairs, without
 * the noise, cost simple-update 5-7% (docs/performance.md).  The mirror
 * keeps a lower limit that ran faster by as much: it would be kept at the
 * full verdict unless worse, and live, halving trials from above the knee
 * won by 15-34% (each 2 s of a 15 s phase at a thousand connections).
 * Not a higher one: a kept higher limit is also the floor, and needs the
 * whole trial's evidence.
 */
#define TRIAL_EARLY_PAIRS	3
#define TRIAL_EARLY_LOSS	0.15

/*
 * One-sided 97.5% quantiles of Student's t, by degrees of freedom:
 * decided_early looks up TRIAL_PAIRS - 2 at the most.
 */
static const double t_975[] =
{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262};

StaticAssertDecl(lengthof(t_975) >= TRIAL_PAIRS - 1,
				 "t_975 must cover every pair decided_early looks at");

/*
 * How much faster the base must run once a higher trial has drained the
 * queue than it ran with the queue, for the higher limit to be kept
 * (judge_drained_trial).  With turns a queue keeps itself, and which
 * regime is faster depends on the load: at a thousand connections the
 * queue (a warm backend runs its session's next work at once), at four
 * thousand often the base without it (each hand-off wakes a cold backend,
 * and the clients reply slower than the queue moves).  One interval
 * against a few, unpaired: more than TRIAL_HIGHER_MARGIN, as intervals at
 * thousands of connections vary by a tenth or more.
 */
#define TRIAL_DRAINED_MARGIN 0.1

/*
 * An interval of a trial that has run this long without a sample (fewer
 * than MIN_SAMPLES completions, where a trial needs TRIAL_MIN_RATE) ends
 * the trial: see trial_interrupted.
 */
#define TRIAL_STALL_MS		(3 * PCC_AUTO_INTERVAL_MS)

/* Pairs after which a lower limit never saturated is a tie (walk_down). */
#define TRIAL_UNREACHED_PAIRS 2

/*
 * A trial compares the limit with half or twice it until one is lost;
 * then, until a trial is kept, a higher trial compares it with the limit
 * times TRIAL_RATIO_NEAR, and after two lost in a row (the knee is near)
 * a lower one with the limit over it.  A closer limit costs less while it
 * is tried and loses, and a knee between powers of two is found.  Higher
 * trials go near first because the band errs upwards: a knee far above a
 * limit that lost no trial is rare, and twice a limit just past the knee
 * can cost half the throughput while it is tried (select-only with turns
 * at a thousand connections; decided_early now cuts that short).  Ties walk
 * down, not the band: above the limit they left, a trial goes back to
 * where they came from (other_limit).
 */
#define TRIAL_RATIO_FAR		2.0
#define TRIAL_RATIO_NEAR	M_SQRT2

/*
 * The band growing the limit this much without raising throughput runs a
 * lower trial at once (band_grew).  Less would take the noise of single
 * intervals for a verdict; twice would not be reached under an auto_max
 * of 64 from 35, where simple-update's band started when it still moved
 * the limit before the first trial.
 */
#define BAND_GROWTH			M_SQRT2

/*
 * The gate whose controller the watchdog steps now, while log_auto is on;
 * NULL otherwise, and always in the model.
 */
static const char *logging_gate = NULL;

#define auto_log(fmt, ...) \
	do { \
		if (logging_gate != NULL) \
			ereport(LOG, \
					(errmsg("pg_concurrency_control: %s gate: " fmt, \
							logging_gate, __VA_ARGS__))); \
	} while (0)

static double
clamp_limit(double limit, uint32 min, uint32 max)
{
	return Max((double) min, Min((double) Max(min, max), limit));
}

/*
 * A probe: hold the limit at auto_min until the work has drained to it.
 * why says what called it, for the log.  After a jump of service time
 * since the last probe began, it judges whether the work changed; with
 * none, the work no longer swings, and a jump may make a probe again at
 * once (PROBE_GAP_MS).
 */
static void
start_probe(PccAutoState *st, uint32 min, PccTime now, const char *why)
{
	auto_log("limit held at %u (was %.0f) to measure the baseline: %s",
			 min, st->limit, why);
	st->probe_saved_limit = st->limit;
	st->probe_since = now;
	if (!st->jump_seen)
		st->jump_gap_ms = PROBE_GAP_MS;
	st->probe_for_jump = st->jump_seen;
	st->jump_seen = false;
	st->limit = min;
}

/*
 * The band starts afresh: the next interval that is no probe's or trial's
 * tail gives the limit it grows from, and that limit's throughput.
 */
static void
band_starts(PccAutoState *st)
{
	st->band_from_rate = 0;
}

/*
 * Start the controller: it goes on from the given limit once a first probe
 * has measured the baseline, with a first trial (first_trial_pending).
 */
void
pcc_auto_start(PccAutoState *st, uint32 limit, uint32 min, uint32 max,
			   PccTime now)
{
	memset(st, 0, sizeof(*st));
	st->limit = clamp_limit(limit, min, max);
	st->ceiling = max;
	st->trial_floor = min;
	st->bounds_min = min;
	st->bounds_max = max;
	st->trial_down = true;
	st->next_trial = now;
	st->down_gap_ms = TRIAL_GAP_MS;
	st->up_gap_ms = TRIAL_GAP_MS;
	start_probe(st, min, now, "the controller starts");
}

/* A new baseline; the floor keeps the lowest of the last window or two. */
static void
set_baseline(PccAutoState *st, double us, PccTime now)
{
	st->baseline_us = us;
	if (st->floor_since != 0 &&
		!pcc_time_exceeds(st->floor_since, now, FLOOR_WINDOW_MS))
		st->floor_us = Min(st->floor_us, us);
	else
	{
		bool		last_window = st->floor_since != 0 &&
			!pcc_time_exceeds(st->floor_since, now,
										2 * FLOOR_WINDOW_MS);

		st->floor_prev_us = last_window ? st->floor_us : us;
		st->floor_us = us;
		st->floor_since = now;
	}
}

/*
 * The next trial goes this way at once, as far as at first, and either way
 * is due again.
 */
static void
trial_at_once(PccAutoState *st, bool lower, PccTime now)
{
	st->trial_down = lower;
	st->trials_lost = 0;
	st->next_trial = now;
	st->down_gap_ms = TRIAL_GAP_MS;
	st->up_gap_ms = TRIAL_GAP_MS;
	st->next_down_trial = now;
	st->next_up_trial = now;
}

/*
 * The probe is over: measured (the baseline is set) or given up.  A probe
 * for a jump of service time whose baseline moved as much from both probes
 * before it shows that the work changed: the trials before measured other
 * work, and either way is due at once, higher first.  A baseline that did
 * not move leaves the jump to holders that waited for a CPU, as happens
 * often at a thousand connections: the trials' gaps stay, or every such
 * jump would try twice the limit again.  The next probe for a jump then
 * waits twice as long (PROBE_GAP_MS).  Two probes, not one: the first
 * after a start can measure woken backends' waits for a CPU.
 */
static void
end_probe(PccAutoState *st, bool measured, uint32 min, uint32 max,
		  PccTime now)
{
	double		low = Min(st->probed_us[0], st->probed_us[1]);
	double		high = Max(st->probed_us[0], st->probed_us[1]);
	bool		judged = measured && st->probe_for_jump && low > 0;
	bool		changed = judged &&
		(st->baseline_us > SHIFT_FACTOR * high ||
		 st->baseline_us * SHIFT_FACTOR < low);

	st->limit = clamp_limit(st->probe_saved_limit, min, max);
	st->probe_since = 0;
	st->probe_ended = now;
	st->probe_backoff_ms = measured ? 0 :
		Min(Max(2 * st->probe_backoff_ms, 2 * PCC_AUTO_PROBE_EVERY_MS),
			PROBE_BACKOFF_MAX_MS);
	st->next_probe = pcc_time_plus_ms(now, Max(PCC_AUTO_PROBE_EVERY_MS,
											   st->probe_backoff_ms));
	if (changed)
		st->jump_gap_ms = PROBE_GAP_MS;
	else if (judged)
	{
		st->jump_gap_ms = Min(2 * st->jump_gap_ms, PROBE_GAP_MAX_MS);
		auto_log("jumps of service time, the same work: the next probe for one waits %d ms",
				 st->jump_gap_ms);
	}
	if (!measured)
		auto_log("running work did not drain to %u within %d ms, limit back to %.0f; no probe for the baseline for %d ms",
				 min, PROBE_MAX_MS, st->limit, st->probe_backoff_ms);
	else if (changed)
	{
		auto_log("baseline %.3f ms (%.3f and %.3f ms at the probes before): the work changed, trials at once; limit back to %.0f",
				 st->baseline_us / 1000.0, st->probed_us[1] / 1000.0,
				 st->probed_us[0] / 1000.0, st->limit);
		trial_at_once(st, false, now);
	}
	else
		auto_log("baseline %.3f ms, limit back to %.0f",
				 st->baseline_us / 1000.0, st->limit);
	if (measured)
	{
		st->probed_us[1] = st->probed_us[0];
		st->probed_us[0] = st->baseline_us;
	}
	st->probe_for_jump = false;
}

/*
 * Grow while admitted work runs less than GROW_BELOW times slower than
 * unloaded work and the gate is saturated; shrink once it runs more than
 * SHRINK_ABOVE times slower; within what the trials allow.
 */
static void
adjust_limit(PccAutoState *st, const PccAutoSample *s, uint32 min, uint32 max)
{
	double		limit = st->limit;
	double		slowdown = st->service_us / st->baseline_us;
	double		step = Max(1.0, limit * STEP_FRACTION);

	st->grew = false;
	if (slowdown > SHRINK_ABOVE)
		limit = Max(limit - step, Min(limit, st->trial_floor));
	else if (slowdown < GROW_BELOW && s->saturated && limit < st->ceiling)
	{
		limit = Min(limit + step, st->ceiling);
		st->grew = true;
	}
	st->limit = clamp_limit(limit, min, max);
}

/*
 * The band has grown the limit by BAND_GROWTH since band_from (no
 * trial set a ceiling below).  Service time alone took it there, and it
 * misses much of what more holders cost.  If throughput did not rise with
 * it (band_from's interval against the last one), try half of it at once,
 * rather than run at the guess until the next trial is due: live,
 * simple-update at a thousand connections went from 32 to 64 within a
 * second of a start (when the band still moved the limit before the first
 * trial), where 32 ran 20-35% faster.  Where throughput rose, the band is
 * right, and a trial would only cost.
 */
static void
band_grew(PccAutoState *st, PccTime now)
{
	if (st->throughput <= st->band_from_rate * (1 + TRIAL_HIGHER_MARGIN))
	{
		auto_log("limit %.0f set by service time alone (from %.0f): %.0f releases/s against %.0f, a lower trial at once",
				 st->limit, st->band_from, st->throughput, st->band_from_rate);
		trial_at_once(st, true, now);
	}
	band_starts(st);
}

/*
 * After a clean interval, run at ran_at: the first since band_starts gives
 * the band its reference; a later one, once the band has grown the limit
 * by BAND_GROWTH, is compared with it (never the same interval).
 */
static void
watch_band(PccAutoState *st, double ran_at, PccTime now)
{
	if (st->band_from_rate <= 0)
	{
		st->band_from = ran_at;
		st->band_from_rate = st->throughput;
	}
	else if (st->throughput >= TRIAL_MIN_RATE &&
			 st->limit >= BAND_GROWTH * st->band_from)
		band_grew(st, now);
}

/*
 * A way has lost: its next trial waits twice its last gap (last_gap_ms),
 * at most TRIAL_GAP_MAX_MS.  gap_ms and next are that way's gap and due
 * time.
 */
static void
wait_after_loss(int *gap_ms, PccTime *next, int last_gap_ms, PccTime now)
{
	*gap_ms = Min(2 * last_gap_ms, TRIAL_GAP_MAX_MS);
	*next = pcc_time_plus_ms(now, *gap_ms);
}

/*
 * After a trial was measured: on the way a kept limit went, at once; after
 * a lost lower one, higher at once (the knee is not below), but with
 * band_first (the first trial's: first_trial_pending) the band goes on
 * first and the higher trial waits TRIAL_GAP_MS; after a lost higher one,
 * lower first when both are due.  The gap before the next trial of a way
 * that lost doubles.
 */
static void
plan_next_trial(PccAutoState *st, bool lower, bool keep, bool band_first,
				PccTime now)
{
	if (keep)
		trial_at_once(st, lower, now);
	else if (lower)
	{
		wait_after_loss(&st->down_gap_ms, &st->next_down_trial,
						st->down_gap_ms, now);
		st->trial_down = false;
		st->next_trial = band_first ?
			pcc_time_plus_ms(now, TRIAL_GAP_MS) : now;
		st->next_up_trial = st->next_trial;
	}
	else
	{
		wait_after_loss(&st->up_gap_ms, &st->next_up_trial, st->up_gap_ms,
						now);
		st->trial_down = true;
	}
}

/* Is limit the one the last tie left (walk_down)? */
static bool
is_tie_limit(const PccAutoState *st, double limit)
{
	return st->tie_limit > 0 && rint(limit) == rint(st->tie_limit);
}

/*
 * The limit a trial of base compares it with: half or twice it, or base
 * over TRIAL_RATIO_NEAR once two trials in a row have lost, times it once
 * one has.  Higher than the limit a tie left, the limit the tie came from:
 * a lull can walk the ties far below the knee, and their limit was never
 * measured against a higher one.
 */
static double
other_limit(const PccAutoState *st, double base, bool lower, uint32 min,
			uint32 max)
{
	int			near_after = lower ? 2 : 1;
	double		ratio = st->trials_lost >= near_after ? TRIAL_RATIO_NEAR :
		TRIAL_RATIO_FAR;

	if (!lower && is_tie_limit(st, base))
		return clamp_limit(st->tie_from, min, max);
	return clamp_limit(rint(lower ? base / ratio : base * ratio), min, max);
}

/* Compare the limit with other from the next interval on. */
static void
run_trial(PccAutoState *st, double base, double other)
{
	st->trial_on = true;
	st->trial_base = base;
	st->trial_other = other;
	st->trial_steps = 0;
	st->trial_other_saturated = false;
	st->trial_done[0] = st->trial_done[1] = 0;
	st->trial_seconds[0] = st->trial_seconds[1] = 0;
	st->trial_pair_rate = 0;
	st->trial_npairs = 0;
	st->trial_ln_sum = st->trial_ln_sq = 0;
	st->limit = base;
}

/*
 * Start a throughput trial of the limit against a lower or a higher one,
 * whichever is due and within the bounds (the way planned first when
 * both are).  A gate that is not saturated runs lower trials only: raising
 * a limit nobody reaches changes nothing, but a lower one that binds can
 * be faster (fewer backends switch, and with turns a warm backend runs its
 * session's next work).
 */
static void
start_trial(PccAutoState *st, bool saturated, uint32 min, uint32 max,
			PccTime now)
{
	double		base = rint(st->limit);
	double		lower = other_limit(st, base, true, min, max);
	double		higher = other_limit(st, base, false, min, max);
	bool		down_due = now >= st->next_down_trial && lower < base;
	bool		up_due = saturated && now >= st->next_up_trial && higher > base;

	if (down_due && (st->trial_down || !up_due))
		run_trial(st, base, lower);
	else if (up_due)
		run_trial(st, base, higher);
}

/*
 * The trial's other limit is kept: the band may not grow past it, and a
 * higher one that raised throughput is also the floor, slower service or
 * not.
 */
static void
keep_other(PccAutoState *st, bool lower)
{
	st->ceiling = st->trial_other;
	st->trial_floor = lower ? Min(st->trial_floor, st->trial_other) :
		st->trial_other;
}

/* A trial's completions per second at one of its limits (0: base, 1: other). */
static double
trial_rate(const PccAutoState *st, int i)
{
	return st->trial_done[i] / st->trial_seconds[i];
}

/*
 * Count one interval's rate to its pair: at base it opens the pair, at
 * other it closes it with ln(other / base).
 */
static void
count_pair(PccAutoState *st, int i, double rate)
{
	double		x;

	if (i == 0)
	{
		st->trial_pair_rate = rate;
		return;
	}
	if (st->trial_pair_rate <= 0 || rate <= 0)
		return;
	x = log(rate / st->trial_pair_rate);
	st->trial_npairs++;
	st->trial_ln_sum += x;
	st->trial_ln_sq += x * x;
}

/*
 * The pairs' mean ln(other / base) and its standard error; false with
 * fewer than two pairs.
 */
static bool
pair_stats(const PccAutoState *st, double *mean, double *se)
{
	int			n = st->trial_npairs;
	double		m;
	double		var;

	if (n < 2)
		return false;
	m = st->trial_ln_sum / n;
	var = (st->trial_ln_sq - n * m * m) / (n - 1);
	*mean = m;
	*se = sqrt(Max(var, 0.0) / n);
	return true;
}

/*
 * Is the trial's base the limit a tie left?  Such a limit was never
 * measured against a higher one: it bound nobody for two pairs of
 * intervals, which a lull makes too (a thousand backends re-reading the
 * configuration after a reload empty the queue for a second or two).  It
 * deserves no stronger presumption than the limit tried above it, so that
 * trial needs only the margin.  Once the band, a yield or a reload has
 * moved the limit, the base is no longer the tie's.
 */
static bool
from_tie(const PccAutoState *st)
{
	return is_tie_limit(st, st->trial_base);
}

/* Is the higher limit better by TRIAL_HIGHER_MARGIN overall? */
static bool
higher_by_margin(const PccAutoState *st)
{
	return trial_rate(st, 1) > trial_rate(st, 0) * (1 + TRIAL_HIGHER_MARGIN);
}

/* Is it also better by more than TRIAL_HIGHER_SE standard errors of its pairs? */
static bool
higher_beyond_noise(const PccAutoState *st)
{
	double		mean;
	double		se;

	return pair_stats(st, &mean, &se) && mean > TRIAL_HIGHER_SE * se;
}

/*
 * Has the other limit run more than TRIAL_EARLY_LOSS slower than the base
 * (won: faster by as much in the log, 1 / (1 - TRIAL_EARLY_LOSS) times)
 * over TRIAL_EARLY_PAIRS pairs or more (but not all of them), and beyond
 * their noise?
 */
static bool
decided_early(const PccAutoState *st, bool won)
{
	int			n = st->trial_npairs;
	double		mean;
	double		se;
	double		sign = won ? -1 : 1;

	return n >= TRIAL_EARLY_PAIRS && n < TRIAL_PAIRS &&
		pair_stats(st, &mean, &se) &&
		sign * mean < log(1 - TRIAL_EARLY_LOSS) &&
		sign * mean + t_975[n - 1] * se < 0;
}

/* The same for the log, "none" for a limit that has not run yet. */
static const char *
trial_rate_text(const PccAutoState *st, int i, char *buf, size_t size)
{
	if (st->trial_seconds[i] <= 0)
		return "none";
	snprintf(buf, size, "%.0f", trial_rate(st, i));
	return buf;
}

/*
 * Log the trial's verdict and the limit it leaves, with the throughputs of
 * both limits so far.
 */
static void
log_trial(const PccAutoState *st, const char *verdict, double limit)
{
	char		base_buf[32];
	char		other_buf[32];
	char		pairs_buf[64] = "";
	double		mean;
	double		se;

	if (pair_stats(st, &mean, &se))
		snprintf(pairs_buf, sizeof(pairs_buf),
				 " (pairs: mean %+.1f%%, standard error %.1f%%)",
				 100.0 * (exp(mean) - 1), 100.0 * se);
	auto_log("limit %.0f tried against %.0f for %.1f s: %s releases/s at %.0f, %s at %.0f%s; %s, limit %s %.0f (ceiling %.0f, floor %.0f)",
			 st->trial_other, st->trial_base,
			 st->trial_seconds[0] + st->trial_seconds[1],
			 trial_rate_text(st, 1, other_buf, sizeof(other_buf)), st->trial_other,
			 trial_rate_text(st, 0, base_buf, sizeof(base_buf)), st->trial_base,
			 pairs_buf, verdict, rint(limit) == rint(st->trial_base) ? "stays" : "now",
			 limit, st->ceiling, st->trial_floor);
}

/* Has no trial ended since the controller started? */
static bool
no_trial_yet(const PccAutoState *st)
{
	return st->trial_ended_step == 0;
}

/* The trial is over, or cut short. */
static void
end_trial(PccAutoState *st, double limit, PccTime now)
{
	st->trial_on = false;
	st->limit = limit;
	band_starts(st);
	st->trial_ended_step = st->steps;
	st->next_trial = pcc_time_plus_ms(now, TRIAL_GAP_MS);
}

/*
 * A lower limit that was not saturated at the end of each of its first
 * TRIAL_UNREACHED_PAIRS intervals binds nobody: a tie, which keeps the
 * lower limit without measuring it, and the trials walk on down at once
 * (their gaps and ratio as they were) until a limit binds.  Two readings
 * can miss a burst, or fall in a lull: the limit kept may then bind, and
 * a later trial corrects it (a higher one, back to the limit the tie came
 * from, needs only the margin there).
 */
static void
walk_down(PccAutoState *st, PccTime now)
{
	keep_other(st, true);
	log_trial(st, "it bound nobody: a tie", st->trial_other);
	st->tie_from = st->trial_base;
	end_trial(st, st->trial_other, now);
	st->tie_limit = st->trial_other;
	st->trial_down = true;
	st->next_trial = now;
}

/*
 * The trial is decided: a kept limit is the next trial's base; a loss
 * counts, and after a lost higher trial its base is the band's ceiling.
 * Then plan the next trial.
 */
static void
finish_trial(PccAutoState *st, bool lower, bool keep, const char *verdict,
			 PccTime now)
{
	bool		band_first = lower && !keep && no_trial_yet(st);

	/* a lost lower trial says nothing of the limits above */
	if (keep || !lower)
		st->tie_limit = 0;
	if (keep)
		keep_other(st, lower);
	else
	{
		st->trials_lost++;
		if (!lower)
			st->ceiling = st->trial_base;
	}
	log_trial(st, verdict, keep ? st->trial_other : st->trial_base);
	end_trial(st, keep ? st->trial_other : st->trial_base, now);
	plan_next_trial(st, lower, keep, band_first, now);
}

/*
 * The trial's readings stopped: a sample spans intervals with too few
 * completions (a lull), or one of its intervals has run TRIAL_STALL_MS
 * without a sample (starved, if the gate was full meanwhile).  A rate
 * over a lull says nothing of either limit: the trial ends unjudged.  But
 * a lower trial starved at its lower limit loses, and the next lower one
 * waits: that limit may be what starves the gate (sessions idle in
 * transaction holding its slots), and unjudged, the same trial would come
 * back at once (the first trial lost so leaves the band its turn, as any
 * lost lower first trial does: plan_next_trial).
 */
static void
trial_interrupted(PccAutoState *st, bool starved, PccTime now)
{
	bool		lower = st->trial_other < st->trial_base;
	bool		at_other = st->trial_steps % 2 == 1;

	if (starved && lower && at_other)
		finish_trial(st, true, false, "lost: stalled at the lower limit", now);
	else
	{
		log_trial(st, "cut short by a lull", st->trial_base);
		end_trial(st, st->trial_base, now);
	}
}

/*
 * End a higher trial that has drained the queue (trial_step).  The
 * interval ending now ran at the base without a queue, the base's
 * intervals before it mostly with one: the base faster by
 * TRIAL_DRAINED_MARGIN without it keeps the higher limit, and the next
 * lower trial waits as long as after a lost one (lower limits are what
 * form a queue, which then keeps itself at the base).  Otherwise the
 * trial has lost: returns false for the caller to form the queue again.
 */
static bool
judge_drained_trial(PccAutoState *st, PccTime now)
{
	bool		faster = st->throughput >
		trial_rate(st, 0) * (1 + TRIAL_DRAINED_MARGIN);
	int			down_gap_ms = st->down_gap_ms;	/* before trial_at_once */
	char		verdict[128];

	snprintf(verdict, sizeof(verdict),
			 "the queue drained, then %.0f releases/s at %.0f: %s",
			 st->throughput, st->trial_base, faster ? "kept" : "lost");
	finish_trial(st, false, faster, verdict, now);
	if (faster)
		wait_after_loss(&st->down_gap_ms, &st->next_down_trial, down_gap_ms,
						now);
	return faster;
}

/*
 * One interval of a trial: count it to the limit it ran at, switch to the
 * other, and after TRIAL_PAIRS of each keep the better (or end early: see
 * walk_down and decided_early).  A lower limit that kept its throughput is
 * the next trial's base, as is a higher one that raised it; otherwise the
 * next trial goes the other way.
 *
 * A higher trial whose base binds nobody right after an interval at the
 * higher limit that bound nobody either has drained the queue that made
 * the base bind (two readings in a row: one can miss a burst).  With
 * turns a queue keeps itself (a holder keeps its slot while others wait,
 * so they go on waiting); once the queue is gone, the base runs as the
 * higher limit does, and the trial ends at once: judge_drained_trial,
 * whose false asks the caller to form the queue again by a probe.
 */
static bool
trial_step(PccAutoState *st, const PccAutoSample *s, PccTime now)
{
	int			i = st->trial_steps % 2;	/* odd intervals run at other */
	bool		lower = st->trial_other < st->trial_base;
	bool		keep;
	const char *verdict = "kept";

	if (!lower && i == 0 && st->trial_steps > 0 && !s->saturated &&
		!st->trial_last_saturated)
		return judge_drained_trial(st, now);
	st->trial_last_saturated = s->saturated;
	st->trial_done[i] += s->done;
	st->trial_seconds[i] += s->seconds;
	count_pair(st, i, st->throughput);
	if (i == 1 && s->saturated)
		st->trial_other_saturated = true;
	++st->trial_steps;
	if (lower && !st->trial_other_saturated &&
		st->trial_steps == 2 * TRIAL_UNREACHED_PAIRS)
	{
		walk_down(st, now);
		return true;
	}
	if (i == 1 && (lower || s->saturated) && decided_early(st, false))
	{
		finish_trial(st, lower, false, "lost early", now);
		return true;
	}
	/* a lower limit clearly better: kept (decided_early, won) */
	if (i == 1 && lower && decided_early(st, true))
	{
		finish_trial(st, lower, true, "kept early", now);
		return true;
	}
	if (st->trial_steps < 2 * TRIAL_PAIRS)
	{
		st->limit = st->trial_steps % 2 ? st->trial_other : st->trial_base;
		return true;
	}
	if (lower)
		keep = trial_rate(st, 1) >= trial_rate(st, 0);
	else
	{
		bool		beyond_noise = higher_beyond_noise(st);

		keep = higher_by_margin(st) && (beyond_noise || from_tie(st));
		if (!beyond_noise)
			verdict = "kept on the margin from a tie";
	}
	finish_trial(st, lower, keep, keep ? verdict : "lost", now);
	return true;
}

/*
 * Other gates' work suffers: shrink by a step, samples or not.  A probe
 * under way keeps the limit at auto_min; the limit it restores shrinks.
 */
static void
yield_step(PccAutoState *st, uint32 min, uint32 max)
{
	double	   *limit = st->probe_since != 0 ? &st->probe_saved_limit : &st->limit;

	*limit = clamp_limit(*limit - Max(1.0, *limit * STEP_FRACTION), min, max);
	st->grew = false;
	st->ceiling = max;			/* trials before measured other company */
	st->trial_floor = min;
	band_starts(st);
}

/*
 * Has no trial ended yet, with work fast enough for one (TRIAL_MIN_RATE)?
 * Then the band holds the limit the controller was handed, and the first
 * trial starts at the first clean interval that lets one start (after the
 * first probe; not while a jump awaits its second interval).  Service
 * time misses what a woken backend waits for a CPU: live, at a thousand
 * connections, the band took a handed 32 to 62 before the first trial,
 * then due 3 s after the start, where 8 ran fastest, and the halving
 * trials from there reached 8 after 5-7 s of a 15 s phase
 * (docs/performance.md).  A lower first trial that loses leaves the band
 * to go on first (plan_next_trial): holders that wait for their clients
 * need more slots than the limit handed, and the band, whose service time
 * leaves those waits out, finds them sooner than trials that double.  Not
 * latched: an interval under TRIAL_MIN_RATE (clients still connecting)
 * lets the band move the limit, and a first trial cut short (a lull, a
 * yield, new bounds) ends the hold as it ends any trial.
 */
static bool
first_trial_pending(const PccAutoState *st)
{
	return no_trial_yet(st) && st->throughput >= TRIAL_MIN_RATE;
}

/*
 * Did the interval ending now run at the limit alone: not in the tail of
 * a probe (work admitted at auto_min, and the queue refilling the slots it
 * restored) nor of a trial (work admitted at its other limit)?
 */
static bool
clean_interval(const PccAutoState *st, PccTime now)
{
	return st->steps >= st->trial_ended_step + 2 &&
		pcc_time_exceeds(st->probe_ended, now, 3 * PCC_AUTO_INTERVAL_MS / 2);
}

/*
 * Has the work itself changed?  Service time jumping up at a limit that
 * did not grow, or falling by as much, and staying there for a second
 * interval, means the baseline is stale: probe now rather than at the next
 * periodic probe, unless the last probe ended within jump_gap_ms
 * (PROBE_GAP_MS).  One interval is not enough: at a thousand connections
 * a few holders that waited long for a CPU double its mean (TPC-B probed
 * every 3 s).
 */
static bool
workload_shifted(PccAutoState *st, double service_us, PccTime now)
{
	double		ref = st->shift_ref_us > 0 ? st->shift_ref_us : st->service_us;
	bool		slower = !st->grew && service_us > SHIFT_FACTOR * ref;
	bool		faster = service_us * SHIFT_FACTOR < ref;
	bool		jumped = ref > 0 && (slower || faster);
	bool		confirmed = jumped && st->shift_ref_us > 0;

	st->shift_ref_us = jumped && !confirmed ? ref : 0;
	/* within PROBE_GAP_MS of a probe's end: the limit it restored */
	st->jump_seen |= confirmed &&
		pcc_time_exceeds(st->probe_ended, now, PROBE_GAP_MS);
	return confirmed &&
		pcc_time_exceeds(st->probe_ended, now, st->jump_gap_ms);
}

/*
 * One controller step with the samples of the interval ending now; the
 * caller publishes st->limit afterwards.  Returns false, consuming
 * nothing, when there are too few samples: the caller keeps accumulating.
 */
bool
pcc_auto_step(PccAutoState *st, const PccAutoSample *s, uint32 min,
			  uint32 max, PccTime now)
{
	/* at most auto_min ran when this interval began */
	bool		drained = st->drained;
	bool		lull;			/* the sample spans intervals with too few
								 * completions */
	double		service_us;
	bool		shifted;

	if (st->probe_since != 0 &&
		pcc_time_exceeds(st->probe_since, now, PROBE_MAX_MS))
		end_probe(st, false, min, max, now);	/* never drained: give up */
	st->yielding = s->yield || s->held;
	if (st->yielding)
	{
		bool		cut = st->trial_on;

		if (cut)
		{
			end_trial(st, st->trial_base, now);
			/* this interval, counted below, was the trial's last */
			st->trial_ended_step++;
		}
		if (s->yield)
			yield_step(st, min, max);
		if (cut)
			log_trial(st, "cut short to yield", st->limit);
	}
	if (s->done < MIN_SAMPLES)
	{
		st->lull = true;
		if (st->trial_on && s->seconds * 1000 >= TRIAL_STALL_MS)
			trial_interrupted(st, s->saturated, now);
		return false;
	}
	lull = st->lull;
	st->lull = false;

	service_us = s->service_us / s->done;
	shifted = false;
	/*
	 * Work admitted at a trial's other limit completes in the interval
	 * after the trial: it is not compared with the trial, nor is the next
	 * compared with it.
	 */
	if (st->probe_since == 0 && !st->trial_on && s->saturated &&
		st->steps >= st->trial_ended_step + 2)
		shifted = workload_shifted(st, service_us, now);
	else
		st->shift_ref_us = 0;
	st->service_us = service_us;
	st->throughput = s->seconds > 0 ? s->done / s->seconds : 0;
	st->drained = s->running <= min;
	st->steps++;
	st->measured_at = now;
	if (st->probe_since != 0)
	{
		if (drained)
		{
			set_baseline(st, service_us, now);
			end_probe(st, true, min, max, now);
		}
		return true;
	}
	if (shifted && (st->probe_backoff_ms == 0 || now >= st->next_probe))
	{
		/* a fresh baseline, which says whether the work changed (end_probe) */
		start_probe(st, min, now, "service time jumped");
		return true;
	}
	if (st->baseline_us <= 0 || service_us < st->baseline_us ||
		(drained && st->limit <= min))
		set_baseline(st, service_us, now);
	if (lull)
	{
		if (st->trial_on)
			trial_interrupted(st, false, now);
		band_starts(st);		/* a lull is no reference for the band */
	}
	if (st->trial_on)
	{
		if (!trial_step(st, s, now) && st->limit > min)
			start_probe(st, min, now, "the queue drained");
		return true;
	}
	if (st->yielding)
		return true;
	if (first_trial_pending(st))
	{
		st->grew = false;		/* the band holds the limit */
		if (!clean_interval(st, now))
			return true;
	}
	else
	{
		double		ran_at = st->limit; /* of the interval ending now */

		adjust_limit(st, s, min, max);
		if (!lull && clean_interval(st, now))
			watch_band(st, ran_at, now);
	}
	/*
	 * A limit that binds nobody needs no fresh baseline, and no pause
	 * between trials for the band, which does not grow it: only the gap of
	 * lost lower trials holds back the next.  Nor does a trial start while
	 * a jump of service time awaits its second interval: a trial's
	 * intervals run at two limits and would hide it, and after the trial
	 * the new service time is the reference, which left the jump to the
	 * periodic probe (service time past SHRINK_ABOVE times the baseline
	 * shrinks the limit at once, which made a higher trial due).
	 */
	if (s->saturated && now >= st->next_probe)
		start_probe(st, min, now, "periodic");
	else if ((now >= st->next_trial || !s->saturated) &&
			 st->throughput >= TRIAL_MIN_RATE && st->shift_ref_us == 0)
		start_trial(st, s->saturated, min, max, now);
	return true;
}

/*
 * Service time leaves out a holder's waits for its client between
 * statements (idle in transaction): such a holder keeps its slot but loads
 * nothing, and counting its wait would shrink the limit just when more
 * holders are needed to keep the server busy.  The top-level statement
 * hooks say where statements begin and end; only while a slot of an auto
 * gate is held does that read the clock.  Backend-local.
 */
static bool timing_client = false;	/* a slot of an auto gate is held */
static PccTime statement_ended = 0; /* last statement's end, or 0 */
static uint64 client_wait_us = 0;	/* waits for the client, summed */
static uint64 client_wait_at[PCC_NUM_GATE_IDS];	/* its value at admission */

/* This backend now holds a slot of gate id. */
void
pcc_auto_slot_taken(PccGateId id)
{
	client_wait_at[id] = client_wait_us;
	if (pg_atomic_read_u32(&pcc_gate(id)->auto_on) != 0)
		timing_client = true;
}

/* A top-level statement begins: the wait since the last one ends. */
void
pcc_auto_statement_begins(void)
{
	PccTime		start;

	if (statement_ended == 0)
		return;
	/* when its protocol message arrived: parsing and planning are work */
	start = pcc_now() -
		(GetCurrentTimestamp() - GetCurrentStatementStartTimestamp());
	if (start > statement_ended)
		client_wait_us += start - statement_ended;
	statement_ended = 0;
}

/* A top-level statement has done its work: the client's turn. */
void
pcc_auto_statement_ends(void)
{
	if (timing_client)
		statement_ended = pcc_now();
}

/* The transaction ended and its slots are given back or kept. */
void
pcc_auto_transaction_ends(void)
{
	timing_client = false;
	statement_ended = 0;
}

/*
 * A holder of a slot of gate id gives it back: report how long it served.
 * Costs nothing but one read on gates with a static limit.
 */
void
pcc_auto_report(PccGateId id, PccTime since)
{
	PccGate    *gate = pcc_gate(id);
	PccTime now;
	int64		served;

	if (likely(pg_atomic_read_u32(&gate->auto_on) == 0))
		return;
	now = pcc_now();
	served = (now - since) - (int64) (client_wait_us - client_wait_at[id]);
	pg_atomic_fetch_add_u64(&gate->auto_done, 1);
	pg_atomic_fetch_add_u64(&gate->auto_service_us, Max(served, 0));
}

/*
 * The limit GUC of gate id was set to auto.  The first process to switch
 * it keeps the old limit (within the bounds) until the controller starts.
 */
void
pcc_auto_switch_on(PccGateId id)
{
	PccGate    *gate = pcc_gate(id);
	uint32		min = pg_atomic_read_u32(&pcc_shared->auto_min);
	uint32		max = pg_atomic_read_u32(&pcc_shared->auto_max);

	if (pg_atomic_exchange_u32(&gate->auto_on, 1) == 0)
		pg_atomic_write_u32(&gate->limit,
							(uint32) clamp_limit(pg_atomic_read_u32(&gate->limit),
												 min, max));
}

/*
 * Does the work of gate id suffer now: running past its band, or its
 * unloaded work slowed to SHIFT_FACTOR times its floor?  An old
 * measurement still counts while sessions queue for the gate (its holders
 * too slow to complete a sample), not once nobody waits: holders idle in
 * transaction would otherwise keep the last verdict forever.
 */
static bool
work_suffers(PccGateId id, PccTime now)
{
	PccGate    *gate = pcc_gate(id);
	const PccAutoState *st = &gate->auto_state;
	double		floor_us = Min(st->floor_us, st->floor_prev_us);

	if (st->baseline_us <= 0 ||
		(pcc_time_exceeds(st->measured_at, now, FRESH_MS) &&
		 pcc_state_waiting(pg_atomic_read_u64(&gate->state)) == 0))
		return false;
	return (st->probe_since == 0 &&
			st->service_us > SHRINK_ABOVE * st->baseline_us) ||
		st->baseline_us > SHIFT_FACTOR * floor_us;
}

/*
 * Does the work of another auto gate suffer now, for big queries to yield?
 * *probing says whether one of those gates probes (its work held at
 * auto_min says nothing of its load).  A gate that has not stepped since
 * it went auto holds the state of its last time.
 */
static bool
other_work_suffers(PccTime now, bool *probing)
{
	bool		suffers = false;

	*probing = false;
	for (int id = 0; id < PCC_NUM_GATES; id++)
	{
		PccGate    *gate = pcc_gate(id);

		if (id == PCC_GATE_BIGQUERY ||
			pg_atomic_read_u32(&gate->auto_on) == 0 || gate->auto_seen_at == 0)
			continue;
		suffers |= work_suffers(id, now);
		*probing |= gate->auto_state.probe_since != 0;
	}
	return suffers;
}

/*
 * The bigquery gate's yield (st its controller): shrink while other work
 * suffers, and neither grow nor try for YIELD_HOLD_MS after it was last
 * seen to.  Work held up by the big queries' locks runs past its band in
 * one interval and not in the next, as it happens to need a locked row or
 * not, and a yield that stopped at every such interval let the big
 * queries take the slots back half of the time.  A probe of the other
 * work, which may last longer, keeps the hold.
 */
static void
bigquery_yield(PccAutoState *st, PccAutoSample *s, PccTime now)
{
	bool		holding = st->suffered_at != 0 &&
		!pcc_time_exceeds(st->suffered_at, now, YIELD_HOLD_MS);
	bool		probing;

	s->yield = other_work_suffers(now, &probing);
	if (s->yield || (holding && probing))
		st->suffered_at = now;
	s->held = holding && !s->yield;
}

/*
 * auto_min or auto_max changed at a reload.  A ceiling or floor that was
 * the old bound moves to the new one: where no trials run (work under 1000
 * releases a second) nothing else would widen the band's reach.  One the
 * trials left inside the old bounds is a verdict on the work, which holds.
 * A trial under way ends at its base, and a probe holds the limit at the
 * new auto_min.  The caller discards the interval: it ran at the old
 * bounds (also a trial's last, whose tail the next one is).
 */
static void
bounds_changed(PccAutoState *st, uint32 min, uint32 max, PccTime now)
{
	bool		cut = st->trial_on;

	if (cut)
		end_trial(st, st->trial_base, now);
	st->ceiling = st->ceiling >= st->bounds_max ? max :
		clamp_limit(st->ceiling, min, max);
	st->trial_floor = st->trial_floor <= st->bounds_min ? min :
		clamp_limit(st->trial_floor, min, max);
	if (st->probe_since != 0)
		st->limit = min;
	st->limit = clamp_limit(st->limit, min, max);
	auto_log("auto_min and auto_max now %u and %u (were %u and %u): limit %.0f, ceiling %.0f, floor %.0f",
			 min, max, st->bounds_min, st->bounds_max, st->limit,
			 st->ceiling, st->trial_floor);
	if (cut)
		log_trial(st, "cut short by the new bounds", st->limit);
	if (min != st->bounds_min && st->probe_backoff_ms > 0)
	{
		/* a new auto_min may let probes drain */
		st->probe_backoff_ms = 0;
		st->next_probe = Min(st->next_probe,
							 pcc_time_plus_ms(st->probe_ended,
											  PCC_AUTO_PROBE_EVERY_MS));
	}
	st->bounds_min = min;
	st->bounds_max = max;
	band_starts(st);
}

/*
 * The watchdog's turn on gate id: start the controller when the gate went
 * auto, step it when an interval has passed and publish the new limit.
 * log_as names the gate in the log (log_auto), NULL logs nothing.  Returns
 * true if the limit grew: the caller admits waiters.
 */
bool
pcc_auto_tick(PccGateId id, PccTime now, const char *log_as)
{
	PccGate    *gate = pcc_gate(id);
	PccAutoState *st = &gate->auto_state;
	uint32		min = pg_atomic_read_u32(&pcc_shared->auto_min);
	uint32		max = pg_atomic_read_u32(&pcc_shared->auto_max);
	uint64		done = pg_atomic_read_u64(&gate->auto_done);
	uint64		service_us = pg_atomic_read_u64(&gate->auto_service_us);
	uint64		state = pg_atomic_read_u64(&gate->state);
	uint32		published = pg_atomic_read_u32(&gate->limit);
	uint32		limit;
	bool		consumed = true;
	PccAutoSample s;

	if (pg_atomic_read_u32(&gate->auto_on) == 0)
	{
		gate->auto_seen_at = 0;
		return false;
	}
	if (gate->auto_seen_at != 0 &&
		!pcc_time_exceeds(gate->auto_seen_at, now, PCC_AUTO_INTERVAL_MS - 1))
		return false;
	logging_gate = log_as;
	if (gate->auto_seen_at == 0)
		pcc_auto_start(st, published, min, max, now);
	else if (min != st->bounds_min || max != st->bounds_max)
		bounds_changed(st, min, max, now);
	else
	{
		s.done = done - gate->auto_seen_done;
		s.service_us = (double) (service_us - gate->auto_seen_us);
		s.seconds = (now - gate->auto_seen_at) / 1000000.0;
		s.running = pcc_state_running(state);
		s.saturated = pcc_state_waiting(state) > 0 || s.running >= published;
		s.yield = s.held = false;
		if (id == PCC_GATE_BIGQUERY)
			bigquery_yield(st, &s, now);
		consumed = pcc_auto_step(st, &s, min, max, now);
	}
	logging_gate = NULL;
	if (consumed)
	{
		gate->auto_seen_done = done;
		gate->auto_seen_us = service_us;
		gate->auto_seen_at = now;
	}
	limit = (uint32) rint(st->limit);
	if (limit == published || pg_atomic_read_u32(&gate->auto_on) == 0)
		return false;
	pg_atomic_write_u32(&gate->limit, limit);
	return limit > published;
}
