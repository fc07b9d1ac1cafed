//! Runs the built `cargo-probtest` binary on small JSON reports made in a temporary directory:
//! rendering, merging, and one clear line with exit code 2 for every kind of bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use probtest::{CaseInfo, OrderedMap, Outcome, Record, Report, TokenUsage};

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("cargo-probtest-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn info(case: &str, line: u32) -> CaseInfo {
    let (short, id) = case.split_once("::").unwrap_or((case, case));
    CaseInfo {
        case: case.to_string(),
        package: "evals".into(),
        module: "evals".into(),
        function: format!("bench_{short}"),
        case_id: id.to_string(),
        file: "tests/evals.rs".to_string(),
        line,
        index: 0,
        runs: 4,
        params: OrderedMap(vec![("text".to_string(), format!("{id:?}"))]),
        gate: None,
        compare: None,
        latency: None,
        parts: Vec::new(),
    }
}

fn record(case: &str, run: u32, outcome: Outcome) -> Record {
    Record {
        case: case.to_string().into(),
        package: "evals".into(),
        module: "evals".into(),
        run,
        attempt: 1,
        outcome,
        message: (outcome != Outcome::Pass).then(|| "assertion failed".to_string()),
        location: None,
        elapsed: 0.01,
        waited: 0.0,
        waited_for: None,
        replayed: None,
        cost: 0.25,
        usage: vec![TokenUsage {
            model: "m-small".to_string(),
            input_tokens: 1_000,
            output_tokens: 10,
            cached_input_tokens: 0,
            cost: 0.25,
        }],
    }
}

/// Writes a report built from these records, as probtest writes it.
fn write_report(path: &Path, records: Vec<Record>) {
    let cases = vec![info("triage::refund", 10), info("triage::order", 20)];
    let report = Report::build(cases, records, &probtest::stats::StatsConfig::default());
    let text = serde_json::to_string_pretty(&report).expect("serializes");
    std::fs::write(path, text).expect("written");
}

/// A shard report at `name` holding these runs.
fn shard(dir: &TempDir, name: &str, runs: [(&str, u32, Outcome); 4]) -> PathBuf {
    let path = dir.path(name);
    let records = runs
        .into_iter()
        .map(|(case, run, outcome)| record(case, run, outcome))
        .collect();
    write_report(&path, records);
    path
}

/// The first shard: runs 1 and 2 of both cases.
fn shard1(dir: &TempDir) -> PathBuf {
    shard(
        dir,
        "shard1.json",
        [
            ("triage::refund", 1, Outcome::Pass),
            ("triage::refund", 2, Outcome::Pass),
            ("triage::order", 1, Outcome::Pass),
            ("triage::order", 2, Outcome::Fail),
        ],
    )
}

/// The second shard: runs 3 and 4 of both cases.
fn shard2(dir: &TempDir) -> PathBuf {
    shard(
        dir,
        "shard2.json",
        [
            ("triage::refund", 3, Outcome::Pass),
            ("triage::refund", 4, Outcome::Pass),
            ("triage::order", 3, Outcome::Fail),
            ("triage::order", 4, Outcome::Error),
        ],
    )
}

fn cargo_probtest(dir: &TempDir, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-probtest"))
        .args(args)
        .current_dir(&dir.0)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("RUST_BACKTRACE")
        .env_remove("PROB_JSON")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("cargo-probtest runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The summary's row of `case`, split on whitespace.
fn row(summary: &str, case: &str) -> Vec<String> {
    summary
        .lines()
        .find(|line| line.trim_start().starts_with(&format!("{case} ")))
        .unwrap_or_else(|| panic!("no row {case} in\n{summary}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Checks exit code 2, nothing on stdout and exactly one `error:` line naming `file` that
/// contains `problem`.
#[track_caller]
fn assert_one_line_error(output: &Output, file: &str, problem: &str) {
    let err = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert_eq!(stdout(output), "", "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with(&format!("error: {file}: ")), "{err}");
    assert!(err.contains(problem), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn report_renders_the_rows_of_a_json_report() {
    let dir = TempDir::new("render");
    shard1(&dir);
    let output = cargo_probtest(&dir, &["probtest", "report", "--json", "shard1.json"]);
    // A flaky row fails the report: exit 100, nextest's code for failing tests.
    assert_eq!(output.status.code(), Some(100), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains(" probability "), "{text}");
    assert_eq!(
        row(&text, "triage::refund"),
        ["triage::refund", "2/2", "[16%,", "100%]", "$0.5000"]
    );
    assert_eq!(
        row(&text, "triage::order"),
        [
            "triage::order",
            "1/2",
            "[",
            "1%,",
            "99%]",
            "$0.5000",
            "FLAKY"
        ]
    );
    assert!(text.contains("Overall: 3/4 passed (75%)"), "{text}");
    assert!(
        text.contains("Tokens:  m-small  4,000 in / 40 out  $1.0000"),
        "{text}"
    );
    assert!(!text.contains("Report:"), "{text}");
    assert!(!text.contains('\x1b'), "NO_COLOR: {text}");
}

#[test]
fn report_recomputes_rows_and_writes_json_out() {
    let dir = TempDir::new("rebuild");
    let path = shard1(&dir);
    // Stored numbers that disagree with the records are not trusted.
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    value["rows"][0]["passes"] = 40.into();
    value["rows"][0]["status"] = "fail".into();
    value["totals"]["passes"] = 99.into();
    std::fs::write(&path, value.to_string()).expect("written");

    // Runs directly, without the `probtest` cargo puts first.
    let output = cargo_probtest(
        &dir,
        &[
            "report",
            "--json",
            "shard1.json",
            "--json-out",
            "out/again.json",
        ],
    );
    // The recomputed rows decide: a flaky row fails the report.
    assert_eq!(output.status.code(), Some(100), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        row(&text, "triage::refund"),
        ["triage::refund", "2/2", "[16%,", "100%]", "$0.5000"]
    );
    assert!(text.contains("Overall: 3/4 passed (75%)"), "{text}");
    assert!(text.contains("Report:  out/again.json"), "{text}");

    let written = std::fs::read_to_string(dir.path("out/again.json")).expect("json-out");
    let again = Report::from_json(&written).expect("a report");
    assert_eq!(again.totals.passes, 3);
    assert_eq!(again.rows[0].passes, 2);
    assert_eq!(again.records.len(), 4);
}

#[test]
fn merge_combines_two_shards_and_recomputes_rows() {
    let dir = TempDir::new("merge");
    shard1(&dir);
    shard2(&dir);
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "merge",
            "shard1.json",
            "shard2.json",
            "-o",
            "all.json",
        ],
    );
    // The merged report has a flaky row: it fails, as a CI job of shards should.
    assert_eq!(output.status.code(), Some(100), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        row(&text, "triage::refund"),
        ["triage::refund", "4/4", "[40%,", "100%]", "$1.0000"]
    );
    assert_eq!(
        row(&text, "triage::order"),
        [
            "triage::order",
            "1/4",
            "[",
            "1%,",
            "81%]",
            "$1.0000",
            "FLAKY",
            "(1",
            "errored)"
        ]
    );
    assert!(
        text.contains("Overall: 5/8 passed (62%), 1 errored"),
        "{text}"
    );
    assert!(text.contains("Report:  all.json"), "{text}");

    let merged =
        Report::from_json(&std::fs::read_to_string(dir.path("all.json")).expect("written"))
            .expect("a report");
    assert_eq!(merged.records.len(), 8);
    assert_eq!(merged.rows.len(), 2);
    assert_eq!(merged.rows[0].info.case, "triage::refund");
    assert_eq!((merged.rows[0].passes, merged.rows[0].total), (4, 4));
    assert_eq!(
        (
            merged.rows[1].passes,
            merged.rows[1].fails,
            merged.rows[1].errors
        ),
        (1, 2, 1)
    );
    assert_eq!(merged.totals.count, 8);
    assert_eq!(merged.exit_status, 1);
    assert_eq!(merged.runs, 4);
}

#[test]
fn merging_a_shard_with_itself_names_both_files_and_the_run() {
    let dir = TempDir::new("duplicate");
    shard1(&dir);
    std::fs::copy(dir.path("shard1.json"), dir.path("copy.json")).expect("copied");
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "merge",
            "shard1.json",
            "copy.json",
            "-o",
            "all.json",
        ],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: shard1.json and copy.json both hold run 1 of case triage::refund"),
        "{err}"
    );
    assert!(!dir.path("all.json").exists(), "nothing written on error");
}

#[test]
fn a_missing_file_exits_2_with_one_line() {
    let dir = TempDir::new("missing");
    shard1(&dir);
    let output = cargo_probtest(&dir, &["probtest", "report", "--json", "nope.json"]);
    assert_one_line_error(&output, "nope.json", "cannot read");
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "merge",
            "shard1.json",
            "gone.json",
            "-o",
            "all.json",
        ],
    );
    assert_one_line_error(&output, "gone.json", "cannot read");
}

#[test]
fn a_file_that_is_not_a_report_exits_2_with_one_line() {
    let dir = TempDir::new("not-a-report");
    shard1(&dir);
    std::fs::write(dir.path("other.json"), r#"{"rows": [], "totals": {}}"#).expect("written");
    std::fs::write(dir.path("text.json"), "not json at all\n").expect("written");
    let output = cargo_probtest(&dir, &["probtest", "report", "--json", "other.json"]);
    assert_one_line_error(&output, "other.json", "not a probtest report");
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "merge",
            "shard1.json",
            "text.json",
            "-o",
            "all.json",
        ],
    );
    assert_one_line_error(&output, "text.json", "not valid JSON");
}

#[test]
fn a_report_of_a_newer_schema_exits_2_with_one_line() {
    let dir = TempDir::new("schema");
    let path = shard1(&dir);
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    value["schema"] = 99.into();
    std::fs::write(dir.path("future.json"), value.to_string()).expect("written");
    let output = cargo_probtest(&dir, &["probtest", "report", "--json", "future.json"]);
    assert_one_line_error(&output, "future.json", "report schema 99");
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "merge",
            "shard1.json",
            "future.json",
            "-o",
            "all.json",
        ],
    );
    assert_one_line_error(&output, "future.json", "written by a newer probtest");
}

#[test]
fn sessions_in_a_target_directory_are_found_or_reported_missing() {
    let dir = TempDir::new("sessions");
    let target = dir.path("target");
    let target_arg = target.to_str().expect("utf-8 path");
    let output = cargo_probtest(&dir, &["probtest", "report", "--target-dir", target_arg]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: no probtest session in "), "{err}");

    std::fs::create_dir_all(target.join("probtest/sessions/known/procs")).expect("dirs");
    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "report",
            "--target-dir",
            target_arg,
            "--session",
            "unknown",
        ],
    );
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: session unknown: no such session in "),
        "{err}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let dir = TempDir::new("usage");
    let output = cargo_probtest(&dir, &["probtest", "merge", "a.json"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--output <FILE>"),
        "{}",
        stderr(&output)
    );
    let output = cargo_probtest(&dir, &["probtest", "report", "--bogus"]);
    assert_eq!(output.status.code(), Some(2));
}

/// Writes a session as the test processes do: the session's file of JSON lines (see
/// `probtest::store`), with a run that started and never finished.
fn write_session(target: &Path, key: &str, started: u128, outcomes: &[Outcome]) {
    let dir = target.join("probtest/sessions").join(key);
    std::fs::create_dir_all(&dir).expect("dirs");
    std::fs::write(
        dir.join("session.json"),
        serde_json::json!({"key": key, "started": started}).to_string(),
    )
    .expect("written");
    let mut lines = vec![
        serde_json::json!({"t": "process", "proc": "1-1", "per_test": false}),
        serde_json::json!({"t": "case", "info": info("triage::refund", 10)}),
    ];
    for (seq, outcome) in outcomes.iter().enumerate() {
        let run = seq as u32 + 1;
        lines.push(serde_json::json!({
            "t": "start", "proc": "1-1", "seq": seq, "package": "evals", "module": "evals",
            "case": "triage::refund", "run": run, "attempt": 1,
        }));
        lines.push(serde_json::json!({
            "t": "end", "proc": "1-1", "seq": seq, "outcome": outcome,
            "elapsed": 0.25, "cost": 0.25,
        }));
    }
    let unfinished = outcomes.len();
    lines.push(serde_json::json!({
        "t": "start", "proc": "1-1", "seq": unfinished, "package": "evals", "module": "evals",
        "case": "triage::refund", "run": unfinished + 1, "attempt": 1,
    }));
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(dir.join("runs.jsonl"), text).expect("written");
}

#[test]
fn report_renders_the_latest_session_or_a_named_one() {
    let dir = TempDir::new("session-report");
    let target = dir.path("target");
    let target_arg = target.to_str().expect("utf-8 path");
    write_session(&target, "older", 1, &[Outcome::Fail]);
    write_session(&target, "newer", 2, &[Outcome::Pass, Outcome::Pass]);

    let output = cargo_probtest(&dir, &["probtest", "report", "--target-dir", target_arg]);
    // An errored row fails the report.
    assert_eq!(output.status.code(), Some(100), "{}", stderr(&output));
    let text = stdout(&output);
    // The run that never finished counts as an error.
    assert_eq!(
        row(&text, "triage::refund"),
        [
            "triage::refund",
            "2/3",
            "[9%,",
            "99%]",
            "$0.5000",
            "1",
            "ERRORED"
        ]
    );

    let output = cargo_probtest(
        &dir,
        &[
            "probtest",
            "report",
            "--session",
            "older",
            "--json-out",
            "older.json",
        ],
    );
    // Without --target-dir or CARGO_TARGET_DIR, cargo finds no workspace here.
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: cannot find the target directory: cargo metadata failed"),
        "{err}"
    );
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-probtest"))
        .args([
            "probtest",
            "report",
            "--session",
            "older",
            "--json-out",
            "older.json",
        ])
        .current_dir(&dir.0)
        .env("CARGO_TARGET_DIR", "target")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs");
    // A failed run of an ungated case fails the report.
    assert_eq!(output.status.code(), Some(100), "{}", stderr(&output));
    let text = stdout(&output);
    assert_eq!(
        row(&text, "triage::refund"),
        [
            "triage::refund",
            "0/2",
            "[0%,",
            "84%]",
            "$0.2500",
            "FAIL",
            "(1",
            "errored)"
        ]
    );
    assert!(text.contains("Report:  older.json"), "{text}");
    let written =
        Report::from_json(&std::fs::read_to_string(dir.path("older.json")).expect("json-out"))
            .expect("a report");
    assert_eq!(written.records.len(), 2);
}
