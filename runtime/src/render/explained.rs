//! The report's `explanation` strings (`PROB_EXPLAIN`), gathered for its writers: each text is
//! the one the terminal's explained section prints, so the JSON and the summary say the same
//! thing in the same words; the writers (`format::report`, `format::explained`) only place
//! them.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use crate::model::explanations::{AggregateExplanations, Explanations, RowExplanations};
use crate::model::Report;
use crate::render::{analysis, baseline_section, compare, explain, latency_block, metrics};

/// The explanations of `report`, when its settings ask for them; `None` otherwise.
pub(crate) fn explanations(report: &Report) -> Option<Explanations> {
    let config = &report.stats_config;
    if !config.explain {
        return None;
    }
    let rows = report
        .rows
        .iter()
        .map(|row| RowExplanations {
            row: explain::row_reading(row),
            gate: row
                .gate
                .as_ref()
                .map(|gate| explain::gate_reading(row, gate, config)),
            latency: row
                .latency
                .as_ref()
                .map(|l| latency_block::reading(row, l, config.undecided)),
        })
        .collect();
    let aggregates = report
        .aggregates
        .iter()
        .map(|aggregate| AggregateExplanations {
            aggregate: aggregate
                .estimate
                .as_ref()
                .map(|e| analysis::aggregate_reading(report, aggregate, e)),
            metrics: aggregate
                .metrics
                .0
                .iter()
                .map(|(name, m)| (name.clone(), metrics::reading(report, aggregate, name, m)))
                .collect(),
        })
        .collect();
    let comparisons = report
        .comparisons
        .iter()
        .map(|c| compare::reading(c, ""))
        .collect();
    let (summary, baseline_comparisons) = match &report.baseline {
        Some(result) => (
            Some(baseline_section::summary_reading(result)),
            result
                .comparisons
                .iter()
                .map(|c| baseline_section::comparison_reading(result, c))
                .collect(),
        ),
        None => (None, Vec::new()),
    };
    Some(Explanations {
        rows,
        aggregates,
        comparisons,
        baseline: summary,
        baseline_comparisons,
    })
}
