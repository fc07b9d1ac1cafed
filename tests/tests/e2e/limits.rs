//! End-to-end: limits that hold across threads and processes (`probtest::limit`, a limit of 2
//! never has more than 2 holders, a per-minute limit spreads starts, a killed holder frees its
//! slot) and per-run timeouts (sync and async) under `cargo test` and `cargo nextest run`: a
//! run timed out holding a limit frees it, waiting counts toward the timeout, an async body
//! that never yields times out, and a limit key that would split the config's text is refused.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::support::{counts, report_records, report_row, shared_target_dir, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("limits")
            .test("limits", include_str!("../../fixtures/limits.rs"))
            .build()
    })
}

/// The `(start, end)` of every holder the log names, in microseconds.
fn held(lines: &[String]) -> Vec<(u128, u128)> {
    lines
        .iter()
        .filter_map(|line| {
            let mut words = line.strip_prefix("held ")?.split(' ');
            Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
        })
        .collect()
}

/// The most holders at any one time.
fn most_at_once(holders: &[(u128, u128)]) -> i32 {
    let mut events: Vec<(u128, i32)> = holders
        .iter()
        .flat_map(|&(start, end)| [(start, 1), (end, -1)])
        .collect();
    // At the same instant, a slot is freed before it is taken again.
    events.sort();
    let (mut now, mut most) = (0, 0);
    for (_, change) in events {
        now += change;
        most = most.max(now);
    }
    most
}

fn check_two_at_most(output: &Output, log: &str, report: &Value) {
    let holders = held(&fixture().read_lines(log));
    assert_eq!(holders.len(), 8, "every run held the limit once{output}");
    assert_eq!(
        most_at_once(&holders),
        2,
        "two holders at most, and two at once with eight runs waiting: {holders:?}{output}"
    );
    let records = report_records(report, "held");
    assert_eq!(records.len(), 8);
    let waited: Vec<f64> = records
        .iter()
        .map(|record| record["waited"].as_f64().unwrap_or(0.0))
        .collect();
    // Eight runs of 300 ms through two slots: the last ones wait about 900 ms.
    assert!(
        waited.iter().any(|w| *w > 0.5),
        "waits are recorded: {waited:?}"
    );
    for record in &records {
        if record["waited"].as_f64().unwrap_or(0.0) > 0.0 {
            assert_eq!(record["waited_for"], "shared", "{record}");
        }
        // The time a run took leaves its wait out.
        let elapsed = record["elapsed"].as_f64().expect("elapsed");
        assert!(
            elapsed < 0.8,
            "elapsed {elapsed} includes the wait: {record}"
        );
    }
}

#[test]
fn a_limit_of_two_is_never_exceeded_by_eight_threads_under_cargo_test() {
    let fixture = fixture();
    fixture.remove("held-threads.log");
    fixture.remove("held-threads.json");
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "bench_held",
            "--test-threads",
            "8",
        ])
        .env("PROB_LIMIT_SHARED", "2")
        .env("PT_LOG", fixture.path("held-threads.log").to_string_lossy())
        .env("PROB_JSON", "held-threads.json")
        .run();
    output.assert_code(0);
    let report = fixture.read_json("held-threads.json");
    check_two_at_most(&output, "held-threads.log", &report);
    // Eight runs of 0.3 s waited about 3.6 s in all: longer than they took.
    let line = output
        .stdout
        .lines()
        .find(|line| line.starts_with("  Limits:  waited "))
        .unwrap_or_else(|| panic!("the summary does not say that waiting dominated{output}"));
    assert!(
        line.contains(" s for shared; the runs themselves took 2."),
        "{line}"
    );
}

#[test]
fn a_limit_of_two_is_never_exceeded_by_eight_nextest_processes() {
    let fixture = fixture();
    fixture.remove("held-processes.log");
    fixture.remove("held-processes.json");
    let output = fixture
        .nextest("run", &["--test", "limits", "-j", "8", "bench_held"])
        .env("PROB_LIMIT_SHARED", "2")
        .env(
            "PT_LOG",
            fixture.path("held-processes.log").to_string_lossy(),
        )
        .env("PROB_JSON", "held-processes.json")
        .run();
    output.assert_code(0);
    let report = fixture.read_json("held-processes.json");
    check_two_at_most(&output, "held-processes.log", &report);
}

#[test]
fn a_per_minute_limit_spreads_starts() {
    let fixture = fixture();
    fixture.remove("paced.log");
    // 300 a minute: one start each 200 ms, however many threads are ready.
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "bench_paced",
            "--test-threads",
            "8",
        ])
        .env("PROB_LIMIT_PACED_PER_MINUTE", "300")
        .env("PT_LOG", fixture.path("paced.log").to_string_lossy())
        .run();
    output.assert_code(0);
    let mut starts: Vec<u128> = fixture
        .read_lines("paced.log")
        .iter()
        .filter_map(|line| line.strip_prefix("paced ")?.parse().ok())
        .collect();
    starts.sort_unstable();
    assert_eq!(starts.len(), 5, "{output}");
    let gaps: Vec<u128> = starts.windows(2).map(|pair| pair[1] - pair[0]).collect();
    // Each start is reserved 200 ms after the last; the sleep's slack on a busy machine only
    // adds to a gap, and a late previous start can take at most a little from the next.
    assert!(
        gaps.iter().all(|gap| *gap >= 120_000),
        "starts closer than the limit allows: {gaps:?} µs{output}"
    );
    assert!(starts[4] - starts[0] >= 750_000, "{gaps:?}");
}

/// The test binary of the fixture, built.
fn test_binary() -> PathBuf {
    let output = fixture()
        .cargo_test(&["--test", "limits", "--no-run"])
        .run();
    output.assert_code(0);
    let line = output
        .stderr
        .lines()
        .find(|line| line.contains("Executable tests/limits.rs"))
        .unwrap_or_else(|| panic!("cargo names no test binary{output}"));
    let path = line
        .rsplit_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .expect("the binary's path in parentheses");
    PathBuf::from(path)
}

/// The test binary, run directly as cargo would, in the session `session`.
fn direct(binary: &PathBuf, session: &str, log: &str, test: &str) -> Command {
    let mut command = Command::new(binary);
    command
        .args(["--exact", test, "--ignored", "--nocapture"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("PROB_SESSION", session)
        .env("PROB_LIMIT_SOLO", "1")
        .env("PT_LOG", fixture().path(log))
        .current_dir(fixture().dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

#[test]
fn a_killed_holder_frees_its_slot() {
    let fixture = fixture();
    let binary = test_binary();
    let log = "killed.log";
    fixture.remove(log);
    let session = format!("killed-holder-{}", std::process::id());
    let mut holder = direct(&binary, &session, log, "bench_hold_until_killed")
        .spawn()
        .expect("start the holder");
    let started = Instant::now();
    while !fixture
        .read_lines(log)
        .iter()
        .any(|line| line.starts_with("holding"))
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the holder never held the limit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let lock = shared_target_dir()
        .join("probtest/sessions")
        .join(&session)
        .join("limits/solo.0.lock");
    let file = std::fs::File::open(&lock)
        .unwrap_or_else(|e| panic!("no lock file {}: {e}", lock.display()));
    assert!(
        matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)),
        "the holder's slot is locked while it lives"
    );
    holder.kill().expect("kill the holder");
    holder.wait().expect("reap the holder");
    let started = Instant::now();
    let status = direct(&binary, &session, log, "bench_take_after_kill")
        .env("PROB_TIMEOUT", "30s")
        .status()
        .expect("run the taker");
    assert!(status.success(), "the slot of a killed holder was taken");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(fixture.read_lines(log).iter().any(|line| line == "taken"));
}

/// Checks the hung runs' records: an error at the deadline with the timeout's message, the
/// other runs passing, the async body dropped.
fn check_timeouts(output: &Output, report: &Value, log: &str) {
    let message = "the run exceeded its timeout of 500ms";
    assert_eq!(
        counts(report_row(report, "sync_hang")),
        [2, 0, 1, 3],
        "{output}"
    );
    assert_eq!(
        counts(report_row(report, "async_hang")),
        [1, 0, 1, 2],
        "{output}"
    );
    let sync = report_records(report, "sync_hang");
    assert_eq!(sync[1]["outcome"], "error");
    assert_eq!(sync[1]["error"], message);
    let elapsed = sync[1]["elapsed"].as_f64().expect("elapsed");
    assert!(
        (0.5..5.0).contains(&elapsed),
        "recorded at the deadline: {elapsed}"
    );
    let asynchronous = report_records(report, "async_hang");
    assert_eq!(asynchronous[0]["error"], message);
    assert_eq!(asynchronous[1]["outcome"], "pass");
    let lines = fixture().read_lines(log);
    for expected in ["sync 1 done", "sync 3 done", "async 1 dropped"] {
        assert!(
            lines.iter().any(|line| line == expected),
            "{expected:?} missing from {lines:?}"
        );
    }
    // The hung bodies sleep for a minute: nothing waited for them.
    assert!(output.elapsed < Duration::from_secs(55), "{output}");
}

#[test]
fn timeouts_end_hung_runs_under_cargo_test() {
    let fixture = fixture();
    fixture.remove("timeouts-test.log");
    fixture.remove("timeouts-test.json");
    let output = fixture
        .cargo_test(&["--test", "limits", "--", "--ignored", "_hang"])
        .env(
            "PT_LOG",
            fixture.path("timeouts-test.log").to_string_lossy(),
        )
        .env("PROB_JSON", "timeouts-test.json")
        .run();
    output.assert_code(101);
    let report = fixture.read_json("timeouts-test.json");
    check_timeouts(&output, &report, "timeouts-test.log");
    assert_eq!(
        output.stderr.matches("its thread is left running").count(),
        1,
        "the thread left behind is said once{output}"
    );
}

#[test]
fn timeouts_end_hung_runs_under_nextest() {
    let fixture = fixture();
    fixture.remove("timeouts-nextest.log");
    fixture.remove("timeouts-nextest.json");
    let output = fixture
        .nextest(
            "run",
            &[
                "--test",
                "limits",
                "-j",
                "8",
                "--no-fail-fast",
                "--run-ignored",
                "only",
                "_hang",
            ],
        )
        .env(
            "PT_LOG",
            fixture.path("timeouts-nextest.log").to_string_lossy(),
        )
        .env("PROB_JSON", "timeouts-nextest.json")
        .run();
    output.assert_code(100);
    let report = fixture.read_json("timeouts-nextest.json");
    check_timeouts(&output, &report, "timeouts-nextest.log");
}

#[test]
fn a_bad_timeout_or_limit_setting_is_one_line_naming_it() {
    let fixture = fixture();
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "bench_held",
            "--test-threads",
            "8",
        ])
        .env("PROB_LIMIT_SHARED", "two")
        .run();
    // The process stops before any test runs: cargo passes its exit status on.
    output.assert_code(2);
    assert_eq!(
        output
            .stderr
            .matches("probtest: PROB_LIMIT_SHARED: expected a whole number at least 1, got `two`\n")
            .count(),
        1,
        "said once, before any run{output}"
    );
    assert!(!output.stdout.contains("bench_held"), "{output}");
    let output = fixture
        .cargo_test(&["--test", "limits", "--", "bench_paced"])
        .env("PROB_TIMEOUT", "soon")
        .run();
    // The process stops before any test runs: cargo passes its exit status on.
    output.assert_code(2);
    assert_eq!(
        output
            .stderr
            .matches(
                "probtest: PROB_TIMEOUT: expected a duration such as `30s` or `1m30s`, got `soon`\n"
            )
            .count(),
        1,
        "said once, before any run{output}"
    );
}

#[test]
fn prob_timeout_times_out_a_bench_without_its_own() {
    let fixture = fixture();
    fixture.remove("env-timeout.json");
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "bench_held",
            "--test-threads",
            "8",
        ])
        .env("PROB_TIMEOUT", "100ms")
        .env("PROB_JSON", "env-timeout.json")
        .run();
    output.assert_code(101);
    let report = fixture.read_json("env-timeout.json");
    // No limit is set here: each run sleeps its 300 ms alone, past the 100 ms.
    assert_eq!(
        counts(report_row(&report, "held")),
        [0, 0, 8, 8],
        "{output}"
    );
    for record in report_records(&report, "held") {
        assert_eq!(record["error"], "the run exceeded its timeout of 100ms");
    }
}

/// Longer than any of these runs takes, far shorter than a hang: a regression fails the test.
const NO_HANG: Duration = Duration::from_secs(180);

#[test]
fn a_run_that_times_out_holding_a_limit_frees_its_slot_for_the_next() {
    let fixture = fixture();
    fixture.remove("solo-timeout.log");
    fixture.remove("solo-timeout.json");
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "--ignored",
            "solo_timeout",
            "--test-threads",
            "1",
        ])
        .env("PROB_LIMIT_SOLO", "1")
        .env("PT_LOG", fixture.path("solo-timeout.log").to_string_lossy())
        .env("PROB_JSON", "solo-timeout.json")
        .within(NO_HANG)
        .run();
    output.assert_code(101);
    let report = fixture.read_json("solo-timeout.json");
    assert_eq!(
        counts(report_row(&report, "solo_timeout")),
        [1, 0, 1, 2],
        "{output}"
    );
    let records = report_records(&report, "solo_timeout");
    assert_eq!(records[0]["error"], "the run exceeded its timeout of 300ms");
    assert_eq!(records[1]["outcome"], "pass", "{output}");
    assert_eq!(fixture.read_lines("solo-timeout.log"), ["solo 2 done"]);
    // The hung body sleeps for a minute: the second run did not wait for it.
    let waited = records[1]["waited"].as_f64().unwrap_or(0.0);
    assert!(waited < 10.0, "{}", records[1]);
}

#[test]
fn waiting_for_a_limit_counts_toward_the_timeout() {
    let fixture = fixture();
    fixture.remove("queue.log");
    fixture.remove("queue.json");
    let output = fixture
        .cargo_test(&[
            "--test",
            "limits",
            "--",
            "--ignored",
            "queue_",
            "--test-threads",
            "2",
        ])
        .env("PROB_LIMIT_QUEUE", "1")
        .env("PT_LOG", fixture.path("queue.log").to_string_lossy())
        .env("PROB_JSON", "queue.json")
        .within(NO_HANG)
        .run();
    output.assert_code(101);
    let report = fixture.read_json("queue.json");
    let waiter = report_records(&report, "queue_waiter");
    assert_eq!(waiter.len(), 1, "{output}");
    assert_eq!(
        waiter[0]["error"], "the run exceeded its timeout of 1500ms waiting for limit `queue`",
        "{output}"
    );
    assert_eq!(waiter[0]["waited_for"], "queue", "{}", waiter[0]);
    let waited = waiter[0]["waited"].as_f64().expect("waited");
    assert!((0.5..1.6).contains(&waited), "{}", waiter[0]);
    let holder = report_records(&report, "queue_holder");
    assert_eq!(holder[0]["error"], "the run exceeded its timeout of 4s");
    let lines = fixture.read_lines("queue.log");
    assert_eq!(lines, ["queue held"], "the waiter never took the limit");
}

/// Checks the runs of `bench_async_spin`: the spinning one an error at its deadline, the other
/// passing.
fn check_spin(output: &Output, report: &Value, log: &str) {
    assert_eq!(
        counts(report_row(report, "async_spin")),
        [1, 0, 1, 2],
        "{output}"
    );
    let records = report_records(report, "async_spin");
    assert_eq!(records[0]["error"], "the run exceeded its timeout of 500ms");
    let elapsed = records[0]["elapsed"].as_f64().expect("elapsed");
    assert!(
        (0.5..5.0).contains(&elapsed),
        "recorded at the deadline: {elapsed}"
    );
    assert_eq!(records[1]["outcome"], "pass");
    assert_eq!(fixture().read_lines(log), ["spin 2 done"]);
}

#[test]
fn an_async_body_that_never_yields_times_out() {
    let fixture = fixture();
    fixture.remove("spin-test.log");
    fixture.remove("spin-test.json");
    let output = fixture
        .cargo_test(&["--test", "limits", "--", "--ignored", "async_spin"])
        .env("PT_LOG", fixture.path("spin-test.log").to_string_lossy())
        .env("PROB_JSON", "spin-test.json")
        .within(NO_HANG)
        .run();
    output.assert_code(101);
    check_spin(
        &output,
        &fixture.read_json("spin-test.json"),
        "spin-test.log",
    );
    assert_eq!(
        output.stderr.matches("its thread is left running").count(),
        1,
        "{output}"
    );

    fixture.remove("spin-nextest.log");
    fixture.remove("spin-nextest.json");
    let output = fixture
        .nextest(
            "run",
            &[
                "--test",
                "limits",
                "--no-fail-fast",
                "--run-ignored",
                "only",
                "async_spin",
            ],
        )
        .env("PT_LOG", fixture.path("spin-nextest.log").to_string_lossy())
        .env("PROB_JSON", "spin-nextest.json")
        .within(NO_HANG)
        .run();
    output.assert_code(100);
    check_spin(
        &output,
        &fixture.read_json("spin-nextest.json"),
        "spin-nextest.log",
    );
}

#[test]
fn a_config_limit_key_that_would_split_into_others_fails_the_build_naming_it() {
    let fixture = Fixture::builder("limit-key")
        .metadata("limits = { \"zz,weird=1/2,yy\" = 3 }")
        .test("limits", include_str!("../../fixtures/limits.rs"))
        .build();
    let output = fixture.cargo_test(&["--test", "limits", "--no-run"]).run();
    output.assert_code(101);
    let manifest = fixture.path("Cargo.toml");
    let expected = format!(
        "{}: [package.metadata.probtest] limits: the limit key \"zz,weird=1/2,yy\" holds `,`; a limit key cannot hold `,`, `=` or `/` (use letters, digits, `-`, `_` or `.`)",
        manifest.display()
    );
    assert_eq!(
        output.stderr.matches(&expected).count(),
        1,
        "one line naming the file and the key{output}"
    );
}
