//! `#[probtest::repro("pd1:...")]`: the test runs again, in a process of its own, under the
//! perturbation of the doctor's blob, and fails either way: with the flake's failure while it
//! reproduces, with `DID NOT REPRODUCE` once it no longer does (so a stale attribute is noticed
//! and removed).
//!
//! The run is the test binary started again for that one test (`--exact`), because what the blob
//! changes is process-wide: the preload library interposes libc for the entropy, clock and
//! network axes, and the environment and `HOME` of the env and fs axes would reach every test
//! of a process running beside it. The child is told the attribute is inert
//! ([`ENV_REPRO`]), as is every run of the doctor. What it ran is read from libtest's log file,
//! never from what the test prints.

pub(crate) mod preload;

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{SystemTime, UNIX_EPOCH};

use probtest_settings::repro::variables::{ENV_REPRO, REPRO_INERT};
use probtest_settings::repro::{describe, Repro, KEPT_VARIABLES};
use probtest_settings::table;

/// What libtest prints for `--logfile`, which it still honors.
const LOGFILE_WARNING: &str = "warning: `--logfile` is deprecated";

/// Runs `body` as the attribute says: as it is where the attribute is inert, else the test
/// `module_path::item` again under the blob's perturbation, panicking with what that run showed.
/// `module_path` is where the test item is (`module_path!()`), `item` its path from there.
pub fn run<T>(
    blob: &'static str,
    module_path: &'static str,
    item: &'static str,
    body: impl FnOnce() -> T,
) -> T {
    if std::env::var_os(ENV_REPRO).is_some_and(|value| value == REPRO_INERT) {
        return body();
    }
    let test = test_name(module_path, item);
    match reproduce(blob, &test) {
        Ok(Reproduced {
            output,
            description,
        }) => {
            show(&output);
            // The flake's failure, seen again: a `#[probability]` run counts it as failed, not
            // as an error of the harness.
            crate::harness::context::mark_assertion();
            panic!(
                "#[probtest::repro] reproduced the flake of `{test}` under {description}; \
                 fix it, then remove the attribute"
            )
        }
        Err(Refusal::DidNotReproduce {
            output,
            description,
        }) => {
            show(&output);
            panic!(
                "DID NOT REPRODUCE: `{test}` passed under {description}, the perturbation of \
                 #[probtest::repro]; the flake is fixed or the blob is stale: remove the \
                 attribute"
            )
        }
        Err(Refusal::Problem(problem)) => {
            panic!("#[probtest::repro] above `{test}`: {problem}")
        }
    }
}

/// libtest's name of the item `item` in the module `module_path`: the path without the crate's
/// name.
fn test_name(module_path: &str, item: &str) -> String {
    match module_path.split_once("::") {
        Some((_, modules)) => format!("{modules}::{item}"),
        None => item.to_string(),
    }
}

/// The run under the blob that failed, as it printed.
struct Reproduced {
    output: Output,
    description: String,
}

/// Why the run did not show the flake.
enum Refusal {
    /// The test passed under the perturbation.
    DidNotReproduce { output: Output, description: String },
    /// The blob, or the run, is not what the attribute needs; in one line.
    Problem(String),
}

impl From<String> for Refusal {
    fn from(problem: String) -> Refusal {
        Refusal::Problem(problem)
    }
}

fn reproduce(blob: &str, test: &str) -> Result<Reproduced, Refusal> {
    let repro = Repro::decode(blob).map_err(|problem| format!("the blob: {problem}"))?;
    if repro.test != test {
        return Err(format!(
            "the blob was recorded for the test `{}`, not this one",
            repro.test
        )
        .into());
    }
    repro.carried_by_attribute()?;
    let perturbation = &repro.plan.perturbation;
    let description = describe(perturbation);
    let scratch = Scratch::new()?;
    let exe = std::env::current_exe()
        .map_err(|error| format!("cannot find this test binary to run it again: {error}"))?;
    let log = scratch.0.join("libtest.log");
    let mut command = Command::new(&exe);
    if perturbation.scrubbed_env {
        let kept: Vec<(&str, OsString)> = KEPT_VARIABLES
            .iter()
            .filter_map(|name| Some((*name, std::env::var_os(name)?)))
            .collect();
        command.env_clear().envs(kept);
    }
    command
        .arg("--exact")
        .arg(test)
        .arg("--test-threads=1")
        .arg("--logfile")
        .arg(&log)
        .env(ENV_REPRO, REPRO_INERT)
        // A probtest run recorded in the child goes to the scratch directory: the run that counts
        // is this process's, which fails with what the child showed.
        .env(table::JSON.variable, scratch.0.join("report.json"))
        .env(table::STORE.variable, scratch.0.join("sessions"))
        .env(table::SUMMARY.variable, "0")
        .env("RUST_BACKTRACE", "0");
    for name in [
        table::HTML.variable,
        table::SESSION.variable,
        table::ITEMS_OUT.variable,
        "RUST_TEST_THREADS",
    ] {
        command.env_remove(name);
    }
    if perturbation.needs_preload() {
        let library = preload_library(&exe, &scratch.0)?;
        command.env("LD_PRELOAD", library);
    }
    for (name, value) in perturbation.env() {
        command.env(name, value);
    }
    let home = scratch.0.join("home");
    if perturbation.fresh_home {
        std::fs::create_dir_all(&home)
            .map_err(|error| format!("cannot make a fresh HOME in {}: {error}", home.display()))?;
    }
    command.envs(perturbation.home_env(&home));
    let output = command
        .output()
        .map_err(|error| format!("cannot run {} again: {error}", exe.display()))?;
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    match outcome(&logged, test) {
        Some(true) => Err(Refusal::DidNotReproduce {
            output,
            description,
        }),
        Some(false) => Ok(Reproduced {
            output,
            description,
        }),
        None if output.status.success() => Err(format!(
            "this test binary has no test `{test}` to run again (run with --exact)"
        )
        .into()),
        // Killed or aborted before libtest logged it: the flake's crash, shown as it was.
        None => Ok(Reproduced {
            description: format!("{description} (the run ended {})", output.status),
            output,
        }),
    }
}

/// Whether libtest logged `test` as passed (`Some(true)`) or failed; `None` when it did not log
/// it. libtest writes `ok NAME`, `failed NAME` or `ignored NAME`, a line each.
fn outcome(log: &str, test: &str) -> Option<bool> {
    log.lines().find_map(|line| match line.split_once(' ') {
        Some(("ok", name)) if name == test => Some(true),
        Some(("failed", name)) if name == test => Some(false),
        _ => None,
    })
}

/// The preload library as a file: beside the target directory's other outputs when the test
/// binary is in one (`<target>/<profile>/deps/`), else in the run's scratch directory.
fn preload_library(exe: &Path, scratch: &Path) -> Result<PathBuf, String> {
    let beside = exe
        .parent()
        .and_then(Path::parent)
        .map(|profile| profile.join("probtest").join("preload"));
    beside
        .and_then(|dir| preload::library_in(&dir).ok())
        .map_or_else(|| preload::library_in(scratch), Ok)
        .map_err(|error| format!("cannot write the preload library: {error}"))
}

/// What the run printed, into this test's output (which libtest shows with the failure).
fn show(output: &Output) {
    print!("{}", String::from_utf8_lossy(&output.stdout));
    // libtest's own word on the flag this run gave it, not the test's.
    let stderr = String::from_utf8_lossy(&output.stderr);
    for line in stderr.lines().filter(|line| *line != LOGFILE_WARNING) {
        println!("{line}");
    }
    let _ = std::io::stdout().flush();
}

/// A directory of the run's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("probtest-repro-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|error| format!("cannot make {}: {error}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_is_named_as_libtest_names_it() {
        assert_eq!(test_name("crate_x", "flaky"), "flaky");
        assert_eq!(test_name("crate_x::a::b", "flaky"), "a::b::flaky");
        assert_eq!(
            test_name("crate_x::evals", "triage::refund::run_03"),
            "evals::triage::refund::run_03"
        );
    }

    #[test]
    fn the_outcome_is_libtests_line_for_the_test_alone() {
        let log = "ok other\nfailed a::flaky_two\nfailed a::flaky\n";
        assert_eq!(outcome(log, "a::flaky"), Some(false));
        assert_eq!(outcome("ok a::flaky\n", "a::flaky"), Some(true));
        assert_eq!(outcome("ignored a::flaky\n", "a::flaky"), None);
        assert_eq!(outcome("", "a::flaky"), None);
    }
}
