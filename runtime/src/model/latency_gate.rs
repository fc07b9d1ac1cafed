//! Each row's latency quantile, from its runs' `elapsed`: the sample quantile, its
//! order-statistic interval and, for a case with `max_latency`, the latency gate's verdict;
//! and the warning for a latency gate with too few runs to have an upper bound.
//!
//! Layer: model. Imports only `crate::types` (and the model's rows and records).

use std::ops::Range;

use crate::model::case::CaseInfo;
use crate::model::record::Record;
use crate::model::report::Row;
use crate::types::stats::latency::{quantile_min_runs, LatencyResult};
use crate::types::stats::{percent_text, ErrorPolicy, StatsConfig, Undecided, Verdict};
use crate::types::status::Outcome;

/// The quantile, level and limit a case's latency is reported and judged at.
fn terms(info: &CaseInfo, config: &StatsConfig) -> (f64, f64, Option<f64>) {
    let spec = info.latency.unwrap_or_default();
    let quantile = spec.quantile.unwrap_or(config.latency_quantile);
    // A latency gate is judged at the case's own confidence when its attribute sets one, as a
    // rate gate is.
    let level = spec
        .max_latency
        .and(spec.level.or(info.gate.and_then(|gate| gate.level)))
        .unwrap_or(config.interval.level);
    (quantile, level, spec.max_latency)
}

/// The latency of one row over its records (every record of the row's case, in any order).
pub(crate) fn row_latency(row: &Row, records: &[Record], config: &StatsConfig) -> LatencyResult {
    let (quantile, level, max_latency) = terms(&row.info, config);
    // As a rate gate does, a gated case under `errors = exclude` leaves its errored runs out;
    // otherwise an errored run took its time like any other.
    let exclude =
        config.errors == ErrorPolicy::Exclude && (max_latency.is_some() || row.gate.is_some());
    let mut times = Vec::with_capacity(records.len());
    let mut excluded = 0;
    for record in records {
        // Retries and skipped runs took no time of the case's sample.
        if record.is_retry() || record.outcome == Outcome::Stopped {
            continue;
        }
        if exclude && record.outcome == Outcome::Error {
            excluded += 1;
        } else {
            times.push(record.elapsed);
        }
    }
    LatencyResult::of(times, excluded, quantile, level, max_latency)
}

/// Sets every row's latency from its records: `records[ranges[i]]` are row `i`'s (as
/// `Report::build` lays them out).
pub(crate) fn settle(
    rows: &mut [Row],
    records: &[Record],
    ranges: &[Range<usize>],
    config: &StatsConfig,
) {
    for (row, range) in rows.iter_mut().zip(ranges) {
        row.latency = Some(row_latency(row, &records[range.clone()], config));
    }
}

/// Whether a row's latency gate fails the session under `undecided`.
pub(crate) fn fails(row: &Row, undecided: Undecided) -> bool {
    match row.latency.as_ref().and_then(|latency| latency.verdict) {
        Some(Verdict::Fail) => true,
        Some(Verdict::Undecided) => undecided == Undecided::Fail,
        Some(Verdict::Pass) | None => false,
    }
}

/// The latency gate's limit and the fewest runs with which it can pass at all (both bounds of
/// the interval exist), when the case has one: what `cargo probtest plan` shows.
pub(crate) fn gate_min_runs(info: &CaseInfo, config: &StatsConfig) -> Option<(f64, u64)> {
    let (quantile, level, max_latency) = terms(info, config);
    Some((max_latency?, quantile_min_runs(quantile, level)))
}

/// The warning for a latency gate whose case has too few runs for the interval's upper bound,
/// so that it can never pass: `classify::x: max_latency=2s (p95) at 95% needs >=72 runs; this
/// case has 10`.
pub(crate) fn infeasible(info: &CaseInfo, config: &StatsConfig) -> Option<String> {
    let (quantile, level, max_latency) = terms(info, config);
    let limit = max_latency?;
    let needed = quantile_min_runs(quantile, level);
    if info.runs == 0 || needed <= u64::from(info.runs) {
        return None;
    }
    Some(format!(
        "{}: max_latency={limit}s (p{}) at {}% needs >={needed} runs; this case has {}",
        info.case,
        percent_text(quantile),
        percent_text(level),
        info.runs
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{info, record};
    use crate::model::Report;
    use crate::types::stats::latency::LatencySpec;

    fn gated(case: &str, runs: u32, limit: f64) -> CaseInfo {
        CaseInfo {
            runs,
            latency: Some(LatencySpec {
                quantile: Some(0.5),
                max_latency: Some(limit),
                level: None,
            }),
            ..info(case)
        }
    }

    fn timed(case: &str, run: u32, outcome: Outcome, elapsed: f64) -> Record {
        Record {
            elapsed,
            ..record(case, run, outcome, 0.0, Vec::new())
        }
    }

    #[test]
    fn the_median_gate_judges_the_interval_and_fails_the_session() {
        let records: Vec<Record> = (1..=20)
            .map(|run| timed("slow", run, Outcome::Pass, 2.0 + f64::from(run) / 10.0))
            .chain((1..=20).map(|run| timed("fast", run, Outcome::Pass, f64::from(run) / 100.0)))
            .collect();
        let config = StatsConfig::default();
        let report = Report::build(
            [gated("slow", 20, 2.0), gated("fast", 20, 2.0)],
            records,
            &config,
        );
        let row = |case: &str| {
            report
                .rows
                .iter()
                .find(|row| row.info.case == case)
                .unwrap()
        };
        let slow = row("slow")
            .latency
            .clone()
            .expect("every row has a latency");
        assert_eq!(slow.verdict, Some(Verdict::Fail));
        assert_eq!(slow.total, 20);
        // Median of 2.1..=4.0 is the 10th time; ranks (6, 15) at 95% for n = 20.
        assert_eq!(slow.estimate, Some(3.0));
        let ci = slow.ci.expect("an interval");
        assert_eq!(ci.ranks, [Some(6), Some(15)]);
        assert_eq!((ci.low, ci.high), (Some(2.6), Some(3.5)));
        assert_eq!(
            row("fast").latency.as_ref().unwrap().verdict,
            Some(Verdict::Pass)
        );
        assert_eq!(report.exit_status, 1);
    }

    #[test]
    fn a_latency_gate_alone_is_judged_at_its_own_confidence() {
        let mut case = gated("x", 20, 2.0);
        let records: Vec<Record> = (1..=20)
            .map(|run| timed("x", run, Outcome::Pass, f64::from(run)))
            .collect();
        let at = |case: &CaseInfo| {
            let report = Report::build([case.clone()], records.clone(), &StatsConfig::default());
            report.rows[0].latency.clone().unwrap().ci.unwrap()
        };
        assert_eq!(
            (at(&case).level, at(&case).ranks),
            (0.95, [Some(6), Some(15)])
        );
        case.latency = case.latency.map(|spec| LatencySpec {
            level: Some(0.8),
            ..spec
        });
        // At 80% each end may miss 10%: ranks (7, 14) for the median of 20 (scipy).
        assert_eq!(
            (at(&case).level, at(&case).ranks),
            (0.8, [Some(7), Some(14)])
        );
    }

    #[test]
    fn errors_leave_a_gated_sample_only_when_excluded() {
        let records: Vec<Record> = (1..=8)
            .map(|run| timed("x", run, Outcome::Pass, 0.1))
            .chain([
                timed("x", 9, Outcome::Error, 30.0),
                timed("x", 10, Outcome::Error, 30.0),
            ])
            .collect();
        let counted = Report::build(
            [gated("x", 10, 2.0)],
            records.clone(),
            &StatsConfig::default(),
        );
        let latency = counted.rows[0].latency.clone().unwrap();
        assert_eq!((latency.total, latency.excluded), (10, 0));
        let config = StatsConfig {
            errors: ErrorPolicy::Exclude,
            ..StatsConfig::default()
        };
        let excluded = Report::build([gated("x", 10, 2.0)], records, &config);
        let latency = excluded.rows[0].latency.clone().unwrap();
        assert_eq!((latency.total, latency.excluded), (8, 2));
        assert_eq!(latency.verdict, Some(Verdict::Pass));
    }

    #[test]
    fn a_latency_gated_case_keeps_its_fixed_run_rate_gate_under_sequential_stopping() {
        use crate::types::stats::stopping::StopMode;
        use crate::types::stats::{GateSpec, Method, Rule};
        let config = StatsConfig {
            stop: StopMode::Sequential,
            ..StatsConfig::default()
        };
        let rate = GateSpec {
            rule: Rule::MinRate(0.5),
            method: None,
            level: None,
            prior: None,
        };
        let records: Vec<Record> = (1..=20)
            .map(|run| timed("x", run, Outcome::Pass, 0.1))
            .chain((1..=20).map(|run| timed("y", run, Outcome::Pass, 0.1)))
            .collect();
        let both = CaseInfo {
            gate: Some(rate),
            ..gated("x", 20, 2.0)
        };
        let rate_only = CaseInfo {
            gate: Some(rate),
            runs: 20,
            ..info("y")
        };
        let report = Report::build([both, rate_only], records, &config);
        let method = |case: &str| {
            let row = report
                .rows
                .iter()
                .find(|row| row.info.case == case)
                .unwrap();
            row.effective_gate(&config).unwrap().method
        };
        // Stopping would shrink the latency gate's sample of run times.
        assert_ne!(method("x"), Some(Method::Sequential));
        assert_eq!(method("y"), Some(Method::Sequential));
    }

    #[test]
    fn a_gate_without_enough_runs_for_an_upper_bound_is_warned() {
        let config = StatsConfig::default();
        let mut case = gated("x", 5, 2.0);
        assert_eq!(
            infeasible(&case, &config).as_deref(),
            Some("x: max_latency=2s (p50) at 95% needs >=6 runs; this case has 5")
        );
        case.runs = 6;
        assert_eq!(infeasible(&case, &config), None);
        case.latency = Some(LatencySpec {
            quantile: None,
            max_latency: None,
            level: None,
        });
        case.runs = 1;
        assert_eq!(infeasible(&case, &config), None, "no gate, no warning");
    }
}
