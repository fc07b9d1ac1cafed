//! Cases and records for tests across the crate, and the model's own tests.

use crate::model::{CaseInfo, Record, Report, Row, Totals};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::StatsConfig;
use crate::types::status::{Outcome, Status};
use crate::types::usage::TokenUsage;

pub(crate) fn info(case: &str) -> CaseInfo {
    let (short, case_id) = case.split_once("::").unwrap_or((case, case));
    CaseInfo {
        case: case.to_string(),
        package: "fixture".into(),
        module: "evals".into(),
        function: format!("bench_{short}"),
        case_id: case_id.to_string(),
        file: "tests/evals.rs".to_string(),
        line: if short == "classify" { 10 } else { 20 },
        index: u32::from(case_id.as_bytes().first().copied().unwrap_or(0)),
        runs: 10,
        params: OrderedMap(vec![("text".to_string(), format!("{case_id:?}"))]),
        gate: None,
        compare: None,
        latency: None,
        parts: Vec::new(),
    }
}

pub(crate) fn record(
    case: &str,
    run: u32,
    outcome: Outcome,
    cost: f64,
    usage: Vec<TokenUsage>,
) -> Record {
    Record {
        case: case.to_string().into(),
        package: "fixture".into(),
        module: "evals".into(),
        run,
        attempt: 1,
        outcome,
        message: (outcome != Outcome::Pass).then(|| format!("{outcome:?} in run {run}")),
        location: None,
        elapsed: 0.001,
        cost,
        usage,
        waited: 0.0,
        waited_for: None,
        replayed: None,
    }
}

/// A report over `records`, every case described.
pub(crate) fn build(records: Vec<Record>) -> Report {
    let infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
    Report::build(infos, records, &StatsConfig::default())
}

#[test]
fn rows_and_totals_come_from_records() {
    let mut records = Vec::new();
    for run in 1..=4 {
        let outcome = if run <= 3 {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        records.push(record("classify::b", run, outcome, 0.5, vec![]));
    }
    records.push(record("classify::a", 1, Outcome::Error, 0.0, vec![]));
    records.push(record("classify::a", 2, Outcome::Pass, 0.0, vec![]));
    let report = build(records);
    assert_eq!(report.rows.len(), 2);
    // Rows follow source order (line, then case index), not completion order.
    assert_eq!(report.rows[0].info.case, "classify::a");
    let b = &report.rows[1];
    assert_eq!((b.passes, b.fails, b.errors, b.total), (3, 1, 0, 4));
    assert_eq!(b.pass_rate, 75.0);
    assert_eq!(b.status, Status::Flaky);
    assert_eq!(b.cost, 2.0);
    assert_eq!(report.rows[0].status, Status::Errored);
    assert_eq!((report.totals.passes, report.totals.count), (4, 6));
    assert_eq!(report.exit_status, 1);
    let cases: Vec<(&str, u32)> = report
        .records
        .iter()
        .map(|r| (r.case.as_ref(), r.run))
        .collect();
    assert_eq!(cases[0], ("classify::a", 1));
    assert_eq!(cases[5], ("classify::b", 4));
}

#[test]
fn retries_are_kept_but_not_counted() {
    let mut retry = record("classify::a", 1, Outcome::Pass, 0.5, vec![]);
    retry.attempt = 2;
    let report = build(vec![
        record("classify::a", 1, Outcome::Fail, 0.0, vec![]),
        retry,
    ]);
    let row = &report.rows[0];
    assert_eq!((row.passes, row.fails, row.total, row.cost), (0, 1, 1, 0.0));
    assert_eq!(report.totals.retries, 1);
    assert_eq!(report.totals.count, 1);
    assert_eq!(report.records.len(), 2);
    assert_eq!(report.records[1].attempt, 2);
}

#[test]
fn a_provisional_record_can_be_taken_back() {
    let mut row = Row::new(info("classify::a"));
    let mut totals = Totals::default();
    let provisional = record("classify::a", 1, Outcome::Error, 0.0, vec![]);
    let config = StatsConfig::default();
    row.add(&provisional);
    row.settle(&config);
    totals.add(&provisional);
    assert_eq!(row.status, Status::Error);
    row.retract_provisional();
    totals.retract_provisional();
    let done = record("classify::a", 1, Outcome::Pass, 0.25, vec![]);
    row.add(&done);
    row.settle(&config);
    totals.add(&done);
    assert_eq!(
        (row.passes, row.errors, row.total, row.status),
        (1, 0, 1, Status::Pass)
    );
    assert_eq!((totals.passes, totals.errors, totals.count), (1, 0, 1));
}

#[test]
fn sums_that_overflow_stop_at_the_largest_number_with_a_warning() {
    let huge = |run| {
        let spent = TokenUsage {
            model: "m".into(),
            input_tokens: u64::MAX / 2 + 1,
            cost: 1e308,
            ..TokenUsage::default()
        };
        record("classify::a", run, Outcome::Pass, 1e308, vec![spent])
    };
    let report = build(vec![huge(1), huge(2)]);
    let row = &report.rows[0];
    assert_eq!(row.cost, f64::MAX);
    assert_eq!(report.totals.cost, f64::MAX);
    let usage = report.totals.usage.get("m").expect("the model's totals");
    assert_eq!((usage.input_tokens, usage.cost), (u64::MAX, f64::MAX));
    assert_eq!(
        report.warnings,
        [
            "the cost total overflowed and is shown as the largest number (1.7976931348623157e308)",
            "the token total of model \"m\" overflowed and is shown as the largest count (18446744073709551615)",
        ]
    );
    // A record whose own cost overflowed within its run adds the largest number, not infinity.
    let mut endless = record("classify::a", 3, Outcome::Pass, f64::INFINITY, vec![]);
    endless.cost = f64::INFINITY;
    let report = build(vec![endless]);
    assert_eq!(report.totals.cost, f64::MAX);
    assert_eq!(report.warnings.len(), 1);
    // Sums that fit warn of nothing.
    assert!(
        build(vec![record("classify::a", 1, Outcome::Pass, 1e307, vec![])])
            .warnings
            .is_empty()
    );
}
