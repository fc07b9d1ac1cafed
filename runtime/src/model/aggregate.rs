//! Per-function means of the metrics, before the analysis: `Report::build` computes them from
//! its rows; the live report keeps the same [`FunctionSums`] running as rows change, so that a
//! mean changes in constant time. The analysis (`analysis::estimates`) replaces them with the
//! same means, their intervals and the session's.
//!
//! Layer: model.

use crate::model::analysis::MetricAggregate;
use crate::model::report::{Aggregate, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::StatsConfig;
use crate::types::sum::saturating_add;

/// The per-function means of the metrics, for functions with at least one case.
pub(crate) fn aggregates(rows: &[Row], config: &StatsConfig) -> Vec<Aggregate> {
    means(&FunctionSums::of_rows(rows, config), config)
}

/// The running sums of one function's metrics, so that its means change in constant time.
#[derive(Debug, Default)]
pub(crate) struct FunctionSums {
    pub(crate) function: String,
    pub(crate) module: String,
    pub(crate) cases: u64,
    /// Per metric of the session's settings: the sum over cases that have it, and their count.
    pub(crate) sums: Vec<f64>,
    pub(crate) counts: Vec<u64>,
}

impl FunctionSums {
    /// The sums of `rows`, as a report built from them has them.
    pub(crate) fn of_rows(rows: &[Row], config: &StatsConfig) -> Vec<FunctionSums> {
        let mut functions = Vec::new();
        for row in rows {
            FunctionSums::row_changed(&mut functions, None, row, config);
        }
        functions
    }

    /// Moves a row's metrics from `before` (none for a new row) to `after` in its function's sums.
    pub(crate) fn row_changed(
        functions: &mut Vec<FunctionSums>,
        before: Option<&OrderedMap<f64>>,
        after: &Row,
        config: &StatsConfig,
    ) {
        // Without metrics there are no means to keep, and the index stays the same size however
        // many functions the session has.
        if config.metrics.is_empty() {
            return;
        }
        let names: Vec<String> = config.metrics.iter().map(|m| m.name()).collect();
        let position = functions
            .iter()
            .position(|f| f.function == after.info.function && f.module == after.info.module)
            .unwrap_or_else(|| {
                functions.push(FunctionSums {
                    function: after.info.function.clone(),
                    module: after.info.module.clone(),
                    cases: 0,
                    sums: vec![0.0; names.len()],
                    counts: vec![0; names.len()],
                });
                functions.len() - 1
            });
        let sums = &mut functions[position];
        if before.is_none() {
            sums.cases += 1;
        }
        for (index, name) in names.iter().enumerate() {
            if let Some(value) = before.and_then(|metrics| metrics.get(name)) {
                sums.sums[index] -= value;
                sums.counts[index] -= 1;
            }
            if let Some(value) = after.metrics.get(name) {
                sums.sums[index] = saturating_add(sums.sums[index], *value);
                sums.counts[index] += 1;
            }
        }
    }
}

/// The means the sums give, one aggregate per function.
pub(crate) fn means(functions: &[FunctionSums], config: &StatsConfig) -> Vec<Aggregate> {
    if config.metrics.is_empty() {
        return Vec::new();
    }
    functions
        .iter()
        .map(|sums| {
            let mut aggregate = Aggregate {
                scope: "function".to_string(),
                name: short_name(&sums.function).to_string(),
                estimate: None,
                function: sums.function.clone(),
                module: sums.module.clone(),
                metrics: OrderedMap::default(),
            };
            for (index, &metric) in config.metrics.iter().enumerate() {
                let (sum, count) = (sums.sums[index], sums.counts[index]);
                aggregate.metrics.0.push((
                    metric.name(),
                    MetricAggregate::running(metric, count, sums.cases - count, sum, config),
                ));
            }
            aggregate
        })
        .collect()
}

/// A function's short name as the attribute makes it: a leading `bench_` dropped.
fn short_name(function: &str) -> &str {
    function.strip_prefix("bench_").unwrap_or(function)
}
