//! End-to-end: test processes that die under nextest. Processes killed at random while their
//! runs run, and a process whose test never runs after its run's start was recorded before
//! `main`. Each asserts that no run is silently missing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{fixture, key, overall, session_report};
use crate::support::{self, counts, report_row, shared_target_dir};

/// Sends SIGKILL to random test processes of `binary` (its file name's prefix) that nextest
/// runs, until `stop`; returns how many it killed.
fn killer(binary: &'static str, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let killed = AtomicUsize::new(0);
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        while !stop.load(Ordering::Relaxed) {
            let victims: Vec<u32> = fs::read_dir("/proc")
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
                .filter(|pid| {
                    let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    let cmdline = String::from_utf8_lossy(&cmdline);
                    let mut args = cmdline.split('\0');
                    let program = args.next().unwrap_or_default();
                    let is_binary = Path::new(program)
                        .file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with(binary));
                    is_binary && cmdline.contains("--exact\0bench_slow")
                })
                .collect();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if !victims.is_empty() && seed.is_multiple_of(3) {
                let pid = victims[(seed as usize / 3) % victims.len()];
                let status = Command::new("kill").args(["-9", &pid.to_string()]).status();
                if status.is_ok_and(|status| status.success()) {
                    killed.fetch_add(1, Ordering::Relaxed);
                }
            }
            std::thread::sleep(Duration::from_millis(15));
        }
        killed.into_inner()
    })
}

#[test]
fn test_processes_killed_under_nextest_are_errors_never_missing() {
    let fixture = fixture();
    // Built first, so that the killer meets test processes only.
    fixture
        .nextest("run", &["--test", "slow", "--no-run"])
        .run()
        .assert_code(0);
    fixture.remove("out/killed");
    let report = fixture.path("out/killed/report.json");
    let stop = Arc::new(AtomicBool::new(false));
    let killing = killer("slow-", stop.clone());
    let output = fixture
        .probtest("run", &["--nextest"], &["--test", "slow", "--no-fail-fast"])
        .env("PROB_JSON", report.to_string_lossy())
        .run();
    stop.store(true, Ordering::Relaxed);
    let killed = killing.join().expect("the killer");
    assert!(killed > 0, "no test process was killed\n{output}");
    // nextest names each killed test as it happens and again in its final summary.
    let signalled = output
        .stderr
        .lines()
        .filter(|line| line.trim_start().starts_with("SIGKILL ["))
        .filter_map(|line| line.split_whitespace().last())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    // Every run nextest executed is counted: records and reconciled errors make all 120.
    let (passed, total) = overall(&output);
    assert_eq!(total, 120, "{output}");
    // A process killed after its run ended is a pass nextest reports as killed.
    assert!(passed + signalled as u64 >= 120, "{output}");
    let row = output
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("slow "))
        .unwrap_or_else(|| panic!("no row of `slow`\n{output}"));
    let errored = row
        .split("  ")
        .find_map(|cell| cell.trim().strip_suffix(" ERRORED"))
        .map_or(0, |count| count.parse::<u64>().expect("a count"));
    assert_eq!(passed + errored, 120, "{output}");
    assert!(errored as usize <= signalled, "{output}");
    assert_ne!(output.code, Some(0), "{output}");
    // The report holds them too: the errors reconciled after the runner exited included.
    let written = support::read_json(&report);
    assert_eq!(
        written["records"].as_array().map(Vec::len),
        Some(120),
        "{output}"
    );
    assert_eq!(counts(report_row(&written, "slow"))[3], 120, "{written}");
}

/// The newest test binary `name` of the fixtures' shared target directory.
fn test_binary(name: &str) -> PathBuf {
    let deps = shared_target_dir().join("debug").join("deps");
    let prefix = format!("{name}-");
    fs::read_dir(&deps)
        .expect("the deps directory")
        .filter_map(Result::ok)
        .filter(|entry| {
            let file = entry.file_name().to_string_lossy().into_owned();
            file.starts_with(&prefix) && !file.contains('.')
        })
        .max_by_key(|entry| entry.metadata().and_then(|m| m.modified()).ok())
        .map(|entry| entry.path())
        .unwrap_or_else(|| panic!("no test binary {name} in {}", deps.display()))
}

#[test]
fn a_nextest_process_records_its_run_before_main() {
    let fixture = fixture();
    fixture
        .cargo_test(&["--test", "few", "--no-run"])
        .run()
        .assert_code(0);
    let key = key("before-main");
    // The process nextest would start for run 5, whose test filter then matches nothing: the
    // body never runs, as when a process is killed between start-up and the test.
    let output = Command::new(test_binary("few"))
        .args(["--exact", "no_such_test"])
        .env("NEXTEST", "1")
        .env("NEXTEST_TEST_PHASE", "run")
        .env("NEXTEST_EXECUTION_MODE", "process-per-test")
        .env("NEXTEST_TEST_NAME", "bench_few::run05")
        .env("NEXTEST_BINARY_ID", "pt-hostile::few")
        .env("PROB_SESSION", &key)
        .env_remove("PROB_JSON")
        .output()
        .expect("the test binary runs");
    assert!(output.status.success(), "{output:?}");
    let report = session_report(&key, &[]);
    // The run errored: `report` exits 100.
    report.assert_code(100);
    assert!(
        report
            .stdout
            .contains("Overall: 0/1 passed (0%), 1 errored"),
        "{report}"
    );
}
