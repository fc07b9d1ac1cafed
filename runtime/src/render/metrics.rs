//! The `probability: metrics` block (`PROB_METRIC`): each case's pass^k and pass@k, then each
//! function's and the session's in pytest-probability's layout (`N=12 inputs  41.2%  [30.1%,
//! 52.0%]`), a legend of the kinds used, and each metric line's plain-language reading.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::analysis::estimates::function_of;
use crate::model::analysis::MetricAggregate;
use crate::model::{Aggregate, Report, Row};
use crate::render::analysis::pct1;
use crate::render::text::rule;
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::percent_text;
use crate::types::stats::stopping::StopMode;

/// The block's closing legend, one line per kind used, as pytest-probability words it.
const LEGEND: [(&str, &str); 2] = [
    (
        "^",
        "pass^k: the chance that k runs of an input all pass (reliability)",
    ),
    (
        "@",
        "pass@k: the chance that at least one of k runs of an input passes (best-of-k)",
    ),
];

/// Appends the block to `out`; nothing without metrics.
pub(crate) fn block(report: &Report, out: &mut String) {
    let metrics = &report.stats_config.metrics;
    if metrics.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", rule("probability: metrics"));
    let names: Vec<String> = metrics.iter().map(|m| m.name()).collect();
    let cell = |values: &OrderedMap<f64>| -> String {
        names
            .iter()
            .map(|name| match values.get(name) {
                Some(value) => format!("{name} {value:.2}"),
                None => format!("{name}    -"),
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let width = report
        .rows
        .iter()
        .map(|r| crate::render::text::shown(&r.info.case).chars().count())
        .max()
        .unwrap_or(0);
    for row in &report.rows {
        let case = crate::render::text::shown(&row.info.case);
        let pad = " ".repeat(width - case.chars().count());
        let _ = writeln!(out, "  {case}{pad}  {}", cell(&row.metrics));
    }
    let entries = shown(report);
    if entries.is_empty() {
        return;
    }
    out.push('\n');
    for line in lines(&entries, report.stats_config.intervals) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    for (kind, legend) in LEGEND {
        if entries.iter().any(|(_, name, _)| name.contains(kind)) {
            let _ = writeln!(out, "  {legend}");
        }
    }
}

/// The block's aggregate lines: every function's metrics by function name, then the session's,
/// left out when it would repeat the only function's. Unlike the function-level lines under
/// the rows, functions with too few inputs for an interval are listed, with the estimate
/// alone: the block is the terminal's only view of the metrics.
pub(crate) fn shown(report: &Report) -> Vec<(&Aggregate, &str, &MetricAggregate)> {
    crate::render::analysis::listed(report)
        .flat_map(|a| {
            a.metrics
                .0
                .iter()
                .map(move |(name, m)| (a, name.as_str(), m))
        })
        .collect()
}

/// The name an aggregate goes by: its short name, or its function's in a report that did not
/// write one.
fn label(aggregate: &Aggregate) -> &str {
    if aggregate.name.is_empty() {
        aggregate
            .function
            .strip_prefix("bench_")
            .unwrap_or(&aggregate.function)
    } else {
        &aggregate.name
    }
}

fn cases(n: u64) -> String {
    format!("{n} case{}", if n == 1 { "" } else { "s" })
}

fn inputs(n: u64) -> String {
    format!("{n} input{}", if n == 1 { "" } else { "s" })
}

/// One line per (aggregate, metric), columns aligned, the aggregate's name on its first line
/// only: `classify  pass^3  N=12 inputs  41.2%  [30.1%, 52.0%]`. The interval is left out when
/// there is none or `intervals` is off; a line over cases that stopped early shows neither
/// estimate nor interval, only `hidden: 2 cases stopped early`; `2 left out (fewer than 5
/// runs)` counts the cases too short for the metric. Columns no line uses are left out.
pub(crate) fn lines(
    entries: &[(&Aggregate, &str, &MetricAggregate)],
    intervals: bool,
) -> Vec<String> {
    let mut previous: Option<&Aggregate> = None;
    let names: Vec<&str> = entries
        .iter()
        .map(|(a, _, _)| {
            let first = !previous.is_some_and(|p| std::ptr::eq(p, *a));
            previous = Some(a);
            if first {
                label(a)
            } else {
                ""
            }
        })
        .collect();
    let metrics: Vec<&str> = entries.iter().map(|(_, name, _)| *name).collect();
    let sizes: Vec<String> = entries
        .iter()
        .map(|(_, _, m)| format!("N={}", inputs(m.inputs)))
        .collect();
    let estimates: Vec<String> = entries
        .iter()
        .map(|(_, _, m)| match m.estimate {
            Some(estimate) if m.stopped == 0 => pct1(estimate),
            _ => String::new(),
        })
        .collect();
    let bounds: Vec<Option<(String, String)>> = entries
        .iter()
        .map(|(_, _, m)| {
            m.ci.as_ref()
                .filter(|_| intervals)
                .map(|ci| (pct1(ci.low), pct1(ci.high)))
        })
        .collect();
    let notes: Vec<String> = entries
        .iter()
        .map(|(_, _, m)| {
            let mut notes = Vec::new();
            if m.stopped > 0 {
                notes.push(format!("hidden: {} stopped early", cases(m.stopped)));
            }
            if m.left_out > 0 {
                notes.push(format!("{} left out (fewer than {} runs)", m.left_out, m.k));
            }
            notes.join(", ")
        })
        .collect();
    let width = |cells: &mut dyn Iterator<Item = usize>| cells.max().unwrap_or(0);
    let name_w = width(&mut names.iter().map(|c| c.chars().count()));
    let metric_w = width(&mut metrics.iter().map(|c| c.chars().count()));
    let size_w = width(&mut sizes.iter().map(|c| c.chars().count()));
    let est_w = width(&mut estimates.iter().map(|c| c.chars().count()));
    let low_w = width(&mut bounds.iter().flatten().map(|b| b.0.chars().count()));
    let high_w = width(&mut bounds.iter().flatten().map(|b| b.1.chars().count()));
    let interval_w = if bounds.iter().any(Option::is_some) {
        low_w + high_w + 4
    } else {
        0
    };
    let left = |text: &str, width: usize| {
        format!(
            "{text}{}",
            " ".repeat(width.saturating_sub(text.chars().count()))
        )
    };
    let right = |text: &str, width: usize| {
        format!(
            "{}{text}",
            " ".repeat(width.saturating_sub(text.chars().count()))
        )
    };
    (0..entries.len())
        .map(|i| {
            let mut parts = vec![
                left(names[i], name_w),
                left(metrics[i], metric_w),
                left(&sizes[i], size_w),
            ];
            if est_w > 0 {
                parts.push(right(&estimates[i], est_w));
            }
            if interval_w > 0 {
                let cell = bounds[i].as_ref().map_or(String::new(), |(low, high)| {
                    format!("[{}, {}]", right(low, low_w), right(high, high_w))
                });
                parts.push(left(&cell, interval_w));
            }
            parts.push(notes[i].clone());
            format!("  {}", parts.join("  ")).trim_end().to_string()
        })
        .collect()
}

/// `pass^3 41.2% [30.1%, 52.0%]`, a metric in one cell (the HTML page's), in the block's
/// roundings.
#[cfg(feature = "html")]
pub(crate) fn cell(name: &str, m: &MetricAggregate) -> String {
    let mut text = name.to_string();
    match m.estimate {
        Some(estimate) if m.stopped == 0 => {
            let _ = write!(text, " {}", pct1(estimate));
        }
        _ => text.push_str(" —"),
    }
    if let Some(ci) = &m.ci {
        let _ = write!(text, " [{}, {}]", pct1(ci.low), pct1(ci.high));
    }
    text
}

/// What a metric measures, in one sentence.
fn meaning(name: &str, m: &MetricAggregate) -> String {
    let k = m.k;
    if k == 1 {
        return format!("{name} is the chance that one run of an input passes: the pass rate.");
    }
    if name.contains('^') {
        format!(
            "{name} is the chance that {k} runs of the same input all pass: reliability, for \
             code that has to work every time it is called."
        )
    } else {
        format!(
            "{name} is the chance that at least one of {k} runs of the same input passes: \
             best-of-{k}, for when a failed attempt can be retried, or the best of {k} answers \
             kept."
        )
    }
}

/// The readings of the block's aggregate lines, for the explained section.
pub(crate) fn readings(report: &Report) -> Vec<String> {
    shown(report)
        .into_iter()
        .map(|(aggregate, name, m)| reading(report, aggregate, name, m))
        .collect()
}

/// A metric line in plain language: what the metric means, its average over the inputs and
/// its interval in words, how many inputs were left out and why, and a next step.
pub(crate) fn reading(
    report: &Report,
    aggregate: &Aggregate,
    name: &str,
    m: &MetricAggregate,
) -> String {
    let config = &report.stats_config;
    let overall = aggregate.scope == "overall";
    let who = label(aggregate);
    let k = m.k;
    let mut text = format!("{who} {name}: {}", meaning(name, m));
    let step = format!(
        "Next step: give every case at least {k} runs (PROB_RUNS={k} or more, or runs = {k} in \
         its attribute)"
    );
    let Some(estimate) = m.estimate else {
        let place = if overall {
            "in this session".to_string()
        } else {
            format!("of {who}")
        };
        let _ = write!(
            text,
            " No input {place} has {k} runs, so it cannot be worked out yet: an input needs at \
             least {k} runs for it. {step}."
        );
        return text;
    };
    let whose = if overall {
        format!("the {} in this session", inputs(m.inputs))
    } else {
        format!("{who}'s {}", inputs(m.inputs))
    };
    if m.stopped > 0 {
        let mode = config.stop;
        let decided = if mode == StopMode::Curtail {
            "certain"
        } else {
            "decided"
        };
        let _ = write!(
            text,
            " No value is shown: {} of {whose} stopped early, once their gates' verdicts were \
             {decided} (PROB_STOP={}). A case that stops early has a fraction from fewer runs, \
             and because it stopped as soon as its verdict was {decided}, that fraction can lean \
             toward the verdict, so {name} worked out from such inputs would mislead. Next \
             step: to see this line, run without PROB_STOP={}.",
            m.stopped,
            mode.name(),
            mode.name(),
        );
        return text;
    }
    let _ = write!(
        text,
        " Averaged over {whose}, each input counting equally, it is {}.",
        pct1(estimate)
    );
    if m.left_out > 0 {
        let _ = write!(
            text,
            " {} had fewer than {k} runs and {} left out.",
            capitalized(&inputs(m.left_out)),
            if m.left_out == 1 { "was" } else { "were" }
        );
    }
    if let Some(rate) = mean_rate(report, aggregate, k).filter(|_| k > 1) {
        let _ = write!(
            text,
            " For comparison, the same inputs passed {} of their runs",
            pct1(rate)
        );
        if name.contains('^') && estimate < rate {
            let every = if k == 2 {
                "both runs".to_string()
            } else {
                format!("all {k} runs")
            };
            let _ = write!(text, "; {name} is lower because {every} have to pass.");
        } else if name.contains('@') && estimate > rate {
            let _ = write!(
                text,
                "; {name} is higher because one pass in {k} runs is enough."
            );
        } else {
            text.push('.');
        }
    }
    let subject = if overall { "your code" } else { who };
    match (&m.ci, m.suppressed.as_deref()) {
        (Some(ci), _) => {
            let _ = write!(
                text,
                " The true average is probably between {} and {} ({}% confidence, {} bootstrap \
                 resamples of whole inputs, seed {}), treating these inputs as a random sample \
                 of the inputs {subject} will meet.",
                pct1(ci.low),
                pct1(ci.high),
                percent_text(ci.level),
                config.resamples,
                config.seed,
            );
        }
        (None, Some(_)) => {
            let _ = write!(
                text,
                " No range is shown: with fewer than {} inputs (PROB_MIN_INPUTS), a range worked \
                 out from the inputs alone comes out too narrow.",
                config.min_inputs
            );
        }
        (None, None) => {}
    }
    if m.left_out > 0 {
        let _ = write!(text, " {step}, so that no input is left out.");
    } else if m.ci.is_none() && m.suppressed.is_some() {
        let _ = write!(
            text,
            " Next step: add inputs (more cases) to reach {}.",
            config.min_inputs
        );
    }
    text
}

/// The mean pass fraction of the aggregate's cases with at least `k` runs: what the metric
/// averages over.
fn mean_rate(report: &Report, aggregate: &Aggregate, k: u64) -> Option<f64> {
    let fractions: Vec<f64> = report
        .rows
        .iter()
        .filter(|row| row.total >= k && in_aggregate(row, aggregate))
        .map(|row| row.passes as f64 / row.total as f64)
        .collect();
    (!fractions.is_empty()).then(|| fractions.iter().sum::<f64>() / fractions.len() as f64)
}

fn in_aggregate(row: &Row, aggregate: &Aggregate) -> bool {
    aggregate.scope == "overall"
        || if aggregate.name.is_empty() {
            row.info.function == aggregate.function && row.info.module == aggregate.module
        } else {
            function_of(&row.info.case) == aggregate.name
        }
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}
