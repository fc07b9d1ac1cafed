//! The report as JUnit XML for CI test tabs (`cargo probtest report --junit`): one
//! `testsuite` per bench function, one `testcase` per case (not per run) whose failure says
//! the status, the pass fraction, the interval and its failing runs grouped by what they said
//! (each group's message whole, every line of it, indented under its heading), and one more
//! `testcase` per gate with its verdict. A case that passes the session with failing runs (a
//! FLAKY case whose gate passed) says so in its `system-out`, with the same lines. Cost and
//! tokens are the suites' properties, in round decimals. The XML
//! is `quick-junit`'s (nextest's writer), and validates against the JUnit schema CI systems use
//! (Jenkins' JUnit-10 XSD; the end-to-end tests check it).

use std::fmt::Write;
use std::time::Duration;

use probtest::__cli::{
    bar_text, bound_percent, doctor_command, failure_groups, fraction, interval_text,
    latency_seconds, model_name, records_by_row, verdict_word, OutputFile, Sink, SinkError,
};
use probtest::stats::{Undecided, Verdict};
use probtest::{Record, Report, Row, Status};
use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};

use crate::export::functions;

/// Groups of failing runs quoted in a case's failure text; the report has them all.
const QUOTED_GROUPS: usize = 5;

/// The JUnit XML report as a file.
pub struct Junit(pub OutputFile);

impl Sink for Junit {
    fn write(&mut self, report: &Report) -> Result<(), SinkError> {
        let xml = junit(report).map_err(|error| self.0.failed("JUnit XML report", &error))?;
        probtest::__cli::store::write_file(self.0.path(), xml.as_bytes())
            .map_err(|error| self.0.failed("JUnit XML report", &error))
    }
}

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
    /// What a case that passed despite failing runs says of them (`system-out`).
    out: Option<String>,
}

/// Renders the report as JUnit XML; an error only when the XML writer fails.
pub fn junit(report: &Report) -> Result<String, quick_junit::SerializeError> {
    let by_row = records_by_row(report);
    let mut xml = quick_junit::Report::new("probtest");
    let mut total_time = 0.0;
    for function in functions(report) {
        let mut suite = TestSuite::new(clean(&function.name));
        let mut time = 0.0;
        for &position in &function.rows {
            let row = &report.rows[position];
            for case in row_cases(report, row, &by_row[position], &function.name) {
                time += case.time;
                suite.add_test_case(test_case(case));
            }
            suite.add_properties(row_properties(row));
        }
        suite.set_time(duration(time));
        // The report's own text: the schema takes any string here, and the time of a session
        // read back from a file is all the report has.
        suite
            .extra
            .insert("timestamp".into(), clean(&report.created).into());
        total_time += time;
        xml.add_test_suite(suite);
    }
    if let Some(suite) = binaries_suite(report) {
        xml.add_test_suite(suite);
    }
    xml.set_time(duration(total_time));
    Ok(without_root_skipped(xml.to_string()?))
}

/// The XML without the `skipped` count quick-junit puts on `testsuites`, which the JUnit-10
/// schema CI systems validate against does not allow there (each `testsuite` keeps its own).
/// The root's start tag is the writer's second line, and its attributes are numbers and the
/// name `probtest`, so the count is found by its text alone.
fn without_root_skipped(xml: String) -> String {
    let Some(start) = xml.find("<testsuites ") else {
        return xml;
    };
    let end = xml[start..].find('>').map_or(xml.len(), |at| start + at);
    let Some(at) = xml[start..end].find(" skipped=\"") else {
        return xml;
    };
    let from = start + at;
    let value = from + " skipped=\"".len();
    let Some(close) = xml[value..end].find('"') else {
        return xml;
    };
    let mut cleaned = String::with_capacity(xml.len());
    cleaned.push_str(&xml[..from]);
    cleaned.push_str(&xml[value + close + 1..]);
    cleaned
}

/// The case's `testcase`, and its gate's when it has one.
fn row_cases(report: &Report, row: &Row, records: &[&Record], classname: &str) -> Vec<Case> {
    let time: f64 = records.iter().map(|record| record.elapsed).sum();
    let status = Report::row_status_text(row);
    let mut headline = format!("{} passed", fraction(row));
    if let Some(interval) = interval_text(report, row) {
        let _ = write!(headline, " {interval}");
    }
    let fails = row.fails_session(&report.stats_config);
    let mut out = None;
    let verdict = if fails {
        let mut text = format!("{status}: {headline}\n");
        failing_runs(row, records, &mut text);
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
        if !status.is_empty() {
            // A FLAKY case whose gate passed: the test tab shows a pass, and this says why.
            let mut text = format!("{status}: {headline}");
            if let Some(gate) = row.gate {
                let _ = write!(
                    text,
                    "; gate {} ({}), so the case passes",
                    verdict_word(gate.verdict),
                    bar_text(gate.rule)
                );
            }
            text.push('\n');
            failing_runs(row, records, &mut text);
            out = Some(text);
        }
        CaseResult::Passed
    };
    let mut cases = vec![Case {
        name: row.info.case.clone(),
        classname: classname.to_string(),
        time,
        verdict,
        out,
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
            out: None,
        });
    }
    if let Some(case) = latency_case(report, row, classname) {
        cases.push(case);
    }
    if row.not_run > 0 {
        // A failure, not a skip: CI shows a skip as benign, and these runs fail the session.
        let message = format!(
            "NOT RUN: {} of {} runs never started",
            row.not_run,
            row.not_run + row.total
        );
        let case = Case {
            name: if row.never_started() {
                row.info.case.clone()
            } else {
                format!("{} not run", row.info.case)
            },
            classname: classname.to_string(),
            time: 0.0,
            verdict: CaseResult::Failed {
                kind: "failure",
                text: format!("{message}\n"),
                message,
            },
            out: None,
        };
        // A row none of whose runs started has no result of its own to report.
        if row.never_started() {
            cases[0] = case;
        } else {
            cases.push(case);
        }
    }
    cases
}

/// The `testsuite` of the test binaries that never ran, a failing `testcase` each.
fn binaries_suite(report: &Report) -> Option<TestSuite> {
    if report.binaries_not_run.is_empty() {
        return None;
    }
    let mut suite = TestSuite::new("not run");
    suite.set_time(duration(0.0));
    for binary in &report.binaries_not_run {
        let message = format!(
            "NOT RUN: the binary never ran: {} runs not run",
            binary.runs
        );
        suite.add_test_case(test_case(Case {
            name: binary.label.clone(),
            classname: "not run".to_string(),
            time: 0.0,
            verdict: CaseResult::Failed {
                kind: "failure",
                text: format!("{message}\n"),
                message,
            },
            out: None,
        }));
    }
    suite
        .extra
        .insert("timestamp".into(), clean(&report.created).into());
    Some(suite)
}

/// A case's failing runs grouped by what they said, each group's message whole and indented
/// under its heading, and the doctor command for a flaky case.
fn failing_runs(row: &Row, records: &[&Record], text: &mut String) {
    let groups = failure_groups(records);
    for group in groups.iter().take(QUOTED_GROUPS) {
        match group.message {
            Some(message) => {
                let _ = writeln!(text, "{}:", group.heading());
                for line in message.lines() {
                    let _ = writeln!(text, "  {line}");
                }
            }
            None => {
                let _ = writeln!(text, "{}", group.heading());
            }
        }
    }
    let more: usize = groups
        .iter()
        .skip(QUOTED_GROUPS)
        .map(|group| group.runs.len())
        .sum();
    if more > 0 {
        let noun = if more == 1 { "run" } else { "runs" };
        let _ = writeln!(text, "... and {more} more {noun}");
    }
    if let Some(command) = doctor_command(row) {
        let _ = writeln!(text, "why: {command}");
    }
}

/// A latency gate's `testcase` (`max_latency`), judged as a rate gate's is: `refund latency
/// ≤2s`, failed with the quantile and its interval.
fn latency_case(report: &Report, row: &Row, classname: &str) -> Option<Case> {
    let seconds = latency_seconds;
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
        || (verdict == Verdict::Undecided && report.stats_config.undecided == Undecided::Fail);
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
        out: None,
    })
}

/// The case's cost and tokens, from its row.
fn row_properties(row: &Row) -> Vec<Property> {
    let mut properties = Vec::new();
    let mut property = |name: String, value: String| {
        properties.push(Property::new(clean(&name), clean(&value)));
    };
    let case = &row.info.case;
    if row.cost > 0.0 {
        property(format!("{case} cost"), decimal(row.cost));
    }
    for (model, usage) in &row.usage.0 {
        let model = model_name(model);
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
            property(format!("{case} tokens {model} cost"), decimal(usage.cost));
        }
    }
    properties
}

/// Significant digits a property's amount keeps: a sum of runs' costs carries the float noise
/// of its additions in the digits after these (`0.00009125000000000002`).
const SIGNIFICANT: usize = 12;

/// An amount as a property's value: rounded to [`SIGNIFICANT`] digits and written in the
/// fewest digits that read back as that (`0.00009125`, `2`).
fn decimal(amount: f64) -> String {
    let rounded: f64 = format!("{amount:.*e}", SIGNIFICANT - 1)
        .parse()
        .unwrap_or(amount);
    format!("{rounded}")
}

fn test_case(case: Case) -> TestCase {
    let status = match case.verdict {
        CaseResult::Passed => TestCaseStatus::success(),
        CaseResult::Failed {
            kind,
            message,
            text,
        } => {
            let mut status = TestCaseStatus::non_success(if kind == "error" {
                NonSuccessKind::Error
            } else {
                NonSuccessKind::Failure
            });
            status
                .set_type(clean(message.split(':').next().unwrap_or(kind)))
                .set_message(clean(&message))
                .set_description(clean(&text));
            status
        }
        CaseResult::Skipped { message } => {
            let mut status = TestCaseStatus::skipped();
            status.set_message(clean(&message));
            status
        }
    };
    let mut test_case = TestCase::new(clean(&case.name), status);
    test_case
        .set_classname(clean(&case.classname))
        .set_time(duration(case.time));
    if let Some(out) = &case.out {
        test_case.set_system_out(clean(out));
    }
    test_case
}

/// Seconds as the schema's time takes them (the writer prints three decimals): a negative or
/// non-finite time is none.
fn duration(time: f64) -> Duration {
    Duration::try_from_secs_f64(time).unwrap_or_default()
}

/// Text for XML: characters XML 1.0 cannot hold (most control characters) replaced, so that a
/// panic message with an escape sequence still gives a file every consumer reads, and says
/// where a character was. (The writer would drop them, and an escape sequence's tail with them.)
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}
