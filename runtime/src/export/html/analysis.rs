//! The page's function-level section: each function's estimate over its cases (the mean pass
//! fraction, its bootstrap interval, ρ, the metrics' means) and the comparisons (of one
//! argument's values, and with the baseline) as a forest plot, one row per arm against its baseline on a shared scale, with the zero line and the
//! margin's lines. Every figure is the report's; the words and roundings are the terminal's
//! (`render::analysis`, `render::compare`).
//!
//! Layer: export.

use crate::export::html::svg::forest_row;
use crate::export::verdict_word;
use crate::model::analysis::Comparison;
use crate::model::Report;
use crate::render::analysis::pct1;
use crate::render::compare::{p_text, pp};

pub(crate) struct FunctionView {
    pub(crate) name: String,
    pub(crate) cases: String,
    pub(crate) estimate: String,
    pub(crate) interval: String,
    pub(crate) icc: String,
    pub(crate) metrics: String,
    pub(crate) note: String,
}

pub(crate) struct ArmView {
    pub(crate) function: String,
    pub(crate) arms: String,
    pub(crate) pairs: u64,
    pub(crate) difference: String,
    pub(crate) interval: String,
    pub(crate) p: String,
    pub(crate) verdict: String,
    pub(crate) tone: &'static str,
    pub(crate) plot: String,
}

/// One row per aggregate of the report (each function, and the session's `Overall`).
pub(crate) fn functions(report: &Report) -> Vec<FunctionView> {
    report
        .aggregates
        .iter()
        .map(|aggregate| {
            let estimate = aggregate.estimate.as_ref();
            let name = if aggregate.name.is_empty() {
                aggregate.function.clone()
            } else {
                aggregate.name.clone()
            };
            FunctionView {
                name,
                cases: estimate.map_or(String::new(), |e| e.inputs.to_string()),
                estimate: estimate.map_or(String::new(), |e| pct1(e.estimate)),
                interval: estimate
                    .and_then(|e| e.ci.as_ref())
                    .map_or(String::new(), |ci| {
                        format!("[{}, {}]", pct1(ci.low), pct1(ci.high))
                    }),
                icc: estimate
                    .and_then(|e| e.icc)
                    .map_or(String::new(), |rho| format!("{rho:.2}")),
                metrics: aggregate
                    .metrics
                    .0
                    .iter()
                    .map(|(name, metric)| crate::render::metrics::cell(name, metric))
                    .collect::<Vec<_>>()
                    .join("; "),
                note: estimate
                    .and_then(|e| e.suppressed.clone())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The comparisons, each arm a row of the forest plot, then each function against the
/// baseline (`PROB_BASELINE`); all rows share one scale, symmetric around zero and wide enough
/// for every interval and margin.
pub(crate) fn arms(report: &Report) -> Vec<ArmView> {
    let all: Vec<&Comparison> = report
        .comparisons
        .iter()
        .chain(report.baseline.iter().flat_map(|b| b.comparisons.iter()))
        .collect();
    let reach = all
        .iter()
        .flat_map(|c| {
            let ci = c.ci.as_ref().map(|ci| [ci.low.abs(), ci.high.abs()]);
            ci.into_iter()
                .flatten()
                .chain(c.difference.map(f64::abs))
                .chain(c.margin)
        })
        .fold(0.05_f64, f64::max);
    // Rounded up to a tenth, so that the axis ends on a round number.
    let scale = ((reach * 10.0).ceil() / 10.0).min(1.0);
    all.into_iter().map(|c| arm(c, scale)).collect()
}

fn arm(c: &Comparison, scale: f64) -> ArmView {
    let interval = c.ci.as_ref().map(|ci| (ci.low, ci.high));
    let tone = match c.verdict {
        Some(crate::types::stats::Verdict::Pass) | None => "pass",
        Some(crate::types::stats::Verdict::Undecided) => "warn",
        Some(crate::types::stats::Verdict::Fail) => "fail",
    };
    ArmView {
        function: c.function.clone(),
        arms: match &c.axis {
            Some(axis) => format!("{axis}: {} vs {}", c.arm, c.baseline),
            None => format!("{} vs {}", c.arm, c.baseline),
        },
        pairs: c.pairs,
        difference: c
            .difference
            .map_or(String::new(), |d| format!("{} pp", pp(d, 1))),
        interval: interval.map_or(c.suppressed.clone().unwrap_or_default(), |(low, high)| {
            format!("[{}, {}]", pp(low, 1), pp(high, 1))
        }),
        p: c.shown_p().map_or(String::new(), p_text),
        verdict: c
            .verdict
            .map_or(String::new(), |v| verdict_word(v).to_string()),
        tone,
        plot: forest_row(c.difference, interval, c.margin, c.equivalence, scale),
    }
}
