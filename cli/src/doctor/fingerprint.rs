//! How a run of a test ended, read from what the test cannot forge (libtest's log of the run,
//! the exit status, libtest's closing lines), and for a failure its fingerprint (where it
//! panicked and its message with numbers and addresses normalized away), so that a
//! perturbation that breaks the test differently from the flake is told apart from one that
//! reproduces it.

/// How one run of the test ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The test passed.
    Pass,
    /// The test failed: its fingerprint.
    Fail(String),
    /// Killed at the timeout.
    Hang,
    /// The process died of a signal, or exited without a word about the test.
    Crash(String),
    /// The test did not run at all (filtered out, not found): not evidence either way.
    NotRun,
}

impl Ending {
    /// Whether the run counts as a failure of the test.
    pub fn failed(&self) -> bool {
        matches!(self, Ending::Fail(_) | Ending::Hang | Ending::Crash(_))
    }

    /// The failure's fingerprint, for a failure.
    pub fn fingerprint(&self) -> Option<&str> {
        match self {
            Ending::Fail(fingerprint) | Ending::Crash(fingerprint) => Some(fingerprint),
            Ending::Hang => Some("hang"),
            Ending::Pass | Ending::NotRun => None,
        }
    }
}

/// What a run's process left to read its ending from.
pub struct Outcome<'a> {
    /// libtest's log of the run (`--logfile`): a line `ok NAME`, `failed NAME` or `ignored NAME`
    /// per test that ended. `None` where the binary does not write one.
    pub log: Option<&'a str>,
    /// The process's stdout (lossy UTF-8): only for a failure's fingerprint, and for the
    /// closing `test result:` line where there is no log.
    pub stdout: &'a str,
    /// The exit code; `None` for a signal.
    pub code: Option<i32>,
    /// The signal that ended the process.
    pub signal: Option<i32>,
    /// Whether the run ran the victim alone.
    pub alone: bool,
}

/// How test `name` ended in a libtest run, from what its own output cannot forge: libtest's
/// log of the run, the exit status, and (without a log) libtest's closing lines. A line the
/// test or a child of it prints (`test NAME ... ok`) decides nothing.
pub fn ending_of(name: &str, outcome: &Outcome) -> Ending {
    let crash = || match (outcome.code, outcome.signal) {
        (_, Some(signal)) => Ending::Crash(format!("signal {signal}{}", signal_name(signal))),
        (Some(0), None) => Ending::NotRun,
        (Some(code), None) => Ending::Crash(format!("exit status {code}")),
        (None, None) => Ending::Crash("no exit status".into()),
    };
    if let Some(log) = outcome.log {
        let status = log.lines().find_map(|line| {
            let (status, test) = line.split_once(' ')?;
            (test == name).then_some(status)
        });
        return match status {
            Some("ok") => Ending::Pass,
            Some("failed") => Ending::Fail(failure_fingerprint(name, outcome.stdout)),
            Some(_) => Ending::NotRun,
            None => crash(),
        };
    }
    // No log: libtest exits 0 when every test it ran passed and 101 when one failed, and
    // closes with its `test result:` line and, before it, the names of the failed tests.
    let closing = closing_lines(outcome.stdout);
    match (outcome.code, outcome.signal) {
        (Some(0), None) => {
            let ran = closing
                .result
                .is_some_and(|result| !result.contains(" 0 passed;"));
            if ran {
                Ending::Pass
            } else {
                Ending::NotRun
            }
        }
        (Some(101), None) if outcome.alone || closing.failed.contains(&name) => {
            Ending::Fail(failure_fingerprint(name, outcome.stdout))
        }
        (Some(101), None) if closing.result.is_some() => Ending::Pass,
        _ => crash(),
    }
}

/// The tests that failed in a run of many, from libtest's log, else from its closing lines.
pub fn failed_tests(log: Option<&str>, stdout: &str) -> Vec<String> {
    match log {
        Some(log) => log
            .lines()
            .filter_map(|line| line.strip_prefix("failed "))
            .map(str::to_string)
            .collect(),
        None => closing_lines(stdout)
            .failed
            .into_iter()
            .map(str::to_string)
            .collect(),
    }
}

/// libtest's closing lines: the names under its last `failures:` heading, and `test result:`.
struct Closing<'a> {
    failed: Vec<&'a str>,
    result: Option<&'a str>,
}

fn closing_lines(stdout: &str) -> Closing<'_> {
    let lines: Vec<&str> = stdout.lines().collect();
    let Some(at) = lines
        .iter()
        .rposition(|line| line.starts_with("test result: "))
    else {
        return Closing {
            failed: Vec::new(),
            result: None,
        };
    };
    let heading = lines[..at].iter().rposition(|line| *line == "failures:");
    let failed = heading
        .map(|heading| {
            lines[heading + 1..at]
                .iter()
                .filter_map(|line| line.strip_prefix("    "))
                .collect()
        })
        .unwrap_or_default();
    Closing {
        failed,
        result: Some(lines[at]),
    }
}

/// The fingerprint of test `name`'s failure: the panic's place (file and line) and message,
/// normalized, from the test's section of libtest's failure report.
fn failure_fingerprint(name: &str, stdout: &str) -> String {
    let header = format!("---- {name} stdout ----");
    let section: Vec<&str> = stdout
        .lines()
        .skip_while(|line| line.trim() != header)
        .skip(1)
        .take_while(|line| !line.starts_with("---- ") && line.trim() != "failures:")
        .collect();
    let panic = section
        .iter()
        .position(|line| line.starts_with("thread '") && line.contains("panicked at "));
    match panic {
        Some(at) => {
            let place = section[at]
                .split("panicked at ")
                .nth(1)
                .unwrap_or_default()
                .trim_end_matches(':');
            // `file:line:column`: the column moves with formatting; the line is the place.
            let place = match place.rsplit_once(':') {
                Some((file_line, column)) if column.bytes().all(|b| b.is_ascii_digit()) => {
                    file_line
                }
                _ => place,
            };
            let message = section.get(at + 1).copied().unwrap_or_default();
            format!("panicked at {place}: {}", normalize(message))
        }
        None => "failed without a panic message".to_string(),
    }
}

/// `text` with every run of digits as `N` and every hexadecimal address as `0xN`: two runs that
/// fail the same way at different values or addresses read alike.
pub fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '0' && chars.peek() == Some(&'x') {
            chars.next();
            while chars.peek().is_some_and(char::is_ascii_hexdigit) {
                chars.next();
            }
            out.push_str("0xN");
        } else if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push('N');
        } else {
            out.push(c);
        }
    }
    out.trim().to_string()
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        4 => " (SIGILL)",
        6 => " (SIGABRT)",
        7 => " (SIGBUS)",
        8 => " (SIGFPE)",
        9 => " (SIGKILL)",
        11 => " (SIGSEGV)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAILED: &str = "
running 2 tests
test other ... ok
test victim ... FAILED

failures:

---- victim stdout ----

thread 'victim' (4242) panicked at tests/entropy.rs:12:5:
assertion `left == right` failed: order 17 at 0x7ffd1234abcd
  left: 3
 right: 4
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    victim

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    fn logged(log: &str, code: i32) -> Outcome<'_> {
        Outcome {
            log: Some(log),
            stdout: FAILED,
            code: Some(code),
            signal: None,
            alone: false,
        }
    }

    #[test]
    fn a_failure_is_fingerprinted_by_place_and_normalized_message() {
        let outcome = logged("ok other\nfailed victim\n", 101);
        assert_eq!(
            ending_of("victim", &outcome),
            Ending::Fail(
                "panicked at tests/entropy.rs:12: assertion `left == right` failed: order N at 0xN"
                    .into()
            )
        );
        assert_eq!(ending_of("other", &outcome), Ending::Pass);
    }

    #[test]
    fn lines_a_test_prints_decide_nothing() {
        // A child process printed a status line of its own for the victim, which failed.
        let printed = "test victim ... ok\ntest victim ... FAILED\n";
        let outcome = Outcome {
            log: Some("failed victim"),
            stdout: printed,
            code: Some(101),
            signal: None,
            alone: true,
        };
        assert!(ending_of("victim", &outcome).failed());
        // Without a log, a run of the victim alone is decided by its exit status.
        let outcome = Outcome {
            log: None,
            ..outcome
        };
        assert!(ending_of("victim", &outcome).failed());
        let passed = "test victim ... FAILED\n\ntest result: ok. 1 passed; 0 failed; 0 ignored\n";
        let outcome = Outcome {
            stdout: passed,
            code: Some(0),
            ..outcome
        };
        assert_eq!(ending_of("victim", &outcome), Ending::Pass);
    }

    #[test]
    fn without_a_log_the_failed_list_names_the_failures_of_a_run_of_many() {
        let outcome = Outcome {
            log: None,
            stdout: FAILED,
            code: Some(101),
            signal: None,
            alone: false,
        };
        assert!(ending_of("victim", &outcome).failed());
        assert_eq!(ending_of("other", &outcome), Ending::Pass);
    }

    #[test]
    fn a_run_without_a_word_about_the_test_is_a_crash_or_not_run() {
        let outcome = |code, signal| Outcome {
            log: Some(""),
            stdout: "running 1 test\n",
            code,
            signal,
            alone: true,
        };
        assert_eq!(
            ending_of("victim", &outcome(None, Some(6))),
            Ending::Crash("signal 6 (SIGABRT)".into())
        );
        assert_eq!(ending_of("victim", &outcome(Some(0), None)), Ending::NotRun);
        assert!(ending_of("victim", &outcome(Some(101), None)).failed());
    }

    #[test]
    fn numbers_and_addresses_are_normalized() {
        assert_eq!(
            normalize("took 1532 ms at 0xdeadBEEF, 3 left"),
            "took N ms at 0xN, N left"
        );
    }
}
