//! End-to-end: the session's analysis beside pytest-probability's on the same data. One data
//! set (pass or fail decided by the case and the run number) runs as a Rust fixture and as a
//! Python bench file; function-level estimates, comparisons and baseline verdicts must agree.
//! Margins and the baseline regression gate set the exit status under `cargo test` and under
//! `cargo probtest run --nextest`.
//!
//! The peer comes from `PROBTEST_PEER_PYTHON` (a Python with `pytest-probability==0.3.0`), else
//! `python3` when it has the package. Without either the side-by-side tests say so and pass,
//! except under `CI`, where the peer must be there.

use super::{
    aggregate_lines, block, by_name, close, comparison, fixture, number, ours, peer, peer_with,
};
use serde_json::Value;

use crate::support;

#[test]
fn function_level_estimates_equal_the_peers() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let (output, report) = ours("reports/estimates.json", &[]);
    let (peer_stdout, theirs) = peer(python, "estimates.json", &[]);
    for name in ["qa", "triage", "single", "Overall"] {
        let (a, b) = (
            by_name(&report["aggregates"], name),
            by_name(&theirs["aggregates"], name),
        );
        assert_eq!(a["scope"], b["scope"]);
        assert_eq!(a["inputs"], b["inputs"], "{name}");
        assert_eq!(a["runs"], b["runs"], "{name}");
        assert!(
            (number(&a["estimate"]) - number(&b["estimate"])).abs() < 1e-12,
            "{name}"
        );
        assert_eq!(a["icc"].is_null(), b["icc"].is_null(), "{name}");
        if !a["icc"].is_null() {
            assert!(
                (number(&a["icc"]) - number(&b["icc"])).abs() < 1e-12,
                "{name}"
            );
        }
        assert_eq!(a["suppressed"], b["suppressed"], "{name}");
        assert_eq!(a["resamples"], 5000);
        assert_eq!(a["resampling_unit"], "input");
        if let Some(low) = b["ci"]["low"].as_f64() {
            // The same generator draws the same resamples: equal in fact, within 1.5 points
            // by the contract.
            assert!((number(&a["ci"]["low"]) - low).abs() <= 0.015, "{name}");
            assert!((number(&a["ci"]["high"]) - number(&b["ci"]["high"])).abs() <= 0.015);
            assert_eq!(a["ci"]["method"], "bootstrap");
        } else {
            assert!(
                a["ci"].is_null(),
                "{name}: fewer than 10 inputs, no interval"
            );
        }
    }
    // The printed lines are the peer's, character for character.
    assert_eq!(
        aggregate_lines(&output.stdout),
        aggregate_lines(&peer_stdout),
        "\n--- ours:{output}\n--- peer:\n{peer_stdout}"
    );
}

#[test]
fn the_seed_and_resamples_settings_change_the_interval_and_stay_reproducible() {
    let settings = [
        ("PROB_SEED", "7"),
        ("PROB_BOOTSTRAP", "400"),
        ("PROB_MIN_INPUTS", "30"),
    ];
    let (output, report) = ours("reports/seeded.json", &settings);
    let qa = by_name(&report["aggregates"], "qa");
    assert_eq!(
        (qa["seed"].as_u64(), qa["resamples"].as_u64()),
        (Some(7), Some(400))
    );
    // 24 inputs are fewer than 30: an estimate and ρ, no interval, and no line.
    assert!(qa["ci"].is_null(), "{qa}");
    assert_eq!(qa["suppressed"], "fewer than 30 inputs");
    let overall = by_name(&report["aggregates"], "Overall");
    assert_eq!(overall["inputs"], 110);
    assert!(!overall["ci"].is_null(), "110 inputs are enough: {overall}");
    assert!(
        output.stdout.contains("\n  Overall  N=110 inputs × k=10  "),
        "{output}"
    );
    assert_eq!(report["stats_config"]["seed"], 7);
    assert_eq!(report["stats_config"]["min_inputs"], 30);
    // The same settings, the same bounds.
    let (_, again) = ours("reports/seeded.json", &settings);
    assert_eq!(
        by_name(&again["aggregates"], "Overall")["ci"],
        overall["ci"]
    );
    let bad = fixture()
        .cargo_test(&["--test", "analysis", "bench_single"])
        .env("PROB_BOOTSTRAP", "many")
        .run();
    assert!(
        bad.stdout.contains("PROB_BOOTSTRAP") && bad.stdout.contains("`many`")
            || bad.stderr.contains("PROB_BOOTSTRAP") && bad.stderr.contains("`many`"),
        "{bad}"
    );
}

#[test]
fn comparisons_equal_the_peers() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let settings = [("PROB_COMPARE", "model"), ("PROB_ADJUST", "holm")];
    let (output, report) = ours("reports/compare.json", &settings);
    let (peer_stdout, theirs) = peer(
        python,
        "compare.json",
        &["--prob-compare=model", "--prob-adjust=holm"],
    );
    let expected = [
        ("single", "b"),
        ("triage", "large"),
        ("triage", "huge"),
        ("margin", "new"),
        ("equivalent", "new"),
    ];
    assert_eq!(
        report["comparisons"].as_array().map(Vec::len),
        Some(expected.len())
    );
    for (function, arm) in expected {
        let (a, b) = (
            comparison(&report["comparisons"], function, arm),
            comparison(&theirs["comparisons"], function, arm),
        );
        let what = format!("{function} {arm}");
        for field in [
            "axis", "baseline", "pairs", "unpaired", "p_method", "exact", "margin",
        ] {
            assert_eq!(a[field], b[field], "{what}: {field}");
        }
        for field in ["difference", "p", "p_adjusted"] {
            close(&a[field], &b[field], &format!("{what}: {field}"));
        }
        assert_eq!(a["adjustment"], "holm");
        assert_eq!(a["family"], b["family"]);
        assert_eq!(a["verdict"], b["verdict"], "{what}");
        assert_eq!(a["ci"]["method"], b["ci"]["method"], "{what}");
        for bound in ["low", "high"] {
            let (ours, theirs) = (number(&a["ci"][bound]), number(&b["ci"][bound]));
            let exact = a["ci"]["method"] == "newcombe";
            let tolerance = if exact { 1e-12 } else { 0.015 };
            assert!(
                (ours - theirs).abs() <= tolerance,
                "{what} {bound}: {ours} vs {theirs}"
            );
        }
        let inputs = a["inputs"].as_array().expect("inputs");
        assert_eq!(inputs.len(), b["inputs"].as_array().map_or(0, Vec::len));
        for (x, y) in inputs.iter().zip(b["inputs"].as_array().expect("inputs")) {
            assert_eq!(
                (&x["input"], &x["arm"], &x["baseline"]),
                (&y["input"], &y["arm"], &y["baseline"])
            );
            close(&x["p"], &y["p"], &format!("{what} fisher"));
            close(
                &x["ci"]["low"],
                &y["ci"]["low"],
                &format!("{what} newcombe"),
            );
        }
    }
    // The section reads as the peer's, but for the name of the setting in its note.
    let peer_lines: Vec<String> = block(&peer_stdout, "probability: comparisons");
    assert_eq!(
        block(&output.stdout, "probability: comparisons"),
        peer_lines,
        "\n--- ours:{output}\n--- peer:\n{peer_stdout}"
    );
}

#[test]
fn without_an_adjustment_the_p_values_are_said_to_be_exploratory() {
    let (output, report) = ours("reports/exploratory.json", &[("PROB_COMPARE", "model")]);
    let lines = block(&output.stdout, "probability: comparisons");
    assert_eq!(
        lines.last().map(String::as_str),
        Some("  p not adjusted for 5 comparisons: exploratory (PROB_ADJUST=holm adjusts them)"),
        "{output}"
    );
    let single = comparison(&report["comparisons"], "single", "b");
    assert_eq!(single["exploratory"], true);
    assert_eq!(single["ci"]["method"], "newcombe");
    assert_eq!(single["p_method"], "fisher");
    let explained = ours(
        "reports/explained.json",
        &[("PROB_COMPARE", "model"), ("PROB_EXPLAIN", "1")],
    )
    .0;
    let text = block(&explained.stdout, "probability: explained").join(" ");
    assert!(
        text.contains("Newcombe interval") && text.contains("exploratory"),
        "{explained}"
    );
    assert!(
        text.contains("ρ=0.38"),
        "the function-level reading: {explained}"
    );
}

#[test]
fn margins_are_gates_under_cargo_test() {
    // margin: 10 points worse everywhere, against a margin of 5: FAIL; equivalent: PASS.
    let (output, report) = ours("reports/margins.json", &[]);
    assert_eq!(output.code, Some(101), "{output}");
    assert_eq!(report["exit_status"], 1);
    assert_eq!(
        comparison(&report["comparisons"], "margin", "new")["verdict"],
        "fail"
    );
    assert_eq!(
        comparison(&report["comparisons"], "equivalent", "new")["verdict"],
        "pass"
    );
    let lines = block(&output.stdout, "probability: comparisons");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  margin[model]") && l.ends_with("≥−5 pp  FAIL")),
        "{output}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  equivalent[model]") && l.ends_with("±15 pp  PASS")),
        "{output}"
    );
    // The failing runs of a judged function are samples: only the margin's verdict fails an
    // item, and the passing margin alone exits 0.
    let equivalent = fixture()
        .cargo_test(&["--test", "analysis", "bench_equivalent"])
        .run();
    equivalent.assert_code(0);
    let margin = fixture()
        .cargo_test(&["--test", "analysis", "bench_margin"])
        .run();
    assert_eq!(margin.code, Some(101), "{margin}");
    assert!(
        margin
            .stdout
            .contains("margin[model]: new − base is Fail against a margin of 5 pp"),
        "{margin}"
    );
    assert!(
        margin.stdout.contains("1 failed")
            && margin
                .stdout
                .contains("test bench_margin__margins ... FAILED"),
        "one item, the function's margin item, fails: {margin}"
    );
}

#[test]
fn margins_are_gates_under_nextest() {
    let run = |filter: &str| {
        fixture()
            .probtest("run", &["--nextest"], &["--test", "analysis", filter])
            .env("NO_COLOR", "1")
            .env("PROB_JSON", "reports/nextest.json")
            .run()
    };
    // Plain nextest: the margin item judges the session store; the runs are samples.
    let plain = fixture()
        .nextest(
            "run",
            &["--test", "analysis", "--no-fail-fast", "bench_margin"],
        )
        .run();
    plain.assert_code(100);
    let printed = format!("{}{}", plain.stdout, plain.stderr);
    // nextest names a failed test twice: as it ends, and in the run's summary.
    let mut failed: Vec<&str> = printed
        .lines()
        .filter(|line| line.trim_start().starts_with("FAIL ["))
        .filter_map(|line| line.split_whitespace().last())
        .collect();
    failed.dedup();
    assert_eq!(failed, ["bench_margin__margins"], "{plain}");
    let margin = run("bench_margin");
    assert_ne!(margin.code, Some(0), "{margin}");
    assert!(
        block(&margin.stdout, "probability: comparisons")
            .iter()
            .any(|l| l.ends_with("≥−5 pp  FAIL")),
        "{margin}"
    );
    // Each process kept the report run by run; the session's end adds the analysis to it.
    let report = fixture().read_json("reports/nextest.json");
    assert_eq!(
        comparison(&report["comparisons"], "margin", "new")["verdict"],
        "fail"
    );
    assert_eq!(report["exit_status"], 1);
    assert!(
        !by_name(&report["aggregates"], "margin")["ci"].is_null(),
        "{report}"
    );
    let equivalent = run("bench_equivalent");
    assert!(
        block(&equivalent.stdout, "probability: comparisons")
            .iter()
            .any(|l| l.ends_with("±15 pp  PASS")),
        "{equivalent}"
    );
    let report = fixture().read_json("reports/nextest.json");
    assert_eq!(
        comparison(&report["comparisons"], "equivalent", "new")["verdict"],
        "pass"
    );
}

#[test]
fn baseline_verdicts_equal_the_peers() {
    let Some(python) = support::peer_python() else {
        return;
    };
    // The peer's own report is the baseline of both: each reads the other's reports.
    let (_, _) = peer(python, "before.json", &[]);
    let before = fixture().path("python/before.json");
    let before = before.to_str().expect("a UTF-8 path");
    let shift = [("PT_SHIFT", "1")];
    let (output, report) = ours(
        "reports/after.json",
        &[
            ("PT_SHIFT", "1"),
            ("PROB_BASELINE", before),
            ("PROB_MARGIN", "0.05"),
        ],
    );
    let (peer_stdout, theirs) = peer_with(
        python,
        "after.json",
        &[&format!("--prob-baseline={before}"), "--prob-margin=0.05"],
        &shift,
    );
    let (ours_block, theirs_block) = (&report["baseline"], &theirs["baseline"]);
    for field in [
        "path",
        "created",
        "margin",
        "paired",
        "only_current",
        "only_baseline",
    ] {
        assert_eq!(ours_block[field], theirs_block[field], "{field}");
    }
    let comparisons = theirs_block["comparisons"].as_array().expect("comparisons");
    assert_eq!(
        ours_block["comparisons"].as_array().map(Vec::len),
        Some(comparisons.len())
    );
    for b in comparisons {
        let function = b["function"].as_str().expect("function");
        let a = comparison(&ours_block["comparisons"], function, "current");
        assert_eq!(a["verdict"], b["verdict"], "{function}");
        assert_eq!(a["pairs"], b["pairs"], "{function}");
        assert_eq!(a["axis"], Value::Null);
        close(&a["difference"], &b["difference"], function);
        close(&a["p"], &b["p"], function);
        assert_eq!(a["ci"].is_null(), b["ci"].is_null(), "{function}");
        assert_eq!(a["suppressed"], b["suppressed"], "{function}");
        for bound in ["low", "high"].into_iter().filter(|_| !b["ci"].is_null()) {
            let (x, y) = (number(&a["ci"][bound]), number(&b["ci"][bound]));
            assert!((x - y).abs() <= 0.015, "{function} {bound}: {x} vs {y}");
        }
    }
    assert_eq!(
        comparison(&ours_block["comparisons"], "qa", "current")["verdict"],
        "fail"
    );
    assert_eq!(
        comparison(&ours_block["comparisons"], "triage", "current")["verdict"],
        "pass"
    );
    assert_eq!(
        block(&output.stdout, "probability: baseline"),
        block(&peer_stdout, "probability: baseline"),
        "\n--- ours:{output}\n--- peer:\n{peer_stdout}"
    );
}

/// Our own report of the fixture, as the baseline of a regression test: one file per test, so
/// that tests running at once never read one another's half-written baseline.
fn qa_baseline(name: &str) -> String {
    let relative = format!("reports/{name}.json");
    let (output, _) = ours(&relative, &[]);
    assert_eq!(
        output.code,
        Some(101),
        "qa's runs fail without a margin{output}"
    );
    let path = fixture().path(&relative);
    path.to_str().expect("a UTF-8 path").to_string()
}

#[test]
fn the_baseline_regression_gate_under_cargo_test() {
    let before = qa_baseline("before_cargo_test");
    let run = |shift: bool| {
        let mut run = fixture()
            .cargo_test(&["--test", "analysis", "bench_qa"])
            .env("PROB_BASELINE", &before)
            .env("PROB_MARGIN", "0.05")
            .env("NO_COLOR", "1");
        if shift {
            run = run.env("PT_SHIFT", "1");
        }
        run.run()
    };
    // The same results: within the margin, and qa's failing runs are samples of the gate.
    let same = run(false);
    same.assert_code(0);
    let lines = block(&same.stdout, "probability: baseline");
    assert!(
        lines[0].starts_with(&format!("  against {before} (")),
        "{same}"
    );
    assert!(
        lines[0].ends_with("): 24 cases paired, 86 only in the baseline"),
        "{same}"
    );
    assert!(
        lines[1].starts_with("  qa  current − baseline  0.0 pp [0.0, 0.0]  p=1  24 paired"),
        "{same}"
    );
    assert!(lines[1].ends_with("≥−5 pp  PASS"), "{same}");
    // One run fewer passes on most inputs: a drop of 8.8 points, more than the margin.
    let worse = run(true);
    assert_eq!(worse.code, Some(101), "{worse}");
    assert!(
        worse
            .stdout
            .contains("qa: current − baseline is Fail against a margin of 5 pp"),
        "{worse}"
    );
    let lines = block(&worse.stdout, "probability: baseline");
    assert!(
        lines[1].contains("−8.8 pp") && lines[1].ends_with("≥−5 pp  FAIL"),
        "{worse}"
    );
    // Without a margin the comparison reports, and each failing run fails as usual.
    let report_only = fixture()
        .cargo_test(&["--test", "analysis", "bench_qa"])
        .env("PROB_BASELINE", &before)
        .env("PT_SHIFT", "1")
        .env("NO_COLOR", "1")
        .run();
    assert_eq!(report_only.code, Some(101));
    assert!(
        !block(&report_only.stdout, "probability: baseline")[1].contains("FAIL"),
        "{report_only}"
    );
    // A baseline that cannot be read says so and fails.
    let missing = fixture()
        .cargo_test(&["--test", "analysis", "bench_single"])
        .env("PROB_BASELINE", "reports/no-such.json")
        .env("PROB_JSON", "reports/missing.json")
        .run();
    let report = fixture().read_json("reports/missing.json");
    assert_eq!(report["exit_status"], 1);
    assert!(
        report["warnings"]
            .to_string()
            .contains("PROB_BASELINE: cannot read"),
        "{report}"
    );
    assert_ne!(missing.code, Some(0));
}

#[test]
fn the_baseline_regression_gate_under_nextest() {
    let before = qa_baseline("before_nextest");
    let run = |shift: bool| {
        let mut run = fixture()
            .probtest("run", &["--nextest"], &["--test", "analysis", "bench_qa"])
            .env("PROB_BASELINE", &before)
            .env("PROB_MARGIN", "0.05")
            .env("NO_COLOR", "1");
        if shift {
            run = run.env("PT_SHIFT", "1");
        }
        run.run()
    };
    let worse = run(true);
    assert_ne!(worse.code, Some(0), "{worse}");
    let lines = block(&worse.stdout, "probability: baseline");
    assert!(lines[1].ends_with("≥−5 pp  FAIL"), "{worse}");
    let same = run(false);
    let lines = block(&same.stdout, "probability: baseline");
    assert!(lines[1].ends_with("≥−5 pp  PASS"), "{same}");
}

#[test]
fn a_stored_report_renders_its_function_level_lines_again() {
    let (output, _) = ours("reports/stored.json", &[]);
    let printed = aggregate_lines(&output.stdout);
    assert!(!printed.is_empty(), "no function-level lines{output}");
    let again = fixture()
        .probtest("report", &["--json", "reports/stored.json"], &[])
        .env("NO_COLOR", "1")
        .run();
    // The stored session fails: `report` exits 100 for it.
    again.assert_code(100);
    assert_eq!(aggregate_lines(&again.stdout), printed, "{again}");
}
