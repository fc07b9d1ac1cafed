//! The CLI's report files against one report with every kind of row (the runtime's HTML tests
//! build the same): snapshots of the Markdown and the JUnit XML, and the rules they share with
//! the terminal summary.

use probtest::__cli::{doctor_command, records_by_row};
use probtest::stats::{GateSpec, Rule, StatsConfig};
use probtest::{summary, CaseInfo, OrderedMap, Outcome, Record, RenderOptions as Options};
use probtest::{Report, Status, TokenUsage};

use crate::export::markdown::markdown;

/// The report as JUnit XML.
fn junit(report: &Report) -> String {
    crate::export::junit::junit(report).expect("the XML is written")
}

fn info(case: &str) -> CaseInfo {
    let (short, case_id) = case.split_once("::").unwrap_or((case, case));
    CaseInfo {
        case: case.to_string(),
        package: "fixture".into(),
        module: "evals".into(),
        function: format!("bench_{short}"),
        case_id: case_id.to_string(),
        file: "tests/evals.rs".to_string(),
        line: if short == "classify" { 10 } else { 20 },
        index: u32::from(case_id.as_bytes().first().copied().unwrap_or(0)),
        runs: 10,
        params: OrderedMap(vec![("text".to_string(), format!("{case_id:?}"))]),
        gate: None,
        compare: None,
        latency: None,
        parts: Vec::new(),
    }
}

fn record(case: &str, run: u32, outcome: Outcome, cost: f64, usage: Vec<TokenUsage>) -> Record {
    Record {
        case: case.to_string().into(),
        package: "fixture".into(),
        module: "evals".into(),
        run,
        attempt: 1,
        outcome,
        message: (outcome != Outcome::Pass).then(|| format!("{outcome:?} in run {run}")),
        location: None,
        elapsed: 0.001,
        cost,
        usage,
        waited: 0.0,
        waited_for: None,
        replayed: None,
    }
}

fn runs(case: &str, outcomes: &[(Outcome, usize)], cost: f64) -> Vec<Record> {
    let mut records = Vec::new();
    for &(outcome, count) in outcomes {
        for _ in 0..count {
            let run = records.len() as u32 + 1;
            let usage = (cost > 0.0).then(|| TokenUsage {
                model: "m-small".into(),
                input_tokens: 1_200,
                output_tokens: 40,
                cached_input_tokens: 0,
                cost,
            });
            let mut record = record(case, run, outcome, cost, usage.into_iter().collect());
            if outcome != Outcome::Pass {
                record.location = Some(format!("tests/evals.rs:{}:9", 40 + run));
            }
            records.push(record);
        }
    }
    records
}

/// The message of an `assert_eq!` that got a wrong answer.
pub(crate) const WRONG_ANSWER: &str =
    "assertion `left == right` failed: the label\n  left: \"shipping\"\n right: \"refund\"";

/// Every status, a gate of each verdict, cost and tokens, ids that need escaping, and a case
/// whose runs all failed the same way.
fn fixture() -> Report {
    use Outcome::{Error, Fail, Pass};
    let mut records = runs("triage::refund please-Terse", &[(Pass, 10)], 0.0002);
    records.extend(runs(
        "triage::refund please-chatty",
        &[(Pass, 7), (Fail, 3)],
        0.0002,
    ));
    records.extend(runs(
        "triage::where is it-Terse",
        &[(Pass, 7), (Error, 3)],
        0.0002,
    ));
    records.extend(runs("triage::a|b <c>", &[(Fail, 10)], 0.0));
    // Ten runs that gave the same wrong answer: one group, its message whole.
    for record in records.iter_mut().filter(|r| r.case == "triage::a|b <c>") {
        record.message = Some(WRONG_ANSWER.to_string());
        record.location = Some("tests/evals.rs:30:9".to_string());
    }
    records.extend(runs("classify::broken", &[(Error, 4)], 0.0));
    records.extend(runs("classify::gated", &[(Pass, 9), (Fail, 1)], 0.0));
    records.extend(runs("classify::low", &[(Pass, 2), (Fail, 8)], 0.0));
    let gate = |bar| GateSpec {
        rule: Rule::MinRate(bar),
        method: None,
        level: None,
        prior: None,
    };
    let infos: Vec<CaseInfo> = records
        .iter()
        .map(|r| {
            let mut info = info(&r.case);
            match &*r.case {
                "classify::gated" => info.gate = Some(gate(0.5)),
                "classify::low" => info.gate = Some(gate(0.7)),
                _ => {}
            }
            info
        })
        .collect();
    let mut report = Report::build(infos, records, &StatsConfig::default());
    report.created = "2026-01-02T03:04:05Z".to_string();
    report.session = Some("run-1-2".to_string());
    report
}

#[test]
fn markdown_snapshot() {
    insta::assert_snapshot!(markdown(&fixture()));
}

#[test]
fn junit_snapshot() {
    insta::assert_snapshot!(junit(&fixture()));
}

#[test]
fn markdown_reads_in_80_columns() {
    let text = markdown(&fixture());
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{} columns: {line}", line.len());
    }
}

#[test]
fn markdown_lists_what_is_not_clean_first_and_every_case_in_the_collapsed_table() {
    let report = fixture();
    let text = markdown(&report);
    let (first, all) = text.split_once("<details>").expect("a collapsed table");
    assert!(
        !first.contains("refund please-Terse"),
        "a clean pass: {first}"
    );
    for case in ["refund please-chatty", "classify::broken", "classify::low"] {
        assert!(first.contains(case), "{case} needs attention: {first}");
    }
    for row in &report.rows {
        let id = crate::export::markdown::escape(&row.info.case);
        assert!(all.contains(&id), "{id} in the table of all cases");
    }
}

#[test]
fn status_words_are_the_summarys() {
    let report = fixture();
    let terminal = summary(&report, &Options::default());
    let text = markdown(&report);
    for row in &report.rows {
        let status = Report::row_status_text(row);
        if !status.is_empty() {
            assert!(
                terminal.contains(&status) && text.contains(&status),
                "{status}"
            );
        }
    }
}

#[test]
fn the_doctor_command_is_the_one_the_summary_names() {
    let report = fixture();
    let terminal = summary(&report, &Options::default());
    let flaky = report
        .rows
        .iter()
        .find_map(doctor_command)
        .expect("a flaky row");
    assert!(terminal.contains(&flaky), "{flaky} in\n{terminal}");
    let quoted = report
        .rows
        .iter()
        .find(|row| row.info.case == "triage::refund please-chatty")
        .and_then(doctor_command);
    assert_eq!(
        quoted.as_deref(),
        Some("cargo probtest doctor -p fixture 'triage::refund please-chatty'")
    );
    let clean = report.rows.iter().find(|row| row.status == Status::Pass);
    assert_eq!(clean.and_then(doctor_command), None);
}

#[test]
fn records_are_matched_to_rows_whatever_their_order() {
    let mut report = fixture();
    report.records.reverse();
    let grouped = records_by_row(&report);
    for (row, records) in report.rows.iter().zip(&grouped) {
        assert_eq!(records.len() as u64, row.total, "{}", row.info.case);
        assert!(records.iter().all(|r| r.case == row.info.case));
    }
}

#[test]
fn junit_escapes_markup_and_characters_xml_cannot_hold() {
    let mut report = fixture();
    for record in &mut report.records {
        if record.outcome == Outcome::Fail {
            record.message = Some("left: \"a\u{1b}[31m\" & <b>".to_string());
        }
    }
    let xml = junit(&report);
    assert!(!xml.contains('\u{1b}'), "{xml}");
    assert!(
        xml.contains("left: &quot;a\u{FFFD}[31m&quot; &amp; &lt;b&gt;"),
        "{xml}"
    );
    assert!(xml.contains("name=\"triage::a|b &lt;c&gt;\""), "{xml}");
}

#[test]
fn junit_has_a_suite_per_function_a_case_per_row_and_a_case_per_gate() {
    let report = fixture();
    let xml = junit(&report);
    assert_eq!(xml.matches("<testsuite ").count(), 2, "{xml}");
    let gates = report.rows.iter().filter(|r| r.gate.is_some()).count();
    assert_eq!(
        xml.matches("<testcase ").count(),
        report.rows.len() + gates,
        "{xml}"
    );
    // The gate that passed with a failing run is no failure, and says why; the one that
    // failed is, twice.
    assert!(xml.contains("<testcase name=\"classify::gated\" classname=\"evals::bench_classify\" time=\"0.010\">\n            <system-out>FLAKY: 9/10 passed [55%, 99%]; gate PASS (min_rate 0.5), so the case passes\nrun 10 failed at tests/evals.rs:50:9:\n  Fail in run 10\nwhy: cargo probtest doctor -p fixture classify::gated\n</system-out>"), "{xml}");
    assert!(xml.contains("message=\"gate FAIL: 2/10 passed"), "{xml}");
    assert!(
        xml.contains("<failure message=\"FLAKY: 2/10 passed [3%, 56%]\""),
        "{xml}"
    );
}

#[test]
fn replayed_cost_is_said_apart_in_the_summary_the_markdown_and_the_html() {
    let mut records = runs("triage::refund", &[(Outcome::Pass, 3)], 0.002);
    records[1].replayed = Some(0.002);
    let infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
    let report = Report::build(infos, records, &StatsConfig::default());
    let line = "Replayed: $0.0020 of it from the cassette (1 run), not spent";
    assert!(
        summary(&report, &Options::default()).contains(&format!("  {line}")),
        "the summary"
    );
    assert!(
        markdown(&report).contains(&format!("{line}  ")),
        "the Markdown"
    );
    let page = probtest::export::html(&report, &probtest::export::History::default());
    assert!(page.contains(&format!("<p>{line}</p>")), "the HTML");
}

#[test]
fn junit_has_a_case_per_latency_gate() {
    use probtest::stats::latency::LatencySpec;
    let gated = |case: &str| CaseInfo {
        runs: 20,
        latency: Some(LatencySpec {
            quantile: Some(0.5),
            max_latency: Some(2.0),
            level: None,
        }),
        ..info(case)
    };
    let timed = |case: &str, run: u32, elapsed: f64| Record {
        elapsed,
        ..record(case, run, Outcome::Pass, 0.0, Vec::new())
    };
    let records = (1..=20)
        .map(|run| timed("slow", run, 2.0 + f64::from(run) / 10.0))
        .chain((1..=20).map(|run| timed("fast", run, f64::from(run) / 100.0)))
        .collect();
    let report = Report::build(
        [gated("slow"), gated("fast")],
        records,
        &StatsConfig::default(),
    );
    let xml = junit(&report);
    let case = |name: &str| {
        xml.split("<testcase ")
            .find(|case| case.contains(&format!("name=\"{name}\"")))
            .unwrap_or_else(|| panic!("no testcase {name}: {xml}"))
            .to_string()
    };
    let slow = case("slow latency ≤2s");
    assert!(
        slow.contains(
            "message=\"latency gate FAIL: p50 3.00s [2.60s, 3.50s] over 20 runs, limit 2s\""
        ),
        "{slow}"
    );
    assert!(!case("fast latency ≤2s").contains("<failure"), "{xml}");
}

#[test]
fn markdown_and_junit_keep_a_failure_whole_and_group_identical_ones() {
    let report = fixture();
    let text = markdown(&report);
    let (first, _) = text.split_once("<details>").expect("a collapsed table");
    let group = "- 10 runs (1-10) failed at tests/evals.rs:30:9\n  ```text\n  \
                 assertion `left == right` failed: the label\n    left: \"shipping\"\n   \
                 right: \"refund\"\n  ```\n";
    assert_eq!(first.matches(group).count(), 1, "{text}");
    assert_eq!(text.matches("left: \"shipping\"").count(), 1, "{text}");
    let xml = junit(&report);
    assert!(
        xml.contains(
            "10 runs (1-10) failed at tests/evals.rs:30:9:\n  \
             assertion `left == right` failed: the label\n    left: &quot;shipping&quot;\n   \
             right: &quot;refund&quot;\n"
        ),
        "{xml}"
    );
}

#[test]
fn markdown_shows_control_characters_escaped_and_entities_as_typed() {
    let case = "triage::a&amp;b\u{1b}[31m\u{202e}";
    let mut records = runs(case, &[(Outcome::Fail, 2)], 0.0);
    for record in &mut records {
        record.message = Some("wrong\n  left: \"\u{1b}]8;;x\u{7}\u{2067}\"\n\tright: ```".into());
        record.location = None;
    }
    records[0].usage = vec![TokenUsage {
        model: "m\u{9b}2J".into(),
        input_tokens: 1,
        output_tokens: 1,
        cached_input_tokens: 0,
        cost: 0.5,
    }];
    let infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
    let mut report = Report::build(infos, records, &StatsConfig::default());
    report.warnings.push(format!("{case} warns"));
    let text = markdown(&report);
    for raw in ['\u{1b}', '\u{202e}', '\u{2067}', '\u{9b}', '\u{7}'] {
        assert!(!text.contains(raw), "{raw:?} in\n{text}");
    }
    // In a table and a warning: Markdown-escaped, so that `&amp;` reads as typed.
    let cell = "triage::a\\&amp;b\\\\u{1b}\\[31m\\\\u{202e}";
    assert!(text.contains(&format!("\n{cell} ")), "{text}");
    assert!(text.contains(&format!("- {cell} warns")), "{text}");
    assert!(text.contains("\nm\\\\u{9b}2J "), "{text}");
    // In code, as it is: a code span shows `&amp;` literally.
    assert!(
        text.contains("`triage::a&amp;b\\u{1b}[31m\\u{202e}`:\n"),
        "{text}"
    );
    // The message keeps its lines and tab, fenced past its own backticks.
    assert!(
        text.contains(
            "- 2 runs (1, 2) failed\n  ````text\n  wrong\n    left: \"\\u{1b}]8;;x\\u{7}\\u{2067}\"\n  \tright: ```\n  ````\n"
        ),
        "{text}"
    );
}

/// A session whose runs did not all start: `classify::a` ran 3 of 6 runs (one failing), and
/// `classify::z`, of a binary that never ran, none of its 4.
fn not_run_report() -> Report {
    let mut records = runs(
        "classify::a",
        &[(Outcome::Pass, 2), (Outcome::Fail, 1)],
        0.0,
    );
    records.extend(runs("classify::z", &[(Outcome::Pass, 1)], 0.0));
    let mut report = Report::build(
        [info("classify::a"), info("classify::z")],
        records,
        &StatsConfig::default(),
    );
    report.rows[0].not_run = 3;
    // As the model leaves a case none of whose runs started.
    let never = &mut report.rows[1];
    (never.passes, never.total, never.pass_rate, never.ci) = (0, 0, 0.0, None);
    never.status = Status::Error;
    never.not_run = 4;
    report.records.retain(|record| record.case == "classify::a");
    report.totals.not_run = 7;
    report.binaries_not_run = vec![probtest::BinaryNotRun {
        binary: "fixture::second".into(),
        label: "tests/second.rs (second-1a2b)".into(),
        runs: 4,
    }];
    report.exit_status = 1;
    report
}

#[test]
fn runs_not_run_are_said_in_the_markdown_and_fail_their_junit_cases() {
    let report = not_run_report();
    let text = markdown(&report);
    assert!(
        text.contains(
            "Not run: 7 runs in 2 cases; binary tests/second.rs (second-1a2b) never ran (4 runs)"
        ),
        "{text}"
    );
    assert!(text.contains("| FLAKY, 3 not run\n"), "{text}");
    assert!(text.contains("| 4 not run\n"), "{text}");
    assert!(text.contains(", 7 not run**"), "{text}");
    let xml = junit(&report);
    assert!(
        xml.contains(r#"<testcase name="classify::a not run""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"message="NOT RUN: 3 of 6 runs never started""#),
        "{xml}"
    );
    // The case that never started has its not-run failure alone, never a pass.
    assert_eq!(
        xml.matches(r#"<testcase name="classify::z""#).count(),
        1,
        "{xml}"
    );
    assert!(
        xml.contains(r#"message="NOT RUN: 4 of 4 runs never started""#),
        "{xml}"
    );
    assert!(xml.contains(r#"<testsuite name="not run""#), "{xml}");
    assert!(
        xml.contains(r#"<testcase name="tests/second.rs (second-1a2b)""#),
        "{xml}"
    );
}

#[test]
fn junit_properties_are_round_decimals() {
    // Three runs of 0.1 sum to 0.30000000000000004, and their tokens' costs alike.
    let records = runs("triage::refund", &[(Outcome::Pass, 3)], 0.1);
    let infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
    let report = Report::build(infos, records, &StatsConfig::default());
    assert_eq!(report.rows[0].cost, 0.30000000000000004);
    let xml = junit(&report);
    assert!(
        xml.contains("<property name=\"triage::refund cost\" value=\"0.3\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<property name=\"triage::refund tokens m-small cost\" value=\"0.3\"/>"),
        "{xml}"
    );
}

#[test]
fn a_wide_table_and_a_long_warning_keep_to_80_columns() {
    let mut report = fixture();
    let long = "triage::a refund request described at length";
    for record in report.records.iter_mut() {
        if &*record.case == "triage::refund please-Terse" {
            record.case = long.to_string().into();
        }
    }
    let infos: Vec<CaseInfo> = report
        .rows
        .iter()
        .map(|row| {
            let mut info = row.info.clone();
            if info.case == "triage::refund please-Terse" {
                info.case = long.to_string();
            }
            info
        })
        .collect();
    let mut report = Report::build(infos, report.records, &StatsConfig::default());
    report.warnings.push(format!(
        "{long}: min_rate=0.95 at 95% needs >=59 runs; this case has 10 - 1. of them \
         a thing that is long enough to wrap more than once across the lines of the file"
    ));
    let text = markdown(&report);
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}\n{text}",
            line.chars().count()
        );
    }
    // The row of the long id still holds every cell, and the others line up.
    assert!(
        text.contains(&format!("{long} |  10/10 | [69%, 100%] | $0.0020 |")),
        "{text}"
    );
    assert!(
        text.contains("- triage::a refund request described at length: min_rate=0.95 at 95% needs"),
        "{text}"
    );
    // A wrapped line never starts a list or a heading's underline.
    for line in text.lines().filter(|line| line.starts_with("  ")) {
        let word = line.trim_start().split(' ').next().unwrap_or_default();
        assert!(!matches!(word, "-" | "1." | "=" | "+"), "{line}");
    }
}
