//! The session's analysis checked against pytest-probability's results on the same counts.

use crate::model::tests::{info, record};
use crate::model::Report;
use crate::types::stats::StatsConfig;
use crate::types::status::Outcome;

/// `qa` with 24 inputs of 10 runs, input i passing i % 11 of them.
pub(crate) fn qa() -> Report {
    let mut records = Vec::new();
    for i in 0..24u32 {
        for run in 1..=10u32 {
            let outcome = if run <= i % 11 {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record(&format!("qa::{i}"), run, outcome, 0.0, vec![]));
        }
    }
    let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    let mut report = Report::build(infos, records, &StatsConfig::default());
    report.analyze();
    report
}

#[test]
fn a_function_estimate_equals_the_peers() {
    let report = qa();
    // One aggregate for the function and one for the session, over the same cases.
    assert_eq!(report.aggregates.len(), 2);
    let function = &report.aggregates[0];
    assert_eq!(
        (function.scope.as_str(), function.name.as_str()),
        ("function", "qa")
    );
    assert_eq!(report.aggregates[1].name, "Overall");
    let e = function.estimate.as_ref().expect("an estimate");
    // pytest-probability's aggregate() on these counts, at its defaults (5000 resamples,
    // seed 0): the mean, the bootstrap bounds to the last bit (the same draws), ρ and the
    // projection.
    assert_eq!(e.estimate, 0.46249999999999997);
    let ci = e.ci.as_ref().expect("24 inputs are enough");
    assert_eq!((ci.low, ci.high), (0.3333333333333333, 0.5916666666666667));
    let normal = e.normal_ci.as_ref().expect("a normal interval");
    assert!((normal.low - 0.3286024734319618).abs() < 1e-12);
    assert!((normal.high - 0.5963975265680381).abs() < 1e-12);
    assert!((e.icc.expect("ρ") - 0.38030519790176437).abs() < 1e-12);
    assert!((e.width_factor.expect("factor") - 0.6650373509146594).abs() < 1e-12);
    let projection = e.projection.expect("a projection");
    assert!((projection.runs_x2 - -0.03566483266988907).abs() < 1e-12);
    assert!((projection.inputs_x2 - -0.29289321881345254).abs() < 1e-12);
    assert_eq!((e.inputs, e.runs.min, e.runs.max), (24, 10, 10));
}

#[test]
fn few_inputs_have_an_estimate_and_no_interval() {
    let mut report = qa();
    report.stats_config = StatsConfig {
        min_inputs: 30,
        ..StatsConfig::default()
    };
    report.analyze();
    let e = report.aggregates[0].estimate.as_ref().expect("an estimate");
    assert_eq!(e.ci, None);
    assert_eq!(e.suppressed.as_deref(), Some("fewer than 30 inputs"));
    assert!(e.icc.is_some(), "ρ is data, shown or not");
}

pub(crate) fn pairs(n: u32) -> Vec<crate::model::analysis::compare::Pair> {
    (0..n)
        .map(|i| {
            let base = 3 + u64::from(i % 5);
            crate::model::analysis::compare::Pair {
                input: if n > 10 {
                    format!("{i:02}")
                } else {
                    i.to_string()
                },
                baseline: (base, 10),
                arm: ((base + u64::from(i % 3)).min(10), 10),
            }
        })
        .collect()
}

pub(crate) fn compared(n: u32) -> crate::model::analysis::Comparison {
    crate::model::analysis::compare::compare_pairs(
        "triage",
        Some("model"),
        "small",
        "large",
        Some((0.05, false)),
        pairs(n),
        vec![],
        None,
        &StatsConfig::default(),
    )
}

#[test]
fn a_paired_comparison_equals_the_peers() {
    use crate::types::stats::Verdict;
    // pytest-probability's compare_pairs on the same 12 pairs: the mean difference, the paired
    // bootstrap's bounds to the last bit, the exact sign-flip p, and the margin's verdict.
    let c = compared(12);
    assert_eq!(c.difference, Some(0.10000000000000002));
    let ci = c.ci.as_ref().expect("12 pairs are enough");
    assert_eq!((ci.low, ci.high), (0.05833333333333333, 0.1416666666666667));
    assert_eq!((c.p, c.exact), (Some(0.0078125), Some(true)));
    assert_eq!(c.verdict, Some(Verdict::Pass));
    // With 4 pairs: the sign-flip p, no interval, and an UNDECIDED margin.
    let few = compared(4);
    assert_eq!(
        (few.difference, few.p),
        (Some(0.07499999999999998), Some(0.5))
    );
    assert_eq!(
        few.suppressed.as_deref(),
        Some("fewer than 10 paired inputs")
    );
    assert_eq!(few.verdict, Some(Verdict::Undecided));
    assert_eq!(compared(0).suppressed.as_deref(), Some("no paired inputs"));
}

#[test]
fn margins_read_their_verdict_off_the_interval() {
    use crate::model::analysis::margin_verdict;
    use crate::types::stats::Verdict::{Fail, Pass, Undecided};
    // Non-inferiority at 5 points: above −5 passes, below fails, across is undecided.
    assert_eq!(margin_verdict(Some((-0.04, 0.1)), 0.05, false), Pass);
    assert_eq!(margin_verdict(Some((-0.2, -0.06)), 0.05, false), Fail);
    assert_eq!(margin_verdict(Some((-0.1, 0.1)), 0.05, false), Undecided);
    // Equivalence within ±5: inside passes, wholly outside fails.
    assert_eq!(margin_verdict(Some((-0.04, 0.04)), 0.05, true), Pass);
    assert_eq!(margin_verdict(Some((0.06, 0.2)), 0.05, true), Fail);
    assert_eq!(margin_verdict(Some((-0.04, 0.06)), 0.05, true), Undecided);
    assert_eq!(margin_verdict(None, 0.05, true), Undecided);
}

#[test]
fn a_baseline_pairs_cases_by_id_and_judges_each_function() {
    use crate::model::analysis::Baseline;
    use crate::types::stats::Verdict;
    let before = qa();
    // This run: qa::0 to qa::22 only (qa::23 is gone), each passing one run fewer, and a
    // case the baseline never had.
    let mut records = Vec::new();
    for i in 0..23u32 {
        for run in 1..=10u32 {
            let passes = (i % 11).saturating_sub(1);
            let outcome = if run <= passes {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record(&format!("qa::{i}"), run, outcome, 0.0, vec![]));
        }
    }
    records.push(record("new::x", 1, Outcome::Pass, 0.0, vec![]));
    let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    let config = StatsConfig {
        margin: Some(0.05),
        ..StatsConfig::default()
    };
    let mut now = Report::build(infos, records, &config);
    let baseline = Baseline::of("before.json", &before);
    assert!(baseline.judges("qa::3", &config) && !baseline.judges("new::x", &config));
    now.analyze_with(Some(&baseline));
    let result = now.baseline.as_ref().expect("a baseline result");
    assert_eq!(result.paired, 23);
    assert_eq!(result.only_current, ["new::x"]);
    assert_eq!(result.only_baseline, ["qa::23"]);
    assert_eq!(
        result.comparisons.len(),
        1,
        "new has no paired case: no comparison"
    );
    let qa = &result.comparisons[0];
    assert_eq!(
        (qa.arm.as_str(), qa.baseline.as_str()),
        ("current", "baseline")
    );
    assert_eq!(qa.verdict, Some(Verdict::Fail));
    assert_eq!(qa.unpaired, ["23"]);
    // qa's failed runs are samples of the regression gate; its verdict fails the session.
    assert_eq!(now.exit_status, 1);
    let same = {
        let mut report = before.clone();
        report.stats_config = config.clone();
        report.analyze_with(Some(&baseline));
        report
    };
    let qa = &same.baseline.as_ref().expect("a result").comparisons[0];
    assert_eq!(
        (qa.difference, qa.verdict),
        (Some(0.0), Some(Verdict::Pass))
    );
    assert_eq!(
        same.exit_status, 0,
        "within the margin, its failed runs fail nothing"
    );
}
