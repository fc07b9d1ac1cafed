//! A metric (pass^k, pass@k) over a function's or the session's cases: the mean of its per-case
//! values over the cases with at least k runs, with the same cluster bootstrap, normal
//! cross-check and `min_inputs` rule as the pass rate's estimate, as pytest-probability's
//! `MetricAggregate` computes it.
//!
//! Layer: model.

use crate::model::analysis::estimates::Bounds;
use crate::model::report::Row;
use crate::types::stats::resample::{bootstrap_interval, fmean, normal_interval};
use crate::types::stats::{Metric, StatsConfig};

/// One metric over a function's (or the session's) cases; the fields are pytest-probability's
/// `aggregates[].metrics[name]`.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricAggregate {
    /// The metric's k.
    pub k: u64,
    /// Cases averaged over: those with at least k runs.
    pub inputs: u64,
    /// Cases left out for having fewer than k runs.
    pub left_out: u64,
    /// The mean of the per-case values; none when no case has k runs.
    pub estimate: Option<f64>,
    /// The percentile interval of a cluster bootstrap over the cases; none when `suppressed`
    /// says why, or in a report kept run by run, which is not analysed yet.
    pub ci: Option<Bounds>,
    /// The normal-approximation cross-check of `ci`.
    pub normal_ci: Option<Bounds>,
    /// Why there is no interval: too few inputs, no input with k runs, or cases that stopped
    /// early.
    pub suppressed: Option<String>,
    /// Cases behind it that stopped early (`PROB_STOP`).
    pub stopped: u64,
}

impl MetricAggregate {
    /// The metric over `rows` (sorted by case id, each with at least one run): the cases with
    /// at least k runs, each with its row's value, averaged and resampled with `config`'s
    /// level, resamples and seed. With fewer than `min_inputs` of them there is no interval;
    /// with a case among them that stopped early, none either (its value leans toward the
    /// verdict it stopped on), and `stopped` counts them.
    pub(crate) fn of(rows: &[&Row], metric: Metric, config: &StatsConfig) -> MetricAggregate {
        let name = metric.name();
        let eligible: Vec<(&Row, f64)> = rows
            .iter()
            .filter_map(|row| Some((*row, *row.metrics.get(&name)?)))
            .collect();
        let k = metric.k();
        let left_out = (rows.len() - eligible.len()) as u64;
        if eligible.is_empty() {
            return MetricAggregate::empty(k, left_out);
        }
        let values: Vec<f64> = eligible.iter().map(|(_, value)| *value).collect();
        let level = config.interval.level;
        let mut aggregate = MetricAggregate {
            k,
            inputs: values.len() as u64,
            left_out,
            estimate: fmean(&values),
            ci: None,
            normal_ci: None,
            suppressed: None,
            stopped: 0,
        };
        if aggregate.inputs < config.min_inputs {
            aggregate.suppressed = Some(too_few(config.min_inputs));
        } else {
            aggregate.ci = bootstrap_interval(&values, config.resamples.max(1), config.seed, level)
                .map(|b| Bounds::new("bootstrap", level, b));
            aggregate.normal_ci =
                normal_interval(&values, level).map(|b| Bounds::new("normal", level, b));
        }
        let stopped = eligible
            .iter()
            .filter(|(row, _)| row.stopped.is_some())
            .count() as u64;
        aggregate.suppress_stopped(stopped);
        aggregate
    }

    /// The metric when no case has k runs.
    fn empty(k: u64, left_out: u64) -> MetricAggregate {
        MetricAggregate {
            k,
            inputs: 0,
            left_out,
            estimate: None,
            ci: None,
            normal_ci: None,
            suppressed: Some(no_input(k)),
            stopped: 0,
        }
    }

    /// The metric as a report kept run by run has it, from its running sum: the mean and what
    /// is known without the analysis; the interval comes when every result is in.
    pub(crate) fn running(
        metric: Metric,
        inputs: u64,
        left_out: u64,
        sum: f64,
        config: &StatsConfig,
    ) -> MetricAggregate {
        if inputs == 0 {
            return MetricAggregate::empty(metric.k(), left_out);
        }
        MetricAggregate {
            k: metric.k(),
            inputs,
            left_out,
            estimate: Some(sum / inputs as f64),
            ci: None,
            normal_ci: None,
            suppressed: (inputs < config.min_inputs).then(|| too_few(config.min_inputs)),
            stopped: 0,
        }
    }

    /// Takes the interval away when `stopped` of the cases stopped early, counting them; an
    /// interval already suppressed keeps its reason.
    pub(crate) fn suppress_stopped(&mut self, stopped: u64) {
        if stopped == 0 {
            return;
        }
        self.stopped = stopped;
        if self.ci.is_some() {
            self.ci = None;
            self.normal_ci = None;
            self.suppressed = Some(stopped_early(stopped));
        }
    }
}

/// `fewer than 10 inputs`.
pub(crate) fn too_few(min_inputs: u64) -> String {
    format!("fewer than {min_inputs} inputs")
}

/// `no input with at least 3 runs`.
pub(crate) fn no_input(k: u64) -> String {
    format!("no input with at least {k} runs")
}

/// `2 cases stopped early`.
pub(crate) fn stopped_early(n: u64) -> String {
    format!("{n} case{} stopped early", if n == 1 { "" } else { "s" })
}
