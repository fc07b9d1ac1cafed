//! The analysis of a whole session, beyond its rows: function-level estimates (`estimates`) and
//! comparisons of one argument's values (`compare`).
//! It runs once every result is in (the summary at exit, a report folded at exit, `cargo
//! probtest report`), since a bootstrap per run would make a session quadratic; a report kept
//! run by run carries the metric means alone until then.
//!
//! Layer: model.

pub(crate) mod compare;
pub(crate) mod estimates;
#[cfg(test)]
pub(crate) mod tests;

pub use compare::{margin_verdict, Comparison, Counts, PairedInput};
pub use estimates::{Bounds, Estimate, Projection, RunSpan};

use crate::model::report::Report;
use crate::types::stats::{StatsConfig, Undecided, Verdict};

/// Whether a margin's verdict fails the session: FAIL, and UNDECIDED under the `fail` policy.
pub(crate) fn verdict_fails(verdict: Verdict, config: &StatsConfig) -> bool {
    verdict == Verdict::Fail
        || (verdict == Verdict::Undecided && config.undecided == Undecided::Fail)
}

impl Report {
    /// Adds what needs every result: the function-level estimates (replacing the metric means
    /// kept run by run with the same means and more) and the comparisons; a margin whose
    /// verdict fails fails the session, as a gate's does.
    pub fn analyze(&mut self) {
        let config = &self.stats_config;
        self.aggregates = estimates::aggregates(&self.rows, config);
        self.comparisons = compare::comparisons(&self.rows, config);
        let fails = self
            .comparisons
            .iter()
            .filter_map(|c| c.verdict)
            .any(|verdict| verdict_fails(verdict, config));
        if fails {
            self.exit_status = self.exit_status.max(1);
        }
    }
}
