//! The pieces of text every report file shares with the terminal summary: a row's fraction,
//! interval and doctor command, the totals' and gates' lines, a row's failing runs grouped by
//! what they said.
//! `cargo-probtest`'s Markdown and JUnit XML use them too (through the internal `_cli`
//! feature), so that every file says what the terminal says.
//!
//! Layer: export.

use std::collections::HashMap;

use crate::model::{Record, Report, Row};
use crate::render::bound_percent;
use crate::types::key::CaseKey;
use crate::types::stats::Verdict;
use crate::types::status::{Outcome, Status};

/// Each row's records, in row order: a report lists records in row order, but one read from a
/// file may not, so they are matched by key.
pub fn records_by_row(report: &Report) -> Vec<Vec<&Record>> {
    let index: HashMap<CaseKey<&str>, usize> = report
        .rows
        .iter()
        .enumerate()
        .map(|(position, row)| (row.info.key(), position))
        .collect();
    let mut grouped = vec![Vec::new(); report.rows.len()];
    for record in &report.records {
        if let Some(&position) = index.get(&record.key()) {
            grouped[position].push(record);
        }
    }
    grouped
}

/// Whether a row is anything but a clean pass: a run that failed or errored, or a gate that
/// did not pass.
pub fn needs_attention(row: &Row) -> bool {
    row.status != Status::Pass
        || row.gate.is_some_and(|gate| gate.verdict != Verdict::Pass)
        || row.not_run > 0
}

/// `5 not run`, for a row with runs that never started, as the summary's note says it.
pub fn not_run_note(row: &Row) -> Option<String> {
    crate::render::not_run::row_note(row)
}

/// The status words of a row, then what never started: `FLAKY, 5 not run`; a row none of whose
/// runs started says that alone. Empty for a clean pass.
pub fn status_with_not_run(row: &Row) -> String {
    let status = if row.never_started() {
        String::new()
    } else {
        Report::row_status_text(row)
    };
    match (not_run_note(row), status.is_empty()) {
        (None, _) => status,
        (Some(note), true) => note,
        (Some(note), false) => format!("{status}, {note}"),
    }
}

/// `9 runs in 2 cases; binary tests/b.rs (b-1a2b) never ran (4 runs)`, as the summary's
/// `Not run:` line says it; `None` when every expected run started.
pub fn not_run_text(report: &Report) -> Option<String> {
    crate::render::not_run::text(report)
}

/// A gate verdict as the terminal's gates block spells it.
pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Undecided => "UNDECIDED",
    }
}

/// `Overall: 24/40 passed (60%), 3 errored`, as the summary's totals line says it.
pub fn overall_text(report: &Report) -> String {
    let totals = &report.totals;
    let mut text = format!(
        "Overall: {}/{} passed ({:.0}%)",
        totals.passes, totals.count, totals.pass_rate
    );
    if totals.errors > 0 {
        text.push_str(&format!(", {} errored", totals.errors));
    }
    if totals.retries > 0 {
        let noun = if totals.retries == 1 {
            "retry"
        } else {
            "retries"
        };
        text.push_str(&format!(", {} {noun} not counted", totals.retries));
    }
    if totals.not_run > 0 {
        text.push_str(&format!(", {} not run", totals.not_run));
    }
    text
}

/// `1 passed, 1 failed`: the rows' gate verdicts, as the summary's `Gates:` line says them;
/// `None` without gates.
pub fn gates_text(report: &Report) -> Option<String> {
    let verdicts: Vec<Verdict> = report
        .rows
        .iter()
        .filter_map(|row| row.gate.map(|gate| gate.verdict))
        .collect();
    if verdicts.is_empty() {
        return None;
    }
    let count = |verdict: Verdict| verdicts.iter().filter(|v| **v == verdict).count();
    let mut parts = vec![format!("{} passed", count(Verdict::Pass))];
    for (verdict, word) in [(Verdict::Fail, "failed"), (Verdict::Undecided, "undecided")] {
        if count(verdict) > 0 {
            parts.push(format!("{} {word}", count(verdict)));
        }
    }
    Some(parts.join(", "))
}

/// `7/10`.
pub fn fraction(row: &Row) -> String {
    format!("{}/{}", row.passes, row.total)
}

/// `[35%, 93%]`, as the summary's interval column shows it: only for a row of more than one
/// run, and not when intervals are turned off.
pub fn interval_text(report: &Report, row: &Row) -> Option<String> {
    let ci = row.ci.as_ref().filter(|_| row.total > 1)?;
    report
        .stats_config
        .intervals
        .then(|| format!("[{}, {}]", bound_percent(ci.low), bound_percent(ci.high)))
}

/// The command that says why a flaky or errored case is so, as the summary's hint names it.
pub fn doctor_command(row: &Row) -> Option<String> {
    matches!(row.status, Status::Flaky | Status::Errored)
        .then(|| crate::render::text::doctor_command(&row.info))
}

/// Runs of one row that failed or errored the same way: one outcome, message and place.
#[derive(Clone, Debug, PartialEq)]
pub struct FailureGroup<'a> {
    /// `fail` or `error`.
    pub outcome: Outcome,
    /// What the runs said, whole (every line the record kept); `None` when they said nothing.
    pub message: Option<&'a str>,
    /// Where they panicked.
    pub location: Option<&'a str>,
    /// Their run numbers, ascending, each once.
    pub runs: Vec<u32>,
}

/// At most this many spans of run numbers are listed in a group's heading; the JSON report
/// has them all.
const LISTED_SPANS: usize = 12;

impl FailureGroup<'_> {
    /// `7 runs (1-4, 6, 8, 9) failed at tests/evals.rs:41:9`, or `run 3 errored`: each run's
    /// number once.
    pub fn heading(&self) -> String {
        let word = match self.outcome {
            Outcome::Error => "errored",
            _ => "failed",
        };
        let mut text = match self.runs.as_slice() {
            [run] => format!("run {run} {word}"),
            runs => format!("{} runs ({}) {word}", runs.len(), run_spans(runs)),
        };
        if let Some(location) = self.location {
            text.push_str(" at ");
            text.push_str(location);
        }
        text
    }
}

/// `1-4, 6, 8, 9`: ascending run numbers, three or more in a row as a span, at most
/// `LISTED_SPANS` spans then `…`.
pub fn run_spans(runs: &[u32]) -> String {
    let mut spans: Vec<String> = Vec::new();
    let mut at = 0;
    while at < runs.len() {
        let mut end = at;
        while end + 1 < runs.len() && runs[end + 1] == runs[end].saturating_add(1) {
            end += 1;
        }
        if spans.len() == LISTED_SPANS {
            spans.push("…".to_string());
            break;
        }
        match end - at {
            0 => spans.push(runs[at].to_string()),
            1 => {
                spans.push(runs[at].to_string());
                end = at;
            }
            _ => spans.push(format!("{}-{}", runs[at], runs[end])),
        }
        at = end + 1;
    }
    spans.join(", ")
}

/// A row's failing and erroring runs, grouped by what they said (outcome, message and place),
/// in the order of each group's first run: ten runs that gave the same wrong answer are one
/// group of ten, not ten lines.
pub fn failure_groups<'a>(records: &[&'a Record]) -> Vec<FailureGroup<'a>> {
    let mut failing: Vec<&'a Record> = records
        .iter()
        .copied()
        .filter(|record| matches!(record.outcome, Outcome::Fail | Outcome::Error))
        .collect();
    failing.sort_by_key(|record| record.run);
    let mut groups: Vec<FailureGroup<'a>> = Vec::new();
    let mut index: HashMap<(Outcome, Option<&str>, Option<&str>), usize> = HashMap::new();
    for record in failing {
        let key = (
            record.outcome,
            record.message.as_deref(),
            record.location.as_deref(),
        );
        let at = *index.entry(key).or_insert_with(|| {
            groups.push(FailureGroup {
                outcome: key.0,
                message: key.1,
                location: key.2,
                runs: Vec::new(),
            });
            groups.len() - 1
        });
        let runs = &mut groups[at].runs;
        // A retried run's attempts share its number.
        if runs.last() != Some(&record.run) {
            runs.push(record.run);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::record;

    fn failed(run: u32, outcome: Outcome, message: &str, location: &str) -> Record {
        let mut record = record("triage::refund", run, outcome, 0.0, Vec::new());
        record.message = Some(message.to_string());
        record.location = Some(location.to_string());
        record
    }

    #[test]
    fn identical_failures_are_one_group_with_each_run_listed_once() {
        let wrong = "assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\"";
        let at = "tests/evals.rs:9:5";
        let records = [
            failed(9, Outcome::Fail, wrong, at),
            failed(1, Outcome::Fail, wrong, at),
            record("triage::refund", 5, Outcome::Pass, 0.0, Vec::new()),
            failed(2, Outcome::Fail, wrong, at),
            failed(
                3,
                Outcome::Error,
                "the model server hung up",
                "src/client.rs:3:1",
            ),
            failed(4, Outcome::Fail, wrong, at),
            failed(6, Outcome::Fail, wrong, "tests/evals.rs:12:5"),
            record("triage::refund", 7, Outcome::Stopped, 0.0, Vec::new()),
            failed(8, Outcome::Fail, wrong, at),
            failed(8, Outcome::Fail, wrong, at),
        ];
        let refs: Vec<&Record> = records.iter().collect();
        let groups = failure_groups(&refs);
        let headings: Vec<String> = groups.iter().map(FailureGroup::heading).collect();
        assert_eq!(
            headings,
            [
                "5 runs (1, 2, 4, 8, 9) failed at tests/evals.rs:9:5",
                "run 3 errored at src/client.rs:3:1",
                "run 6 failed at tests/evals.rs:12:5",
            ]
        );
        assert_eq!(groups[0].message, Some(wrong));
    }

    #[test]
    fn run_numbers_in_a_row_are_spans() {
        assert_eq!(run_spans(&[1, 2, 3, 4, 6, 8, 9]), "1-4, 6, 8, 9");
        assert_eq!(run_spans(&[]), "");
        assert_eq!(run_spans(&[7]), "7");
        let every_other: Vec<u32> = (1..=40).step_by(2).collect();
        assert_eq!(
            run_spans(&every_other),
            "1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, …"
        );
        assert_eq!(
            run_spans(&[u32::MAX - 1, u32::MAX]),
            format!("{}, {}", u32::MAX - 1, u32::MAX)
        );
    }
}
