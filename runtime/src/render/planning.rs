//! The `probability: plan` section: one line per case with what its gate needs and how likely
//! the planned runs are to pass it and to catch a rare failure, the totals, and a sentence per
//! column on what its numbers mean (pytest-probability's `--prob-plan` layout).
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::planning::{Plan, PlanRow};
use crate::render::text::{bound_percent, column_widths, money, paint, rule, thousands};
use crate::types::status::Color;

/// Renders the plan; `color` paints each row by whether its runs are enough.
pub fn plan(plan: &Plan, color: bool) -> String {
    let settings = &plan.settings;
    let rated = plan.rows.iter().any(|row| row.gate.is_some());
    let timed = plan.rows.iter().any(|row| row.max_latency.is_some());
    let gated = rated || timed;
    let priced = plan.rows.iter().any(|row| row.cost_per_run.is_some());
    let power = percent_as_written(settings.power);
    let mut header = vec!["case".to_string(), "runs".to_string()];
    if gated {
        header.extend([
            "min runs".to_string(),
            format!("runs for {power}"),
            "chance now".to_string(),
        ]);
    }
    for flake in &settings.flakes {
        header.push(format!("catch {}", percent_as_written(*flake)));
    }
    if priced {
        header.push("cost".to_string());
    }
    let table: Vec<Vec<String>> = plan
        .rows
        .iter()
        .map(|row| cells(row, plan, gated, priced))
        .collect();
    let widths = column_widths(&header, &table);
    let line = |cells: &[String]| {
        let mut text = format!("  {:<width$}", cells[0], width = widths[0]);
        for (cell, width) in cells.iter().zip(&widths).skip(1) {
            let _ = write!(text, "  {cell:>width$}");
        }
        text.trim_end().to_string()
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", rule("probability: plan"));
    let _ = writeln!(out, "{}", line(&header));
    for (row, cells) in plan.rows.iter().zip(&table) {
        let text = line(cells);
        let _ = writeln!(
            out,
            "{}",
            match tone(row, settings.power) {
                Some(tone) => paint(&text, tone, color),
                None => text,
            }
        );
    }
    let cases = plan.rows.len();
    let runs = plan.total_runs();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  Plan:    {cases} case{}, {} run{}; nothing was run.",
        plural(cases as u64),
        thousands(runs),
        plural(runs)
    );
    if let Some(report) = &plan.report {
        let total: f64 = plan.rows.iter().filter_map(PlanRow::cost).sum();
        let unpriced = plan
            .rows
            .iter()
            .filter(|row| row.cost_per_run.is_none())
            .count();
        let mut text = format!("  Cost:    {} projected from {report}", money(total));
        if unpriced > 0 {
            let _ = write!(
                text,
                " ({unpriced} case{} not in it)",
                plural(unpriced as u64)
            );
        }
        let _ = writeln!(out, "{text}");
    }
    let _ = writeln!(out);
    notes(plan, (rated, timed), priced, &header, &mut out);
    out
}

/// A row's cells, in the header's columns.
fn cells(row: &PlanRow, plan: &Plan, gated: bool, priced: bool) -> Vec<String> {
    let mut cells = vec![
        crate::render::text::shown(&row.case).into_owned(),
        thousands(row.runs),
    ];
    if gated {
        if row.gate.is_none() {
            let least = row.min_runs.map_or("—".to_string(), thousands);
            cells.extend([least, "—".to_string(), "—".to_string()]);
        } else {
            // The power columns are the rate gate's alone: marked when a latency gate also
            // applies.
            let mark = if row.max_latency.is_some() {
                LATENCY_MARK
            } else {
                ""
            };
            cells.push(row.min_runs.map_or("never".to_string(), thousands));
            cells.push(
                match row.runs_for_power {
                    Some(runs) => thousands(runs),
                    None if row.never(plan.settings.assume) => "never".to_string(),
                    None => format!(">{}", thousands(plan.settings.cap)),
                } + mark,
            );
            cells.push(row.chance.map_or("—".to_string(), chance) + mark);
        }
    }
    cells.extend(row.catch.iter().map(|catch| chance(*catch)));
    if priced {
        cells.push(row.cost().map_or(String::new(), money));
    }
    cells
}

/// The mark on a row's power cells when a latency gate also applies (pytest-probability's).
const LATENCY_MARK: &str = "*";

/// Red: the gate cannot pass with these runs; yellow: it passes less often than the plan aims
/// at; green: enough. An ungated row stays plain, and so does a latency-only row above its
/// minimum, whose chance is not planned.
fn tone(row: &PlanRow, power: f64) -> Option<Color> {
    if row.gate.is_none() && row.max_latency.is_none() {
        return None;
    }
    if row.min_runs.is_none_or(|min_runs| row.runs < min_runs) {
        return Some(Color::Red);
    }
    row.gate?;
    Some(if row.chance.is_some_and(|chance| chance >= power) {
        Color::Green
    } else {
        Color::Yellow
    })
}

/// A planned chance as a whole percent: a rate strictly between 0 and 1 never makes anything
/// certain, so 100% is never printed.
fn chance(value: f64) -> String {
    bound_percent(value.min(0.999))
}

/// A rate as the user wrote it: 0.1 is `10%`, 0.975 is `97.5%`.
fn percent_as_written(rate: f64) -> String {
    let percent = (rate * 100.0 * 1e9).round() / 1e9;
    format!("{percent}%")
}

fn plural(count: u64) -> &'static str {
    if count == 1 {
        ""
    } else {
        "s"
    }
}

/// A sentence per column on what its numbers mean, under the column's name.
fn notes(
    plan: &Plan,
    (gated, latency): (bool, bool),
    priced: bool,
    header: &[String],
    out: &mut String,
) {
    let settings = &plan.settings;
    let assume = percent_as_written(settings.assume);
    let power = percent_as_written(settings.power);
    let level = percent_as_written(plan.level);
    let mut notes: Vec<(String, String)> = vec![(
        "runs".into(),
        "Runs planned for the case (`runs =` in the attribute, PROB_RUNS or the config's `runs`)."
            .into(),
    )];
    // Why a latency gate gets no power figure.
    let unplanned = "A latency gate gets — here: its chance would need a guess at how slow the \
                     code really is.";
    if gated && latency {
        notes.push((
            "min runs".into(),
            "Fewest runs with which the gate can pass at all: for a pass-rate gate, only if \
             every one of them passes; for a latency gate, however fast they are, since with \
             fewer its percentile's interval has no upper end. A case with both gates needs \
             the larger."
                .into(),
        ));
    } else if gated {
        notes.push((
            "min runs".into(),
            "Fewest runs with which the gate can pass at all, and then only if every one of them passes.".into(),
        ));
    } else if latency {
        notes.push((
            "min runs".into(),
            "Fewest runs with which the latency gate can pass at all, however fast they are: \
             with fewer, its percentile's interval has no upper end. It depends only on the \
             percentile and the confidence level."
                .into(),
        ));
        notes.push((
            format!("runs for {power}"),
            format!("Runs with which a pass-rate gate passes {power} of the time. {unplanned}"),
        ));
        notes.push((
            "chance now".into(),
            "The chance a pass-rate gate passes with the planned runs; — for a latency gate, \
             for the same reason."
                .into(),
        ));
    }
    if gated {
        notes.push((
            format!("runs for {power}"),
            format!("Runs with which the gate passes {power} of the time if the case really passes {assume} of its runs (--assume); never, if {assume} is not above the gate's bar.{}", if latency { format!(" {unplanned}") } else { String::new() }),
        ));
        notes.push((
            "chance now".into(),
            format!("The chance the gate passes with the planned runs, if the case really passes {assume} of its runs."),
        ));
    }
    if plan
        .rows
        .iter()
        .any(|row| row.gate.is_some() && row.max_latency.is_some())
    {
        notes.push((
            LATENCY_MARK.into(),
            "A latency gate also applies: the marked numbers are for the pass-rate gate alone, \
             and the latency gate's runs aren't planned beyond its min runs."
                .into(),
        ));
    }
    for (flake, runs) in settings.flakes.iter().zip(&plan.runs_to_catch) {
        let rate = percent_as_written(*flake);
        let mut note =
            format!("The chance the planned runs show at least one failure if {rate} of runs fail");
        match runs {
            Some(runs) => {
                let _ = write!(note, "; {} runs make it {level}.", thousands(*runs));
            }
            None => note.push('.'),
        }
        notes.push((format!("catch {rate}"), note));
    }
    if priced {
        if let Some(report) = &plan.report {
            notes.push((
                "cost".into(),
                format!("The planned runs at each case's cost per run in {report}."),
            ));
        }
    }
    let label_width = header
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    for (label, note) in notes {
        wrap_note(&label, &note, label_width, out);
    }
}

/// `  label   note...`, the note wrapped at 80 columns and indented under itself.
fn wrap_note(label: &str, note: &str, label_width: usize, out: &mut String) {
    const WIDTH: usize = 80;
    let indent = 2 + label_width + 2;
    let mut line = format!("  {label:<label_width$}  ");
    let mut empty = true;
    for word in note.split(' ') {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(out, "{}", line.trim_end());
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{}", line.trim_end());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::planning::PlanSettings;
    use crate::model::tests::info;
    use crate::types::stats::{GateSpec, Rule, StatsConfig};

    #[test]
    fn latency_gates_plan_like_pytest_probabilitys() {
        use crate::types::stats::latency::LatencySpec;
        let latency = Some(LatencySpec {
            quantile: None,
            max_latency: Some(2.0),
            level: None,
        });
        let mut both = info("both");
        both.line = 1;
        both.runs = 80;
        both.latency = latency;
        both.gate = Some(GateSpec {
            rule: Rule::MinRate(0.8),
            method: None,
            level: None,
            prior: None,
        });
        let mut timed = info("timed");
        timed.line = 2;
        timed.latency = latency;
        let built = Plan::build(
            &[both, timed],
            &StatsConfig::default(),
            PlanSettings::default(),
            None,
        );
        let text = plan(&built, false);
        let table: Vec<&str> = text.lines().skip(1).take(3).collect();
        // pytest-probability 0.3.0's `--prob-plan` on the same marks.
        assert_eq!(
            table,
            [
                "  case   runs  min runs  runs for 80%  chance now  catch 10%  catch 1%",
                "  both     80        72           26*        99%*        99%       55%",
                "  timed    10        72             —           —        65%       10%",
            ],
            "{text}"
        );
        assert!(text.contains("A latency gate also applies"), "{text}");
        assert!(text.contains("however fast they are"), "{text}");
    }

    #[test]
    fn the_plan_reads_like_pytest_probabilitys() {
        let gate = |rule| GateSpec {
            rule,
            method: None,
            level: None,
            prior: None,
        };
        let case = |name: &str, line: u32, runs: u32, rule: Option<Rule>| {
            let mut info = info(name);
            info.line = line;
            info.runs = runs;
            info.gate = rule.map(gate);
            info
        };
        let cases = [
            case("gated_rate", 1, 20, Some(Rule::MinRate(0.8))),
            case("infeasible", 2, 10, Some(Rule::MinRate(0.9))),
            case("count", 3, 10, Some(Rule::MinPasses(8))),
            case("ungated", 4, 30, None),
            case("big", 5, 200, Some(Rule::MinRate(0.9))),
        ];
        let built = Plan::build(
            &cases,
            &StatsConfig::default(),
            PlanSettings::default(),
            None,
        );
        let text = plan(&built, false);
        let table: Vec<&str> = text.lines().skip(1).take(6).collect();
        // pytest-probability 0.3.0's `--prob-plan` on the same five marks.
        assert_eq!(
            table,
            [
                "  case        runs  min runs  runs for 80%  chance now  catch 10%  catch 1%",
                "  gated_rate    20        17            26         54%        88%       18%",
                "  infeasible    10        36           100          0%        65%       10%",
                "  count         10         8             9         99%        65%       10%",
                "  ungated       30         —             —           —        96%       26%",
                "  big          200        36           100         98%        99%       87%",
            ],
            "{text}"
        );
        assert!(
            text.contains("  Plan:    5 cases, 270 runs; nothing was run."),
            "{text}"
        );
        assert!(
            text.contains(
                "  catch 10%     The chance the planned runs show at least one failure if 10% of"
            ),
            "{text}"
        );
        assert!(text.contains("runs fail; 29 runs make it 95%."), "{text}");
    }
}
