//! The blob's tests: a round trip, its closed shape, and a refusal for an attack in each field.

use serde_json::{json, Value};

use super::payload::MOST_ATTEMPTS;
use super::*;

/// base64url's alphabet: a blob pastes into a shell without quotes.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

fn unbase64url(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// A target of `package` `pt-doctor`: its kind as cargo's messages name it, and its name.
struct Target {
    kind: &'static str,
    name: &'static str,
}

fn binary(kind: &'static str, name: &'static str) -> Target {
    Target { kind, name }
}

impl Repro {
    fn for_binary(target: &Target, test: &str, axis: Axis, plan: Plan) -> Result<Repro, String> {
        Repro::for_target("pt-doctor", target.kind, target.name, test, axis, plan)
    }
}

fn sample() -> Repro {
    let plan = Plan {
        tests: vec!["a_polluter".into(), "b_order_victim".into()],
        threads: Some(1),
        perturbation: Perturbation {
            seed: Some(u64::MAX),
            clock: Some(Clock {
                at: 1.5,
                frozen: false,
            }),
            tick_ms: Some(250),
            tz: Some("UTC".into()),
            ..Perturbation::default()
        },
    };
    Repro::for_binary(
        &binary("test", "order"),
        "b_order_victim",
        Axis::Order,
        plan,
    )
    .expect("a repro")
}

/// The payload of a blob.
fn payload(blob: &str) -> Value {
    serde_json::from_slice(&unbase64url(&blob[PREFIX.len()..]).expect("base64")).expect("json")
}

fn with(payload: &Value) -> String {
    format!("{PREFIX}{}", base64url(payload.to_string().as_bytes()))
}

/// `sample()`'s blob with `key` (a `/`-separated path) set to `value`.
fn changed(key: &str, value: Value) -> String {
    let mut payload = payload(&sample().encode());
    let pointer = format!("/{key}");
    match payload.pointer_mut(&pointer) {
        Some(slot) => *slot = value,
        None => {
            let (parent, last) = pointer.rsplit_once('/').expect("a path");
            payload
                .pointer_mut(parent)
                .and_then(Value::as_object_mut)
                .expect("an object")
                .insert(last.to_string(), value);
        }
    }
    with(&payload)
}

#[track_caller]
fn assert_refused(blob: &str, error: &str) {
    let decoded = Repro::decode(blob);
    assert!(
        decoded.as_ref().is_err_and(|e| e.contains(error)),
        "{blob}: {decoded:?}, expected {error:?}"
    );
}

#[test]
fn a_stress_repro_carries_its_bound_in_range() {
    let stress = Repro {
        attempts: Some(200),
        ..sample()
    };
    assert_eq!(Repro::decode(&stress.encode()), Ok(stress.clone()));
    for bad in [json!(0), json!(MOST_ATTEMPTS + 1), json!(-3), json!("many")] {
        let mut changed = payload(&stress.encode());
        changed["attempts"] = bad.clone();
        let decoded = Repro::decode(&with(&changed));
        assert!(
            decoded.as_ref().is_err_and(|e| e.contains("`attempts`")),
            "{bad}: {decoded:?}"
        );
    }
}

#[test]
fn blobs_round_trip() {
    let repro = sample();
    let blob = repro.encode();
    assert!(blob.starts_with("pd1:"));
    assert!(blob[4..].bytes().all(|b| ALPHABET.contains(&b)), "{blob}");
    assert_eq!(Repro::decode(&blob), Ok(repro));
    for length in 0..8 {
        let bytes: Vec<u8> = (0..length).map(|i| (i * 37 + 5) as u8).collect();
        assert_eq!(unbase64url(&base64url(&bytes)), Some(bytes));
    }
}

#[test]
fn blobs_written_by_earlier_builds_still_decode() {
    // `sample()`'s blob as the hand-written encoder wrote it: the same text today.
    const EARLIER: &str = "pd1:eyJhdHRlbXB0cyI6bnVsbCwiYXhpcyI6Im9yZGVyIiwia2luZCI6InRlc3QiLCJwYWNrYWdlIjoicHQtZG9jdG9yIiwicGVydHVyYmF0aW9uIjp7ImNsb2NrIjp7ImF0IjoxLjUsImZyb3plbiI6ZmFsc2V9LCJjcHVzIjpudWxsLCJmcmVzaF9ob21lIjpmYWxzZSwiaGFzaF9vbmx5IjpmYWxzZSwibmV0d29ya19ibG9ja2VkIjpmYWxzZSwic2NydWJiZWRfZW52IjpmYWxzZSwic2VlZCI6MTg0NDY3NDQwNzM3MDk1NTE2MTUsInN0cmVzcyI6ZmFsc2UsInRpY2tfbXMiOjI1MCwidHoiOiJVVEMiLCJ4ZGdfZGlycyI6ZmFsc2V9LCJ0YXJnZXQiOiJvcmRlciIsInRlc3QiOiJiX29yZGVyX3ZpY3RpbSIsInRlc3RzIjpbImFfcG9sbHV0ZXIiLCJiX29yZGVyX3ZpY3RpbSJdLCJ0aHJlYWRzIjoxLCJ2IjoyfQ";
    assert_eq!(Repro::decode(EARLIER), Ok(sample()));
    assert_eq!(sample().encode(), EARLIER);
    // Fields in another order, and the optional ones left out, read the same.
    let mut payload = payload(EARLIER);
    if let Some(object) = payload.as_object_mut() {
        object.remove("attempts");
    }
    let reordered = format!(
        "{{\"v\":2,{}",
        &payload.to_string()[1..].replace(",\"v\":2", "")
    );
    assert_eq!(
        Repro::decode(&format!("{PREFIX}{}", base64url(reordered.as_bytes()))),
        Ok(sample())
    );
}

#[test]
fn the_payload_has_a_closed_shape() {
    let payload = payload(&sample().encode());
    assert_eq!(
        payload,
        json!({
            "v": 2,
            "package": "pt-doctor",
            "kind": "test",
            "target": "order",
            "test": "b_order_victim",
            "axis": "order",
            "tests": ["a_polluter", "b_order_victim"],
            "threads": 1,
            "attempts": null,
            "perturbation": {
                "seed": u64::MAX,
                "hash_only": false,
                "clock": {"at": 1.5, "frozen": false},
                "tick_ms": 250,
                "network_blocked": false,
                "cpus": null,
                "stress": false,
                "fresh_home": false,
                "scrubbed_env": false,
                "xdg_dirs": false,
                "tz": "UTC",
            },
        })
    );
}

#[test]
fn cargo_arguments_are_made_from_the_checked_names() {
    let plan = Plan::alone("t", Perturbation::none());
    for (kind, cargo_kind, args) in [
        ("test", "test", vec!["-p", "pt-doctor", "--test", "order"]),
        ("bin", "bin", vec!["-p", "pt-doctor", "--bin", "order"]),
        (
            "example",
            "example",
            vec!["-p", "pt-doctor", "--example", "order"],
        ),
        (
            "bench",
            "bench",
            vec!["-p", "pt-doctor", "--bench", "order"],
        ),
        ("lib", "lib", vec!["-p", "pt-doctor", "--lib"]),
        ("lib", "proc-macro", vec!["-p", "pt-doctor", "--lib"]),
        ("lib", "cdylib", vec!["-p", "pt-doctor", "--lib"]),
    ] {
        let binary = binary(cargo_kind, "order");
        let repro = Repro::for_binary(&binary, "t", Axis::Time, plan.clone()).expect(kind);
        assert_eq!(repro.kind.name(), kind);
        assert_eq!(repro.cargo_args(), args);
        let blob = repro.encode();
        assert_eq!(Repro::decode(&blob), Ok(repro.clone()));
    }
    assert!(
        Repro::for_binary(&binary("custom-build", "x"), "t", Axis::Time, plan.clone())
            .is_err_and(|e| e.contains("kind \"custom-build\""))
    );
    let mut plan = plan;
    plan.perturbation.tz = Some("Nowhere/City".into());
    assert!(Repro::for_binary(&binary("test", "order"), "t", Axis::Time, plan).is_err());
}

#[test]
fn bad_blobs_fail_loudly() {
    for (blob, error) in [
        ("garbage".to_string(), "not a repro blob"),
        ("pd2:AAAA".to_string(), "newer than this probtest reads"),
        ("pd1:!!!!".to_string(), "not base64url"),
        ("pd1:e30".to_string(), "no version"),
        (with(&json!([1])), "not an object"),
        (changed("v", json!(3)), "version 3, newer"),
        (changed("v", json!("2")), "is not a version"),
        (changed("extra", json!(1)), "unknown field \"extra\""),
        (changed("test", json!(1)), "no `test` string"),
        (changed("tests", json!("b_order_victim")), "no `tests` list"),
        (changed("tests", json!([1])), "holds a non-string"),
        (
            changed("tests", json!(["a_polluter"])),
            "does not run its test",
        ),
        (changed("threads", json!(0)), "thread count"),
        (changed("threads", json!(1025)), "thread count"),
        (changed("threads", json!(-1)), "thread count"),
        (
            changed("axis", json!("weather")),
            "axis \"weather\" is not one of",
        ),
        (
            changed("axis", json!(" time")),
            "axis \" time\" is not one of",
        ),
        (changed("perturbation", json!(null)), "not an object"),
        (
            changed("perturbation/seed", json!("x")),
            "seed \"x\" is not a whole number",
        ),
    ] {
        assert_refused(&blob, error);
    }
}

#[test]
fn blobs_of_the_older_shape_are_refused() {
    let older = "made by an older probtest";
    let mut payload = payload(&sample().encode());
    if let Some(object) = payload.as_object_mut() {
        for key in ["package", "kind", "target"] {
            object.remove(key);
        }
    }
    payload["v"] = json!(1);
    payload["select"] = json!(["--config", "build.rustc-wrapper=/tmp/x", "-p", "pt-doctor"]);
    assert_refused(&with(&payload), older);
    // The old field is refused whatever version it claims.
    payload["v"] = json!(2);
    assert_refused(&with(&payload), older);
    assert_refused(&changed("v", json!(1)), older);
    assert_refused(&changed("v", json!(0)), older);
}

#[test]
fn names_that_would_reach_cargo_as_options_are_refused() {
    for attack in [
        "--config build.rustc-wrapper=/tmp/x",
        "--config=build.rustc-wrapper=/tmp/x",
        "--manifest-path=/x",
        "--target-dir=/tmp",
        "-Zunstable-options",
        "pt doctor",
        "pt-doctor@0.1.0",
        "../x",
        "",
    ] {
        assert_refused(
            &changed("package", json!(attack)),
            "is not a cargo package name",
        );
        assert_refused(
            &changed("target", json!(attack)),
            "is not a cargo target name",
        );
    }
    assert_refused(
        &changed("package", json!("x".repeat(65))),
        "at most 64 characters",
    );
    assert_refused(&changed("package", json!(null)), "no `package` string");
    assert_refused(&changed("target", json!(7)), "no `target` string");
    assert_refused(&changed("target", json!(null)), "no target for kind `test`");
    assert_refused(&changed("kind", json!("lib")), "target for `lib`");
    for kind in ["custom-build", "--config", "rlib", "TEST", ""] {
        assert_refused(
            &changed("kind", json!(kind)),
            "is not one of lib, test, bin, example, bench",
        );
    }
    let mut lib = payload(&sample().encode());
    lib["kind"] = json!("lib");
    lib["target"] = Value::Null;
    assert!(Repro::decode(&with(&lib))
        .is_ok_and(|repro| repro.cargo_args() == ["-p", "pt-doctor", "--lib"]));
}

#[test]
fn test_names_that_libtest_would_read_as_options_are_refused() {
    for attack in ["--logfile=/tmp/x", "-q", "", "b\nc", "b\u{1b}[2J"] {
        let mut victim = payload(&sample().encode());
        victim["test"] = json!(attack);
        victim["tests"] = json!(["a_polluter", attack]);
        assert_refused(&with(&victim), "is not a test name");
        assert_refused(
            &changed("tests", json!([attack, "b_order_victim"])),
            "sibling test",
        );
    }
}

#[test]
fn perturbation_values_are_checked() {
    for (key, value, error) in [
        (
            "perturbation/tz",
            json!("../../etc/passwd"),
            "not a zone name",
        ),
        (
            "perturbation/tz",
            json!("/etc/localtime"),
            "not a zone name",
        ),
        (
            "perturbation/tz",
            json!(":/etc/localtime"),
            "not a zone name",
        ),
        (
            "perturbation/tz",
            json!("Nowhere/City"),
            "not one this machine has",
        ),
        (
            "perturbation/clock/at",
            json!(1e300),
            "from 0 to 2305843009213693951",
        ),
        (
            "perturbation/clock/at",
            json!(-1.0),
            "from 0 to 2305843009213693951",
        ),
        (
            "perturbation/clock/at",
            json!("NaN"),
            "not a number of seconds",
        ),
        (
            "perturbation/clock/at",
            json!(f64::NAN),
            "not a number of seconds",
        ),
        ("perturbation/seed", json!(-1), "not a whole number from 0"),
        (
            "perturbation/seed",
            json!(18_446_744_073_709_551_616_f64),
            "not a whole number from 0",
        ),
        ("perturbation/tick_ms", json!(60_001), "tick_ms"),
        (
            "perturbation/weather",
            json!("x"),
            "unknown perturbation field",
        ),
        ("perturbation/clock/zone", json!("x"), "unknown clock field"),
    ] {
        assert_refused(&changed(key, value), error);
    }
    // Numbers JSON cannot hold are not JSON: the parser names the problem.
    let text = payload(&sample().encode())
        .to_string()
        .replace("\"at\":1.5", "\"at\":1e400");
    assert_refused(
        &format!("{PREFIX}{}", base64url(text.as_bytes())),
        "not JSON (number out of range",
    );
    let text = text.replace("1e400", "NaN");
    assert_refused(
        &format!("{PREFIX}{}", base64url(text.as_bytes())),
        "not JSON",
    );
}

#[test]
fn refusals_are_one_line_and_escape_what_they_quote() {
    let blob = changed("package", json!("a\nb\u{7}".repeat(60)));
    let error = Repro::decode(&blob).expect_err("refused");
    assert!(!error.contains('\n') && !error.contains('\u{7}'), "{error}");
    assert!(error.contains("...\""), "{error}");
    assert_eq!(shown("a\nb"), "\"a\\nb\"");
    assert_eq!(shown_json(&json!("a\nb")), "\"a\\nb\"");
    assert_eq!(shown_json(&json!(-1)), "-1");
    assert_eq!(shown_json(&json!(vec![1; 100])).len(), 83);
}
