//! End-to-end: `cargo probtest plan` on a fixture crate of gated and ungated benches. The plan
//! prints what pytest-probability's `--prob-plan` prints for the same marks (side by side where
//! the peer is installed), runs no bench body (each would log that it ran), prices the runs at
//! an earlier report's cost, writes its JSON, and refuses bad input in one line.

use std::sync::OnceLock;

use crate::support::{self, Fixture};

/// Five benches, as `bench_plan.py` below marks them; every body logs that it ran.
const BENCHES: &str = r#"
use probtest::probability;

fn ran(name: &str) {
    fixture::log(name);
    probtest::record_cost(0.002);
}

#[probability(runs = 20, min_rate = 0.8)]
fn bench_gated_rate() { ran("gated_rate"); }

#[probability(runs = 10, min_rate = 0.9)]
fn bench_infeasible() { ran("infeasible"); }

#[probability(runs = 10, min_passes = 8)]
fn bench_count() { ran("count"); }

#[probability(runs = 30)]
fn bench_ungated() { ran("ungated"); }

#[probability(runs = 200, min_rate = 0.9)]
fn bench_big() { ran("big"); }
"#;

/// The same marks for pytest-probability 0.3.
const PYTHON_BENCHES: &str = r#"
import pytest

@pytest.mark.probability(runs=20, min_rate=0.8)
def bench_gated_rate():
    pass

@pytest.mark.probability(runs=10, min_rate=0.9)
def bench_infeasible():
    pass

@pytest.mark.probability(runs=10, min_passes=8)
def bench_count():
    pass

@pytest.mark.probability(runs=30)
def bench_ungated():
    pass

@pytest.mark.probability(runs=200, min_rate=0.9)
def bench_big():
    pass
"#;

/// What both tools print for these marks at the default assumptions (97%, 10% and 1%).
const TABLE: [&str; 6] = [
    "  case        runs  min runs  runs for 80%  chance now  catch 10%  catch 1%",
    "  gated_rate    20        17            26         54%        88%       18%",
    "  infeasible    10        36           100          0%        65%       10%",
    "  count         10         8             9         99%        65%       10%",
    "  ungated       30         —             —           —        96%       26%",
    "  big          200        36           100         98%        99%       87%",
];

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| Fixture::builder("plan").test("evals", BENCHES).build())
}

/// The lines of the plan's table: the `probability: plan` rule's next six.
fn table(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .skip_while(|line| !line.contains("probability: plan"))
        .skip(1)
        .take(6)
        .collect()
}

#[test]
fn the_plan_prints_what_each_gate_needs_and_runs_nothing() {
    let fixture = fixture();
    fixture.remove("ran.log");
    let log = fixture.path("ran.log");
    let output = fixture
        .probtest("plan", &["--json", "plan.json"], &[])
        .env("PT_LOG", log.to_string_lossy())
        .run();
    output.assert_code(0);
    assert_eq!(table(&output.stdout), TABLE, "{output}");
    assert!(
        output
            .stdout
            .contains("  Plan:    5 cases, 270 runs; nothing was run."),
        "{output}"
    );
    assert!(
        output.stdout.contains("29 runs make it 95%") && output.stdout.contains("299 runs"),
        "{output}"
    );
    assert!(
        !log.exists(),
        "a bench body ran: {:?}",
        fixture.read_lines("ran.log")
    );
    let plan = fixture.read_json("plan.json");
    let rows = plan["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 5, "{plan:#}");
    assert_eq!(rows[0]["case"], "gated_rate");
    assert_eq!(rows[0]["min_runs"], 17);
    assert_eq!(rows[0]["runs_for_power"], 26);
    assert!(rows[3]["min_runs"].is_null(), "{plan:#}");
}

#[test]
fn an_earlier_reports_cost_prices_the_plan() {
    let fixture = fixture();
    fixture.remove("target/earlier.json");
    // The infeasible gate is UNDECIDED, which fails the session; the report is written anyway.
    let earlier = fixture
        .cargo_test(&[])
        .env("PROB_JSON", "target/earlier.json")
        .run();
    assert!(fixture.path("target/earlier.json").exists(), "{earlier}");
    let output = fixture
        .probtest(
            "plan",
            &[
                "--report",
                "target/earlier.json",
                "--assume",
                "0.99",
                "--flake",
                "0.05",
            ],
            &[],
        )
        .run();
    output.assert_code(0);
    // Every run cost $0.002: 270 planned runs cost $0.54.
    assert!(
        output
            .stdout
            .contains("  Cost:    $0.5400 projected from target/earlier.json"),
        "{output}"
    );
    // pytest-probability's numbers at --prob-plan-assume 0.99 --prob-plan-flake 0.05, and the
    // cost of each case's planned runs.
    assert_eq!(
        table(&output.stdout),
        [
            "  case        runs  min runs  runs for 80%  chance now  catch 5%     cost",
            "  gated_rate    20        17            17         82%       64%  $0.0400",
            "  infeasible    10        36            54          0%       40%  $0.0200",
            "  count         10         8             8         99%       40%  $0.0200",
            "  ungated       30         —             —           —       79%  $0.0600",
            "  big          200        36            54         99%       99%  $0.4000",
        ],
        "{output}"
    );
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let fixture = fixture();
    let output = fixture.probtest("plan", &["--assume", "1.5"], &[]).run();
    output.assert_code(2);
    assert!(
        output
            .stderr
            .contains("expected a rate strictly between 0 and 1, got `1.5`"),
        "{output}"
    );
    let output = fixture
        .probtest("plan", &["--report", "no-such-report.json"], &[])
        .run();
    output.assert_code(2);
    let lines: Vec<&str> = output.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{output}");
    assert!(
        lines[0].starts_with("error: no-such-report.json: cannot read"),
        "{output}"
    );
}

#[test]
fn the_plan_equals_pytest_probabilitys_on_the_same_marks() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let dir = support::e2e_root().join("plan-peer");
    std::fs::create_dir_all(&dir).expect("the peer's directory");
    std::fs::write(dir.join("bench_plan.py"), PYTHON_BENCHES).expect("the peer's benches");
    let output = std::process::Command::new(python)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--prob-plan",
            "bench_plan.py",
        ])
        .current_dir(&dir)
        .output()
        .expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(table(&stdout), TABLE, "{stdout}");
}
