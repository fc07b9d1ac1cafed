//! End-to-end: `#[probtest::setup]` and `#[probtest::teardown]` run once per module around its
//! runs, in serial, parallel and filtered runs; a failing setup turns only its own module's
//! runs into errors carrying its message; a failing teardown is reported.

use std::sync::OnceLock;

use crate::support::{counts, report_records, report_row, Fixture, Output};

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("hooks")
            .test("hooks", include_str!("../../fixtures/hooks.rs"))
            .build()
    })
}

/// Runs the `hooks` suite with its events logged to `<name>.log`; returns the output and log.
fn run(name: &str, args: &[&str]) -> (Output, Vec<String>) {
    let fixture = fixture();
    let log = format!("{name}.log");
    let json = format!("{name}.json");
    fixture.remove(&log);
    fixture.remove(&json);
    let mut all = vec!["--test", "hooks"];
    all.extend_from_slice(args);
    let output = fixture
        .cargo_test(&all)
        .env("PT_LOG", fixture.path(&log).to_string_lossy())
        .env("PROB_JSON", &json)
        .run();
    let lines = fixture.read_lines(&log);
    (output, lines)
}

fn serial() -> &'static (Output, Vec<String>) {
    static SERIAL: OnceLock<(Output, Vec<String>)> = OnceLock::new();
    SERIAL.get_or_init(|| run("serial", &["--", "--test-threads=1"]))
}

#[test]
fn in_a_serial_run_setup_comes_before_the_first_run_and_teardown_after_the_last() {
    let (output, log) = serial();
    assert_eq!(
        log,
        &[
            "setup broken",
            "setup good",
            "run good::one #1",
            "run good::one #2",
            "run good::one #3",
            "run good::two 1 #1",
            "run good::two 1 #2",
            "run good::two 2 #1",
            "run good::two 2 #2",
            "run good::inner::nested #1",
            "run good::inner::nested #2",
            // Right after the module's last run, not at process exit.
            "teardown good",
            "run plain::four #1",
            "run plain::four #2",
            "setup refused",
            "run sloppy::six",
            "teardown sloppy",
        ],
        "{output}"
    );
}

#[test]
fn a_failing_setup_errors_its_module_only_with_its_message() {
    let (output, _) = serial();
    output.assert_code(101);
    let section = output.section();
    assert_eq!(section.row("three"), ["0/2", "ERROR"], "{output}");
    assert_eq!(section.row("five"), ["0/1", "ERROR"], "{output}");
    for case in ["one", "two::1", "two::2", "nested", "four", "six"] {
        let row = section.row(case);
        assert_eq!(row.len(), 1, "{case} passes: {row:?}");
    }
    assert_eq!(section.overall, "Overall: 12/15 passed (80%), 3 errored");

    let report = fixture().read_json("serial.json");
    let records = report_records(&report, "three");
    assert_eq!(records.len(), 2);
    for record in records {
        assert_eq!(record["outcome"], "error");
        assert_eq!(
            record["error"],
            "setup `connect` failed: database unreachable at port 5432"
        );
    }
    let records = report_records(&report, "five");
    assert_eq!(records[0]["outcome"], "error");
    assert_eq!(
        records[0]["error"],
        "setup `login` failed: \"no credentials\""
    );
    assert_eq!(counts(report_row(&report, "four")), [2, 0, 0, 2]);
    assert_eq!(counts(report_row(&report, "nested")), [2, 0, 0, 2]);
    assert_eq!(
        report_row(&report, "nested")["module"],
        "hooks::good::inner"
    );
}

#[test]
fn a_failing_teardown_is_reported() {
    let (output, _) = serial();
    let message = "probtest: teardown `cleanup` of `hooks::sloppy` failed: cleanup broke";
    // Either stream will do, but a passing test's captured output is dropped by libtest.
    assert!(
        output.stderr.contains(message) || output.stdout.contains(message),
        "a failing teardown must be visible without --nocapture{output}"
    );
    assert_eq!(output.section().row("six"), ["1/1"], "{output}");
}

#[test]
fn in_a_parallel_run_hooks_still_run_once_around_the_modules_runs() {
    let (output, log) = run("parallel", &[]);
    output.assert_code(101);
    let position = |event: &str| -> Vec<usize> {
        log.iter()
            .enumerate()
            .filter(|(_, line)| *line == event)
            .map(|(index, _)| index)
            .collect()
    };
    let setup = position("setup good");
    let teardown = position("teardown good");
    assert_eq!(setup.len(), 1, "setup once: {log:#?}");
    assert_eq!(teardown.len(), 1, "teardown once: {log:#?}");
    let runs: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, line)| line.starts_with("run good::"))
        .map(|(index, _)| index)
        .collect();
    assert_eq!(runs.len(), 9, "{log:#?}");
    assert!(
        runs.iter().all(|&run| setup[0] < run && run < teardown[0]),
        "every run between setup and teardown: {log:#?}"
    );
    assert_eq!(position("setup broken").len(), 1, "{log:#?}");
    assert!(
        !log.iter().any(|line| line.starts_with("run broken")),
        "{log:#?}"
    );
}

#[test]
fn in_a_filtered_run_teardown_runs_at_exit() {
    let (output, log) = run("filtered", &["good::bench_one", "--", "--test-threads=1"]);
    output.assert_code(0);
    assert_eq!(
        log,
        [
            "setup good",
            "run good::one #1",
            "run good::one #2",
            "run good::one #3",
            "teardown good",
        ],
        "{output}"
    );
    let section = output.section();
    assert_eq!(section.case_ids(), ["one"], "{output}");
    assert_eq!(section.overall, "Overall: 3/3 passed (100%)");
}
