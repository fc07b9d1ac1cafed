//! Early stopping checked against scipy (the confidence sequence, by root finding on `betaln`)
//! and against pytest-probability itself (its sequence, and which runs its Curtailer lets run
//! on the same outcomes, with the verdict each case stopped on).

use super::*;
use crate::types::stats::sequence::confidence_sequence;
use crate::types::stats::IntervalSpec;
use serde_json::Value;

const REFERENCE: &str = include_str!("../../../../tests/data/reference_stats.json");
const PEER: &str = include_str!("../../../../tests/data/peer_stopping.json");

fn rows(text: &str, key: &str) -> Vec<Value> {
    let data: Value = serde_json::from_str(text).expect("reference data parses");
    data[key].as_array().expect("rows").clone()
}

fn number(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {row}"))
}

#[test]
fn the_confidence_sequence_matches_scipy() {
    let cases = rows(REFERENCE, "sequences");
    assert!(
        cases.len() > 500,
        "the grid covers the edges and the middle"
    );
    let mut closed = 0;
    for case in &cases {
        let (x, n) = (number(case, "passes") as u64, number(case, "runs") as u64);
        let prior = (number(case, "a"), number(case, "b"));
        let (low, high) = confidence_sequence(x, n, number(case, "level"), prior);
        for (ours, key, closed_key) in [(low, "low", "low_closed"), (high, "high", "high_closed")] {
            let theirs = number(case, key);
            let error = (ours - theirs).abs();
            if case[closed_key].as_bool() == Some(true) {
                // Closed form: the same expression, so only rounding separates them.
                closed += 1;
                assert!(error <= 1e-9 * theirs.abs(), "{case}: {key} {ours}");
            } else {
                // A root found two ways: brentq to its tolerance, Newton to the last bits.
                assert!(
                    error <= 1e-9 * theirs.abs().max(1e-3),
                    "{case}: {key} {ours}"
                );
            }
        }
    }
    assert!(closed > 50, "the closed form is checked too ({closed})");
}

#[test]
fn the_confidence_sequence_is_the_peers() {
    for case in rows(PEER, "sequences") {
        let (x, n) = (number(&case, "passes") as u64, number(&case, "runs") as u64);
        let (low, high) = confidence_sequence(x, n, number(&case, "level"), (0.5, 0.5));
        assert!((low - number(&case, "low")).abs() <= 1e-13, "{case}: {low}");
        assert!(
            (high - number(&case, "high")).abs() <= 1e-13,
            "{case}: {high}"
        );
    }
}

fn gate_of(case: &Value) -> (GateSpec, StatsConfig) {
    let bar = number(case, "bar");
    let rule = match case["rule"].as_str() {
        Some("rate") => Rule::MinRate(bar),
        _ => Rule::MinPasses(bar as u64),
    };
    let config = StatsConfig {
        interval: IntervalSpec {
            method: case["method"]
                .as_str()
                .expect("method")
                .parse()
                .expect("known"),
            level: number(case, "level"),
            prior: Prior::default(),
        },
        errors: match case["errors"].as_str() {
            Some("exclude") => ErrorPolicy::Exclude,
            _ => ErrorPolicy::Count,
        },
        stop: StopMode::parse(case["mode"].as_str().expect("mode")).expect("a mode"),
        ..StatsConfig::default()
    };
    let own = GateSpec {
        rule,
        method: None,
        level: None,
        prior: None,
    };
    let gate = judged_gate(Some(own), false, &config).expect("gated");
    (gate, config)
}

/// The peer's Curtailer loop with probtest's rule: the runs that ran, and the verdict and the
/// runs seen when the case was decided.
fn simulate(
    gate: &GateSpec,
    config: &StatsConfig,
    outcomes: &str,
) -> (u64, Option<(Verdict, u64)>) {
    let planned = outcomes.len() as u64;
    let mut counts = [0u64; 3];
    let (mut seen, mut ran) = (0, 0);
    let mut stopped = None;
    for outcome in outcomes.chars() {
        seen += 1;
        if stopped.is_some() {
            continue;
        }
        ran += 1;
        counts[match outcome {
            'P' => 0,
            'F' => 1,
            _ => 2,
        }] += 1;
        if seen < planned {
            stopped = decided(gate, config, counts, planned - seen).map(|v| (v, seen));
        }
    }
    (ran, stopped)
}

#[test]
fn the_same_runs_stop_as_under_the_peer_with_the_same_verdicts() {
    let cases = rows(PEER, "stops");
    assert!(cases.len() > 500);
    let mut skipped = 0;
    for case in &cases {
        let (gate, config) = gate_of(case);
        let outcomes = case["outcomes"].as_str().expect("outcomes");
        let (ran, stopped) = simulate(&gate, &config, outcomes);
        assert_eq!(ran, number(case, "ran") as u64, "{case}");
        let verdict = stopped.map(|(verdict, _)| serde_json::to_value(verdict).expect("a verdict"));
        assert_eq!(verdict.unwrap_or(Value::Null), case["verdict"], "{case}");
        assert_eq!(
            stopped.map(|(_, after)| after),
            case["after"].as_u64(),
            "{case}"
        );
        skipped += outcomes.len() as u64 - ran;
    }
    assert!(
        skipped > 1000,
        "most cases stop early ({skipped} runs skipped)"
    );
}

fn rate_gate(bar: f64) -> GateSpec {
    GateSpec {
        rule: Rule::MinRate(bar),
        method: None,
        level: None,
        prior: None,
    }
}

#[test]
fn a_curtailed_verdict_is_the_one_every_run_would_give() {
    let config = StatsConfig {
        stop: StopMode::Curtail,
        ..StatsConfig::default()
    };
    let gate = rate_gate(0.5);
    let n = 30;
    for passes in 0..=n {
        for fails in 0..=(n - passes) {
            let remaining = n - passes - fails;
            let Some(verdict) = settled(&gate, &config, [passes, fails, 0], remaining) else {
                continue;
            };
            // Every way the remaining runs could go gives the same verdict.
            for more in 0..=remaining {
                let all = gate.judge(&config, passes + more, fails + remaining - more, 0);
                assert_eq!(all.verdict, verdict, "{passes}/{fails} +{more}/{remaining}");
            }
        }
    }
    assert_eq!(
        settled(&gate, &config, [0, 0, 0], 30),
        None,
        "never before a run"
    );
}

#[test]
fn sequential_judges_rate_gates_on_the_sequence_and_leaves_the_rest() {
    let sequential = StatsConfig {
        stop: StopMode::Sequential,
        ..StatsConfig::default()
    };
    let gate = judged_gate(Some(rate_gate(0.9)), false, &sequential).expect("gated");
    assert_eq!(gate.method, Some(Method::Sequential));
    assert_eq!(gate.prior, Some(Prior { a: 0.5, b: 0.5 }));
    // The peer's figure: 53 of 53 for a 90% bar at 95%, against 36 with Clopper-Pearson.
    assert_eq!(gate.runs_needed(&sequential), Some(53));
    assert_eq!(rate_gate(0.9).runs_needed(&sequential), Some(36));
    let count = GateSpec {
        rule: Rule::MinPasses(5),
        ..rate_gate(0.0)
    };
    assert_eq!(judged_gate(Some(count), false, &sequential), Some(count));
    // A margin needs every run: nothing stops, and the gate stays as written.
    assert_eq!(
        judged_gate(Some(rate_gate(0.9)), true, &sequential),
        Some(rate_gate(0.9))
    );
    assert!(!stoppable(Some(&rate_gate(0.9)), true, &sequential));
    assert!(!stoppable(
        Some(&rate_gate(0.9)),
        false,
        &StatsConfig::default()
    ));
}

#[test]
fn stop_modes_parse_with_the_variable_in_the_error() {
    assert_eq!(StopMode::parse("Curtail"), Ok(StopMode::Curtail));
    assert_eq!(StopMode::parse(" sequential "), Ok(StopMode::Sequential));
    assert_eq!(StopMode::parse("off"), Ok(StopMode::Off));
    assert_eq!(
        StopMode::parse("early"),
        Err("expected off, curtail or sequential, got `early`".to_string())
    );
}
