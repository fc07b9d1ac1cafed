//! Runs a session expected and never started: each test binary's generated items that its
//! runner was to run (as `cargo probtest run` listed them), against the runs the session
//! recorded. A run that started is in the records (an error if it never finished); a run that
//! never started is counted here, per row and per binary, and is never a pass. A case none of
//! whose runs started still gets its row.
//!
//! Layer: model.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::model::case::CaseInfo;
use crate::model::report::{Report, Row};
use crate::types::key::CaseKey;

/// The generated items one test binary was expected to run: its runner's id for it, how to
/// name it to a reader, and each item's case and run.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(not(feature = "_cli"), allow(dead_code))]
pub struct ExpectedBinary {
    /// The binary's id, as nextest names it (`evals::triage`).
    pub binary: String,
    /// How a reader knows the binary: its source and its executable's name.
    pub label: String,
    /// The case and run of each generated item the runner was to run.
    pub runs: Vec<(CaseInfo, u32)>,
}

/// A test binary none of whose expected runs started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryNotRun {
    /// The binary's id, as nextest names it.
    pub binary: String,
    /// Its source and its executable's name.
    pub label: String,
    /// The runs it was to run.
    pub runs: u64,
}

impl Report {
    /// Counts the runs of `expected` that no record started: on each row (a case with none
    /// started gets a row of its own), in the totals, and per binary when none of a binary's
    /// runs started. Runs not run fail the session: their outcomes are unknown.
    #[cfg_attr(not(feature = "_cli"), allow(dead_code))]
    pub(crate) fn count_not_run(&mut self, expected: &[ExpectedBinary]) {
        let started: HashSet<(CaseKey<&str>, u32)> = self
            .records
            .iter()
            .map(|record| (record.key(), record.run))
            .collect();
        let mut missing: BTreeMap<CaseKey, (&CaseInfo, BTreeSet<u32>)> = BTreeMap::new();
        let mut binaries = Vec::new();
        for binary in expected {
            let mut runs = BTreeSet::new();
            let mut any_started = false;
            for (info, run) in &binary.runs {
                runs.insert((info.key(), *run));
                if started.contains(&(info.key(), *run)) {
                    any_started = true;
                } else {
                    missing
                        .entry(info.key().to_owned_key())
                        .or_insert_with(|| (info, BTreeSet::new()))
                        .1
                        .insert(*run);
                }
            }
            if !any_started && !runs.is_empty() {
                binaries.push(BinaryNotRun {
                    binary: binary.binary.clone(),
                    label: binary.label.clone(),
                    runs: runs.len() as u64,
                });
            }
        }
        if missing.is_empty() {
            return;
        }
        let mut added = false;
        for (key, (info, runs)) in missing {
            let count = runs.len() as u64;
            match self
                .rows
                .iter_mut()
                .find(|row| row.info.key().same(&key.borrowed()))
            {
                Some(row) => row.not_run = count,
                None => {
                    let mut row = Row::new(info.clone());
                    row.settle(&self.stats_config);
                    row.not_run = count;
                    self.rows.push(row);
                    added = true;
                }
            }
            self.totals.not_run += count;
        }
        if added {
            // Rows stay in source order; a stable sort keeps the built order among equals.
            self.rows
                .sort_by(|a, b| a.info.order_key().cmp(&b.info.order_key()));
        }
        self.binaries_not_run = binaries;
        self.exit_status = self.exit_status.max(1);
    }
}

impl Row {
    /// Whether no run of the row started, and some were expected: its only news is what did
    /// not run.
    pub fn never_started(&self) -> bool {
        self.total == 0 && self.not_run > 0 && self.stopped.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{build, info, record};
    use crate::types::status::{Outcome, Status};

    fn expected(binary: &str, cases: &[(&str, u32)]) -> ExpectedBinary {
        ExpectedBinary {
            binary: binary.to_string(),
            label: format!("tests/{binary}.rs"),
            runs: cases
                .iter()
                .flat_map(|&(case, runs)| (1..=runs).map(move |run| (info(case), run)))
                .collect(),
        }
    }

    #[test]
    fn runs_that_never_started_are_counted_per_row_per_binary_and_fail_the_session() {
        let mut records: Vec<_> = (1..=5)
            .map(|run| record("classify::a", run, Outcome::Pass, 0.0, Vec::new()))
            .collect();
        // A retry's run is the same run, started once.
        records.push(crate::model::Record {
            attempt: 2,
            ..record("classify::a", 5, Outcome::Pass, 0.0, Vec::new())
        });
        let mut report = build(records);
        assert_eq!(report.exit_status, 0);
        report.count_not_run(&[
            expected("a", &[("classify::a", 10)]),
            expected("b", &[("other::z", 4)]),
        ]);
        let rows: Vec<(&str, u64, u64, Status)> = report
            .rows
            .iter()
            .map(|row| (row.info.case.as_str(), row.total, row.not_run, row.status))
            .collect();
        assert_eq!(
            rows,
            [
                ("classify::a", 5, 5, Status::Pass),
                ("other::z", 0, 4, Status::Error)
            ]
        );
        assert!(report.rows[1].never_started());
        assert_eq!(report.totals.not_run, 9);
        assert_eq!(
            report.binaries_not_run,
            [BinaryNotRun {
                binary: "b".into(),
                label: "tests/b.rs".into(),
                runs: 4
            }]
        );
        assert_eq!(report.exit_status, 1);
    }

    #[test]
    fn a_session_that_ran_everything_expected_is_unchanged() {
        let records: Vec<_> = (1..=3)
            .map(|run| record("classify::a", run, Outcome::Fail, 0.0, Vec::new()))
            .collect();
        let built = build(records);
        let mut report = built.clone();
        // Listed twice (nextest lists a binary for its ignored tests too): counted once.
        report.count_not_run(&[
            expected("a", &[("classify::a", 3)]),
            expected("a", &[("classify::a", 3)]),
        ]);
        assert_eq!(report, built);
    }
}
