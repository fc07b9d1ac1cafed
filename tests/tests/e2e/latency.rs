//! End-to-end: latency quantiles and latency gates (`latency_quantile`, `max_latency`,
//! `PROB_LATENCY`). Under `cargo test` and under nextest, a case slower than its limit fails its
//! verdict item and the session though every run passes, a case with too few runs for the
//! interval's upper bound is UNDECIDED and warned about, and the terminal and the JSON report
//! say the same figures; the figures are pytest-probability's on the same run times.

use std::sync::OnceLock;

use crate::support::{self, report_records, report_row, Fixture, Output};
use serde_json::Value;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("latency")
            .test("latency", include_str!("../../fixtures/latency.rs"))
            .build()
    })
}

/// What both runners must agree on: verdicts, the warning, the blocks and the report's fields.
fn check(output: &Output, report: &Value) {
    let text = format!("{}{}", output.stdout, output.stderr);
    assert!(
        text.contains("Gates:   3 passed, 1 failed, 1 undecided"),
        "{output}"
    );
    assert!(
        text.contains("short: max_latency=0.05s (p50) at 95% needs >=6 runs; this case has 3"),
        "{output}"
    );
    assert!(text.contains("probability: latency"), "{output}");
    let latency = |case: &str| report_row(report, case)["latency"].clone();
    assert_eq!(latency("fast")["verdict"], "pass", "{report}");
    assert_eq!(latency("slow")["verdict"], "fail", "{report}");
    assert_eq!(latency("short")["verdict"], "undecided", "{report}");
    assert_eq!(latency("reported")["verdict"], Value::Null, "{report}");
    assert_eq!(latency("slow")["max_latency"], 0.05);
    assert_eq!(latency("slow")["min_runs"], 6);
    assert_eq!(latency("reported")["quantile"], 0.9);
    assert_eq!(latency("slow")["ci"]["method"], "order-statistic");
    assert!(
        latency("slow")["ci"]["low"].as_f64().unwrap() >= 0.12,
        "{report}"
    );
    assert_eq!(latency("short")["ci"]["high"], Value::Null, "{report}");
    assert_eq!(report["exit_status"], 1);
}

#[test]
fn under_cargo_test_a_slow_case_fails_its_latency_gate() {
    let output = fixture()
        .cargo_test(&["--test", "latency"])
        .env("PROB_LATENCY", "1")
        .env("PROB_EXPLAIN", "1")
        .env("PROB_JSON", "reports/cargo.json")
        .run();
    output.assert_code(101);
    assert_eq!(
        output.failed_tests(),
        ["bench_short::verdict", "bench_slow::verdict"],
        "{output}"
    );
    assert!(
        output
            .stdout
            .contains("slow: latency gate max_latency=0.05s (p50) is Fail on 8 runs"),
        "{output}"
    );
    // Warned before the runs, past libtest's capture, as well as in the summary.
    assert!(
        output
            .stderr
            .contains("probtest: warning: short: max_latency=0.05s (p50) at 95% needs >=6 runs"),
        "{output}"
    );
    check(&output, &fixture().read_json("reports/cargo.json"));
    // PROB_EXPLAIN reads each latency line in words, with what to do next.
    let explained = output
        .stdout
        .split("probability: explained")
        .nth(1)
        .unwrap_or_default();
    let words = explained.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "Your limit is 0.05s, and that whole range is above it, so this case is too slow."
        ),
        "{output}"
    );
    assert!(
        words.contains("3 runs are too few to put any limit on it at 95% confidence: that takes at least 6 runs."),
        "{output}"
    );
}

#[test]
fn under_nextest_a_slow_case_fails_its_latency_gate() {
    // Plain nextest: the verdict items judge from the session store, and the report the
    // processes keep run by run has the same latencies and exit status.
    let plain = fixture()
        .nextest("run", &["--no-fail-fast", "--test", "latency"])
        .env("PROB_JSON", "reports/plain.json")
        .run();
    plain.assert_code(100);
    let kept = fixture().read_json("reports/plain.json");
    assert_eq!(kept["exit_status"], 1, "{kept}");
    assert_eq!(
        report_row(&kept, "slow")["latency"]["verdict"],
        "fail",
        "{kept}"
    );
    assert_eq!(
        report_row(&kept, "fast")["latency"]["verdict"],
        "pass",
        "{kept}"
    );
    let text = format!("{}{}", plain.stdout, plain.stderr);
    assert!(
        text.contains("slow: latency gate max_latency=0.05s (p50) is Fail on 8 runs"),
        "{plain}"
    );
    // cargo probtest run --nextest prints the summary and keeps the report.
    let output = fixture()
        .probtest(
            "run",
            &["--nextest"],
            &["--no-fail-fast", "--test", "latency"],
        )
        .env("PROB_LATENCY", "1")
        .env("PROB_JSON", "reports/nextest.json")
        .run();
    output.assert_code(100);
    check(&output, &fixture().read_json("reports/nextest.json"));
}

#[test]
fn early_stopping_leaves_a_latency_gated_case_every_run() {
    let output = fixture()
        .cargo_test(&["--test", "latency", "bench_both"])
        .env("PROB_STOP", "curtail")
        .env("PROB_JSON", "reports/stop.json")
        .run();
    output.assert_code(0);
    let report = fixture().read_json("reports/stop.json");
    let row = report_row(&report, "both");
    assert_eq!(row["total"], 30, "{report}");
    assert_eq!(row["latency"]["total"], 30, "{report}");
    assert_eq!(row["stopped"], Value::Null, "{report}");
}

/// The peer's quantile, ranks, bounds, coverage and fewest runs on this report's run times.
fn peer_latency(python: &std::path::Path, times: &[f64], quantile: f64) -> Value {
    let script = "import json, sys\n\
        from pytest_probability import stats\n\
        t, q = json.loads(sys.argv[1]), float(sys.argv[2])\n\
        r, s = stats.quantile_ranks(len(t), q, 0.95)\n\
        low, high = stats.quantile_interval(t, q, 0.95)\n\
        print(json.dumps({'estimate': stats.sample_quantile(t, q), 'low': low, 'high': high,\n\
            'ranks': [r, s], 'coverage': stats.quantile_coverage(len(t), q, r, s),\n\
            'min_runs': stats.quantile_min_n(q, 0.95)}))\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(serde_json::to_string(times).unwrap())
        .arg(quantile.to_string())
        .output()
        .expect("the peer's Python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the peer prints JSON")
}

#[test]
fn the_figures_are_the_peers_on_the_same_run_times() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let output = fixture()
        .cargo_test(&["--test", "latency"])
        .env("PROB_JSON", "reports/peer.json")
        .run();
    output.assert_code(101);
    let report = fixture().read_json("reports/peer.json");
    for case in ["fast", "slow", "short", "reported", "both"] {
        let times: Vec<f64> = report_records(&report, case)
            .iter()
            .map(|record| record["elapsed"].as_f64().expect("elapsed"))
            .collect();
        let ours = &report_row(&report, case)["latency"];
        let theirs = peer_latency(python, &times, ours["quantile"].as_f64().unwrap());
        assert_eq!(ours["estimate"], theirs["estimate"], "{case}");
        assert_eq!(ours["ci"]["low"], theirs["low"], "{case}");
        assert_eq!(ours["ci"]["high"], theirs["high"], "{case}");
        assert_eq!(ours["ci"]["ranks"], theirs["ranks"], "{case}");
        assert_eq!(ours["min_runs"], theirs["min_runs"], "{case}");
        let (a, b) = (
            ours["ci"]["coverage"].as_f64().unwrap(),
            theirs["coverage"].as_f64().unwrap(),
        );
        assert!((a - b).abs() <= 1e-12, "{case}: {a} vs {b}");
    }
}
