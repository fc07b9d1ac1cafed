//! Run classes and row statuses: how a run ended, and the verdict word for a case's runs.

/// How one run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The function returned `()` or `Ok(())`.
    Pass,
    /// An assertion failed: the code under test gave a wrong answer.
    Fail,
    /// Anything else went wrong: another panic, an `Err` return, a failed setup, a process that
    /// died mid-run. The harness broke, not the answer.
    Error,
    /// `PROB_STOP` skipped the run: its case's gate was already decided, so the body did not
    /// run. Never a pass and never a sample, and never missing either.
    Stopped,
}

impl Outcome {
    /// The outcome as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Error => "error",
            Outcome::Stopped => "stopped",
        }
    }
}

/// The verdict on a case, derived from its runs' outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every run passed.
    Pass,
    /// Passes and failures mixed: real nondeterminism.
    Flaky,
    /// Passes and errors only: the code never answered wrong, the harness broke.
    Errored,
    /// No run passed and at least one failed.
    Fail,
    /// Every run errored.
    Error,
}

/// Terminal color of a status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Color {
    Green,
    Yellow,
    Red,
}

impl Status {
    /// The status as the report spells it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Flaky => "flaky",
            Status::Errored => "errored",
            Status::Fail => "fail",
            Status::Error => "error",
        }
    }

    /// The status of a case with these counts. A case with no runs counts as an error: a case
    /// that was expected and never reported must not read as a pass.
    pub fn from_counts(passes: u64, fails: u64, errors: u64) -> Status {
        match (passes > 0, fails > 0, errors > 0) {
            (true, false, false) => Status::Pass,
            (true, true, _) => Status::Flaky,
            (true, false, true) => Status::Errored,
            (false, true, _) => Status::Fail,
            (false, false, _) => Status::Error,
        }
    }

    pub(crate) fn color(self) -> Color {
        match self {
            Status::Pass => Color::Green,
            Status::Flaky | Status::Errored => Color::Yellow,
            Status::Fail | Status::Error => Color::Red,
        }
    }
}

/// The status text of a summary row: the verdict word, with errors as an annotation when they
/// appear beside real outcomes. Empty for a clean pass.
pub fn status_text(passes: u64, fails: u64, errors: u64) -> String {
    match Status::from_counts(passes, fails, errors) {
        Status::Pass => String::new(),
        Status::Error => "ERROR".to_string(),
        Status::Errored => format!("{errors} ERRORED"),
        Status::Fail if errors > 0 => format!("FAIL ({errors} errored)"),
        Status::Fail => "FAIL".to_string(),
        Status::Flaky if errors > 0 => format!("FLAKY ({errors} errored)"),
        Status::Flaky => "FLAKY".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_seven_combinations_render_distinctly() {
        let table = [
            ((10, 0, 0), Status::Pass, ""),
            ((0, 10, 0), Status::Fail, "FAIL"),
            ((0, 0, 10), Status::Error, "ERROR"),
            ((5, 5, 0), Status::Flaky, "FLAKY"),
            ((7, 0, 3), Status::Errored, "3 ERRORED"),
            ((0, 8, 2), Status::Fail, "FAIL (2 errored)"),
            ((5, 4, 1), Status::Flaky, "FLAKY (1 errored)"),
        ];
        let mut seen = std::collections::HashSet::new();
        for ((p, f, e), status, text) in table {
            assert_eq!(Status::from_counts(p, f, e), status, "{p}/{f}/{e}");
            assert_eq!(status_text(p, f, e), text, "{p}/{f}/{e}");
            assert!(seen.insert(text), "{text} rendered twice");
        }
    }

    #[test]
    fn colors_follow_the_verdict() {
        assert_eq!(Status::Pass.color(), Color::Green);
        assert_eq!(Status::Flaky.color(), Color::Yellow);
        assert_eq!(Status::Errored.color(), Color::Yellow);
        assert_eq!(Status::Fail.color(), Color::Red);
        assert_eq!(Status::Error.color(), Color::Red);
    }

    #[test]
    fn a_case_without_runs_is_never_a_pass() {
        assert_eq!(Status::from_counts(0, 0, 0), Status::Error);
    }
}
