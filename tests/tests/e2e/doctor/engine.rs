//! End-to-end: the doctor's run engine against tests that would fool or hang it: a test far
//! longer than the budget, one that leaves a child holding stdout open, one whose child prints
//! a forged `ok` for it, and a doctor ended by `SIGTERM`, which must leave no process and no
//! scratch directory behind.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::support::{self, Fixture};

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("doctor-engine")
            .test(
                "engine",
                include_str!("../../../fixtures/doctor_engine/engine.rs"),
            )
            .build();
        fixture.cargo_test(&["--no-run"]).run().assert_code(0);
        fixture
    })
}

/// `cargo probtest doctor <test> --test engine <extra> --json <path>`: what it printed, its
/// JSON, and how long it took.
fn doctor(test: &str, extra: &[&str]) -> (support::Output, serde_json::Value, Duration) {
    let fixture = fixture();
    let path = fixture.path(&format!("out/{test}.json"));
    let text = path.to_string_lossy().into_owned();
    let mut args = vec![test, "--test", "engine", "--json", &text];
    args.extend_from_slice(extra);
    // The command's own time: not the wait for a test that has the machine alone.
    let output = fixture.probtest("doctor", &args, &[]).run();
    let took = output.elapsed;
    let report = if path.exists() {
        support::read_json(&path)
    } else {
        serde_json::Value::Null
    };
    (output, report, took)
}

#[test]
fn the_budget_bounds_a_run_under_way() {
    let (output, report, took) = doctor("slow_victim", &["--budget", "4"]);
    assert_eq!(report["verdict"], "incomplete", "{output}\n{report:#}");
    // The build is done; 4 s of runs, and the slack of stopping them.
    assert!(took < Duration::from_secs(25), "took {took:?}{output}");
}

#[test]
fn a_child_holding_stdout_open_does_not_stretch_the_runs() {
    let (output, report, took) = doctor(
        "spawns_a_sleeper",
        &["--axes", "env", "--runs", "4", "--budget", "60"],
    );
    assert_eq!(report["verdict"], "not-flaky", "{output}\n{report:#}");
    // Each of the runs would last 30 s if the doctor waited for the sleeper's end of the pipe.
    assert!(took < Duration::from_secs(25), "took {took:?}{output}");
}

#[test]
fn a_status_line_printed_by_a_child_decides_nothing() {
    let (output, report, _) = doctor("forged_victim", &["--axes", "env", "--runs", "4"]);
    assert_eq!(
        report["verdict"], "deterministic-failure",
        "{output}\n{report:#}"
    );
    let baseline = &report["evidence"][0];
    assert_eq!(baseline["runs"], 4, "{report:#}");
    assert_eq!(baseline["failed"], 4, "{report:#}");
}

#[cfg(unix)]
#[test]
fn sigterm_leaves_no_process_and_no_scratch_directory() {
    let fixture = fixture();
    let tmp = fixture.path("tmp-sigterm");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).expect("a temporary directory");
    let _machine = support::machine::share();
    let mut child = std::process::Command::new(support::cli_binary())
        .args(["probtest", "doctor", "slow_victim", "--test", "engine"])
        .current_dir(fixture.dir())
        .env("TMPDIR", &tmp)
        .env("CARGO_TARGET_DIR", support::shared_target_dir())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the doctor starts");
    // Until its first run is under way: its scratch directory exists.
    let started = Instant::now();
    while std::fs::read_dir(&tmp).map_or(0, |dir| dir.count()) == 0
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let stopping = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the doctor's status") {
            break status;
        }
        assert!(
            stopping.elapsed() < Duration::from_secs(10),
            "the doctor did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // 128 + SIGTERM (15).
    assert_eq!(status.code(), Some(143));
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .expect("the temporary directory")
        .flatten()
        .map(|entry| entry.path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // The test process (`engine-<hash> --exact slow_victim ... --logfile <tmp>/...`) was killed
    // with its group; other tests' doctors run the same test with other directories.
    std::thread::sleep(Duration::from_millis(200));
    let processes = std::process::Command::new("pgrep")
        .args(["-f", "tmp-sigterm/probtest-doctor"])
        .output()
        .expect("pgrep runs");
    assert!(
        processes.stdout.is_empty(),
        "still running: {}",
        String::from_utf8_lossy(&processes.stdout)
    );
}
