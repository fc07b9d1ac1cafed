//! Cost and token accounting of the current run: [`record_usage`], [`record_cost`] and
//! [`RunHandle`] for threads spawned inside a run.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::harness::context::{self, RunFinished, RunState};
use crate::types::usage::TokenUsage;

/// Why a usage or cost could not be recorded.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RecordError {
    /// Called outside a `#[probability]` run (and without a [`RunHandle`]).
    NotInRun,
    /// A [`RunHandle`] was used after its run had finished and been reported.
    RunFinished,
    /// A cost that is negative, NaN or infinite.
    InvalidAmount {
        /// What the amount was for: `record_cost` or `record_usage`.
        what: &'static str,
        /// The amount as given.
        amount: f64,
    },
    /// A usage value that cannot be read as token usage.
    InvalidUsage(String),
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordError::NotInRun => f.write_str(
                "called outside a #[probability] run; inside threads spawned by a run, record through probtest::current_run()",
            ),
            RecordError::RunFinished => {
                f.write_str("the run this handle belongs to has already finished and been reported")
            }
            RecordError::InvalidAmount { what, amount } => {
                write!(f, "{what}: a cost must be a finite number >= 0, got {amount}")
            }
            RecordError::InvalidUsage(why) => write!(f, "record_usage: {why}"),
        }
    }
}

impl std::error::Error for RecordError {}

impl From<RunFinished> for RecordError {
    fn from(_: RunFinished) -> Self {
        RecordError::RunFinished
    }
}

/// A handle on the current run, for recording from threads or tasks the run spawns.
///
/// Obtain it inside the run with [`current_run`]; it stays valid until the run finishes.
///
/// ```no_run
/// # use probtest::{current_run, TokenUsage};
/// let run = current_run().expect("inside a #[probability] run");
/// std::thread::spawn(move || {
///     run.record_usage(&TokenUsage { model: "m".into(), input_tokens: 10, ..Default::default() });
/// })
/// .join()
/// .unwrap();
/// ```
#[derive(Clone)]
pub struct RunHandle {
    state: Arc<RunState>,
}

impl fmt::Debug for RunHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunHandle").finish_non_exhaustive()
    }
}

/// The current run, when called inside a `#[probability]` run.
pub fn current_run() -> Option<RunHandle> {
    context::current().map(|state| RunHandle { state })
}

impl RunHandle {
    /// The run's state, for the other parts of the harness that act on a handle's run.
    pub(crate) fn state(&self) -> &Arc<RunState> {
        &self.state
    }

    /// Records token usage for this run; panics with the reason when it cannot.
    #[track_caller]
    pub fn record_usage<T: Serialize + ?Sized>(&self, usage: &T) {
        if let Err(error) = self.try_record_usage(usage) {
            panic!("{error}");
        }
    }

    /// Records token usage for this run.
    pub fn try_record_usage<T: Serialize + ?Sized>(&self, usage: &T) -> Result<(), RecordError> {
        let usage = to_token_usage(usage)?;
        Ok(self.state.add_usage(usage)?)
    }

    /// Adds a non-token cost to this run; panics with the reason when it cannot.
    #[track_caller]
    pub fn record_cost(&self, amount: f64) {
        if let Err(error) = self.try_record_cost(amount) {
            panic!("{error}");
        }
    }

    /// Adds a non-token cost to this run.
    pub fn try_record_cost(&self, amount: f64) -> Result<(), RecordError> {
        check_amount("record_cost", amount)?;
        Ok(self.state.add_cost(amount)?)
    }
}

/// Attributes token usage to the current run.
///
/// Accepts a [`TokenUsage`] or any serializable value with the same field names; fields that
/// are missing count as zero. The common provider spellings are understood too:
/// `prompt_tokens` / `completion_tokens` and `prompt_tokens_details.cached_tokens` (OpenAI chat),
/// `input_tokens_details.cached_tokens` (OpenAI responses), `cache_read_input_tokens`
/// (Anthropic), `promptTokenCount` / `candidatesTokenCount` / `cachedContentTokenCount`
/// (Gemini). Call it once per model call; entries aggregate per model. Usage recorded before a
/// failing assertion is kept.
///
/// # Panics
///
/// Outside a `#[probability]` run, or when the value cannot be read as usage or has a
/// negative or non-finite cost. [`try_record_usage`] returns these as errors instead.
#[track_caller]
pub fn record_usage<T: Serialize + ?Sized>(usage: &T) {
    if let Err(error) = try_record_usage(usage) {
        panic!("{error}");
    }
}

/// Like [`record_usage`], returning the problem instead of panicking.
pub fn try_record_usage<T: Serialize + ?Sized>(usage: &T) -> Result<(), RecordError> {
    let state = context::current().ok_or(RecordError::NotInRun)?;
    RunHandle { state }.try_record_usage(usage)
}

/// Adds a non-token cost (a paid API call, a GPU minute) to the current run.
///
/// A run's total cost is its `record_cost` amounts plus the cost of every usage entry.
///
/// # Panics
///
/// Outside a `#[probability]` run, or for a negative or non-finite amount; the run then counts
/// as an error. [`try_record_cost`] returns these as errors instead.
#[track_caller]
pub fn record_cost(amount: f64) {
    if let Err(error) = try_record_cost(amount) {
        panic!("{error}");
    }
}

/// Like [`record_cost`], returning the problem instead of panicking.
pub fn try_record_cost(amount: f64) -> Result<(), RecordError> {
    let state = context::current().ok_or(RecordError::NotInRun)?;
    RunHandle { state }.try_record_cost(amount)
}

/// A cost as `record_cost` and `record_usage` take it: finite and not negative.
pub(crate) fn check_amount(what: &'static str, amount: f64) -> Result<(), RecordError> {
    if amount.is_finite() && amount >= 0.0 {
        Ok(())
    } else {
        Err(RecordError::InvalidAmount { what, amount })
    }
}

/// Reads any serializable usage value, accepting the providers' field names.
pub(crate) fn to_token_usage<T: Serialize + ?Sized>(usage: &T) -> Result<TokenUsage, RecordError> {
    let value = serde_json::to_value(usage)
        .map_err(|e| RecordError::InvalidUsage(format!("the value cannot be serialized: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(RecordError::InvalidUsage(format!(
            "expected a struct or map with token fields, got {value}"
        )));
    };
    let lookup = |path: &[&str]| -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        rest.iter()
            .try_fold(fields.get(*first)?, |value, key| value.get(key))
    };
    let count = |names: &[&[&str]]| -> Result<u64, RecordError> {
        for path in names {
            match lookup(path) {
                None | Some(Value::Null) => continue,
                Some(value) => {
                    return value.as_u64().ok_or_else(|| {
                        RecordError::InvalidUsage(format!(
                            "`{}` must be a whole number >= 0, got {value}",
                            path.join(".")
                        ))
                    })
                }
            }
        }
        Ok(0)
    };
    let model = match fields.get("model") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(model)) => model.clone(),
        Some(other) => {
            return Err(RecordError::InvalidUsage(format!(
                "`model` must be a string, got {other}"
            )))
        }
    };
    let cost = match fields.get("cost") {
        None | Some(Value::Null) => 0.0,
        Some(value) => value.as_f64().ok_or_else(|| {
            RecordError::InvalidUsage(format!("`cost` must be a number, got {value}"))
        })?,
    };
    check_amount("record_usage", cost)?;
    Ok(TokenUsage {
        model,
        input_tokens: count(&[&["input_tokens"], &["prompt_tokens"], &["promptTokenCount"]])?,
        output_tokens: count(&[
            &["output_tokens"],
            &["completion_tokens"],
            &["candidatesTokenCount"],
        ])?,
        cached_input_tokens: count(&[
            &["cached_input_tokens"],
            &["cached_tokens"],
            &["cache_read_input_tokens"],
            &["prompt_tokens_details", "cached_tokens"],
            &["input_tokens_details", "cached_tokens"],
            &["cachedContentTokenCount"],
        ])?,
        cost,
    })
}

/// Field constructors for the keyword form of [`record_usage!`](crate::record_usage!); each
/// one fixes its field's type so that plain literals infer correctly.
#[doc(hidden)]
pub mod fields {
    /// `model = ...`
    pub fn model(value: impl Into<String>) -> String {
        value.into()
    }
    /// `input_tokens = ...`
    pub fn input_tokens(value: u64) -> u64 {
        value
    }
    /// `output_tokens = ...`
    pub fn output_tokens(value: u64) -> u64 {
        value
    }
    /// `cached_input_tokens = ...`
    pub fn cached_input_tokens(value: u64) -> u64 {
        value
    }
    /// `cost = ...`
    pub fn cost(value: f64) -> f64 {
        value
    }
}

/// Records usage with keyword fields: `record_usage!(model = "m", input_tokens = 10)`.
///
/// Fields not named are zero. Same rules as [`record_usage`](crate::record_usage()).
#[macro_export]
macro_rules! record_usage {
    ($($field:ident = $value:expr),+ $(,)?) => {
        $crate::record_usage(&$crate::TokenUsage {
            $($field: $crate::__private::fields::$field($value),)+
            ..::core::default::Default::default()
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_usage_round_trips() {
        let usage = TokenUsage {
            model: "m".into(),
            input_tokens: 3,
            output_tokens: 2,
            cached_input_tokens: 1,
            cost: 0.5,
        };
        assert_eq!(to_token_usage(&usage), Ok(usage));
    }

    #[test]
    fn provider_spellings_are_understood() {
        let openai = json!({"model": "gpt", "prompt_tokens": 10, "completion_tokens": 4,
            "total_tokens": 14, "prompt_tokens_details": {"cached_tokens": 6}});
        let usage = to_token_usage(&openai).expect("readable");
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (10, 4, 6)
        );

        let anthropic =
            json!({"input_tokens": 7, "output_tokens": 3, "cache_read_input_tokens": 2});
        let usage = to_token_usage(&anthropic).expect("readable");
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (7, 3, 2)
        );
        assert_eq!(usage.model, "");

        let gemini =
            json!({"promptTokenCount": 5, "candidatesTokenCount": 1, "cachedContentTokenCount": 4});
        let usage = to_token_usage(&gemini).expect("readable");
        assert_eq!(
            (
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens
            ),
            (5, 1, 4)
        );
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        let err = to_token_usage(&json!({"input_tokens": -5})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "record_usage: `input_tokens` must be a whole number >= 0, got -5"
        );
        let err = to_token_usage(&json!({"cost": -1.0})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "record_usage: a cost must be a finite number >= 0, got -1"
        );
        let err = to_token_usage(&42).unwrap_err();
        assert!(
            err.to_string().contains("expected a struct or map"),
            "{err}"
        );
        let err = to_token_usage(&json!({"model": 3})).unwrap_err();
        assert!(
            err.to_string().contains("`model` must be a string"),
            "{err}"
        );
    }

    #[test]
    fn recording_outside_a_run_is_an_error() {
        assert_eq!(try_record_cost(1.0), Err(RecordError::NotInRun));
        assert_eq!(
            try_record_usage(&TokenUsage::default()),
            Err(RecordError::NotInRun)
        );
        assert!(current_run().is_none());
    }
}
