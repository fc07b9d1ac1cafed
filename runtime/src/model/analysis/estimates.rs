//! Function-level estimates: the mean of a function's per-case pass fractions (and the
//! session's), with a cluster-bootstrap interval over its cases, the intraclass correlation of
//! its runs, and what doubling its runs or its inputs would do to the interval.
//!
//! Layer: model.

use std::ops::Range;

use crate::model::analysis::metrics::{stopped_early, too_few, MetricAggregate};
use crate::model::report::{Aggregate, Row};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::cluster::{harmonic_mean, icc, projected_width, width_factor};
use crate::types::stats::resample::{bootstrap_interval, fmean, fsum, normal_interval};
use crate::types::stats::StatsConfig;

/// An interval from a procedure the row intervals do not use (a bootstrap, a normal
/// approximation, Newcombe's), as pytest-probability writes one.
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    /// Doubling the runs of every case.
    pub runs_x2: f64,
    /// Doubling the number of cases, with runs like today's.
    pub inputs_x2: f64,
}

/// A function's (or the session's) estimate over its cases; the fields are
/// pytest-probability's, `cost` and `projection` are probtest's additions.
#[derive(Clone, Debug, PartialEq)]
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
    pub cost: f64,
    /// What doubling runs or inputs would do to the interval's width; none without ρ.
    pub projection: Option<Projection>,
}

/// `rows` with at least one run, sorted by case id (stably: rows sharing an id keep their
/// order). Rows mostly come sorted (a function's cases in source order), which one pass
/// checks.
fn sampled<'a>(rows: impl Iterator<Item = &'a Row>) -> Vec<&'a Row> {
    let mut sampled: Vec<&Row> = rows.filter(|r| r.total > 0).collect();
    by_case(&mut sampled);
    sampled
}

/// Sorts `rows` by case id, stably, when they are not sorted already.
fn by_case(rows: &mut [&Row]) {
    let sorted = (1..rows.len()).all(|i| rows[i - 1].info.case <= rows[i].info.case);
    if !sorted {
        rows.sort_by(|a, b| a.info.case.cmp(&b.info.case));
    }
}

/// The estimate over `rows`, [`sampled`] already, at `config`'s level, resamples, seed and
/// `min_inputs`. Cases are sorted by id, the order the bootstrap draws from, so that the result
/// does not depend on the order results arrived in.
fn estimate(rows: &[&Row], config: &StatsConfig) -> Option<Estimate> {
    if rows.is_empty() {
        return None;
    }
    // The per-case figures in one pass.
    let mut counts: Vec<(u64, u64)> = Vec::with_capacity(rows.len());
    let mut values: Vec<f64> = Vec::with_capacity(rows.len());
    let mut totals: Vec<u64> = Vec::with_capacity(rows.len());
    let mut runs: Vec<f64> = Vec::with_capacity(rows.len());
    let (mut fewest, mut most) = (u64::MAX, 0);
    let mut stopped = 0;
    for row in rows {
        let (x, n) = (row.passes, row.total);
        counts.push((x, n));
        values.push(x as f64 / n as f64);
        totals.push(n);
        runs.push(n as f64);
        fewest = fewest.min(n);
        most = most.max(n);
        stopped += u64::from(row.stopped.is_some());
    }
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
            min: fewest,
            mean: fmean(&runs).unwrap_or(0.0),
            max: most,
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
    // Bytes, not `split_once`'s substring search, which is many calls deep unoptimized; a
    // short name is a few bytes long.
    let bytes = case.as_bytes();
    let mut at = 0;
    while at + 1 < bytes.len() {
        if bytes[at] == b':' && bytes[at + 1] == b':' {
            return &case[..at];
        }
        at += 1;
    }
    case
}

/// The rows of each function, by short name in name order, each group in the rows' order.
pub(crate) fn by_function(rows: &[Row]) -> Vec<(&str, Vec<&Row>)> {
    // In source order a function's rows are next to each other: its spans are found in one
    // pass, and only the spans (a few) are sorted by name, stably, so that the spans of one
    // name (functions of one short name in several modules) join in the rows' order.
    let mut spans: Vec<(&str, Range<usize>)> = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let name = function_of(&row.info.case);
        match spans.last_mut() {
            Some((last, span)) if *last == name => span.end = index + 1,
            _ => spans.push((name, index..index + 1)),
        }
    }
    spans.sort_by(|a, b| a.0.cmp(b.0));
    let mut groups: Vec<(&str, Vec<&Row>)> = Vec::with_capacity(spans.len());
    for (name, span) in spans {
        match groups.last_mut() {
            Some((last, group)) if *last == name => group.extend(&rows[span]),
            _ => groups.push((name, rows[span].iter().collect())),
        }
    }
    groups
}

/// Each metric of `config` over `rows`, [`sampled`] already: the cases with at least one run,
/// sorted by case id as the estimate's are.
fn metrics(rows: &[&Row], config: &StatsConfig) -> OrderedMap<MetricAggregate> {
    let mut metrics = Vec::with_capacity(config.metrics.len());
    for &metric in &config.metrics {
        metrics.push((metric.name(), MetricAggregate::of(rows, metric, config)));
    }
    OrderedMap(metrics)
}

/// One aggregate per function, by short name, then the session's (`Overall`), each with its
/// metrics and its estimate.
pub(crate) fn aggregates(rows: &[Row], config: &StatsConfig) -> Vec<Aggregate> {
    let groups = by_function(rows);
    let mut out: Vec<Aggregate> = Vec::with_capacity(groups.len() + 1);
    // The functions' sampled rows one after another: the session's, in name order, which is
    // mostly case id order too (a row id starts with its function's short name). Rows sharing
    // an id share a function, so they stay in the rows' order.
    let mut all: Vec<&Row> = Vec::with_capacity(rows.len());
    for (name, group) in &groups {
        let group_sampled = sampled(group.iter().copied());
        out.push(Aggregate {
            scope: "function".to_string(),
            name: name.to_string(),
            function: group[0].info.function.clone(),
            module: group[0].info.module.clone(),
            metrics: metrics(&group_sampled, config),
            estimate: estimate(&group_sampled, config),
        });
        all.extend(group_sampled);
    }
    if !rows.is_empty() {
        by_case(&mut all);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::report::Row;
    use crate::model::tests::info;

    fn row(case: &str, module: &str, passes: u64, total: u64) -> Row {
        let mut row = Row::new(CaseInfo {
            module: module.to_string(),
            ..info(case)
        });
        (row.passes, row.total) = (passes, total);
        row
    }

    use crate::model::case::CaseInfo;

    #[test]
    fn function_of_finds_the_first_double_colon() {
        for case in [
            "a", "a::b", "a::b::c", "::x", "a:b::c", "a:", "", "é::x", "a:::b",
        ] {
            let expected = case.split_once("::").map_or(case, |(short, _)| short);
            assert_eq!(function_of(case), expected, "{case:?}");
        }
    }

    #[test]
    fn functions_group_as_a_map_by_name_groups_them() {
        // One short name in two modules, not next to each other; names out of order.
        let rows = vec![
            row("b::1", "m", 1, 2),
            row("b::0", "m", 2, 2),
            row("a::1", "m", 0, 2),
            row("a1::1", "n", 1, 2),
            row("b::2", "n", 1, 2),
            row("a", "n", 1, 1),
        ];
        let mut reference: std::collections::BTreeMap<&str, Vec<&Row>> = Default::default();
        for row in &rows {
            reference
                .entry(function_of(&row.info.case))
                .or_default()
                .push(row);
        }
        let reference: Vec<(&str, Vec<&Row>)> = reference.into_iter().collect();
        assert_eq!(by_function(&rows), reference);
    }

    #[test]
    fn the_sessions_cases_are_sorted_when_the_functions_cases_are_not_in_id_order() {
        // Function `a` sorts before `a1`, but `a1::y` before `a::x` (`1` < `:`); an id shared
        // by two modules keeps the rows' order; a row with no runs is left out.
        let rows = vec![
            row("a::x", "m", 1, 4),
            row("a1::y", "m", 3, 4),
            row("a::x", "n", 2, 4),
            row("a::w", "m", 0, 0),
            row("a::v", "n", 4, 4),
        ];
        let config = StatsConfig {
            min_inputs: 1,
            resamples: 50,
            ..StatsConfig::default()
        };
        let out = aggregates(&rows, &config);
        let mut all: Vec<&Row> = rows.iter().filter(|r| r.total > 0).collect();
        all.sort_by(|a, b| a.info.case.cmp(&b.info.case));
        let overall = out.last().expect("the session's");
        assert_eq!(overall.estimate, estimate(&all, &config));
        let ids: Vec<(&str, &str)> = all
            .iter()
            .map(|r| (r.info.case.as_str(), r.info.module.as_str()))
            .collect();
        assert_eq!(
            ids,
            [("a1::y", "m"), ("a::v", "n"), ("a::x", "m"), ("a::x", "n")]
        );
        // Draws depend on the order: another order gives other bounds (for some seed), so the
        // check above would notice a wrong one.
        let mut other = all.clone();
        other.reverse();
        let differs = (0..20).any(|seed| {
            let config = StatsConfig {
                seed,
                ..config.clone()
            };
            let ci = |rows: &[&Row]| estimate(rows, &config).and_then(|e| e.ci);
            ci(&other) != ci(&all)
        });
        assert!(differs);
        let a = &out[0];
        assert_eq!(
            (a.name.as_str(), a.estimate.as_ref().map(|e| e.inputs)),
            ("a", Some(3))
        );
    }
}
