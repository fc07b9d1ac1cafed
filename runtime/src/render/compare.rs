//! Terminal text of comparisons, in pytest-probability's layout: the `probability:
//! comparisons` section (one line per arm against its baseline, per-input lines where there is
//! no interval, and whether the p-values were adjusted), the `probability: baseline` section,
//! and their plain-language readings.
//!
//! Layer: render.

use std::fmt::Write;

use crate::model::analysis::Comparison;
use crate::model::Report;
use crate::render::text::rule;
use crate::types::stats::paired::Adjustment;
use crate::types::stats::Verdict;

/// A difference in percentage points, signed with a real minus (`+20`, `−11`, `+11.7`),
/// rounded half up on its size; only an exact 0 is unsigned.
pub(crate) fn pp(d: f64, decimals: usize) -> String {
    let scale = 10f64.powi(decimals as i32);
    let size = (d.abs() * 100.0 * scale + 0.5).floor() / scale;
    let text = format!("{size:.decimals$}");
    if d == 0.0 {
        return text;
    }
    format!("{}{text}", if d < 0.0 { "−" } else { "+" })
}

/// A p-value as printed: `0.47`, `0.004`, `<0.001`; `1` for exactly 1.
pub(crate) fn p_text(p: f64) -> String {
    if p >= 1.0 {
        "1".to_string()
    } else if p < 0.001 {
        "<0.001".to_string()
    } else if p < 0.01 {
        format!("{p:.3}")
    } else {
        format!("{:.2}", p.min(0.99))
    }
}

fn p_cell(p: Option<f64>) -> String {
    let Some(p) = p else {
        return String::new();
    };
    let text = p_text(p);
    if text.starts_with('<') {
        format!("p{text}")
    } else {
        format!("p={text}")
    }
}

fn ratio(r: f64) -> String {
    if r >= 1.0 {
        format!("×{r:.1}")
    } else {
        format!("×{r:.2}")
    }
}

/// `≥−2 pp` (non-inferiority), `±2 pp` (equivalence), `>0 pp` for a zero margin.
pub(crate) fn bar(c: &Comparison) -> String {
    let Some(margin) = c.margin else {
        return String::new();
    };
    let size = format!("{} pp", general(margin * 100.0));
    if c.equivalence {
        format!("±{size}")
    } else if margin > 0.0 {
        format!("≥−{size}")
    } else {
        ">0 pp".to_string()
    }
}

/// A number as Python's `{:g}` writes it for the sizes margins come in.
fn general(x: f64) -> String {
    let text = format!("{:.6}", x);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

fn decimals(c: &Comparison) -> usize {
    // One input's difference moves in whole-run steps; an average over inputs in finer ones.
    if c.ci.as_ref().is_some_and(|ci| ci.method == "newcombe") {
        0
    } else {
        1
    }
}

fn width(cells: &[String]) -> usize {
    cells.iter().map(|c| c.chars().count()).max().unwrap_or(0)
}

fn left(text: &str, width: usize) -> String {
    format!(
        "{text}{}",
        " ".repeat(width.saturating_sub(text.chars().count()))
    )
}

fn right(text: &str, width: usize) -> String {
    format!(
        "{}{text}",
        " ".repeat(width.saturating_sub(text.chars().count()))
    )
}

/// One line per comparison, columns aligned, each with its verdict; per-input lines under one
/// with several pairs and no interval; a closing line on the adjustment when there are several.
pub(crate) fn comparison_lines(
    comparisons: &[Comparison],
    label: impl Fn(&Comparison) -> String,
) -> Vec<(String, Option<Verdict>)> {
    let names: Vec<String> = comparisons.iter().map(&label).collect();
    let arms: Vec<String> = comparisons
        .iter()
        .map(|c| format!("{} − {}", c.arm, c.baseline))
        .collect();
    let diffs: Vec<(String, Option<(String, String)>)> = comparisons
        .iter()
        .map(|c| match c.difference {
            None => (String::new(), None),
            Some(d) => {
                let dec = decimals(c);
                let bounds = c.ci.as_ref().map(|ci| (pp(ci.low, dec), pp(ci.high, dec)));
                (format!("{} pp", pp(d, dec)), bounds)
            }
        })
        .collect();
    let ps: Vec<String> = comparisons.iter().map(|c| p_cell(c.shown_p())).collect();
    let sizes: Vec<String> = comparisons
        .iter()
        .map(|c| {
            let mut size = format!("{} paired", c.pairs);
            if !c.unpaired.is_empty() {
                let _ = write!(size, ", {} unpaired", c.unpaired.len());
            }
            size
        })
        .collect();
    let costs: Vec<String> = comparisons
        .iter()
        .map(|c| {
            c.cost_ratio
                .map_or(String::new(), |r| format!("cost {}", ratio(r)))
        })
        .collect();
    let bars: Vec<String> = comparisons.iter().map(bar).collect();
    let shown: Vec<&(String, String)> = diffs.iter().filter_map(|(_, b)| b.as_ref()).collect();
    let low_w = shown.iter().map(|b| b.0.chars().count()).max().unwrap_or(0);
    let high_w = shown.iter().map(|b| b.1.chars().count()).max().unwrap_or(0);
    let interval_w = if shown.is_empty() {
        0
    } else {
        low_w + high_w + 4
    };
    let diff_cells: Vec<String> = diffs.iter().map(|(d, _)| d.clone()).collect();
    let (name_w, arms_w, diff_w) = (width(&names), width(&arms), width(&diff_cells));
    let (p_w, size_w, cost_w, bar_w) = (width(&ps), width(&sizes), width(&costs), width(&bars));
    let mut lines = Vec::new();
    for (index, c) in comparisons.iter().enumerate() {
        let mut cell = right(&diffs[index].0, diff_w);
        if interval_w > 0 {
            let interval = diffs[index]
                .1
                .as_ref()
                .map_or(String::new(), |(low, high)| {
                    format!("[{}, {}]", right(low, low_w), right(high, high_w))
                });
            let _ = write!(cell, " {}", left(&interval, interval_w));
        }
        let mut parts = vec![
            left(&names[index], name_w),
            left(&arms[index], arms_w),
            cell,
            left(&ps[index], p_w),
            left(&sizes[index], size_w),
        ];
        if cost_w > 0 {
            parts.push(left(&costs[index], cost_w));
        }
        if let Some(verdict) = c.verdict {
            parts.push(format!(
                "{}  {}",
                left(&bars[index], bar_w),
                verdict_word(verdict)
            ));
        }
        let parts: Vec<String> = parts.into_iter().filter(|p| !p.is_empty()).collect();
        lines.push((
            format!("  {}", parts.join("  ")).trim_end().to_string(),
            c.verdict,
        ));
        if c.ci.is_none() && c.pairs > 1 {
            lines.extend(input_lines(c).into_iter().map(|line| (line, None)));
        }
    }
    if let Some(first) = comparisons.first().filter(|c| c.family > 1) {
        let note = if first.adjustment == Adjustment::None {
            format!(
                "p not adjusted for {} comparisons: exploratory (PROB_ADJUST=holm adjusts them)",
                first.family
            )
        } else {
            format!(
                "p adjusted for {} comparisons ({})",
                first.family,
                first.adjustment.name()
            )
        };
        lines.push((String::new(), None));
        lines.push((format!("  {note}"), None));
    }
    lines
}

fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Undecided => "UNDECIDED",
    }
}

/// `refund  10/10 vs 8/10  +20 pp [−11, +51]  p=0.47`: each input's own interval and p.
fn input_lines(c: &Comparison) -> Vec<String> {
    let names: Vec<String> = c.inputs.iter().map(|i| i.input.clone()).collect();
    let counts: Vec<String> = c
        .inputs
        .iter()
        .map(|i| {
            format!(
                "{}/{} vs {}/{}",
                i.arm.passes, i.arm.total, i.baseline.passes, i.baseline.total
            )
        })
        .collect();
    let diffs: Vec<String> = c
        .inputs
        .iter()
        .map(|i| format!("{} pp", pp(i.difference, 0)))
        .collect();
    let lows: Vec<String> = c.inputs.iter().map(|i| pp(i.ci.low, 0)).collect();
    let highs: Vec<String> = c.inputs.iter().map(|i| pp(i.ci.high, 0)).collect();
    let (name_w, count_w, diff_w) = (width(&names), width(&counts), width(&diffs));
    let (low_w, high_w) = (width(&lows), width(&highs));
    c.inputs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            format!(
                "      {}  {}  {} [{}, {}]  {}",
                left(&names[k], name_w),
                right(&counts[k], count_w),
                right(&diffs[k], diff_w),
                right(&lows[k], low_w),
                right(&highs[k], high_w),
                p_cell(Some(i.p))
            )
        })
        .collect()
}

/// The `probability: comparisons` section; nothing when no function is compared.
pub(crate) fn section(report: &Report, color: bool, out: &mut String) {
    if report.comparisons.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", rule("probability: comparisons"));
    let label = |c: &Comparison| format!("{}[{}]", c.function, c.axis.as_deref().unwrap_or(""));
    for (line, verdict) in comparison_lines(&report.comparisons, label) {
        let _ = writeln!(out, "{}", paint_verdict(&line, verdict, color));
    }
}

pub(crate) fn paint_verdict(line: &str, verdict: Option<Verdict>, color: bool) -> String {
    use crate::render::text::paint;
    use crate::types::status::Color;
    match verdict {
        Some(Verdict::Pass) => paint(line, Color::Green, color),
        Some(Verdict::Fail) => paint(line, Color::Red, color),
        Some(Verdict::Undecided) => paint(line, Color::Yellow, color),
        None => line.to_string(),
    }
}

/// The plain-language reading of each comparison.
pub(crate) fn readings(report: &Report) -> Vec<String> {
    report.comparisons.iter().map(|c| reading(c, "")).collect()
}

/// One comparison in a paragraph; `against` names what the baseline is, when not an arm.
pub(crate) fn reading(c: &Comparison, against: &str) -> String {
    let who = match &c.axis {
        Some(axis) => format!("{}[{axis}]: {} against {}", c.function, c.arm, c.baseline),
        None => format!("{}: this run against {against}", c.function),
    };
    let Some(difference) = c.difference else {
        return format!("{who}: no input ran in both, so there is nothing to compare.");
    };
    let dec = decimals(c);
    let mut text = format!(
        "{who}: over {} paired input{}, the pass rate differs by {} percentage points",
        c.pairs,
        if c.pairs == 1 { "" } else { "s" },
        pp(difference, dec)
    );
    match &c.ci {
        Some(ci) if ci.method == "newcombe" => {
            let _ = write!(
                text,
                ", with a {}% Newcombe interval from {} to {} and Fisher's exact p={}.",
                crate::types::stats::percent_text(ci.level),
                pp(ci.low, dec),
                pp(ci.high, dec),
                p_text(c.p.unwrap_or(1.0))
            );
        }
        Some(ci) => {
            let _ =
                write!(
                text,
                ". Resampling whole inputs {} times (seed {}) puts it between {} and {} at {}% \
                 confidence; the sign-flip test gives p={}{}.",
                c.resamples,
                c.seed,
                pp(ci.low, dec),
                pp(ci.high, dec),
                crate::types::stats::percent_text(ci.level),
                p_text(c.p.unwrap_or(1.0)),
                if c.exact == Some(false) { " (from random sign patterns)" } else { " (exact)" }
            );
        }
        None => {
            let _ = write!(
                text,
                "; with {} the interval is left out ({}), and the sign-flip test gives p={}.",
                if c.pairs < 2 { "no pairs" } else { "few pairs" },
                c.suppressed.as_deref().unwrap_or("no interval"),
                p_text(c.p.unwrap_or(1.0))
            );
        }
    }
    if let Some(adjusted) = c.p_adjusted.filter(|_| c.adjustment != Adjustment::None) {
        let _ = write!(
            text,
            " Adjusted ({}) for {} comparisons, p={}.",
            c.adjustment.name(),
            c.family,
            p_text(adjusted)
        );
    } else if c.exploratory {
        let _ = write!(
            text,
            " The p-value is not adjusted for the session's {} comparisons: read it as exploratory.",
            c.family
        );
    }
    if let Some(ratio) = c.cost_ratio {
        let _ = write!(
            text,
            " A run of {} costs {} one of {}.",
            c.arm,
            self::ratio(ratio),
            c.baseline
        );
    }
    if let (Some(verdict), Some(margin)) = (c.verdict, c.margin) {
        let rule = if c.equivalence {
            format!("equivalence within ±{} points", general(margin * 100.0))
        } else {
            format!("being at most {} points worse", general(margin * 100.0))
        };
        let _ = write!(
            text,
            " Its margin asks for {rule}: {}.",
            match verdict {
                Verdict::Pass => "the whole interval says so, PASS",
                Verdict::Fail => "the whole interval says otherwise, FAIL",
                Verdict::Undecided =>
                    "the interval cannot tell yet, UNDECIDED; more inputs or runs would settle it",
            }
        );
    }
    text
}
