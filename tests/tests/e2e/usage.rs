//! End-to-end: cost and token accounting (every way of recording, from threads, before a failed
//! assertion, invalid amounts) and an async `#[tokio::test]` bench, from one `cargo test` of the
//! `usage` fixture.

use std::sync::OnceLock;

use crate::support::{
    assert_amount, counts, location, report_records, report_row, Fixture, Output,
};
use serde_json::{json, Value};

const SOURCE: &str = include_str!("../../fixtures/usage.rs");
const REPORT: &str = "usage.json";

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("usage")
            // For a provider-shaped usage struct.
            .dev_dep(r#"serde = { version = "1", features = ["derive"] }"#)
            .test("usage", SOURCE)
            .build()
    })
}

fn output() -> &'static Output {
    static OUTPUT: OnceLock<Output> = OnceLock::new();
    OUTPUT.get_or_init(|| {
        let fixture = fixture();
        fixture.remove(REPORT);
        fixture
            .cargo_test(&["--test", "usage"])
            .env("PROB_JSON", REPORT)
            .run()
    })
}

fn report() -> &'static Value {
    static REPORT_JSON: OnceLock<Value> = OnceLock::new();
    REPORT_JSON.get_or_init(|| {
        let output = output();
        assert!(fixture().path(REPORT).is_file(), "no report{output}");
        fixture().read_json(REPORT)
    })
}

fn usage(input: u64, output: u64, cached: u64, cost: f64) -> Value {
    json!({
        "input_tokens": input,
        "output_tokens": output,
        "cached_input_tokens": cached,
        "cost": cost,
    })
}

/// Compares usage maps with amounts to within float rounding. `serde_json::Value` sorts keys, so
/// the order is checked on the report's text instead.
#[track_caller]
fn assert_usage(actual: &Value, expected: &[(&str, Value)]) {
    let actual = actual.as_object().expect("usage is an object");
    let mut models: Vec<&str> = actual.keys().map(String::as_str).collect();
    let mut expected_models: Vec<&str> = expected.iter().map(|(model, _)| *model).collect();
    models.sort_unstable();
    expected_models.sort_unstable();
    assert_eq!(models, expected_models, "models");
    for (model, expected) in expected {
        let actual = &actual[*model];
        for field in ["input_tokens", "output_tokens", "cached_input_tokens"] {
            assert_eq!(actual[field], expected[field], "{model} {field}");
        }
        assert_amount(&actual["cost"], expected["cost"].as_f64().expect("cost"));
    }
}

#[test]
fn rows_show_each_cases_cost_and_status() {
    let section = output().section();
    let expected: &[&[&str]] = &[
        &["tokens", "2/2", "$0.0010"],
        &["keywords", "2/2", "$0.0020"],
        // A case that spent nothing shows no cost, as pytest-probability prints it.
        &["openai", "1/1"],
        &["unnamed", "1/1"],
        &["cost", "2/2", "$0.5000"],
        &["usage_then_fail", "0/1", "$0.0101", "FAIL"],
        &["thread", "1/1", "$0.0020"],
        &["negative_cost", "0/1", "ERROR"],
        &["async", "2/3", "FLAKY"],
    ];
    let expected: Vec<Vec<String>> = expected
        .iter()
        .map(|row| row.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(section.rows, expected, "{}", output());
    assert_eq!(section.overall, "Overall: 11/14 passed (79%), 1 errored");
    assert_eq!(section.cost.as_deref(), Some("$0.5151"));
    assert_eq!(section.report.as_deref(), Some(REPORT));
}

#[test]
fn tokens_lines_aggregate_per_model_with_separators_and_cached_only_when_nonzero() {
    let section = output().section();
    assert_eq!(section.tokens.len(), 6, "{}", section.text);
    assert_eq!(
        section.tokens("m-small"),
        ["1,300 in / 90 out / 640 cached", "$0.0011"]
    );
    assert_eq!(
        section.tokens("m-large"),
        ["5,000 in / 1,000 out", "$0.0020"]
    );
    assert_eq!(
        section.tokens("gpt-mini"),
        ["1,234,567 in / 89 out", "$0.0000"]
    );
    assert_eq!(
        section.tokens("(unnamed)"),
        ["2,000 in / 5 out / 1,500 cached", "$0.0000"]
    );
    assert_eq!(section.tokens("m-thread"), ["7 in / 3 out", "$0.0020"]);
    assert_eq!(section.tokens("m-async"), ["450 in / 45 out", "$0.0000"]);
    assert_eq!(
        section.text.matches("  Tokens:  ").count(),
        1,
        "only the first model's line carries the label\n{}",
        section.text
    );
}

#[test]
fn report_totals_hold_cost_and_usage_per_model() {
    let totals = &report()["totals"];
    assert_eq!(counts(totals), [11, 2, 1, 14]);
    assert_amount(&totals["cost"], 0.5151);
    assert_usage(
        &totals["usage"],
        &[
            ("m-small", usage(1_300, 90, 640, 0.0011)),
            ("m-large", usage(5_000, 1_000, 0, 0.002)),
            ("gpt-mini", usage(1_234_567, 89, 0, 0.0)),
            ("", usage(2_000, 5, 1_500, 0.0)),
            ("m-thread", usage(7, 3, 0, 0.002)),
            ("m-async", usage(450, 45, 0, 0.0)),
        ],
    );
}

/// Documented as "in order of first appearance": the order of the rows, which the summary and
/// the report list in source order; never the order in which parallel runs happened to finish.
#[test]
fn models_are_listed_in_order_of_first_appearance() {
    let section = output().section();
    let models: Vec<&str> = section.tokens.iter().map(|line| line[0].as_str()).collect();
    assert_eq!(
        models,
        [
            "m-small",
            "m-large",
            "gpt-mini",
            "(unnamed)",
            "m-thread",
            "m-async"
        ],
        "Tokens lines\n{}",
        section.text
    );
    let text = std::fs::read_to_string(fixture().path(REPORT)).expect("the report");
    let totals =
        &text[text.find("\"totals\"").expect("totals")..text.find("\"rows\"").expect("rows")];
    let positions: Vec<usize> = ["m-small", "m-large", "gpt-mini", "", "m-thread", "m-async"]
        .iter()
        .map(|model| {
            totals
                // Compact or pretty: the report's layout is not the point here.
                .find(&format!("\"{model}\":"))
                .unwrap_or_else(|| panic!("no `{model}` in the totals: {totals}"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|pair| pair[0] < pair[1]),
        "models in order of first appearance: {totals}"
    );
}

#[test]
fn report_rows_hold_their_own_cost_and_usage() {
    let report = report();
    let row = report_row(report, "tokens");
    assert_amount(&row["cost"], 0.001);
    assert_usage(&row["usage"], &[("m-small", usage(1_200, 80, 640, 0.001))]);
    let row = report_row(report, "keywords");
    assert_usage(&row["usage"], &[("m-large", usage(5_000, 1_000, 0, 0.002))]);
    let row = report_row(report, "openai");
    assert_usage(&row["usage"], &[("gpt-mini", usage(1_234_567, 89, 0, 0.0))]);
    let row = report_row(report, "cost");
    assert_amount(&row["cost"], 0.5);
    assert_eq!(row["usage"], json!({}));
    let row = report_row(report, "thread");
    assert_amount(&row["cost"], 0.002);
    assert_usage(&row["usage"], &[("m-thread", usage(7, 3, 0, 0.002))]);
}

#[test]
fn usage_recorded_before_a_failing_assertion_is_kept() {
    let report = report();
    let row = report_row(report, "usage_then_fail");
    assert_eq!(counts(row), [0, 1, 0, 1]);
    assert_amount(&row["cost"], 0.0101);
    assert_usage(&row["usage"], &[("m-small", usage(100, 10, 0, 0.0001))]);
    let records = report_records(report, "usage_then_fail");
    assert_eq!(records[0]["outcome"], "fail");
    assert_eq!(
        records[0]["message"],
        "assertion `left == right` failed: judge rejected the answer\n  left: \"rejected\"\n right: \"accepted\""
    );
    assert_amount(&records[0]["cost"], 0.0101);
    assert_eq!(
        records[0]["usage"],
        json!([{
            "model": "m-small",
            "input_tokens": 100,
            "output_tokens": 10,
            "cached_input_tokens": 0,
            "cost": 0.0001,
        }])
    );
}

#[test]
fn records_keep_every_usage_entry_of_their_run() {
    let report = report();
    for record in report_records(report, "tokens") {
        assert_eq!(
            record["usage"],
            json!([{
                "model": "m-small",
                "input_tokens": 600,
                "output_tokens": 40,
                "cached_input_tokens": 320,
                "cost": 0.0005,
            }])
        );
        assert_amount(&record["cost"], 0.0005);
    }
    let records = report_records(report, "cost");
    assert_eq!(records.len(), 2);
    for record in records {
        assert_amount(&record["cost"], 0.25);
        assert_eq!(record["usage"], json!([]));
    }
}

#[test]
fn a_negative_cost_makes_the_run_an_error_with_a_clear_message() {
    let report = report();
    let records = report_records(report, "negative_cost");
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["outcome"], "error");
    assert_eq!(
        records[0]["error"],
        "record_cost: a cost must be a finite number >= 0, got -1"
    );
    assert_eq!(
        records[0]["location"],
        location("tests/usage.rs", SOURCE, "negative", "record_cost")
    );
    assert_eq!(records[0]["cost"], Value::Null, "a run that spent nothing");
}

#[test]
fn an_async_bench_records_usage_after_await_and_classifies_its_runs() {
    let output = output();
    let report = report();
    let row = report_row(report, "async");
    assert_eq!(counts(row), [2, 1, 0, 3]);
    assert_eq!(row["status"], "flaky");
    assert_usage(&row["usage"], &[("m-async", usage(450, 45, 0, 0.0))]);
    let records = report_records(report, "async");
    let outcomes: Vec<&str> = records
        .iter()
        .map(|r| r["outcome"].as_str().expect("outcome"))
        .collect();
    assert_eq!(outcomes, ["pass", "fail", "pass"]);
    assert_eq!(
        records[1]["message"],
        "assertion `left != right` failed: second answer was wrong\n  left: 2\n right: 2"
    );
    assert_eq!(
        records[1]["location"],
        location("tests/usage.rs", SOURCE, "async", "assert_ne!")
    );
    // Usage recorded before the failing assertion of run 2 is kept too.
    for record in &records {
        assert_eq!(record["usage"][0]["input_tokens"], 150, "{record}");
    }
    for (item, verdict) in [
        ("bench_async::run1", "ok"),
        ("bench_async::run2", "FAILED"),
        ("bench_async::run3", "ok"),
    ] {
        assert!(
            output
                .stdout
                .contains(&format!("test {item} ... {verdict}")),
            "{item} should be {verdict}{output}"
        );
    }
}

#[test]
fn a_failing_run_makes_cargo_test_fail() {
    output().assert_code(101);
}
