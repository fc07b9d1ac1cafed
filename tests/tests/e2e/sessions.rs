//! End-to-end: one report per session across processes. Real `cargo nextest run` (one process
//! per test) and `cargo test` over two test binaries, with crashes, retries, partitions merged
//! by `cargo probtest merge`, and `cargo probtest run`.

use std::sync::OnceLock;

use crate::support::{self, counts, report_records, report_row, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("sessions")
            .test("sessions", include_str!("../../fixtures/sessions.rs"))
            .test("second", include_str!("../../fixtures/second.rs"))
            .test("crash", include_str!("../../fixtures/crash.rs"))
            .test("retry", include_str!("../../fixtures/retry.rs"))
            .build()
    })
}

fn nextest(report: &str, args: &[&str]) -> (Output, Value) {
    let fixture = fixture();
    fixture.remove(report);
    let output = fixture.nextest("run", args).env("PROB_JSON", report).run();
    let json = fixture.read_json(report);
    (output, json)
}

/// `(case, passes, fails, errors, total)` of every row, sorted.
fn row_counts(report: &Value) -> Vec<(String, [u64; 4])> {
    let mut rows: Vec<(String, [u64; 4])> = report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| (row["case"].as_str().expect("case").to_string(), counts(row)))
        .collect();
    rows.sort();
    rows
}

#[test]
fn three_hundred_runs_in_eight_processes_at_once_make_one_complete_report() {
    let (output, report) = nextest(
        "reports/many.json",
        &["--test", "sessions", "-j", "8", "--no-fail-fast"],
    );
    output.assert_code(100);
    assert!(
        output.has_no_section(),
        "a nextest process holds one run and prints no section of its own{output}"
    );
    assert_eq!(report["records"].as_array().expect("records").len(), 300);
    assert_eq!(report["rows"].as_array().expect("rows").len(), 30);
    assert_eq!(counts(&report["totals"]), [210, 90, 0, 300]);
    assert_eq!(report["exit_status"], 1);
    assert!(report["session"]
        .as_str()
        .is_some_and(|key| key.starts_with("nextest-")));
    for n in 0..30 {
        let row = report_row(&report, &format!("many::{n}"));
        assert_eq!(counts(row), [7, 3, 0, 10], "case {n}");
        assert_eq!(row["status"], "flaky");
        let tokens = row["usage"]["m"]["input_tokens"].as_u64();
        assert_eq!(tokens, Some(10 * (n + 1)), "case {n}");
    }
    let mut runs: Vec<u64> = report_records(&report, "many::7")
        .iter()
        .map(|record| record["run"].as_u64().expect("run"))
        .collect();
    runs.sort_unstable();
    assert_eq!(runs, (1..=10).collect::<Vec<u64>>());
}

#[test]
fn a_process_that_aborts_leaves_its_run_as_an_error() {
    let (output, report) = nextest("reports/crash.json", &["--test", "crash", "--no-fail-fast"]);
    output.assert_code(100);
    let row = report_row(&report, "abort");
    assert_eq!(counts(row), [2, 0, 1, 3]);
    assert_eq!(row["status"], "errored");
    let died: Vec<&Value> = report_records(&report, "abort")
        .into_iter()
        .filter(|record| record["outcome"] == "error")
        .collect();
    assert_eq!(died.len(), 1);
    assert_eq!(died[0]["run"], 2);
    assert_eq!(
        died[0]["error"],
        "the test process died before the run finished"
    );
}

/// `(run, outcome)` of every record of `case` in a report.
fn run_outcomes(report: &Value, case: &str) -> Vec<(u64, String)> {
    report_records(report, case)
        .iter()
        .map(|r| {
            let run = r["run"].as_u64().expect("run");
            (run, r["outcome"].as_str().expect("outcome").to_string())
        })
        .collect()
}

#[test]
fn under_cargo_test_an_abort_keeps_the_started_run_as_an_error() {
    let fixture = fixture();
    let report = "reports/crash-libtest.json";
    fixture.remove(report);
    // A session of its own, to find again below among the sessions other tests make.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let session = format!("crash-libtest-{}-{nanos}", std::process::id());
    let output = fixture
        .cargo_test(&["--test", "crash", "--", "--test-threads=1"])
        .env("PROB_JSON", report)
        .env("PROB_SESSION", &session)
        .run();
    assert_eq!(output.code, Some(101), "{output}");
    let json = fixture.read_json(report);
    let outcomes = run_outcomes(&json, "abort");
    // A process that runs many runs folds them into the report in batches; the one that
    // aborted did not fold again, so its report lacks run 2 ...
    assert!(
        outcomes.len() < 2,
        "the aborted process folded after run 2: {outcomes:?}"
    );
    // ... which the store has, as an error: `cargo probtest report` (or the session's next
    // process) writes it. Run 3 never started: the process was gone.
    let rewritten = "reports/crash-libtest-after.json";
    fixture.remove(rewritten);
    let target = support::shared_target_dir().to_string_lossy().into_owned();
    // The run the abort cut short is an error: the report fails, exit 100.
    fixture
        .probtest(
            "report",
            &[
                "--session",
                &session,
                "--target-dir",
                &target,
                "--json-out",
                rewritten,
            ],
            &[],
        )
        .run()
        .assert_code(100);
    let json = fixture.read_json(rewritten);
    let outcomes = run_outcomes(&json, "abort");
    assert_eq!(
        outcomes,
        [(1, "pass".to_string()), (2, "error".to_string())]
    );
}

#[test]
fn retries_are_recorded_but_only_first_attempts_count() {
    let (output, report) = nextest("reports/retry.json", &["--test", "retry", "--retries", "2"]);
    output.assert_code(0);
    let row = report_row(&report, "retried");
    assert_eq!(counts(row), [0, 2, 0, 2]);
    assert_eq!(report["totals"]["retries"], 2);
    let attempts: Vec<u64> = report_records(&report, "retried")
        .iter()
        .map(|record| record["attempt"].as_u64().expect("attempt"))
        .collect();
    assert_eq!(attempts.len(), 4);
    assert_eq!(attempts.iter().filter(|&&attempt| attempt == 1).count(), 2);

    let rendered = fixture()
        .probtest("report", &["--json", "reports/retry.json"], &[])
        .run();
    // The first attempts failed: the report fails, exit 100.
    rendered.assert_code(100);
    let overall = &rendered.sections()[0].overall;
    assert!(
        overall.contains("0/2 passed") && overall.contains("2 retries not counted"),
        "{rendered}"
    );
}

#[test]
fn partition_shards_merge_into_the_rows_of_one_full_run() {
    let (_, full) = nextest(
        "reports/full.json",
        &["--test", "sessions", "--no-fail-fast"],
    );
    let (_, first) = nextest(
        "reports/shard1.json",
        &[
            "--test",
            "sessions",
            "--no-fail-fast",
            "--partition",
            "count:1/2",
        ],
    );
    let (_, second) = nextest(
        "reports/shard2.json",
        &[
            "--test",
            "sessions",
            "--no-fail-fast",
            "--partition",
            "count:2/2",
        ],
    );
    let shard_records = |report: &Value| report["records"].as_array().expect("records").len();
    assert!(shard_records(&first) > 0 && shard_records(&second) > 0);
    assert_eq!(shard_records(&first) + shard_records(&second), 300);

    let fixture = fixture();
    fixture.remove("reports/all.json");
    let merged = fixture
        .probtest(
            "merge",
            &[
                "reports/shard1.json",
                "reports/shard2.json",
                "-o",
                "reports/all.json",
            ],
            &[],
        )
        .run();
    // The shards hold failing runs: the merged report fails, exit 100.
    merged.assert_code(100);
    let all = fixture.read_json("reports/all.json");
    assert_eq!(row_counts(&all), row_counts(&full));
    assert_eq!(counts(&all["totals"]), counts(&full["totals"]));
    assert_eq!(merged.sections()[0].rows.len(), 30, "{merged}");

    // The same shard twice holds the same runs twice: refused, naming both files.
    let twice = fixture
        .probtest(
            "merge",
            &[
                "reports/shard1.json",
                "reports/shard1.json",
                "-o",
                "reports/twice.json",
            ],
            &[],
        )
        .run();
    twice.assert_code(2);
    assert!(
        twice
            .stderr
            .contains("reports/shard1.json and reports/shard1.json"),
        "{twice}"
    );
}

#[test]
fn cargo_probtest_run_under_nextest_prints_the_section_once_with_nextests_status() {
    let fixture = fixture();
    let passing = fixture
        .probtest("run", &["--nextest"], &["--test", "second"])
        .run();
    passing.assert_code(0);
    let section = passing.sections();
    assert_eq!(section.len(), 1, "{passing}");
    assert_eq!(section[0].rows.len(), 2, "{passing}");
    assert!(
        section[0].overall.starts_with("Overall: 4/4 passed"),
        "{passing}"
    );

    let failing = fixture
        .probtest(
            "run",
            &["--nextest"],
            &["--test", "sessions", "--no-fail-fast"],
        )
        .run();
    failing.assert_code(100);
    let sections = failing.sections();
    assert_eq!(sections.len(), 1, "{failing}");
    assert_eq!(sections[0].rows.len(), 30);
    assert!(
        sections[0]
            .overall
            .starts_with("Overall: 210/300 passed (70%)"),
        "{failing}"
    );
}

#[test]
fn cargo_probtest_run_under_cargo_test_prints_one_section_for_both_binaries() {
    let output = fixture()
        .probtest(
            "run",
            &[],
            &["--test", "second", "--test", "sessions", "--no-fail-fast"],
        )
        .run();
    output.assert_code(101);
    let sections = output.sections();
    assert_eq!(
        sections.len(),
        1,
        "one section, not one per test binary{output}"
    );
    assert_eq!(sections[0].rows.len(), 32);
    assert!(
        sections[0].overall.starts_with("Overall: 214/304 passed"),
        "{output}"
    );
}

#[test]
fn cargo_test_over_two_binaries_prints_two_sections_and_writes_one_report() {
    let fixture = fixture();
    let report = "reports/two-binaries.json";
    fixture.remove(report);
    let output = fixture
        .cargo_test(&["--test", "second", "--test", "sessions", "--no-fail-fast"])
        .env("PROB_JSON", report)
        .run();
    output.assert_code(101);
    let sections = output.sections();
    assert_eq!(
        sections.len(),
        2,
        "each test binary prints its own section{output}"
    );
    let json = fixture.read_json(report);
    assert_eq!(json["rows"].as_array().expect("rows").len(), 32);
    assert_eq!(json["records"].as_array().expect("records").len(), 304);
    assert!(json["session"]
        .as_str()
        .is_some_and(|key| key.starts_with("cargo-")));
    // Rows are back in source order once the processes have finished.
    let cases: Vec<&str> = json["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["case"].as_str().expect("case"))
        .collect();
    // Modules sort by name: `second` before `sessions`.
    assert_eq!(&cases[..2], ["second::alpha", "second::beta"]);
    assert_eq!(cases[2], "many::0");
    assert_eq!(cases[31], "many::29");
}

#[test]
fn packages_that_name_their_own_reports_each_get_the_session_and_write_only_their_own() {
    let evals = "use probtest::probability;\n\n\
                 #[probability(runs = 3)]\nfn answers() {\n    assert_eq!(1 + 1, 2);\n}\n";
    let fixture = Fixture::workspace(
        "two-reports",
        &[
            ("alpha", "json = \"report.json\"", evals),
            ("beta", "json = \"report.json\"", evals),
        ],
    );
    fixture.remove("alpha/report.json");
    fixture.remove("beta/report.json");
    let key = format!("two-reports-{}", std::process::id());
    fixture
        .nextest("run", &["--workspace"])
        .env("PROB_SESSION", &key)
        .run()
        .assert_code(0);
    // A report is written only by the processes whose settings name it, and each covers the
    // session as of its own package's last run: its own runs and every run before them. The
    // package that ran last has every run of the session.
    let mut sizes = Vec::new();
    for member in ["alpha", "beta"] {
        let report = fixture.read_json(&format!("{member}/report.json"));
        let records = report_records(&report, "answers");
        let own = records
            .iter()
            .filter(|record| record["package"] == format!("pt-two-reports-{member}").as_str())
            .count();
        assert_eq!(own, 3, "{member}/report.json holds its package's runs");
        sizes.push(records.len());
    }
    assert_eq!(sizes.iter().max(), Some(&6), "{sizes:?}");
    let session = fixture.probtest("report", &["--session", &key], &[]).run();
    session.assert_code(0);
    assert!(session.stdout.contains("Overall: 6/6 passed"), "{session}");
}
