//! Where each `explanation` text of a report goes (`PROB_EXPLAIN`): `render` writes the texts,
//! `format` places them in the report's JSON.
//!
//! Layer: model. Plain data; imports nothing.

/// Every text of a report, each where it goes.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Explanations {
    /// One per row, in the report's order.
    pub(crate) rows: Vec<RowExplanations>,
    /// One per aggregate, in the report's order.
    pub(crate) aggregates: Vec<AggregateExplanations>,
    /// One per comparison.
    pub(crate) comparisons: Vec<String>,
    /// The baseline block's, when there is one.
    pub(crate) baseline: Option<String>,
    /// One per comparison with the baseline.
    pub(crate) baseline_comparisons: Vec<String>,
}

/// A row's texts: its own, its gate's and its latency's, when it has those.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RowExplanations {
    pub(crate) row: String,
    pub(crate) gate: Option<String>,
    pub(crate) latency: Option<String>,
}

/// An aggregate's text (none before the analysis, which it reads) and each metric's, by name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AggregateExplanations {
    pub(crate) aggregate: Option<String>,
    pub(crate) metrics: Vec<(String, String)>,
}
