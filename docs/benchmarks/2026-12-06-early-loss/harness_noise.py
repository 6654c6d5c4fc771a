"""How often would a perfect adaptive controller make 0.95 of the best static
limit in auto_sweep.sh's report?  From the static phases of whole sweeps
(--rounds 3): per cell, the spread of one phase's TPS around its limit's mean
within a sweep (a run's first phase left out: its backends are cold), and the
static curve (each limit's mean over the sweeps, relative to the best).  A
simulated sweep draws three phases per static limit and three for an oracle
that always runs at the true best, and computes oracle / best static mean as
the report does.

  python3 harness_noise.py results/auto-A results/auto-B ...
"""
import csv
import os
import random
import statistics as st
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '../../../pgbench_scripts'))
import auto_report as ar  # noqa: E402

ROUNDS, DRAWS = 3, 20000
cells = {}
for d in sys.argv[1:]:
    phases = list(csv.DictReader(open(os.path.join(d, 'phases.csv'))))
    first = {}
    for r in phases:
        first.setdefault(r['run'], r)
    progs = {}
    for r in phases:
        if r['phase'] == 'auto' or first[r['run']] is r:
            continue
        run = r['run']
        progs.setdefault(run, ar.progress(d, run))
        tps = ar.phase_tps(progs[run], float(r['start']), float(r['end']))
        cells.setdefault((r['workload'], r['conns']), {}).setdefault(d, {}) \
             .setdefault(r['phase'], []).append(tps)

random.seed(1)
p_all = 1.0
for (w, c), by_sweep in sorted(cells.items()):
    dev, means = [], {}
    for by_limit in by_sweep.values():
        for lim, v in by_limit.items():
            m = st.mean(v)
            dev += [(x / m - 1, len(v)) for x in v]
            means.setdefault(lim, []).append(m)
    # unbiased: each deviation from a mean of n phases shrinks by (n-1)/n
    sd = (sum(x * x * n / (n - 1) for x, n in dev) / len(dev)) ** 0.5
    mu = {lim: st.mean(v) for lim, v in means.items()}
    best = max(mu.values())
    mu = {lim: v / best for lim, v in mu.items()}
    below = 0
    for _ in range(DRAWS):
        static = max(st.mean(m * (1 + random.gauss(0, sd)) for _ in range(ROUNDS))
                     for m in mu.values())
        oracle = st.mean(1 + random.gauss(0, sd) for _ in range(ROUNDS))
        below += round(oracle / static, 2) < 0.95
    p = below / DRAWS
    p_all *= 1 - p
    curve = ' '.join(f'{lim}:{mu[lim]:.2f}' for lim in sorted(mu, key=int))
    print(f'{w:14s}{c:>5s}  phase sd {sd:.3f}  curve {curve}  P(oracle < 0.95) {p:.2f}')
print(f'P(oracle >= 0.95 in every cell) {p_all:.2f}')
