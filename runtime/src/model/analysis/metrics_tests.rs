//! Metric aggregates checked against pytest-probability's `aggregate()` on the same counts:
//! estimate, intervals, the cases left out, and each reason for no interval.

use crate::model::analysis::MetricAggregate;
use crate::model::stops::Stop;
use crate::model::tests::{info, record};
use crate::model::{Aggregate, Report};
use crate::types::stats::{Metric, StatsConfig};
use crate::types::status::Outcome;

/// `qa` with 24 inputs of 10 runs (input i passing i % 11 of them) and two of 2 runs
/// (`short0` passing 1, `short1` both), analysed with pass^3 and pass@2.
fn qa(config: StatsConfig) -> Report {
    let mut records = Vec::new();
    let mut runs = |case: &str, passes: u32, total: u32| {
        for run in 1..=total {
            let outcome = if run <= passes {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record(case, run, outcome, 0.0, vec![]));
        }
    };
    for i in 0..24u32 {
        runs(&format!("qa::{i}"), i % 11, 10);
    }
    runs("qa::short0", 1, 2);
    runs("qa::short1", 2, 2);
    let config = StatsConfig {
        metrics: vec![Metric::PassAll(3), Metric::PassAny(2)],
        ..config
    };
    let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    let mut report = Report::build(infos, records, &config);
    report.analyze();
    report
}

fn metric<'a>(aggregate: &'a Aggregate, name: &str) -> &'a MetricAggregate {
    aggregate
        .metrics
        .get(name)
        .unwrap_or_else(|| panic!("no {name} in {aggregate:?}"))
}

#[test]
fn a_metric_over_the_cases_with_k_runs_equals_the_peers() {
    let report = qa(StatsConfig::default());
    let function = &report.aggregates[0];
    // pytest-probability's aggregate() on these counts at its defaults: the values to the
    // last bit, the normal interval to 1e-12.
    let all = metric(function, "pass^3");
    assert_eq!((all.k, all.inputs, all.left_out), (3, 24, 2));
    assert_eq!(all.estimate, Some(0.22916666666666666));
    let ci = all.ci.as_ref().expect("24 inputs are enough");
    assert_eq!(
        (ci.method.as_str(), ci.level, ci.low, ci.high),
        ("bootstrap", 0.95, 0.1125, 0.3638888888888889)
    );
    let normal = all.normal_ci.as_ref().expect("a normal interval");
    assert_eq!(normal.method, "normal");
    assert!((normal.low - 0.10000902148307736).abs() < 1e-12);
    assert!((normal.high - 0.3583243118502559).abs() < 1e-12);
    assert_eq!((all.suppressed.as_deref(), all.stopped), (None, 0));
    let any = metric(function, "pass@2");
    assert_eq!((any.k, any.inputs, any.left_out), (2, 26, 0));
    assert_eq!(any.estimate, Some(0.6487179487179487));
    let ci = any.ci.as_ref().expect("26 inputs are enough");
    assert_eq!((ci.low, ci.high), (0.505982905982906, 0.7786324786324786));
    // One function: the session's metrics are the same numbers.
    assert_eq!(report.aggregates[1].metrics, function.metrics);
}

#[test]
fn too_few_inputs_or_none_with_k_runs_have_no_interval_and_say_why() {
    let report = qa(StatsConfig {
        min_inputs: 25,
        ..StatsConfig::default()
    });
    let function = &report.aggregates[0];
    let all = metric(function, "pass^3");
    assert_eq!(all.estimate, Some(0.22916666666666666));
    assert_eq!((&all.ci, &all.normal_ci), (&None, &None));
    assert_eq!(all.suppressed.as_deref(), Some("fewer than 25 inputs"));
    // 26 inputs have 2 runs: enough for pass@2's interval.
    assert!(metric(function, "pass@2").ci.is_some());

    let mut short = Report::build(
        vec![info("qa::a")],
        (1..=2)
            .map(|run| record("qa::a", run, Outcome::Pass, 0.0, vec![]))
            .collect(),
        &StatsConfig {
            metrics: vec![Metric::PassAll(3)],
            ..StatsConfig::default()
        },
    );
    short.analyze();
    let none = metric(&short.aggregates[0], "pass^3");
    assert_eq!(
        (none.k, none.inputs, none.left_out, none.estimate),
        (3, 0, 1, None)
    );
    assert_eq!(
        none.suppressed.as_deref(),
        Some("no input with at least 3 runs")
    );
}

#[test]
fn cases_that_stopped_early_take_the_interval_away_and_are_counted() {
    let mut report = qa(StatsConfig::default());
    for row in &mut report.rows {
        if row.info.case == "qa::3" || row.info.case == "qa::short0" {
            row.stopped = Some(Stop::default());
        }
    }
    report.analyze();
    let function = &report.aggregates[0];
    // pytest-probability's suppress_stopped() with the same two cases: pass^3 keeps only one
    // of them (short0 has 2 runs), pass@2 both; the estimates stay, as data.
    let all = metric(function, "pass^3");
    assert_eq!(
        (all.stopped, all.ci.is_none(), all.normal_ci.is_none()),
        (1, true, true)
    );
    assert_eq!(all.suppressed.as_deref(), Some("1 case stopped early"));
    assert_eq!(all.estimate, Some(0.22916666666666666));
    let any = metric(function, "pass@2");
    assert_eq!(any.stopped, 2);
    assert_eq!(any.suppressed.as_deref(), Some("2 cases stopped early"));
    let e = function.estimate.as_ref().expect("an estimate");
    assert_eq!((e.stopped, e.ci.is_none()), (2, true));
    assert_eq!(e.suppressed.as_deref(), Some("2 cases stopped early"));

    // An interval already suppressed keeps its reason; the stopped cases are still counted.
    report.stats_config.min_inputs = 30;
    report.analyze();
    let all = metric(&report.aggregates[0], "pass^3");
    assert_eq!(all.suppressed.as_deref(), Some("fewer than 30 inputs"));
    assert_eq!(all.stopped, 1);
}

#[test]
fn a_report_kept_run_by_run_has_the_means_and_what_is_known_without_the_analysis() {
    let mut records = Vec::new();
    for run in 1..=4 {
        records.push(record("qa::a", run, Outcome::Pass, 0.0, vec![]));
    }
    records.push(record("qa::b", 1, Outcome::Pass, 0.0, vec![]));
    let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    let config = StatsConfig {
        metrics: vec![Metric::PassAll(3), Metric::PassAll(5)],
        ..StatsConfig::default()
    };
    let report = Report::build(infos, records, &config);
    let three = metric(&report.aggregates[0], "pass^3");
    assert_eq!(
        (three.inputs, three.left_out, three.estimate),
        (1, 1, Some(1.0))
    );
    assert_eq!(three.suppressed.as_deref(), Some("fewer than 10 inputs"));
    let five = metric(&report.aggregates[0], "pass^5");
    assert_eq!((five.inputs, five.left_out, five.estimate), (0, 2, None));
    assert_eq!(
        five.suppressed.as_deref(),
        Some("no input with at least 5 runs")
    );
}

#[test]
fn pass_at_k_and_pass_hat_k_are_the_peers_exact_ratios() {
    // C(7,3)/C(10,3) = 35/120 and 1 − C(3,2)/C(10,2) = 42/45, correctly rounded as Python
    // divides whole numbers.
    assert_eq!(Metric::PassAll(3).value(7, 10), Some(35.0 / 120.0));
    assert_eq!(Metric::PassAny(2).value(7, 10), Some(42.0 / 45.0));
    assert_eq!(Metric::PassAll(3).value(2, 10), Some(0.0));
    assert_eq!(Metric::PassAny(3).value(0, 10), Some(0.0));
    assert_eq!(Metric::PassAll(3).value(2, 2), None);
    // Past 2^53 the product of ratios stands in, within rounding.
    let big = Metric::PassAll(20).value(180, 200).expect("200 runs");
    assert!((big - 0.10854203729331653).abs() < 1e-12, "{big}");
}
