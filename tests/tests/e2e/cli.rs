//! End-to-end: exit statuses of `cargo test` and `cargo nextest run`, and the commands that must
//! print nothing but libtest's own output (`--list`, `--help`, nextest's list phase and its
//! one-run processes).

use std::sync::OnceLock;

use crate::support::{Fixture, Output};

/// Every bench item of `pass.rs`, as libtest lists them.
const PASS_ITEMS: &[&str] = &[
    "bench_modes::fast::run1",
    "bench_modes::fast::run2",
    "bench_modes::slow::run1",
    "bench_modes::slow::run2",
    "bench_roll::run1",
    "bench_roll::run2",
    "bench_roll::run3",
    "bench_single",
];

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("basic")
            .test("pass", include_str!("../../fixtures/pass.rs"))
            .test("fail", include_str!("../../fixtures/fail.rs"))
            .build()
    })
}

/// Checks that stdout is exactly libtest's `--list` output and returns the listed items.
#[track_caller]
fn list_only(output: &Output) -> Vec<String> {
    let mut items = Vec::new();
    for line in output.stdout.lines().filter(|line| !line.is_empty()) {
        if let Some(item) = line.strip_suffix(": test") {
            items.push(item.to_string());
        } else {
            assert!(
                line.ends_with(" tests, 0 benchmarks"),
                "unexpected line {line:?} in a test list{output}"
            );
        }
    }
    assert!(output.has_no_section(), "{output}");
    items
}

fn with_plain_test() -> Vec<String> {
    let mut items: Vec<String> = PASS_ITEMS.iter().map(|s| s.to_string()).collect();
    items.push("plain_test".to_string());
    items
}

#[test]
fn all_runs_passing_exits_zero_and_shows_no_status_words() {
    let output = fixture().cargo_test(&["--test", "pass"]).run();
    output.assert_code(0);
    let section = output.section();
    assert_eq!(
        section.rows,
        [
            ["roll", "3/3"],
            ["modes::fast", "2/2"],
            ["modes::slow", "2/2"],
            ["single", "1/1"],
        ],
        "{output}"
    );
    assert_eq!(section.overall, "Overall: 8/8 passed (100%)");
    assert_eq!(section.cost, None);
    assert!(section.tokens.is_empty());
    assert_eq!(section.report, None, "no report without PROB_JSON");
    assert!(
        output.stdout.ends_with("Overall: 8/8 passed (100%)\n"),
        "the section is the last thing on stdout{output}"
    );
}

#[test]
fn one_failing_run_makes_cargo_test_exit_101() {
    let output = fixture().cargo_test(&["--test", "fail"]).run();
    output.assert_code(101);
    assert_eq!(output.section().row("coin"), ["1/2", "FLAKY"], "{output}");
    assert!(
        output.stdout.contains("test bench_coin::run1 ... ok")
            && output.stdout.contains("test bench_coin::run2 ... FAILED"),
        "{output}"
    );
}

#[test]
fn list_prints_only_libtests_list() {
    let output = fixture()
        .cargo_test(&["--test", "pass", "--", "--list"])
        .run();
    output.assert_code(0);
    assert_eq!(list_only(&output), with_plain_test());
}

#[test]
fn help_prints_only_libtests_help() {
    let output = fixture()
        .cargo_test(&["--test", "pass", "--", "--help"])
        .run();
    output.assert_code(0);
    assert!(output.stdout.starts_with("Usage: "), "{output}");
    assert!(output.has_no_section(), "{output}");
    assert!(!output.stdout.contains("probability"), "{output}");
}

#[test]
fn nextests_list_phase_prints_nothing_extra() {
    // What nextest runs to list a binary's tests.
    let output = fixture()
        .cargo_test(&["--test", "pass", "--", "--list", "--format", "terse"])
        .env("NEXTEST_TEST_PHASE", "list")
        .run();
    output.assert_code(0);
    assert_eq!(list_only(&output), with_plain_test());

    let output = fixture().nextest("list", &["--test", "pass"]).run();
    output.assert_code(0);
    assert!(output.has_no_section(), "{output}");
    for item in PASS_ITEMS {
        assert!(output.stdout.contains(item), "{item} not listed{output}");
    }
}

#[test]
fn nextest_run_exits_with_the_right_status() {
    let output = fixture().nextest("run", &["--test", "pass"]).run();
    output.assert_code(0);
    assert!(output.stderr.contains("9 tests run: 9 passed"), "{output}");

    let output = fixture().nextest("run", &["--test", "fail"]).run();
    // nextest's exit code for failing tests.
    output.assert_code(100);
    assert!(
        output.stderr.contains("2 tests run: 1 passed, 1 failed"),
        "{output}"
    );
}

#[test]
fn nextest_processes_print_no_section_of_their_own() {
    // Documented: under nextest a process holds a single run, so the section comes from
    // `cargo probtest run --nextest`; each process prints libtest's output only.
    let output = fixture()
        .nextest("run", &["--test", "pass", "--no-capture"])
        .run();
    output.assert_code(0);
    assert!(output.has_no_section(), "{output}");
    let results = output
        .stdout
        .lines()
        .filter(|line| line.starts_with("test result: ok. 1 passed;"))
        .count();
    assert_eq!(
        results,
        PASS_ITEMS.len() + 1,
        "one process per test{output}"
    );
}
