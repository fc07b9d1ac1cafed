//! `aggregates[]`: its fast writer (serde's derived writer is its oracle in the format tests),
//! and reading it in every schema: schema 4's metric objects as they are; before it a bare mean
//! per metric and a separate `left_out` map, folded into one object per metric with that mean
//! and no interval.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Deserializer};

use crate::format::escape::{Num, Str};
use crate::model::analysis::{Bounds, Estimate, MetricAggregate};
use crate::model::{Aggregate, Report};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::Metric;

/// A metric as reports of any schema hold it.
#[derive(Deserialize)]
#[serde(untagged)]
enum MetricShape {
    /// Schema 4 on, and pytest-probability's.
    Object(MetricAggregate),
    /// Up to schema 3: the mean alone.
    Bare(f64),
}

#[derive(Deserialize)]
struct AggregateShape {
    #[serde(default = "function_scope")]
    scope: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    function: String,
    #[serde(default)]
    module: String,
    #[serde(default)]
    metrics: OrderedMap<MetricShape>,
    /// Up to schema 3: per metric, the cases with fewer than k runs.
    #[serde(default)]
    left_out: OrderedMap<u64>,
    #[serde(flatten)]
    estimate: Option<Estimate>,
}

fn function_scope() -> String {
    "function".to_string()
}

impl<'de> Deserialize<'de> for Aggregate {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let shape = AggregateShape::deserialize(deserializer)?;
        let left_out = shape.left_out;
        let metrics = shape
            .metrics
            .0
            .into_iter()
            .map(|(name, metric)| {
                let metric = match metric {
                    MetricShape::Object(metric) => metric,
                    MetricShape::Bare(mean) => MetricAggregate {
                        // A key this version cannot parse still reads, with k unknown.
                        k: Metric::parse(&name).map_or(0, Metric::k),
                        // Counted from the report's rows once it is read whole.
                        inputs: 0,
                        left_out: left_out.get(&name).copied().unwrap_or(0),
                        estimate: Some(mean),
                        ci: None,
                        normal_ci: None,
                        suppressed: None,
                        stopped: 0,
                    },
                };
                (name, metric)
            })
            .collect();
        Ok(Aggregate {
            scope: shape.scope,
            name: shape.name,
            function: shape.function,
            module: shape.module,
            metrics: OrderedMap(metrics),
            estimate: shape.estimate,
        })
    }
}

/// Fills in what a report of schema 3 or before did not write of its metrics: each metric's
/// inputs, the aggregate's cases (its estimate's, else its rows with runs) less those left out.
pub(crate) fn count_legacy_inputs(report: &mut Report) {
    let rows = &report.rows;
    for aggregate in &mut report.aggregates {
        let cases = match &aggregate.estimate {
            Some(estimate) => estimate.inputs,
            None => rows
                .iter()
                .filter(|row| row.total > 0)
                .filter(|row| {
                    aggregate.scope == "overall"
                        || (row.info.function == aggregate.function
                            && row.info.module == aggregate.module)
                })
                .count() as u64,
        };
        for (_, metric) in &mut aggregate.metrics.0 {
            if metric.estimate.is_some() && metric.inputs == 0 {
                metric.inputs = cases.saturating_sub(metric.left_out);
            }
        }
    }
}

/// `aggregates`, as `serde_json::to_string(aggregates)` writes them, up to number spelling.
///
/// Every report's head holds one per function and the session's, rewritten at each fold; serde's
/// derived writer (a flattened estimate goes through a map serializer) is most of what writing
/// the head costs in a test binary built without optimizations. Each piece is one `format!`,
/// appended once: `format!` runs in std's optimized code, where `write!` into `out` would call
/// this crate's unoptimized `String` writer for every piece.
pub(crate) fn aggregates_json(aggregates: &[Aggregate]) -> String {
    let mut out = String::with_capacity(512 * aggregates.len() + 2);
    out.push('[');
    for (index, aggregate) in aggregates.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_aggregate(&mut out, aggregate);
    }
    out.push(']');
    out
}

fn write_aggregate(out: &mut String, aggregate: &Aggregate) {
    out.push_str(&format!(
        "{{\"scope\":{},\"name\":{},\"function\":{},\"module\":{},\"metrics\":{{",
        Str(&aggregate.scope),
        Str(&aggregate.name),
        Str(&aggregate.function),
        Str(&aggregate.module),
    ));
    for (index, (name, metric)) in aggregate.metrics.0.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "{}:{{\"k\":{},\"inputs\":{},\"left_out\":{},\"estimate\":{},\"ci\":{},\"normal_ci\":{},\"suppressed\":{},\"stopped\":{}}}",
            Str(name),
            metric.k,
            metric.inputs,
            metric.left_out,
            optional_number(metric.estimate),
            bounds(metric.ci.as_ref()),
            bounds(metric.normal_ci.as_ref()),
            optional_text(metric.suppressed.as_deref()),
            metric.stopped,
        ));
    }
    out.push('}');
    if let Some(estimate) = &aggregate.estimate {
        write_estimate(out, estimate);
    }
    out.push('}');
}

/// The estimate's fields, flattened into its aggregate as serde flattens them.
fn write_estimate(out: &mut String, estimate: &Estimate) {
    let projection = match &estimate.projection {
        Some(projection) => format!(
            "{{\"runs_x2\":{},\"inputs_x2\":{}}}",
            Num(projection.runs_x2),
            Num(projection.inputs_x2)
        ),
        None => "null".to_string(),
    };
    out.push_str(&format!(
        ",\"inputs\":{},\"runs\":{{\"min\":{},\"mean\":{},\"max\":{}}},\"estimate\":{},\"ci\":{},\"normal_ci\":{},\"resamples\":{},\"seed\":{},\"resampling_unit\":{},\"note\":{},\"suppressed\":{},\"icc\":{},\"width_factor\":{},\"stopped\":{},\"cost\":{},\"projection\":{projection}",
        estimate.inputs,
        estimate.runs.min,
        Num(estimate.runs.mean),
        estimate.runs.max,
        Num(estimate.estimate),
        bounds(estimate.ci.as_ref()),
        bounds(estimate.normal_ci.as_ref()),
        estimate.resamples,
        estimate.seed,
        Str(&estimate.resampling_unit),
        Str(&estimate.note),
        optional_text(estimate.suppressed.as_deref()),
        optional_number(estimate.icc),
        optional_number(estimate.width_factor),
        estimate.stopped,
        Num(estimate.cost),
    ));
}

fn bounds(bounds: Option<&Bounds>) -> String {
    match bounds {
        Some(b) => format!(
            "{{\"method\":{},\"level\":{},\"low\":{},\"high\":{}}}",
            Str(&b.method),
            Num(b.level),
            Num(b.low),
            Num(b.high)
        ),
        None => "null".to_string(),
    }
}

fn optional_number(value: Option<f64>) -> String {
    value.map_or_else(|| "null".to_string(), |v| Num(v).to_string())
}

fn optional_text(value: Option<&str>) -> String {
    value.map_or_else(|| "null".to_string(), |v| Str(v).to_string())
}

#[cfg(test)]
mod tests {
    use crate::model::tests::{info, record};
    use crate::model::Report;
    use crate::types::stats::{Metric, StatsConfig};
    use crate::types::status::Outcome;

    /// A report of schema 3: a bare mean per metric, the cases left out in a map of their own.
    fn schema_3() -> String {
        let mut records: Vec<_> = (1..=4)
            .map(|run| record("qa::a", run, Outcome::Pass, 0.0, vec![]))
            .collect();
        records.extend((1..=2).map(|run| record("qa::b", run, Outcome::Pass, 0.0, vec![])));
        let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
        let config = StatsConfig {
            metrics: vec![Metric::PassAll(3)],
            ..StatsConfig::default()
        };
        let mut report = Report::build(infos, records, &config);
        report.analyze();
        let mut value = serde_json::to_value(&report).expect("serde writes it");
        value["schema"] = 3.into();
        for aggregate in value["aggregates"].as_array_mut().expect("aggregates") {
            aggregate["metrics"] = serde_json::json!({"pass^3": 1.0});
            aggregate["left_out"] = serde_json::json!({"pass^3": 1});
        }
        value.to_string()
    }

    #[test]
    fn a_bare_mean_reads_as_a_metric_without_an_interval() {
        let report = Report::from_json(&schema_3()).expect("a schema 3 report reads");
        for aggregate in &report.aggregates {
            let metric = aggregate.metrics.get("pass^3").expect("pass^3");
            // Two cases, one of them left out: one input.
            assert_eq!(
                (metric.k, metric.inputs, metric.left_out, metric.estimate),
                (3, 1, 1, Some(1.0)),
                "{}",
                aggregate.name
            );
            assert_eq!((&metric.ci, &metric.suppressed), (&None, &None));
        }
    }

    #[test]
    fn aggregates_read_as_serde_writes_them() {
        // Twelve inputs of one function (an interval each, metrics with and without one), one
        // input of another (suppressed), and the session's line.
        let mut records = Vec::new();
        for input in 0..12u32 {
            for run in 1..=4u32 {
                let outcome = if (input + run) % 3 == 0 {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                };
                records.push(record(
                    &format!("qa::in{input}"),
                    run,
                    outcome,
                    0.001,
                    vec![],
                ));
            }
        }
        records.push(record("lone::only", 1, Outcome::Error, 0.0, vec![]));
        let stats = StatsConfig {
            metrics: vec![Metric::PassAll(3), Metric::PassAny(2), Metric::PassAll(9)],
            ..StatsConfig::default()
        };
        let infos: Vec<crate::model::CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
        let mut report = Report::build(infos, records, &stats);
        report.analyze();
        assert!(report.aggregates.len() >= 3);
        assert!(report
            .aggregates
            .iter()
            .any(|a| a.estimate.as_ref().is_some_and(|e| e.ci.is_some())));
        let expected = serde_json::to_string(&report.aggregates).expect("serde writes it");
        let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).expect("JSON");
        assert_eq!(
            parse(&super::aggregates_json(&report.aggregates)),
            parse(&expected)
        );
        assert_eq!(super::aggregates_json(&[]), "[]");
    }

    #[test]
    fn a_schema_2_report_reads_with_its_metric_means() {
        let text = r#"{"function":"bench_qa","module":"evals","metrics":{"pass^2":0.5},"left_out":{"pass^2":1}}"#;
        let aggregate: crate::model::Aggregate = serde_json::from_str(text).expect("reads");
        assert_eq!(aggregate.scope, "function");
        let metric = aggregate.metrics.get("pass^2").expect("pass^2");
        assert_eq!(
            (metric.k, metric.estimate, metric.left_out),
            (2, Some(0.5), 1)
        );
        assert_eq!(
            (metric.ci.as_ref(), metric.suppressed.as_deref()),
            (None, None)
        );
        assert_eq!(aggregate.estimate, None);
        // And the new shape reads back whole.
        let report = crate::model::analysis::tests::qa();
        let text = serde_json::to_string(&report.aggregates).expect("writes");
        let back: Vec<crate::model::Aggregate> = serde_json::from_str(&text).expect("reads");
        assert_eq!(back, report.aggregates);
    }
}
