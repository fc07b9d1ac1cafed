//! Token usage: one run's entries ([`TokenUsage`]) and their totals per model
//! ([`UsageTotals`]).
//!
//! Layer: types (pure). Imports nothing from the crate.

use serde::{Deserialize, Serialize};

/// Token accounting for one model's calls within a run.
///
/// Entries recorded in one run aggregate per `model`; the summary prints one `Tokens` line per
/// model and the report keeps every entry.
///
/// ```
/// let usage = probtest::TokenUsage {
///     model: "m-small".into(),
///     input_tokens: 1_200,
///     output_tokens: 80,
///     ..Default::default()
/// };
/// assert_eq!(usage.cached_input_tokens, 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TokenUsage {
    /// The model's name; entries aggregate by it.
    pub model: String,
    /// Tokens sent to the model (the prompt).
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Input tokens served from the provider's prompt cache (part of `input_tokens`).
    pub cached_input_tokens: u64,
    /// What the calls cost, in your currency of account.
    pub cost: f64,
}

/// Aggregated token usage of one model.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct UsageTotals {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Input tokens served from cache.
    pub cached_input_tokens: u64,
    /// What the calls cost.
    pub cost: f64,
}

impl UsageTotals {
    pub(crate) fn add(&mut self, usage: &TokenUsage) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cached_input_tokens += usage.cached_input_tokens;
        self.cost += usage.cost;
    }
}
