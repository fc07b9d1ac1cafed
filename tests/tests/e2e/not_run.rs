//! End-to-end: a run that never ran is never hidden. `cargo probtest run` runs every run by
//! default (`--no-fail-fast` for cargo test and nextest alike); when the user stops at the first
//! failure, the runs the session expected and never started are counted per row ("4 not run"),
//! in the JSON, and per test binary that never ran, and the session fails.

use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{Fixture, Output};

/// Two test binaries, `a_first` (whose `refund` case fails two runs of five) and `b_second`.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("not-run")
            .test("a_first", include_str!("../../fixtures/not_run_first.rs"))
            .test("b_second", include_str!("../../fixtures/not_run_second.rs"))
            .build()
    })
}

/// Each case's configured runs.
const RUNS: [(&str, u64); 3] = [("first::refund", 5), ("first::other", 5), ("second", 4)];

/// `cargo probtest run` with `flags` and the runner's `args`, keeping the session's report in
/// `report`: its output and the report.
fn run(report: &str, flags: &[&str], args: &[&str]) -> (Output, Value) {
    let fixture = fixture();
    fixture.remove(report);
    let output = fixture
        .probtest("run", flags, args)
        .env("PROB_JSON", report)
        .run();
    let json = fixture.read_json(report);
    (output, json)
}

/// `(case, total, not_run)` of every row of the report, in its order.
fn rows(report: &Value) -> Vec<(String, u64, u64)> {
    report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| {
            (
                row["case"].as_str().expect("case").to_string(),
                row["total"].as_u64().expect("total"),
                row["not_run"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// The summary's line of row `case`.
#[track_caller]
fn row_line<'a>(output: &'a Output, case: &str) -> &'a str {
    output
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with(&format!("{case} ")))
        .unwrap_or_else(|| panic!("no row `{case}` in\n{output}"))
}

/// Every case has its row, and its reported and not-run runs add up to its configured runs.
#[track_caller]
fn every_run_accounted_for(report: &Value, output: &Output) {
    let rows = rows(report);
    for (case, runs) in RUNS {
        let (_, total, not_run) = rows
            .iter()
            .find(|(row, ..)| row == case)
            .unwrap_or_else(|| panic!("no row `{case}` in the report\n{output}"));
        assert_eq!(total + not_run, runs, "{case}: {output}");
    }
    let sum: u64 = rows.iter().map(|(.., not_run)| not_run).sum();
    assert_eq!(
        report["totals"]["not_run"].as_u64().unwrap_or(0),
        sum,
        "{output}"
    );
}

#[test]
fn cargo_test_runs_every_binary_and_names_one_that_a_fail_fast_never_ran() {
    let (all, report) = run("reports/all.json", &[], &[]);
    // The first binary fails; the second ran all the same.
    all.assert_code(101);
    every_run_accounted_for(&report, &all);
    assert!(
        rows(&report).iter().all(|(.., not_run)| *not_run == 0),
        "{all}"
    );
    assert!(row_line(&all, "second").contains("4/4"), "{all}");
    assert!(!all.stdout.contains("not run"), "{all}");

    let (stopped, report) = run("reports/stopped.json", &[], &["--fail-fast"]);
    stopped.assert_code(101);
    every_run_accounted_for(&report, &stopped);
    let second = row_line(&stopped, "second");
    assert!(second.contains("0/0"), "{stopped}");
    assert!(second.ends_with("4 not run"), "{stopped}");
    assert!(
        stopped
            .stdout
            .contains("Overall: 8/10 passed (80%), 4 not run"),
        "{stopped}"
    );
    let not_run = stopped
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("Not run:"))
        .unwrap_or_else(|| panic!("no Not run: line in\n{stopped}"));
    assert!(
        not_run.contains("4 runs in 1 case; binary tests/b_second.rs (b_second-"),
        "{not_run}"
    );
    assert!(not_run.ends_with("never ran (4 runs)"), "{not_run}");
    assert_eq!(report["totals"]["not_run"], 4, "{stopped}");
    assert_eq!(report["exit_status"], 1);
    let binaries = report["binaries_not_run"].as_array().expect("a list");
    assert_eq!(binaries.len(), 1, "{report}");
    assert_eq!(binaries[0]["binary"], "pt-not-run::b_second");
    assert_eq!(binaries[0]["runs"], 4);
}

#[test]
fn nextest_fail_fast_counts_the_runs_it_cancelled() {
    let (output, report) = run(
        "reports/nextest-fail-fast.json",
        &["--nextest"],
        &["--fail-fast", "-j", "1"],
    );
    output.assert_code(100);
    every_run_accounted_for(&report, &output);
    let not_run = report["totals"]["not_run"].as_u64().expect("counted");
    assert!(not_run >= 4, "{output}");
    // The second binary sorts after the first, whose failure stopped the run.
    assert!(
        row_line(&output, "second").ends_with("4 not run"),
        "{output}"
    );
    assert!(
        output.stdout.contains(&format!(", {not_run} not run\n")),
        "{output}"
    );
    assert_eq!(
        report["binaries_not_run"][0]["binary"],
        "pt-not-run::b_second"
    );
}

#[test]
fn nextest_retries_leave_no_case_missing() {
    let (output, report) = run(
        "reports/nextest-retries.json",
        &["--nextest"],
        &["--retries", "2"],
    );
    output.assert_code(100);
    every_run_accounted_for(&report, &output);
    assert!(report["totals"].get("not_run").is_none(), "{output}");
    assert!(row_line(&output, "second").contains("4/4"), "{output}");
    assert!(
        row_line(&output, "first::refund").contains("3/5"),
        "{output}"
    );
}

#[test]
fn a_filter_leaves_the_runs_it_did_not_select_uncounted() {
    for (flags, args, code) in [
        (&[][..], &["--", "refund"][..], 101),
        (&["--nextest"][..], &["refund"][..], 100),
    ] {
        let (output, report) = run("reports/filtered.json", flags, args);
        output.assert_code(code);
        let rows = rows(&report);
        assert_eq!(rows, [("first::refund".to_string(), 5, 0)], "{output}");
        assert!(report["totals"].get("not_run").is_none(), "{output}");
        assert!(!output.stdout.contains("not run"), "{output}");
    }
}
