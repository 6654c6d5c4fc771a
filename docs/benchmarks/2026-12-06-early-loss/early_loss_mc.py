#!/usr/bin/env python3
"""How often lost_early (pcc_auto.c) ends a trial, by simulation.

Each pair of a trial gives ln(rate at other / rate at base), drawn here
from a normal law: mean the true difference, standard deviation the
machine's noise per pair (0.10-0.16 on the 2-vCPU VM: the median trial's
standard error of 5% over 10 pairs is 0.16 per pair). From the third pair
to the ninth, the trial ends when the mean is below ln(1 - loss) and
stays below zero by the quantile times its standard error. Prints, per
rule, noise and true difference: the share of trials ended early and the
mean pair at which they ended.

    python3 early_loss_mc.py
"""
import math
import random

T975 = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306}
RULES = {'first form: 10%, 2 SE': (0.10, False), 'kept: 15%, t': (0.15, True)}


def trial(true, sd, loss, use_t, rng):
    xs = []
    for n in range(1, 10):
        xs.append(rng.gauss(true, sd))
        if n < 3:
            continue
        m = sum(xs) / n
        se = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)
        q = T975[n - 1] if use_t else 2.0
        if m < math.log(1 - loss) and m + q * se < 0:
            return n
    return 0


def main():
    rng = random.Random(20261206)
    trials = 20000
    for name, (loss, use_t) in RULES.items():
        for sd in (0.10, 0.16):
            cells = []
            for true in (0.0, -0.05, -0.10, -0.20, -0.35):
                ends = [trial(true, sd, loss, use_t, rng) for _ in range(trials)]
                early = [n for n in ends if n]
                mean_pair = sum(early) / len(early) if early else 0
                cells.append(f'{true:+.2f}: {len(early) / trials:.3f} at {mean_pair:.1f}')
            print(f'{name}, noise {sd:.2f} per pair | ' + ' | '.join(cells))


if __name__ == '__main__':
    main()
