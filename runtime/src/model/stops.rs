//! What early stopping (`PROB_STOP`) did, as the report holds it: per row, the case's stop
//! (`rows[].stopped`), and over the session the runs skipped and the cost avoided
//! (`stopping`). Field names are pytest-probability's.
//!
//! Layer: model. Imports only `crate::types`.

use crate::model::report::Row;
use crate::types::stats::stopping::StopMode;
use crate::types::stats::{StatsConfig, Verdict};

/// A case whose remaining runs were skipped once its gate was decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stop {
    /// The runs that ran: the verdict was decided on them.
    pub after: u64,
    /// The runs the case was to have: those that ran and those skipped.
    pub planned: u64,
    /// The runs skipped.
    pub skipped: u64,
    /// The verdict the case stopped on; `None` until the row is settled.
    pub verdict: Option<Verdict>,
    /// The skipped runs priced at the case's cost per run that ran; `None` when it spent
    /// nothing.
    pub cost_avoided: Option<f64>,
}

/// The session's early stopping: its mode and what it saved.
#[derive(Clone, Debug, PartialEq)]
pub struct Stopping {
    /// `PROB_STOP`.
    pub mode: StopMode,
    /// Whether cases could stop in this session: always, once a mode is set (under cargo test
    /// a process holds every run of its cases, under nextest the session store does).
    pub active: bool,
    /// Cases that stopped early.
    pub cases: u64,
    /// Runs skipped, over every case.
    pub runs_skipped: u64,
    /// Runs that ran plus runs skipped.
    pub runs_planned: u64,
    /// The cost the skipped runs would have spent, priced per case; `None` when none is known.
    pub cost_avoided: Option<f64>,
}

impl Stop {
    /// Notes one skipped run of a row.
    pub(crate) fn note(stop: &mut Option<Stop>) {
        stop.get_or_insert_with(Stop::default).skipped += 1;
    }

    /// Fills in what derives from the row's counts, once they are final.
    pub(crate) fn settle(row: &mut Row) {
        let (total, cost, verdict) = (
            row.total,
            row.cost,
            row.gate.map_or(Verdict::Undecided, |g| g.verdict),
        );
        if let Some(stop) = &mut row.stopped {
            stop.after = total;
            stop.planned = total + stop.skipped;
            stop.verdict = Some(verdict);
            stop.cost_avoided =
                (cost > 0.0 && total > 0).then(|| cost / total as f64 * stop.skipped as f64);
        }
    }

    /// `decided after 12/40`, the note on a stopped row.
    pub fn label(&self) -> String {
        format!("decided after {}/{}", self.after, self.planned)
    }
}

/// The session's stopping, when `PROB_STOP` is set.
pub(crate) fn stopping(rows: &[Row], config: &StatsConfig) -> Option<Stopping> {
    if config.stop.is_off() {
        return None;
    }
    let stops: Vec<&Stop> = rows.iter().filter_map(|row| row.stopped.as_ref()).collect();
    let skipped: u64 = stops.iter().map(|stop| stop.skipped).sum();
    let costs: Vec<f64> = stops.iter().filter_map(|stop| stop.cost_avoided).collect();
    Some(Stopping {
        mode: config.stop,
        active: true,
        cases: stops.len() as u64,
        runs_skipped: skipped,
        runs_planned: rows.iter().map(|row| row.total).sum::<u64>() + skipped,
        cost_avoided: (!costs.is_empty()).then(|| costs.iter().sum()),
    })
}
