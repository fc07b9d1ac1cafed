//! End-to-end: probtest and pytest-probability read each other's reports. The same six cases
//! (one case with cost, one without, a count gate, a rate gate, an error, a plain flake) run
//! as a Rust fixture and as a Python bench file; pytest-probability pairs probtest's report as
//! its `--prob-baseline`, and `cargo probtest report --json` renders the peer's report with
//! the same rows the peer printed.
//!
//! The peer comes from `PROBTEST_PEER_PYTHON` (a Python with `pytest-probability==0.3.0`;
//! `.ci/run` makes one), else `python3` when it has the package. Without either the tests say
//! so and pass, except under `CI`, where the peer must be there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{self, Fixture};

/// The Rust side: row ids equal the peer's (`classify::costed`, `always`, ...).
const RUST_BENCHES: &str = r#"
use std::sync::atomic::{AtomicU32, Ordering};

use probtest::probability;

#[probability(runs = 3, params(kind = ["costed", "free"]))]
fn bench_classify(kind: &str) {
    if kind == "costed" {
        probtest::record_usage!(model = "m-small", input_tokens = 100, output_tokens = 5, cost = 0.001);
    }
}

#[probability(runs = 3, min_passes = 3)]
fn bench_always() {}

/// Exactly one of the three runs answers wrong, whichever order they run in.
static FLAKY: AtomicU32 = AtomicU32::new(0);

#[probability(runs = 3, min_rate = 0.5)]
fn bench_flaky() {
    let run = FLAKY.fetch_add(1, Ordering::SeqCst) + 1;
    assert_ne!(run, 2, "run 2 answered wrong");
}

#[probability(runs = 3)]
fn bench_broken() {
    panic!("ValueError: boom");
}

static FLAKY_PLAIN: AtomicU32 = AtomicU32::new(0);

#[probability(runs = 3)]
fn bench_flaky_plain() {
    let run = FLAKY_PLAIN.fetch_add(1, Ordering::SeqCst) + 1;
    assert_ne!(run, 3);
}
"#;

/// The Python side, for pytest-probability 0.3.
const PYTHON_BENCHES: &str = r#"
import itertools

import pytest
from pytest_probability import record_usage


@pytest.mark.parametrize("kind", ["costed", "free"])
def bench_classify(kind):
    if kind == "costed":
        record_usage(model="m-small", input_tokens=100, output_tokens=5, cost=0.001)


@pytest.mark.probability(min_passes=3)
def bench_always():
    pass


_flaky = itertools.count(1)


@pytest.mark.probability(min_rate=0.5)
def bench_flaky():
    assert next(_flaky) != 2, "run 2 answered wrong"


def bench_broken():
    raise ValueError("boom")


_flaky_plain = itertools.count(1)


def bench_flaky_plain():
    assert next(_flaky_plain) != 3
"#;

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("interop")
            .test("demo", RUST_BENCHES)
            .build()
    })
}

/// A directory holding the Python bench file.
fn python_project() -> PathBuf {
    let dir = fixture().path("python");
    std::fs::create_dir_all(&dir).expect("python project directory");
    std::fs::write(dir.join("bench_demo.py"), PYTHON_BENCHES).expect("bench file");
    std::fs::write(
        dir.join("pytest.ini"),
        "[pytest]\naddopts = -p no:cacheprovider\n",
    )
    .expect("pytest.ini");
    dir
}

/// pytest with the peer, in the Python project: `(exit code, stdout, stderr)`.
fn pytest(python: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = Command::new(python);
    command
        .args([
            "-m",
            "pytest",
            "--prob-runs=3",
            "-p",
            "no:hermetic",
            "-p",
            "no:flakedoctor",
        ])
        .args(args)
        .current_dir(python_project());
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("PYTEST_") || name == "CI" {
            command.env_remove(name.as_ref());
        }
    }
    let output = command.output().expect("pytest starts");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The lines of the `probability` section's rows and totals, as printed.
fn summary_lines(stdout: &str) -> Vec<String> {
    let start = stdout
        .lines()
        .position(|line| line.starts_with('=') && line.trim_matches('=') == " probability ")
        .unwrap_or_else(|| panic!("no probability section in\n{stdout}"));
    stdout
        .lines()
        .skip(start + 1)
        .take_while(|line| !line.starts_with('='))
        .filter(|line| !line.trim_start().starts_with("Report:") && !line.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_peer_pairs_a_probtest_report_as_its_baseline() {
    let Some(python) = support::peer_python() else {
        return;
    };
    // With metrics and explanations, so that the peer reads every shape schema 4 adds.
    let output = fixture()
        .cargo_test(&["--test", "demo"])
        .env("PROB_JSON", "ours.json")
        .env("PROB_METRIC", "pass^2")
        .env("PROB_EXPLAIN", "1")
        .run();
    assert_eq!(output.code, Some(101), "two cases fail{output}");
    let ours = fixture().path("ours.json");
    let report = support::read_json(&ours);
    assert_eq!(report["schema"], 4);
    assert_eq!(report["aggregates"][0]["metrics"]["pass^2"]["k"], 2);
    assert!(report["rows"][0]["explanation"].is_string(), "{report}");
    let baseline = format!("--prob-baseline={}", ours.display());
    let (code, stdout, stderr) = pytest(python, &[&baseline]);
    // 1: runs failed in this session; 4 would be a baseline the peer refused to read.
    assert_eq!(code, Some(1), "\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("6 cases paired"),
        "every case pairs by its row id\n{stdout}"
    );
    assert!(!stdout.contains("only in the baseline"), "{stdout}");
}

#[test]
fn cargo_probtest_report_renders_a_peer_report_as_the_peer_printed_it() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let theirs = fixture().path("python/peer.json");
    let json = format!("--prob-json={}", theirs.display());
    let (code, peer_stdout, stderr) = pytest(python, &[&json]);
    assert_eq!(code, Some(1), "\n{peer_stdout}\n{stderr}");
    let path = theirs.to_string_lossy().into_owned();
    let output = fixture()
        .probtest("report", &["--json", &path], &[])
        .env("NO_COLOR", "1")
        .run();
    // The report holds errored runs and an undecided gate: `report` fails, as nextest does.
    output.assert_code(100);
    // probtest also warns, in its summary, of a gate the case's runs cannot pass (3 runs for
    // min_rate 0.5); the peer says so before running instead.
    let ours: Vec<String> = summary_lines(&output.stdout)
        .into_iter()
        .filter(|line| !line.starts_with("  Warning: flaky: min_rate=0.5"))
        .collect();
    assert_eq!(
        ours,
        summary_lines(&peer_stdout),
        "the same rows, intervals, costs, statuses and totals\n--- ours:{output}\n--- peer:\n{peer_stdout}"
    );
}
