//! The report as JUnit XML for CI test tabs (`cargo probtest report --junit`): one
//! `testsuite` per bench function, one `testcase` per case (not per run) whose failure says
//! the status, the pass fraction, the interval and the first failing messages, and one more
//! `testcase` per gate with its verdict. Cost and tokens are the suites' properties. The
//! layout validates against the JUnit schema CI systems use (Jenkins' JUnit-10 XSD; the tests
//! check it).
//!
//! Layer: export.

use std::fmt::Write;

use crate::export::{
    doctor_command, fraction, functions, interval_text, records_by_row, run_message, verdict_word,
};
use crate::model::{Record, Report, Row};
use crate::render::text::{bar_text, bound_percent};
use crate::types::stats::Verdict;
use crate::types::status::{Outcome, Status};

/// Failing runs quoted in a case's failure text; the report has them all.
const QUOTED_RUNS: usize = 5;

/// What one `testcase` says.
enum CaseResult {
    Passed,
    Failed {
        kind: &'static str,
        message: String,
        text: String,
    },
    Skipped {
        message: String,
    },
}

struct Case {
    name: String,
    classname: String,
    time: f64,
    verdict: CaseResult,
}

/// Renders the report as JUnit XML.
pub fn junit(report: &Report) -> String {
    let by_row = records_by_row(report);
    let mut suites = String::new();
    let mut totals = [0usize; 3];
    let mut total_time = 0.0;
    for function in functions(report) {
        let mut cases = Vec::new();
        let mut properties = String::new();
        for &position in &function.rows {
            let row = &report.rows[position];
            cases.extend(row_cases(report, row, &by_row[position], &function.name));
            row_properties(row, &mut properties);
        }
        let count = |failed: bool| {
            cases
                .iter()
                .filter(|case| match &case.verdict {
                    CaseResult::Failed { kind, .. } => failed == (*kind == "failure"),
                    _ => false,
                })
                .count()
        };
        let (failures, errors) = (count(true), count(false));
        let skipped = cases
            .iter()
            .filter(|case| matches!(case.verdict, CaseResult::Skipped { .. }))
            .count();
        let time: f64 = cases.iter().map(|case| case.time).sum();
        totals[0] += cases.len();
        totals[1] += failures;
        totals[2] += errors;
        total_time += time;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{}\" timestamp=\"{}\">",
            escape(&function.name),
            cases.len(),
            seconds(time),
            escape(&report.created),
        );
        if !properties.is_empty() {
            let _ = write!(suites, "    <properties>\n{properties}    </properties>\n");
        }
        for case in &cases {
            write_case(case, &mut suites);
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"probtest\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n{suites}</testsuites>\n",
        totals[0],
        totals[1],
        totals[2],
        seconds(total_time)
    )
}

/// The case's `testcase`, and its gate's when it has one.
fn row_cases(report: &Report, row: &Row, records: &[&Record], classname: &str) -> Vec<Case> {
    let time: f64 = records.iter().map(|record| record.elapsed).sum();
    let status = Report::row_status_text(row);
    let mut headline = format!("{} passed", fraction(row));
    if let Some(interval) = interval_text(report, row) {
        let _ = write!(headline, " {interval}");
    }
    let verdict = if row.fails_session(&report.stats_config) {
        let mut text = format!("{status}: {headline}\n");
        let failing = records
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Pass | Outcome::Stopped));
        let shown: Vec<&&Record> = failing.clone().take(QUOTED_RUNS).collect();
        for record in &shown {
            let _ = writeln!(
                text,
                "run {} {}: {}",
                record.run,
                record.outcome.name(),
                run_message(record)
            );
        }
        let more = failing.count() - shown.len();
        if more > 0 {
            let _ = writeln!(text, "... and {more} more");
        }
        if let Some(command) = doctor_command(row) {
            let _ = writeln!(text, "why: {command}");
        }
        let kind = if matches!(row.status, Status::Error | Status::Errored) {
            "error"
        } else {
            "failure"
        };
        let word = if status.is_empty() {
            // A gated case whose runs all passed and whose gate still failed.
            row.gate
                .map_or("FAIL", |gate| verdict_word(gate.verdict))
                .to_string()
        } else {
            status
        };
        CaseResult::Failed {
            kind,
            message: format!("{word}: {headline}"),
            text,
        }
    } else {
        CaseResult::Passed
    };
    let mut cases = vec![Case {
        name: row.info.case.clone(),
        classname: classname.to_string(),
        time,
        verdict,
    }];
    if let Some(gate) = row.gate {
        let word = verdict_word(gate.verdict);
        let message = format!(
            "gate {word}: {}/{} passed [{}, {}], bar {}",
            gate.passes,
            gate.sample,
            bound_percent(gate.low),
            bound_percent(gate.high),
            bar_text(gate.rule)
        );
        let verdict = if gate.fails(report.stats_config.undecided) {
            CaseResult::Failed {
                kind: "failure",
                text: format!("{message}\n"),
                message,
            }
        } else if gate.verdict == Verdict::Undecided {
            CaseResult::Skipped { message }
        } else {
            CaseResult::Passed
        };
        cases.push(Case {
            name: format!("{} gate {}", row.info.case, bar_text(gate.rule)),
            classname: classname.to_string(),
            time: 0.0,
            verdict,
        });
    }
    if let Some(case) = latency_case(report, row, classname) {
        cases.push(case);
    }
    cases
}

/// A latency gate's `testcase` (`max_latency`), judged as a rate gate's is: `refund latency
/// ≤2s`, failed with the quantile and its interval.
fn latency_case(report: &Report, row: &Row, classname: &str) -> Option<Case> {
    use crate::render::latency::seconds;
    let latency = row.latency.as_ref()?;
    let (verdict, limit) = (latency.verdict?, latency.max_latency?);
    let ci = latency.ci.as_ref();
    let message = format!(
        "latency gate {}: {} {} [{}, {}] over {} runs, limit {}s",
        verdict_word(verdict),
        latency.label(),
        seconds(latency.estimate),
        seconds(ci.and_then(|ci| ci.low)),
        seconds(ci.and_then(|ci| ci.high)),
        latency.total,
        limit
    );
    let fails = verdict == Verdict::Fail
        || (verdict == Verdict::Undecided
            && report.stats_config.undecided == crate::types::stats::Undecided::Fail);
    let verdict = if fails {
        CaseResult::Failed {
            kind: "failure",
            text: format!("{message}\n"),
            message,
        }
    } else if verdict == Verdict::Undecided {
        CaseResult::Skipped { message }
    } else {
        CaseResult::Passed
    };
    Some(Case {
        name: format!("{} latency ≤{limit}s", row.info.case),
        classname: classname.to_string(),
        time: 0.0,
        verdict,
    })
}

/// The case's cost and tokens, from its row.
fn row_properties(row: &Row, out: &mut String) {
    let mut property = |name: String, value: String| {
        let _ = writeln!(
            out,
            "      <property name=\"{}\" value=\"{}\"/>",
            escape(&name),
            escape(&value)
        );
    };
    let case = &row.info.case;
    if row.cost > 0.0 {
        property(format!("{case} cost"), format!("{}", row.cost));
    }
    for (model, usage) in &row.usage.0 {
        let model = crate::render::text::model_name(model);
        property(
            format!("{case} tokens {model} input"),
            usage.input_tokens.to_string(),
        );
        property(
            format!("{case} tokens {model} output"),
            usage.output_tokens.to_string(),
        );
        if usage.cached_input_tokens > 0 {
            property(
                format!("{case} tokens {model} cached"),
                usage.cached_input_tokens.to_string(),
            );
        }
        if usage.cost > 0.0 {
            property(
                format!("{case} tokens {model} cost"),
                format!("{}", usage.cost),
            );
        }
    }
}

fn write_case(case: &Case, out: &mut String) {
    let _ = write!(
        out,
        "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\"",
        escape(&case.name),
        escape(&case.classname),
        seconds(case.time)
    );
    match &case.verdict {
        CaseResult::Passed => out.push_str("/>\n"),
        CaseResult::Failed {
            kind,
            message,
            text,
        } => {
            let _ = write!(
                out,
                ">\n      <{kind} message=\"{}\" type=\"{}\">{}</{kind}>\n    </testcase>\n",
                escape(message),
                escape(message.split(':').next().unwrap_or(kind)),
                escape(text)
            );
        }
        CaseResult::Skipped { message } => {
            let _ = write!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                escape(message)
            );
        }
    }
}

/// Seconds with three decimals: the schema's time pattern allows no more.
fn seconds(time: f64) -> String {
    format!("{:.3}", if time.is_finite() { time.max(0.0) } else { 0.0 })
}

/// Text for an XML attribute or element: markup escaped, and characters XML 1.0 cannot hold
/// (most control characters) replaced, so that a panic message with an escape sequence still
/// gives a file every consumer reads.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}
