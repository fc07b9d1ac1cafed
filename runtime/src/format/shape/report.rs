//! The shapes of a report, its rows, totals and aggregates, and the live report's running sums.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Serialize};

use crate::model::analysis::{BaselineResult, Comparison, Estimate, MetricAggregate};
use crate::model::stops::{Stop, Stopping};
use crate::model::{Aggregate, BinaryNotRun, CaseInfo, Record, Row, Totals};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencyResult;
use crate::types::stats::{GateResult, Interval, StatsConfig};
use crate::types::status::Status;
use crate::types::usage::UsageTotals;

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::report::Report")]
struct ReportShape {
    schema: u32,
    tool: String,
    version: String,
    created: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    runs: u32,
    exit_status: i32,
    #[serde(default)]
    stats_config: StatsConfig,
    totals: Totals,
    rows: Vec<Row>,
    #[serde(default)]
    aggregates: Vec<Aggregate>,
    #[serde(default)]
    comparisons: Vec<Comparison>,
    #[serde(default)]
    baseline: Option<BaselineResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stopping: Option<Stopping>,
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    binaries_not_run: Vec<BinaryNotRun>,
    records: Vec<Record>,
}
shaped!(crate::model::report::Report, ReportShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::not_run::BinaryNotRun")]
struct BinaryNotRunShape {
    binary: String,
    label: String,
    runs: u64,
}
shaped!(crate::model::not_run::BinaryNotRun, BinaryNotRunShape, both);

/// Whether a count is zero, for the counts a report leaves out when there is nothing to say.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

#[derive(Serialize)]
#[serde(remote = "crate::model::report::Aggregate")]
struct AggregateShape {
    scope: String,
    name: String,
    function: String,
    module: String,
    metrics: OrderedMap<MetricAggregate>,
    #[serde(flatten)]
    estimate: Option<Estimate>,
}
shaped!(crate::model::report::Aggregate, AggregateShape, write);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::report::Totals")]
struct TotalsShape {
    passes: u64,
    fails: u64,
    errors: u64,
    count: u64,
    pass_rate: f64,
    cost: f64,
    usage: OrderedMap<UsageTotals>,
    #[serde(default)]
    retries: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    not_run: u64,
}
shaped!(crate::model::report::Totals, TotalsShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::report::Row")]
struct RowShape {
    #[serde(flatten)]
    info: CaseInfo,
    passes: u64,
    fails: u64,
    errors: u64,
    total: u64,
    pass_rate: f64,
    status: Status,
    cost: f64,
    usage: OrderedMap<UsageTotals>,
    #[serde(default)]
    ci: Option<Interval>,
    #[serde(default)]
    gate: Option<GateResult>,
    #[serde(default)]
    metrics: OrderedMap<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stopped: Option<Stop>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    latency: Option<LatencyResult>,
    #[serde(default, skip_serializing_if = "is_zero")]
    not_run: u64,
}
shaped!(crate::model::report::Row, RowShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::aggregate::FunctionSums")]
struct FunctionSumsShape {
    function: String,
    module: String,
    cases: u64,
    sums: Vec<f64>,
    counts: Vec<u64>,
}
shaped!(
    crate::model::aggregate::FunctionSums,
    FunctionSumsShape,
    both
);
