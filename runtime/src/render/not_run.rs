//! The summary's text for runs a session expected and never started (`cargo probtest run`
//! lists them): the note on a row, the count on the `Overall:` line, and the `Not run:` line
//! that names the test binaries that never ran. The report files say the same
//! (`export::pieces`).
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::{Report, Row};
use crate::types::count::thousands;

/// `5 not run`, for a row with runs that never started.
pub(crate) fn row_note(row: &Row) -> Option<String> {
    (row.not_run > 0).then(|| format!("{} not run", thousands(row.not_run)))
}

/// `, 9 not run` for the `Overall:` line: runs that never started are in no count.
pub(crate) fn overall(report: &Report, out: &mut String) {
    if report.totals.not_run > 0 {
        let _ = write!(out, ", {} not run", thousands(report.totals.not_run));
    }
}

/// `9 runs in 2 cases; binary tests/b.rs (b-6c06855cbc576bfc) never ran (4 runs)`, when runs
/// never started.
pub fn text(report: &Report) -> Option<String> {
    let runs = report.totals.not_run;
    if runs == 0 {
        return None;
    }
    let cases = report.rows.iter().filter(|row| row.not_run > 0).count() as u64;
    let mut text = format!(
        "{} in {}",
        plural(runs, "run", "runs"),
        plural(cases, "case", "cases")
    );
    for binary in &report.binaries_not_run {
        let _ = write!(
            text,
            "; binary {} never ran ({})",
            binary.label,
            plural(binary.runs, "run", "runs")
        );
    }
    Some(text)
}

/// `  Not run: …` ([`text`]), when runs never started.
pub(crate) fn line(report: &Report, out: &mut String) {
    if let Some(text) = text(report) {
        let _ = writeln!(out, "  Not run: {text}");
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        thousands(count),
        if count == 1 { one } else { many }
    )
}

#[cfg(test)]
mod tests {
    use crate::model::not_run::ExpectedBinary;
    use crate::model::tests::{build, info, record};
    use crate::render::{summary, Options};
    use crate::types::status::Outcome;

    /// A session of three cases: one ran every run, one half of its runs (some failing), and
    /// one, in a binary that never ran, none.
    fn report() -> crate::model::Report {
        let mut records = Vec::new();
        for run in 1..=4 {
            records.push(record("classify::a", run, Outcome::Pass, 0.0, Vec::new()));
        }
        for run in 1..=5 {
            let outcome = if run <= 3 {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record("classify::refund", run, outcome, 0.0, Vec::new()));
        }
        let mut report = build(records);
        let runs = |case: &'static str, runs: u32| (1..=runs).map(move |run| (info(case), run));
        report.count_not_run(&[
            ExpectedBinary {
                binary: "fixture::evals".into(),
                label: "tests/evals.rs (evals-1a2b3c)".into(),
                runs: runs("classify::a", 4)
                    .chain(runs("classify::refund", 10))
                    .collect(),
            },
            ExpectedBinary {
                binary: "fixture::second".into(),
                label: "tests/second.rs (second-4d5e6f)".into(),
                runs: runs("other::z", 3).collect(),
            },
        ]);
        report
    }

    #[test]
    fn rows_and_the_session_say_what_never_started() {
        let text = summary(&report(), &Options::default());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_line_names_each_binary_that_never_ran() {
        assert_eq!(
            super::text(&report()).as_deref(),
            Some("8 runs in 2 cases; binary tests/second.rs (second-4d5e6f) never ran (3 runs)")
        );
        assert_eq!(super::text(&build(Vec::new())), None);
    }
}
