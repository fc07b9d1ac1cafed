//! Describing every case of the binary as the process joins the store, when libtest was asked
//! to run them all: each case's first run then records in its slot like any other run, where
//! otherwise it describes its case to the log on its own thread, one write per case, while the
//! case's next run (started at the same moment on libtest's other thread) waits for the number.
//!
//! Layer: harness.

use std::ffi::OsString;
use std::sync::OnceLock;

use super::process;
use crate::harness::registry::{self, Case};
use crate::model::CaseInfo;
use crate::store::writer::SessionWriter;
use crate::types::key::CaseKey;

/// Describes and numbers every case of the binary, when this process records in slots and
/// runs every test; otherwise (a filter, `--exact`, `--skip`, `--ignored`), each case's first
/// run describes its case, so that a run of one test describes one case.
pub(super) fn describe_cases(writer: &SessionWriter) {
    if !writer.has_slots() || !runs_every_test(std::env::args_os()) {
        return;
    }
    let mut cases: Vec<&'static Case> = registry::cases().collect();
    // In key order, as a process's first runs list its cases (libtest runs tests by name): the
    // report's build then pairs them with their rows without sorting them.
    let key = |case: &Case| CaseKey::new(case.bench.package(), case.bench.module(), case.row_id);
    let ascending = (1..cases.len()).all(|i| key(cases[i - 1]).compare(&key(cases[i])).is_lt());
    if !ascending {
        cases.sort_by(|a, b| key(a).compare(&key(b)));
    }
    let described: Vec<(&CaseInfo, &OnceLock<u32>)> = cases
        .iter()
        .map(|case| (case.info(), case.slot_ref()))
        .collect();
    if writer.number_all_in_slots(&described).is_err() {
        // Each case's first run describes it instead, and reports what goes wrong.
        return;
    }
    let mut process = process();
    for case in cases {
        if case.newly_listed() {
            process.cases.push(case);
        }
    }
}

/// Whether libtest's arguments (`args`, the program first) select every test: none but
/// options that do not choose tests. Anything else, a filter included, says no.
fn runs_every_test(args: impl IntoIterator<Item = OsString>) -> bool {
    const FLAGS: [&str; 8] = [
        "--nocapture",
        "--no-capture",
        "--show-output",
        "-q",
        "--quiet",
        "--report-time",
        "--ensure-time",
        "--shuffle",
    ];
    const WITH_VALUE: [&str; 6] = [
        "--test-threads",
        "--color",
        "--format",
        "--logfile",
        "--shuffle-seed",
        "-Z",
    ];
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        let Some(arg) = arg.to_str() else {
            return false;
        };
        if FLAGS.contains(&arg) {
            continue;
        }
        if WITH_VALUE.contains(&arg) {
            // The option's value, whatever it is.
            args.next();
            continue;
        }
        let with_value = arg
            .split_once('=')
            .is_some_and(|(name, _)| WITH_VALUE.contains(&name));
        if !with_value {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::runs_every_test;

    fn every(args: &[&str]) -> bool {
        runs_every_test(
            std::iter::once("/target/debug/deps/evals-0123")
                .chain(args.iter().copied())
                .map(Into::into),
        )
    }

    #[test]
    fn only_options_that_choose_no_tests_run_every_test() {
        assert!(every(&[]));
        assert!(every(&["--nocapture", "-q"]));
        assert!(every(&["--test-threads", "1", "--color", "never"]));
        assert!(every(&[
            "--test-threads=2",
            "--format=terse",
            "-Z",
            "unstable-options"
        ]));
        for selecting in [
            &["refund"][..],
            &["--exact", "evals::refund::run01"],
            &["--skip", "slow"],
            &["--ignored"],
            &["--include-ignored"],
            &["--list"],
            &["--test-threads", "2", "refund"],
            &["--unknown-option"],
        ] {
            assert!(!every(selecting), "{selecting:?}");
        }
    }
}
