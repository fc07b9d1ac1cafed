//! Per-function means of the metrics: the one aggregation, used by `Report::build` and kept
//! running by the live report through [`FunctionSums`].
//!
//! Layer: model.

use crate::model::report::{Aggregate, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::StatsConfig;

/// The per-function means of the metrics, for functions with at least one case.
pub(crate) fn aggregates(rows: &[Row], config: &StatsConfig) -> Vec<Aggregate> {
    if config.metrics.is_empty() {
        return Vec::new();
    }
    let mut functions: Vec<(&str, &str, Vec<&Row>)> = Vec::new();
    for row in rows {
        match functions.iter_mut().find(|(function, module, _)| {
            *function == row.info.function && *module == row.info.module
        }) {
            Some((_, _, members)) => members.push(row),
            None => functions.push((&row.info.function, &row.info.module, vec![row])),
        }
    }
    functions
        .into_iter()
        .map(|(function, module, members)| {
            let mut metrics = OrderedMap::default();
            let mut left_out = OrderedMap::default();
            for metric in &config.metrics {
                let name = metric.name();
                let values: Vec<f64> = members
                    .iter()
                    .filter_map(|row| row.metrics.get(&name).copied())
                    .collect();
                if !values.is_empty() {
                    metrics.0.push((
                        name.clone(),
                        values.iter().sum::<f64>() / values.len() as f64,
                    ));
                }
                left_out
                    .0
                    .push((name, (members.len() - values.len()) as u64));
            }
            Aggregate {
                function: function.to_string(),
                module: module.to_string(),
                metrics,
                left_out,
            }
        })
        .collect()
}
