//! End-to-end: `cargo probtest doctor` on flakes modelled on real ones: races between sibling
//! tests on a shared global that fail in a few suite runs of a hundred, UTC and local dates
//! mixed, a child process that prints libtest's line for the test, a variable desktops set, a
//! brittle test, and one test that fails two ways.

use super::{assert_flaky, doctor, doctor_alone, preload_unavailable, run_repro};
use crate::support::{machine, unavailable};

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
    let _alone = machine::alone();
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
fn a_race_that_needs_the_suites_timing_names_no_innocent() {
    if std::thread::available_parallelism().map_or(1, usize::from) < 2 {
        unavailable(
            "running tests beside each other",
            "this machine gives the suite one CPU",
        );
        return;
    }
    let diagnosis = doctor_alone("c_paced_victim", "paced", 10, &["--axes", "order,parallel"]);
    let report = &diagnosis.report;
    let context = format!("{}\n{report:#}", diagnosis.output);
    diagnosis.output.assert_code(0);
    assert_eq!(report["verdict"], "flaky-parallel", "{context}");
    // The pacer only sets up the timing: neither it nor the culprit is named alone.
    assert!(report["culprit"].is_null(), "{context}");
    let warned = report["warnings"].as_array().is_some_and(|warnings| {
        warnings.iter().any(|warning| {
            warning
                .as_str()
                .is_some_and(|text| text.contains("a_pacer") && text.contains("b_culprit"))
        })
    });
    assert!(warned, "{context}");
}
