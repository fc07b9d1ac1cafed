//! What a session's rows add up to: the number of runs asked for, the rows that fail the
//! session, the warnings of their cases, and per function the sums behind the means of the
//! metrics (before the analysis, which replaces the means with the same means, their intervals
//! and the session's; see `analysis::estimates`).
//!
//! One step, [`RowSums::row_changed`], folds a row in: `Report::build` calls it once per row,
//! and the live report (`store::live`) calls it as a row changes, with what the row counted
//! for before, so that the report's head changes in constant time. Both therefore agree by
//! construction.
//!
//! Layer: model.

use crate::model::analysis::MetricAggregate;
use crate::model::case::infeasible;
use crate::model::report::{Aggregate, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::StatsConfig;
use crate::types::sum::saturating_add;

/// What a session's rows add up to, kept as rows are added and changed.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RowSums {
    /// The most runs any case asks for.
    pub(crate) runs: u32,
    /// Rows that fail the session, for the exit status.
    pub(crate) failing_rows: u64,
    /// Per function, the sums behind the means of the metrics (kept only when metrics are set).
    pub(crate) functions: Vec<FunctionSums>,
    /// Gates that cannot pass with their cases' runs (and, kept by the live report, every
    /// warning of the report it last rebuilt).
    pub(crate) warnings: Vec<String>,
}

/// What a row counted for in the sums before it changed.
pub(crate) struct Counted<'a> {
    /// Whether it failed the session.
    pub(crate) fails: bool,
    /// Its metrics.
    pub(crate) metrics: &'a OrderedMap<f64>,
}

impl RowSums {
    /// The sums of `rows`, each folded in once.
    pub(crate) fn of_rows(rows: &[Row], config: &StatsConfig) -> RowSums {
        let mut sums = RowSums::default();
        for row in rows {
            sums.row_changed(None, row, config);
        }
        sums
    }

    /// Accounts for a settled row changing from `before` (none for a new row) to `after`.
    pub(crate) fn row_changed(
        &mut self,
        before: Option<Counted<'_>>,
        after: &Row,
        config: &StatsConfig,
    ) {
        self.runs = self.runs.max(after.info.runs);
        if before.is_none() {
            self.warnings.extend(infeasible(&after.info, config));
            self.warnings
                .extend(crate::model::latency_gate::infeasible(&after.info, config));
        }
        let fails_before = before.as_ref().is_some_and(|before| before.fails);
        self.failing_rows = (self.failing_rows + u64::from(after.fails_session(config)))
            .saturating_sub(u64::from(fails_before));
        FunctionSums::row_changed(
            &mut self.functions,
            before.map(|before| before.metrics),
            after,
            config,
        );
    }

    /// The exit status the rows give: 1 when any fails the session.
    pub(crate) fn exit_status(&self) -> i32 {
        i32::from(self.failing_rows > 0)
    }

    /// The per-function means of the metrics, for functions with at least one case.
    pub(crate) fn aggregates(&self, config: &StatsConfig) -> Vec<Aggregate> {
        means(&self.functions, config)
    }
}

/// The running sums of one function's metrics, so that its means change in constant time.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct FunctionSums {
    pub(crate) function: String,
    pub(crate) module: String,
    pub(crate) cases: u64,
    /// Per metric of the session's settings: the sum over cases that have it, and their count.
    pub(crate) sums: Vec<f64>,
    pub(crate) counts: Vec<u64>,
}

impl FunctionSums {
    /// Moves a row's metrics from `before` (none for a new row) to `after` in its function's sums.
    fn row_changed(
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
fn means(functions: &[FunctionSums], config: &StatsConfig) -> Vec<Aggregate> {
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
