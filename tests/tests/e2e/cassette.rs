//! End-to-end: record and replay (`probtest::cached`, `PROB_CACHE`): a replay under cargo test
//! and under nextest makes no call and gives the recorded run's report, its cost marked as
//! replayed; a miss is an error naming the key. And errors that are safe to store: a secret in
//! the environment and in a panic's later lines reaches neither the session store nor the
//! report, while the message's other lines are kept and `PROB_BACKTRACE=1` keeps the user's own
//! frames after them. And what a replay refuses, in one line naming the file and the key: a
//! cost edited to be negative, an entry that is a FIFO or a symlink to a device (read before,
//! it hung or filled memory), a key too long for a file name.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::support::{counts, report_records, shared_target_dir, unavailable, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("cassette")
            .test("cassette", include_str!("../../fixtures/cassette.rs"))
            .build()
    })
}

fn calls(log: &str) -> usize {
    fixture()
        .read_lines(log)
        .iter()
        .filter(|line| line.starts_with("called "))
        .count()
}

/// What a replay must give as the recording gave it: rows, totals, usage, each record's
/// outcome and cost, case by case. Run times are the replay's own, and so is each row's
/// latency.
fn same_report(recorded: &Value, replayed: &Value) {
    let without_times = |report: &Value| {
        let mut rows: Vec<Value> = report["rows"].as_array().cloned().unwrap_or_default();
        for row in &mut rows {
            if let Some(row) = row.as_object_mut() {
                row.remove("latency");
            }
        }
        // A report nextest's processes kept lists rows as their first runs arrived.
        rows.sort_by(|a, b| a["case"].as_str().cmp(&b["case"].as_str()));
        rows
    };
    assert_eq!(without_times(recorded), without_times(replayed));
    assert_eq!(recorded["totals"], replayed["totals"]);
    for case in ["cassette::refund", "cassette::order"] {
        let before = report_records(recorded, case);
        let after = report_records(replayed, case);
        assert_eq!(before.len(), 3);
        for (before, after) in before.iter().zip(&after) {
            for field in ["run", "outcome", "cost", "usage"] {
                assert_eq!(before[field], after[field], "{case} {field}");
            }
            assert_eq!(before.get("replayed"), None, "{before}");
            assert_eq!(after["replayed"], 0.75, "{after}");
        }
    }
}

#[test]
fn a_replay_makes_no_call_and_gives_the_recorded_report() {
    let fixture = fixture();
    let cassette = shared_target_dir().join("probtest/cache/pt-cassette");
    if cassette.exists() {
        std::fs::remove_dir_all(&cassette).expect("remove an old cassette");
    }
    for file in ["record.log", "replay.log", "replay-nextest.log", "miss.log"] {
        fixture.remove(file);
    }
    let run = |mode: &str, log: &str, json: &str| {
        fixture.remove(json);
        fixture
            .cargo_test(&["--test", "cassette"])
            .env("PROB_CACHE", mode)
            .env("PT_LOG", fixture.path(log).to_string_lossy())
            .env("PROB_JSON", json)
            .run()
    };
    let output = run("record", "record.log", "record.json");
    output.assert_code(0);
    assert_eq!(calls("record.log"), 6, "every run called{output}");
    let recorded = fixture.read_json("record.json");
    assert_eq!(counts(&recorded["totals"]), [6, 0, 0, 6]);
    assert_eq!(recorded["totals"]["cost"], 4.5);

    let output = run("replay", "replay.log", "replay.json");
    output.assert_code(0);
    assert_eq!(calls("replay.log"), 0, "a replay calls nothing{output}");
    let replayed = fixture.read_json("replay.json");
    same_report(&recorded, &replayed);
    assert!(
        output
            .stdout
            .contains("Replayed: $4.5000 of it from the cassette (6 runs), not spent"),
        "{output}"
    );

    fixture.remove("replay-nextest.json");
    let output = fixture
        .nextest("run", &["--test", "cassette", "-j", "8"])
        .env("PROB_CACHE", "replay")
        .env(
            "PT_LOG",
            fixture.path("replay-nextest.log").to_string_lossy(),
        )
        .env("PROB_JSON", "replay-nextest.json")
        .run();
    output.assert_code(0);
    assert_eq!(calls("replay-nextest.log"), 0, "{output}");
    same_report(&recorded, &fixture.read_json("replay-nextest.json"));

    // A value that was never recorded is an error of its run, naming the key.
    // The case's directory: its row id cleaned for the file system, with a hash of the id.
    let case_dir = std::fs::read_dir(cassette.join("cassette"))
        .expect("the module's directory")
        .map(|entry| entry.expect("entry").path())
        .find(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("cassette__refund"))
        })
        .expect("the case's directory");
    let missing = case_dir.join("run2/answer.json");
    std::fs::remove_file(&missing)
        .unwrap_or_else(|e| panic!("no recorded value at {}: {e}", missing.display()));
    let output = run("replay", "miss.log", "miss.json");
    output.assert_code(101);
    assert_eq!(calls("miss.log"), 0, "a miss calls nothing either{output}");
    let report = fixture.read_json("miss.json");
    let records = report_records(&report, "cassette::refund");
    assert_eq!(records[1]["outcome"], "error");
    let error = records[1]["error"].as_str().expect("error text");
    assert!(
        error.contains("nothing recorded under the key `answer` for cassette::refund run 2"),
        "{error}"
    );
    assert_eq!(counts(&report["totals"]), [5, 0, 1, 6]);
}

/// Every file under `dir`, as bytes.
fn files(dir: &Path, found: &mut Vec<(String, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).expect("list the store") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files(&path, found);
        } else {
            let bytes = std::fs::read(&path).expect("read a store file");
            found.push((path.display().to_string(), bytes));
        }
    }
}

#[test]
fn a_secret_reaches_neither_the_store_nor_the_report() {
    let fixture = fixture();
    let secret = format!("sk-live-{:x}{:x}", std::process::id(), 0x5ec2e7u32);
    let session = format!("secrets-{}", std::process::id());
    fixture.remove("secret.json");
    let output = fixture
        .cargo_test(&["--test", "cassette", "--", "--ignored", "bench_secret"])
        .env("PT_API_KEY", &secret)
        .env("PROB_BACKTRACE", "1")
        .env("PROB_SESSION", &session)
        .env("PROB_JSON", "secret.json")
        .run();
    output.assert_code(101);
    // The panic reached the test's own output, so the secret was really in its message.
    assert!(output.stdout.contains(&secret), "{output}");
    let mut found = Vec::new();
    files(
        &shared_target_dir().join("probtest/sessions").join(&session),
        &mut found,
    );
    found.push((
        "secret.json".to_string(),
        std::fs::read(fixture.path("secret.json")).expect("the report"),
    ));
    assert!(found.len() > 2, "{found:?}");
    for (path, bytes) in &found {
        assert!(
            !String::from_utf8_lossy(bytes).contains(&secret),
            "{path} holds the secret"
        );
    }
    let report = fixture.read_json("secret.json");
    for record in report_records(&report, "secret") {
        let error = record["error"].as_str().expect("an error");
        let mut lines = error.lines();
        // Every line of the message, the secret's redacted, then the frames.
        assert_eq!(lines.next(), Some("the provider refused the call"));
        assert_eq!(lines.next(), Some("Authorization: [redacted]"), "{error}");
        assert_eq!(lines.next(), Some("retry later"), "{error}");
        assert_eq!(lines.next(), Some("sent with key [redacted]"), "{error}");
        let frames: Vec<&str> = lines.collect();
        assert!(
            frames.first().is_some_and(
                |frame| frame.starts_with("  at cassette::deep_helper (tests/cassette.rs:")
            ),
            "the user's innermost frame first: {error}"
        );
        assert!(
            frames
                .iter()
                .any(|frame| frame.starts_with("  at cassette::bench_secret")),
            "{error}"
        );
        for frame in &frames {
            for hidden in ["std::", "core::", "probtest::", "test::", "tokio::"] {
                assert!(!frame.contains(&format!("at {hidden}")), "{frame}");
            }
        }
    }
}

/// The fixture again as a package of its own, whose cassette the tests below edit: the test
/// above removes `pt-cassette`'s whole cassette while they would run.
fn refusals() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("cassette-files")
            .test("cassette", include_str!("../../fixtures/cassette.rs"))
            .build()
    })
}

/// Where `bench_keyed` keeps the value of `key` (a key its file name keeps as it is).
fn keyed_entry(key: &str) -> PathBuf {
    shared_target_dir()
        .join("probtest/cache/pt-cassette-files/cassette/keyed/run1")
        .join(format!("{key}.json"))
}

/// `bench_keyed`'s one run under `PROB_CACHE=mode` with `key`, its report in `<name>.json`;
/// the run's record. A minute at most once the crate is built: a cassette read that blocks
/// fails the test instead of hanging it.
fn keyed_run(mode: &str, key: &str, name: &str) -> (Output, Value) {
    let fixture = refusals();
    let json = format!("{name}.json");
    fixture.remove(&json);
    let build = fixture
        .cargo_test(&["--test", "cassette", "--no-run"])
        .run();
    build.assert_code(0);
    let output = fixture
        .cargo_test(&["--test", "cassette", "--", "--ignored", "bench_keyed"])
        .env("PROB_CACHE", mode)
        .env("PT_CASSETTE_ENTRY", key)
        .env(
            "PT_LOG",
            fixture.path(&format!("{name}.log")).to_string_lossy(),
        )
        .env("PROB_JSON", &json)
        .within(Duration::from_secs(60))
        .run();
    let report = fixture.read_json(&json);
    let record = report_records(&report, "keyed")
        .into_iter()
        .next()
        .cloned()
        .unwrap_or_else(|| panic!("the run's record{output}"));
    (output, record)
}

/// The error of an errored record, one line.
fn error_line(record: &Value) -> &str {
    assert_eq!(record["outcome"], "error", "{record}");
    let error = record["error"].as_str().expect("an error text");
    assert_eq!(error.lines().count(), 1, "one line: {error}");
    error
}

#[test]
fn a_replayed_negative_cost_is_refused_naming_the_file_and_the_key() {
    let (output, record) = keyed_run("record", "negative", "negative-record");
    output.assert_code(0);
    assert_eq!(record["outcome"], "pass", "{record}");
    let entry = keyed_entry("negative");
    let mut stored: Value =
        serde_json::from_slice(&std::fs::read(&entry).expect("the recorded value")).expect("JSON");
    assert_eq!(stored["cost"], 0.5, "{stored}");
    stored["cost"] = Value::from(-0.5);
    std::fs::write(&entry, stored.to_string()).expect("edited");

    let (output, record) = keyed_run("replay", "negative", "negative-replay");
    output.assert_code(101);
    assert_eq!(
        error_line(&record),
        format!(
            "probtest::cached(\"negative\"): {}: record_cost: a cost must be a finite number >= 0, got -0.5",
            entry.display()
        )
    );
    // Nothing of it was counted.
    assert_eq!(record["cost"].as_f64().unwrap_or(0.0), 0.0, "{record}");
    assert_eq!(record["usage"], serde_json::json!([]), "{record}");
}

#[test]
fn a_cassette_entry_that_is_a_fifo_or_a_device_is_refused_in_one_line() {
    let fifo = keyed_entry("fifo");
    std::fs::create_dir_all(fifo.parent().expect("the run's directory")).expect("created");
    let _ = std::fs::remove_file(&fifo);
    match std::process::Command::new("mkfifo").arg(&fifo).status() {
        Ok(status) if status.success() => {
            let (output, record) = keyed_run("replay", "fifo", "fifo");
            output.assert_code(101);
            assert_eq!(
                error_line(&record),
                format!(
                    "probtest::cached(\"fifo\"): {} is a FIFO, not a recorded value",
                    fifo.display()
                )
            );
        }
        Ok(status) => unavailable("making a FIFO", &status.to_string()),
        Err(error) => unavailable("making a FIFO (mkfifo)", &error.to_string()),
    }

    let zero = keyed_entry("zero");
    let _ = std::fs::remove_file(&zero);
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("a symlink");
    let (output, record) = keyed_run("replay", "zero", "zero");
    output.assert_code(101);
    assert_eq!(
        error_line(&record),
        format!(
            "probtest::cached(\"zero\"): {} is a symlink to /dev/zero, a character device, not a recorded value",
            zero.display()
        )
    );
}

#[test]
fn a_key_too_long_for_a_file_name_says_so_with_its_length_and_the_limit() {
    // Its file name, `<key>.json`, would fit in 255 bytes; the temporary file beside it that
    // the write goes through would not.
    let key = "k".repeat(240);
    for mode in ["record", "replay"] {
        let (output, record) = keyed_run(mode, &key, &format!("long-{mode}"));
        output.assert_code(101);
        assert_eq!(
            error_line(&record),
            format!(
                "probtest::cached(\"{}…\"): the key is too long for a file name: 240 characters, at most 213",
                "k".repeat(40)
            ),
            "{mode}"
        );
    }
}
