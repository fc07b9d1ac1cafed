//! `cargo probtest run`: one `cargo test` or `cargo nextest run` as one fresh session, then the
//! session's summary, once, over every test process.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use clap::Args;
use probtest::__cli::store::{self, Executed, Session};
use probtest::__cli::SessionSource;
use probtest_settings as table;

use crate::error::Error;
use crate::expected::{self, Listing};
use crate::outputs::{setting_file, Outputs};
use crate::target::{self, CargoOptions, PackageArgs};
use crate::ui::Ui;

/// The arguments of `cargo probtest run`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct RunArgs {
    /// Run the tests with `cargo nextest run` instead of `cargo test`.
    #[arg(long)]
    pub nextest: bool,

    /// The workspace and packages to test, as cargo takes them.
    #[command(flatten)]
    pub packages: PackageArgs,

    /// Arguments for `cargo test` (or `cargo nextest run`), after `--`; a second `--` starts
    /// the test binaries' own arguments, as with cargo.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// Runs `cargo probtest run`; the exit code is the test runner's (1 when a signal ended it).
pub fn run(args: &RunArgs, ui: &Ui) -> Result<i32, Error> {
    let key = chosen_key(std::env::var(table::SESSION.variable).ok())?;
    let cargo = target::cargo();
    let runner: &[&str] = if args.nextest {
        &["nextest", "run"]
    } else {
        &["test"]
    };
    // What nextest says it ran, to reconcile the session with: a test process killed before
    // probtest's start-up left no record, and is an error all the same.
    let reconciling = args.nextest && !names_message_format(&args.args);
    // This command's own options for cargo, then the user's, which may end with `--` and the
    // test binaries' own; `--fail-fast` is cargo test's default, and no flag of its own.
    let user_args = if args.nextest {
        args.args.clone()
    } else {
        expected::without_fail_fast(&args.args)
    };
    let cargo_args = [
        ui.cargo_flags(args.nextest),
        args.packages.cargo_args(),
        user_args,
    ]
    .concat();
    // The runs the session expects, listed before any runs: those that never start are
    // counted as not run.
    let listing = match target::target_dir(&CargoOptions::scan(&cargo_args)) {
        Ok(target) => expected::list(
            args.nextest,
            &cargo_args,
            &Session::new(&store::sessions_dir(&target), &key),
        ),
        // The runner needs the target directory too, and says what is wrong with it.
        Err(_) => Listing::NotListed,
    };
    if let Listing::BuildFailed(code) = listing {
        return Ok(code);
    }
    let mut command = Command::new(&cargo);
    command.args(runner);
    // Every run runs, unless the user chose otherwise: a run that never starts is only
    // counted, and the failures after the first are what a rate is made of.
    if !expected::chooses_fail_fast(&args.args) {
        command.arg("--no-fail-fast");
    }
    if reconciling {
        // Before the user's arguments, which may end with `--` and the test binaries' own.
        command
            .args(["--message-format", "libtest-json-plus"])
            .env("NEXTEST_EXPERIMENTAL_LIBTEST_JSON", "1")
            .stdout(Stdio::piped());
        if listing != Listing::Listed {
            // The listing did not describe the binaries' items: nextest's own listing does.
            command.env(table::RECONCILE.variable, "1");
        }
    }
    ui.pass_on(&mut command);
    command
        .args(&cargo_args)
        .env(table::SESSION.variable, &key)
        // The session's section is printed once, here, not once per test binary as well.
        .env(table::SUMMARY.variable, "0")
        // Gated cases are judged here, from the whole session, rather than by each process.
        .env(table::DEFER_VERDICTS.variable, "1");
    let started = |error: std::io::Error| {
        Error::about(
            format!("{} {}", target::display(&cargo), runner.join(" ")),
            format!("cannot start ({error})"),
        )
    };
    ui.detail(&format!(
        "running `{} {}`",
        target::display(&cargo),
        command
            .get_args()
            .map(target::display)
            .collect::<Vec<_>>()
            .join(" ")
    ));
    let (status, executed) = {
        defer_interrupts();
        let mut child = command.spawn().map_err(started)?;
        let executed = match child.stdout.take() {
            Some(stdout) => executed_tests(stdout),
            None => Vec::new(),
        };
        (child.wait().map_err(started)?, executed)
    };
    let code = exit_code(status);
    let target = match target::target_dir(&CargoOptions::scan(&cargo_args)) {
        Ok(target) => target,
        // The runner needed the target directory too: when it failed, it has said why.
        Err(_) if code != 0 => return Ok(code),
        Err(error) => return Err(error),
    };
    let options = CargoOptions::scan(&cargo_args);
    match summarize(
        &target,
        &options,
        &key,
        reconciling.then_some(executed.as_slice()),
        ui,
    ) {
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

/// The session's key: `PROB_SESSION` when it is set (a CI job naming its session), else a
/// fresh one. A key that cleans to nothing is refused, as the test processes would refuse it.
fn chosen_key(set: Option<String>) -> Result<String, Error> {
    match set.filter(|key| !key.trim().is_empty()) {
        Some(key) if store::sanitize_key(&key).is_empty() => Err(Error::new(format!(
            "{}={key:?} is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'",
            table::SESSION.variable
        ))),
        Some(key) => Ok(store::sanitize_key(&key)),
        None => Ok(session_key()),
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

/// Prints the summary of session `key` under `target`, nothing when no run was recorded. With
/// `executed`, what nextest ran, every generated item it ran that left no record is an error.
/// The `Report:` line shows the report the test processes kept, as they named it, once it is
/// checked to hold this session. Returns whether the session fails, a failing gate verdict
/// included, and a report that could not be written too.
fn summarize(
    target: &Path,
    options: &CargoOptions,
    key: &str,
    executed: Option<&[Executed]>,
    ui: &Ui,
) -> Result<bool, Error> {
    let session = Session::new(&store::sessions_dir(target), key);
    if !session.exists() {
        if executed.is_some_and(|executed| !executed.is_empty()) {
            // Tests ran and none joined the session: its store could not be made.
            let _ = writeln!(
                std::io::stderr().lock(),
                "error: no test process recorded into session {key} ({}): see the test failures above",
                session.dir().display()
            );
            return Ok(true);
        }
        return Ok(false);
    }
    let loaded = match executed {
        Some(executed) => session.reconcile(executed),
        None => session.load(),
    };
    let data = loaded.map_err(|error| {
        Error::about(
            format!("session {}", session.key()),
            format!("cannot read {} ({error})", session.dir().display()),
        )
    })?;
    let named = data.report.clone();
    let written = data.report_path.clone();
    let reconciled = data.reconciled;
    let mut report = data.into_finished_report();
    report.session = Some(key.to_string());
    let mut problem = written.as_deref().and_then(|path| unwritten(path, key));
    if let (None, Some(path)) = (&problem, written.as_deref()) {
        if reconciled > 0 || report.totals.not_run > 0 {
            problem = add_reconciled(&report, path, options, reconciled);
        } else if names_own_report(path, options) {
            // Test processes under nextest keep the report run by run, without what needs
            // every result (function-level intervals, comparisons, the baseline): the session's
            // end adds it.
            problem = crate::report::write_json(&report, path)
                .err()
                .map(|error| error.to_string());
        }
    }
    let shown = named.as_deref().filter(|_| problem.is_none());
    let mut failed = false;
    let mut stderr = std::io::stderr().lock();
    let source = SessionSource::of(&store::sessions_dir(target), key);
    let outputs =
        Outputs::of_environment(options, source).with_summary(shown.map(str::to_string), ui);
    for error in outputs.reporter().write(&report) {
        let _ = writeln!(stderr, "error: {error}");
        failed = true;
    }
    if failed {
        return Ok(true);
    }
    if let Some(problem) = problem {
        let _ = writeln!(
            std::io::stderr().lock(),
            "error: the session report {} was not written: {problem}",
            named.as_deref().unwrap_or("")
        );
        return Ok(true);
    }
    Ok(report.exit_status != 0)
}

/// Why the report at `path` does not hold session `key`, if it does not. A character device or
/// a FIFO cannot be read back, and is taken as written.
fn unwritten(path: &Path, key: &str) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let kind = meta.file_type();
            if kind.is_char_device() || kind.is_fifo() {
                return None;
            }
        }
    }
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) => return Some(format!("{}: {error}", path.display())),
    };
    match probtest::Report::from_json(&text) {
        Ok(report) if report.session.as_deref() == Some(key) => None,
        Ok(report) => Some(format!(
            "{} holds session {}, not this one",
            path.display(),
            report.session.as_deref().unwrap_or("(none)")
        )),
        Err(problem) => Some(format!("{}: {problem}", path.display())),
    }
}

/// Whether this command's own settings (`PROB_JSON`, resolved as the test processes resolve
/// it) name the report at `path`: only paths from the current settings are written.
fn names_own_report(path: &Path, options: &CargoOptions) -> bool {
    let Some(Ok(own)) = setting_file(table::JSON.variable, options) else {
        return false;
    };
    std::fs::canonicalize(own.path())
        .ok()
        .is_some_and(|own| std::fs::canonicalize(path).is_ok_and(|path| path == own))
}

/// Rewrites the session's report at `path` with the `reconciled` errors the test processes
/// could not write and the runs not run, when this command's own settings name that report (`PROB_JSON`): only
/// paths from the current settings are written. Otherwise says the report lacks them. Returns
/// why the report could not be rewritten, if it could not.
fn add_reconciled(
    report: &probtest::Report,
    path: &Path,
    options: &CargoOptions,
    reconciled: u64,
) -> Option<String> {
    if names_own_report(path, options) {
        return crate::report::write_json(report, path)
            .err()
            .map(|error| error.to_string());
    }
    let mut lacks = Vec::new();
    if reconciled > 0 {
        lacks.push(format!(
            "the {reconciled} errors of tests that left no record"
        ));
    }
    if report.totals.not_run > 0 {
        lacks.push(format!("the {} runs not run", report.totals.not_run));
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "note: {} lacks {}; set {} for `cargo probtest run` to rewrite it",
        path.display(),
        lacks.join(" and "),
        table::JSON.variable
    );
    None
}

/// Whether the runner's arguments choose its output format already (then nextest's tests are
/// not reconciled: its machine-readable output is the user's).
fn names_message_format(args: &[OsString]) -> bool {
    args.iter().take_while(|arg| *arg != "--").any(|arg| {
        arg.to_str()
            .is_some_and(|arg| arg.starts_with("--message-format"))
    })
}

/// The tests nextest reports in its libtest-json output on `stdout`, read to its end; a line
/// that is not such an event is passed on to this process's stdout.
fn executed_tests(stdout: impl std::io::Read) -> Vec<Executed> {
    use std::io::BufRead;
    let mut executed = Vec::new();
    let mut out = std::io::stdout();
    for line in std::io::BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        match executed_test(&line) {
            Some(Some(test)) => executed.push(test),
            Some(None) => {}
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    executed
}

/// A libtest-json line: `Some(Some(test))` for a test that ran to an end, `Some(None)` for any
/// other event, `None` for a line that is no event.
fn executed_test(line: &str) -> Option<Option<Executed>> {
    let event: serde_json::Value = serde_json::from_str(line).ok()?;
    let kind = event.get("type")?.as_str()?;
    let ended = matches!(
        event.get("event").and_then(|e| e.as_str()),
        Some("ok" | "failed")
    );
    if kind != "test" || !ended {
        return Some(None);
    }
    let name = event.get("name")?.as_str()?.to_string();
    let output = event.get("stdout").and_then(|o| o.as_str()).unwrap_or("");
    Some(Some(Executed {
        name,
        elapsed: event
            .get("exec_time")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0),
        unrecorded: output.contains("could not be recorded in the session store"),
    }))
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
    fn nextest_events_are_read_and_other_lines_passed_on() {
        let ended = r#"{"type":"test","event":"failed","name":"pt::evals$bench_x::run2","exec_time":0.5,"stdout":"probtest: run 2 of x could not be recorded in the session store: /t/runs.jsonl: No space left on device (os error 28)\n"}"#;
        assert_eq!(
            executed_test(ended),
            Some(Some(Executed {
                name: "pt::evals$bench_x::run2".into(),
                elapsed: 0.5,
                unrecorded: true,
            }))
        );
        let started = r#"{"type":"test","event":"started","name":"pt::evals$bench_x::run2"}"#;
        assert_eq!(executed_test(started), Some(None));
        let suite = r#"{"type":"suite","event":"ok","passed":1}"#;
        assert_eq!(executed_test(suite), Some(None));
        assert_eq!(executed_test("plain text"), None);
    }

    #[test]
    fn a_message_format_of_the_users_own_is_left_alone() {
        let args = |list: &[&str]| -> Vec<OsString> { list.iter().map(OsString::from).collect() };
        assert!(names_message_format(&args(&[
            "--message-format",
            "libtest-json"
        ])));
        assert!(names_message_format(&args(&["--message-format=human"])));
        // After `--`, it is the test binaries' argument, not nextest's.
        assert!(!names_message_format(&args(&["--", "--message-format"])));
        assert!(!names_message_format(&args(&["-p", "evals"])));
    }

    #[test]
    fn a_session_key_in_the_environment_is_used_and_an_empty_one_refused() {
        assert_eq!(chosen_key(Some("ci/42".into())), Ok("ci_42".into()));
        assert!(chosen_key(None).expect("fresh").starts_with("run-"));
        assert!(chosen_key(Some("  ".into()))
            .expect("fresh")
            .starts_with("run-"));
        let refused = chosen_key(Some("..".into())).expect_err("refused");
        assert!(refused
            .message()
            .starts_with("PROB_SESSION=\"..\" is not a usable session key"));
    }

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
