//! End-to-end: `#[probtest::repro("pd1:...")]` pasted above a test. A fixture crate holds an
//! entropy flake (hash order), a time flake (the UTC day ending within the hour), an env flake
//! (a variable the test needs) and a `#[probability]` function with the time flake. The doctor
//! diagnoses the entropy flake and prints the attribute line; the time and env blobs are of the
//! doctor's shape. With the attributes, every one of those tests fails on plain `cargo test` and
//! `cargo nextest run` with the flake's own failure; with the flakes fixed and the attributes
//! still there, each fails saying `DID NOT REPRODUCE`; with the attributes removed, each passes.

use std::sync::OnceLock;

use serde_json::Value;

use super::preload_unavailable;
use super::repro::{blob, payload};
use crate::support::{self, unavailable, Fixture, Output};

/// The flakes, each behind a marker line where its attribute goes.
const FLAKY: &str = r#"//! Attribute fixture: flakes of the entropy, time and env axes.

use probtest::probability;
use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

/// The distinct tags of a post, in the order a `HashSet` yields them (std seeds it per process).
fn distinct_tags<'a>(tags: &[&'a str]) -> Vec<&'a str> {
    tags.iter().copied().collect::<HashSet<_>>().into_iter().collect()
}

/// The UTC day of `now`, and of an hour later: an invoice dated today is sent within the hour.
fn invoice_days() -> (u64, u64) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_secs();
    (now / 86_400, (now + 3_600) / 86_400)
}

// ATTR hash_order_victim
#[test]
fn hash_order_victim() {
    assert!(distinct_tags(&["a", "b", "a"]) == ["a", "b"], "distinct tags out of order");
}

// ATTR invoice_period_label
#[test]
fn invoice_period_label() {
    let (today, sent) = invoice_days();
    assert_eq!(today, sent, "the invoice period ends before the invoice is sent");
}

// ATTR greeting_is_configured
#[test]
fn greeting_is_configured() {
    let greeting = std::env::var("PT_GREETING").expect("PT_GREETING is set");
    assert_eq!(greeting, "hello");
}

// ATTR period_labels
#[probability(runs = 3)]
fn period_labels() {
    let (today, sent) = invoice_days();
    assert_eq!(today, sent, "the invoice period ends before the invoice is sent");
}
"#;

/// The same tests with the flakes fixed: an order-keeping dedup, a day taken once, a default.
fn fixed() -> String {
    FLAKY
        .replace(
            "tags.iter().copied().collect::<HashSet<_>>().into_iter().collect()",
            "let mut seen = HashSet::new();\n    tags.iter().copied().filter(|tag| seen.insert(*tag)).collect()",
        )
        .replace("(now / 86_400, (now + 3_600) / 86_400)", "(now / 86_400, now / 86_400)")
        .replace(
            "std::env::var(\"PT_GREETING\").expect(\"PT_GREETING is set\")",
            "std::env::var(\"PT_GREETING\").unwrap_or_else(|_| \"hello\".to_string())",
        )
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("doctor-attribute")
            .test("flakes", FLAKY)
            .build();
        fixture.cargo_test(&["--no-run"]).run().assert_code(0);
        fixture
    })
}

/// A blob of the doctor's shape for `test` of the fixture's `flakes` target.
fn blob_for(test: &str, axis: &str, perturbation: Value) -> String {
    let mut payload = payload(test);
    payload["package"] = "pt-doctor-attribute".into();
    payload["target"] = "flakes".into();
    payload["axis"] = axis.into();
    let fields = payload["perturbation"].as_object_mut().expect("an object");
    for (key, value) in perturbation.as_object().expect("an object") {
        fields.insert(key.clone(), value.clone());
    }
    blob(&payload)
}

/// 2026-03-10 23:56:40 UTC, as the doctor's time provocations pin the last minutes of a day.
fn late_clock() -> Value {
    serde_json::json!({ "clock": { "at": 1_773_187_000.0, "frozen": false } })
}

/// The attribute line of each test: the doctor's for the entropy flake, hand-made of its shape
/// for the others. The `#[probability]` function's blob names its second run's item.
fn attributes() -> &'static [(String, String); 4] {
    static ATTRIBUTES: OnceLock<[(String, String); 4]> = OnceLock::new();
    ATTRIBUTES.get_or_init(|| {
        let doctor = super::run_doctor_on(fixture(), "hash_order_victim", "flakes", 10);
        let attribute = doctor.report["repro"]["attribute"]
            .as_str()
            .unwrap_or_else(|| panic!("the doctor gave no attribute line{}", doctor.output))
            .to_string();
        assert!(
            doctor.output.stdout.contains(&format!(
                "Paste above the test to fail it on every run until it is fixed:\n   {attribute}"
            )),
            "the report does not print the attribute line{}",
            doctor.output
        );
        let line = |blob: String| format!("#[probtest::repro(\"{blob}\")]");
        [
            ("hash_order_victim".to_string(), attribute),
            (
                "invoice_period_label".to_string(),
                line(blob_for("invoice_period_label", "time", late_clock())),
            ),
            (
                "greeting_is_configured".to_string(),
                line(blob_for(
                    "greeting_is_configured",
                    "env",
                    serde_json::json!({ "scrubbed_env": true }),
                )),
            ),
            (
                "period_labels".to_string(),
                line(blob_for("period_labels::run2", "time", late_clock())),
            ),
        ]
    })
}

/// `source` with each test's attribute pasted above it, or with none.
fn with_attributes(source: &str, pasted: bool) -> String {
    let mut text = source.to_string();
    for (test, attribute) in attributes() {
        let marker = format!("// ATTR {test}");
        text = text.replace(&marker, if pasted { attribute } else { "" });
    }
    text
}

/// Writes the fixture's source, then runs its tests with cargo test and with nextest. One test
/// of this file at a time: each rewrites the fixture.
fn run_both(source: &str) -> [Output; 2] {
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap_or_else(|poison| poison.into_inner());
    let fixture = fixture();
    std::fs::write(fixture.path("tests/flakes.rs"), source).expect("write the fixture's tests");
    let cargo = fixture
        .cargo_test(&["--test", "flakes", "--", "--test-threads=2"])
        .env("PT_GREETING", "hello")
        .run();
    let nextest = fixture
        .nextest("run", &["--test", "flakes", "--no-fail-fast"])
        .env("PT_GREETING", "hello")
        .run();
    [cargo, nextest]
}

/// The tests that failed, as libtest (`test NAME ... FAILED`) or nextest (`FAIL [time] BINARY
/// NAME`) names them, sorted and once each.
fn failed(output: &Output) -> Vec<String> {
    let mut failed = output.failed_tests();
    for line in output.stderr.lines().chain(output.stdout.lines()) {
        if line.trim_start().starts_with("FAIL [") {
            if let Some(name) = line.split_whitespace().last() {
                failed.push(name.to_string());
            }
        }
    }
    failed.sort();
    failed.dedup();
    failed
}

/// The test items the attributes fail: the `#[probability]` function's second run alone.
const FAILING: [&str; 4] = [
    "greeting_is_configured",
    "hash_order_victim",
    "invoice_period_label",
    "period_labels::run2",
];

fn skip() -> bool {
    if let Some(why) = preload_unavailable() {
        unavailable("running a repro under the preload library", why);
        return true;
    }
    false
}

#[test]
fn pasted_attributes_reproduce_each_flake_then_say_did_not_reproduce_then_go() {
    if skip() {
        return;
    }
    let reproduced = "#[probtest::repro] reproduced the flake of";
    let [cargo, nextest] = run_both(&with_attributes(FLAKY, true));
    // The `#[probability]` run the attribute reproduced is a failed run of its row, not an
    // error of the harness.
    let row = cargo.section().row("period_labels").join("  ");
    assert!(
        row.contains("2/3") && !row.contains("ERRORED"),
        "{row}{cargo}"
    );
    for output in [cargo, nextest] {
        assert_ne!(output.code, Some(0), "{output}");
        assert_eq!(failed(&output), FAILING, "each flake fails{output}");
        let text = format!("{}{}", output.stdout, output.stderr);
        for (test, failure) in [
            ("hash_order_victim", "distinct tags out of order"),
            ("invoice_period_label", "the invoice period ends before"),
            ("greeting_is_configured", "PT_GREETING is set"),
            ("period_labels::run2", "the invoice period ends before"),
        ] {
            assert!(
                text.contains(&format!("{reproduced} `{test}`")),
                "{test} not reproduced{output}"
            );
            assert!(
                text.contains(failure),
                "{test}'s own failure not shown{output}"
            );
        }
        assert!(!text.contains("DID NOT REPRODUCE"), "{output}");
    }

    for output in run_both(&with_attributes(&fixed(), true)) {
        assert_eq!(
            failed(&output),
            FAILING,
            "a stale attribute fails its test{output}"
        );
        let text = format!("{}{}", output.stdout, output.stderr);
        for test in FAILING {
            assert!(
                text.contains(&format!("DID NOT REPRODUCE: `{test}` passed under")),
                "{test}{output}"
            );
        }
        assert!(!text.contains(reproduced), "{output}");
    }

    for output in run_both(&with_attributes(&fixed(), false)) {
        output.assert_code(0);
    }
}

#[test]
fn inside_the_doctors_runs_the_attribute_is_inert() {
    if skip() {
        return;
    }
    // The doctor diagnosing a test that carries an attribute diagnoses the test itself: the
    // attribute's run again would fail every run, a deterministic failure.
    let source = with_attributes(&fixed(), true);
    let _one = support::machine::share();
    let fixture = Fixture::builder("doctor-attribute-inert")
        .test("flakes", &source)
        .build();
    let doctor = super::run_doctor_on(&fixture, "invoice_period_label", "flakes", 6);
    assert_eq!(
        doctor.report["verdict"], "not-flaky",
        "{:#}{}",
        doctor.report, doctor.output
    );
}
