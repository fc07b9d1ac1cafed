#!/usr/bin/env python3
"""Reference values for probtest's statistics, computed with established implementations.

Writes runtime/tests/data/reference_stats.json, which the runtime's unit tests check every
interval method and metric against, and the statistics of comparisons and function-level
estimates: Newcombe's interval, Fisher's exact test, the intraclass correlation, and p-value
adjustments; and the anytime-valid confidence sequence of early stopping. Needs scipy and statsmodels (pip install scipy statsmodels);
the output is committed, so neither is needed to run the tests.

Usage: python3 scripts/reference_stats.py
"""

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln
from scipy.stats import beta, fisher_exact
from statsmodels.formula.api import ols
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

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


TWO_ARMS = [(0, 10, 0, 10), (10, 10, 8, 10), (8, 10, 10, 10), (3, 5, 0, 7), (1, 1, 0, 1),
            (17, 20, 9, 20), (0, 3, 3, 3), (45, 50, 30, 40), (7, 10, 7, 10), (99, 100, 90, 100)]


def two_arms():
    """Newcombe's interval on p1 - p2 (statsmodels' newcomb) and Fisher's exact p (scipy)."""
    rows = []
    for x1, n1, x2, n2 in TWO_ARMS:
        for level in [0.9, 0.95, 0.99]:
            low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb",
                                                   compare="diff", alpha=1 - level)
            rows.append(dict(x1=x1, n1=n1, x2=x2, n2=n2, level=level,
                             low=float(low), high=float(high)))
        _, p = fisher_exact([[x1, n1 - x1], [x2, n2 - x2]])
        rows[-1]["fisher"] = float(p)
    return rows


ICC_SETS = [
    [(7, 10), (3, 10), (10, 10), (0, 10), (5, 10)],
    [(1, 2), (2, 2), (0, 2), (2, 2)],
    [(4, 5), (9, 10), (1, 3), (6, 8), (2, 7), (5, 5)],
    [(9, 10), (8, 10), (9, 10), (8, 10)],
    [(5, 10), (5, 10), (6, 10)],
]


def iccs():
    """ICC(1) from a one-way ANOVA of every run's 0/1 outcome on its input (statsmodels)."""
    rows = []
    for counts in ICC_SETS:
        y, g = [], []
        for i, (x, n) in enumerate(counts):
            y += [1.0] * x + [0.0] * (n - x)
            g += [f"i{i}"] * n
        table = anova_lm(ols("y ~ C(g)", data=dict(y=np.array(y), g=g)).fit())
        msb = table["mean_sq"].iloc[0]
        msw = table["mean_sq"].iloc[1]
        total, inputs = len(y), len(counts)
        k0 = (total - sum(n * n for _, n in counts) / total) / (inputs - 1)
        rows.append(dict(counts=counts, icc=float((msb - msw) / (msb + (k0 - 1) * msw))))
    return rows


def adjustments():
    """Holm, Bonferroni and Benjamini-Hochberg adjusted p-values (statsmodels multipletests)."""
    sets = [[0.01, 0.04, 0.03, 0.2], [0.5, 0.001, 0.02, 0.02, 0.9, 0.04], [0.3], [0.04, 0.04]]
    rows = []
    for ps in sets:
        row = dict(p=ps)
        for name, method in [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]:
            row[name] = [float(v) for v in multipletests(ps, method=method)[1]]
        rows.append(row)
    return rows


def sequences():
    """The anytime-valid confidence sequence (PROB_STOP=sequential): the p at which the
    beta-binomial mixture's log wealth, log B(a + x, b + n - x)/B(a, b) - x log p
    - (n - x) log(1 - p), reaches log(1/alpha), found here by scipy's brentq on betaln rather
    than probtest's Newton iteration. At x = n the lower bound has a closed form."""
    rows = []
    for n in [1, 2, 3, 5, 10, 17, 36, 53, 100, 368, 1000]:
        for c in passes_for(n):
            for level in [0.5, 0.8, 0.9, 0.95, 0.99]:
                for a, b in [(0.5, 0.5), (1.0, 1.0)]:
                    threshold = -math.log1p(-level)

                    def lower(x, y, a, b):
                        # y = n - x non-passes; the bound below x / n.
                        if x == 0:
                            return 0.0, False
                        log_mix = float(betaln(a + x, b + y) - betaln(a, b))
                        if y == 0:
                            return math.exp(-(threshold - log_mix) / x), True

                        def g(p):
                            return log_mix - x * math.log(p) - y * math.log1p(-p) - threshold

                        root = brentq(g, 1e-300, x / (x + y), xtol=1e-300, rtol=8.9e-16,
                                      maxiter=500)
                        return float(root), False

                    low, low_closed = lower(c, n - c, a, b)
                    high_mirror, high_closed = lower(n - c, c, b, a)
                    rows.append(dict(passes=c, runs=n, level=level, a=a, b=b,
                                     low=low, high=1.0 - high_mirror,
                                     low_closed=low_closed, high_closed=high_closed))
    return rows


def main():
    out = Path(__file__).resolve().parent.parent / "runtime" / "tests" / "data" / "reference_stats.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = dict(
        generated_by="scripts/reference_stats.py (scipy.stats.beta and fisher_exact, statsmodels"
                     " proportion_confint, confint_proportions_2indep, anova_lm and multipletests)",
        intervals=intervals(),
        metrics=metrics(),
        two_arms=two_arms(),
        icc=iccs(),
        adjustments=adjustments(),
        sequences=sequences(),
    )
    out.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {len(data['intervals'])} intervals and {len(data['metrics'])} metrics to {out}")


if __name__ == "__main__":
    main()
