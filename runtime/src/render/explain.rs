//! The `probability: explained` section (`PROB_EXPLAIN=1`): every gated case and every row that
//! did not pass all its runs, read in plain language with a next step.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::{Report, Row};
use crate::render::text::{bar_text, bound_percent, rule};
use crate::types::stats::percent_text;
use crate::types::stats::{ErrorPolicy, GateResult, IntervalSpec, Rule, StatsConfig, Verdict};

/// Appends the section to `out`; nothing when no row needs explaining.
pub(crate) fn section(report: &Report, out: &mut String) {
    let config = &report.stats_config;
    let rows: Vec<&Row> = report
        .rows
        .iter()
        .filter(|row| row.gate.is_some() || row.passes < row.total)
        .collect();
    let mut analysis = crate::render::latency_block::readings(report);
    analysis.extend(crate::render::analysis::readings(report));
    analysis.extend(crate::render::metrics::readings(report));
    analysis.extend(crate::render::compare::readings(report));
    analysis.extend(crate::render::baseline_section::readings(report));
    if rows.is_empty() && analysis.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", rule("probability: explained"));
    for row in rows {
        wrap(&explain(row, config), out);
    }
    for paragraph in &analysis {
        wrap(paragraph, out);
    }
}

/// Writes a paragraph wrapped at the rule's width, indented under its first line.
fn wrap(paragraph: &str, out: &mut String) {
    const WIDTH: usize = 80;
    let mut line = String::from(" ");
    for word in paragraph.split(' ') {
        if line.len() + 1 + word.len() > WIDTH && !line.trim().is_empty() {
            let _ = writeln!(out, "{line}");
            line = String::from("   ");
        }
        line.push(' ');
        line.push_str(word);
    }
    let _ = writeln!(out, "{line}");
}

fn percent(numerator: u64, denominator: u64) -> String {
    if denominator == 0 {
        return "no runs".to_string();
    }
    format!("{:.0}%", 100.0 * numerator as f64 / denominator as f64)
}

/// One case, in a paragraph: its runs and, when it has one, its gate's verdict.
pub(crate) fn explain(row: &Row, config: &StatsConfig) -> String {
    let mut text = row_reading(row);
    if let Some(gate) = &row.gate {
        text.push(' ');
        text.push_str(&gate_reading(row, gate, config));
    }
    text
}

/// A case's runs and interval in words; for an ungated case that did not pass every run, the
/// next step (a gated case's is its gate's, [`gate_reading`]).
pub(crate) fn row_reading(row: &Row) -> String {
    let mut text = format!(
        "{}: {} of {} runs passed ({})",
        crate::render::text::shown(&row.info.case),
        row.passes,
        row.total,
        percent(row.passes, row.total)
    );
    if row.fails > 0 {
        let _ = write!(text, "; {} failed an assertion (a wrong answer)", row.fails);
    }
    if row.errors > 0 {
        let _ = write!(
            text,
            "; {} errored (the harness broke, not the answer)",
            row.errors
        );
    }
    text.push('.');
    if let Some(ci) = &row.ci {
        let _ = write!(
            text,
            " With {}% confidence ({}), the case passes between {} and {} of the time.",
            percent_text(ci.level),
            ci.method,
            bound_percent(ci.low),
            bound_percent(ci.high)
        );
    }
    match &row.gate {
        Some(_) => {}
        None if row.fails + row.errors == 0 => {}
        None if row.fails > 0 && row.passes > 0 => text.push_str(
            " Next step: if the case is nondeterministic by nature, gate it with `min_rate` so that its rate, not each run, decides; otherwise read the failing runs' messages in the report.",
        ),
        None if row.fails > 0 => {
            text.push_str(" Next step: no run passed; read the failing runs' messages in the report.")
        }
        None => text.push_str(
            " Next step: the errors are the harness's, not the answers'; read their messages in the report.",
        ),
    }
    text
}

/// A gate's verdict on a case's runs in words, with what would settle an undecided one.
pub(crate) fn gate_reading(row: &Row, gate: &GateResult, config: &StatsConfig) -> String {
    let mut text = String::new();
    explain_gate(row, gate, config, &mut text);
    text
}

fn explain_gate(row: &Row, gate: &GateResult, config: &StatsConfig, text: &mut String) {
    let sample = if gate.errors == ErrorPolicy::Exclude && row.errors > 0 {
        format!(
            "{} of {} runs, the {} errored ones excluded",
            gate.passes, gate.sample, row.errors
        )
    } else {
        format!("{} of {} runs", gate.passes, gate.sample)
    };
    let _ = write!(text, "Gate {} on {sample}: ", bar_text(gate.rule));
    match (gate.verdict, gate.rule) {
        (Verdict::Pass, Rule::MinRate(bar)) => {
            let _ = write!(
                text,
                "PASS: the whole interval [{}, {}] lies above {}.",
                bound_percent(gate.low),
                bound_percent(gate.high),
                bound_percent(bar)
            );
        }
        (Verdict::Fail, Rule::MinRate(bar)) => {
            let _ = write!(
                text,
                "FAIL: the whole interval [{}, {}] lies below {}; the case passes less often than the bar. Next step: fix the failures, or lower the bar if it was set too high.",
                bound_percent(gate.low),
                bound_percent(gate.high),
                bound_percent(bar)
            );
        }
        (Verdict::Undecided, Rule::MinRate(bar)) => {
            let _ = write!(
                text,
                "UNDECIDED: the interval [{}, {}] straddles {}, so these runs cannot tell whether the case clears the bar.",
                bound_percent(gate.low),
                bound_percent(gate.high),
                bound_percent(bar)
            );
            let spec = IntervalSpec {
                method: gate.method,
                level: gate.level,
                prior: gate.prior,
            };
            match runs_to_settle(&spec, gate.passes, gate.sample, bar) {
                Some(runs) => {
                    let _ = write!(
                        text,
                        " If today's rate held, about {runs} runs would settle it (PROB_RUNS={runs})."
                    );
                }
                None => text.push_str(
                    " Today's rate sits on the bar: more runs alone would not settle it.",
                ),
            }
        }
        (Verdict::Pass, Rule::MinPasses(bar)) => {
            let _ = write!(text, "PASS: {} runs passed, at least {bar}.", gate.passes);
        }
        (_, Rule::MinPasses(bar)) => {
            let _ = write!(
                text,
                "FAIL: {} runs passed, fewer than {bar}. Next step: read the failing runs' messages in the report.",
                gate.passes
            );
        }
    }
    if gate.verdict == Verdict::Undecided
        && config.undecided == crate::types::stats::Undecided::Pass
    {
        text.push_str(" (PROB_UNDECIDED=pass: this verdict does not fail the session.)");
    }
}

/// About how many runs would settle a gate if the observed rate held: the smallest n at which
/// the interval at that rate clears the bar on one side. `None` when the rate equals the bar
/// or more than a million runs would be needed.
pub(crate) fn runs_to_settle(
    spec: &IntervalSpec,
    passes: u64,
    sample: u64,
    bar: f64,
) -> Option<u64> {
    if sample == 0 {
        return None;
    }
    let rate = passes as f64 / sample as f64;
    if (rate - bar).abs() < 1e-12 {
        return None;
    }
    crate::types::stats::smallest_runs(sample, |n| {
        let expected = (rate * n as f64).round() as u64;
        spec.interval(expected.min(n), n)
            .is_some_and(|interval| interval.low > bar || interval.high < bar)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecided_gates_say_how_many_runs_would_settle_them() {
        let spec = IntervalSpec::default();
        // 7/10 against a bar of 0.5: at 70%, some tens of runs put the interval above 50%.
        let runs = runs_to_settle(&spec, 7, 10, 0.5).expect("settles");
        assert!((20..60).contains(&runs), "{runs}");
        let at = |n: u64| {
            spec.interval((0.7 * n as f64).round() as u64, n)
                .expect("runs")
        };
        assert!(at(runs).low > 0.5);
        assert_eq!(runs_to_settle(&spec, 5, 10, 0.5), None);
    }
}
