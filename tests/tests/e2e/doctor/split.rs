//! End-to-end: `cargo probtest doctor` splits a row's failures between the model's answers and
//! the harness around them, by recording each run's answers with `probtest::cached` and
//! replaying them: a row whose failures are all the model's (`model`, each failing answer
//! shown), one whose harness flakes on hash order with a model that always answers right
//! (`harness: entropy`, with a repro that fails n/n), one with both (the counts), and one whose
//! cassette misses its key under replay (no verdict from the replay, the key and file named).
//! The fixture's model logs every call: replays make none.

use std::sync::OnceLock;
use std::time::Instant;

use serde_json::Value;

use crate::support::{self, Fixture, Output};

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("doctor-split")
            .test(
                "model",
                include_str!("../../../fixtures/doctor_split/model.rs"),
            )
            .test(
                "harness",
                include_str!("../../../fixtures/doctor_split/harness.rs"),
            )
            .test(
                "both",
                include_str!("../../../fixtures/doctor_split/both.rs"),
            )
            .test(
                "keyed",
                include_str!("../../../fixtures/doctor_split/keyed.rs"),
            )
            .metadata("json = \"reports/evals.json\"")
            .build();
        fixture.cargo_test(&["--no-run"]).run().assert_code(0);
        fixture
    })
}

/// One doctor of `row` (in test target `row`): its output, its JSON, the model calls it made
/// (the fixture's log), and how long it took.
struct Split {
    output: Output,
    json: Value,
    calls: Vec<String>,
    seconds: f64,
}

/// The model's calls of the one run the doctor watches for side effects before its others.
const WATCHED_RUN_CALLS: usize = 1;

fn doctor(row: &str, runs: u32, extra: &[&str]) -> Split {
    let fixture = fixture();
    let log = format!("out/{row}.calls");
    let json = format!("out/{row}.json");
    fixture.remove(&log);
    fixture.remove(&json);
    std::fs::create_dir_all(fixture.path("out")).expect("out/");
    let (log_path, json_path) = (fixture.path(&log), fixture.path(&json));
    let runs = runs.to_string();
    let json_text = json_path.to_string_lossy().into_owned();
    // The fixture's model counts its calls in a file outside the run's temporary directory, on
    // purpose: a side effect the doctor is told to allow.
    let mut args = vec![
        row,
        "--test",
        row,
        "--runs",
        &runs,
        "--json",
        &json_text,
        "--allow-side-effects",
    ];
    args.extend_from_slice(extra);
    let started = Instant::now();
    let output = fixture
        .probtest("doctor", &args, &[])
        .env("PT_LOG", log_path.to_string_lossy())
        .run();
    let seconds = started.elapsed().as_secs_f64();
    let json = if json_path.exists() {
        support::read_json(&json_path)
    } else {
        Value::Null
    };
    Split {
        output,
        json,
        calls: fixture.read_lines(&log),
        seconds,
    }
}

#[test]
fn a_row_whose_failures_are_the_models_answers_is_model_with_each_answer_shown() {
    // The user's run writes the report the doctor's diagnosis is saved beside.
    let fixture = fixture();
    fixture
        .cargo_test(&["--test", "model"])
        .env("PROB_JSON", "reports/model.json")
        .run();
    fixture.remove("reports/model.doctor.json");
    let Split {
        output,
        json,
        calls,
        ..
    } = doctor("model", 5, &["--report", "reports/model.json"]);
    let context = format!("{json:#}{output}");
    output.assert_code(0);
    let split = &json["split"];
    assert_eq!(split["verdict"], "model", "{context}");
    assert_eq!(split["tag"], "model", "{context}");
    assert_eq!(json["verdict"], "flaky-model", "{context}");
    // Every fourth call answers wrong: 3 of the 12 recorded runs.
    assert_eq!(
        (&split["runs"], &split["failed"]),
        (&12.into(), &3.into()),
        "{context}"
    );
    assert_eq!(
        (&split["model"], &split["harness"]),
        (&3.into(), &0.into()),
        "{context}"
    );
    assert_eq!(split["harness_flakes"], false, "{context}");
    let answers = split["answers"].as_array().expect("answers");
    assert_eq!(answers.len(), 3, "{context}");
    for answer in answers {
        assert_eq!(
            answer["said"], "the model answered `shipping` where the test expects `refund`",
            "{context}"
        );
        assert_eq!(answer["values"]["answer"], "\"shipping\"", "{context}");
    }
    assert!(
        output
            .stdout
            .contains("the model answered `shipping` where the test expects `refund`")
            && output.stdout.contains("MODEL OR HARNESS  model"),
        "{context}"
    );
    // The record's 12 calls, the one run watched for side effects, and none from the replays.
    assert_eq!(calls.len(), WATCHED_RUN_CALLS + 12, "{calls:#?}{context}");
    // Saved beside the report, where the report's Markdown and HTML find it.
    let saved = support::read_json(&fixture.path("reports/model.doctor.json"));
    assert_eq!(saved["diagnoses"][0]["row"], "model", "{saved:#}");
    let rendered = fixture
        .probtest(
            "report",
            &[
                "--json",
                "reports/model.json",
                "--markdown",
                "out/model.md",
                "--html",
                "out/model.html",
                "--no-fail",
            ],
            &[],
        )
        .run();
    rendered.assert_code(0);
    let markdown = std::fs::read_to_string(fixture.path("out/model.md")).expect("the Markdown");
    assert!(
        markdown.lines().any(|line| line.starts_with("model |")
            && line.contains("FLAKY")
            && line.contains("doctor: model")),
        "{markdown}"
    );
    let html = std::fs::read_to_string(fixture.path("out/model.html")).expect("the page");
    assert!(html.contains(">model</span>"), "{rendered}");
}

#[test]
fn a_harness_that_flakes_with_right_answers_is_the_harnesss_with_its_axis_and_repro() {
    if let Some(why) = super::preload_unavailable() {
        support::unavailable("the doctor's entropy axis", why);
        return;
    }
    let Split {
        output,
        json,
        calls,
        seconds,
    } = doctor("harness", 5, &["--axes", "entropy"]);
    let context = format!("{json:#}{output}");
    output.assert_code(0);
    let split = &json["split"];
    assert_eq!(split["verdict"], "harness", "{context}");
    assert_eq!(split["tag"], "harness: entropy", "{context}");
    assert_eq!(json["verdict"], "flaky-entropy", "{context}");
    assert_eq!(split["model"], 0, "{context}");
    assert_eq!(split["harness"], split["failed"], "{context}");
    assert_eq!(split["harness_flakes"], true, "{context}");
    let repro = &json["repro"];
    assert_eq!(
        (&repro["runs"], &repro["failed"]),
        (&5.into(), &5.into()),
        "{context}"
    );
    // The repro replays the recorded answers.
    let command = repro["command"].as_str().expect("a repro command");
    assert!(
        command.starts_with("PROB_CACHE=replay PROB_CACHE_DIR="),
        "{context}"
    );
    // The diagnosis ran through a run item of the row, its answers replayed: the model was
    // called by the record alone, once per run.
    assert!(
        json["test"]
            .as_str()
            .is_some_and(|test| test.starts_with("bench_harness::")),
        "{context}"
    );
    // A recording in which no run failed is made again, up to three times.
    assert!(
        calls.len() > WATCHED_RUN_CALLS
            && (calls.len() - WATCHED_RUN_CALLS).is_multiple_of(12)
            && calls.len() <= WATCHED_RUN_CALLS + 36,
        "{calls:#?}{context}"
    );
    assert!(seconds < 120.0, "{seconds:.1} s{context}");
    // The repro, with the variables it names: it fails, and calls no model.
    let (prefix, blob) = command
        .split_once(" cargo probtest repro ")
        .expect("a repro command");
    let mut repro = fixture().probtest("repro", &[blob], &[]);
    for pair in prefix.split_whitespace() {
        let (name, value) = pair.split_once('=').expect("NAME=value");
        repro = repro.env(name, value.trim_matches('\''));
    }
    let log = fixture().path("out/harness.calls");
    let rerun = repro.env("PT_LOG", log.to_string_lossy()).run();
    rerun.assert_code(101);
    assert!(rerun.stdout.contains("REPRODUCED"), "{rerun}");
    assert_eq!(
        fixture().read_lines("out/harness.calls").len(),
        calls.len(),
        "{rerun}"
    );
}

#[test]
fn a_row_that_fails_both_ways_counts_each_side() {
    if let Some(why) = super::preload_unavailable() {
        support::unavailable("the doctor's entropy axis", why);
        return;
    }
    let Split {
        output,
        json,
        calls,
        seconds,
    } = doctor("both", 10, &["--axes", "entropy"]);
    let context = format!("{json:#}{output}");
    output.assert_code(0);
    let split = &json["split"];
    // Every fourth call of the 24 answers wrong: 6 failures are the model's, whatever the
    // clock did; the rest of the failures are the harness's.
    assert_eq!(split["runs"], 24, "{context}");
    assert_eq!(split["model"], 6, "{context}");
    let (failed, harness) = (
        split["failed"].as_u64().expect("failed"),
        split["harness"].as_u64().expect("harness"),
    );
    assert_eq!(failed, 6 + harness, "{context}");
    assert_eq!(split["verdict"], "both", "{context}");
    assert_eq!(split["tag"], "model + harness: entropy", "{context}");
    assert_eq!(
        split["answers"].as_array().map(Vec::len),
        Some(6),
        "{context}"
    );
    let sentence = format!("6 of {failed} failures carried by answers");
    assert!(output.stdout.contains(&sentence), "{context}");
    assert_eq!(calls.len(), WATCHED_RUN_CALLS + 24, "{calls:#?}{context}");
    // The closing note's measure: the split of a row of this size, build included.
    eprintln!("the split of a 24-run row took {seconds:.1} s");
}

#[test]
fn a_replay_the_cassette_refuses_is_untrusted_and_names_the_key_and_file() {
    let Split {
        output,
        json,
        calls,
        ..
    } = doctor("keyed", 5, &["--axes", "order", "--budget", "60"]);
    let context = format!("{json:#}{output}");
    let split = &json["split"];
    assert!(
        split["verdict"].is_null() && split["tag"].is_null(),
        "{context}"
    );
    let problem = split["problem"].as_str().expect("a problem");
    assert!(
        problem.contains("nothing recorded under the key `answer-")
            && problem.contains("keyed run")
            && problem.contains(".json"),
        "{context}"
    );
    assert_ne!(json["verdict"], "flaky-model", "{context}");
    assert!(
        json["warnings"]
            .as_array()
            .is_some_and(|warnings| warnings.iter().any(|warning| warning
                .as_str()
                .is_some_and(|warning| warning.contains("could not be trusted")))),
        "{context}"
    );
    // The row was diagnosed on its own runs, the model called again.
    assert!(calls.len() > 8, "{calls:#?}{context}");
}
