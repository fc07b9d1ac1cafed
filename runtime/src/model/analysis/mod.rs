//! The analysis of a whole session, beyond its rows: function-level estimates (`estimates`) and
//! comparisons of one argument's values (`compare`), and the comparison with an earlier report
//! (`baseline`).
//! It runs once every result is in (the summary at exit, a report folded at exit, `cargo
//! probtest report`), since a bootstrap per run would make a session quadratic; a report kept
//! run by run carries the metric means alone until then.
//!
//! Layer: model.

pub(crate) mod baseline;
pub(crate) mod compare;
pub(crate) mod estimates;
pub(crate) mod metrics;
#[cfg(test)]
mod metrics_tests;
#[cfg(test)]
pub(crate) mod tests;

pub use baseline::{Baseline, BaselineResult};
pub use compare::{margin_verdict, Comparison, Counts, PairedInput};
pub use estimates::{Bounds, Estimate, Projection, RunSpan};
pub use metrics::MetricAggregate;

use crate::model::report::{Report, Row};
use crate::types::stats::{ErrorPolicy, StatsConfig, Undecided, Verdict};

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
        self.analyze_with(None);
    }

    /// [`Report::analyze`], and the comparison with `baseline`, an earlier report: with
    /// `PROB_MARGIN` its verdicts judge the cases it holds, whose failed runs are samples.
    pub fn analyze_with(&mut self, baseline: Option<&Baseline>) {
        let config = &self.stats_config;
        self.aggregates = estimates::aggregates(&self.rows, config);
        self.comparisons = compare::comparisons(&self.rows, config);
        self.baseline = baseline.map(|b| baseline::compare_with_baseline(&self.rows, b, config));
        let judged = |row: &Row| baseline.is_some_and(|b| b.judges(&row.info.case, config));
        let rows_fail = self.rows.iter().any(|row| {
            if judged(row) && row.gate.is_none() {
                row.errors > 0 && config.errors == ErrorPolicy::Count
            } else {
                row.fails_session(config)
            }
        });
        let verdicts_fail = self
            .comparisons
            .iter()
            .chain(self.baseline.iter().flat_map(|b| &b.comparisons))
            .filter_map(|c| c.verdict)
            .any(|verdict| verdict_fails(verdict, config));
        self.exit_status = i32::from(rows_fail || verdicts_fail);
    }
}
