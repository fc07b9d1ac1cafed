//! A support-ticket classifier that behaves like a language-model call: it scores each label,
//! samples the answer at a temperature, and reports the tokens it used and what they cost.

use rand::Rng;

/// The queue a ticket belongs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// Money back.
    Refund,
    /// Where is my parcel.
    Shipping,
    /// Login, password, account.
    Account,
}

const LABELS: [Label; 3] = [Label::Refund, Label::Shipping, Label::Account];

/// Price per thousand tokens of the simulated model.
const INPUT_PRICE_PER_1K: f64 = 0.000_15;
const OUTPUT_PRICE_PER_1K: f64 = 0.000_6;

/// Token usage of one call, shaped like a chat-completion response's `usage` object.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Usage {
    /// Always the classifier's model name.
    pub model: &'static str,
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub completion_tokens: u64,
    /// What the call cost.
    pub cost: f64,
}

/// One answer: the label and what it cost to get.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The sampled label.
    pub label: Label,
    /// Tokens and cost of the call.
    pub usage: Usage,
}

/// The classifier. Higher temperatures make answers vary more from call to call.
#[derive(Clone, Debug)]
pub struct Triage {
    /// Sampling temperature; 0 always picks the best-scoring label.
    pub temperature: f64,
}

impl Default for Triage {
    fn default() -> Self {
        Triage { temperature: 0.1 }
    }
}

fn keywords(label: Label) -> &'static [&'static str] {
    match label {
        Label::Refund => &["refund", "money", "charged", "return", "cancel"],
        Label::Shipping => &["order", "parcel", "delivery", "shipping", "arrive", "where"],
        Label::Account => &["password", "login", "account", "email", "locked"],
    }
}

impl Triage {
    /// Classifies `ticket`, sampling among labels by their keyword scores.
    pub fn classify(&self, ticket: &str) -> Answer {
        let text = ticket.to_lowercase();
        let scores: Vec<f64> = LABELS
            .iter()
            .map(|&label| keywords(label).iter().filter(|k| text.contains(*k)).count() as f64)
            .collect();
        let label = self.sample(&scores, &mut rand::rng());
        let prompt_tokens = 40 + ticket.split_whitespace().count() as u64 * 4 / 3;
        let completion_tokens = 3;
        Answer {
            label,
            usage: Usage {
                model: "triage-small",
                prompt_tokens,
                completion_tokens,
                cost: prompt_tokens as f64 / 1000.0 * INPUT_PRICE_PER_1K
                    + completion_tokens as f64 / 1000.0 * OUTPUT_PRICE_PER_1K,
            },
        }
    }

    fn sample(&self, scores: &[f64], rng: &mut impl Rng) -> Label {
        if self.temperature <= 0.0 {
            let best = scores
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(index, _)| index);
            return LABELS[best];
        }
        let weights: Vec<f64> = scores
            .iter()
            .map(|s| (s / self.temperature).exp())
            .collect();
        let mut pick = rng.random::<f64>() * weights.iter().sum::<f64>();
        for (index, weight) in weights.iter().enumerate() {
            if pick < *weight {
                return LABELS[index];
            }
            pick -= weight;
        }
        LABELS[LABELS.len() - 1]
    }
}
