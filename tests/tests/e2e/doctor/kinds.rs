//! End-to-end: `cargo probtest doctor` on one test of a fixture crate whose test binaries each
//! hold one kind of flake (time, entropy, order, parallel), a test that never fails, one that
//! always fails and one that sometimes hangs. Each diagnosis is checked through its JSON: the
//! verdict, the culprit, a repro that fails every one of its runs, a counterfactual that never
//! fails; and the printed repro command is run to see it fail. Bad input is refused in one line.
//!
//! The time and entropy axes need a library preloaded into the test process: where the machine
//! cannot preload one, their tests are skipped with a message, and fail instead under `CI=true`.

use std::sync::OnceLock;
use std::time::Duration;

use super::{
    assert_flaky, assert_shape, doctor, doctor_alone, doctor_within, fixture, preload_unavailable,
    run_repro, Diagnosis,
};
use crate::support::{self, unavailable};
use serde_json::Value;

/// The order fixture's diagnosis, shared by the tests of its JSON and of its terminal report.
fn order_diagnosis() -> &'static Diagnosis {
    static DIAGNOSIS: OnceLock<Diagnosis> = OnceLock::new();
    DIAGNOSIS.get_or_init(|| doctor("b_order_victim", "order", 10, &[]))
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
    // It says what it could have seen: the rates alone and beside each sibling it rules out.
    let explanation = report["explanation"].as_str().unwrap_or_default();
    assert!(
        explanation.contains("A failure rate above ")
            && explanation.contains("per run alone (10 runs)")
            && explanation.contains("% beside its one sibling (300 runs or more each)")
            && explanation.contains("would have shown with 95% confidence"),
        "{context}"
    );
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

#[test]
fn a_ttl_cache_in_async_code_is_diagnosed_as_time_by_tick_jitter() {
    if let Some(why) = preload_unavailable() {
        unavailable("jittering a test's clocks", why);
        return;
    }
    // Bounded: under a jittered clock, the awaited fetch's sleep must still end.
    let diagnosis = doctor_within(
        "cached_token_victim",
        "async_clock",
        10,
        &[],
        Duration::from_secs(900),
    );
    assert_flaky(&diagnosis, "cached_token_victim", "flaky-time", None);
    let report = &diagnosis.report;
    assert_eq!(report["headline"], "assumes it runs fast", "{report:#}");
    let repro = &report["repro"];
    assert!(
        repro["runs"].as_u64().is_some_and(|runs| runs >= 5),
        "{report:#}"
    );
    // Two more runs of its command than `assert_flaky` makes: five of five fail.
    let command = repro["command"].as_str().expect("a repro command");
    for attempt in 4..=5 {
        let rerun = run_repro(command);
        rerun.assert_code(101);
        assert!(
            rerun
                .stdout
                .contains("REPRODUCED: cached_token_victim failed"),
            "attempt {attempt}{rerun}"
        );
    }
}

/// Diagnoses `test` of the async clock fixture on the time axis alone, within a bound: every
/// run under every pinned instant and under tick jitter ends, and passes.
#[track_caller]
fn assert_ends_under_every_clock(test: &str) {
    let diagnosis = doctor_within(
        test,
        "async_clock",
        3,
        &["--axes", "time", "--timeout", "10"],
        Duration::from_secs(600),
    );
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    assert_eq!(report["verdict"], "not-flaky", "{context}");
    output.assert_code(1);
    let evidence = report["evidence"].as_array().expect("evidence");
    let jitter = evidence.iter().any(|entry| {
        entry["label"]
            .as_str()
            .is_some_and(|label| label.contains("tick jitter"))
            && entry["runs"].as_u64().is_some_and(|runs| runs > 0)
    });
    assert!(jitter, "no run under tick jitter: {context}");
    for entry in evidence {
        assert_eq!(entry["failed"], 0, "{entry}: {context}");
    }
}

#[test]
fn awaited_sleeps_end_under_every_clock_on_the_current_thread_runtime() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning and jittering a test's clocks", why);
        return;
    }
    assert_ends_under_every_clock("current_thread_sleeps_and_times_out");
}

#[test]
fn awaited_sleeps_end_under_every_clock_on_the_multi_thread_runtime() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning and jittering a test's clocks", why);
        return;
    }
    assert_ends_under_every_clock("multi_thread_sleeps_and_times_out");
}

#[test]
fn a_blocking_workers_timed_wait_ends_under_every_clock() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning and jittering a test's clocks", why);
        return;
    }
    assert_ends_under_every_clock("a_blocking_worker_waits_with_a_timeout");
}

#[test]
fn async_probtest_rows_end_under_every_clock() {
    if let Some(why) = preload_unavailable() {
        unavailable("pinning and jittering a test's clocks", why);
        return;
    }
    assert_ends_under_every_clock("async_sleeps");
    assert_ends_under_every_clock("async_sleeps_timed");
}
