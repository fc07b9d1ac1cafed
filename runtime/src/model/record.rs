//! One run as the model holds it: who ran and how it ended. It is the one spelling of a run's
//! ending: the runner builds it, the store's writer takes it, the log's end line and the
//! report's record are read into it. Its JSON shapes (the log line's; the report's, with the
//! peer's `message` / `error` split and a `cost` of `null` when nothing was spent) are written
//! and read in `format`.
//!
//! Layer: model. Imports only `crate::types`.

use std::borrow::Cow;

use crate::types::key::CaseKey;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

/// One run. [`Record::default`] is a run that passed at once with nothing spent, of no case:
/// every other record is that with what differs filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// The row id of the run's case. Borrowed from the generated code in the process that ran
    /// it, so that recording a run allocates no strings for its identity.
    pub case: Cow<'static, str>,
    /// The package of the run's case.
    pub package: Cow<'static, str>,
    /// The module of the run's case.
    pub module: Cow<'static, str>,
    /// 1-based run number.
    pub run: u32,
    /// 1 for the first attempt; 2 and up for nextest retries, which rows do not count.
    pub attempt: u32,
    /// How the run ended.
    pub outcome: Outcome,
    /// First line of the failure or error message. The report writes a failure's as `message`
    /// and an error's as `error`, as pytest-probability does.
    pub message: Option<String>,
    /// `file:line:column` of the panic, when there was one.
    pub location: Option<String>,
    /// Seconds the body took.
    pub elapsed: f64,
    /// The run's total cost, usage included; the report writes `null` for a run that spent
    /// nothing.
    pub cost: f64,
    /// Every usage entry recorded in the run.
    pub usage: Vec<TokenUsage>,
    /// Seconds the run waited for limits (`probtest::limit`), which `elapsed` leaves out.
    pub waited: f64,
    /// The limit the run waited for longest, when it waited.
    pub waited_for: Option<String>,
    /// The cost replayed from the cassette (`probtest::cached`), part of `cost` but not money
    /// spent; `Some` when the run replayed anything.
    pub replayed: Option<f64>,
}

impl Default for Record {
    fn default() -> Record {
        Record {
            case: Cow::Borrowed(""),
            package: Cow::Borrowed(""),
            module: Cow::Borrowed(""),
            run: 0,
            attempt: 1,
            outcome: Outcome::Pass,
            message: None,
            location: None,
            elapsed: 0.0,
            cost: 0.0,
            usage: Vec::new(),
            waited: 0.0,
            waited_for: None,
            replayed: None,
        }
    }
}

impl Record {
    /// The key of the record's case, as [`CaseInfo::key`](crate::CaseInfo::key) gives it.
    pub fn key(&self) -> CaseKey<&str> {
        CaseKey::new(&self.package, &self.module, &self.case)
    }

    /// Whether the run is a retry, which rows and totals do not count.
    pub fn is_retry(&self) -> bool {
        self.attempt > 1
    }
}

/// The message of a run that started and never reported.
pub const DIED_MESSAGE: &str = "the test process died before the run finished";

/// The record of a run that started and never finished.
pub(crate) fn died_record(
    package: Cow<'static, str>,
    module: Cow<'static, str>,
    case: Cow<'static, str>,
    run: u32,
    attempt: u32,
) -> Record {
    Record {
        case,
        package,
        module,
        run,
        attempt,
        outcome: Outcome::Error,
        message: Some(DIED_MESSAGE.to_string()),
        ..Record::default()
    }
}
