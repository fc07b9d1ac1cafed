//! The report as one self-contained HTML page (`cargo probtest report --html`, `PROB_HTML`):
//! per case a bar of the pass fraction with its interval and gate, the counts, cost and tokens,
//! the status words of the terminal, a sparkline of the case over the sessions the store
//! holds, and its failing and erroring runs, grouped by what they said (each group's message
//! whole, its runs numbered once); per function its estimate over its cases, and the
//! comparisons as a forest plot; per model tokens and cost. Sortable and filterable by a small inline script; no network, no external files.
//!
//! The page is an askama template (`runtime/templates/report.html`), compiled into the crate
//! and checked against the view types below; the charts are hand-written SVG (`svg`).
//!
//! Layer: export.

mod analysis;
mod svg;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use askama::Template;

use crate::export::{
    doctor_command, failure_groups, fraction, gates_text, interval_text, needs_attention,
    not_run_text, overall_text, records_by_row, status_with_not_run, verdict_word,
};
use crate::model::{Record, Report, Row};
use crate::render::text::{bar_text, model_name, money, shown, shown_block, thousands, token_text};
use crate::types::key::CaseKey;
use crate::types::stats::{Rule, Verdict};
use crate::types::status::Status;

/// Groups of failing and erroring runs listed under a case; the JSON report has them all, and a
/// page of a thousand flaky cases must stay small.
const LISTED_GROUPS: usize = 20;

/// Earlier sessions' pass rates per case, for the sparklines: what the store still holds, and
/// the baseline the session is compared with.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// The sessions, oldest first, the current one not among them.
    pub sessions: Vec<HistorySession>,
    /// An earlier report the session is compared with (`PROB_BASELINE`), drawn as a dashed
    /// line at its rate of the case. Matched by row id alone: a baseline may be another
    /// package's or pytest-probability's report.
    pub baseline: Option<HistorySession>,
    /// The doctor's split of each row it diagnosed (`model`, `harness: time`), by row id: what
    /// `cargo probtest report` reads from the doctor's file beside the report.
    pub diagnosed: std::collections::BTreeMap<String, String>,
}

/// One earlier session's pass rate of each case, as its report's rows have them.
#[derive(Clone, Debug, Default)]
pub struct HistorySession {
    /// The session's key.
    pub key: String,
    /// Each case's pass rate (0-100), by package, module and row id.
    pub rates: HashMap<CaseKey, f64>,
}

impl HistorySession {
    /// The rates of the rows of `report`, session `key`'s report.
    pub fn of(key: &str, report: &Report) -> HistorySession {
        HistorySession {
            key: key.to_string(),
            rates: report
                .rows
                .iter()
                .map(|row| (row.info.key().to_owned_key(), row.pass_rate))
                .collect(),
        }
    }
}

/// Runs of a case that failed the same way: their heading, and their message whole.
struct FailureView {
    outcome: &'static str,
    heading: String,
    message: String,
}

struct CaseView {
    id: String,
    search: String,
    tone: &'static str,
    fraction: String,
    rate: String,
    rate_value: f64,
    width_value: f64,
    cost_value: f64,
    interval: String,
    status: String,
    gate: String,
    gate_tone: &'static str,
    cost: String,
    cost_per_pass: String,
    tokens: String,
    bar: String,
    spark: String,
    attention: bool,
    failures: Vec<FailureView>,
    runs_summary: String,
    more_runs: usize,
    doctor: String,
    /// The doctor's split of the row's failures, when it diagnosed the row.
    diagnosed: String,
}

/// The columns that some case fills: a column no case has is left out.
struct Columns {
    gate: bool,
    cost: bool,
    tokens: bool,
    count: usize,
}

struct ModelView {
    name: String,
    tokens: String,
    cost: String,
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page<'a> {
    title: String,
    session: String,
    created: &'a str,
    version: &'a str,
    overall: String,
    gates: String,
    cost: String,
    /// The cost replayed from the cassette, not spent; empty when none was.
    replayed: String,
    warnings: Vec<String>,
    attention: usize,
    columns: Columns,
    cases: Vec<CaseView>,
    functions: Vec<analysis::FunctionView>,
    /// Whether the functions table has its metrics column: a metric was asked for.
    metrics: bool,
    arms: Vec<analysis::ArmView>,
    models: Vec<ModelView>,
    history: usize,
    style: &'static str,
    script: &'static str,
}

/// Renders the report as a self-contained HTML page, with `history` for the sparklines.
pub fn html(report: &Report, history: &History) -> String {
    let by_row = records_by_row(report);
    let baseline: HashMap<&str, f64> = history
        .baseline
        .iter()
        .flat_map(|session| session.rates.iter())
        .map(|(key, rate)| (key.case.as_str(), *rate))
        .collect();
    let cases = report
        .rows
        .iter()
        .zip(&by_row)
        .map(|(row, records)| {
            let baseline = baseline.get(row.info.case.as_str()).copied();
            case_view(report, row, records, history, baseline)
        })
        .collect();
    let rows = &report.rows;
    let (gate, cost) = (
        rows.iter().any(|r| r.gate.is_some()),
        rows.iter().any(|r| r.cost > 0.0),
    );
    let tokens = rows.iter().any(|r| !r.usage.is_empty());
    let columns = Columns {
        gate,
        cost,
        tokens,
        // case, passed, pass rate, interval, status and history; cost comes with per pass.
        count: 6 + usize::from(gate) + 2 * usize::from(cost) + usize::from(tokens),
    };
    // Runs that never started head the page's warnings, as the summary's `Not run:` line.
    let warnings: Vec<String> = not_run_text(report)
        .map(|text| format!("Not run: {text}"))
        .into_iter()
        .chain(report.warnings.iter().cloned())
        .map(|warning| shown(&warning).into_owned())
        .collect();
    let functions = analysis::functions(report);
    let page = Page {
        title: title(report),
        session: report.session.clone().unwrap_or_default(),
        created: &report.created,
        version: &report.version,
        overall: overall_text(report),
        gates: gates_text(report).unwrap_or_default(),
        cost: if report.totals.cost > 0.0 {
            money(report.totals.cost)
        } else {
            String::new()
        },
        replayed: crate::render::waits::replayed_text(report).unwrap_or_default(),
        warnings,
        attention: report.rows.iter().filter(|r| needs_attention(r)).count(),
        columns,
        cases,
        metrics: !report.stats_config.metrics.is_empty()
            || functions
                .iter()
                .any(|function| !function.metrics.is_empty()),
        functions,
        arms: analysis::arms(report),
        models: report
            .totals
            .usage
            .0
            .iter()
            .map(|(model, usage)| ModelView {
                name: shown(model_name(model)).into_owned(),
                tokens: token_text(usage),
                cost: money(usage.cost),
            })
            .collect(),
        history: history.sessions.len(),
        style: include_str!("report.css"),
        script: include_str!("report.js"),
    };
    // The template's own writes cannot fail: it writes into a `String`, and every value it
    // shows is a plain string or number.
    page.render()
        .unwrap_or_else(|error| format!("<!doctype html><p>{error}</p>"))
}

/// Packages a title names before it counts the rest.
const TITLED_PACKAGES: usize = 3;

/// `probtest — evals — 2026-12-07 01:30 UTC`: what a browser's tab and a list of saved pages
/// tell apart, the packages the report is of and when it was made (the session's key, which
/// the page shows below, reads as noise there).
fn title(report: &Report) -> String {
    let mut packages: Vec<&str> = Vec::new();
    for row in &report.rows {
        let package = row.info.package.as_str();
        if !package.is_empty() && !packages.contains(&package) {
            packages.push(package);
        }
    }
    let mut parts = vec!["probtest".to_string()];
    match packages.len() {
        0 => {}
        n if n <= TITLED_PACKAGES => parts.push(packages.join(", ")),
        n => parts.push(format!(
            "{} and {} more",
            packages[..TITLED_PACKAGES - 1].join(", "),
            n - (TITLED_PACKAGES - 1)
        )),
    }
    let when = minute_of(&report.created);
    if !when.is_empty() {
        parts.push(when);
    }
    parts.join(" — ")
}

/// An RFC 3339 time to the minute, `2026-12-07 01:30 UTC`; a text that is not one as it is.
fn minute_of(created: &str) -> String {
    let Some((date, time)) = created.split_once('T') else {
        return created.to_string();
    };
    let clock = time.get(..5).filter(|clock| {
        clock.as_bytes()[2] == b':' && clock.bytes().filter(u8::is_ascii_digit).count() == 4
    });
    let (Some(clock), 10) = (clock, date.len()) else {
        return created.to_string();
    };
    // What follows the seconds and their fraction: `Z`, an offset, or nothing.
    let zone = time[5..].trim_start_matches(|c: char| c.is_ascii_digit() || c == ':' || c == '.');
    match zone {
        "Z" | "z" | "+00:00" | "-00:00" => format!("{date} {clock} UTC"),
        "" => format!("{date} {clock}"),
        offset => format!("{date} {clock} {offset}"),
    }
}

fn tone(status: Status) -> &'static str {
    match status {
        Status::Pass => "pass",
        Status::Flaky | Status::Errored => "warn",
        Status::Fail | Status::Error => "fail",
    }
}

fn case_view(
    report: &Report,
    row: &Row,
    records: &[&Record],
    history: &History,
    baseline: Option<f64>,
) -> CaseView {
    let status = status_with_not_run(row);
    let interval = interval_text(report, row);
    let ci = row
        .ci
        .as_ref()
        .filter(|_| interval.is_some())
        .map(|ci| (ci.low, ci.high));
    let gate_bar = row.gate.and_then(|gate| match gate.rule {
        Rule::MinRate(bar) => Some(bar),
        // A count of passes as a fraction of the gate's sample, where the bar sits on the scale.
        Rule::MinPasses(bar) => (gate.sample > 0).then(|| bar as f64 / gate.sample as f64),
    });
    let rate = format!("{:.0}%", row.pass_rate);
    let mut label = format!("{} passed", rate);
    if let Some(interval) = &interval {
        label.push_str(&format!(", interval {interval}"));
    }
    let groups = failure_groups(records);
    let more_runs = groups
        .iter()
        .skip(LISTED_GROUPS)
        .map(|group| group.runs.len())
        .sum();
    let failures = groups
        .iter()
        .take(LISTED_GROUPS)
        .map(|group| FailureView {
            outcome: group.outcome.name(),
            heading: shown(&group.heading()).into_owned(),
            message: group
                .message
                .map_or(String::new(), |message| shown_block(message).into_owned()),
        })
        .collect();
    let rates: Vec<f64> = history
        .sessions
        .iter()
        .filter_map(|session| session.rates.get(&row.info.key().to_owned_key()).copied())
        .chain([row.pass_rate])
        .collect();
    let mut spark_label = format!(
        "pass rate over {} sessions: {}",
        rates.len(),
        rates
            .iter()
            .map(|r| format!("{r:.0}%"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(baseline) = baseline {
        spark_label.push_str(&format!("; baseline {baseline:.0}%"));
    }
    let id = shown(&row.info.case).into_owned();
    let diagnosed = history
        .diagnosed
        .get(&row.info.case)
        .map(|tag| shown(tag).into_owned())
        .unwrap_or_default();
    CaseView {
        search: format!("{id} {status} {diagnosed}").to_lowercase(),
        diagnosed,
        id,
        tone: tone(row.status),
        fraction: fraction(row),
        rate,
        rate_value: row.pass_rate,
        width_value: ci.map_or(1.0, |(low, high)| high - low),
        cost_value: row.cost,
        interval: interval.unwrap_or_default(),
        gate: row
            .gate
            .map(|gate| format!("{} ({})", verdict_word(gate.verdict), bar_text(gate.rule)))
            .unwrap_or_default(),
        gate_tone: match row.gate.map(|gate| gate.verdict) {
            Some(Verdict::Pass) | None => "pass",
            Some(Verdict::Undecided) => "warn",
            Some(Verdict::Fail) => "fail",
        },
        status,
        cost: if row.cost > 0.0 {
            money(row.cost)
        } else {
            String::new()
        },
        cost_per_pass: cost_per_pass(row).map(money).unwrap_or_default(),
        tokens: row
            .usage
            .0
            .iter()
            .map(|(model, usage)| format!("{} {}", shown(model_name(model)), token_text(usage)))
            .collect::<Vec<_>>()
            .join("; "),
        bar: svg::bar(row.pass_rate, ci, gate_bar, tone(row.status), &label),
        spark: svg::sparkline(&rates, baseline, &spark_label),
        attention: needs_attention(row),
        runs_summary: runs_summary(row),
        more_runs,
        failures,
        doctor: doctor_command(row).unwrap_or_default(),
    }
}

/// The cost of one passing run of the case: what a pass costs, failures and errors included.
/// `None` for a case that spent nothing or never passed.
fn cost_per_pass(row: &Row) -> Option<f64> {
    (row.cost > 0.0 && row.passes > 0).then(|| row.cost / row.passes as f64)
}

/// `2 failed, 1 errored`: what the case's listed runs are.
fn runs_summary(row: &Row) -> String {
    let mut parts = Vec::new();
    if row.fails > 0 {
        parts.push(format!("{} failed", thousands(row.fails)));
    }
    if row.errors > 0 {
        parts.push(format!("{} errored", thousands(row.errors)));
    }
    parts.join(", ")
}
