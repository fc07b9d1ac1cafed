//! End-to-end: hostile report paths and values. `PROB_JSON` at a symlink, at `/dev/null`, at a
//! directory, at a FIFO and on a full disk; `cargo probtest merge -o` and `report --json-out`
//! at a symlink and a directory; costs whose sum overflows; a `PROB_SESSION` that names no
//! session; a `PROB_DELAY` of years. And a hostile session store: a full disk under the store
//! and under the report, bytes in the store that are no line, a path slipped into the report's
//! lock file, and test processes killed at random under nextest. Each asserts what the user
//! sees and that no run is silently missing.
//!
//! What needs root (mounting a tmpfs) or a device (`/dev/null`) is skipped with a message where
//! the machine does not allow it, and fails instead under `CI=true`.

mod support;

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use support::{counts, report_row, shared_target_dir, unavailable, Fixture, Output};

/// Two clean runs: a report of one row.
const STEADY: &str = r#"//! Fixture: two clean runs.

use probtest::probability;

/// Two clean runs.
#[probability(runs = 2)]
fn bench_steady() {}
"#;

/// Runs whose records outgrow a small disk, even without the report's free space.
const BIG: &str = r#"//! Fixture: runs whose records together take some 100 KB.

use probtest::{probability, record_usage, TokenUsage};

/// Each run names a model of a thousand characters.
#[probability(runs = 80)]
fn bench_big() {
    record_usage(&TokenUsage {
        model: "m".repeat(1000),
        input_tokens: 1,
        ..Default::default()
    });
}
"#;

/// Two runs whose costs add up past the largest number.
const COSTLY: &str = r#"//! Fixture: two runs that cost 1e308 each.

use probtest::{probability, record_cost};

/// Each run costs 1e308; together, more than a float holds.
#[probability(runs = 2)]
fn bench_costly() {
    record_cost(1e308);
}
"#;

/// One run, which never waits for a delay.
const ONCE: &str = r#"//! Fixture: a single run.

use probtest::probability;

/// One clean run.
#[probability]
fn bench_once() {}
"#;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("hostile")
            .test("steady", STEADY)
            .test("big", BIG)
            .test("costly", COSTLY)
            .test("once", ONCE)
            .test("quick", QUICK)
            .test("slow", SLOW)
            .test("few", FEW)
            .build()
    })
}

/// A fresh directory of the fixture for one test.
fn fresh_dir(relative: &str) -> PathBuf {
    let fixture = fixture();
    fixture.remove(relative);
    let dir = fixture.path(relative);
    fs::create_dir_all(&dir).expect("a test directory");
    dir
}

/// The hidden temporary files of atomic writes left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".tmp"))
                .collect()
        })
        .unwrap_or_default()
}

/// `cargo test --test <test>` with `PROB_JSON` set to `report`.
fn run_with_report(test: &str, report: &Path) -> Output {
    fixture()
        .cargo_test(&["--test", test])
        .env("PROB_JSON", report.to_string_lossy())
        .run()
}

/// The report of `bench_steady`, as its two runs make it.
#[track_caller]
fn assert_steady_report(report: &Value, output: &Output) {
    assert_eq!(
        counts(report_row(report, "steady")),
        [2, 0, 0, 2],
        "{output}"
    );
}

/// That `link` is a symlink still, not a file put in its place.
#[track_caller]
fn assert_still_a_link(link: &Path, output: &Output) {
    assert!(
        fs::symlink_metadata(link)
            .expect("the link")
            .file_type()
            .is_symlink(),
        "the link was replaced by a file{output}"
    );
}

#[test]
fn under_nextest_a_symlinked_report_path_is_patched_through_the_link() {
    let dir = fresh_dir("out/symlink-nextest");
    let target = dir.join("target.json");
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).expect("a dangling link");
    let output = fixture()
        .nextest("run", &["--test", "steady"])
        .env("PROB_JSON", link.to_string_lossy())
        .run();
    output.assert_code(0);
    assert_still_a_link(&link, &output);
    // One process per run: the second patched what the first wrote, through the link.
    assert_steady_report(&support::read_json(&target), &output);
    assert!(leftovers(&dir).is_empty());
}

#[test]
fn a_symlinked_report_path_updates_its_target_and_stays_a_link() {
    let dir = fresh_dir("out/symlink");
    fs::create_dir_all(dir.join("real")).expect("a directory for the target");
    let target = dir.join("real/report.json");
    fs::write(&target, "stale").expect("an old target");
    let link = dir.join("link.json");
    // Relative: resolved against the link's directory, not the test's.
    std::os::unix::fs::symlink("real/report.json", &link).expect("a link");
    let output = run_with_report("steady", &link);
    output.assert_code(0);
    assert_still_a_link(&link, &output);
    assert_eq!(
        fs::read_link(&link).expect("the link"),
        Path::new("real/report.json")
    );
    assert_steady_report(&support::read_json(&target), &output);
    assert!(leftovers(&dir).is_empty() && leftovers(&dir.join("real")).is_empty());
    assert!(!output.stderr.contains("probtest: could not"), "{output}");

    // `merge -o` and `report --json-out` write through a link the same way.
    let merged_target = dir.join("real/merged.json");
    let merged_link = dir.join("merged.json");
    std::os::unix::fs::symlink(&merged_target, &merged_link).expect("a link");
    let merged = fixture()
        .probtest(
            "merge",
            &[
                &target.to_string_lossy(),
                "-o",
                &merged_link.to_string_lossy(),
            ],
            &[],
        )
        .run();
    merged.assert_code(0);
    assert!(fs::symlink_metadata(&merged_link)
        .expect("the link")
        .file_type()
        .is_symlink());
    assert_steady_report(&support::read_json(&merged_target), &merged);
    let rendered_link = dir.join("rendered.json");
    std::os::unix::fs::symlink("real/rendered.json", &rendered_link).expect("a link");
    fixture()
        .probtest(
            "report",
            &[
                "--json",
                &target.to_string_lossy(),
                "--json-out",
                &rendered_link.to_string_lossy(),
            ],
            &[],
        )
        .run()
        .assert_code(0);
    assert!(fs::symlink_metadata(&rendered_link)
        .expect("the link")
        .file_type()
        .is_symlink());
    assert_steady_report(
        &support::read_json(&dir.join("real/rendered.json")),
        &merged,
    );
    assert!(leftovers(&dir).is_empty() && leftovers(&dir.join("real")).is_empty());
}

/// Makes `/dev/null` the character device it must be again, should a run have replaced it.
fn restore_dev_null() {
    let _ = fs::remove_file("/dev/null");
    let _ = Command::new("mknod")
        .args(["-m", "666", "/dev/null", "c", "1", "3"])
        .status();
}

#[test]
fn dev_null_as_the_report_path_stays_a_character_device() {
    let null = Path::new("/dev/null");
    let is_device =
        || fs::symlink_metadata(null).is_ok_and(|metadata| metadata.file_type().is_char_device());
    if !is_device() || fs::OpenOptions::new().write(true).open(null).is_err() {
        unavailable(
            "writing to /dev/null",
            "it is not a writable character device",
        );
        return;
    }
    let output = run_with_report("steady", null);
    let still = is_device();
    if !still {
        restore_dev_null();
    }
    assert!(still, "/dev/null was replaced by a file{output}");
    output.assert_code(0);
    assert!(!output.stderr.contains("probtest: could not"), "{output}");
    assert!(leftovers(Path::new("/dev")).is_empty());
}

#[test]
fn a_directory_as_the_report_path_is_refused_in_one_line_naming_it() {
    let dir = fresh_dir("out/a-directory");
    let output = run_with_report("steady", &dir);
    // A report that cannot be written does not fail the tests.
    output.assert_code(0);
    let expected = format!("{} is a directory, not a file", dir.display());
    let lines: Vec<&str> = output
        .stderr
        .lines()
        .filter(|line| line.contains(&expected))
        .collect();
    assert!(!lines.is_empty(), "no line names the directory{output}");
    assert!(
        lines.iter().all(|line| line.starts_with("probtest: ")),
        "{lines:?}"
    );
    assert!(dir.is_dir() && fs::read_dir(&dir).expect("listable").next().is_none());

    // The CLI refuses it the same way, with its own one-line error.
    let shards = fresh_dir("out/a-directory-cli");
    let report = shards.join("steady.json");
    run_with_report("steady", &report).assert_code(0);
    let refused = fixture()
        .probtest(
            "report",
            &[
                "--json",
                &report.to_string_lossy(),
                "--json-out",
                &shards.to_string_lossy(),
            ],
            &[],
        )
        .run();
    refused.assert_code(2);
    assert_eq!(
        refused.stderr,
        format!(
            "error: cannot write the report: {} is a directory, not a file\n",
            shards.display()
        ),
        "{refused}"
    );
    let refused = fixture()
        .probtest(
            "merge",
            &[&report.to_string_lossy(), "-o", &shards.to_string_lossy()],
            &[],
        )
        .run();
    refused.assert_code(2);
    assert!(
        refused.stderr.ends_with(&format!(
            "{} is a directory, not a file\n",
            shards.display()
        )),
        "{refused}"
    );
}

#[test]
fn a_fifo_as_the_report_path_gets_the_whole_report() {
    let dir = fresh_dir("out/fifo");
    let fifo = dir.join("report.fifo");
    let made = Command::new("mkfifo").arg(&fifo).output();
    if !made.as_ref().is_ok_and(|out| out.status.success()) {
        let why = made.map_or_else(
            |error| error.to_string(),
            |out| String::from_utf8_lossy(&out.stderr).trim().to_string(),
        );
        unavailable("making a FIFO", &why);
        return;
    }
    // Every write opens the FIFO, writes a whole report and closes it: a reader reads each to
    // its end and opens it again, until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (fifo, stop) = (fifo.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut texts = Vec::new();
            while let Ok(mut file) = File::open(&fifo) {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                if text.is_empty() && stop.load(Ordering::SeqCst) {
                    break;
                }
                texts.push(text);
            }
            texts
        })
    };
    let output = run_with_report("steady", &fifo);
    // Checked before waking the reader: a FIFO replaced by a file would leave it waiting.
    assert!(
        fs::symlink_metadata(&fifo).is_ok_and(|metadata| metadata.file_type().is_fifo()),
        "the FIFO was replaced{output}"
    );
    stop.store(true, Ordering::SeqCst);
    // Wakes the reader, waiting to open the FIFO, with an empty write.
    drop(
        File::options()
            .write(true)
            .open(&fifo)
            .expect("open the FIFO"),
    );
    let texts = reader.join().expect("the reader");
    output.assert_code(0);
    assert!(!texts.is_empty(), "nothing was written to the FIFO{output}");
    for text in &texts {
        // Writes that met one open of the reader arrive one after the other.
        let values: Vec<Value> = serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<_, _>>()
            .unwrap_or_else(|error| panic!("not whole reports ({error}): {text}{output}"));
        assert!(!values.is_empty(), "an empty write{output}");
        for value in &values {
            assert_eq!(value["tool"], "probtest", "{text}");
        }
    }
    let last: Value = serde_json::Deserializer::from_str(texts.last().expect("a text"))
        .into_iter::<Value>()
        .last()
        .expect("a report")
        .expect("JSON");
    assert_steady_report(&last, &output);
    assert!(leftovers(&dir).is_empty());
}

/// A tmpfs mounted for the length of a test, unmounted when dropped.
struct Mounted(PathBuf);

impl Mounted {
    /// A tmpfs of `size` at `dir`; why not, when the machine does not allow it.
    fn tmpfs(dir: &Path, size: &str) -> Result<Mounted, String> {
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if output.status.success() {
            Ok(Mounted(dir.to_path_buf()))
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_leaves_no_temporary_file_and_says_why() {
    let dir = fresh_dir("out/full-disk");
    let mounted = match Mounted::tmpfs(&dir, "64k") {
        Ok(mounted) => mounted,
        Err(why) => {
            unavailable("mounting a 64 KiB tmpfs", &why);
            return;
        }
    };
    let report = dir.join("report.json");
    let output = run_with_report("big", &report);
    let left = leftovers(&dir);
    let listing: Vec<String> = fs::read_dir(&dir)
        .expect("listable")
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    drop(mounted);
    assert!(
        left.is_empty(),
        "temporary files left on the full disk: {left:?}{output}"
    );
    let shown = report.display().to_string();
    assert!(
        output
            .stderr
            .lines()
            .any(|line| line.contains(&shown) && line.contains("No space left on device")),
        "no line names the report and the full disk (left: {listing:?}){output}"
    );
    // The runs passed: a report that cannot be written does not fail them.
    output.assert_code(0);
}

#[test]
fn costs_that_overflow_show_the_largest_number_and_stay_readable() {
    let dir = fresh_dir("out/costly");
    let report = dir.join("report.json");
    let output = run_with_report("costly", &report);
    output.assert_code(0);
    let section = output.section();
    assert!(!section.text.contains("inf"), "{output}");
    assert_eq!(section.cost.as_deref(), Some("$1.7977e308"), "{output}");
    let warning =
        "the cost total overflowed and is shown as the largest number (1.7976931348623157e308)";
    assert_eq!(section.warnings, [warning], "{output}");
    let json = support::read_json(&report);
    assert_eq!(json["totals"]["cost"].as_f64(), Some(f64::MAX));
    assert_eq!(json["warnings"], serde_json::json!([warning]));

    // What the report writes, the report reads: also after `--json-out`.
    let rewritten = dir.join("rewritten.json");
    let rendered = fixture()
        .probtest(
            "report",
            &[
                "--json",
                &report.to_string_lossy(),
                "--json-out",
                &rewritten.to_string_lossy(),
            ],
            &[],
        )
        .run();
    rendered.assert_code(0);
    assert!(!rendered.stdout.contains("inf"), "{rendered}");
    let text = fs::read_to_string(&rewritten).expect("written");
    assert!(!text.contains("\"cost\": null"), "{text}");
    let reread = fixture()
        .probtest("report", &["--json", &rewritten.to_string_lossy()], &[])
        .run();
    reread.assert_code(0);
    assert_eq!(reread.sections()[0].warnings, [warning], "{reread}");
    assert!(!reread.stdout.contains("inf"), "{reread}");
}

/// Names directly in the sessions directory that only a session's own directory holds.
const SESSION_CONTENTS: &[&str] = &[
    "runs.jsonl",
    "session.json",
    "procs",
    "report",
    "unrecorded",
];

#[test]
fn a_session_key_that_names_no_session_fails_the_runs_and_writes_nothing_stray() {
    let sessions = support::shared_target_dir()
        .join("probtest")
        .join("sessions");
    let message = r#"PROB_SESSION=".." is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"#;
    let output = fixture()
        .cargo_test(&["--test", "once"])
        .env("PROB_SESSION", "..")
        .run();
    output.assert_code(101);
    assert!(
        output.stdout.contains("test bench_once ... FAILED\n") && output.stdout.contains(message),
        "the item fails with the message{output}"
    );
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

#[test]
fn a_delay_of_years_is_warned_of_before_the_first_run() {
    let output = fixture()
        .cargo_test(&["--test", "once"])
        .env("PROB_DELAY", "1e9")
        .run();
    // The first run never waits.
    output.assert_code(0);
    let warning = "probtest: warning: PROB_DELAY=1e9 spaces runs 1000000000 s (31.7 years) apart";
    assert_eq!(
        output
            .stderr
            .lines()
            .filter(|line| *line == warning)
            .count(),
        1,
        "{output}"
    );
}

/// Quick runs: enough lines to fill a small disk.
const QUICK: &str = r#"//! Fixture: many quick runs.

use probtest::probability;

/// Three hundred clean runs.
#[probability(runs = 300)]
fn bench_quick() {}
"#;

/// Runs long enough to be killed while they run.
const SLOW: &str = r#"//! Fixture: runs of 40 ms each.

use probtest::probability;

/// Each run sleeps 40 ms, then passes.
#[probability(runs = 120)]
fn bench_slow() {
    std::thread::sleep(std::time::Duration::from_millis(40));
}

/// Not probtest's: never counted by it.
#[test]
fn plain_test() {}
"#;

/// A few runs.
const FEW: &str = r#"//! Fixture: seventeen clean runs.

use probtest::probability;

/// Seventeen clean runs.
#[probability(runs = 17)]
fn bench_few() {}
"#;

/// A session key of this test alone.
fn key(name: &str) -> String {
    format!("hostile-{name}-{}", std::process::id())
}

/// The directory of session `key` of the fixtures' shared target directory.
fn session_dir(key: &str) -> PathBuf {
    shared_target_dir()
        .join("probtest")
        .join("sessions")
        .join(key)
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

/// `cargo probtest report` of session `key` of the fixtures' shared target directory, with
/// `extra` arguments.
fn session_report(key: &str, extra: &[&str]) -> Output {
    let target = shared_target_dir().to_string_lossy().into_owned();
    let mut args = vec!["--session", key, "--target-dir", &target];
    args.extend_from_slice(extra);
    fixture().probtest("report", &args, &[]).run()
}

/// The overall counts of a summary: `Overall: 23/40 passed ...` gives (23, 40).
#[track_caller]
fn overall(output: &Output) -> (u64, u64) {
    let line = output
        .stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("Overall: "))
        .unwrap_or_else(|| panic!("no Overall line\n{output}"));
    let counts = line.split_whitespace().next().expect("counts");
    let (passed, total) = counts.split_once('/').expect("passed/total");
    (
        passed.parse().expect("a number"),
        total.parse().expect("a number"),
    )
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
    report.assert_code(0);
    assert!(
        report
            .stdout
            .contains("Overall: 0/1 passed (0%), 1 errored"),
        "{report}"
    );
}

#[test]
fn a_huge_prob_runs_is_a_compile_error_naming_the_variable_and_the_cap() {
    // A fixture of its own: the variable changes what its test binary is compiled from.
    let fixture = Fixture::builder("hostile-runs").test("once", ONCE).build();
    let output = fixture
        .cargo_test(&["--test", "once", "--no-run"])
        .env("PROB_RUNS", "1000000000")
        .run();
    assert_ne!(output.code, Some(0), "{output}");
    assert!(
        output.stderr.contains(
            "PROB_RUNS: `1000000000` is more than 100000 runs per case, the most probtest generates"
        ),
        "{output}"
    );
    assert!(
        !output.stderr.contains("memory allocation"),
        "the compiler ran out of memory instead\n{output}"
    );
}

#[test]
fn dotted_and_path_like_session_keys_are_refused_or_kept_inside_the_sessions_folder() {
    let sessions = shared_target_dir().join("probtest").join("sessions");
    for key in [".", "..."] {
        let output = fixture()
            .cargo_test(&["--test", "once"])
            .env("PROB_SESSION", key)
            .run();
        output.assert_code(101);
        assert!(
            output
                .stdout
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
