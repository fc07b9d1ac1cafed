//! The summary's text for early stopping (`PROB_STOP`): the note on a stopped row, the runs
//! stopped on the `Overall:` line, and the `Stopped:` line of what it saved, worded as
//! pytest-probability's footer.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::{Report, Row};
use crate::render::text::money;

/// `decided after 12/40`, for a row that stopped early.
pub(crate) fn row_note(row: &Row) -> Option<String> {
    row.stopped.as_ref().map(|stop| stop.label())
}

/// `, 23 runs stopped` for the `Overall:` line: stopped runs are neither passes nor part of
/// the count, so the line says how many there were.
pub(crate) fn overall(report: &Report, out: &mut String) {
    let skipped: u64 = report
        .rows
        .iter()
        .filter_map(|row| row.stopped.as_ref())
        .map(|stop| stop.skipped)
        .sum();
    if skipped > 0 {
        let _ = write!(out, ", {} stopped", plural(skipped, "run", "runs"));
    }
}

/// `  Stopped: 2 cases early, saving 37 of 60 runs (62%) and about $0.0123`, when any case
/// stopped.
pub(crate) fn line(report: &Report, out: &mut String) {
    let Some(stopping) = &report.stopping else {
        return;
    };
    if stopping.cases == 0 || stopping.runs_planned == 0 {
        return;
    }
    let share = stopping.runs_skipped as f64 / stopping.runs_planned as f64 * 100.0;
    let _ = write!(
        out,
        "  Stopped: {} early, saving {} of {} runs ({share:.0}%)",
        plural(stopping.cases, "case", "cases"),
        stopping.runs_skipped,
        stopping.runs_planned,
    );
    if let Some(cost) = stopping.cost_avoided.filter(|cost| *cost > 0.0) {
        let _ = write!(out, " and about {}", money(cost));
    }
    out.push('\n');
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
