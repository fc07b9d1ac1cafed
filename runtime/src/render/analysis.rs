//! Terminal text of the session's analysis: the function-level lines under the rows, with
//! their projections, and their plain-language readings; pytest-probability's layout and
//! rounding, so that the two summaries read alike.
//!
//! Layer: render.

use std::fmt::Write;

use crate::model::analysis::Estimate;
use crate::model::{Aggregate, Report};
use crate::render::text::money;

/// A probability to one decimal, rounded half up (`81.4%`), with `0.0%` and `100.0%` kept for
/// exactly 0 and 1.
pub(crate) fn pct1(p: f64) -> String {
    let mut tenths = (p * 1000.0 + 0.5).floor();
    if tenths >= 1000.0 && p < 1.0 {
        tenths = 999.0;
    } else if tenths <= 0.0 && p > 0.0 {
        tenths = 1.0;
    }
    format!("{:.1}%", tenths / 10.0)
}

/// A relative change in width as a whole percent with a real minus sign (`−22%`); `−<1%` for
/// a change too small to round to 1%, `±0%` for none.
pub(crate) fn change(c: f64) -> String {
    if c.abs() < 1e-12 {
        return "±0%".to_string();
    }
    let pct = (c.abs() * 100.0 + 0.5).floor();
    let sign = if c < 0.0 { "−" } else { "+" };
    if pct > 0.0 {
        format!("{sign}{pct:.0}%")
    } else {
        format!("{sign}<1%")
    }
}

/// The session's aggregates, without the session's own when it would repeat the only
/// function's line: what every block of aggregate lines lists.
pub(crate) fn listed(report: &Report) -> impl Iterator<Item = &Aggregate> {
    let functions = report
        .aggregates
        .iter()
        .filter(|a| a.scope == "function")
        .count();
    report
        .aggregates
        .iter()
        .filter(move |a| !(a.scope == "overall" && functions == 1))
}

/// The aggregates the summary shows: those with an interval, and those that would have one but
/// for cases that stopped early (as a note), with the session's left out when it would repeat
/// the only function's line.
pub(crate) fn shown(report: &Report) -> Vec<(&Aggregate, &Estimate)> {
    if !report.stats_config.intervals {
        return Vec::new();
    }
    let min_inputs = report.stats_config.min_inputs;
    listed(report)
        .filter_map(|a| {
            let shown = |e: &&Estimate| e.ci.is_some() || (e.stopped > 0 && e.inputs >= min_inputs);
            Some((a, a.estimate.as_ref().filter(shown)?))
        })
        .collect()
}

/// `N=40 inputs × k=10`; `k=5–10` when run counts differ.
fn size(estimate: &Estimate) -> String {
    let runs = &estimate.runs;
    let k = if runs.min == runs.max {
        runs.min.to_string()
    } else {
        format!("{}–{}", runs.min, runs.max)
    };
    format!("N={} inputs × k={k}", estimate.inputs)
}

/// `qa  N=24 inputs × k=10  70.0%  [65.8%, 74.2%]  ρ=0.00`, one line per shown aggregate,
/// columns aligned, each with a ρ followed by `runs ×2 → interval −29%  ·  inputs ×2 → −29%`
/// (priced when cost was recorded: either option costs what the cases cost so far).
pub(crate) fn aggregate_lines(report: &Report, out: &mut String) {
    let shown = shown(report);
    if shown.is_empty() {
        return;
    }
    let width = |cells: &[String]| cells.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let names: Vec<String> = shown.iter().map(|(a, _)| a.name.clone()).collect();
    let sizes: Vec<String> = shown.iter().map(|(_, e)| size(e)).collect();
    let estimates: Vec<String> = shown
        .iter()
        .map(|(_, e)| e.ci.as_ref().map_or(String::new(), |_| pct1(e.estimate)))
        .collect();
    let bounds: Vec<(String, String)> = shown
        .iter()
        .map(|(_, e)| {
            e.ci.as_ref().map_or((String::new(), String::new()), |ci| {
                (pct1(ci.low), pct1(ci.high))
            })
        })
        .collect();
    let lows: Vec<String> = bounds.iter().map(|b| b.0.clone()).collect();
    let highs: Vec<String> = bounds.iter().map(|b| b.1.clone()).collect();
    let (name_w, size_w, est_w) = (width(&names), width(&sizes), width(&estimates));
    let (low_w, high_w) = (width(&lows), width(&highs));
    out.push('\n');
    for (index, (_, estimate)) in shown.iter().enumerate() {
        if estimate.ci.is_none() {
            let _ = writeln!(
                out,
                "  {}  {}  interval hidden: {}",
                pad(&names[index], name_w),
                pad(&sizes[index], size_w),
                estimate.suppressed.as_deref().unwrap_or_default()
            );
            continue;
        }
        let mut line = format!(
            "  {}  {}  {}  [{}, {}]",
            pad(&names[index], name_w),
            pad(&sizes[index], size_w),
            pad_left(&estimates[index], est_w),
            pad_left(&lows[index], low_w),
            pad_left(&highs[index], high_w),
        );
        let (Some(rho), Some(projection)) = (estimate.icc, estimate.projection) else {
            let _ = writeln!(out, "{line}");
            continue;
        };
        let _ = write!(line, "  ρ={rho:.2}");
        let _ = writeln!(out, "{line}");
        let mut more = format!(
            "runs ×2 → interval {}  ·  inputs ×2 → {}",
            change(projection.runs_x2),
            change(projection.inputs_x2)
        );
        if estimate.cost > 0.0 {
            let _ = write!(more, "  ·  each +{}", money(estimate.cost));
        }
        let _ = writeln!(out, "{}{more}", " ".repeat(name_w + 4));
    }
}

fn pad(text: &str, width: usize) -> String {
    format!(
        "{text}{}",
        " ".repeat(width.saturating_sub(text.chars().count()))
    )
}

fn pad_left(text: &str, width: usize) -> String {
    format!(
        "{}{text}",
        " ".repeat(width.saturating_sub(text.chars().count()))
    )
}

/// The plain-language readings of the shown aggregates.
pub(crate) fn readings(report: &Report) -> Vec<String> {
    shown(report)
        .into_iter()
        .map(|(aggregate, estimate)| aggregate_reading(report, aggregate, estimate))
        .collect()
}

/// An aggregate in a paragraph: its average and, when it has one, its interval, ρ and what
/// more runs or inputs would do; without one, why there is none and what would give it.
pub(crate) fn aggregate_reading(report: &Report, aggregate: &Aggregate, e: &Estimate) -> String {
    let who = if aggregate.scope == "overall" {
        "Over the whole session".to_string()
    } else {
        format!("{}:", aggregate.name)
    };
    let runs = if e.runs.min == e.runs.max {
        e.runs.min.to_string()
    } else {
        format!("{} to {}", e.runs.min, e.runs.max)
    };
    let on_average = if e.runs.min == e.runs.max {
        ""
    } else {
        " on average"
    };
    let Some(ci) = e.ci.as_ref() else {
        let config = &report.stats_config;
        let mode = config.stop.name();
        let mut text = format!(
            "{who} the average input passes {} of its runs ({} inputs, {runs} runs \
             each{on_average}).",
            pct1(e.estimate),
            e.inputs,
        );
        if e.stopped > 0 && e.inputs >= config.min_inputs {
            let _ = write!(
                text,
                " No interval is shown: {} of its inputs stopped early once their gates' \
                 verdicts were decided (PROB_STOP={mode}), and a case that stops as soon as its \
                 verdict is settled has a fraction that leans toward it, so an average over \
                 these inputs, and an interval around it, would mislead. The gates' verdicts \
                 are not affected. Next step: to see the interval, run without \
                 PROB_STOP={mode}.",
                e.stopped,
            );
            return text;
        }
        if e.stopped > 0 {
            let _ = write!(
                text,
                " {} among them stopped early (PROB_STOP={mode}), so that average can lean \
                 toward their gates' verdicts.",
                e.stopped
            );
        }
        let _ = write!(
            text,
            " No interval is shown: with fewer than {0} inputs (PROB_MIN_INPUTS), an interval \
             worked out from the inputs alone comes out too narrow. Next step: add inputs \
             (more cases) to reach {0}.",
            config.min_inputs
        );
        return text;
    };
    let mut text = format!(
        "{who} the average input passes {} of its runs ({} inputs, {runs} runs \
         each{on_average}). Resampling whole inputs {} times (seed {}) puts the average between \
         {} and {} at {}% confidence, for inputs like these",
        pct1(e.estimate),
        e.inputs,
        e.resamples,
        e.seed,
        pct1(ci.low),
        pct1(ci.high),
        crate::types::stats::percent_text(ci.level),
    );
    if let Some(normal) = &e.normal_ci {
        let _ = write!(
            text,
            " (the normal approximation says {} to {})",
            pct1(normal.low),
            pct1(normal.high)
        );
    }
    text.push('.');
    if let (Some(rho), Some(projection)) = (e.icc, e.projection) {
        let _ = write!(
            text,
            " The runs of one input agree with a correlation of ρ={rho:.2}: {}. Doubling the runs \
             would change the interval's width by {}, doubling the inputs by {}",
            if rho < 0.1 {
                "its runs vary almost as much as different inputs do, so more runs narrow the interval nearly as well as more inputs"
            } else if rho > 0.5 {
                "an input mostly passes or fails every time, so more inputs narrow the interval far better than more runs"
            } else {
                "more inputs narrow the interval better than more runs"
            },
            change(projection.runs_x2),
            change(projection.inputs_x2),
        );
        if e.cost > 0.0 {
            let _ = write!(text, "; either would cost about {} more", money(e.cost));
        }
        text.push('.');
    }
    text
}
