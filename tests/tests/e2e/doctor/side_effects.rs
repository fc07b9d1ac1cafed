//! The look for side effects the doctor makes before it repeats a test: a flaky test that
//! writes into its package and appends to a file in the home directory is run once, its writes
//! are listed and the doctor stops (exit 2); with `--allow-side-effects` it is diagnosed and the
//! diagnosis warns; a flaky test that writes only under its temporary directory is diagnosed as
//! if nothing were watched.
//!
//! Every run points `HOME` at a directory of the fixture's, so that the user's home is never
//! written; cargo's and rustup's homes stay where they were.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{fixture, preload_unavailable, Diagnosis};
use crate::support::{self, unavailable};

/// Where the litter victim appends a line per run, under the given home.
const RUNS_FILE: &str = ".side-effect-runs";
/// What it writes into its package directory.
const PACKAGE_FILE: &str = "side-effect-output.txt";

/// A home directory of its own for one test, empty.
fn fresh_home(name: &str) -> PathBuf {
    let relative = format!("out/homes/{name}");
    fixture().remove(&relative);
    let home = fixture().path(&relative);
    std::fs::create_dir_all(&home).expect("a fresh home directory");
    home
}

/// A tool's home directory as the outer process has it: `variable`, else `$HOME/<under>`.
fn tool_home(variable: &str, under: &str) -> Option<String> {
    let path = std::env::var_os(variable)
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| Path::new(&home).join(under)))?;
    Some(path.to_string_lossy().into_owned())
}

/// `cargo probtest doctor <test> --test side_effects --runs 10 --axes entropy --json <path>
/// <extra>` with `HOME` at `home`.
fn doctor(test: &str, home: &Path, extra: &[&str]) -> Diagnosis {
    let fixture = fixture();
    let relative = format!("out/side_effects-{test}.json");
    fixture.remove(&relative);
    let path = fixture.path(&relative);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the output directory");
    let path_text = path.to_string_lossy().into_owned();
    let mut args = vec![
        test,
        "--test",
        "side_effects",
        "--runs",
        "10",
        "--axes",
        "entropy",
        "--json",
        &path_text,
    ];
    args.extend_from_slice(extra);
    let mut run = fixture
        .probtest("doctor", &args, &[])
        .env("HOME", home.to_string_lossy());
    for (variable, under) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        if let Some(value) = tool_home(variable, under) {
            run = run.env(variable, value);
        }
    }
    let output = run.run();
    let report = if path.exists() {
        support::read_json(&path)
    } else {
        Value::Null
    };
    Diagnosis { output, report }
}

/// The lines the litter victim appended to its runs file under `home`.
fn runs_recorded(home: &Path) -> usize {
    std::fs::read_to_string(home.join(RUNS_FILE))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The package file the doctor's text names, as a canonical path.
fn named_package_file(text: &str) -> Option<PathBuf> {
    text.split([' ', '\n', ','])
        .find(|word| word.ends_with(PACKAGE_FILE))
        .and_then(|path| Path::new(path).canonicalize().ok())
}

#[test]
fn a_test_writing_outside_its_temporary_directory_is_stopped_with_what_it_wrote() {
    if let Some(why) = preload_unavailable() {
        unavailable("watching a test's writes", why);
        return;
    }
    let home = fresh_home("stopped");
    fixture().remove(PACKAGE_FILE);
    let Diagnosis { output, report } = doctor("litter_victim", &home, &[]);
    output.assert_code(2);
    let error = output.the_error_line();
    assert!(
        error.contains("litter_victim")
            && error.contains("changes 2 paths outside its temporary directory")
            && error.contains("--allow-side-effects"),
        "{output}"
    );
    let appended = format!("{} (written)", home.join(RUNS_FILE).display());
    assert!(
        output.stderr.lines().any(|line| line.ends_with(&appended)),
        "the file appended to in the home directory is not listed{output}"
    );
    let package_file = fixture().path(PACKAGE_FILE).canonicalize();
    assert!(package_file.is_ok(), "the test never ran{output}");
    assert_eq!(
        named_package_file(&output.stderr).as_ref(),
        package_file.as_ref().ok(),
        "the file written into the package is not listed{output}"
    );
    assert!(
        output.stderr.contains(&format!("{PACKAGE_FILE} (written)")),
        "{output}"
    );
    assert_eq!(
        runs_recorded(&home),
        1,
        "the doctor ran the test more than once{output}"
    );
    assert!(report.is_null(), "a stop writes no diagnosis: {report:#}");
}

#[test]
fn allowed_side_effects_are_diagnosed_and_warned_about() {
    if let Some(why) = preload_unavailable() {
        unavailable("watching a test's writes", why);
        return;
    }
    let home = fresh_home("allowed");
    let diagnosis = doctor("litter_victim", &home, &["--allow-side-effects"]);
    super::assert_shape(&diagnosis, "litter_victim");
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(0);
    assert_eq!(report["verdict"], "flaky-entropy", "{context}");
    let warnings = report["warnings"].as_array().expect("warnings");
    let warning = warnings
        .iter()
        .filter_map(Value::as_str)
        .find(|warning| warning.contains("outside its temporary directory"))
        .unwrap_or_else(|| panic!("no side-effect warning: {context}"));
    assert!(
        warning.contains("--allow-side-effects")
            && warning.contains(&format!("{} (written)", home.join(RUNS_FILE).display()))
            && named_package_file(warning).is_some(),
        "{warning}: {context}"
    );
    assert!(
        output.stdout.contains(warning),
        "the text does not warn: {context}"
    );
    assert!(
        runs_recorded(&home) > 1,
        "the test was not diagnosed: {context}"
    );
}

#[test]
fn a_test_writing_only_under_its_temporary_directory_is_not_stopped() {
    if let Some(why) = preload_unavailable() {
        unavailable("watching a test's writes", why);
        return;
    }
    let home = fresh_home("tidy");
    let diagnosis = doctor("tidy_victim", &home, &[]);
    super::assert_shape(&diagnosis, "tidy_victim");
    let Diagnosis { output, report } = &diagnosis;
    let context = format!("{report:#}{output}");
    output.assert_code(0);
    assert_eq!(report["verdict"], "flaky-entropy", "{context}");
    let warned = report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(Value::as_str)
        .any(|warning| warning.contains("temporary directory"));
    assert!(!warned, "{context}");
    let home_entries = std::fs::read_dir(&home).expect("the home").count();
    assert_eq!(home_entries, 0, "{context}");
}
