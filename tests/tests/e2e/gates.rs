//! End-to-end: intervals, gates (PASS with failing samples, FAIL, UNDECIDED under both policies,
//! excluded errors, the infeasible warning), metrics and explanations, under real `cargo test`,
//! `cargo nextest run` and `cargo probtest run --nextest`.

use std::sync::OnceLock;

use crate::support::{report_records, report_row, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("gates")
            .test("gates", include_str!("../../fixtures/gates.rs"))
            .build()
    })
}

/// `cargo test --test gates <filter>` with a report of its own.
fn cargo_test(filter: &str, report: &str, envs: &[(&str, &str)]) -> (Output, Value) {
    let fixture = fixture();
    fixture.remove(report);
    let mut run = fixture
        .cargo_test(&["--test", "gates", filter])
        .env("PROB_JSON", report);
    for (name, value) in envs {
        run = run.env(name, value);
    }
    let output = run.run();
    let json = fixture.read_json(report);
    (output, json)
}

#[test]
fn a_passing_gate_with_failing_samples_exits_zero() {
    let (output, report) = cargo_test("bench_passing_gate", "reports/pass.json", &[]);
    output.assert_code(0);
    let section = output.section();
    assert_eq!(
        section.rows,
        [["passing_gate", "18/20", "FLAKY"]],
        "{output}"
    );
    assert_eq!(section.intervals, [Some("[68%, 99%]".to_string())]);
    assert_eq!(section.gates.as_deref(), Some("1 passed"));
    assert_eq!(report["exit_status"], 0);
    let row = report_row(&report, "passing_gate");
    assert_eq!(row["gate"]["verdict"], "pass");
    assert_eq!(row["gate"]["rule"], "min_rate");
    assert_eq!(row["gate"]["bar"], 0.5);
    assert_eq!(row["ci"]["method"], "exact");
    assert!(
        (row["ci"]["low"].as_f64().expect("low") - 0.683).abs() < 0.001,
        "{row}"
    );
    // The failing samples stay visible in the records.
    let messages: Vec<&str> = report_records(&report, "passing_gate")
        .iter()
        .filter_map(|record| record["message"].as_str())
        .collect();
    assert_eq!(messages, ["run 3 answers wrong", "run 7 answers wrong"]);
}

#[test]
fn a_failing_gate_fails_the_run_and_is_listed() {
    let (output, report) = cargo_test("bench_failing_gate", "reports/fail.json", &[]);
    output.assert_code(101);
    assert!(
        output
            .stdout
            .contains("failing_gate: gate min_rate 0.5 is Fail on 2/20 runs"),
        "the last run carries the verdict{output}"
    );
    let gates = gates_block(&output);
    assert_eq!(
        gates,
        ["failing_gate  2/20  [ 1%, 32%]  min_rate 0.5  FAIL"]
    );
    assert_eq!(report["exit_status"], 1);
    assert_eq!(
        report_row(&report, "failing_gate")["gate"]["verdict"],
        "fail"
    );
}

#[test]
fn undecided_fails_by_default_and_passes_under_the_pass_policy() {
    let (output, _) = cargo_test("bench_undecided", "reports/undecided.json", &[]);
    output.assert_code(101);
    assert_eq!(
        output.section().gates.as_deref(),
        Some("0 passed, 1 undecided")
    );
    // The output ends with the hints: how to read the verdict, then how to learn why the row
    // is flaky.
    let mut last = output.stdout.lines().rev().filter(|line| !line.is_empty());
    assert_eq!(
        last.next(),
        Some("  Hint:    cargo probtest doctor -p pt-gates undecided says why it is flaky"),
        "{output}"
    );
    assert_eq!(
        last.next(),
        Some("  Hint:    PROB_EXPLAIN=1 explains each verdict and what would settle it"),
        "{output}"
    );

    let (output, report) = cargo_test(
        "bench_undecided",
        "reports/undecided-pass.json",
        &[("PROB_UNDECIDED", "pass")],
    );
    output.assert_code(0);
    assert_eq!(report["exit_status"], 0);
    assert_eq!(report["stats_config"]["undecided"], "pass");
    assert_eq!(
        report_row(&report, "undecided")["gate"]["verdict"],
        "undecided"
    );
}

#[test]
fn errors_count_against_a_gate_unless_excluded() {
    let (counted, report) = cargo_test("bench_with_errors", "reports/counted.json", &[]);
    counted.assert_code(101);
    assert_eq!(report_row(&report, "with_errors")["gate"]["sample"], 10);

    let (excluded, report) = cargo_test(
        "bench_with_errors",
        "reports/excluded.json",
        &[("PROB_ERRORS", "exclude")],
    );
    excluded.assert_code(0);
    let gate = &report_row(&report, "with_errors")["gate"];
    assert_eq!(
        (gate["sample"].as_u64(), gate["verdict"].as_str()),
        (Some(8), Some("pass"))
    );
    assert_eq!(gate["errors"], "exclude");
}

#[test]
fn an_infeasible_gate_is_warned_about_before_its_runs() {
    let (output, _) = cargo_test("bench_infeasible", "reports/infeasible.json", &[]);
    let warning = "infeasible: min_rate=0.9 at 95% needs >=36 runs; this case has 10";
    assert!(
        output
            .stderr
            .contains(&format!("probtest: warning: {warning}")),
        "{output}"
    );
    assert_eq!(output.section().warnings, [warning]);
    // Every run passed, yet the interval cannot clear the bar: UNDECIDED, which fails.
    output.assert_code(101);
}

#[test]
fn metrics_are_exact_per_case_and_averaged_per_function() {
    let (output, report) = cargo_test(
        "bench_undecided",
        "reports/metrics.json",
        &[("PROB_METRIC", "pass^3,pass@5"), ("PROB_UNDECIDED", "pass")],
    );
    output.assert_code(0);
    let metrics = &report_row(&report, "undecided")["metrics"];
    // C(7,3)/C(10,3) = 35/120; with 3 failures, any 5 runs include a pass.
    assert!((metrics["pass^3"].as_f64().expect("pass^3") - 35.0 / 120.0).abs() < 1e-12);
    assert_eq!(metrics["pass@5"], 1.0);
    assert!(output.stdout.contains("probability: metrics"), "{output}");
    // One line per metric in pytest-probability's layout, the function named on its first.
    assert!(
        output.stdout.contains(
            "\n  undecided  pass^3  N=1 input   29.2%\n             pass@5  N=1 input  100.0%\n"
        ),
        "{output}"
    );
    assert!(
        output
            .stdout
            .contains("  pass^k: the chance that k runs of an input all pass (reliability)"),
        "{output}"
    );
    assert_eq!(report["aggregates"][0]["function"], "bench_undecided");
    let pass3 = &report["aggregates"][0]["metrics"]["pass^3"];
    assert_eq!(
        (pass3["k"].as_u64(), pass3["inputs"].as_u64()),
        (Some(3), Some(1))
    );
    assert!((pass3["estimate"].as_f64().expect("an estimate") - 35.0 / 120.0).abs() < 1e-12);
    assert!(pass3["ci"].is_null(), "{pass3}");
    assert_eq!(pass3["suppressed"], "fewer than 10 inputs");
}

#[test]
fn explanations_read_each_verdict_with_a_next_step() {
    let (output, _) = cargo_test(
        "bench_undecided",
        "reports/explain.json",
        &[("PROB_EXPLAIN", "1")],
    );
    let text = output.stdout.replace("\n    ", " ");
    assert!(text.contains("probability: explained"), "{output}");
    assert!(
        text.contains("undecided: 7 of 10 runs passed (70%); 3 failed an assertion"),
        "{output}"
    );
    assert!(
        text.contains("UNDECIDED: the interval [35%, 93%] straddles 50%"),
        "{output}"
    );
    assert!(text.contains("runs would settle it"), "{output}");
    assert!(!output.stdout.contains("Hint:    PROB_EXPLAIN"), "{output}");
}

#[test]
fn under_nextest_the_verdict_item_or_cargo_probtest_judges_gated_cases() {
    let fixture = fixture();
    // Plain nextest: the case's verdict item judges it from the session store, and its failing
    // runs are samples (`gate_items` shows what happens without verdict items).
    let plain = fixture
        .nextest(
            "run",
            &["--test", "gates", "--no-fail-fast", "bench_passing_gate"],
        )
        .run();
    plain.assert_code(0);

    // cargo probtest run --nextest judges from the session: the PASS verdict passes.
    let judged = fixture
        .probtest(
            "run",
            &["--nextest"],
            &["--test", "gates", "--no-fail-fast", "bench_passing_gate"],
        )
        .run();
    judged.assert_code(0);
    let sections = judged.sections();
    assert_eq!(sections.len(), 1, "{judged}");
    assert_eq!(sections[0].gates.as_deref(), Some("1 passed"));

    let failing = fixture
        .probtest(
            "run",
            &["--nextest"],
            &["--test", "gates", "--no-fail-fast", "bench_failing_gate"],
        )
        .run();
    failing.assert_code(100);
    assert!(failing.stdout.contains("probability: gates"), "{failing}");
}

/// The rows of the `probability: gates` block, columns joined by two spaces.
fn gates_block(output: &Output) -> Vec<String> {
    let mut lines = output
        .stdout
        .lines()
        .skip_while(|line| !line.contains("probability: gates"));
    lines.next();
    lines
        .take_while(|line| line.starts_with("  ") && !line.starts_with("  Hint:"))
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}
