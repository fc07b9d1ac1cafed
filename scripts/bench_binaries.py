#!/usr/bin/env python3
"""Whole test binaries timed side by side: wall time of each kind, and its ratio to the first.

Part of scripts/bench.sh. Each kind is a test binary run directly from its crate's directory
(as cargo runs it) with extra environment variables; the kinds take turns run by run in a
rotating order, so that drift on a shared machine hits every kind alike. A kind that writes a
report gets a session of its own per process (PROB_SESSION), so that runs do not pile up in one
session, nor does one kind fold another's.

Usage: bench_binaries.py REPS LABEL=DIR=BINARY[=VAR:VALUE,VAR:VALUE] ...

Prints one line per kind: median wall time, quartiles, the median's ratio to the first kind's
median, and the paired ratio: each round's time of the kind over the first kind's time in the
same round (run moments apart, so both met the same machine), as the median over the rounds
with a 95% bootstrap interval. Drift between rounds cancels out of the paired ratio, which is
the figure to hold against a target.
"""

import itertools
import os
import random
import statistics
import subprocess
import sys
import time


def parse(spec):
    parts = spec.split("=", 3)
    if len(parts) < 3:
        sys.exit(f"bench_binaries: expected LABEL=DIR=BINARY[=ENV], got {spec!r}")
    label, directory, binary = parts[:3]
    env = {}
    if len(parts) == 4 and parts[3]:
        for pair in parts[3].split(","):
            name, _, value = pair.partition(":")
            env[name] = value
    return label, directory, binary, env


SESSIONS = itertools.count()


def run_once(directory, binary, env):
    full = dict(os.environ)
    full.update(env)
    if "PROB_JSON" in env:
        # One session per process: kinds sharing a session would fold each other's runs.
        full["PROB_SESSION"] = f"bench-binaries-{os.getpid()}-{next(SESSIONS)}"
    start = time.perf_counter()
    result = subprocess.run(
        [binary], cwd=directory, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench_binaries: {binary} exited with {result.returncode}")
    return elapsed


def paired_ratio(times, base_times, resamples=2000):
    """The median of the per-round ratios, with a percentile bootstrap 95% interval (rounds
    resampled whole, with a fixed seed so that a report reads the same when rerun on the same
    times)."""
    ratios = [t / b for t, b in zip(times, base_times)]
    median = statistics.median(ratios)
    if len(ratios) < 2:
        return median, median, median
    draw = random.Random(0)
    medians = sorted(
        statistics.median(draw.choices(ratios, k=len(ratios))) for _ in range(resamples)
    )
    return median, medians[int(0.025 * resamples)], medians[int(0.975 * resamples) - 1]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    reps = int(sys.argv[1])
    kinds = [parse(spec) for spec in sys.argv[2:]]
    times = {label: [] for label, *_ in kinds}
    # One warm-up each: page cache, session directories.
    for _, directory, binary, env in kinds:
        run_once(directory, binary, env)
    for rep in range(reps):
        order = kinds[rep % len(kinds):] + kinds[: rep % len(kinds)]
        for label, directory, binary, env in order:
            times[label].append(run_once(directory, binary, env))
    first = times[kinds[0][0]]
    base = statistics.median(first)
    for label, *_ in kinds:
        values = sorted(times[label])
        median = statistics.median(values)
        quartiles = statistics.quantiles(values, n=4) if len(values) > 1 else [median] * 3
        line = (
            f"  {label:<34} {median:8.3f} s  [{quartiles[0]:.3f}, {quartiles[2]:.3f}]"
            f"  {median / base:5.2f}x"
        )
        if label != kinds[0][0]:
            paired, low, high = paired_ratio(times[label], first)
            line += f"  paired {paired:.2f}x [{low:.2f}, {high:.2f}]"
        print(line)


if __name__ == "__main__":
    main()
