//! End-to-end: `cargo probtest report --history` over sessions a test binary recorded, one per
//! run of the binary, with the eval's pass rate dropping in the last one: each case's pass
//! fraction per session, oldest first, and the drop flagged with its interval and p.
//!
//! The binary is copied into a target directory of its own, so that the store it writes to
//! holds only these sessions (the suite's other fixtures share the usual one).

use std::path::PathBuf;

use crate::support::Fixture;

/// Runs up to `PT_PASSING` pass, the rest fail; a steady case beside it always passes.
const EVALS: &str = r#"
use fixture::run_number;
use probtest::probability;

fn passing() -> u32 {
    std::env::var("PT_PASSING").ok().and_then(|n| n.parse().ok()).unwrap_or(20)
}

#[probability(runs = 20)]
fn bench_drifting() {
    assert!(run_number() <= passing(), "run {} answered wrong", run_number());
}

#[probability(runs = 20)]
fn bench_steady() {}
"#;

/// The fixture's test binary, copied to `<dir>/target/debug/deps/`, with the tag that marks
/// `<dir>/target` as a target directory.
fn private_binary(fixture: &Fixture, dir: &std::path::Path) -> PathBuf {
    let built = fixture
        .cargo_test(&["--test", "evals", "--no-run", "--message-format=json"])
        .run();
    built.assert_code(0);
    let executable = built
        .stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "evals")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .unwrap_or_else(|| panic!("no test executable{built}"));
    let target = dir.join("target");
    let deps = target.join("debug").join("deps");
    let _ = std::fs::remove_dir_all(&target);
    std::fs::create_dir_all(&deps).expect("the private target directory");
    std::fs::write(
        target.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .expect("the tag");
    let copy = deps.join("evals-history");
    std::fs::copy(&executable, &copy).expect("copy the test binary");
    copy
}

#[test]
fn the_history_shows_each_session_and_flags_the_drop() {
    let fixture = Fixture::builder("history").test("evals", EVALS).build();
    let dir = fixture.path("store");
    let binary = private_binary(&fixture, &dir);
    for passing in ["20", "19", "6"] {
        let output = std::process::Command::new(&binary)
            .env("PT_PASSING", passing)
            .env("PROB_SUMMARY", "0")
            .env_remove("PROB_JSON")
            .env_remove("PROB_SESSION")
            .current_dir(fixture.dir())
            .output()
            .expect("the test binary runs");
        // A run that fails fails its item: only the first session passes throughout.
        assert_eq!(output.status.success(), passing == "20", "{output:?}");
        // Sessions are ordered by their start.
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let target = dir.join("target");
    let output = fixture
        .probtest(
            "report",
            &["--history", "--target-dir", &target.to_string_lossy()],
            &[],
        )
        .env("NO_COLOR", "1")
        .run();
    output.assert_code(0);
    let lines: Vec<&str> = output.stdout.lines().collect();
    let row = |case: &str| {
        lines
            .iter()
            .find(|line| line.trim_start().starts_with(&format!("{case} ")))
            .unwrap_or_else(|| panic!("no row {case}{output}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    // 20/20, 19/20, then 6/20: −65 points against the session before, a drop.
    assert_eq!(
        row("drifting")[..5],
        ["drifting", "100%", "95%", "30%", "−65"],
        "{output}"
    );
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("  drifting") && line.ends_with("DROPPED")),
        "{output}"
    );
    assert_eq!(
        row("steady")[..5],
        ["steady", "100%", "100%", "100%", "0"],
        "{output}"
    );
    assert!(
        !lines
            .iter()
            .any(|line| line.starts_with("  steady") && line.contains("DROPPED")),
        "{output}"
    );
    assert!(
        output.stdout.contains("  Sessions: 3, oldest first"),
        "{output}"
    );
    assert!(
        output.stdout.contains("  Changed: 1 of 2 cases"),
        "{output}"
    );

    // Two sessions only: the oldest is left out.
    let two = fixture
        .probtest(
            "report",
            &["--history", "2", "--target-dir", &target.to_string_lossy()],
            &[],
        )
        .env("NO_COLOR", "1")
        .run();
    two.assert_code(0);
    assert!(two.stdout.contains("  Sessions: 2, oldest first"), "{two}");
}

#[test]
fn a_history_of_an_empty_store_is_one_line_and_exit_two() {
    let fixture = Fixture::builder("history-empty")
        .test("evals", EVALS)
        .build();
    let empty = fixture.path("empty-target");
    std::fs::create_dir_all(&empty).expect("an empty target directory");
    let output = fixture
        .probtest(
            "report",
            &["--history", "--target-dir", &empty.to_string_lossy()],
            &[],
        )
        .run();
    output.assert_code(2);
    let lines: Vec<&str> = output.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{output}");
    assert!(lines[0].starts_with("error: "), "{output}");
}
