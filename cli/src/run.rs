//! `cargo probtest run`: one `cargo test` or `cargo nextest run` as one fresh session, then the
//! session's summary, once, over every test process.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;
use probtest::store::{self, Session};

use crate::error::Error;
use crate::report::{load_session, print_summary};
use crate::target::{self, CargoOptions};

/// The arguments of `cargo probtest run`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct RunArgs {
    /// Run the tests with `cargo nextest run` instead of `cargo test`.
    #[arg(long)]
    pub nextest: bool,

    /// Arguments for `cargo test` (or `cargo nextest run`), after `--`; a second `--` starts
    /// the test binaries' own arguments, as with cargo.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// Runs `cargo probtest run`; the exit code is the test runner's (1 when a signal ended it).
pub fn run(args: &RunArgs) -> Result<i32, Error> {
    let key = session_key();
    let cargo = target::cargo();
    let runner: &[&str] = if args.nextest {
        &["nextest", "run"]
    } else {
        &["test"]
    };
    let mut command = Command::new(&cargo);
    command
        .args(runner)
        .args(&args.args)
        .env("PROB_SESSION", &key)
        // The session's section is printed once, here, not once per test binary as well.
        .env("PROB_SUMMARY", "0")
        // Gated cases are judged here, from the whole session, rather than by each process.
        .env("PROB_DEFER_VERDICTS", "1");
    let status = {
        defer_interrupts();
        command.status().map_err(|error| {
            Error::about(
                format!("{} {}", target::display(&cargo), runner.join(" ")),
                format!("cannot start ({error})"),
            )
        })?
    };
    let code = exit_code(status);
    let target = match target::target_dir(&CargoOptions::scan(&args.args)) {
        Ok(target) => target,
        // The runner needed the target directory too: when it failed, it has said why.
        Err(_) if code != 0 => return Ok(code),
        Err(error) => return Err(error),
    };
    match summarize(&target, &key) {
        // Items of gated cases do not fail for their runs: a failing verdict fails here, with
        // the runner's own failure status.
        Ok(true) if code == 0 => Ok(if args.nextest { 100 } else { 101 }),
        Ok(_) => Ok(code),
        // The runner failed too; its exit code says more than ours.
        Err(error) if code != 0 => {
            let _ = writeln!(std::io::stderr().lock(), "error: {error}");
            Ok(code)
        }
        Err(error) => Err(error),
    }
}

/// A key no earlier run has: `run-<pid>-<unix-nanos>`.
pub fn session_key() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    format!("run-{}-{nanos}", std::process::id())
}

/// The exit code to pass on: the runner's own, or 1 when a signal ended it.
pub fn exit_code(status: ExitStatus) -> i32 {
    status.code().unwrap_or(1)
}

/// Prints the summary of session `key` under `target`, nothing when no run was recorded. The
/// `Report:` line shows the report the test processes kept, as they named it. Returns whether
/// the session fails, a failing gate verdict included.
fn summarize(target: &Path, key: &str) -> Result<bool, Error> {
    let session = Session::new(&store::sessions_dir(target), key);
    if !session.exists() {
        return Ok(false);
    }
    let (report, path) = load_session(&session)?;
    print_summary(&report, path.as_deref());
    Ok(report.exit_status != 0)
}

/// Ctrl-C while the runner runs: the terminal sends SIGINT to the runner too, and nextest
/// answers it by cancelling and reporting what ran. This process waits for that instead of
/// dying first, then prints the summary of the runs that did happen. A handled signal (unlike
/// an ignored one) is reset to its default in the child by exec, so the runner still gets
/// Ctrl-C as usual.
fn defer_interrupts() {
    // Failing to install the handler only means Ctrl-C ends this process as usual.
    let _ = ctrlc::set_handler(|| {});
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_keys_are_unique_and_stored_as_given() {
        let first = session_key();
        let second = session_key();
        assert_ne!(first, second);
        assert!(first.starts_with(&format!("run-{}-", std::process::id())));
        assert_eq!(store::sanitize_key(&first), first);
    }

    #[cfg(unix)]
    #[test]
    fn a_signal_exits_1_and_a_code_passes_through() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(101 << 8)), 101);
        assert_eq!(exit_code(ExitStatus::from_raw(100 << 8)), 100);
        // Killed by SIGKILL.
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 1);
    }
}
