//! End-to-end: run classes, row statuses, failure messages and locations, the exit status of a
//! failing suite, and the JSON report, from one `cargo test` of the `outcomes` fixture.

use std::sync::OnceLock;

use crate::support::{self, counts, location, report_records, report_row, Fixture, Output};
use serde_json::Value;

const SOURCE: &str = include_str!("../../fixtures/outcomes.rs");
const FILE: &str = "tests/outcomes.rs";
const REPORT: &str = "reports/nested/outcomes.json";

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("outcomes")
            .test("outcomes", SOURCE)
            .build()
    })
}

/// One run serves every test here. Cargo runs from the fixture's `tests/` directory so that a
/// report path resolved against cargo's working directory would land in the wrong place; the
/// fixture is its own workspace, so its package root is the workspace root too.
fn output() -> &'static Output {
    static OUTPUT: OnceLock<Output> = OnceLock::new();
    OUTPUT.get_or_init(|| {
        let fixture = fixture();
        fixture.remove("reports");
        fixture.remove("tests/reports");
        fixture
            .cargo_test(&["--test", "outcomes"])
            .env("PROB_JSON", REPORT)
            .current_dir(fixture.path("tests"))
            .run()
    })
}

fn report() -> &'static Value {
    static REPORT_JSON: OnceLock<Value> = OnceLock::new();
    REPORT_JSON.get_or_init(|| {
        let output = output();
        assert!(
            fixture().path(REPORT).is_file(),
            "no report at {REPORT}{output}"
        );
        fixture().read_json(REPORT)
    })
}

fn loc(marker: &str, token: &str) -> String {
    location(FILE, SOURCE, marker, token)
}

/// `(run, outcome, message, location)` of every record of `case`, by run number.
fn records(case: &str) -> Vec<(u64, String, Option<String>, Option<String>)> {
    report_records(report(), case)
        .into_iter()
        .map(|record| {
            (
                record["run"].as_u64().expect("run"),
                record["outcome"].as_str().expect("outcome").to_string(),
                // A failure's text is its `message`, an error's its `error`; never both.
                match (record["message"].as_str(), record["error"].as_str()) {
                    (Some(text), None) | (None, Some(text)) => Some(text.to_string()),
                    (None, None) => None,
                    (Some(_), Some(_)) => panic!("a record with both texts: {record}"),
                },
                record["location"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn some(text: &str) -> Option<String> {
    Some(text.to_string())
}

#[test]
fn every_row_shows_its_exact_fraction_and_status_words() {
    let section = output().section();
    let expected: &[&[&str]] = &[
        &["flaky", "7/10", "FLAKY"],
        &["errored", "3/5", "2 ERRORED"],
        &["fail", "0/3", "FAIL"],
        &["error", "0/2", "ERROR"],
        &["fail_errored", "0/4", "FAIL (1 errored)"],
        &["flaky_errored", "3/6", "FLAKY (1 errored)"],
        &["helper", "0/2", "FAIL"],
        &["helper_custom", "0/1", "ERROR"],
        &["triage::refund please-Terse", "2/2"],
        &["triage::refund please-chatty", "2/2"],
        &["triage::where is my order-Terse", "0/2", "FAIL"],
        &["triage::where is my order-chatty", "0/2", "FAIL"],
        &["steady", "1/1"],
    ];
    let expected: Vec<Vec<String>> = expected
        .iter()
        .map(|row| row.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(section.rows, expected, "{}", output());
}

#[test]
fn overall_line_counts_errors_and_no_cost_lines_appear_without_cost() {
    let section = output().section();
    assert_eq!(section.overall, "Overall: 18/42 passed (43%), 7 errored");
    assert_eq!(section.cost, None, "{}", section.text);
    assert!(section.tokens.is_empty(), "{}", section.text);
    assert_eq!(section.report.as_deref(), Some(REPORT));
}

#[test]
fn one_failing_run_fails_cargo_test_and_its_test_item() {
    let output = output();
    output.assert_code(101);
    assert!(
        output
            .stdout
            .contains("test result: FAILED. 19 passed; 24 failed;"),
        "{output}"
    );
    for failed in [
        "bench_flaky::run08",
        "bench_flaky::run10",
        "bench_errored::run4",
        "bench_error::run1",
        "bench_helper_custom",
        "bench_triage::where_is_my_order_terse::run2",
    ] {
        assert!(
            output.stdout.contains(&format!("test {failed} ... FAILED")),
            "{failed} should fail{output}"
        );
    }
    for passed in [
        "bench_flaky::run07",
        "bench_errored::run3",
        "bench_triage::refund_please_chatty::run1",
        "bench_steady",
        "plain_test",
    ] {
        assert!(
            output.stdout.contains(&format!("test {passed} ... ok")),
            "{passed} should pass{output}"
        );
    }
}

#[test]
fn report_rows_hold_the_raw_counts_and_status() {
    let report = report();
    let expected: &[(&str, [u64; 4], &str)] = &[
        ("flaky", [7, 3, 0, 10], "flaky"),
        ("errored", [3, 0, 2, 5], "errored"),
        ("fail", [0, 3, 0, 3], "fail"),
        ("error", [0, 0, 2, 2], "error"),
        ("fail_errored", [0, 3, 1, 4], "fail"),
        ("flaky_errored", [3, 2, 1, 6], "flaky"),
        ("helper", [0, 2, 0, 2], "fail"),
        ("helper_custom", [0, 0, 1, 1], "error"),
        ("triage::refund please-Terse", [2, 0, 0, 2], "pass"),
        ("triage::where is my order-chatty", [0, 2, 0, 2], "fail"),
        ("steady", [1, 0, 0, 1], "pass"),
    ];
    for (case, expected_counts, status) in expected {
        let row = report_row(report, case);
        assert_eq!(counts(row), *expected_counts, "counts of {case}");
        assert_eq!(row["status"], *status, "status of {case}");
        let [passes, _, _, total] = expected_counts;
        support::assert_amount(&row["pass_rate"], 100.0 * *passes as f64 / *total as f64);
    }
}

#[test]
fn assertion_failures_are_fails_with_their_whole_message_and_location() {
    let flaky = loc("flaky", "assert_eq!");
    assert_eq!(
        records("flaky")[7..],
        [
            (
                8,
                "fail".into(),
                some("assertion `left == right` failed: run 8 answered wrong\n  left: false\n right: true"),
                some(&flaky)
            ),
            (
                9,
                "fail".into(),
                some("assertion `left == right` failed: run 9 answered wrong\n  left: false\n right: true"),
                some(&flaky)
            ),
            (
                10,
                "fail".into(),
                some("assertion `left == right` failed: run 10 answered wrong\n  left: false\n right: true"),
                some(&flaky)
            ),
        ]
    );
    let fail = loc("fail", "assert!");
    assert_eq!(
        records("fail"),
        [
            (1, "fail".into(), some("score 0.25 too low"), some(&fail)),
            (2, "fail".into(), some("score 0.5 too low"), some(&fail)),
            (3, "fail".into(), some("score 0.75 too low"), some(&fail)),
        ]
    );
    let ne = loc("fail_errored", "assert_ne!");
    let message = some(
        "assertion `left != right` failed: labels must differ\n  left: \"refund\"\n right: \"refund\"",
    );
    assert_eq!(
        records("fail_errored")[..3],
        [
            (1, "fail".into(), message.clone(), some(&ne)),
            (2, "fail".into(), message.clone(), some(&ne)),
            (3, "fail".into(), message, some(&ne)),
        ]
    );
    let debug = loc("flaky_errored", "debug_assert!");
    assert_eq!(
        records("flaky_errored")[3..5],
        [
            (
                4,
                "fail".into(),
                some("assertion failed: run <= 3"),
                some(&debug)
            ),
            (
                5,
                "fail".into(),
                some("assertion failed: run <= 3"),
                some(&debug)
            ),
        ]
    );
    // Every line: the left/right lines hold the wrong answer.
    let triage = location(FILE, SOURCE, "triage", "assert_eq!");
    for (_, outcome, message, location) in records("triage::where is my order-Terse") {
        assert_eq!(outcome, "fail");
        assert_eq!(
            message,
            some("assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\"")
        );
        assert_eq!(location, some(&triage));
    }
}

#[test]
fn panics_and_err_returns_are_errors() {
    let unwrap = loc("errored", "unwrap");
    let message = some("called `Option::unwrap()` on a `None` value");
    assert_eq!(
        records("errored")[3..],
        [
            (4, "error".into(), message.clone(), some(&unwrap)),
            (5, "error".into(), message, some(&unwrap)),
        ]
    );
    assert_eq!(
        records("fail_errored")[3],
        (
            4,
            "error".into(),
            some("model crashed on run 4"),
            some(&loc("fail_errored_panic", "panic!"))
        )
    );
    // An `Err` return has no panic location.
    assert_eq!(
        records("error"),
        [
            (
                1,
                "error".into(),
                some("the bench returned an error: \"backend unavailable on run 1\""),
                None
            ),
            (
                2,
                "error".into(),
                some("the bench returned an error: \"backend unavailable on run 2\""),
                None
            ),
        ]
    );
    assert_eq!(
        records("flaky_errored")[5],
        (
            6,
            "error".into(),
            some("the bench returned an error: Custom { kind: Other, error: \"socket closed\" }"),
            None
        )
    );
}

#[test]
fn helper_assertions_with_std_messages_are_fails_and_custom_ones_errors() {
    assert_eq!(
        records("helper"),
        [
            (
                1,
                "fail".into(),
                some("assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\""),
                some(&loc("helper_eq", "assert_eq!"))
            ),
            (
                2,
                "fail".into(),
                some("assertion failed: score > 1"),
                some(&loc("helper_assert", "assert!"))
            ),
        ]
    );
    // Documented: outside the body only std's own messages are recognised as assertions.
    assert_eq!(
        records("helper_custom"),
        [(
            1,
            "error".into(),
            some("helper says no"),
            some(&loc("helper_custom", "assert!"))
        )]
    );
}

#[test]
fn passing_runs_have_no_message_or_location() {
    for case in ["flaky", "errored", "triage::refund please-chatty", "steady"] {
        for (run, outcome, message, location) in records(case) {
            if outcome == "pass" {
                assert_eq!((&message, &location), (&None, &None), "{case} run {run}");
            }
        }
    }
    let runs: Vec<u64> = records("flaky").iter().map(|r| r.0).collect();
    assert_eq!(runs, (1..=10).collect::<Vec<_>>(), "one record per run");
    let outcomes: Vec<String> = records("flaky").into_iter().map(|r| r.1).collect();
    assert_eq!(outcomes[..7], vec!["pass".to_string(); 7]);
}

#[test]
fn a_nested_relative_report_path_is_created_under_the_fixtures_root() {
    let output = output();
    let fixture = fixture();
    assert!(fixture.path(REPORT).is_file(), "{output}");
    assert!(
        !fixture.path("tests/reports").exists(),
        "the report path must not resolve against cargo's working directory"
    );
    let leftovers: Vec<_> = std::fs::read_dir(fixture.path("reports/nested"))
        .expect("the report directory")
        .map(|entry| entry.expect("entry").file_name())
        .filter(|name| name != "outcomes.json")
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn report_has_every_documented_field() {
    let report = report();
    assert_eq!(report["schema"], 4);
    let created = report["created"].as_str().expect("created");
    let shape: String = created
        .chars()
        .map(|c| if c.is_ascii_digit() { 'D' } else { c })
        .collect();
    assert!(
        shape.starts_with("DDDD-DD-DDTDD:DD:DD") && shape.ends_with('Z'),
        "created is RFC 3339 in UTC: {created}"
    );
    assert_eq!(report["runs"], 10, "the largest number of runs of any case");
    assert_eq!(report["exit_status"], 1);

    let totals = &report["totals"];
    assert_eq!(counts(totals), [18, 17, 7, 42]);
    support::assert_amount(&totals["pass_rate"], 100.0 * 18.0 / 42.0);
    support::assert_amount(&totals["cost"], 0.0);
    assert_eq!(totals["usage"], serde_json::json!({}));

    let rows = report["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 13);
    for row in rows {
        for field in [
            "case",
            "function",
            "module",
            "file",
            "params",
            "passes",
            "fails",
            "errors",
            "total",
            "pass_rate",
            "status",
            "cost",
            "usage",
        ] {
            assert!(row.get(field).is_some(), "row without `{field}`: {row}");
        }
    }
    let records = report["records"].as_array().expect("records");
    assert_eq!(records.len(), 42);
    for record in records {
        for field in [
            "case", "run", "outcome", "message", "location", "elapsed", "cost", "usage",
        ] {
            assert!(
                record.get(field).is_some(),
                "record without `{field}`: {record}"
            );
        }
        assert!(
            record["elapsed"].as_f64().is_some_and(|s| s >= 0.0),
            "{record}"
        );
    }
}

#[test]
fn report_rows_follow_source_order_and_records_row_then_run_order() {
    let report = report();
    let rows: Vec<&str> = report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["case"].as_str().expect("case"))
        .collect();
    assert_eq!(
        rows,
        output().section().case_ids(),
        "report rows in source order, like the summary"
    );
    let order: Vec<(&str, u64)> = report["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r["case"].as_str().expect("case"),
                r["run"].as_u64().expect("run"),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for row in report["rows"].as_array().expect("rows") {
        for run in 1..=row["total"].as_u64().expect("total") {
            expected.push((row["case"].as_str().expect("case"), run));
        }
    }
    assert_eq!(order, expected, "records in row order, then run order");
}

#[test]
fn rows_keep_the_original_case_ids_while_test_items_are_identifiers() {
    let row = report_row(report(), "triage::refund please-Terse");
    assert_eq!(row["function"], "bench_triage");
    assert_eq!(row["module"], "outcomes");
    assert_eq!(row["file"], FILE);
    assert_eq!(
        row["params"],
        serde_json::json!({"text": "\"refund please\"", "style": "Style::Terse"})
    );
    let row = report_row(report(), "triage::where is my order-chatty");
    assert_eq!(
        row["params"],
        serde_json::json!({"text": "\"where is my order\"", "style": "Style::Verbose"})
    );
    let row = report_row(report(), "flaky");
    assert_eq!(row["function"], "bench_flaky");
    assert_eq!(row["params"], serde_json::json!({}));
    let output = output();
    for item in [
        "bench_triage::refund_please_terse::run1",
        "bench_triage::refund_please_chatty::run2",
        "bench_triage::where_is_my_order_chatty::run1",
    ] {
        assert!(
            output.stdout.contains(&format!("test {item} ... ")),
            "no test item {item}{output}"
        );
    }
}
