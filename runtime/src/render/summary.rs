//! The `probability` terminal summary, rendered from a [`Report`]. The same function serves the
//! exit hook and any tool that renders a stored report.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;
use std::io::IsTerminal;

use crate::model::{Report, Row};
use crate::render::text::{
    bar_text, bound_percent, bound_percent_width, digits, model_name, money, paint, rule, shown,
    token_text, whole_percent,
};
use crate::types::stats::{ErrorPolicy, GateResult, Verdict};
use crate::types::status::{Color, Status};

/// How to render the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Whether to color statuses with ANSI escapes.
    pub color: bool,
    /// The report path to show on the `Report:` line, when a report was written.
    pub report_path: Option<&'a str>,
    /// The other files written, each on a line of its own after the `Report:` line: its label
    /// (`HTML`) and the file.
    pub files: &'a [(&'static str, String)],
}

/// Whether stdout should get colors: `CLICOLOR_FORCE` (not `0`) forces them, a non-empty
/// `NO_COLOR` turns them off, otherwise only a terminal gets them.
pub fn color_enabled() -> bool {
    let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") {
        return true;
    }
    if set("NO_COLOR").is_some() {
        return false;
    }
    std::io::stdout().is_terminal()
}

/// Renders the `probability` section; empty when the report has no rows.
pub fn summary(report: &Report, options: &Options<'_>) -> String {
    if report.rows.is_empty() {
        return String::new();
    }
    let color = options.color;
    let show_cost = report.totals.cost > 0.0;
    // An id is shown with its control characters escaped ([`shown`]): it may hold anything a
    // parameter's value held.
    let case_width = report
        .rows
        .iter()
        .map(|r| shown(&r.info.case).chars().count())
        .max()
        .unwrap_or(0);
    // `total/total` is the widest fraction of a row.
    let fraction_width = report
        .rows
        .iter()
        .map(|r| 2 * digits(r.total) + 1)
        .max()
        .unwrap_or(0);
    // A row shows a cost only when its case spent something, as pytest-probability prints it.
    let cost_width = report
        .rows
        .iter()
        .filter(|r| r.cost > 0.0)
        .map(|r| money(r.cost).len())
        .max()
        .unwrap_or(0);
    let intervals = IntervalColumn::new(report);

    let mut out = String::new();
    let _ = writeln!(out, "{}", rule("probability"));
    // A line's pieces are appended as they are, not through `write!`: a summary has a row per
    // case, rendered at every exit in a test binary built without optimizations.
    for (index, row) in report.rows.iter().enumerate() {
        // A row none of whose runs started has nothing to judge: its note says it all.
        let status = if row.never_started() {
            String::new()
        } else {
            Report::row_status_text(row)
        };
        let tone = row.status.color();
        let fraction = format!("{}/{}", row.passes, row.total);
        let case = shown(&row.info.case);
        let mut line = format!(
            "  {}{}  {}{}",
            case,
            " ".repeat(case_width - case.chars().count()),
            " ".repeat(fraction_width - fraction.len()),
            paint(&fraction, tone, color),
        );
        if let Some(column) = &intervals {
            line.push_str("  ");
            line.push_str(&column.cell(index));
        }
        if show_cost && row.cost > 0.0 {
            line.push_str(&format!("  {:>cost_width$}", money(row.cost)));
        }
        if !status.is_empty() {
            line.push_str("  ");
            line.push_str(&paint(&status, tone, color));
        }
        if let Some(note) = crate::render::stop_notes::row_note(row) {
            line.push_str("  ");
            line.push_str(&note);
        }
        if let Some(note) = crate::render::not_run::row_note(row) {
            line.push_str("  ");
            line.push_str(&paint(&note, Color::Red, color));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    crate::render::analysis::aggregate_lines(report, &mut out);
    out.push('\n');

    let totals = &report.totals;
    let _ = write!(
        out,
        "  Overall: {}/{} passed ({:.0}%)",
        totals.passes, totals.count, totals.pass_rate
    );
    if totals.errors > 0 {
        let _ = write!(out, ", {} errored", totals.errors);
    }
    if totals.retries > 0 {
        let noun = if totals.retries == 1 {
            "retry"
        } else {
            "retries"
        };
        let _ = write!(out, ", {} {noun} not counted", totals.retries);
    }
    crate::render::stop_notes::overall(report, &mut out);
    crate::render::not_run::overall(report, &mut out);
    out.push('\n');
    crate::render::not_run::line(report, &mut out);
    let verdicts: Vec<Verdict> = report
        .rows
        .iter()
        .filter_map(|row| row.gate.map(|g| g.verdict))
        .chain(crate::render::latency_block::verdicts(report))
        .collect();
    if !verdicts.is_empty() {
        let count = |verdict: Verdict| verdicts.iter().filter(|v| **v == verdict).count();
        let mut parts = vec![format!("{} passed", count(Verdict::Pass))];
        for (verdict, word) in [(Verdict::Fail, "failed"), (Verdict::Undecided, "undecided")] {
            if count(verdict) > 0 {
                parts.push(format!("{} {word}", count(verdict)));
            }
        }
        let _ = writeln!(out, "  Gates:   {}", parts.join(", "));
    }
    crate::render::stop_notes::line(report, &mut out);
    for warning in &report.warnings {
        let _ = writeln!(out, "  Warning: {}", shown(warning));
    }
    if show_cost {
        let _ = writeln!(out, "  Cost:    {}", money(totals.cost));
    }
    crate::render::waits::lines(report, &mut out);
    if !totals.usage.is_empty() {
        let models = &totals.usage.0;
        let name_width = models
            .iter()
            .map(|(m, _)| shown(model_name(m)).chars().count())
            .max()
            .unwrap_or(0);
        let texts: Vec<String> = models.iter().map(|(_, u)| token_text(u)).collect();
        let text_width = texts.iter().map(String::len).max().unwrap_or(0);
        let show_model_cost = models.iter().any(|(_, u)| u.cost > 0.0);
        for (index, ((model, usage), text)) in models.iter().zip(&texts).enumerate() {
            let label = if index == 0 {
                "  Tokens:  "
            } else {
                "           "
            };
            let name = shown(model_name(model));
            let mut line = format!(
                "{label}{name}{}  {text}",
                " ".repeat(name_width - name.chars().count())
            );
            if show_model_cost {
                let _ = write!(
                    line,
                    "{}  {}",
                    " ".repeat(text_width - text.len()),
                    money(usage.cost)
                );
            }
            let _ = writeln!(out, "{line}");
        }
    }
    if let Some(path) = options.report_path {
        let _ = writeln!(out, "  Report:  {path}");
    }
    for (label, path) in options.files {
        let _ = writeln!(out, "  {:<9}{path}", format!("{label}:"));
    }
    gates_block(report, intervals.as_ref(), &mut out);
    crate::render::latency_block::gate_lines(report, &mut out);
    crate::render::metrics::block(report, &mut out);
    crate::render::latency_block::block(report, &mut out);
    crate::render::compare::section(report, color, &mut out);
    crate::render::baseline_section::section(report, color, &mut out);
    if report.stats_config.explain {
        crate::render::explain::section(report, &mut out);
    } else if report
        .rows
        .iter()
        .any(|row| row.gate.is_some_and(|g| g.verdict != Verdict::Pass))
        || crate::render::latency_block::verdicts(report).any(|v| v != Verdict::Pass)
        || !report.comparisons.is_empty()
        || report.baseline.is_some()
    {
        let _ = writeln!(
            out,
            "  Hint:    PROB_EXPLAIN=1 explains each verdict and what would settle it"
        );
    }
    doctor_hint(report, &mut out);
    out
}

/// For the first flaky or errored row: the command that says why.
fn doctor_hint(report: &Report, out: &mut String) {
    let Some(row) = report
        .rows
        .iter()
        .find(|row| matches!(row.status, Status::Flaky | Status::Errored))
    else {
        return;
    };
    let _ = writeln!(
        out,
        "  Hint:    {} says why it is {}",
        crate::render::text::doctor_command(&row.info),
        if row.status == Status::Flaky {
            "flaky"
        } else {
            "errored"
        }
    );
}

/// The interval column: `[35%,  93%]`, low and high right-aligned separately; blank for a row
/// with a single run. `None` when no row has more than one run or intervals are turned off.
struct IntervalColumn {
    low_width: usize,
    high_width: usize,
    /// Each row's bounds as whole percents ([`whole_percent`]), when the row shows an interval.
    bounds: Vec<Option<(i64, i64)>>,
}

impl IntervalColumn {
    fn new(report: &Report) -> Option<IntervalColumn> {
        if !report.stats_config.intervals || !report.rows.iter().any(|row| row.total > 1) {
            return None;
        }
        // Widths and cells from the numbers: a summary has a row per case, rendered at every
        // exit in a test binary built without optimizations, where each text made is costly.
        let (mut low_width, mut high_width) = (0, 0);
        let bounds: Vec<Option<(i64, i64)>> = report
            .rows
            .iter()
            .map(|row| match (&row.ci, row.total > 1) {
                (Some(ci), true) => {
                    low_width = low_width.max(bound_percent_width(ci.low));
                    high_width = high_width.max(bound_percent_width(ci.high));
                    Some((whole_percent(ci.low), whole_percent(ci.high)))
                }
                _ => None,
            })
            .collect();
        Some(IntervalColumn {
            low_width,
            high_width,
            bounds,
        })
    }

    fn text(&self, low: f64, high: f64) -> String {
        format!(
            "[{:>lw$}, {:>hw$}]",
            bound_percent(low),
            bound_percent(high),
            lw = self.low_width,
            hw = self.high_width
        )
    }

    /// The cell of the report's row `index`.
    fn cell(&self, index: usize) -> String {
        match self.bounds.get(index) {
            // `bound_percent`'s text, its `%` written after the padded number.
            Some(Some((low, high))) => format!(
                "[{low:>lw$}%, {high:>hw$}%]",
                lw = self.low_width - 1,
                hw = self.high_width - 1
            ),
            _ => " ".repeat(self.low_width + self.high_width + 4),
        }
    }
}

/// The `probability: gates` block: every FAIL and UNDECIDED case, with the gate's own sample,
/// interval and bar.
fn gates_block(report: &Report, intervals: Option<&IntervalColumn>, out: &mut String) {
    let judged: Vec<(&Row, GateResult)> = report
        .rows
        .iter()
        .filter_map(|row| {
            row.gate
                .filter(|g| g.verdict != Verdict::Pass)
                .map(|g| (row, g))
        })
        .collect();
    if judged.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", rule("probability: gates"));
    let column = intervals.map_or(
        IntervalColumn {
            low_width: 4,
            high_width: 4,
            bounds: Vec::new(),
        },
        |c| IntervalColumn {
            low_width: c.low_width.max(3),
            high_width: c.high_width.max(3),
            bounds: Vec::new(),
        },
    );
    let case_width = judged
        .iter()
        .map(|(row, _)| shown(&row.info.case).chars().count())
        .max()
        .unwrap_or(0)
        .max(crate::render::latency_block::gate_name_width(report));
    for (row, gate) in judged {
        let fraction = format!("{}/{}", gate.passes, gate.sample);
        let case = shown(&row.info.case);
        let mut line = format!(
            "  {}{}  {fraction:>5}  {}  {}  {}",
            case,
            " ".repeat(case_width - case.chars().count()),
            column.text(gate.low, gate.high),
            bar_text(gate.rule),
            match gate.verdict {
                Verdict::Fail => "FAIL",
                Verdict::Undecided => "UNDECIDED",
                Verdict::Pass => "PASS",
            }
        );
        if gate.errors == ErrorPolicy::Exclude && row.errors > 0 {
            let _ = write!(line, " ({} errored, excluded)", row.errors);
        }
        let _ = writeln!(out, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::record;
    use crate::render::text::{shell_word, thousands};
    use crate::types::stats::percent_text;
    use crate::types::status::Outcome;
    use crate::types::usage::TokenUsage;

    fn usage(model: &str, input: u64, output: u64, cached: u64, cost: f64) -> TokenUsage {
        TokenUsage {
            model: model.into(),
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            cost,
        }
    }

    fn runs(
        case: &str,
        outcomes: &[(Outcome, usize)],
        cost: f64,
        usage: &[TokenUsage],
    ) -> Vec<crate::model::Record> {
        let mut records = Vec::new();
        for &(outcome, count) in outcomes {
            for _ in 0..count {
                let run = records.len() as u32 + 1;
                let entries = if run == 1 { usage.to_vec() } else { Vec::new() };
                let extra: f64 = entries.iter().map(|u| u.cost).sum();
                records.push(record(case, run, outcome, cost + extra, entries));
            }
        }
        records
    }

    #[test]
    fn rule_matches_pytest() {
        let line = rule("probability");
        assert_eq!(line.len(), 80);
        assert!(line.starts_with(&format!("{} probability ", "=".repeat(33))));
        assert!(line.ends_with(&format!(" {}", "=".repeat(34))));
    }

    #[test]
    fn case_ids_become_one_shell_word() {
        assert_eq!(shell_word("classify::refund-2+2"), "classify::refund-2+2");
        assert_eq!(
            shell_word("triage::refund please"),
            "'triage::refund please'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_200), "1,200");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn seed_anatomy_with_cost_and_tokens() {
        let mut records = runs(
            "classify::identify_pii",
            &[(Outcome::Pass, 7), (Outcome::Fail, 3)],
            0.0,
            &[
                usage("m-small", 1_200, 80, 640, 0.001),
                usage("m-large", 4_800, 900, 0, 0.001),
            ],
        );
        records.extend(runs("classify::refund", &[(Outcome::Pass, 10)], 0.0, &[]));
        records.extend(runs(
            "classify::terse",
            &[(Outcome::Pass, 7), (Outcome::Error, 3)],
            0.0,
            &[],
        ));
        records.extend(runs(
            "classify::never",
            &[(Outcome::Fail, 8), (Outcome::Error, 2)],
            0.0,
            &[],
        ));
        records.extend(runs("classify::broken", &[(Outcome::Error, 10)], 0.0, &[]));
        records.extend(runs(
            "classify::mixed",
            &[(Outcome::Pass, 5), (Outcome::Fail, 4), (Outcome::Error, 1)],
            0.0,
            &[],
        ));
        records.extend(runs("classify::wrong", &[(Outcome::Fail, 10)], 0.0, &[]));
        let report = crate::model::tests::build(records);
        let text = summary(
            &report,
            &Options {
                color: false,
                report_path: Some("report.json"),
                ..Options::default()
            },
        );
        insta::assert_snapshot!(text);
    }

    #[test]
    fn the_files_written_are_named_after_the_report() {
        let report = crate::model::tests::build(runs("roll", &[(Outcome::Pass, 3)], 0.0, &[]));
        let files = [("HTML", "out/report.html".to_string())];
        let text = summary(
            &report,
            &Options {
                report_path: Some("report.json"),
                files: &files,
                ..Options::default()
            },
        );
        assert!(
            text.contains("  Report:  report.json\n  HTML:    out/report.html\n"),
            "{text}"
        );
    }

    #[test]
    fn minimal_summary_has_no_cost_tokens_or_report_lines() {
        let report = crate::model::tests::build(runs("roll", &[(Outcome::Pass, 3)], 0.0, &[]));
        let text = summary(&report, &Options::default());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn colors_mark_the_fraction_and_status() {
        let mut records = runs("a::x", &[(Outcome::Pass, 2)], 0.0, &[]);
        records.extend(runs(
            "a::y",
            &[(Outcome::Pass, 1), (Outcome::Fail, 1)],
            0.0,
            &[],
        ));
        records.extend(runs("a::z", &[(Outcome::Fail, 2)], 0.0, &[]));
        let report = crate::model::tests::build(records);
        let text = summary(
            &report,
            &Options {
                color: true,
                ..Options::default()
            },
        );
        assert!(text.contains("\x1b[32m2/2\x1b[0m"), "{text}");
        assert!(text.contains("\x1b[33mFLAKY\x1b[0m"), "{text}");
        assert!(text.contains("\x1b[31mFAIL\x1b[0m"), "{text}");
    }

    #[test]
    fn gates_metrics_and_explanations() {
        use crate::types::stats::{ErrorPolicy, GateSpec, Metric, Rule, StatsConfig};
        let gated = |rule| GateSpec {
            rule,
            method: None,
            level: None,
            prior: None,
        };
        let mut records = runs("triage::sure", &[(Outcome::Pass, 40)], 0.0, &[]);
        records.extend(runs(
            "triage::maybe",
            &[(Outcome::Pass, 7), (Outcome::Fail, 3)],
            0.0,
            &[],
        ));
        records.extend(runs(
            "triage::bad",
            &[(Outcome::Pass, 2), (Outcome::Fail, 28)],
            0.0,
            &[],
        ));
        records.extend(runs(
            "triage::counted",
            &[(Outcome::Pass, 8), (Outcome::Error, 2)],
            0.0,
            &[],
        ));
        records.extend(runs(
            "roll",
            &[(Outcome::Pass, 9), (Outcome::Fail, 1)],
            0.0,
            &[],
        ));
        let mut infos: Vec<crate::model::CaseInfo> = [
            "triage::sure",
            "triage::maybe",
            "triage::bad",
            "triage::counted",
            "roll",
        ]
        .iter()
        .map(|case| crate::model::tests::info(case))
        .collect();
        infos[0].runs = 40;
        infos[0].gate = Some(gated(Rule::MinRate(0.8)));
        infos[1].gate = Some(gated(Rule::MinRate(0.5)));
        infos[2].gate = Some(gated(Rule::MinRate(0.5)));
        infos[3].gate = Some(gated(Rule::MinPasses(8)));
        let config = StatsConfig {
            metrics: vec![Metric::PassAll(3), Metric::PassAny(5)],
            min_rate: Some(0.9),
            errors: ErrorPolicy::Exclude,
            ..StatsConfig::default()
        };
        let mut report = crate::model::Report::build(infos, records, &config);
        report.analyze();
        assert_eq!(report.exit_status, 1);
        insta::assert_snapshot!(
            "gates_without_explain",
            summary(&report, &Options::default())
        );
        let mut explained = report.clone();
        explained.stats_config.explain = true;
        insta::assert_snapshot!("gates_explained", summary(&explained, &Options::default()));
    }

    #[test]
    fn bounds_never_round_to_certainty() {
        assert_eq!(bound_percent(0.0), "0%");
        assert_eq!(bound_percent(0.001), "1%");
        assert_eq!(bound_percent(0.345), "35%");
        assert_eq!(bound_percent(0.995), "99%");
        assert_eq!(bound_percent(1.0), "100%");
        assert_eq!(percent_text(0.95), "95");
        assert_eq!(percent_text(0.999), "99.9");
    }

    #[test]
    fn retries_are_said_to_be_left_out() {
        let mut retry = record("classify::a", 1, Outcome::Pass, 0.5, vec![]);
        retry.attempt = 2;
        let report = crate::model::tests::build(vec![
            record("classify::a", 1, Outcome::Fail, 0.0, vec![]),
            retry,
        ]);
        let text = summary(&report, &Options::default());
        assert!(
            text.contains("Overall: 0/1 passed (0%), 1 retry not counted"),
            "{text}"
        );
    }

    #[test]
    fn a_cost_total_that_overflowed_shows_the_largest_number_and_a_warning() {
        let report = crate::model::tests::build(vec![
            record("classify::a", 1, Outcome::Pass, 1e308, vec![]),
            record("classify::a", 2, Outcome::Pass, 1e308, vec![]),
        ]);
        let text = summary(&report, &Options::default());
        assert!(!text.contains("inf"), "{text}");
        assert!(text.contains("  Cost:    $1.7977e308\n"), "{text}");
        assert!(
            text.contains(
                "  Warning: the cost total overflowed and is shown as the largest number (1.7976931348623157e308)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn nothing_without_rows() {
        let report = crate::model::tests::build(Vec::new());
        assert_eq!(summary(&report, &Options::default()), "");
    }
}
