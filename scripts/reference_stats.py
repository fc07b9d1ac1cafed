#!/usr/bin/env python3
"""Reference values for probtest's statistics, computed with established implementations.

Writes runtime/tests/data/reference_stats.json, which the runtime's unit tests check every
interval method and metric against. Needs scipy and statsmodels (pip install scipy statsmodels);
the output is committed, so neither is needed to run the tests.

Usage: python3 scripts/reference_stats.py
"""

import json
import math
from fractions import Fraction
from pathlib import Path

from scipy.stats import beta
from statsmodels.stats.proportion import proportion_confint

RUNS = [1, 2, 3, 5, 10, 17, 20, 36, 50, 72, 100, 368, 1000]
LEVELS = [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]
PRIORS = [(1.0, 1.0), (0.5, 0.5), (2.0, 5.0)]


def passes_for(n):
    """The edges (0, 1, n-1, n) and a few points in between."""
    values = {0, 1, n // 2, (3 * n) // 4, n - 1, n}
    return sorted(v for v in values if 0 <= v <= n)


def intervals():
    rows = []
    for n in RUNS:
        for c in passes_for(n):
            for level in LEVELS:
                alpha = 1 - level
                low, high = proportion_confint(c, n, alpha=alpha, method="beta")
                rows.append(dict(method="exact", passes=c, runs=n, level=level,
                                 low=float(low), high=float(high)))
                low, high = proportion_confint(c, n, alpha=alpha, method="wilson")
                rows.append(dict(method="wilson", passes=c, runs=n, level=level,
                                 low=float(low), high=float(high)))
                for a, b in PRIORS:
                    post = beta(a + c, b + n - c)
                    rows.append(dict(method="bayes", passes=c, runs=n, level=level, a=a, b=b,
                                     low=float(post.ppf(alpha / 2)),
                                     high=float(post.ppf(1 - alpha / 2))))
    return rows


def metrics():
    rows = []
    for n in [1, 2, 5, 10, 20, 50]:
        for c in passes_for(n):
            for k in [1, 2, 3, 5, 10]:
                if k > n:
                    continue
                all_pass = Fraction(math.comb(c, k), math.comb(n, k))
                none_pass = Fraction(math.comb(n - c, k), math.comb(n, k))
                rows.append(dict(passes=c, runs=n, k=k, pass_all=float(all_pass),
                                 pass_any=float(1 - none_pass)))
    return rows


def main():
    out = Path(__file__).resolve().parent.parent / "runtime" / "tests" / "data" / "reference_stats.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = dict(
        generated_by="scripts/reference_stats.py (scipy.stats.beta, statsmodels proportion_confint)",
        intervals=intervals(),
        metrics=metrics(),
    )
    out.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {len(data['intervals'])} intervals and {len(data['metrics'])} metrics to {out}")


if __name__ == "__main__":
    main()
