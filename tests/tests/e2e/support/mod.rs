//! Shared harness of the end-to-end tests: writes small fixture crates under
//! `<workspace>/target/e2e/`, runs real `cargo test` and `cargo nextest run` on them with a
//! scrubbed environment, and parses what they print and write.
//!
//! `fixture` writes the crates, `command` runs cargo, nextest and `cargo-probtest` on them,
//! `output` parses what they print, `report` reads the JSON they write, `peer` finds the
//! Python of pytest-probability, and `machine` shares the CPUs between the suite's tests.

use std::path::{Path, PathBuf};

mod command;
mod fixture;
pub mod machine;
mod output;
mod peer;
mod report;

pub use command::{cli_binary, Run};
pub use fixture::Fixture;
pub use output::{location, Output, Section};
pub use peer::peer_python;
pub use report::{assert_amount, counts, read_json, report_records, report_row};

/// Skips a test that the machine does not allow, with a message past libtest's capture; under
/// `CI=true` the test fails instead, so that CI never passes a test it did not run.
pub fn unavailable(what: &str, why: &str) {
    use std::io::Write;
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{what} is not possible on this CI machine: {why}");
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped: {what} is not possible here: {why}"
    );
}

/// The workspace root: the parent of this package.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e package lives inside the workspace")
        .to_path_buf()
}

/// Where fixture crates live.
pub fn e2e_root() -> PathBuf {
    workspace_root().join("target").join("e2e")
}

/// One target directory for every fixture, so that dependencies build once.
pub fn shared_target_dir() -> PathBuf {
    e2e_root().join("target")
}
