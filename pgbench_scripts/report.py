#!/usr/bin/env python3
"""Turn a run directory of pgbench_scripts/run.sh into report.md and SVG plots.

    python3 report.py results/<timestamp>
"""
import csv
import json
import os
import re
import subprocess
import sys



def repeat_of(t):
    """A target's name without its repeat (the second "native" in --targets
    is native#2), and the repeat."""
    name, _, n = t.partition("#")
    return name, int(n or 1)


def target_order(t):
    """By repeat, then native, module, module-qN[-gG][-wW] by N, G and W,
    pgbouncer, pgbouncer126."""
    name, n = repeat_of(t)
    m = re.match(r"module-q(\d+)(?:-g(\d+))?(?:-w(\d+))?$", name)
    if m:
        return (n, 2, int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0))
    return (n, {"native": 0, "module": 1, "pgbouncer": 3, "pgbouncer126": 4}.get(name, 5),
            0, 0, 0)


# (title, CSV column, format, what a reader should know)
TABLES = [
    ("TPS, steady state (all connections up)", "tps_steady", "{:.0f}", ""),
    ("TPS, raw (whole run incl. connect and drain, as pgbench counts)", "tps_raw", "{:.0f}", ""),
    ("Transaction RT mean (ms)", "txn_mean_ms", "{:.1f}", ""),
    ("Real SQL RT (ms): statements excluding BEGIN, means summed", "sql_rt_ms", "{:.2f}",
     "The wait for a slot shows in BEGIN, so this is what the work itself took."),
    ("Transaction RT stddev (ms)", "txn_stddev_ms", "{:.1f}", ""),
    ("Transaction RT p99 (ms)", "txn_p99_ms", "{:.1f}", ""),
    ("Fairness: transaction RT p99 / mean", "txn_p99_over_mean", "{:.2f}",
     "Lower is fairer. A session admitted for a turn of k transactions waits once"
     " per turn, so with a quantum this is about k."),
    ("Time to establish all connections (s)", "connect_s", "{:.2f}", ""),
    ("Time to close all connections (s)", "close_s", "{:.2f}",
     "Until the server reports none of the load generator's sessions."),
    ("Load generator CPU (s)", "client_cpu_s", "{:.1f}", ""),
    ("Failed transactions", "failed", "{:.0f}",
     "Over the whole run, connecting and warm-up included; TPS and latencies count"
     " only transactions that succeeded."),
]


def load(run):
    rows = list(csv.DictReader(open(os.path.join(run, "results.csv"))))
    data = {}
    for r in rows:
        # a target run again in one step ("native module native module")
        n = 1
        while (r["protocol"], int(r["clients"]), repeat_name(r["label"], n)) in data:
            n += 1
        r["label"] = repeat_name(r["label"], n)
        mean = float(r["txn_mean_ms"] or 0)
        r["txn_p99_over_mean"] = str(float(r["txn_p99_ms"]) / mean) if mean > 0 else "NaN"
        data[(r["protocol"], int(r["clients"]), r["label"])] = r
    targets = sorted({r["label"] for r in rows}, key=target_order)
    return rows, data, targets


def repeat_name(label, n):
    return label if n == 1 else "{}#{}".format(label, n)


def steps_of(data, proto):
    return sorted({c for (p, c, _) in data if p == proto})


def table(data, targets, proto, steps, column, fmt):
    present = [t for t in targets if any((proto, c, t) in data for c in steps)]
    head = "| connections | " + " | ".join(present)
    sep = "|---|" + "---|" * len(present)
    modules = [t for t in present if t.startswith("module")]
    ratios = [(m, b) for b in present
              if repeat_of(b)[0] in ("native", "pgbouncer", "pgbouncer126")
              for m in modules if repeat_of(m)[1] == repeat_of(b)[1]]
    for a, b in ratios:
        head += " | {} / {}".format(a, b)
        sep += "---|"
    lines = [head + " |", sep]
    for c in steps:
        cells = []
        for t in present:
            r = data.get((proto, c, t))
            cells.append(fmt.format(float(r[column])) if r else "–")
        for a, b in ratios:
            m, n = data.get((proto, c, a)), data.get((proto, c, b))
            cells.append("{:.2f}".format(float(m[column]) / float(n[column]))
                         if n and m and float(n[column]) > 0 else "–")
        lines.append("| {} | {} |".format(c, " | ".join(cells)))
    return "\n".join(lines)


def plot(run, data, targets, proto, steps, column, ylabel, name):
    dat = os.path.join(run, name + ".dat")
    with open(dat, "w") as f:
        for c in steps:
            vals = [data.get((proto, c, t), {}).get(column, "NaN") for t in targets]
            f.write("{} {}\n".format(c, " ".join(vals)))
    series = ", ".join(
        "'{}' using 1:{} with linespoints title '{}'".format(dat, i + 2, t)
        for i, t in enumerate(targets)
        if any((proto, c, t) in data for c in steps))
    script = ("set terminal svg size 720,420 dynamic; set output '{}';"
              "set logscale x 2; set xlabel 'connections'; set ylabel '{}';"
              "set key outside; set grid; plot {}").format(
                  os.path.join(run, name + ".svg"), ylabel, series)
    try:
        subprocess.run(["gnuplot", "-e", script], check=True)
        return name + ".svg"
    except (OSError, subprocess.CalledProcessError):
        return None


def frontier(run, data, targets, proto, steps):
    """TPS against transaction p99, one point per target, one series per
    connection count: the better settings lie up and to the left."""
    dat = os.path.join(run, "frontier-{}.dat".format(proto))
    series = []
    with open(dat, "w") as f:
        for c in steps:
            rows = [data[(proto, c, t)] for t in targets if (proto, c, t) in data]
            if not rows:
                continue
            for r in rows:
                f.write("{} {} {}\n".format(r["txn_p99_ms"], r["tps_steady"], r["label"]))
            f.write("\n\n")
            i = len(series)
            series.append("'{0}' index {1} using 1:2 with points pt 7 ps 1 lc {2} title '{3} connections', "
                          "'{0}' index {1} using 1:2:3 with labels offset char 0.8,0.6 left "
                          "font ',9' textcolor lt {2} notitle".format(dat, i, i + 1, c))
    if not series:
        return None
    svg = "frontier-{}.svg".format(proto)
    script = ("set terminal svg size 860,520 dynamic; set output '{}';"
              "set logscale x; set xlabel 'transaction p99 (ms), log scale'; set ylabel 'TPS (steady)';"
              "set key bottom right; set grid; set offsets graph 0.05, graph 0.35, graph 0.08, graph 0.05;"
              "plot {}").format(os.path.join(run, svg), ", ".join(series))
    try:
        subprocess.run(["gnuplot", "-e", script], check=True)
        return svg
    except (OSError, subprocess.CalledProcessError):
        return None


def statements(run, targets, proto, step):
    def path(t):
        return os.path.join(run, "{}-{}-{}.json".format(t, proto, step))

    out = []
    for t in targets:
        if not os.path.exists(path(t)):
            continue
        shown = t
        # run.sh before 2026-12-07 wrote every repeat to the first's file
        repeats = [u for u in targets if repeat_of(u)[0] == t and u != t]
        if repeats and not any(os.path.exists(path(u)) for u in repeats):
            shown = repeats[-1]
        j = json.load(open(path(t)))
        out.append("\n**{}** ({} connections, {}):\n".format(shown, step, proto))
        out.append("| statement | mean ms | p50 | p95 | p99 | max |")
        out.append("|---|---|---|---|---|---|")
        for s in j["latency_ms"]:
            out.append("| `{}` | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {:.1f} |".format(
                s["what"][:70], s["mean"], s["p50"], s["p95"], s["p99"], s["max"]))
        if j["errors"]:
            out.append("\nerrors by SQLSTATE: " + ", ".join(
                "{} {}".format(k, v) for k, v in j["errors"].items()))
    return out


def main(run):
    rows, data, targets = load(run)
    md = ["# pg_concurrency_control benchmark", ""]
    for f in ("capacity.txt", "config.txt"):
        p = os.path.join(run, f)
        if os.path.exists(p):
            md += ["```", open(p).read().rstrip(), "```", ""]
    for proto in sorted({r["protocol"] for r in rows}):
        steps = steps_of(data, proto)
        md += ["## Protocol: {}".format(proto), ""]
        for title, column, fmt, note in TABLES:
            md += ["### " + title, ""]
            if note:
                md += [note, ""]
            md += [table(data, targets, proto, steps, column, fmt), ""]
        for column, ylabel, name in (("tps_steady", "TPS (steady)", "tps"),
                                     ("txn_p99_ms", "transaction p99 (ms)", "p99")):
            svg = plot(run, data, targets, proto, steps, column, ylabel,
                       "{}-{}".format(name, proto))
            if svg:
                md += ["![{} {}]({})".format(ylabel, proto, svg), ""]
        svg = frontier(run, data, targets, proto, steps)
        if svg:
            md += ["### Frontier: TPS against transaction p99", "",
                   "Up and to the left is better; a setting is worth having"
                   " only if no other point is both higher and further left.", "",
                   "![frontier {}]({})".format(proto, svg), ""]
        md += ["### Per-statement latency at the largest step"]
        md += statements(run, targets, proto, steps[-1]) + [""]
        best_native = max((float(r["tps_steady"]) for r in rows
                           if r["protocol"] == proto and repeat_of(r["label"])[0] == "native"),
                          default=0)
        if best_native:
            md += ["Native's best steady TPS in this series: {:.0f}.".format(best_native)]
            for t in targets:
                for c in steps:
                    m = data.get((proto, c, t))
                    if m and t.startswith("module"):
                        md += ["- {} at {} connections: {:.2f} of native's best".format(
                            t, c, float(m["tps_steady"]) / best_native)]
            md += [""]
    with open(os.path.join(run, "report.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    # the headline on stdout: steady TPS per protocol
    for proto in sorted({r["protocol"] for r in rows}):
        steps = steps_of(data, proto)
        print("\nSteady TPS, protocol {}:\n".format(proto))
        print(table(data, targets, proto, steps, "tps_steady", "{:.0f}"))


if __name__ == "__main__":
    main(sys.argv[1])
