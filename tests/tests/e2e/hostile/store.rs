//! End-to-end: a hostile session store. A `PROB_SESSION` that names no session, or is dotted
//! or a path; a full disk under the store and under the report; bytes in the store that are no
//! line; a path slipped into the report's lock file; and the size of a small report. Each
//! asserts what the user sees and that no run is silently missing.
//!
//! What needs root (mounting a tmpfs) is skipped with a message where the machine does not
//! allow it, and fails instead under `CI=true`.

use std::fs;
use std::path::Path;

use super::{fixture, key, overall, session_dir, session_report, Mounted};
use crate::support::{self, shared_target_dir, unavailable, Output};

/// Names directly in the sessions directory that only a session's own directory holds.
const SESSION_CONTENTS: &[&str] = &[
    "runs.jsonl",
    "session.json",
    "procs",
    "report",
    "unrecorded",
];

#[test]
fn a_session_key_that_names_no_session_stops_the_process_and_writes_nothing_stray() {
    let sessions = support::shared_target_dir()
        .join("probtest")
        .join("sessions");
    let message = r#"PROB_SESSION=".." is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"#;
    let output = fixture()
        .cargo_test(&["--test", "once"])
        .env("PROB_SESSION", "..")
        .run();
    // The process stops before any test runs: cargo passes its exit status on.
    output.assert_code(2);
    assert_eq!(
        output
            .stderr
            .matches(&format!("probtest: {message}\n"))
            .count(),
        1,
        "the process says so once, before any run{output}"
    );
    assert!(!output.stdout.contains("bench_once"), "no item ran{output}");
    let stray: Vec<String> = fs::read_dir(&sessions)
        .expect("the sessions directory")
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            !entry.file_type().is_ok_and(|kind| kind.is_dir())
                || SESSION_CONTENTS.contains(&name.as_str())
        })
        .map(|entry| entry.path().display().to_string())
        .collect();
    assert!(
        stray.is_empty(),
        "written into the sessions directory itself: {stray:?}{output}"
    );

    // Nor does the CLI read the sessions directory as a session.
    let target = support::shared_target_dir().to_string_lossy().into_owned();
    let refused = fixture()
        .probtest("report", &["--session", "..", "--target-dir", &target], &[])
        .run();
    refused.assert_code(2);
    assert_eq!(
        refused.stderr,
        "error: --session \"..\": not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'\n",
        "{refused}"
    );
}

/// A 64 KiB tmpfs at `dir` (made if missing), or `None` with the test skipped where mounting
/// is not permitted.
fn small_disk(dir: &Path) -> Option<Mounted> {
    fs::create_dir_all(dir).expect("a mount point");
    match Mounted::tmpfs(dir, "64k") {
        Ok(mounted) => Some(mounted),
        Err(why) => {
            unavailable("mounting a 64 KiB tmpfs", &why);
            None
        }
    }
}

/// The number in a warning `N runs could not be recorded ...`, if the summary has one.
fn unrecorded(output: &Output) -> Option<u64> {
    output.stdout.lines().find_map(|line| {
        let text = line.trim().strip_prefix("Warning: ")?;
        let (count, rest) = text.split_once(' ')?;
        rest.starts_with("run")
            .then_some(())
            .filter(|()| rest.contains("could not be recorded in the session store"))?;
        count.replace(',', "").parse().ok()
    })
}

#[test]
fn a_full_store_under_nextest_fails_the_runs_it_cannot_record_and_counts_every_run() {
    let key = key("full-nextest");
    let Some(_disk) = small_disk(&session_dir(&key)) else {
        return;
    };
    let output = fixture()
        .probtest(
            "run",
            &["--nextest"],
            &["--test", "quick", "--no-fail-fast"],
        )
        .env("PROB_SESSION", &key)
        .run();
    assert_ne!(output.code, Some(0), "{output}");
    // Every run nextest ran is in the summary: recorded, or an error of a run not recorded.
    assert_eq!(overall(&output).1, 300, "{output}");
    let lost = unrecorded(&output).unwrap_or_else(|| panic!("no unrecorded runs\n{output}"));
    assert!(lost > 0 && lost < 300, "{output}");
    // Each such run fails its item, naming the store's file and the OS error.
    let store = session_dir(&key).join("runs.jsonl");
    let failure = format!(
        "could not be recorded in the session store: {}: No space left on device",
        store.display()
    );
    assert!(output.stderr.contains(&failure), "{output}");
}

#[test]
fn a_full_store_under_cargo_test_counts_what_it_could_not_record() {
    let key = key("full-cargo");
    let Some(_disk) = small_disk(&session_dir(&key)) else {
        return;
    };
    // Less room than a test binary's slot file takes: its runs go to the log, which fills up.
    fs::write(session_dir(&key).join("filler"), vec![b'x'; 40 * 1024]).expect("a filler");
    let output = fixture()
        .probtest("run", &[], &["--test", "quick"])
        .env("PROB_SESSION", &key)
        .run();
    assert_ne!(output.code, Some(0), "{output}");
    let (_, recorded) = overall(&output);
    let lost = unrecorded(&output).unwrap_or_else(|| panic!("no unrecorded runs\n{output}"));
    assert_eq!(recorded + lost, 300, "{output}");
    assert!(
        output.stdout.contains("No space left on device"),
        "{output}"
    );
}

#[test]
fn a_report_on_a_full_disk_fails_the_run_and_is_not_claimed() {
    let fixture = fixture();
    let dir = fixture.path("out/full-report");
    let Some(_disk) = small_disk(&dir) else {
        return;
    };
    // Leave a little room: the report's first writes may fit, the whole report does not.
    fs::write(dir.join("filler"), vec![b'x'; 60 * 1024]).expect("a filler");
    let report = dir.join("report.json");
    let output = fixture
        .probtest("run", &["--nextest"], &["--test", "few", "--no-fail-fast"])
        .env("PROB_JSON", report.to_string_lossy())
        .run();
    assert_ne!(output.code, Some(0), "{output}");
    assert!(
        output.stderr.contains("error: the session report ")
            && output.stderr.contains("was not written"),
        "{output}"
    );
    assert!(!output.stdout.contains("Report:"), "{output}");
    // The runs themselves are all there.
    assert_eq!(overall(&output), (17, 17), "{output}");
    // Under plain nextest, the process that could not update the report fails its item.
    let plain = fixture
        .nextest("run", &["--test", "few", "--no-fail-fast"])
        .env("PROB_JSON", report.to_string_lossy())
        .run();
    assert_ne!(plain.code, Some(0), "{plain}");
    assert!(
        plain
            .stderr
            .contains("is recorded, but the session report could not be updated"),
        "{plain}"
    );
    let temps: Vec<_> = fs::read_dir(&dir)
        .expect("listable")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(temps.is_empty(), "temporary files left: {temps:?}");
}

#[test]
fn unreadable_bytes_in_the_store_are_counted_in_the_summary_the_json_and_report() {
    let fixture = fixture();
    let key = key("unreadable");
    let run = fixture
        .nextest("run", &["--test", "few"])
        .env("PROB_SESSION", &key)
        .run();
    run.assert_code(0);
    // 4 KiB of bytes that are no line (no newline among them), glued to the front of a run's
    // start line in the middle of the store.
    let log = session_dir(&key).join("runs.jsonl");
    let text = fs::read_to_string(&log).expect("the store");
    let at = text
        .match_indices("\n{\"t\":\"start\"")
        .nth(8)
        .map(|(at, _)| at + 1)
        .expect("a ninth start line");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            match (seed >> 24) as u8 {
                b'\n' => b'?',
                byte => byte,
            }
        })
        .collect();
    let mut damaged = text.as_bytes()[..at].to_vec();
    damaged.extend_from_slice(&garbage);
    damaged.extend_from_slice(&text.as_bytes()[at..]);
    fs::write(&log, damaged).expect("written");
    let json = fixture.path("out/unreadable.json");
    let report = session_report(&key, &["--json-out", &json.to_string_lossy()]);
    report.assert_code(0);
    let warning = report
        .stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("Warning: store: "))
        .unwrap_or_else(|| panic!("no store warning\n{report}"));
    assert!(
        warning.contains("unreadable bytes skipped; 1 run may be missing"),
        "{warning}"
    );
    let skipped: u64 = warning
        .split_whitespace()
        .next()
        .expect("a count")
        .replace(',', "")
        .parse()
        .expect("a number");
    assert!(skipped > 4096, "{warning}");
    // 16 runs are read; the 17th is the one that may be missing, and it is said.
    assert_eq!(overall(&report), (16, 16), "{report}");
    let written = support::read_json(&json);
    let warnings = written["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.starts_with("store: "))),
        "{written}"
    );
}

#[test]
fn a_path_slipped_into_the_report_lock_file_is_never_written() {
    let fixture = fixture();
    let key = key("lock-path");
    fixture.remove("out/lock-path");
    let report = fixture.path("out/lock-path/report.json");
    let foreign = fixture.path("out/lock-path/nobody-configured.json");
    let run = || {
        fixture
            .nextest("run", &["--test", "few"])
            .env("PROB_SESSION", &key)
            .env("PROB_JSON", report.to_string_lossy())
            .run()
    };
    run().assert_code(0);
    let lock = session_dir(&key).join("report").join("lock");
    let hex: String = foreign
        .to_string_lossy()
        .bytes()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut listed = fs::read(&lock).expect("the lock file");
    listed.extend_from_slice(format!("{hex}\t\n").as_bytes());
    fs::write(&lock, listed).expect("written");
    run().assert_code(0);
    assert!(!foreign.exists(), "a path nobody configured was written");
    let written = support::read_json(&report);
    assert_eq!(written["records"].as_array().map(Vec::len), Some(34));
}

#[test]
fn a_small_report_is_small() {
    let fixture = fixture();
    fixture.remove("out/small");
    let report = fixture.path("out/small/report.json");
    for runner in ["nextest", "cargo"] {
        let run = match runner {
            "nextest" => fixture.nextest("run", &["--test", "few"]),
            _ => fixture.cargo_test(&["--test", "few"]),
        };
        run.env("PROB_JSON", report.to_string_lossy())
            .env("PROB_SESSION", key(&format!("small-{runner}")))
            .run()
            .assert_code(0);
        let size = fs::metadata(&report).expect("the report").len();
        assert!(
            size < 32 * 1024,
            "{runner}: a 17-run report of {size} bytes"
        );
        fs::remove_file(&report).expect("removed");
    }
}

#[test]
fn dotted_and_path_like_session_keys_are_refused_or_kept_inside_the_sessions_folder() {
    let sessions = shared_target_dir().join("probtest").join("sessions");
    for key in [".", "..."] {
        let output = fixture()
            .cargo_test(&["--test", "once"])
            .env("PROB_SESSION", key)
            .run();
        // A bad setting stops the test binary at start-up, before any run, in one line.
        output.assert_code(2);
        assert!(
            output
                .stderr
                .contains(&format!("PROB_SESSION={key:?} is not a usable session key")),
            "{output}"
        );
    }
    // A key that is a path is one folder of the sessions folder, its separators cleaned.
    let unique = format!("{}", std::process::id());
    for (key, folder) in [
        (format!("a/../b{unique}"), format!("a_.._b{unique}")),
        (format!("/tmp/x{unique}"), format!("_tmp_x{unique}")),
    ] {
        fixture()
            .cargo_test(&["--test", "once"])
            .env("PROB_SESSION", &key)
            .run()
            .assert_code(0);
        assert!(
            sessions.join(&folder).join("runs.jsonl").is_file(),
            "{key} recorded into {folder}"
        );
        assert!(!Path::new(&format!("/tmp/x{unique}")).exists());
    }
    // `cargo probtest run` refuses the same keys before running anything.
    let refused = fixture()
        .probtest("run", &[], &["--test", "once"])
        .env("PROB_SESSION", "..")
        .run();
    refused.assert_code(2);
    assert!(
        refused
            .stderr
            .starts_with("error: PROB_SESSION=\"..\" is not a usable session key"),
        "{refused}"
    );
}
