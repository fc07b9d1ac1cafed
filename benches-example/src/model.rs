//! The local model's classifier: multinomial naive Bayes trained at start-up on the bundled
//! tickets, answering with a label sampled at a temperature, the way a language model samples
//! its next token. Deterministic scores, random answers: exactly what makes one eval run prove
//! little.

use std::collections::{BTreeMap, HashMap};

use rand::Rng;

/// The labelled tickets the model learns from. Bundled into the binary, so the server needs no
/// file at run time and works from any directory.
pub const TRAINING_DATA: &str = include_str!("../data/tickets.csv");

/// Words too common to say anything about a ticket's queue.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "am", "an", "and", "any", "are", "at", "be", "before", "but",
    "by", "can", "could", "did", "do", "does", "every", "for", "from", "had", "has", "have",
    "here", "how", "i", "in", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or",
    "please", "so", "that", "the", "them", "there", "they", "this", "to", "was", "we", "were",
    "what", "when", "where", "why", "will", "with", "would", "you", "your",
];

/// The words of `text` the classifier looks at: lowercase alphanumeric runs of two or more
/// characters, without stop words.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| word.len() > 1)
        .map(str::to_ascii_lowercase)
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
}

/// A multinomial naive-Bayes text classifier with add-one smoothing.
#[derive(Clone, Debug)]
pub struct NaiveBayes {
    labels: Vec<String>,
    log_priors: Vec<f64>,
    /// log P(word | label) for every word seen in training, one entry per label.
    log_likelihoods: HashMap<String, Vec<f64>>,
}

/// One line of the training CSV.
#[derive(serde::Deserialize)]
struct Example {
    text: String,
    label: String,
}

impl NaiveBayes {
    /// Trains on the bundled tickets ([`TRAINING_DATA`]).
    pub fn bundled() -> Result<NaiveBayes, csv::Error> {
        NaiveBayes::from_csv(TRAINING_DATA.as_bytes())
    }

    /// Trains on a CSV with a header and `text,label` columns.
    pub fn from_csv(data: impl std::io::Read) -> Result<NaiveBayes, csv::Error> {
        let examples = csv::Reader::from_reader(data)
            .deserialize::<Example>()
            .collect::<Result<Vec<_>, _>>()?;
        Ok(NaiveBayes::train(
            examples.iter().map(|e| (e.text.as_str(), e.label.as_str())),
        ))
    }

    /// Trains on `(text, label)` pairs.
    pub fn train<'a>(examples: impl IntoIterator<Item = (&'a str, &'a str)>) -> NaiveBayes {
        // Per label: documents, and occurrences of each word. Sorted maps keep the label order,
        // and so the sampling, independent of hashing.
        let mut documents: BTreeMap<&str, u32> = BTreeMap::new();
        let mut counts: BTreeMap<&str, HashMap<String, u32>> = BTreeMap::new();
        for (text, label) in examples {
            *documents.entry(label).or_default() += 1;
            let words = counts.entry(label).or_default();
            for word in self::words(text) {
                *words.entry(word).or_default() += 1;
            }
        }
        let labels: Vec<String> = documents.keys().map(|label| label.to_string()).collect();
        let total_documents: u32 = documents.values().sum();
        let log_priors = documents
            .values()
            .map(|&n| (f64::from(n) / f64::from(total_documents)).ln())
            .collect();
        let mut vocabulary: Vec<&String> = counts.values().flat_map(HashMap::keys).collect();
        vocabulary.sort();
        vocabulary.dedup();
        let size = vocabulary.len() as f64;
        let totals: Vec<f64> = counts
            .values()
            .map(|words| f64::from(words.values().sum::<u32>()))
            .collect();
        let log_likelihoods = vocabulary
            .iter()
            .map(|&word| {
                let per_label = counts
                    .values()
                    .zip(&totals)
                    .map(|(words, total)| {
                        let n = f64::from(words.get(word).copied().unwrap_or(0));
                        ((n + 1.0) / (total + size)).ln()
                    })
                    .collect();
                (word.clone(), per_label)
            })
            .collect();
        NaiveBayes {
            labels,
            log_priors,
            log_likelihoods,
        }
    }

    /// The labels, in the order [`NaiveBayes::probabilities`] reports them.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The probability of answering each label for `text` at `temperature`: the posterior
    /// sharpened (below 1) or flattened (above 1), as a language model's softmax is. At 0 the
    /// best label gets everything. Words never seen in training are ignored.
    pub fn probabilities(&self, text: &str, temperature: f64) -> Vec<(&str, f64)> {
        let mut scores = self.log_priors.clone();
        for word in words(text) {
            if let Some(likelihoods) = self.log_likelihoods.get(&word) {
                for (score, likelihood) in scores.iter_mut().zip(likelihoods) {
                    *score += likelihood;
                }
            }
        }
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = if temperature <= 0.0 {
            let first = scores.iter().position(|&score| score == best);
            (0..scores.len())
                .map(|index| if Some(index) == first { 1.0 } else { 0.0 })
                .collect()
        } else {
            // Subtracting the best score first keeps exp() from underflowing to all zeros.
            scores
                .iter()
                .map(|score| ((score - best) / temperature).exp())
                .collect()
        };
        let sum: f64 = weights.iter().sum();
        self.labels
            .iter()
            .zip(weights)
            .map(|(label, weight)| (label.as_str(), weight / sum))
            .collect()
    }

    /// Samples one label for `text` at `temperature`.
    pub fn sample(&self, text: &str, temperature: f64, rng: &mut impl Rng) -> &str {
        let probabilities = self.probabilities(text, temperature);
        let mut pick: f64 = rng.random();
        for &(label, probability) in &probabilities {
            if pick < probability {
                return label;
            }
            pick -= probability;
        }
        // Rounding left `pick` a hair above the total: the last label.
        probabilities.last().map_or("", |&(label, _)| label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probability(model: &NaiveBayes, text: &str, temperature: f64, label: &str) -> f64 {
        model
            .probabilities(text, temperature)
            .into_iter()
            .find(|&(l, _)| l == label)
            .map(|(_, p)| p)
            .expect("a known label")
    }

    #[test]
    fn the_bundled_tickets_train_four_labels() {
        let model = NaiveBayes::bundled().expect("the bundled CSV parses");
        assert_eq!(model.labels(), ["account", "bug", "refund", "shipping"]);
    }

    #[test]
    fn temperature_zero_always_picks_the_best_label() {
        let model = NaiveBayes::bundled().expect("the bundled CSV parses");
        let text = "I was charged for an order that never arrived";
        assert_eq!(probability(&model, text, 0.0, "shipping"), 1.0);
        let mut rng = rand::rng();
        assert!((0..100).all(|_| model.sample(text, 0.0, &mut rng) == "shipping"));
    }

    /// The evals in `tests/evals/triage.rs` choose their runs and gates from these numbers; if
    /// the training data changes, this test says which comment to revisit.
    #[test]
    fn the_eval_tickets_have_the_probabilities_the_evals_assume() {
        let model = NaiveBayes::bundled().expect("the bundled CSV parses");
        // Clear tickets at the app's temperature: wrong less than once in a billion.
        for (text, label) in [
            (
                "I was charged twice for my order, please refund the duplicate charge",
                "refund",
            ),
            (
                "Where is my parcel? The tracking has not updated and the delivery is late",
                "shipping",
            ),
            (
                "I am locked out of my account and the password reset email never arrives",
                "account",
            ),
            (
                "The app crashes with an error every time I open the settings page",
                "bug",
            ),
        ] {
            let p = probability(&model, text, 0.2, label);
            assert!(1.0 - p < 1e-9, "{text}: {p}");
        }
        // The held-out tickets at temperature 1: each right at least 96% of the time, so that
        // none is wrong in all of its 8 runs more than once in ten billion sessions.
        let held_out = include_str!("../data/held_out.jsonl");
        for line in held_out.lines() {
            let row: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let text = row["ticket"].as_str().expect("a ticket");
            let label = row["expected"].as_str().expect("a label");
            let p = probability(&model, text, 1.0, label);
            assert!(p > 0.96, "{text}: {p}");
        }
        assert_eq!(held_out.lines().count(), 12);
        let ambiguous = "The parcel arrived but the item is broken, I want a refund";
        let p = probability(&model, ambiguous, 1.0, "refund");
        assert!((0.92..0.95).contains(&p), "{p}");
        let contested = "I was charged for an order that never arrived";
        let p = probability(&model, contested, 1.0, "shipping");
        assert!((0.45..0.6).contains(&p), "{p}");
    }

    #[test]
    fn sampling_follows_the_probabilities() {
        let model = NaiveBayes::train([("refund money", "refund"), ("parcel late", "shipping")]);
        let mut rng = rand::rng();
        let text = "money parcel refund";
        let expected = probability(&model, text, 1.0, "refund");
        let draws = 20_000;
        let hits = (0..draws)
            .filter(|_| model.sample(text, 1.0, &mut rng) == "refund")
            .count();
        // Six standard errors: a failure means a bug, not bad luck.
        let tolerance = 6.0 * (expected * (1.0 - expected) / f64::from(draws)).sqrt();
        assert!((hits as f64 / f64::from(draws) - expected).abs() < tolerance);
    }
}
