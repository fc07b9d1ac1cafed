//! The CLI's one error type: what went wrong, usually prefixed with the file or session it went
//! wrong with, always rendered on a single line.

use std::fmt;

/// The exit code of every error of `cargo probtest` itself (bad input, missing files, unknown
/// sessions), the same code clap uses for a bad command line.
pub const EXIT_ERROR: i32 = 2;

/// The exit code of `report` and `merge` when the report fails (a gate's verdict, or a failed
/// or errored run of an ungated case): nextest's code for failing tests.
pub const EXIT_FAILED: i32 = 100;

/// An error to report as `error: <subject>: <problem>` and exit with [`EXIT_ERROR`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with a message of its own.
    pub fn new(message: impl fmt::Display) -> Error {
        Error {
            message: one_line(&message.to_string()),
        }
    }

    /// An error about `subject` (a file, a session): `<subject>: <problem>`.
    pub fn about(subject: impl fmt::Display, problem: impl fmt::Display) -> Error {
        Error::new(format!("{subject}: {problem}"))
    }

    /// The message, without the `error: ` prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Joins the lines of a message with spaces, so that an error is always one line on stderr.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_name_their_subject() {
        let error = Error::about("shard2.json", "cannot read (\n  permission denied\n)");
        assert_eq!(
            error.to_string(),
            "shard2.json: cannot read ( permission denied )"
        );
        assert!(!error.message().contains('\n'));
    }
}
