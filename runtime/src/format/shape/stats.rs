//! The shapes of the statistics' values that a report holds: the session's `stats_config`, a
//! row's interval, gate and latency, the verdicts, and the settings' names they spell.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Serialize};

use crate::types::stats::latency::{default_quantile, LatencyInterval};
use crate::types::stats::paired::Adjustment;
use crate::types::stats::stopping::StopMode;
use crate::types::stats::{ErrorPolicy, IntervalSpec, Method, Metric, Prior, Rule, Undecided};
use crate::types::stats::{StatsConfig, Verdict};

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Method", rename_all = "lowercase")]
enum MethodShape {
    Exact,
    Wilson,
    Bayes,
    Sequential,
}
shaped!(crate::types::stats::Method, MethodShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Prior")]
struct PriorShape {
    a: f64,
    b: f64,
}
shaped!(crate::types::stats::Prior, PriorShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::IntervalSpec")]
struct IntervalSpecShape {
    method: Method,
    level: f64,
    prior: Prior,
}
shaped!(crate::types::stats::IntervalSpec, IntervalSpecShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Interval")]
struct IntervalShape {
    method: Method,
    level: f64,
    low: f64,
    high: f64,
}
shaped!(crate::types::stats::Interval, IntervalShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Undecided", rename_all = "lowercase")]
enum UndecidedShape {
    Fail,
    Pass,
}
shaped!(crate::types::stats::Undecided, UndecidedShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::ErrorPolicy", rename_all = "lowercase")]
enum ErrorPolicyShape {
    Count,
    Exclude,
}
shaped!(crate::types::stats::ErrorPolicy, ErrorPolicyShape, both);

/// serde's default spelling of an enum, `{"PassAll": 3}`, which reports have always used.
#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Metric")]
enum MetricShape {
    PassAll(u64),
    PassAny(u64),
}
shaped!(crate::types::stats::Metric, MetricShape, both);

#[derive(Serialize, Deserialize)]
#[serde(
    remote = "crate::types::stats::paired::Adjustment",
    rename_all = "lowercase"
)]
enum AdjustmentShape {
    None,
    Holm,
    Bonferroni,
    Bh,
}
shaped!(
    crate::types::stats::paired::Adjustment,
    AdjustmentShape,
    both
);

#[derive(Serialize, Deserialize)]
#[serde(
    remote = "crate::types::stats::stopping::StopMode",
    rename_all = "lowercase"
)]
enum StopModeShape {
    Off,
    Curtail,
    Sequential,
}
shaped!(crate::types::stats::stopping::StopMode, StopModeShape, both);

/// Every field defaults, so that a report written before a setting existed still reads.
#[derive(Serialize, Deserialize)]
#[serde(
    remote = "crate::types::stats::StatsConfig",
    default = "StatsConfig::default"
)]
struct StatsConfigShape {
    #[serde(flatten)]
    interval: IntervalSpec,
    intervals: bool,
    min_rate: Option<f64>,
    undecided: Undecided,
    errors: ErrorPolicy,
    metrics: Vec<Metric>,
    explain: bool,
    resamples: u64,
    seed: u64,
    min_inputs: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    compare: Option<String>,
    adjust: Adjustment,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    margin: Option<f64>,
    /// Left out of reports that stop nothing.
    #[serde(skip_serializing_if = "StopMode::is_off")]
    stop: StopMode,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    latency: bool,
    #[serde(
        default = "default_quantile",
        skip_serializing_if = "is_default_quantile"
    )]
    latency_quantile: f64,
}
shaped!(crate::types::stats::StatsConfig, StatsConfigShape, both);

/// Whether `quantile` is the default, which reports leave out.
fn is_default_quantile(quantile: &f64) -> bool {
    *quantile == default_quantile()
}

#[derive(Serialize, Deserialize)]
#[serde(
    remote = "crate::types::stats::Rule",
    tag = "rule",
    content = "bar",
    rename_all = "snake_case"
)]
enum RuleShape {
    MinRate(f64),
    MinPasses(u64),
}
shaped!(crate::types::stats::Rule, RuleShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::GateSpec")]
struct GateSpecShape {
    #[serde(flatten)]
    rule: Rule,
    method: Option<Method>,
    level: Option<f64>,
    prior: Option<Prior>,
}
shaped!(crate::types::stats::GateSpec, GateSpecShape, both);

/// Lower case, as pytest-probability spells it; reports of schema 1 spelled it in upper case
/// and still read.
#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::Verdict", rename_all = "lowercase")]
enum VerdictShape {
    #[serde(alias = "PASS")]
    Pass,
    #[serde(alias = "FAIL")]
    Fail,
    #[serde(alias = "UNDECIDED")]
    Undecided,
}
shaped!(crate::types::stats::Verdict, VerdictShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::GateResult")]
struct GateResultShape {
    #[serde(flatten)]
    rule: Rule,
    method: Method,
    level: f64,
    prior: Prior,
    errors: ErrorPolicy,
    passes: u64,
    sample: u64,
    low: f64,
    high: f64,
    verdict: Verdict,
}
shaped!(crate::types::stats::GateResult, GateResultShape, both);

/// A case's `latency_spec`: what the attribute leaves out is left out.
#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::latency::LatencySpec")]
struct LatencySpecShape {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quantile: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_latency: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    level: Option<f64>,
}
shaped!(
    crate::types::stats::latency::LatencySpec,
    LatencySpecShape,
    both
);

/// The `ci` of a row's `latency`, under pytest-probability's field names.
#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::latency::LatencyInterval")]
struct LatencyIntervalShape {
    method: String,
    level: f64,
    low: Option<f64>,
    high: Option<f64>,
    ranks: [Option<u64>; 2],
    coverage: f64,
}
shaped!(
    crate::types::stats::latency::LatencyInterval,
    LatencyIntervalShape,
    both
);

/// A row's `latency`, under pytest-probability's field names.
#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::stats::latency::LatencyResult")]
struct LatencyResultShape {
    quantile: f64,
    total: u64,
    excluded: u64,
    estimate: Option<f64>,
    ci: Option<LatencyInterval>,
    min_runs: u64,
    max_latency: Option<f64>,
    verdict: Option<Verdict>,
}
shaped!(
    crate::types::stats::latency::LatencyResult,
    LatencyResultShape,
    both
);
