//! A case's pass fraction across the sessions the store keeps, oldest first, and whether the
//! latest session differs from the one before it: Newcombe's interval on the difference and
//! Fisher's exact p, the machinery of the baseline comparison with one input. "This eval got
//! flakier three days ago" is a row whose last cells drop.
//!
//! Layer: model. Imports only `crate::types` and the model.

use crate::model::report::Report;
use crate::types::key::CaseKey;
use crate::types::stats::paired::{fisher_exact, newcombe};

/// One case over the sessions.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseHistory {
    /// The row id.
    pub case: String,
    /// Its package.
    pub package: String,
    /// Its module.
    pub module: String,
    /// Per session, oldest first: its first-attempt passes and runs there, `None` where the
    /// session did not run the case.
    pub sessions: Vec<Option<(u64, u64)>>,
    /// The latest session that ran the case against the one before it that did.
    pub change: Option<Change>,
}

/// The latest of a case's sessions against the one before.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Index of the earlier session in [`History::sessions`].
    pub from: usize,
    /// Index of the later one.
    pub to: usize,
    /// The later pass fraction minus the earlier.
    pub difference: f64,
    /// The low end of Newcombe's interval on the difference, at the sessions' level.
    pub low: f64,
    /// Its high end.
    pub high: f64,
    /// Fisher's exact two-sided p.
    pub p_value: f64,
    /// Whether `p_value` is below 1 − level: the pass rate changed.
    pub significant: bool,
}

/// Every case of the sessions, in the latest session's row order (cases that only earlier
/// sessions ran after them).
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// The sessions' keys, oldest first.
    pub sessions: Vec<String>,
    /// The confidence level of the intervals.
    pub level: f64,
    /// One entry per case.
    pub cases: Vec<CaseHistory>,
}

impl History {
    /// The history of `reports`, each with its session's key, oldest first.
    pub fn build(reports: &[(String, Report)]) -> History {
        let level = reports
            .last()
            .map_or(0.95, |(_, report)| report.stats_config.interval.level);
        let mut order: Vec<(String, String, String)> = Vec::new();
        for (_, report) in reports.iter().rev() {
            for row in &report.rows {
                let key = (
                    row.info.package.clone(),
                    row.info.module.clone(),
                    row.info.case.clone(),
                );
                if !order.contains(&key) {
                    order.push(key);
                }
            }
        }
        let cases = order
            .into_iter()
            .map(|(package, module, case)| {
                let key = CaseKey::new(package.as_str(), module.as_str(), case.as_str());
                let sessions: Vec<Option<(u64, u64)>> = reports
                    .iter()
                    .map(|(_, report)| {
                        report
                            .rows
                            .iter()
                            .find(|row| row.info.key() == key)
                            .map(|row| (row.passes, row.total))
                            .filter(|(_, total)| *total > 0)
                    })
                    .collect();
                let change = change(&sessions, level);
                CaseHistory {
                    case,
                    package,
                    module,
                    sessions,
                    change,
                }
            })
            .collect();
        History {
            sessions: reports.iter().map(|(key, _)| key.clone()).collect(),
            level,
            cases,
        }
    }
}

/// The latest session with runs against the one before it with runs.
fn change(sessions: &[Option<(u64, u64)>], level: f64) -> Option<Change> {
    let mut ran = sessions
        .iter()
        .enumerate()
        .rev()
        .filter_map(|(index, counts)| counts.map(|counts| (index, counts)));
    let (to, (x2, n2)) = ran.next()?;
    let (from, (x1, n1)) = ran.next()?;
    let (low, high) = newcombe(x2, n2, x1, n1, level);
    let p_value = fisher_exact(x2, n2, x1, n1);
    Some(Change {
        from,
        to,
        difference: x2 as f64 / n2 as f64 - x1 as f64 / n1 as f64,
        low,
        high,
        p_value,
        significant: p_value < 1.0 - level,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{build, record};
    use crate::types::status::Outcome;

    /// A session whose case `a::x` passed `passes` of `runs`.
    fn session(passes: u32, runs: u32) -> Report {
        build(
            (1..=runs)
                .map(|run| {
                    let outcome = if run <= passes {
                        Outcome::Pass
                    } else {
                        Outcome::Fail
                    };
                    record("a::x", run, outcome, 0.0, vec![])
                })
                .collect(),
        )
    }

    #[test]
    fn a_drop_in_the_latest_session_is_a_significant_change() {
        let reports = vec![
            ("s1".to_string(), session(19, 20)),
            ("s2".to_string(), session(20, 20)),
            ("s3".to_string(), session(8, 20)),
        ];
        let history = History::build(&reports);
        assert_eq!(history.sessions, ["s1", "s2", "s3"]);
        let [case] = history.cases.as_slice() else {
            panic!("one case: {history:?}");
        };
        assert_eq!(
            case.sessions,
            [Some((19, 20)), Some((20, 20)), Some((8, 20))]
        );
        let change = case.change.as_ref().expect("a change");
        assert_eq!((change.from, change.to), (1, 2));
        assert!((change.difference + 0.6).abs() < 1e-12);
        // scipy.stats.fisher_exact([[8, 12], [20, 0]]).pvalue
        assert!(
            (change.p_value - 4.509_515_076_812_073e-5).abs() < 1e-12,
            "{change:?}"
        );
        assert!(change.significant && change.high < 0.0, "{change:?}");
    }

    #[test]
    fn a_steady_case_shows_no_change_and_a_single_session_none() {
        let steady = History::build(&[
            ("s1".to_string(), session(7, 10)),
            ("s2".to_string(), session(8, 10)),
        ]);
        let change = steady.cases[0].change.as_ref().expect("a change");
        assert!(!change.significant && change.low < 0.0 && change.high > 0.0);
        let single = History::build(&[("s1".to_string(), session(7, 10))]);
        assert!(single.cases[0].change.is_none());
    }
}
