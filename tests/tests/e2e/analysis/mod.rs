//! The side-by-side harness of the analysis tests: the analysis fixture and its Python twin, run
//! through cargo test and through pytest-probability, and the readers of their reports and
//! summaries.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::{self, Fixture, Output};

mod metrics;
mod side_by_side;

/// The Python side of `tests/fixtures/analysis.rs`: the same row ids and the same counts.
pub(crate) const PYTHON_BENCHES: &str = r#"
import collections
import os

import pytest

_runs = collections.Counter()


def passes(case, offset, passes):
    _runs[case] += 1
    return (offset + _runs[case]) % 10 < passes


@pytest.mark.parametrize("i", range(24))
def bench_qa(i):
    shift = 1 if "PT_SHIFT" in os.environ else 0
    assert passes(("qa", i), i * 3, max(i % 11 - shift, 0))


@pytest.mark.parametrize("text", range(12))
@pytest.mark.parametrize("model", ["small", "large", "huge"])
def bench_triage(model, text):
    lift = {"small": 0, "large": text % 3}.get(model, 2 + text % 2)
    assert passes(("triage", model, text), text * 7, min(3 + text % 5 + lift, 10))


@pytest.mark.parametrize("model", ["a", "b"])
def bench_single(model):
    assert passes(("single", model), 0, 6 if model == "a" else 9)


@pytest.mark.probability(compare="model", margin=0.05)
@pytest.mark.parametrize("text", range(12))
@pytest.mark.parametrize("model", ["base", "new"])
def bench_margin(model, text):
    assert passes(("margin", model, text), text * 3, 8 if model == "base" else 7)


@pytest.mark.probability(compare="model", margin=0.15, equivalence=True)
@pytest.mark.parametrize("text", range(12))
@pytest.mark.parametrize("model", ["base", "new"])
def bench_equivalent(model, text):
    new = 7 if text % 2 == 0 else 9
    assert passes(("equivalent", model, text), text * 3, 8 if model == "base" else new)
"#;

pub(crate) fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("analysis")
            .test("analysis", include_str!("../../../fixtures/analysis.rs"))
            .build()
    })
}

/// pytest with the peer on the Python side, 10 runs per case: `(stdout, report)`.
pub(crate) fn peer(python: &Path, name: &str, args: &[&str]) -> (String, Value) {
    peer_with(python, name, args, &[])
}

/// [`peer`] with environment variables.
pub(crate) fn peer_with(
    python: &Path,
    name: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> (String, Value) {
    let dir = fixture().path("python");
    std::fs::create_dir_all(&dir).expect("python project directory");
    std::fs::write(dir.join("bench_analysis.py"), PYTHON_BENCHES).expect("bench file");
    std::fs::write(
        dir.join("pytest.ini"),
        "[pytest]\naddopts = -p no:cacheprovider\n",
    )
    .expect("pytest.ini");
    let json = dir.join(name);
    let mut command = Command::new(python);
    command
        .args(["-m", "pytest", "--prob-runs=10", "-p", "no:hermetic", "-p"])
        .args(["no:flakedoctor", "-q"])
        .arg(format!("--prob-json={}", json.display()))
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(&dir);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("PYTEST_") || name == "CI" {
            command.env_remove(name.as_ref());
        }
    }
    let output = command.output().expect("pytest starts");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(json.exists(), "the peer wrote no report\n{stdout}");
    (stdout, support::read_json(&json))
}

/// `cargo test` on the fixture with a report of its own and `envs`.
pub(crate) fn ours(report: &str, envs: &[(&str, &str)]) -> (Output, Value) {
    let fixture = fixture();
    fixture.remove(report);
    let mut run = fixture
        .cargo_test(&["--test", "analysis"])
        .env("PROB_JSON", report)
        .env("NO_COLOR", "1");
    for (name, value) in envs {
        run = run.env(name, value);
    }
    let output = run.run();
    let json = fixture.read_json(report);
    (output, json)
}

/// The function-level lines of the `probability` section: between the rows' blank line and
/// the `Overall:` line.
pub(crate) fn aggregate_lines(stdout: &str) -> Vec<String> {
    let mut lines = stdout
        .lines()
        .skip_while(|line| !(line.starts_with('=') && line.trim_matches('=') == " probability "));
    lines
        .by_ref()
        .take_while(|line| !line.is_empty())
        .for_each(drop);
    lines
        .take_while(|line| !line.starts_with("  Overall: "))
        .filter(|line| !line.is_empty())
        .map(str::to_string)
        .collect()
}

pub(crate) fn by_name<'a>(aggregates: &'a Value, name: &str) -> &'a Value {
    aggregates
        .as_array()
        .expect("aggregates[]")
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no aggregate {name} in {aggregates}"))
}

pub(crate) fn number(value: &Value) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {value}"))
}

/// The lines of the section titled `title`, up to the next rule, as printed.
pub(crate) fn block(stdout: &str, title: &str) -> Vec<String> {
    let rule = |line: &&str| line.starts_with('=') && line.trim_matches('=').trim() == title;
    let mut lines = stdout.lines().skip_while(|line| !rule(line));
    assert!(lines.next().is_some(), "no {title} section in\n{stdout}");
    lines
        .take_while(|line| !line.starts_with('='))
        .filter(|line| {
            // Hints point at each tool's own switches: not part of the section's reading.
            !line.trim().is_empty()
                && !line.starts_with("  Hint:")
                && !line.contains("--prob-explain")
        })
        // Each tool names its own switch for the adjustment.
        .map(|line| line.replace("--prob-adjust=holm", "PROB_ADJUST=holm"))
        .collect()
}

pub(crate) fn comparison<'a>(comparisons: &'a Value, function: &str, arm: &str) -> &'a Value {
    comparisons
        .as_array()
        .expect("comparisons[]")
        .iter()
        .find(|c| c["function"] == function && c["arm"] == arm)
        .unwrap_or_else(|| panic!("no comparison {function} {arm} in {comparisons}"))
}

pub(crate) fn close(ours: &Value, theirs: &Value, what: &str) {
    match (ours.as_f64(), theirs.as_f64()) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        ),
        _ => assert_eq!(ours, theirs, "{what}"),
    }
}
