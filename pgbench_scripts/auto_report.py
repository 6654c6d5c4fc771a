#!/usr/bin/env python3
"""Report of auto_sweep.sh: TPS per phase (static limits and auto), the
auto limit while it ran, and SVG plots of the limit over time (gnuplot)."""
import csv
import os
import re
import subprocess
import sys
from collections import defaultdict

SKIP_S = 3.0          # seconds at the start of a phase left out
SETTLED_S = 8.0       # and for the settled column: an auto phase's start too
AUTO_MIN = 2          # auto_sweep.sh leaves auto_min at its default
SHIFT_RUNS = ('shift-', 'burst-', 'grow-')  # auto throughout, a shift in the middle
GATE = {'tpcb': 'transaction', 'simple-update': 'transaction',
        'select-only': 'query', 'partition-mix': 'autocommit'}


def progress(out, run):
    """(epoch, tps) of the steady progress lines of one run."""
    rows = []
    with open(os.path.join(out, f'progress-{run}.log')) as f:
        for line in f:
            parts = line.split()
            if 'steady' not in line or len(parts) < 9:
                continue
            rows.append((float(parts[0]), float(parts[6])))
    return rows


def samples(out):
    """(epoch, limit, running, waiting, admitted, queued) per gate, from the
    sampler; the totals are None where it did not record them."""
    by_gate = defaultdict(list)
    with open(os.path.join(out, 'limits.csv')) as f:
        for r in csv.DictReader(f):
            try:
                totals = ((int(r['admitted']), int(r['queued']))
                          if r.get('queued') is not None else (None, None))
                by_gate[r['gate']].append((float(r['epoch']), int(r['limit']),
                                           int(r['running']), int(r['waiting'])) + totals)
            except (ValueError, KeyError):
                continue
    return by_gate


def limits(by_gate):
    """(epoch, limit) per gate."""
    return defaultdict(list, {g: [(e, l) for e, l, *_ in v] for g, v in by_gate.items()})


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def mean(v):
    return sum(v) / len(v) if v else float('nan')


def phase_tps(prog, start, end, skip=SKIP_S):
    """Mean TPS of a phase, its first skip seconds left out."""
    return mean([t for e, t in prog if start + skip <= e <= end])


def limit_summary(series, start, end):
    """'median (lowest..highest)' of the limit between start and end."""
    seen = [l for e, l in series if start <= e <= end]
    return f'{median(seen)} ({min(seen)}..{max(seen)})' if seen else '-'


def gate_readings(out, phases, sampled):
    """gate-readings.csv: per phase (its first SKIP_S seconds left out), at
    the workload's gate, the share of the sampler's readings that found it
    saturated (sessions waiting, or every slot in use) and, from the
    admitted and queued totals, the share of the spans between two readings
    in which somebody queued: a queue that formed and drained between two
    readings shows only there.  Samplers before the totals: no file."""
    if not any(v and v[0][5] is not None for v in sampled.values()):
        return
    with open(os.path.join(out, 'gate-readings.csv'), 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'gate', 'round', 'phase', 'readings', 'median_limit',
                    'admitted_per_s', 'waiting_or_full_at_reading',
                    'someone_queued_since_last_reading'])
        for p in phases:
            gate = GATE.get(p['workload'], 'transaction')
            rs = in_phases(sampled[gate], [p])
            spans = list(zip(rs, rs[1:]))
            secs = rs[-1][0] - rs[0][0] if rs else 0
            if not spans or secs <= 0:
                continue
            full = sum(b[3] > 0 or b[2] >= b[1] for a, b in spans)
            queued = sum(b[5] > a[5] for a, b in spans)
            w.writerow([p['run'], gate, round_of(p), p['phase'], len(spans),
                        median([r[1] for r in rs]), round((rs[-1][4] - rs[0][4]) / secs),
                        round(full / len(spans), 2), round(queued / len(spans), 2)])


def main(out):
    phases = list(csv.DictReader(open(os.path.join(out, 'phases.csv'))))
    sampled = samples(out)
    lim = limits(sampled)
    runs = defaultdict(list)
    for p in phases:
        runs[p['run']].append(p)
    gate_readings(out, phases, sampled)
    sweep = [r for r in runs if not r.startswith(SHIFT_RUNS)]
    if sweep:
        sweep_table(out, runs, sweep, lim, sampled)
    shifts(out, runs, sampled)
    failures(out, runs)
    for run, ps in runs.items():
        plot(out, run, ps, lim[GATE.get(ps[0]['workload'], 'transaction')])


def in_phases(series, ps):
    """The readings of series (epoch first) within the given phases, their
    first SKIP_S seconds left out."""
    return [r for p in ps for r in series
            if float(p['start']) + SKIP_S <= r[0] <= float(p['end'])]


def reached(series, p, best):
    """Seconds from the start of auto phase p until the gate's limit (series
    of (epoch, limit)) is first read at or below best, the best static
    limit, but above AUTO_MIN (where probes hold it); '-' if never."""
    start, end = float(p['start']), float(p['end'])
    return next((f'{e - start:.1f}' for e, l in series
                 if start <= e <= end and AUTO_MIN < l <= best), '-')


def round_of(p):
    """The round a phase ran in (1 without --rounds)."""
    return p.get('round') or '1'


def queued_share(sampled, gate, ps):
    """Share of the sampler's readings, over the given phases but their first
    SKIP_S seconds, that found sessions queued at the gate."""
    seen = [q for e, l, r, q, *_ in in_phases(sampled[gate], ps)]
    return f'{100 * sum(1 for q in seen if q > 0) / len(seen):.0f}%' if seen else '-'


def round_spread(tps_by_round, best):
    """auto / best static per round: 'lowest..highest, standard error'."""
    ratios = [mean(t['auto']) / mean(t[best]) for t in tps_by_round.values()
              if t['auto'] and t[best]]
    if len(ratios) < 2:
        return '-'
    m = mean(ratios)
    se = (sum((r - m) ** 2 for r in ratios) / (len(ratios) - 1) / len(ratios)) ** 0.5
    return f'{min(ratios):.2f}..{max(ratios):.2f}, ±{se:.2f}'


def held_out(by_round, names):
    """auto / the static limit best over the other rounds, in each round,
    averaged: the best of several noisy static means is biased upwards (a
    controller always at the best limit scores below 1 against it), a
    limit chosen on other rounds and scored on this one is not."""
    ratios = []
    for r, t in by_round.items():
        others = [o for o in by_round if o != r]
        chosen = [n for n in names if any(by_round[o][n] for o in others)]
        if not chosen:
            continue
        best = max(chosen, key=lambda n: mean([x for o in others for x in by_round[o][n]]))
        if t['auto'] and t[best]:
            ratios.append(mean(t['auto']) / mean(t[best]))
    return f'{mean(ratios):.2f}' if ratios else '-'


def sweep_table(out, runs, sweep, lim, sampled):
    """Static limits against auto, one row per workload and connection count.
    A setting that ran in several phases (--abba, --rounds) shows the mean of
    their TPS; with rounds, the spread of auto / best static over them."""
    names = list(dict.fromkeys(p['phase'] for p in runs[sweep[0]] if p['phase'] != 'auto'))
    rounds = len({round_of(p) for p in runs[sweep[0]]})
    print('| workload | connections | ' + ' | '.join(f'static {n}' for n in names) +
          ' | auto | auto / best static |' +
          (' per round | held out |' if rounds > 1 else '') +
          ' settled | best reached (s) | auto limit (median, range) |'
          ' queued (best static, auto) |')
    print('|---|---|' + '---|' * (len(names) + 6 + 2 * (rounds > 1)))
    for run in sweep:
        ps = runs[run]
        prog = progress(out, run)
        tps = defaultdict(list)
        settled = defaultdict(list)
        by_round = defaultdict(lambda: defaultdict(list))
        for p in ps:
            t = phase_tps(prog, float(p['start']), float(p['end']))
            tps[p['phase']].append(t)
            settled[p['phase']].append(phase_tps(prog, float(p['start']), float(p['end']),
                                                 SETTLED_S))
            by_round[round_of(p)][p['phase']].append(t)
        static = [mean(tps[n]) for n in names]
        best, auto = max(static), mean(tps['auto'])
        best_name = names[static.index(best)]
        gate = GATE.get(ps[0]['workload'], 'transaction')
        seen = [l for e, l in in_phases(lim[gate], [p for p in ps if p['phase'] == 'auto'])]
        auto_limit = f'{median(seen)} ({min(seen)}..{max(seen)})' if seen else '-'
        queued = ', '.join(queued_share(sampled, gate, [p for p in ps if p['phase'] == n])
                           for n in (best_name, 'auto'))
        cells = ' | '.join(f'**{t:.0f}**' if t == best else f'{t:.0f}' for t in static)
        spread = (f' {round_spread(by_round, best_name)} | {held_out(by_round, names)} |'
                  if rounds > 1 else '')
        late = mean(settled['auto']) / max(mean(settled[n]) for n in names)
        best_limit = int(best_name) if best_name.isdigit() else None
        reach = ', '.join(reached(lim[gate], p, best_limit) for p in ps
                          if p['phase'] == 'auto') if best_limit else '-'
        print(f'| {ps[0]["workload"]} | {ps[0]["conns"]} | {cells} | {auto:.0f} | '
              f'{auto / best:.2f} |{spread} {late:.2f} | {reach} | {auto_limit} | {queued} |')
    print()
    first = [p['phase'] for p in runs[sweep[0]] if round_of(p) == '1']
    print('Phases run in the order ' + ', '.join(first) +
          (f', in {rounds} rounds, each rotated by one setting (the first of a round'
           ' moves to its end)' if rounds > 1 else '') + '; an auto phase starts')
    print('from the limit before it, so its TPS includes the controller finding its limit')
    print('(a first probe at auto_min, then the climb or descent). Where a setting ran more')
    print('than once, its TPS is the mean of its phases.', end=' ')
    if rounds > 1:
        print('Per round: auto / best static within')
        print('each round (lowest..highest, and the standard error of their mean). Held out:')
        print('in each round, auto / the static limit that was best over the other rounds,')
        print('averaged: a limit chosen on other phases, which the noise of these does not')
        print('favour as it favours the best of the same phases.', end=' ')
    print(f'Settled: auto / best static over every phase but its first {SETTLED_S:.0f} s, for')
    print('auto the part after its start (a reload to -1 restarts the controller: a probe, the')
    print('band and the first trials), for static limits the same seconds. Best reached: per')
    print("auto phase, the seconds from its start until the sampler first read the gate's")
    print('limit at or below the best static limit (above auto_min, where probes hold it): a')
    print("first reading, a trial's lower limit included, not a settled limit; readings 200 ms")
    print("or more apart can miss a trial's 100 ms intervals.")
    print("Queued: the share of the sampler's readings (every 200 ms) that found sessions")
    print("waiting at the workload's gate; where the best static limit queues nobody, static")
    print('limits at or above it and auto run alike, and their spread is the noise of the')
    print('machine.')


def failures(out, runs):
    """Failed transactions and connections per run, from the summary of
    pccload's main load (printed when the driver ends the run); nothing if
    no run has one."""
    found = {}
    for run in runs:
        path = os.path.join(out, f'pccload-{run}.txt')
        if not os.path.exists(path):
            continue
        text = open(path).read()
        m = re.search(r'failed transactions: (\d+)\s+connection failures: (\d+)', text)
        if m:
            found[run] = (int(m.group(1)), int(m.group(2)),
                          re.findall(r'SQLSTATE (\S+): (\d+)', text))
    if not found:
        return
    # a lost connection counts only under its SQLSTATE (08006, 08000)
    bad = {r: f for r, f in found.items() if f[0] or f[1] or f[2]}
    print()
    if not bad:
        print(f'Failed transactions, connections and errors: none in {len(found)} of '
              f"{len(runs)} runs (pccload's summaries; a run without one was cut short).")
        return
    print('Failed transactions, connections and errors (pccload\'s summaries):')
    print()
    for run, (txns, conns, codes) in bad.items():
        print(f'- {run}: {txns} failed transactions, {conns} failed connections' +
              (' (' + ', '.join(f'SQLSTATE {c}: {n}' for c, n in codes) + ')' if codes else ''))


def reach_s(series, start, end):
    """Seconds from start until the limit first comes within a quarter (at
    least one) of its median over the phase's second half, its new level;
    probes (the limit held at auto_min for a fresh baseline) not counted."""
    seen = [(e, l) for e, l in series if start <= e <= end and l > AUTO_MIN]
    tail = [l for e, l in seen if e >= (start + end) / 2]
    if not tail:
        return float('nan')
    med = median(tail)
    for e, l in seen:
        if abs(l - med) <= max(1, 0.25 * med):
            return e - start
    return float('nan')


def shifts(out, runs, sampled):
    """The shift and burst runs: TPS, limit and settling time per phase."""
    rows = [(r, ps) for r, ps in runs.items() if r.startswith(SHIFT_RUNS)]
    if not rows:
        return
    lim = limits(sampled)
    print()
    print('Workload shifts (auto throughout; the middle phase hogs both CPUs from outside')
    print('PostgreSQL, "hog", adds 32 sessions of big queries, "big" (with the bigquery')
    print('limit static at 8: "bigstatic"), or draws the accounts of a scale that outgrows')
    print('shared_buffers, "wide"). Reached: seconds')
    print('from the phase start until the limit first comes within a quarter of its median')
    print("over the phase's second half (its new level), probes not counted.")
    print()
    print('| run | phase | TPS | limit (median, range) | new level reached after (s) | bigquery limit, running (medians) |')
    print('|---|---|---|---|---|---|')
    for run, ps in rows:
        prog = progress(out, run)
        series = lim[GATE.get(ps[0]['workload'], 'transaction')]
        for p in ps:
            start, end = float(p['start']), float(p['end'])
            big = [(l, r) for e, l, r, *_ in sampled['bigquery'] if start <= e <= end]
            big_med = '{}, {}'.format(median([l for l, _ in big]), median([r for _, r in big])) \
                if big else '-'
            print(f'| {run} | {p["phase"]} | {phase_tps(prog, start, end):.0f} | '
                  f'{limit_summary(series, start, end)} | '
                  f'{reach_s(series, start, end):.1f} | {big_med} |')


def plot(out, run, ps, series):
    t0, t1 = float(ps[0]['start']), float(ps[-1]['end'])
    data = os.path.join(out, f'limit-{run}.dat')
    with open(data, 'w') as f:
        for e, l in series:
            if t0 - 1 <= e <= t1:
                f.write(f'{e - t0:.2f} {l}\n')
    prog = progress(out, run)
    with open(os.path.join(out, f'tps-{run}.dat'), 'w') as f:
        for e, t in prog:
            if t0 - 1 <= e <= t1:
                f.write(f'{e - t0:.2f} {t}\n')
    marks = ''.join(
        f'set arrow from first {float(p["start"]) - t0:.1f}, graph 0 to first {float(p["start"]) - t0:.1f}, graph 1 nohead dt 2\n'
        f'set label "{p["phase"]}" at {float(p["start"]) - t0 + 0.3:.1f}, graph 0.95\n'
        for p in ps)
    svg = os.path.join(out, f'limit-{run}.svg')
    script = f"""set terminal svg size 900,420
set output '{svg}'
set title '{run}: limit and TPS over time'
set xlabel 'seconds'
set ylabel 'limit'
set y2label 'TPS'
set ytics nomirror
set y2tics
{marks}plot '{data}' using 1:2 with steps lw 2 title 'limit', \\
     '{os.path.join(out, f"tps-{run}.dat")}' using 1:2 axes x1y2 with lines title 'TPS'
"""
    subprocess.run(['gnuplot'], input=script, text=True, check=False)
    print(f'\n![{run}](limit-{run}.svg)')


if __name__ == '__main__':
    main(sys.argv[1])
