//! Function-level estimates: the mean of a function's per-case pass fractions (and the
//! session's), with a cluster-bootstrap interval over its cases, the intraclass correlation of
//! its runs, and what doubling its runs or its inputs would do to the interval.
//!
//! Layer: model.

use serde::{Deserialize, Serialize};

use crate::model::analysis::metrics::{stopped_early, too_few, MetricAggregate};
use crate::model::report::{Aggregate, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::cluster::{harmonic_mean, icc, projected_width, width_factor};
use crate::types::stats::resample::{bootstrap_interval, fmean, fsum, normal_interval};
use crate::types::stats::StatsConfig;

/// An interval from a procedure the row intervals do not use (a bootstrap, a normal
/// approximation, Newcombe's), as pytest-probability writes one.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Bounds {
    /// `bootstrap`, `normal` or `newcombe`.
    pub method: String,
    /// Its confidence level.
    pub level: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Bounds {
    pub(crate) fn new(method: &str, level: f64, (low, high): (f64, f64)) -> Bounds {
        Bounds {
            method: method.to_string(),
            level,
            low,
            high,
        }
    }
}

/// Runs per case over a function's cases.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunSpan {
    /// The fewest.
    pub min: u64,
    /// The mean.
    pub mean: f64,
    /// The most.
    pub max: u64,
}

/// The relative change in interval width from doubling every case's runs, and from doubling
/// the number of cases: `-0.29` is 29% narrower.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Projection {
    /// Doubling the runs of every case.
    pub runs_x2: f64,
    /// Doubling the number of cases, with runs like today's.
    pub inputs_x2: f64,
}

/// A function's (or the session's) estimate over its cases; the fields are
/// pytest-probability's, `cost` and `projection` are probtest's additions.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Cases averaged over: each counts as one input, whatever its runs.
    pub inputs: u64,
    /// Runs per case.
    pub runs: RunSpan,
    /// The mean of the per-case pass fractions.
    pub estimate: f64,
    /// The percentile interval of a cluster bootstrap (whole cases resampled); none with fewer
    /// than `min_inputs` cases (`suppressed` says so).
    pub ci: Option<Bounds>,
    /// The normal-approximation cross-check of `ci`.
    pub normal_ci: Option<Bounds>,
    /// Bootstrap resamples.
    pub resamples: u64,
    /// The bootstrap's seed.
    pub seed: u64,
    /// What the bootstrap resamples: `input`.
    pub resampling_unit: String,
    /// How to read the interval.
    pub note: String,
    /// Why there is no interval, when there is none.
    pub suppressed: Option<String>,
    /// The intraclass correlation ρ of the runs' outcomes (ICC(1)), clipped to [0, 1]; none
    /// when every case ran once or every run had the same outcome.
    pub icc: Option<f64>,
    /// √((1 + (k − 1)ρ)/k) at the harmonic mean k of the run counts.
    pub width_factor: Option<f64>,
    /// Cases that stopped early (`PROB_STOP`): with any, there is no interval, since a case
    /// that stops once its verdict is certain has a fraction that leans toward it.
    pub stopped: u64,
    /// The cases' recorded cost, which prices the projection: either option adds it again.
    #[serde(default)]
    pub cost: f64,
    /// What doubling runs or inputs would do to the interval's width; none without ρ.
    #[serde(default)]
    pub projection: Option<Projection>,
}

/// The estimate over `rows` (each with at least one run), at `config`'s level, resamples,
/// seed and `min_inputs`. Cases are sorted by id, the order the bootstrap draws from, so that
/// the result does not depend on the order results arrived in.
pub(crate) fn estimate(rows: &[&Row], config: &StatsConfig) -> Option<Estimate> {
    let mut rows: Vec<&Row> = rows.iter().copied().filter(|r| r.total > 0).collect();
    if rows.is_empty() {
        return None;
    }
    rows.sort_by(|a, b| a.info.case.cmp(&b.info.case));
    let counts: Vec<(u64, u64)> = rows.iter().map(|r| (r.passes, r.total)).collect();
    let values: Vec<f64> = counts.iter().map(|&(x, n)| x as f64 / n as f64).collect();
    let totals: Vec<u64> = counts.iter().map(|&(_, n)| n).collect();
    let level = config.interval.level;
    let rho = icc(&counts, true);
    let k = harmonic_mean(&totals)?;
    let enough = values.len() as u64 >= config.min_inputs;
    let (ci, normal_ci) = if enough {
        let resamples = config.resamples.max(1);
        (
            bootstrap_interval(&values, resamples, config.seed, level)
                .map(|b| Bounds::new("bootstrap", level, b)),
            normal_interval(&values, level).map(|b| Bounds::new("normal", level, b)),
        )
    } else {
        (None, None)
    };
    let mut estimate = Estimate {
        inputs: values.len() as u64,
        runs: RunSpan {
            min: totals.iter().copied().min().unwrap_or(0),
            mean: fmean(&totals.iter().map(|&n| n as f64).collect::<Vec<_>>()).unwrap_or(0.0),
            max: totals.iter().copied().max().unwrap_or(0),
        },
        estimate: fmean(&values).unwrap_or(0.0),
        ci,
        normal_ci,
        resamples: config.resamples,
        seed: config.seed,
        resampling_unit: "input".to_string(),
        note: "inputs treated as a sample".to_string(),
        suppressed: (!enough).then(|| too_few(config.min_inputs)),
        icc: rho,
        width_factor: rho.map(|rho| width_factor(k, rho)),
        stopped: 0,
        cost: fsum(rows.iter().map(|r| r.cost)),
        projection: rho.map(|rho| Projection {
            runs_x2: projected_width(k, rho, 2.0, 1.0) - 1.0,
            inputs_x2: projected_width(k, rho, 1.0, 2.0) - 1.0,
        }),
    };
    // As pytest-probability's `suppress_stopped`: the estimate and ρ stay, as data; an
    // interval already suppressed keeps its reason.
    let stopped = rows.iter().filter(|r| r.stopped.is_some()).count() as u64;
    if stopped > 0 {
        estimate.stopped = stopped;
        if estimate.ci.is_some() {
            estimate.ci = None;
            estimate.normal_ci = None;
            estimate.suppressed = Some(stopped_early(stopped));
        }
    }
    Some(estimate)
}

/// The short name of the function a row id belongs to: the part before the first `::`.
pub(crate) fn function_of(case: &str) -> &str {
    case.split_once("::").map_or(case, |(short, _)| short)
}

/// The rows of each function, by short name in name order, each group in the rows' order.
pub(crate) fn by_function(rows: &[Row]) -> Vec<(&str, Vec<&Row>)> {
    let mut groups: std::collections::BTreeMap<&str, Vec<&Row>> = Default::default();
    for row in rows {
        groups
            .entry(function_of(&row.info.case))
            .or_default()
            .push(row);
    }
    groups.into_iter().collect()
}

/// Each metric of `config` over `rows`: the cases with at least one run, sorted by case id as
/// the estimate's are.
fn metrics(rows: &[&Row], config: &StatsConfig) -> OrderedMap<MetricAggregate> {
    let mut rows: Vec<&Row> = rows.iter().copied().filter(|r| r.total > 0).collect();
    rows.sort_by(|a, b| a.info.case.cmp(&b.info.case));
    OrderedMap(
        config
            .metrics
            .iter()
            .map(|&metric| (metric.name(), MetricAggregate::of(&rows, metric, config)))
            .collect(),
    )
}

/// One aggregate per function, by short name, then the session's (`Overall`), each with its
/// metrics and its estimate.
pub(crate) fn aggregates(rows: &[Row], config: &StatsConfig) -> Vec<Aggregate> {
    let mut out: Vec<Aggregate> = by_function(rows)
        .into_iter()
        .map(|(name, group)| Aggregate {
            scope: "function".to_string(),
            name: name.to_string(),
            function: group[0].info.function.clone(),
            module: group[0].info.module.clone(),
            metrics: metrics(&group, config),
            estimate: estimate(&group, config),
        })
        .collect();
    if !rows.is_empty() {
        let all: Vec<&Row> = rows.iter().collect();
        out.push(Aggregate {
            scope: "overall".to_string(),
            name: "Overall".to_string(),
            function: String::new(),
            module: String::new(),
            metrics: metrics(&all, config),
            estimate: estimate(&all, config),
        });
    }
    out
}
