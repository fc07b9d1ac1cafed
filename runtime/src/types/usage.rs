//! Token usage: one run's entries ([`TokenUsage`]) and their totals per model
//! ([`UsageTotals`]).
//!
//! Layer: types (pure). Imports nothing from the crate.

use crate::types::sum::{is_saturated, saturating_add};

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
#[derive(Clone, Debug, Default, PartialEq)]
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
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// Adds one entry; every total stops at its largest value instead of overflowing.
    pub(crate) fn add(&mut self, usage: &TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(usage.cached_input_tokens);
        self.cost = saturating_add(self.cost, usage.cost);
    }

    /// Whether a token count stopped at its largest value.
    pub(crate) fn tokens_saturated(&self) -> bool {
        [
            self.input_tokens,
            self.output_tokens,
            self.cached_input_tokens,
        ]
        .contains(&u64::MAX)
    }

    /// Whether the cost stopped at the largest finite number.
    pub(crate) fn cost_saturated(&self) -> bool {
        is_saturated(self.cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_stop_at_their_largest_values() {
        let mut totals = UsageTotals::default();
        let huge = TokenUsage {
            model: "m".into(),
            input_tokens: u64::MAX - 1,
            output_tokens: 3,
            cached_input_tokens: 5,
            cost: 1e308,
        };
        totals.add(&huge);
        assert!(!totals.tokens_saturated() && !totals.cost_saturated());
        totals.add(&huge);
        assert_eq!(
            (
                totals.input_tokens,
                totals.output_tokens,
                totals.cached_input_tokens
            ),
            (u64::MAX, 6, 10)
        );
        assert_eq!(totals.cost, f64::MAX);
        assert!(totals.tokens_saturated() && totals.cost_saturated());
    }
}
