//! The pieces of text every report file shares with the terminal summary: a row's fraction,
//! interval and doctor command, the totals' and gates' lines, a failed run's first line.
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

/// The first line of what a failed or errored run said, with where, or the outcome alone.
pub fn run_message(record: &Record) -> String {
    let message = record
        .message
        .as_deref()
        .and_then(|message| message.lines().next())
        .unwrap_or(match record.outcome {
            Outcome::Error => "errored",
            _ => "failed",
        });
    match &record.location {
        Some(location) => format!("{message} (at {location})"),
        None => message.to_string(),
    }
}
