//! End-to-end: record and replay (`probtest::cached`, `PROB_CACHE`): a replay under cargo test
//! and under nextest makes no call and gives the recorded run's report, its cost marked as
//! replayed; a miss is an error naming the key. And errors that are safe to store: a secret in
//! the environment and in a panic's later lines reaches neither the session store nor the
//! report, while the message's other lines are kept and `PROB_BACKTRACE=1` keeps the user's own
//! frames after them.

use std::path::Path;
use std::sync::OnceLock;

use crate::support::{counts, report_records, shared_target_dir, Fixture};
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
