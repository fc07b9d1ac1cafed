//! The report with its `explanation` strings (`PROB_EXPLAIN`), where pytest-probability puts
//! them: each row, its gate and its latency; each aggregate and each of its metrics; each
//! comparison; the baseline block and each of its comparisons. The texts are gathered in
//! `render::explained` (the terminal's explained section); this module only places them,
//! through views that serialize as the model does plus the field, so that every map keeps its
//! order. The whole file is written by `format::report::whole`.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::model::analysis::{BaselineResult, Comparison, MetricAggregate};
use crate::model::explanations::{Explanations, RowExplanations};
use crate::model::stops::Stop;
use crate::model::{Aggregate, CaseInfo, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencyResult;
use crate::types::stats::{GateResult, Interval};
use crate::types::status::Status;
use crate::types::usage::UsageTotals;

/// A value as it serializes, with an `explanation` field last when there is a text.
#[derive(Serialize)]
pub(crate) struct Explained<'a, T: Serialize> {
    #[serde(flatten)]
    value: &'a T,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'a str>,
}

fn explained<'a, T: Serialize>(value: &'a T, text: Option<&'a str>) -> Explained<'a, T> {
    Explained {
        value,
        explanation: text,
    }
}

/// Each of `values` with the text of the same index.
pub(crate) fn explained_list<'a, T: Serialize>(
    values: &'a [T],
    texts: &'a [String],
) -> Vec<Explained<'a, T>> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| explained(value, texts.get(index).map(String::as_str)))
        .collect()
}

/// An aggregate as the model writes it, its metrics and itself explained.
#[derive(Serialize)]
pub(crate) struct AggregateView<'a> {
    scope: &'a str,
    name: &'a str,
    function: &'a str,
    module: &'a str,
    metrics: MetricsView<'a>,
    #[serde(flatten)]
    estimate: &'a Option<crate::model::analysis::Estimate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'a str>,
}

/// An aggregate's metrics in their order, each with its text.
pub(crate) struct MetricsView<'a> {
    metrics: &'a OrderedMap<MetricAggregate>,
    texts: &'a [(String, String)],
}

impl Serialize for MetricsView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.metrics.0.len()))?;
        for (name, metric) in &self.metrics.0 {
            let text = self
                .texts
                .iter()
                .find(|(named, _)| named == name)
                .map(|(_, text)| text.as_str());
            map.serialize_entry(name, &explained(metric, text))?;
        }
        map.end()
    }
}

/// The aggregates with their texts.
pub(crate) fn explained_aggregates<'a>(
    aggregates: &'a [Aggregate],
    texts: &'a Explanations,
) -> Vec<AggregateView<'a>> {
    aggregates
        .iter()
        .enumerate()
        .map(|(index, aggregate)| {
            let texts = texts.aggregates.get(index);
            AggregateView {
                scope: &aggregate.scope,
                name: &aggregate.name,
                function: &aggregate.function,
                module: &aggregate.module,
                metrics: MetricsView {
                    metrics: &aggregate.metrics,
                    texts: texts.map_or(&[], |t| &t.metrics),
                },
                estimate: &aggregate.estimate,
                explanation: texts.and_then(|t| t.aggregate.as_deref()),
            }
        })
        .collect()
}

/// The baseline block as the model writes it, itself and its comparisons explained.
#[derive(Serialize)]
pub(crate) struct BaselineView<'a> {
    path: &'a str,
    created: &'a Option<String>,
    margin: Option<f64>,
    paired: u64,
    only_current: &'a [String],
    only_baseline: &'a [String],
    comparisons: Vec<Explained<'a, Comparison>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'a str>,
}

/// The baseline block with its texts.
pub(crate) fn explained_baseline<'a>(
    baseline: Option<&'a BaselineResult>,
    texts: &'a Explanations,
) -> Option<BaselineView<'a>> {
    baseline.map(|b| BaselineView {
        path: &b.path,
        created: &b.created,
        margin: b.margin,
        paired: b.paired,
        only_current: &b.only_current,
        only_baseline: &b.only_baseline,
        comparisons: explained_list(&b.comparisons, &texts.baseline_comparisons),
        explanation: texts.baseline.as_deref(),
    })
}

/// A row as the model writes it, with its, its gate's and its latency's texts: the oracle of
/// the fast row writer's explanations.
#[derive(Serialize)]
pub(crate) struct RowView<'a> {
    #[serde(flatten)]
    info: &'a CaseInfo,
    passes: u64,
    fails: u64,
    errors: u64,
    total: u64,
    pass_rate: f64,
    status: Status,
    cost: f64,
    usage: &'a OrderedMap<UsageTotals>,
    ci: &'a Option<Interval>,
    gate: Option<Explained<'a, GateResult>>,
    metrics: &'a OrderedMap<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: &'a Option<Stop>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency: Option<Explained<'a, LatencyResult>>,
    #[serde(skip_serializing_if = "is_zero")]
    not_run: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    explanation: Option<&'a str>,
}

fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// A row with its texts.
pub(crate) fn explained_row<'a>(row: &'a Row, texts: Option<&'a RowExplanations>) -> RowView<'a> {
    RowView {
        info: &row.info,
        passes: row.passes,
        fails: row.fails,
        errors: row.errors,
        total: row.total,
        pass_rate: row.pass_rate,
        status: row.status,
        cost: row.cost,
        usage: &row.usage,
        ci: &row.ci,
        gate: row
            .gate
            .as_ref()
            .map(|g| explained(g, texts.and_then(|t| t.gate.as_deref()))),
        metrics: &row.metrics,
        stopped: &row.stopped,
        latency: row
            .latency
            .as_ref()
            .map(|l| explained(l, texts.and_then(|t| t.latency.as_deref()))),
        not_run: row.not_run,
        explanation: texts.map(|t| t.row.as_str()),
    }
}
