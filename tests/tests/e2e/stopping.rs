//! End-to-end: early stopping (`PROB_STOP`). Under `cargo test` and under `cargo nextest run`
//! a decided case's remaining runs are recorded as stopped, never run and never passes; the
//! curtailed verdicts are those of running every run; the JSON has `stopping` and
//! `rows[].stopped` in pytest-probability's spelling; and pytest-probability, given the same
//! outcomes, stops the same runs with the same verdicts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{self, peer_python, report_records, report_row, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("stopping")
            .test("stopping", include_str!("../../fixtures/stopping.rs"))
            .build()
    })
}

const GATED: [&str; 4] = ["sure", "hopeless", "mixed", "count"];

/// `cargo test` on one thread, so that runs go in order as the peer's do.
fn cargo_test(mode: &str, report: &str) -> (Output, Value) {
    let fixture = fixture();
    fixture.remove(report);
    let output = fixture
        .cargo_test(&["--test", "stopping", "--", "--test-threads=1"])
        .env("PROB_JSON", report)
        .env("PROB_STOP", mode)
        .run();
    let json = fixture.read_json(report);
    (output, json)
}

/// The outcomes of a case's records by run: `P`, `F`, `E` or `S` (stopped).
fn outcomes(report: &Value, case: &str) -> String {
    let mut records: Vec<(u64, char)> = report_records(report, case)
        .iter()
        .map(|record| {
            let run = record["run"].as_u64().expect("run");
            let outcome = match record["outcome"].as_str().expect("outcome") {
                "pass" => 'P',
                "fail" => 'F',
                "error" => 'E',
                "stopped" => 'S',
                other => panic!("outcome {other}"),
            };
            (run, outcome)
        })
        .collect();
    records.sort();
    records.into_iter().map(|(_, outcome)| outcome).collect()
}

/// What a report says of a case's stop: `(after, planned, skipped, verdict)`.
fn stop_of(row: &Value) -> Option<(u64, u64, u64, String)> {
    let stop = row.get("stopped").filter(|stop| !stop.is_null())?;
    Some((
        stop["after"].as_u64().expect("after"),
        stop["planned"].as_u64().expect("planned"),
        stop["skipped"].as_u64().expect("skipped"),
        stop["verdict"].as_str().expect("verdict").to_string(),
    ))
}

/// Stopped runs are recorded, never counted: not passes, not in the total, and every planned
/// run is either a sample or stopped; with runs `in_order`, the stopped ones all come after the
/// last that ran (on parallel threads a run may start late, after later ones decided its case).
fn assert_stopped_runs_are_kept_apart(report: &Value, in_order: bool) {
    let mut skipped_total = 0;
    for case in GATED.iter().chain(&["ungated"]) {
        let row = report_row(report, case);
        let runs = outcomes(report, case);
        let stopped = runs.matches('S').count() as u64;
        let planned = row["runs"].as_u64().expect("runs");
        assert_eq!(
            runs.len() as u64,
            planned,
            "{case}: every run recorded: {runs}"
        );
        assert_eq!(
            row["total"].as_u64(),
            Some(planned - stopped),
            "{case}: {row}"
        );
        assert_eq!(
            row["passes"].as_u64(),
            Some(runs.matches('P').count() as u64),
            "{case}: a stopped run is never a pass"
        );
        assert!(
            !in_order || !runs.trim_end_matches('S').contains('S'),
            "{case}: runs stop for good once decided: {runs}"
        );
        match stop_of(row) {
            Some((after, planned_runs, skipped, _)) => {
                assert_eq!(
                    (after, planned_runs, skipped),
                    (planned - stopped, planned, stopped)
                );
            }
            None => assert_eq!(stopped, 0, "{case}"),
        }
        skipped_total += stopped;
    }
    let stopping = &report["stopping"];
    assert_eq!(stopping["runs_skipped"].as_u64(), Some(skipped_total));
    assert_eq!(
        stopping["runs_planned"].as_u64(),
        Some(report["totals"]["count"].as_u64().expect("count") + skipped_total)
    );
    assert_eq!(
        outcomes(report, "ungated"),
        "P".repeat(10),
        "ungated runs never stop"
    );
}

/// Each gated case's verdict, by case.
fn verdicts(report: &Value) -> Vec<(String, String)> {
    GATED
        .iter()
        .map(|case| {
            let verdict = report_row(report, case)["gate"]["verdict"].as_str();
            (case.to_string(), verdict.expect("a verdict").to_string())
        })
        .collect()
}

#[test]
fn curtail_under_cargo_test_skips_runs_whose_verdict_cannot_change() {
    let (full_output, full) = cargo_test("off", "reports/off.json");
    let (output, report) = cargo_test("curtail", "reports/curtail.json");
    // The hopeless case FAILs either way, so both exit 101.
    assert_eq!(full_output.code, Some(101), "{full_output}");
    assert_eq!(output.code, Some(101), "{output}");
    assert!(full.get("stopping").is_none(), "off reports stop nothing");
    assert_stopped_runs_are_kept_apart(&report, true);
    // Curtailment never changes a verdict: the same as running every run.
    assert_eq!(verdicts(&report), verdicts(&full));
    // The mixed case's PASS needs its last runs: it is not certain before.
    for case in ["sure", "hopeless", "count"] {
        assert!(
            stop_of(report_row(&report, case)).is_some(),
            "{case} stopped"
        );
    }
    // The count gate's tenth pass comes at run 19: only run 20 is left to skip.
    assert_eq!(
        outcomes(&report, "count"),
        format!("{}S", "PF".repeat(9) + "P")
    );
    let stopping = &report["stopping"];
    assert_eq!(stopping["mode"], "curtail");
    assert_eq!(stopping["active"], true);
    assert_eq!(stopping["cases"], 3);
    // Cost avoided: the sure case's skipped runs at its cent per run.
    let sure = stop_of(report_row(&report, "sure")).expect("sure stopped");
    let avoided = report_row(&report, "sure")["stopped"]["cost_avoided"]
        .as_f64()
        .expect("cost avoided");
    assert!((avoided - 0.01 * sure.2 as f64).abs() < 1e-9, "{avoided}");
    assert!((stopping["cost_avoided"].as_f64().expect("total") - avoided).abs() < 1e-9);
    // The summary says it.
    let skipped = stopping["runs_skipped"].as_u64().expect("skipped");
    let section = output.section();
    assert!(
        section
            .overall
            .contains(&format!(", {skipped} runs stopped")),
        "{}",
        section.overall
    );
    assert!(
        output
            .stdout
            .contains(&format!("  Stopped: 3 cases early, saving {skipped} of")),
        "{output}"
    );
    assert!(
        section
            .text
            .contains(&format!("decided after {}/40", sure.0)),
        "{}",
        section.text
    );
}

#[test]
fn curtail_with_parallel_test_threads_keeps_the_verdicts() {
    // Runs in flight count among those that could still change the verdict, so however the
    // threads interleave, a curtailed verdict is the one every run would give.
    let fixture = fixture();
    let mut reports = Vec::new();
    for (mode, report) in [
        ("off", "reports/threads-off.json"),
        ("curtail", "reports/threads.json"),
    ] {
        fixture.remove(report);
        let output = fixture
            .cargo_test(&["--test", "stopping", "--", "--test-threads=4"])
            .env("PROB_JSON", report)
            .env("PROB_STOP", mode)
            .run();
        assert_eq!(output.code, Some(101), "{output}");
        reports.push(fixture.read_json(report));
    }
    assert_stopped_runs_are_kept_apart(&reports[1], false);
    assert!(reports[1]["stopping"]["runs_skipped"].as_u64() > Some(0));
    assert_eq!(verdicts(&reports[1]), verdicts(&reports[0]));
}

#[test]
fn sequential_under_cargo_test_judges_on_the_confidence_sequence() {
    let (output, report) = cargo_test("sequential", "reports/sequential.json");
    assert_eq!(output.code, Some(101), "the hopeless case FAILs{output}");
    assert_stopped_runs_are_kept_apart(&report, true);
    assert_eq!(report["stopping"]["mode"], "sequential");
    for case in ["sure", "hopeless", "mixed"] {
        let gate = &report_row(&report, case)["gate"];
        assert_eq!(gate["method"], "sequential", "{case}: {gate}");
        assert_eq!(gate["prior"]["a"], 0.5, "{case}: the Jeffreys mixture");
    }
    // A count gate has no interval to watch: it is curtailed.
    assert_eq!(report_row(&report, "count")["gate"]["rule"], "min_passes");
    let sure = report_row(&report, "sure");
    assert_eq!(sure["gate"]["verdict"], "pass");
    // It stops as soon as the sequence clears the bar: the run before still straddled it.
    let (after, ..) = stop_of(sure).expect("stopped");
    let low = sure["gate"]["low"].as_f64().expect("low");
    assert!(low > 0.5, "{sure}");
    assert_eq!(report_row(&report, "hopeless")["gate"]["verdict"], "fail");
    let (_, curtailed) = cargo_test("curtail", "reports/curtail-sure.json");
    let (curtailed_after, ..) = stop_of(report_row(&curtailed, "sure")).expect("stopped");
    assert!(after < curtailed_after, "{after} vs {curtailed_after}");
}

/// `cargo nextest run` on one thread: a process per run, each deciding from the store.
fn nextest(mode: &str, report: &str) -> Option<(Output, Value)> {
    let fixture = fixture();
    fixture.remove(report);
    let output = fixture
        .nextest(
            "run",
            &[
                "--test",
                "stopping",
                "--test-threads",
                "1",
                "--no-fail-fast",
            ],
        )
        .env("PROB_JSON", report)
        .env("PROB_STOP", mode)
        .run();
    if output.stderr.contains("no such command: `nextest`") {
        support::unavailable("cargo nextest", "cargo-nextest is not installed");
        return None;
    }
    let json = fixture.read_json(report);
    Some((output, json))
}

#[test]
fn under_nextest_the_decision_reads_the_session_store() {
    for mode in ["curtail", "sequential"] {
        let Some((output, report)) = nextest(mode, &format!("reports/nextest-{mode}.json")) else {
            return;
        };
        assert_stopped_runs_are_kept_apart(&report, true);
        let (_, in_process) = cargo_test(mode, &format!("reports/cargo-{mode}.json"));
        // One process per run stops the same runs as one process for all of them.
        for case in GATED {
            assert_eq!(
                outcomes(&report, case),
                outcomes(&in_process, case),
                "{mode} {case}{output}"
            );
            assert_eq!(
                stop_of(report_row(&report, case)),
                stop_of(report_row(&in_process, case)),
                "{mode} {case}"
            );
        }
        assert_eq!(verdicts(&report), verdicts(&in_process), "{mode}");
    }
}

/// The fixture's benches for pytest-probability: the same outcomes by run number (the peer
/// runs each case's runs in order, so a counter per case is its run number).
const PYTHON_BENCHES: &str = r#"
import itertools

import pytest
from pytest_probability import record_cost

_sure, _hopeless, _mixed, _count = (itertools.count(1) for _ in range(4))


@pytest.mark.probability(runs=40, min_rate=0.5)
def bench_sure():
    next(_sure)
    record_cost(0.01)


@pytest.mark.probability(runs=30, min_rate=0.9)
def bench_hopeless():
    run = next(_hopeless)
    assert run <= 3, f"run {run} answers wrong"


@pytest.mark.probability(runs=40, min_rate=0.8)
def bench_mixed():
    run = next(_mixed)
    assert run not in (2, 5), f"run {run} answers wrong"


@pytest.mark.probability(runs=20, min_passes=10)
def bench_count():
    run = next(_count)
    assert run % 2 == 1, f"run {run} answers wrong"


@pytest.mark.probability(runs=10)
def bench_ungated():
    pass
"#;

fn peer_report(python: &Path, mode: &str) -> Value {
    let dir: PathBuf = fixture().path("python");
    std::fs::create_dir_all(&dir).expect("python project");
    std::fs::write(dir.join("bench_stopping.py"), PYTHON_BENCHES).expect("bench file");
    std::fs::write(
        dir.join("pytest.ini"),
        "[pytest]\naddopts = -p no:cacheprovider\n",
    )
    .expect("pytest.ini");
    let report = dir.join(format!("peer-{mode}.json"));
    let _ = std::fs::remove_file(&report);
    let mut command = Command::new(python);
    command
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:hermetic",
            "-p",
            "no:flakedoctor",
        ])
        .arg(format!("--prob-stop={mode}"))
        .arg(format!("--prob-json={}", report.display()))
        .current_dir(&dir);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("PYTEST_") || name.starts_with("PROB_") || name == "CI" {
            command.env_remove(name.as_ref());
        }
    }
    let output = command.output().expect("pytest starts");
    assert!(
        report.exists(),
        "pytest-probability wrote no report:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    support::read_json(&report)
}

#[test]
fn the_peer_stops_the_same_runs_with_the_same_verdicts() {
    let Some(python) = peer_python() else { return };
    for mode in ["curtail", "sequential"] {
        let peer = peer_report(python, mode);
        let (_, ours) = cargo_test(mode, &format!("reports/side-{mode}.json"));
        for case in GATED.iter().chain(&["ungated"]) {
            let (theirs, mine) = (report_row(&peer, case), report_row(&ours, case));
            assert_eq!(stop_of(mine), stop_of(theirs), "{mode} {case}");
            for key in ["passes", "fails", "errors", "total"] {
                assert_eq!(mine[key], theirs[key], "{mode} {case} {key}");
            }
            let (a, b) = (&mine["gate"], &theirs["gate"]);
            if !b.is_null() {
                assert_eq!(a["verdict"], b["verdict"], "{mode} {case}");
                assert_eq!(a["method"], b["method"], "{mode} {case}");
                for bound in ["low", "high"] {
                    let (x, y) = (a[bound].as_f64(), b[bound].as_f64());
                    assert!(
                        (x.expect("ours") - y.expect("theirs")).abs() < 1e-12,
                        "{mode} {case} {bound}: {a} vs {b}"
                    );
                }
            }
            let (x, y) = (
                mine["stopped"]["cost_avoided"].as_f64(),
                theirs["stopped"]["cost_avoided"].as_f64(),
            );
            assert_eq!(x.is_some(), y.is_some(), "{mode} {case}");
            if let (Some(x), Some(y)) = (x, y) {
                assert!((x - y).abs() < 1e-9, "{mode} {case}: {x} vs {y}");
            }
        }
        for key in ["mode", "active", "cases", "runs_skipped", "runs_planned"] {
            assert_eq!(ours["stopping"][key], peer["stopping"][key], "{mode} {key}");
        }
        let (x, y) = (
            ours["stopping"]["cost_avoided"].as_f64().expect("ours"),
            peer["stopping"]["cost_avoided"].as_f64().expect("theirs"),
        );
        assert!((x - y).abs() < 1e-9, "{mode}: {x} vs {y}");
    }
}
