//! End-to-end: `cases(...)` takes a function's cases from a data file. Each row and run is a
//! test item that libtest and nextest list and filter; a row that does not fit its types is
//! that case's error naming the row and the field; the report holds each row's text; and
//! editing the file rebuilds the tests.

use std::sync::OnceLock;

use crate::support::{counts, report_row, Fixture, Output};

const SERDE: &str = r#"serde = { version = "1", features = ["derive"] }"#;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("dataset")
            .dev_dep(SERDE)
            .file(
                "data/tickets.jsonl",
                include_str!("../../fixtures/dataset/tickets.jsonl"),
            )
            .file(
                "data/tickets.csv",
                include_str!("../../fixtures/dataset/tickets.csv"),
            )
            .test("dataset", include_str!("../../fixtures/dataset.rs"))
            .build()
    })
}

/// `cargo test` of the fixture, with its report.
fn run() -> &'static (Output, serde_json::Value) {
    static RUN: OnceLock<(Output, serde_json::Value)> = OnceLock::new();
    RUN.get_or_init(|| {
        let fixture = fixture();
        fixture.remove("report.json");
        let output = fixture
            .cargo_test(&["--test", "dataset"])
            .env("PROB_JSON", "report.json")
            .run();
        (output, fixture.read_json("report.json"))
    })
}

#[test]
fn every_row_and_run_is_a_listed_test_item() {
    let output = fixture()
        .cargo_test(&["--test", "dataset", "--", "--list"])
        .run();
    output.assert_code(0);
    let mut items: Vec<&str> = output
        .stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .collect();
    items.sort_unstable();
    assert_eq!(
        items,
        [
            "bench_fields::late_false",
            "bench_fields::late_true",
            "bench_fields::money_false",
            "bench_fields::money_true",
            "bench_fields::urgent_false",
            "bench_fields::urgent_true",
            "bench_whole::double_charge::run1",
            "bench_whole::double_charge::run2",
            "bench_whole::parcel::run1",
            "bench_whole::parcel::run2",
            "bench_whole::typo::run1",
            "bench_whole::typo::run2",
        ],
        "{output}"
    );
}

#[test]
fn rows_that_fit_run_and_a_row_that_does_not_is_its_cases_error() {
    let (output, _) = run();
    output.assert_code(101);
    let section = output.section();
    assert_eq!(section.row("whole::double-charge"), ["2/2"], "{output}");
    assert_eq!(section.row("whole::parcel"), ["2/2"], "{output}");
    assert_eq!(section.row("whole::typo"), ["0/2", "ERROR"], "{output}");
    assert_eq!(section.row("fields::late-true"), ["1/1"], "{output}");
    assert_eq!(
        section.row("fields::urgent-false"),
        ["0/1", "ERROR"],
        "{output}"
    );
    // The item's failure says which row, line and field, and why.
    assert!(
        output.stdout.contains(
            "row 3 of `data/tickets.jsonl` (line 3) does not fit the arguments: field `expected`: unknown variant `Refnd`"
        ),
        "{output}"
    );
    assert!(
        output.stdout.contains(
            "row 3 of `data/tickets.csv` (line 5) does not fit the arguments: field `priority`: invalid value: string \"high\", expected u8"
        ),
        "{output}"
    );
}

#[test]
fn the_report_holds_each_rows_text_and_error() {
    let (_, report) = run();
    let row = report_row(report, "whole::parcel");
    assert_eq!(
        row["params"],
        serde_json::json!({
            "ticket": r#"{"name": "parcel", "text": "Where is my parcel?", "expected": "Shipping"}"#
        })
    );
    assert_eq!(counts(row), [2, 0, 0, 2]);
    // A CSV row's fields are its cells, as JSON strings; a multi-line cell keeps its newline.
    let row = report_row(report, "fields::late-false");
    assert_eq!(
        row["params"],
        serde_json::json!({
            "text": "\"My order is late,\\nand the box was open\"",
            "expected": "\"Shipping\"",
            "priority": "\"2\"",
            "loud": "false",
        })
    );
    let row = report_row(report, "whole::typo");
    assert_eq!(counts(row), [0, 0, 2, 2]);
    let records: Vec<&serde_json::Value> = report["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|record| record["case"] == "whole::typo")
        .collect();
    assert_eq!(records.len(), 2);
    for record in records {
        let message = record["error"]
            .as_str()
            .or(record["message"].as_str())
            .expect("an error's message");
        assert!(
            message.contains("row 3 of `data/tickets.jsonl` (line 3)")
                && message.contains("field `expected`"),
            "{record}"
        );
    }
}

#[test]
fn nextest_runs_each_row_in_its_own_process() {
    let output = fixture()
        .nextest("run", &["--no-fail-fast", "--test", "dataset"])
        .env("PROB_JSON", "nextest.json")
        .run();
    output.assert_code(100);
    assert!(
        output.stderr.contains("12 tests run: 8 passed, 4 failed"),
        "{output}"
    );
    assert!(
        output
            .stderr
            .contains("does not fit the arguments: field `expected`"),
        "{output}"
    );
    let report = fixture().read_json("nextest.json");
    assert_eq!(counts(report_row(&report, "whole::parcel")), [2, 0, 0, 2]);
    assert_eq!(counts(report_row(&report, "whole::typo")), [0, 0, 2, 2]);
    assert_eq!(
        counts(report_row(&report, "fields::money-true")),
        [1, 0, 0, 1]
    );
    assert_eq!(
        counts(report_row(&report, "fields::urgent-true")),
        [0, 0, 1, 1]
    );
}

#[test]
fn editing_the_data_file_rebuilds_the_tests() {
    let source = r#"
use probtest::probability;

#[probability(cases((word) = "data/words.jsonl"))]
fn bench_word(word: &str) {
    assert!(!word.is_empty());
}
"#;
    let rows = |words: &[&str]| -> String {
        words
            .iter()
            .map(|word| format!("{{\"word\": \"{word}\"}}\n"))
            .collect()
    };
    let fixture = Fixture::builder("dataset-edit")
        .file("data/words.jsonl", &rows(&["alpha", "beta"]))
        .test("words", source)
        .build();
    let first = fixture.cargo_test(&["--test", "words"]).run();
    first.assert_code(0);
    assert_eq!(
        first.section().case_ids(),
        ["word::row1", "word::row2"],
        "{first}"
    );
    std::fs::write(
        fixture.path("data/words.jsonl"),
        rows(&["alpha", "beta", "gamma"]),
    )
    .expect("edit the data file");
    let second = fixture.cargo_test(&["--test", "words"]).run();
    second.assert_code(0);
    assert_eq!(
        second.section().case_ids(),
        ["word::row1", "word::row2", "word::row3"],
        "{second}"
    );
    let report = fixture.cargo_test(&["--test", "words", "row3"]).run();
    report.assert_code(0);
    assert_eq!(report.section().case_ids(), ["word::row3"], "{report}");
}
