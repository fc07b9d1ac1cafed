//! The `probability: baseline` section (`PROB_BASELINE`), in pytest-probability's layout: a
//! header naming the earlier report and the pairing, a line per function, current − baseline,
//! and the cases found in only one of the two; and its plain-language readings.
//!
//! Layer: render.

use std::fmt::Write;

use crate::model::analysis::{BaselineResult, Comparison};
use crate::model::Report;
use crate::render::compare::{comparison_lines, paint_verdict, reading};
use crate::render::text::rule;
use crate::types::stats::Verdict;

/// How many unmatched case ids a line names.
const UNMATCHED_SHOWN: usize = 5;

fn cases(n: u64) -> String {
    if n == 1 {
        "1 case".to_string()
    } else {
        format!("{n} cases")
    }
}

/// `against main.json (2026-10-01T12:00:00): 26 cases paired, 1 only in this run, 2 only in
/// the baseline`.
fn header(result: &BaselineResult) -> String {
    let when = result
        .created
        .as_ref()
        .map_or(String::new(), |created| format!(" ({created})"));
    let mut parts = vec![format!("{} paired", cases(result.paired))];
    if !result.only_current.is_empty() {
        parts.push(format!("{} only in this run", result.only_current.len()));
    }
    if !result.only_baseline.is_empty() {
        parts.push(format!(
            "{} only in the baseline",
            result.only_baseline.len()
        ));
    }
    format!("against {}{when}: {}", result.path, parts.join(", "))
}

fn case_list(ids: &[String]) -> String {
    let shown = ids
        .iter()
        .take(UNMATCHED_SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match ids.len().checked_sub(UNMATCHED_SHOWN) {
        Some(more) if more > 0 => format!("{shown} and {more} more"),
        _ => shown,
    }
}

/// The section's lines, each with the verdict that colors it.
pub(crate) fn lines(result: &BaselineResult) -> Vec<(String, Option<Verdict>)> {
    let mut lines = vec![(
        format!("  {}", header(result)),
        (result.paired == 0).then_some(Verdict::Undecided),
    )];
    lines.extend(comparison_lines(&result.comparisons, |c| {
        c.function.clone()
    }));
    let unmatched: Vec<(&str, &Vec<String>)> = [
        ("only in this run:", &result.only_current),
        ("only in the baseline:", &result.only_baseline),
    ]
    .into_iter()
    .filter(|(_, ids)| !ids.is_empty())
    .collect();
    if !unmatched.is_empty() {
        lines.push((String::new(), None));
        let width = unmatched
            .iter()
            .map(|(name, _)| name.len())
            .max()
            .unwrap_or(0);
        for (name, ids) in unmatched {
            lines.push((format!("  {name:<width$} {}", case_list(ids)), None));
        }
    }
    lines
}

/// The `probability: baseline` section; nothing without `PROB_BASELINE`.
pub(crate) fn section(report: &Report, color: bool, out: &mut String) {
    let Some(result) = &report.baseline else {
        return;
    };
    let _ = writeln!(out, "{}", rule("probability: baseline"));
    for (line, verdict) in lines(result) {
        let _ = writeln!(out, "{}", paint_verdict(&line, verdict, color));
    }
}

/// The readings: what was paired, then each function against the baseline.
pub(crate) fn readings(report: &Report) -> Vec<String> {
    let Some(result) = &report.baseline else {
        return Vec::new();
    };
    let mut out = vec![summary_reading(result)];
    out.extend(
        result
            .comparisons
            .iter()
            .map(|c| comparison_reading(result, c)),
    );
    out
}

/// One function against the baseline, in a paragraph.
pub(crate) fn comparison_reading(result: &BaselineResult, c: &Comparison) -> String {
    reading(c, &format!("the baseline {}", result.path))
}

/// What was paired with the baseline, and what its comparisons can do to the session.
pub(crate) fn summary_reading(result: &BaselineResult) -> String {
    format!(
        "Against the earlier report {}: {} paired by id{}. Cases in only one report are listed, \
         never paired, so they cannot fail the comparison.{}",
        result.path,
        cases(result.paired),
        if result.only_current.is_empty() && result.only_baseline.is_empty() {
            String::new()
        } else {
            format!(
                "; {} only in this run and {} only in the baseline",
                result.only_current.len(),
                result.only_baseline.len()
            )
        },
        match result.margin {
            Some(margin) => format!(
                " A function whose pass rate may have dropped by more than {} points fails the session.",
                margin * 100.0
            ),
            None => " Without PROB_MARGIN this only reports.".to_string(),
        }
    )
}
