//! `cargo probtest doctor` and `repro`: the diagnoses of one test per kind of flake (`kinds`)
//! and of flakes modelled on real ones (`patterns`), the run engine (`engine`), repro blobs
//! (`repro`), rows (`rows`) and tests with side effects (`side_effects`); and the harness the
//! diagnoses share: their fixture crate (one integration target per kind of flake), a run of
//! `cargo probtest doctor` with its JSON, and the checks every diagnosis of a flaky test must
//! pass.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::support::{self, Fixture, Output};

mod attribute;
mod engine;
mod kinds;
mod patterns;
pub(crate) mod repro;
mod rows;
mod side_effects;
mod split;
mod suite;

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("doctor")
            .test(
                "entropy",
                include_str!("../../../fixtures/doctor/entropy.rs"),
            )
            .test("time", include_str!("../../../fixtures/doctor/time.rs"))
            .test("order", include_str!("../../../fixtures/doctor/order.rs"))
            .test(
                "parallel",
                include_str!("../../../fixtures/doctor/parallel.rs"),
            )
            .test("solid", include_str!("../../../fixtures/doctor/solid.rs"))
            .test(
                "deterministic",
                include_str!("../../../fixtures/doctor/deterministic.rs"),
            )
            .test("hang", include_str!("../../../fixtures/doctor/hang.rs"))
            .test("rows", include_str!("../../../fixtures/doctor/rows.rs"))
            .test("fs", include_str!("../../../fixtures/doctor/fs.rs"))
            .test("env", include_str!("../../../fixtures/doctor/env.rs"))
            .test(
                "scheduling",
                include_str!("../../../fixtures/doctor/scheduling.rs"),
            )
            .test("ticks", include_str!("../../../fixtures/doctor/ticks.rs"))
            .test("random", include_str!("../../../fixtures/doctor/random.rs"))
            .test(
                "network",
                include_str!("../../../fixtures/doctor/network.rs"),
            )
            .test(
                "two_ways",
                include_str!("../../../fixtures/doctor/two_ways.rs"),
            )
            .test(
                "brittle",
                include_str!("../../../fixtures/doctor/brittle.rs"),
            )
            .test(
                "race_counter",
                include_str!("../../../fixtures/doctor/race_counter.rs"),
            )
            .test(
                "race_env",
                include_str!("../../../fixtures/doctor/race_env.rs"),
            )
            .test(
                "race_global",
                include_str!("../../../fixtures/doctor/race_global.rs"),
            )
            .test("zone", include_str!("../../../fixtures/doctor/zone.rs"))
            .test(
                "printing",
                include_str!("../../../fixtures/doctor/printing.rs"),
            )
            .test("xdg", include_str!("../../../fixtures/doctor/xdg.rs"))
            .test("paced", include_str!("../../../fixtures/doctor/paced.rs"))
            .test(
                "side_effects",
                include_str!("../../../fixtures/doctor/side_effects.rs"),
            )
            .test(
                "async_clock",
                include_str!("../../../fixtures/doctor/async_clock.rs"),
            )
            .tokio_features(&["time", "rt-multi-thread"])
            .dev_dep("rand = \"0.9\"")
            .dev_dep("libc = \"0.2\"")
            .build();
        // Built before any doctor runs, so that a fixture that does not compile fails here, not
        // as a diagnosis; and doctors started side by side find the binaries already there.
        let built = fixture.cargo_test(&["--no-run"]).run();
        built.assert_code(0);
        fixture
    })
}

/// Why the doctor cannot pin a test process's clock and entropy here, if it cannot: it pins them
/// with a library loaded through `LD_PRELOAD`, which this suite counts on only on Linux.
pub fn preload_unavailable() -> Option<&'static str> {
    (!cfg!(target_os = "linux")).then_some("the doctor's LD_PRELOAD library needs Linux")
}

/// What one `cargo probtest doctor` printed and the JSON it wrote (`Null` when it wrote none).
pub struct Diagnosis {
    pub output: Output,
    pub report: Value,
}

/// `cargo probtest doctor <test> --test <target> --runs <runs> --json <path> <extra>`, sharing
/// the machine with the suite's other tests (`support::machine`).
pub fn doctor(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    run_doctor(test, target, runs, extra)
}

/// [`doctor`] with the machine to itself: a busy machine would load the CPUs a diagnosis of
/// scheduling compares, and hide the races it looks for.
pub fn doctor_alone(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    fixture();
    let _alone = support::machine::alone();
    run_doctor(test, target, runs, extra)
}

pub fn run_doctor(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    run_doctor_within(test, target, runs, extra, None)
}

/// [`doctor`] killed past `bound`, failing the test that ran it: for a diagnosis that must end.
pub fn doctor_within(
    test: &str,
    target: &str,
    runs: u32,
    extra: &[&str],
    bound: Duration,
) -> Diagnosis {
    run_doctor_within(test, target, runs, extra, Some(bound))
}

fn run_doctor_within(
    test: &str,
    target: &str,
    runs: u32,
    extra: &[&str],
    bound: Option<Duration>,
) -> Diagnosis {
    doctor_of(fixture(), test, target, runs, extra, bound)
}

/// [`doctor`] on a fixture of another test file.
pub fn run_doctor_on(fixture: &Fixture, test: &str, target: &str, runs: u32) -> Diagnosis {
    doctor_of(fixture, test, target, runs, &[], None)
}

fn doctor_of(
    fixture: &Fixture,
    test: &str,
    target: &str,
    runs: u32,
    extra: &[&str],
    bound: Option<Duration>,
) -> Diagnosis {
    // A file per test: doctors of one target's tests run side by side.
    let relative = format!("out/{target}/{}.json", test.replace("::", "-"));
    fixture.remove(&relative);
    let path = fixture.path(&relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the output directory");
    let (runs, path_text) = (runs.to_string(), path.to_string_lossy().into_owned());
    let mut args = vec![
        test, "--test", target, "--runs", &runs, "--json", &path_text,
    ];
    args.extend_from_slice(extra);
    let run = fixture.probtest("doctor", &args, &[]);
    let output = match bound {
        Some(bound) => run.within(bound),
        None => run,
    }
    .run();
    let report = if path.exists() {
        support::read_json(&path)
    } else {
        Value::Null
    };
    Diagnosis { output, report }
}

/// Checks the fields every doctor report has, whatever its verdict.
#[track_caller]
pub fn assert_shape(diagnosis: &Diagnosis, test: &str) {
    let Diagnosis { output, report } = diagnosis;
    assert!(report.is_object(), "no JSON report written{output}");
    let context = format!("{report:#}{output}");
    assert_eq!(report["format"], "probtest-doctor", "{context}");
    assert_eq!(report["version"], 1, "{context}");
    assert_eq!(report["test"], test, "{context}");
    assert!(report["verdict"].is_string(), "{context}");
    assert!(
        matches!(report["claim"].as_str(), Some("observed" | "latent"))
            || report["claim"].is_null(),
        "{context}"
    );
    for text in ["headline", "explanation"] {
        assert!(
            report[text]
                .as_str()
                .is_some_and(|text| !text.trim().is_empty()),
            "no {text}: {context}"
        );
    }
    let evidence = report["evidence"].as_array().expect("evidence is an array");
    for entry in evidence {
        let runs = entry["runs"]
            .as_u64()
            .expect("an evidence entry counts runs");
        let failed = entry["failed"].as_u64().expect("and failed runs");
        assert!(failed <= runs, "{entry}: {context}");
        assert!(entry["label"].is_string(), "{entry}: {context}");
        assert!(
            entry["note"].is_string() || entry["note"].is_null(),
            "{entry}: {context}"
        );
    }
    let repro = &report["repro"];
    if !repro.is_null() {
        for key in ["axis", "command"] {
            assert!(repro[key].is_string(), "repro.{key}: {context}");
        }
        assert!(repro.get("value").is_some(), "repro.value: {context}");
        for key in ["runs", "failed"] {
            assert!(repro[key].is_u64(), "repro.{key}: {context}");
        }
        assert!(repro["lower_bound"].is_number(), "{context}");
    }
    assert!(
        report["culprit"].is_string() || report["culprit"].is_null(),
        "{context}"
    );
    assert!(
        report["warnings"]
            .as_array()
            .is_some_and(|warnings| warnings.iter().all(Value::is_string)),
        "{context}"
    );
    assert!(report["stats"].is_object(), "{context}");
}

/// Checks a diagnosis of a flaky test: exit 0, the verdict and culprit, a claim, a repro that
/// failed every run with a lower bound above 0.7, a counterfactual that never failed; then runs
/// the repro command three times and checks that it fails each time.
#[track_caller]
pub fn assert_flaky(diagnosis: &Diagnosis, test: &str, verdict: &str, culprit: Option<&str>) {
    assert_shape(diagnosis, test);
    let Diagnosis { output, report } = diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(0);
    assert_eq!(report["verdict"], verdict, "{context}");
    assert!(
        matches!(report["claim"].as_str(), Some("observed" | "latent")),
        "a flaky verdict claims whether the flake was seen: {context}"
    );
    assert_eq!(
        report["culprit"],
        culprit.map_or(Value::Null, Value::from),
        "{context}"
    );

    let repro = &report["repro"];
    let runs = repro["runs"].as_u64().expect("a flaky verdict has a repro");
    assert!(runs > 0, "{context}");
    assert_eq!(repro["failed"], runs, "the repro must fail n/n: {context}");
    let lower_bound = repro["lower_bound"].as_f64().expect("a lower bound");
    assert!(lower_bound > 0.7, "lower bound {lower_bound}: {context}");

    let counterfactual = report["evidence"]
        .as_array()
        .expect("evidence is an array")
        .iter()
        .any(|entry| {
            entry["label"]
                .as_str()
                .is_some_and(|label| label.starts_with("counterfactual"))
                && entry["failed"] == 0
                && entry["runs"].as_u64().is_some_and(|runs| runs > 0)
        });
    assert!(
        counterfactual,
        "no counterfactual evidence without failures: {context}"
    );

    let command = repro["command"].as_str().expect("a repro command");
    for attempt in 1..=3 {
        let rerun = run_repro(command);
        let code = rerun
            .code
            .unwrap_or_else(|| panic!("killed by a signal{rerun}"));
        // 2 is the CLI's own error, such as a repro it cannot read.
        assert!(
            code != 0 && code != 2,
            "repro attempt {attempt} did not fail the test{rerun}"
        );
        let printed = format!("{}{}", rerun.stdout, rerun.stderr);
        assert!(
            printed.contains(test) && printed.to_lowercase().contains("fail"),
            "repro attempt {attempt} does not say that {test} failed{rerun}"
        );
    }
}

/// Runs a printed `cargo probtest repro pd1:...` command in the fixture, through this
/// workspace's CLI binary.
#[track_caller]
pub fn run_repro(command: &str) -> Output {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert!(
        words.len() >= 4
            && words[..3] == ["cargo", "probtest", "repro"]
            && words[3].starts_with("pd1:"),
        "not a `cargo probtest repro pd1:...` command: {command:?}"
    );
    fixture().probtest("repro", &words[3..], &[]).run()
}
