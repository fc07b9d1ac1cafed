//! End-to-end: `cargo probtest doctor` on one test of a fixture crate whose test binaries each
//! hold one kind of flake (time, entropy, order, parallel), a test that never fails, one that
//! always fails and one that sometimes hangs. Each diagnosis is checked through its JSON: the
//! verdict, the culprit, a repro that fails every one of its runs, a counterfactual that never
//! fails; and the printed repro command is run to see it fail. Bad input is refused in one line.
//!
//! The time and entropy axes need a library preloaded into the test process: where the machine
//! cannot preload one, their tests are skipped with a message, and fail instead under `CI=true`.

mod support;

use std::sync::{OnceLock, RwLock};

use serde_json::Value;
use support::{unavailable, Fixture, Output};

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("doctor")
            .test("entropy", include_str!("../fixtures/doctor/entropy.rs"))
            .test("time", include_str!("../fixtures/doctor/time.rs"))
            .test("order", include_str!("../fixtures/doctor/order.rs"))
            .test("parallel", include_str!("../fixtures/doctor/parallel.rs"))
            .test("solid", include_str!("../fixtures/doctor/solid.rs"))
            .test(
                "deterministic",
                include_str!("../fixtures/doctor/deterministic.rs"),
            )
            .test("hang", include_str!("../fixtures/doctor/hang.rs"))
            .test("rows", include_str!("../fixtures/doctor/rows.rs"))
            .test("fs", include_str!("../fixtures/doctor/fs.rs"))
            .test("env", include_str!("../fixtures/doctor/env.rs"))
            .test(
                "scheduling",
                include_str!("../fixtures/doctor/scheduling.rs"),
            )
            .test("ticks", include_str!("../fixtures/doctor/ticks.rs"))
            .test("random", include_str!("../fixtures/doctor/random.rs"))
            .test("network", include_str!("../fixtures/doctor/network.rs"))
            .test("two_ways", include_str!("../fixtures/doctor/two_ways.rs"))
            .test("brittle", include_str!("../fixtures/doctor/brittle.rs"))
            .test(
                "race_counter",
                include_str!("../fixtures/doctor/race_counter.rs"),
            )
            .test("race_env", include_str!("../fixtures/doctor/race_env.rs"))
            .test(
                "race_global",
                include_str!("../fixtures/doctor/race_global.rs"),
            )
            .test("zone", include_str!("../fixtures/doctor/zone.rs"))
            .test("printing", include_str!("../fixtures/doctor/printing.rs"))
            .test("xdg", include_str!("../fixtures/doctor/xdg.rs"))
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
fn preload_unavailable() -> Option<&'static str> {
    (!cfg!(target_os = "linux")).then_some("the doctor's LD_PRELOAD library needs Linux")
}

/// What one `cargo probtest doctor` printed and the JSON it wrote (`Null` when it wrote none).
struct Diagnosis {
    output: Output,
    report: Value,
}

/// Doctors that run while another diagnoses scheduling would load the CPUs it compares: each
/// doctor holds this for reading, the scheduling one for writing.
static MACHINE: RwLock<()> = RwLock::new(());

/// `cargo probtest doctor <test> --test <target> --runs <runs> --json <path> <extra>`.
fn doctor(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    let _shared = MACHINE.read().unwrap_or_else(|poison| poison.into_inner());
    run_doctor(test, target, runs, extra)
}

/// [`doctor`] with the machine to itself among this suite's doctors.
fn doctor_alone(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    let _alone = MACHINE.write().unwrap_or_else(|poison| poison.into_inner());
    run_doctor(test, target, runs, extra)
}

fn run_doctor(test: &str, target: &str, runs: u32, extra: &[&str]) -> Diagnosis {
    let fixture = fixture();
    let relative = format!("out/{target}.json");
    fixture.remove(&relative);
    let path = fixture.path(&relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the output directory");
    let (runs, path_text) = (runs.to_string(), path.to_string_lossy().into_owned());
    let mut args = vec![
        test, "--test", target, "--runs", &runs, "--json", &path_text,
    ];
    args.extend_from_slice(extra);
    let output = fixture.probtest("doctor", &args, &[]).run();
    let report = if path.exists() {
        support::read_json(&path)
    } else {
        Value::Null
    };
    Diagnosis { output, report }
}

/// The order fixture's diagnosis, shared by the tests of its JSON and of its terminal report.
fn order_diagnosis() -> &'static Diagnosis {
    static DIAGNOSIS: OnceLock<Diagnosis> = OnceLock::new();
    DIAGNOSIS.get_or_init(|| doctor("b_order_victim", "order", 10, &[]))
}

/// Checks the fields every doctor report has, whatever its verdict.
#[track_caller]
fn assert_shape(diagnosis: &Diagnosis, test: &str) {
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
fn assert_flaky(diagnosis: &Diagnosis, test: &str, verdict: &str, culprit: Option<&str>) {
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
fn run_repro(command: &str) -> Output {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert!(
        words.len() >= 4
            && words[..3] == ["cargo", "probtest", "repro"]
            && words[3].starts_with("pd1:"),
        "not a `cargo probtest repro pd1:...` command: {command:?}"
    );
    fixture().probtest("repro", &words[3..], &[]).run()
}

#[test]
fn hash_order_dependence_is_diagnosed_as_entropy() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's entropy", why);
        return;
    }
    let diagnosis = doctor("hash_order_victim", "entropy", 10, &[]);
    assert_flaky(&diagnosis, "hash_order_victim", "flaky-entropy", None);
    assert_explains(&diagnosis, "hash iteration order alone explains it");
}

/// A race between sibling tests that fails a few suite runs in a hundred and never alone: the
/// doctor, with the machine to itself (a busy machine hides such races), names the sibling, and
/// its stress repro fails.
#[track_caller]
fn assert_rare_race(victim: &str, target: &str, culprit: &str) {
    let diagnosis = doctor_alone(victim, target, 10, &[]);
    let report = &diagnosis.report;
    let context = format!("{}\n{report:#}", diagnosis.output);
    diagnosis.output.assert_code(0);
    assert_eq!(report["verdict"], "flaky-parallel", "{context}");
    assert_eq!(report["culprit"], culprit, "{context}");
    assert_eq!(report["claim"], "observed", "{context}");
    // Never alone: the baseline passed, and the pair's rate is stated with its bound.
    assert_eq!(report["evidence"][0]["failed"], 0, "{context}");
    let attempts = report["repro"]["attempts"]
        .as_u64()
        .expect("a stress repro");
    assert!(attempts >= 2, "{context}");
    assert!(
        report["repro"]["lower_bound"].as_f64() > Some(0.0),
        "{context}"
    );
    assert!(
        report["explanation"]
            .as_str()
            .is_some_and(|text| text.contains("with probability ≥ 99%")),
        "{context}"
    );
    let command = report["repro"]["command"].as_str().expect("a repro");
    let _alone = MACHINE.write().unwrap_or_else(|poison| poison.into_inner());
    run_repro(command).assert_code(101);
}

#[test]
fn a_rare_race_on_a_static_counter_names_the_sibling() {
    assert_rare_race("frame_report_victim", "race_counter", "event_loop_racer");
}

#[test]
fn a_rare_race_on_an_environment_variable_names_the_sibling() {
    assert_rare_race(
        "override_beats_file_victim",
        "race_env",
        "clean_env_cases_racer",
    );
}

#[test]
fn a_rare_race_on_a_global_localizer_names_the_sibling() {
    assert_rare_race(
        "summary_in_default_language_victim",
        "race_global",
        "every_language_racer",
    );
}

#[test]
fn utc_and_local_dates_mixed_are_diagnosed_as_the_zone() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's wall clock", why);
        return;
    }
    let diagnosis = doctor("issued_today_victim", "zone", 10, &["--axes", "time"]);
    let report = &diagnosis.report;
    assert_flaky(&diagnosis, "issued_today_victim", "flaky-time", None);
    assert!(
        report["explanation"]
            .as_str()
            .is_some_and(|text| text.contains("the zone is what matters")),
        "{report:#}"
    );
    let value = report["repro"]["value"].as_str().unwrap_or_default();
    assert!(
        value.contains("TZ=Pacific/Kiritimati") || value.contains("TZ=Pacific/Pago_Pago"),
        "{report:#}"
    );
}

#[test]
fn a_child_printing_a_status_line_does_not_turn_hash_order_into_a_race() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's entropy", why);
        return;
    }
    let diagnosis = doctor("echoing_hash_order_victim", "printing", 10, &[]);
    assert_flaky(
        &diagnosis,
        "echoing_hash_order_victim",
        "flaky-entropy",
        None,
    );
    assert!(
        diagnosis.report["culprit"].is_null(),
        "{:#}",
        diagnosis.report
    );
}

#[test]
fn a_test_that_breaks_where_xdg_variables_are_set_is_diagnosed_as_env() {
    let diagnosis = doctor("config_home_victim", "xdg", 10, &["--axes", "fs,env"]);
    assert_flaky(&diagnosis, "config_home_victim", "flaky-env", None);
    assert!(
        diagnosis.report["headline"]
            .as_str()
            .is_some_and(|headline| headline.contains("XDG")),
        "{:#}",
        diagnosis.report
    );
}

#[test]
fn a_brittle_test_is_diagnosed_as_order_naming_the_state_setter() {
    let diagnosis = doctor("c_brittle_victim", "brittle", 10, &[]);
    let report = &diagnosis.report;
    diagnosis.output.assert_code(0);
    assert_eq!(report["verdict"], "flaky-order", "{report:#}");
    assert_eq!(report["culprit"], "b_sets_the_flags", "{report:#}");
    assert!(
        report["headline"]
            .as_str()
            .is_some_and(|headline| headline.contains("brittle")),
        "{report:#}"
    );
    // The repro is the test alone, which fails every time.
    let command = report["repro"]["command"].as_str().expect("a repro");
    run_repro(command).assert_code(101);
}

#[test]
fn a_test_that_fails_two_ways_gets_an_attribution_for_each() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's entropy", why);
        return;
    }
    let diagnosis = doctor("two_ways_victim", "two_ways", 20, &[]);
    assert_flaky(&diagnosis, "two_ways_victim", "flaky-entropy", None);
    let report = &diagnosis.report;
    let signatures = report["signatures"].as_array().expect("signatures");
    assert_eq!(signatures.len(), 2, "{report:#}");
    for signature in signatures {
        let cause = signature["cause"].as_str().unwrap_or_default();
        assert!(cause.starts_with("entropy: entropy seed "), "{report:#}");
        assert!(signature["seen"].as_u64() > Some(0), "{report:#}");
    }
    assert_ne!(signatures[0]["cause"], signatures[1]["cause"], "{report:#}");
    assert!(
        diagnosis.output.stdout.contains("FAILS 2 WAYS"),
        "{}",
        diagnosis.output
    );
}

#[test]
fn an_os_seeded_random_draw_is_diagnosed_as_entropy_but_not_hash_order() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's entropy", why);
        return;
    }
    let diagnosis = doctor("random_draw_victim", "random", 10, &[]);
    assert_flaky(&diagnosis, "random_draw_victim", "flaky-entropy", None);
    // Either it drew no hash keys at all, or pinning them alone did not make it fail n/n.
    let explanation = diagnosis.report["explanation"].as_str().unwrap_or_default();
    assert!(
        explanation.contains("not hash order") || explanation.contains("does not explain it alone"),
        "{:#}",
        diagnosis.report
    );
}

#[test]
fn an_elapsed_time_assumption_is_diagnosed_as_time_by_tick_jitter() {
    if let Some(why) = preload_unavailable() {
        unavailable("jittering a test's clocks", why);
        return;
    }
    let diagnosis = doctor("fresh_entry_victim", "ticks", 10, &[]);
    assert_flaky(&diagnosis, "fresh_entry_victim", "flaky-time", None);
    assert_eq!(diagnosis.report["headline"], "assumes it runs fast");
    let value = diagnosis.report["repro"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        value.contains("ms after the last"),
        "{:#}",
        diagnosis.report
    );
}

#[test]
fn a_lost_update_race_is_diagnosed_as_scheduling() {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        unavailable(
            "comparing one core with many",
            "this machine gives the suite one CPU",
        );
        return;
    }
    let diagnosis = doctor_alone("lost_update_victim", "scheduling", 10, &[]);
    assert_flaky(&diagnosis, "lost_update_victim", "flaky-scheduling", None);
    let value = diagnosis.report["repro"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(value.contains("busy threads"), "{:#}", diagnosis.report);
}

#[test]
fn a_live_network_call_is_diagnosed_as_network_naming_the_address() {
    if let Some(why) = preload_unavailable() {
        unavailable("blocking a test's network", why);
        return;
    }
    let Some(address) = outward_address() else {
        unavailable(
            "calling a service over the network",
            "this machine has no IPv4 address outside loopback",
        );
        return;
    };
    let diagnosis = doctor("remote_rate_victim", "network", 10, &[]);
    assert_flaky(&diagnosis, "remote_rate_victim", "flaky-network", None);
    assert_explains(&diagnosis, &format!("It tried to reach {address}:"));
}

/// The address this machine reaches other machines from, if it has one: the source of a route
/// outward (connecting a UDP socket sends nothing).
fn outward_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Checks that the diagnosis's explanation says `text`.
#[track_caller]
fn assert_explains(diagnosis: &Diagnosis, text: &str) {
    let explanation = diagnosis.report["explanation"].as_str().unwrap_or_default();
    assert!(
        explanation.contains(text),
        "the explanation does not say {text:?}: {:#}",
        diagnosis.report
    );
}

#[test]
fn a_report_row_is_diagnosed_through_its_first_run_item() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's entropy", why);
        return;
    }
    // The row id, as the summary shows it and its hint line names it.
    let diagnosis = doctor("tags", "rows", 10, &[]);
    assert_flaky(&diagnosis, "bench_tags::run1", "flaky-entropy", None);
    assert!(
        diagnosis
            .output
            .stderr
            .contains("row tags is diagnosed through its run item bench_tags::run1"),
        "{}",
        diagnosis.output
    );
}

#[test]
fn home_directory_dependence_is_diagnosed_as_fs() {
    let diagnosis = doctor("home_victim", "fs", 10, &["--axes", "fs"]);
    assert_flaky(&diagnosis, "home_victim", "flaky-fs", None);
    // The user's own home passed every run: a latent dependence, found by provoking it.
    assert_eq!(
        diagnosis.report["claim"], "latent",
        "{:#}",
        diagnosis.report
    );
    // `cargo test` cannot be given a home of its own without changing cargo's: no plain repro.
    assert_eq!(diagnosis.report["repro"]["plain"], Value::Null);
}

#[test]
fn a_variable_of_the_developers_shell_is_diagnosed_as_env() {
    let fixture = fixture();
    let relative = "out/env.json";
    fixture.remove(relative);
    let path = fixture.path(relative);
    let output = fixture
        .probtest(
            "doctor",
            &[
                "env_victim",
                "--test",
                "env",
                "--axes",
                "env",
                "--json",
                &path.to_string_lossy(),
            ],
            &[],
        )
        // The developer's shell exports it; the test process inherits it from the doctor.
        .env("PROBTEST_DOCTOR_FIXTURE_TOKEN", "secret")
        .run();
    output.assert_code(0);
    let report = support::read_json(&path);
    assert_eq!(report["verdict"], "flaky-env", "{report:#}{output}");
    assert_eq!(report["claim"], "latent", "{report:#}");
    assert_eq!(
        report["repro"]["failed"], report["repro"]["runs"],
        "{report:#}"
    );
    // The repro scrubs the environment itself: it fails even with the token exported.
    let command = report["repro"]["command"].as_str().expect("a command");
    let words: Vec<&str> = command.split_whitespace().collect();
    let repro = fixture
        .probtest("repro", &words[3..], &[])
        .env("PROBTEST_DOCTOR_FIXTURE_TOKEN", "secret")
        .run();
    repro.assert_code(101);
    assert!(
        repro.stdout.contains("REPRODUCED: env_victim failed"),
        "{repro}"
    );
}

#[test]
fn the_suite_mode_diagnoses_each_test_that_failed() {
    let fixture = fixture();
    let relative = "out/suite.json";
    fixture.remove(relative);
    let path = fixture.path(relative);
    let output = fixture
        .probtest(
            "doctor",
            &[
                "--suite",
                "--test",
                "order",
                "--axes",
                "order,parallel",
                "--json",
                &path.to_string_lossy(),
            ],
            &[],
        )
        // The suite runs as `cargo test` would, on libtest's default threads: there the
        // victim fails only when the polluter's thread wins a race. One thread, which the
        // suite run honours as `cargo test` does, makes the failure certain.
        .env("RUST_TEST_THREADS", "1")
        .run();
    output.assert_code(0);
    let report = support::read_json(&path);
    assert_eq!(report["format"], "probtest-doctor", "{report:#}");
    let diagnoses = report["diagnoses"].as_array().expect("diagnoses");
    assert_eq!(diagnoses.len(), 1, "{report:#}{output}");
    assert_eq!(diagnoses[0]["test"], "b_order_victim");
    assert_eq!(diagnoses[0]["verdict"], "flaky-order");
    assert_eq!(diagnoses[0]["culprit"], "a_polluter");
}

#[test]
fn wall_clock_dependence_is_diagnosed_as_time() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning a test's wall clock", why);
        return;
    }
    let diagnosis = doctor("clock_victim", "time", 10, &[]);
    assert_flaky(&diagnosis, "clock_victim", "flaky-time", None);
    // The repro pins the time zone too, so that it fails on a machine in another zone.
    let value = diagnosis.report["repro"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(value.contains("TZ="), "{:#}", diagnosis.report);
}

#[test]
fn state_left_by_an_earlier_test_is_diagnosed_as_order_naming_the_polluter() {
    assert_flaky(
        order_diagnosis(),
        "b_order_victim",
        "flaky-order",
        Some("a_polluter"),
    );
}

#[test]
fn a_race_with_a_sibling_is_diagnosed_as_parallel_naming_the_writer() {
    // Alone among this suite's doctors: a race between threads is timing, and a loaded machine
    // can start the writer after the victim has read the file back.
    let diagnosis = doctor_alone("racy_victim", "parallel", 10, &[]);
    assert_flaky(
        &diagnosis,
        "racy_victim",
        "flaky-parallel",
        Some("racy_writer"),
    );
}

#[test]
fn a_test_that_always_passes_is_not_flaky_and_exits_one() {
    let diagnosis = doctor("solid_test", "solid", 10, &[]);
    assert_shape(&diagnosis, "solid_test");
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(1);
    assert_eq!(report["verdict"], "not-flaky", "{context}");
    assert!(report["claim"].is_null(), "{context}");
    assert!(report["repro"].is_null(), "{context}");
    assert!(report["culprit"].is_null(), "{context}");
}

#[test]
fn a_test_that_always_fails_is_a_deterministic_failure() {
    let diagnosis = doctor("always_fails", "deterministic", 10, &[]);
    assert_shape(&diagnosis, "always_fails");
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(0);
    assert_eq!(report["verdict"], "deterministic-failure", "{context}");
    assert!(report["culprit"].is_null(), "{context}");
}

#[test]
fn a_test_that_sometimes_never_finishes_is_diagnosed_as_a_hang() {
    // It hangs in about 30% of runs: 20 runs all finish once in some 1,250 doctors.
    let diagnosis = doctor("sometimes_hangs", "hang", 20, &["--timeout", "2"]);
    assert_shape(&diagnosis, "sometimes_hangs");
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(0);
    assert_eq!(report["verdict"], "hang", "{context}");
    assert!(report["culprit"].is_null(), "{context}");
}

#[test]
fn the_terminal_report_has_diagnosis_evidence_and_repro_sections() {
    let Diagnosis { output, report } = order_diagnosis();
    output.assert_code(0);
    let lines: Vec<&str> = output.stdout.lines().map(str::trim).collect();
    let heading = |name: &str| {
        lines
            .iter()
            .position(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} section{output}"))
    };
    let (diagnosis, evidence, repro) =
        (heading("DIAGNOSIS"), heading("EVIDENCE"), heading("REPRO"));
    assert!(
        diagnosis < evidence && evidence < repro,
        "sections out of order{output}"
    );
    let command = report["repro"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no repro command in the JSON{output}"));
    assert!(
        output.stdout.contains(command),
        "the terminal report does not print the repro command {command:?}{output}"
    );
}

#[test]
fn a_test_name_that_matches_no_test_is_refused_in_one_line_naming_the_candidates() {
    let output = fixture()
        .probtest("doctor", &["no_such_test", "--test", "solid"], &[])
        .run();
    output.assert_code(2);
    // cargo's build progress comes first; the error is one line, the last.
    assert!(output.the_error_line().contains("solid_test"), "{output}");
}

#[test]
fn a_repro_code_that_cannot_be_read_is_refused_in_one_line() {
    let output = fixture().probtest("repro", &["pd1:garbage"], &[]).run();
    output.assert_code(2);
    let lines: Vec<&str> = output.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{output}");
    assert!(lines[0].starts_with("error:"), "{output}");
}
