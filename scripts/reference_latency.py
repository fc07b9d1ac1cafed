#!/usr/bin/env python3
"""Reference values for probtest's latency quantiles, computed with scipy.

Writes runtime/tests/data/reference_latency.json: binomial tails (scipy.stats.binom), the
order-statistic ranks of the distribution-free quantile interval and their coverage, the
fewest runs for a complete interval, and sample quantiles (numpy's "inverted_cdf", Hyndman
and Fan's type 1). The ranks are found by scanning every rank with scipy's tails, not by the
bisection the runtime uses, so the two are independent. Needs scipy (pip install scipy); the
output is committed, so scipy is not needed to run the tests.

Usage: python3 scripts/reference_latency.py
"""

import json
from pathlib import Path

import numpy as np
from scipy.stats import binom

RUNS = [1, 2, 5, 6, 10, 20, 30, 45, 59, 72, 73, 100, 299, 300, 1000]
QUANTILES = [0.1, 0.5, 0.9, 0.95, 0.99]
LEVELS = [0.8, 0.9, 0.95, 0.99]
SLACK = 1e-12


def ranks(n, q, level):
    tail = (1.0 - level) / 2.0 * (1.0 + SLACK)
    low = [r for r in range(1, n + 1) if binom.cdf(r - 1, n, q) <= tail]
    high = [s for s in range(1, n + 1) if binom.sf(s - 1, n, q) <= tail]
    return (max(low) if low else None, min(high) if high else None)


def coverage(n, q, r, s):
    miss_low = binom.cdf(r - 1, n, q) if r is not None else 0.0
    miss_high = binom.sf(s - 1, n, q) if s is not None else 0.0
    return max(0.0, 1.0 - miss_low - miss_high)


def min_runs(q, level):
    n = 1
    while None in ranks(n, q, level):
        n += 1
    return n


def main():
    tails = []
    for n in [1, 5, 20, 72, 300, 1000]:
        for q in QUANTILES:
            for k in sorted({0, 1, n // 2, int(n * q), n - 1}):
                tails.append(
                    {"k": k, "n": n, "p": q, "cdf": binom.cdf(k, n, q), "sf": binom.sf(k, n, q)}
                )
    intervals = []
    for n in RUNS:
        for q in QUANTILES:
            for level in LEVELS:
                r, s = ranks(n, q, level)
                intervals.append(
                    {"n": n, "q": q, "level": level, "r": r, "s": s,
                     "coverage": coverage(n, q, r, s)}
                )
    smallest = [
        {"q": q, "level": level, "n": min_runs(q, level)} for q in QUANTILES for level in LEVELS
    ]
    rng = np.random.default_rng(15)
    samples = []
    for n in [1, 7, 20, 100]:
        times = sorted(float(t) for t in rng.lognormal(0.0, 0.5, n))
        for q in QUANTILES:
            samples.append(
                {"times": times, "q": q,
                 "quantile": float(np.quantile(times, q, method="inverted_cdf"))}
            )
    out = {"tails": tails, "intervals": intervals, "min_runs": smallest, "samples": samples}
    path = Path(__file__).resolve().parent.parent / "runtime/tests/data/reference_latency.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
