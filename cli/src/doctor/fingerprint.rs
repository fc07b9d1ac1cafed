//! How a run of a test ended, read from libtest's output: the test's own status line, and for
//! a failure its fingerprint (where it panicked and its message with numbers and addresses
//! normalized away), so that a perturbation that breaks the test differently from the flake
//! is told apart from one that reproduces it.

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

/// How test `name` ended in a libtest run that printed `stdout` (its captured output, not
/// `--nocapture`), exited with `code` (`None`: a signal, named by `signal`).
pub fn ending_of(name: &str, stdout: &str, code: Option<i32>, signal: Option<i32>) -> Ending {
    let status = stdout.lines().find_map(|line| {
        let rest = line.strip_prefix("test ")?.strip_prefix(name)?;
        rest.strip_prefix(" ... ")
    });
    match status.map(str::trim) {
        Some("ok") => Ending::Pass,
        Some(status) if status.starts_with("FAILED") => {
            Ending::Fail(failure_fingerprint(name, stdout))
        }
        Some(_) => Ending::NotRun,
        None => match (code, signal) {
            (_, Some(signal)) => Ending::Crash(format!("signal {signal}{}", signal_name(signal))),
            (Some(0), None) => Ending::NotRun,
            (Some(code), None) => Ending::Crash(format!("exit status {code}")),
            (None, None) => Ending::Crash("no exit status".into()),
        },
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

    #[test]
    fn a_failure_is_fingerprinted_by_place_and_normalized_message() {
        assert_eq!(
            ending_of("victim", FAILED, Some(101), None),
            Ending::Fail(
                "panicked at tests/entropy.rs:12: assertion `left == right` failed: order N at 0xN"
                    .into()
            )
        );
        assert_eq!(ending_of("other", FAILED, Some(101), None), Ending::Pass);
    }

    #[test]
    fn a_prefix_of_another_name_is_not_the_test() {
        let text = "test victim_two ... FAILED\ntest victim ... ok\n";
        assert_eq!(ending_of("victim", text, Some(101), None), Ending::Pass);
    }

    #[test]
    fn a_run_without_a_status_line_is_a_crash_or_not_run() {
        assert_eq!(
            ending_of("victim", "running 1 test\n", None, Some(6)),
            Ending::Crash("signal 6 (SIGABRT)".into())
        );
        assert_eq!(
            ending_of("victim", "running 0 tests\n", Some(0), None),
            Ending::NotRun
        );
        assert!(ending_of("victim", "", Some(101), None).failed());
    }

    #[test]
    fn numbers_and_addresses_are_normalized() {
        assert_eq!(
            normalize("took 1532 ms at 0xdeadBEEF, 3 left"),
            "took N ms at 0xN, N left"
        );
    }
}
