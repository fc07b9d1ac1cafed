//! The statistics settings (`PROB_METHOD`, `PROB_CONFIDENCE`, ... `PROB_MARGIN`): each read
//! from its variable, else its config key, by its row of the settings table, which parses it
//! and names where a bad value came from; here each value finds its field.
//!
//! Layer: harness.

use std::path::Path;

use probtest_settings as table;

use crate::harness::registry::Config;
use crate::types::stats::{Metric, Prior, StatsConfig};

/// The statistics settings: each from its environment variable, else the config (under the
/// key the table gives it), else the default. A bad value is an error naming where it came
/// from.
pub(super) fn resolve_stats(
    config: &Config,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<StatsConfig, String> {
    let entries = config.entries;
    let mut stats = StatsConfig::default();
    if let Some(method) = table::METHOD.resolve(env, entries)? {
        stats.interval.method = method.into();
    }
    if let Some(level) = table::CONFIDENCE.resolve(env, entries)? {
        stats.interval.level = level;
    }
    if let Some((a, b)) = table::PRIOR.resolve(env, entries)? {
        stats.interval.prior = Prior { a, b };
    }
    if let Some(intervals) = table::INTERVALS.resolve(env, entries)? {
        stats.intervals = intervals;
    }
    if let Some(rate) = table::MIN_RATE.resolve(env, entries)? {
        stats.min_rate = Some(rate);
    }
    if let Some(undecided) = table::UNDECIDED.resolve(env, entries)? {
        stats.undecided = undecided.into();
    }
    if let Some(errors) = table::ERRORS.resolve(env, entries)? {
        stats.errors = errors.into();
    }
    if let Some(metrics) = table::METRIC.resolve(env, entries)? {
        stats.metrics = metrics.into_iter().map(Metric::from).collect();
    }
    if let Some(explain) = table::EXPLAIN.resolve(env, entries)? {
        stats.explain = explain;
    }
    if let Some(latency) = table::LATENCY.resolve(env, entries)? {
        stats.latency = latency;
    }
    if let Some(quantile) = table::LATENCY_QUANTILE.resolve(env, entries)? {
        stats.latency_quantile = quantile;
    }
    if let Some(resamples) = table::BOOTSTRAP.resolve(env, entries)? {
        stats.resamples = resamples;
    }
    if let Some(seed) = table::SEED.resolve(env, entries)? {
        stats.seed = seed;
    }
    if let Some(min_inputs) = table::MIN_INPUTS.resolve(env, entries)? {
        stats.min_inputs = min_inputs;
    }
    if let Some(axis) = table::COMPARE.resolve(env, entries)? {
        stats.compare = Some(axis).filter(|axis| !axis.is_empty());
    }
    if let Some(adjustment) = table::ADJUST.resolve(env, entries)? {
        stats.adjust = adjustment.into();
    }
    if let Some(stop) = table::STOP.resolve(env, entries)? {
        stats.stop = stop.into();
    }
    stats.margin = table::MARGIN.resolve(env, entries)?;
    if let Some(path) = table::BASELINE.resolve(env, entries)? {
        // Relative to the workspace root, as PROB_JSON is: every package's processes agree. A
        // name with no such file is a baseline `cargo probtest baseline save` kept.
        let target = || crate::harness::recorder::target_dir().ok();
        stats.baseline = Some(
            crate::store::baseline_path(&path, config.root.map(Path::new), target)
                .to_string_lossy()
                .into_owned(),
        );
    } else if stats.margin.is_some() {
        return Err(format!(
            "{} needs {}",
            table::MARGIN.variable,
            table::BASELINE.variable
        ));
    }
    Ok(stats)
}
