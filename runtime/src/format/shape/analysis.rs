//! The shapes of what the analysis and early stopping add to a report: estimates, metrics, comparisons, the baseline block, stops.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Serialize};

use crate::model::analysis::{Bounds, Comparison, Counts, PairedInput, Projection, RunSpan};
use crate::types::stats::paired::Adjustment;
use crate::types::stats::stopping::StopMode;
use crate::types::stats::Verdict;

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::stops::Stop")]
struct StopShape {
    after: u64,
    planned: u64,
    skipped: u64,
    verdict: Option<Verdict>,
    cost_avoided: Option<f64>,
}
shaped!(crate::model::stops::Stop, StopShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::stops::Stopping")]
struct StoppingShape {
    mode: StopMode,
    active: bool,
    cases: u64,
    runs_skipped: u64,
    runs_planned: u64,
    cost_avoided: Option<f64>,
}
shaped!(crate::model::stops::Stopping, StoppingShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::baseline::BaselineResult")]
struct BaselineResultShape {
    path: String,
    created: Option<String>,
    margin: Option<f64>,
    paired: u64,
    only_current: Vec<String>,
    only_baseline: Vec<String>,
    comparisons: Vec<Comparison>,
}
shaped!(
    crate::model::analysis::baseline::BaselineResult,
    BaselineResultShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::estimates::Bounds")]
struct BoundsShape {
    method: String,
    level: f64,
    low: f64,
    high: f64,
}
shaped!(crate::model::analysis::estimates::Bounds, BoundsShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::estimates::RunSpan")]
struct RunSpanShape {
    min: u64,
    mean: f64,
    max: u64,
}
shaped!(
    crate::model::analysis::estimates::RunSpan,
    RunSpanShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::estimates::Projection")]
struct ProjectionShape {
    runs_x2: f64,
    inputs_x2: f64,
}
shaped!(
    crate::model::analysis::estimates::Projection,
    ProjectionShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::estimates::Estimate")]
struct EstimateShape {
    inputs: u64,
    runs: RunSpan,
    estimate: f64,
    ci: Option<Bounds>,
    normal_ci: Option<Bounds>,
    resamples: u64,
    seed: u64,
    resampling_unit: String,
    note: String,
    suppressed: Option<String>,
    icc: Option<f64>,
    width_factor: Option<f64>,
    stopped: u64,
    #[serde(default)]
    cost: f64,
    #[serde(default)]
    projection: Option<Projection>,
}
shaped!(
    crate::model::analysis::estimates::Estimate,
    EstimateShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::compare::Counts")]
struct CountsShape {
    passes: u64,
    total: u64,
}
shaped!(crate::model::analysis::compare::Counts, CountsShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::compare::PairedInput")]
struct PairedInputShape {
    input: String,
    baseline: Counts,
    arm: Counts,
    difference: f64,
    ci: Bounds,
    p: f64,
    p_method: String,
}
shaped!(
    crate::model::analysis::compare::PairedInput,
    PairedInputShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::compare::Comparison")]
struct ComparisonShape {
    function: String,
    axis: Option<String>,
    baseline: String,
    arm: String,
    pairs: u64,
    unpaired: Vec<String>,
    difference: Option<f64>,
    ci: Option<Bounds>,
    p: Option<f64>,
    p_method: Option<String>,
    exact: Option<bool>,
    p_adjusted: Option<f64>,
    adjustment: Adjustment,
    family: u64,
    exploratory: bool,
    margin: Option<f64>,
    equivalence: bool,
    verdict: Option<Verdict>,
    suppressed: Option<String>,
    resamples: u64,
    seed: u64,
    cost_ratio: Option<f64>,
    inputs: Vec<PairedInput>,
    stopped: u64,
}
shaped!(
    crate::model::analysis::compare::Comparison,
    ComparisonShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::analysis::metrics::MetricAggregate")]
struct MetricAggregateShape {
    k: u64,
    #[serde(default)]
    inputs: u64,
    #[serde(default)]
    left_out: u64,
    #[serde(default)]
    estimate: Option<f64>,
    #[serde(default)]
    ci: Option<Bounds>,
    #[serde(default)]
    normal_ci: Option<Bounds>,
    #[serde(default)]
    suppressed: Option<String>,
    #[serde(default)]
    stopped: u64,
}
shaped!(
    crate::model::analysis::metrics::MetricAggregate,
    MetricAggregateShape,
    both
);
