//! End-to-end: hostile report paths and values. `PROB_JSON` at a symlink, at `/dev/null`, at a
//! directory, at a FIFO and on a full disk; `cargo probtest merge -o` and `report --json-out`
//! at a symlink and a directory; costs whose sum overflows; a `PROB_DELAY` of years; a
//! `PROB_RUNS` too large to generate. Each asserts what the user sees.
//!
//! What needs root (mounting a tmpfs) or a device (`/dev/null`) is skipped with a message where
//! the machine does not allow it, and fails instead under `CI=true`.

use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{fixture, Mounted, ONCE};
use crate::support::{self, counts, report_row, unavailable, Fixture, Output};
use serde_json::Value;

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
