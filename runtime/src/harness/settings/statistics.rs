//! The statistics settings (`PROB_METHOD`, `PROB_CONFIDENCE`, ... `PROB_MARGIN`): each read
//! from its variable or its config key and checked, a bad value an error naming its source.
//!
//! Layer: harness.

use std::path::Path;

use probtest_settings::{by_variable, parse_choice, parse_fraction, parse_switch};

use crate::harness::registry::Config;
use crate::types::stats::paired::Adjustment;
use crate::types::stats::{self, ErrorPolicy, Metric, Prior, StatsConfig, Undecided};

/// The statistics settings: each from its environment variable, else the config (under the
/// key the table gives it), else the default. A bad value is an error naming where it came
/// from.
pub(super) fn resolve_stats(
    config: &Config,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<StatsConfig, String> {
    let lookup = |variable: &str| -> Option<(String, String)> {
        if let Some(value) = env(variable) {
            return Some((value, variable.to_string()));
        }
        let key = by_variable(variable).key?;
        config
            .entries
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| (value.to_string(), format!("config `{key}`")))
    };
    let mut stats = StatsConfig::default();
    if let Some((value, source)) = lookup("PROB_METHOD") {
        stats.interval.method = value.parse().map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_CONFIDENCE") {
        stats.interval.level =
            stats::parse_level(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_PRIOR") {
        let numbers: Vec<f64> = value
            .split(',')
            .map(|part| part.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        match numbers[..] {
            [a, b] if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() => {
                stats.interval.prior = Prior { a, b };
            }
            _ => {
                return Err(format!(
                    "{source}: expected two positive numbers `a, b` for a Beta(a, b) prior, got `{value}`"
                ))
            }
        }
    }
    if let Some((value, source)) = lookup("PROB_INTERVALS") {
        stats.intervals = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MIN_RATE") {
        stats.min_rate =
            Some(parse_fraction("a rate", &value).map_err(|why| format!("{source}: {why}"))?);
    }
    if let Some((value, source)) = lookup("PROB_UNDECIDED") {
        stats.undecided = match parse_choice(&value, &["fail", "pass"]) {
            Ok("pass") => Undecided::Pass,
            Ok(_) => Undecided::Fail,
            Err(why) => return Err(format!("{source}: {why}")),
        };
    }
    if let Some((value, source)) = lookup("PROB_ERRORS") {
        stats.errors = match parse_choice(&value, &["count", "exclude"]) {
            Ok("exclude") => ErrorPolicy::Exclude,
            Ok(_) => ErrorPolicy::Count,
            Err(why) => return Err(format!("{source}: {why}")),
        };
    }
    if let Some((value, source)) = lookup("PROB_METRIC") {
        stats.metrics = value
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Metric::parse)
            .collect::<Result<_, _>>()
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_EXPLAIN") {
        stats.explain = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_LATENCY") {
        stats.latency = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_LATENCY_QUANTILE") {
        stats.latency_quantile =
            stats::latency::parse_quantile(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    let whole = |value: &str, least: u64, what: &str| -> Result<u64, String> {
        value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n >= least)
            .ok_or_else(|| format!("expected {what}, got `{value}`"))
    };
    if let Some((value, source)) = lookup("PROB_BOOTSTRAP") {
        stats.resamples = whole(&value, 1, "a whole number of resamples, at least 1")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_SEED") {
        stats.seed = whole(&value, 0, "a whole number at least 0")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MIN_INPUTS") {
        stats.min_inputs = whole(&value, 2, "a whole number of inputs, at least 2")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, _)) = lookup("PROB_COMPARE") {
        stats.compare = Some(value.trim().to_string()).filter(|axis| !axis.is_empty());
    }
    if let Some((value, source)) = lookup("PROB_ADJUST") {
        stats.adjust = Adjustment::parse(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_STOP") {
        stats.stop =
            stats::stopping::StopMode::parse(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MARGIN") {
        let margin = value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|m| (0.0..1.0).contains(m));
        stats.margin = Some(margin.ok_or_else(|| {
            let hint = match value.trim().parse::<f64>() {
                Ok(m) if (1.0..100.0).contains(&m) => format!(" (did you mean {}?)", m / 100.0),
                _ => String::new(),
            };
            format!("{source}: expected a margin at least 0 and below 1, got `{value}`{hint}")
        })?);
    }
    if let Some((value, _)) = lookup("PROB_BASELINE") {
        // Relative to the workspace root, as PROB_JSON is: every package's processes agree.
        let path = Path::new(value.trim());
        stats.baseline = Some(
            match config.root {
                Some(root) if path.is_relative() => Path::new(root).join(path),
                _ => path.to_path_buf(),
            }
            .to_string_lossy()
            .into_owned(),
        );
    } else if stats.margin.is_some() {
        return Err("PROB_MARGIN needs PROB_BASELINE".to_string());
    }
    Ok(stats)
}
