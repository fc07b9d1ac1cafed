//! The report as Markdown for CI pages (`cargo probtest report --markdown`, and the job summary
//! `cargo probtest run` appends to `GITHUB_STEP_SUMMARY`): the cases that are not clean passes
//! first, with their failing runs grouped by what they said (`7 runs (1-4, 6, 8, 9) failed`,
//! then the message whole in a code block), then every case in a collapsed table, then totals,
//! cost and tokens. It reads as plain text in 80 columns too: tables are padded to line up
//! within [`WIDTH`] (a table whose padded columns would be wider has its first column, the case
//! ids, narrowed to fit, so that only a row whose own id is too long for it runs past), and
//! warnings are wrapped there. What a test wrote (ids, messages, model names) is shown with its
//! control characters escaped.
//!
//! Two sinks of the reporter write it: [`Markdown`], a file (`--markdown`), and
//! [`StepSummary`], appended to the file `GITHUB_STEP_SUMMARY` names.

use std::fmt::Write;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use probtest::__cli::{
    bar_text, bound_percent, failure_groups, fraction, gates_text, interval_text, model_name,
    money, needs_attention, not_run_text, overall_text, records_by_row, replayed_text, shown,
    shown_block, status_with_not_run, thousands, verdict_word, FailureGroup, OutputFile, Sink,
    SinkError,
};
use probtest::stats::Verdict;
use probtest::{Report, Row};

/// Cases whose failing runs the Markdown quotes; the JSON report has them all, and a job
/// summary page holds at most a megabyte.
const QUOTED_CASES: usize = 20;
/// Groups of a case's failing runs the Markdown quotes.
const QUOTED_GROUPS: usize = 3;
/// The columns a line of the file takes at most, save a table row whose case id alone is too
/// long to fit beside its figures.
pub(crate) const WIDTH: usize = 80;

/// The doctor's split of each row it diagnosed (`model`, `harness: time`), by row id.
pub type Diagnosed = std::collections::BTreeMap<String, String>;

/// The Markdown report as a file, with the doctor's split beside each row it diagnosed.
pub struct Markdown(pub OutputFile, pub Diagnosed);

impl Sink for Markdown {
    fn write(&mut self, report: &Report) -> Result<(), SinkError> {
        probtest::__cli::store::write_file(self.0.path(), markdown_with(report, &self.1).as_bytes())
            .map_err(|error| self.0.failed("Markdown report", &error))
    }
}

/// The Markdown report appended to a GitHub Actions job's summary page, the file
/// `GITHUB_STEP_SUMMARY` names.
pub struct StepSummary(pub PathBuf);

impl Sink for StepSummary {
    fn write(&mut self, report: &Report) -> Result<(), SinkError> {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.0)
            .and_then(|mut file| file.write_all(markdown(report).as_bytes()))
            .map_err(|error| {
                SinkError::new(format!(
                    "GITHUB_STEP_SUMMARY={}: cannot append the Markdown summary ({error})",
                    Path::new(&self.0).display()
                ))
            })
    }
}

/// Renders the report as Markdown; a report without rows says so in one line.
pub fn markdown(report: &Report) -> String {
    markdown_with(report, &Diagnosed::new())
}

/// [`markdown`], with the doctor's split beside each row it diagnosed (`FLAKY; doctor:
/// model`).
pub fn markdown_with(report: &Report, diagnosed: &Diagnosed) -> String {
    let mut out = String::from("## probability\n\n");
    if let Some(session) = &report.session {
        let _ = writeln!(out, "Session {}\n", code(session));
    }
    if report.rows.is_empty() {
        out.push_str("No runs were recorded.\n");
        return out;
    }
    overall(report, &mut out);
    let attention: Vec<&Row> = report.rows.iter().filter(|r| needs_attention(r)).collect();
    if attention.is_empty() {
        let _ = writeln!(out, "Every case passed cleanly.\n");
    } else {
        let _ = writeln!(
            out,
            "**Not clean: {} of {} cases**\n",
            attention.len(),
            report.rows.len()
        );
        out.push_str(&cases_table(report, &attention, false, diagnosed));
        out.push('\n');
        gates_table(report, &mut out);
        failures(report, &mut out);
    }
    let all: Vec<&Row> = report.rows.iter().collect();
    let _ = writeln!(
        out,
        "<details><summary>All {} cases</summary>\n",
        report.rows.len()
    );
    out.push_str(&cases_table(report, &all, true, diagnosed));
    out.push_str("\n</details>\n");
    tokens(report, &mut out);
    if !report.warnings.is_empty() {
        out.push_str("\n**Warnings**\n\n");
        for warning in &report.warnings {
            out.push_str(&wrap(&escape(warning), "- ", "  "));
        }
    }
    out
}

/// The overall line, the gates and the cost, as the summary's totals say them.
fn overall(report: &Report, out: &mut String) {
    let _ = writeln!(out, "**{}**  ", overall_text(report));
    if let Some(not_run) = not_run_text(report) {
        let _ = writeln!(out, "Not run: {}  ", escape(&not_run));
    }
    if let Some(gates) = gates_text(report) {
        let _ = writeln!(out, "Gates: {gates}  ");
    }
    if report.totals.cost > 0.0 {
        let _ = writeln!(out, "Cost: {}  ", money(report.totals.cost));
    }
    if let Some(replayed) = replayed_text(report) {
        let _ = writeln!(out, "Replayed: {replayed}  ");
    }
    out.push('\n');
}

/// A table of `rows`; `all` adds the cost column, which the short table leaves to the long one.
fn cases_table(report: &Report, rows: &[&Row], all: bool, diagnosed: &Diagnosed) -> String {
    let intervals = rows.iter().any(|row| interval_text(report, row).is_some());
    let costs = all && rows.iter().any(|row| row.cost > 0.0);
    let mut header = vec![("case", Align::Left), ("passed", Align::Right)];
    if intervals {
        header.push(("interval", Align::Left));
    }
    if costs {
        header.push(("cost", Align::Right));
    }
    header.push(("status", Align::Left));
    let body = rows
        .iter()
        .map(|row| {
            let mut cells = vec![escape(&row.info.case), fraction(row)];
            if intervals {
                cells.push(interval_text(report, row).unwrap_or_default());
            }
            if costs {
                cells.push(if row.cost > 0.0 {
                    money(row.cost)
                } else {
                    String::new()
                });
            }
            let mut status = status_cell(row);
            if let Some(tag) = diagnosed.get(&row.info.case) {
                status = format!("{status}; doctor: {}", escape(tag));
            }
            cells.push(status);
            cells
        })
        .collect();
    table(&header, body)
}

/// The status words, then the gate's verdict: `FLAKY; gate UNDECIDED` (the gates table has
/// the bar).
fn status_cell(row: &Row) -> String {
    let status = status_with_not_run(row);
    let gate = row
        .gate
        .map(|gate| format!("gate {}", verdict_word(gate.verdict)));
    match (status.is_empty(), gate) {
        (true, None) => String::new(),
        (false, None) => status,
        (true, Some(gate)) => gate,
        (false, Some(gate)) => format!("{status}; {gate}"),
    }
}

/// The gates that did not pass, as the summary's gates block shows them: the gate's own
/// sample (errors may be excluded), its interval and its bar.
fn gates_table(report: &Report, out: &mut String) {
    let body: Vec<Vec<String>> = report
        .rows
        .iter()
        .filter_map(|row| {
            let gate = row.gate.filter(|gate| gate.verdict != Verdict::Pass)?;
            Some(vec![
                escape(&row.info.case),
                format!("{}/{}", gate.passes, gate.sample),
                format!(
                    "[{}, {}]",
                    bound_percent(gate.low),
                    bound_percent(gate.high)
                ),
                bar_text(gate.rule),
                verdict_word(gate.verdict).to_string(),
            ])
        })
        .collect();
    if body.is_empty() {
        return;
    }
    out.push_str("**Gates that did not pass**\n\n");
    let header = [
        ("case", Align::Left),
        ("sample", Align::Right),
        ("interval", Align::Left),
        ("bar", Align::Left),
        ("verdict", Align::Left),
    ];
    out.push_str(&table(&header, body));
    out.push('\n');
}

/// The failing runs of the cases that are not clean, each case's grouped by what they said: a
/// heading with the runs' numbers, once each, then the message in a code block.
fn failures(report: &Report, out: &mut String) {
    let by_row = records_by_row(report);
    let listed: Vec<(&Row, Vec<FailureGroup>)> = report
        .rows
        .iter()
        .zip(&by_row)
        .filter(|(row, _)| needs_attention(row))
        .map(|(row, records)| (row, failure_groups(records)))
        .filter(|(_, groups)| !groups.is_empty())
        .collect();
    if listed.is_empty() {
        return;
    }
    out.push_str("**Failures**\n\n");
    for (row, groups) in listed.iter().take(QUOTED_CASES) {
        let _ = writeln!(out, "{}:\n", code(&row.info.case));
        for group in groups.iter().take(QUOTED_GROUPS) {
            let _ = writeln!(out, "- {}", escape(&group.heading()));
            if let Some(message) = group.message {
                out.push_str(&block(message, "  "));
            }
        }
        let more: usize = groups
            .iter()
            .skip(QUOTED_GROUPS)
            .map(|group| group.runs.len())
            .sum();
        if more > 0 {
            let noun = if more == 1 { "run" } else { "runs" };
            let _ = writeln!(out, "- and {more} more {noun} in the JSON report");
        }
        out.push('\n');
    }
    if listed.len() > QUOTED_CASES {
        let _ = writeln!(
            out,
            "And {} more cases in the JSON report.\n",
            listed.len() - QUOTED_CASES
        );
    }
}

/// A message as a fenced code block, each line after `indent` (a list item's), fenced with
/// more backticks than it holds in a row, its control characters escaped and its lines kept.
fn block(message: &str, indent: &str) -> String {
    let message = shown_block(message);
    let longest = message.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut out = format!("{indent}{fence}text\n");
    for line in message.trim_end_matches('\n').split('\n') {
        let _ = writeln!(out, "{indent}{line}");
    }
    let _ = writeln!(out, "{indent}{fence}");
    out
}

/// Tokens and cost per model.
fn tokens(report: &Report, out: &mut String) {
    let models = &report.totals.usage.0;
    if models.is_empty() {
        return;
    }
    out.push_str("\n**Tokens**\n\n");
    let cached = models.iter().any(|(_, u)| u.cached_input_tokens > 0);
    let mut header = vec![
        ("model", Align::Left),
        ("input", Align::Right),
        ("output", Align::Right),
    ];
    if cached {
        header.push(("cached", Align::Right));
    }
    header.push(("cost", Align::Right));
    let body = models
        .iter()
        .map(|(model, usage)| {
            let mut cells = vec![
                escape(model_name(model)),
                thousands(usage.input_tokens),
                thousands(usage.output_tokens),
            ];
            if cached {
                cells.push(thousands(usage.cached_input_tokens));
            }
            cells.push(money(usage.cost));
            cells
        })
        .collect();
    out.push_str(&table(&header, body));
}

#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
}

/// Columns between two cells: ` | `.
const SEPARATOR: usize = 3;

/// A Markdown table padded to its columns' widths, so that it lines up as plain text; without
/// the optional outer pipes, which would take four of the 80 columns. Padded, each line is as
/// wide as the widest cell of every column, which may be wider than any one row: then the
/// first column is padded only as far as [`WIDTH`] allows, and a longer cell of it pushes its
/// own row's other cells along.
fn table(header: &[(&str, Align)], body: Vec<Vec<String>>) -> String {
    let width = |text: &str| text.chars().count();
    let mut widths: Vec<usize> = header
        .iter()
        .enumerate()
        .map(|(column, (title, _))| {
            body.iter()
                .map(|cells| width(&cells[column]))
                .chain([width(title), 3])
                .max()
                .unwrap_or(3)
        })
        .collect();
    let others: usize = widths[1..].iter().sum::<usize>() + SEPARATOR * (widths.len() - 1);
    if widths[0] + others > WIDTH {
        widths[0] = WIDTH
            .saturating_sub(others)
            .max(width(header[0].0))
            .max(3)
            .min(widths[0]);
    }
    let line = |cells: Vec<String>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(header)
            .zip(&widths)
            .map(|((cell, (_, align)), &w)| {
                let pad = " ".repeat(w.saturating_sub(width(cell)));
                match align {
                    Align::Left => format!("{cell}{pad}"),
                    Align::Right => format!("{pad}{cell}"),
                }
            })
            .collect();
        format!("{}\n", padded.join(" | ").trim_end())
    };
    let mut out = line(header.iter().map(|(t, _)| t.to_string()).collect());
    let rule: Vec<String> = header
        .iter()
        .zip(&widths)
        .map(|((_, align), &w)| match align {
            Align::Left => "-".repeat(w),
            Align::Right => format!("{}:", "-".repeat(w - 1)),
        })
        .collect();
    let _ = writeln!(out, "{}", rule.join(" | "));
    for cells in body {
        out.push_str(&line(cells));
    }
    out
}

/// `text` (escaped Markdown, one paragraph) as lines of at most [`WIDTH`] columns, the first
/// after `first`, the others after `next`: broken at spaces, never before a word that would
/// start a list, a heading's underline or a thematic break on a line of its own. A word longer
/// than a line stays whole.
fn wrap(text: &str, first: &str, next: &str) -> String {
    let starts_a_block = |word: &str| {
        let digits = word.trim_end_matches(['.', ')']);
        (!word.is_empty() && word.chars().all(|c| matches!(c, '-' | '=' | '+' | '_')))
            || (digits.len() < word.len()
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut out = String::new();
    let mut line = first.to_string();
    let mut bare = true;
    for word in text.split(' ').filter(|word| !word.is_empty()) {
        let fits = line.chars().count() + 1 + word.chars().count() <= WIDTH;
        if !bare && !fits && !starts_a_block(word) {
            out.push_str(line.trim_end());
            out.push('\n');
            line = next.to_string();
            bare = true;
        }
        if !bare {
            line.push(' ');
        }
        line.push_str(word);
        bare = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// Text as Markdown shows it literally, on one line: characters that would start a table cell,
/// emphasis, code, a link, an entity (`&amp;` reads as typed) or HTML are escaped, and control
/// characters are shown as `\u{1b}` ([`shown`]). An underscore inside a word starts no emphasis
/// on GitHub and is left as it is, so that ids like `identify_pii` read as written.
pub(crate) fn escape(text: &str) -> String {
    let one_line = text.replace(['\n', '\r'], " ");
    let chars: Vec<char> = shown(&one_line).chars().collect();
    let mut out = String::with_capacity(text.len());
    for (at, &c) in chars.iter().enumerate() {
        let word = |i: Option<usize>| {
            i.and_then(|i| chars.get(i))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let inside_word = word(at.checked_sub(1)) && word(Some(at + 1));
        match c {
            '\\' | '|' | '*' | '`' | '<' | '>' | '[' | ']' | '#' | '~' | '&' => {
                out.push('\\');
                out.push(c);
            }
            '_' if !inside_word => out.push_str("\\_"),
            _ => out.push(c),
        }
    }
    out
}

/// Text as inline code, fenced with more backticks than it holds, its control characters
/// escaped.
pub(crate) fn code(text: &str) -> String {
    let text = shown(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick needs a space inside its fences, which
    // CommonMark strips.
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}
