#!/usr/bin/env python3
"""Early stopping as pytest-probability decides it, for probtest's tests to agree with.

Writes runtime/tests/data/peer_stopping.json from the installed pytest-probability (0.3.0):
its confidence sequence on a grid of counts, and, for gates under --prob-stop=curtail and
--prob-stop=sequential, the runs its Curtailer lets run on fixed sequences of outcomes (the
same loop: after each run, Gate.decided() on the tally, with the runs not yet seen remaining),
with the verdict each case stopped on. The output is committed.

Usage: /path/to/venv-with-pytest-probability/bin/python scripts/peer_stopping.py
"""

import json
import random
from pathlib import Path

from pytest_probability import stats
from pytest_probability.plugin import Gate, StatsConfig

LEVELS = [0.5, 0.9, 0.95, 0.99]


def sequences():
    rows = []
    for n in [1, 2, 3, 5, 10, 20, 36, 53, 100, 1000]:
        for x in sorted({0, 1, n // 2, (9 * n) // 10, n - 1, n}):
            if not 0 <= x <= n:
                continue
            for level in LEVELS:
                low, high = stats.confidence_sequence(x, n, level)
                rows.append(dict(passes=x, runs=n, level=level, low=low, high=high))
    return rows


def gates():
    out = []
    for rule, bar in [("rate", 0.9), ("rate", 0.8), ("rate", 0.5), ("count", 15)]:
        for method in ["exact", "wilson"]:
            for level in [0.9, 0.95]:
                for errors in ["count", "exclude"]:
                    out.append((rule, bar, method, level, errors))
    return out


def simulate(gate, outcomes):
    """The Curtailer's loop: which runs ran, and the verdict it stopped on."""
    planned = len(outcomes)
    passes = fails = errors = seen = 0
    decided = None
    ran = 0
    for outcome in outcomes:
        if decided is not None:
            seen += 1
            continue
        ran += 1
        seen += 1
        if outcome == "P":
            passes += 1
        elif outcome == "E":
            errors += 1
        else:
            fails += 1
        if seen < planned:
            verdict = gate.decided(passes, fails, errors, planned - seen)
            if verdict is not None:
                decided = (verdict, seen)
    return ran, decided


def stops():
    rng = random.Random(15)
    rows = []
    for rule, bar, method, level, errors in gates():
        for mode in ["curtail", "sequential"]:
            for runs in [20, 40, 60]:
                for rate in [0.5, 0.85, 0.97, 1.0]:
                    outcomes = "".join(
                        "P" if rng.random() < rate else ("E" if rng.random() < 0.2 else "F")
                        for _ in range(runs)
                    )
                    cfg = StatsConfig(method=method, level=level)
                    gate = Gate(
                        rule=rule,
                        stats=cfg,
                        min_rate=bar if rule == "rate" else None,
                        min_passes=bar if rule == "count" else None,
                        errors=errors,
                        runs=runs,
                    )
                    if mode == "sequential" and rule == "rate":
                        gate = gate.as_sequential()
                    ran, decided = simulate(gate, outcomes)
                    rows.append(dict(
                        rule=rule, bar=bar, method=method, level=level, errors=errors,
                        mode=mode, outcomes=outcomes, ran=ran,
                        verdict=decided[0] if decided else None,
                        after=decided[1] if decided else None,
                    ))
    return rows


def main():
    out = Path(__file__).resolve().parent.parent / "runtime" / "tests" / "data" / "peer_stopping.json"
    data = dict(
        generated_by="scripts/peer_stopping.py (pytest-probability 0.3.0: stats.confidence_sequence,"
                     " Gate.decided and the Curtailer's loop)",
        sequences=sequences(),
        stops=stops(),
    )
    out.write_text(json.dumps(data, indent=0) + "\n")
    print(f"wrote {len(data['sequences'])} intervals and {len(data['stops'])} stops to {out}")


if __name__ == "__main__":
    main()
