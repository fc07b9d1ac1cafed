//! The system under test: a support-ticket triage client. It asks an OpenAI-compatible
//! chat-completion endpoint which queue a ticket belongs in, parses the one-word answer into a
//! [`Label`], and reports the call's token usage and cost. Pointed at the local model server by
//! default, or at a real provider through [`BASE_URL_VAR`] and [`API_KEY_VAR`].

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Names the provider's OpenAI-style base URL (`https://api.openai.com/v1`); unset or empty,
/// the evals use the local model server.
pub const BASE_URL_VAR: &str = "PROBTEST_EXAMPLE_BASE_URL";
/// The provider's API key, sent as a bearer token.
pub const API_KEY_VAR: &str = "PROBTEST_EXAMPLE_API_KEY";
/// The model to ask for (default [`DEFAULT_MODEL`]).
pub const MODEL_VAR: &str = "PROBTEST_EXAMPLE_MODEL";
/// The model asked for when [`MODEL_VAR`] is unset: a small, cheap one.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// What the API gateway in front of the model bills per request, on top of tokens.
pub const REQUEST_FEE: f64 = 0.000_01;

/// List prices in dollars per million tokens, input then output, by model-name prefix (a
/// provider answers with a dated snapshot such as `gpt-4o-mini-2024-07-18`). Check your
/// provider's price page; a model that is not listed costs 0.
pub const PRICES: &[(&str, f64, f64)] = &[
    // The local model, priced like the small hosted model it stands in for.
    ("triage-nb", 0.15, 0.60),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("gpt-4.1-mini", 0.40, 1.60),
];

/// What a call's prompt and completion tokens cost at `model`'s list price in [`PRICES`].
pub fn price(model: &str, prompt_tokens: u64, completion_tokens: u64) -> f64 {
    PRICES
        .iter()
        .find(|(prefix, _, _)| model.starts_with(prefix))
        .map_or(0.0, |&(_, input, output)| {
            (prompt_tokens as f64 * input + completion_tokens as f64 * output) / 1_000_000.0
        })
}

/// The queue a ticket belongs in; in data files, the word the model answers with (`"refund"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// Money back: double charges, returns, cancellations.
    Refund,
    /// Where is my parcel: delivery, tracking, addresses.
    Shipping,
    /// Login, password, profile.
    Account,
    /// The app or website misbehaves.
    Bug,
}

impl Label {
    /// Every label, in the order the prompt lists them.
    pub const ALL: [Label; 4] = [Label::Refund, Label::Shipping, Label::Account, Label::Bug];

    /// The word the model answers with.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::Refund => "refund",
            Label::Shipping => "shipping",
            Label::Account => "account",
            Label::Bug => "bug",
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Label {
    type Err = ();

    /// Reads a model's answer leniently, as real models add capitals, quotes and full stops:
    /// `Refund.` and `"refund"` are both [`Label::Refund`].
    fn from_str(answer: &str) -> Result<Label, ()> {
        let word = answer
            .trim()
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_ascii_lowercase();
        Label::ALL
            .into_iter()
            .find(|label| label.as_str() == word)
            .ok_or(())
    }
}

/// Token usage of one call: the response's `usage` object with OpenAI's field names (which
/// `probtest::record_usage` reads as they are), plus the model that answered and what the
/// tokens cost at [`PRICES`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// The model that answered, from the response.
    #[serde(default)]
    pub model: String,
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens in the answer.
    pub completion_tokens: u64,
    /// Both together.
    #[serde(default)]
    pub total_tokens: u64,
    /// What the tokens cost, in dollars.
    #[serde(default)]
    pub cost: f64,
}

/// One triaged ticket: the label and what it cost to get.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The model's label.
    pub label: Label,
    /// Tokens and cost of the call.
    pub usage: Usage,
}

/// Why a ticket could not be triaged. None of these is a wrong answer: the call itself broke.
#[non_exhaustive]
pub enum TriageError {
    /// No HTTP response: connection refused, timeout, TLS.
    Transport(ureq::Error),
    /// The endpoint answered with an error status.
    Status {
        /// The HTTP status.
        status: u16,
        /// The start of the body, usually the provider's error message.
        body: String,
    },
    /// The body is not a chat completion: cut off, not JSON, no choices.
    Malformed {
        /// What the parser said.
        reason: String,
        /// The start of the body.
        body: String,
    },
    /// The model answered with something that is not a label.
    NotALabel(String),
    /// An error an earlier run recorded (`PROB_CACHE=record`), replayed as its text.
    Replayed(String),
}

impl fmt::Display for TriageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TriageError::Transport(error) => write!(f, "no response: {error}"),
            TriageError::Status { status, body } => write!(f, "HTTP {status}: {body}"),
            TriageError::Malformed { reason, body } => {
                write!(f, "malformed response ({reason}): {body}")
            }
            TriageError::NotALabel(answer) => write!(f, "the answer {answer:?} is not a label"),
            // The text the error had when it was recorded, so that a replay reports the same.
            TriageError::Replayed(text) => f.write_str(text),
        }
    }
}

// `Debug` shows the message: a bench that returns `Err` is recorded with the error's `Debug`
// text, and this one reads better there than the enum's structure.
impl fmt::Debug for TriageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for TriageError {}

impl From<ureq::Error> for TriageError {
    fn from(error: ureq::Error) -> TriageError {
        TriageError::Transport(error)
    }
}

/// The first line of `text`, at most 120 characters: enough to recognise an error body.
fn snippet(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(120) {
        Some((end, _)) => format!("{}...", &line[..end]),
        None => line.to_string(),
    }
}

/// The instructions sent with every ticket.
const SYSTEM_PROMPT: &str = "You route customer-support tickets. Answer with exactly one \
    word, the queue the ticket belongs in: refund, shipping, account or bug.";

#[derive(Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: [ChatMessage<'a>; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[derive(Serialize)]
struct ChatMessage<'a> {
    role: &'a str,
    content: &'a str,
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    model: String,
    choices: Vec<Choice>,
    usage: Usage,
}

#[derive(Deserialize)]
struct Choice {
    message: ResponseMessage,
}

#[derive(Deserialize)]
struct ResponseMessage {
    #[serde(default)]
    content: Option<String>,
}

/// A client of one chat-completion endpoint. Cheap to clone: clones share the connection pool.
#[derive(Clone, Debug)]
pub struct TriageClient {
    agent: ureq::Agent,
    base_url: String,
    api_key: Option<String>,
    model: String,
    temperature: Option<f64>,
    loopback: bool,
}

impl TriageClient {
    /// A client of the endpoint at `base_url` (`http://127.0.0.1:8080/v1`), asking for
    /// [`DEFAULT_MODEL`] at the provider's default temperature.
    pub fn new(base_url: impl Into<String>) -> TriageClient {
        let base_url: String = base_url.into();
        let base_url = base_url.trim_end_matches('/').to_string();
        let loopback = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
            .iter()
            .any(|prefix| base_url.starts_with(prefix));
        // A hosted model can take a while; the local one answers in milliseconds or not at all.
        let timeout = Duration::from_secs(if loopback { 10 } else { 60 });
        let mut config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            // Error statuses come back as responses, so that their bodies make the message.
            .http_status_as_error(false);
        if loopback {
            // A proxy from HTTP_PROXY cannot reach this machine's loopback address.
            config = config.proxy(None);
        }
        TriageClient {
            agent: config.build().into(),
            base_url,
            api_key: None,
            model: DEFAULT_MODEL.to_string(),
            temperature: None,
            loopback,
        }
    }

    /// The provider named by [`BASE_URL_VAR`], with [`API_KEY_VAR`] and [`MODEL_VAR`] when
    /// set; `None` when [`BASE_URL_VAR`] is unset or empty.
    pub fn from_env() -> Option<TriageClient> {
        let var = |name| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        let mut client = TriageClient::new(var(BASE_URL_VAR)?);
        client.api_key = var(API_KEY_VAR);
        if let Some(model) = var(MODEL_VAR) {
            client.model = model;
        }
        Some(client)
    }

    /// The same client at another sampling temperature.
    pub fn with_temperature(mut self, temperature: f64) -> TriageClient {
        self.temperature = Some(temperature);
        self
    }

    /// The endpoint's base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Asks the model which queue `ticket` belongs in.
    pub fn triage(&self, ticket: &str) -> Result<Answer, TriageError> {
        let request = ChatRequest {
            model: &self.model,
            messages: [
                ChatMessage {
                    role: "system",
                    content: SYSTEM_PROMPT,
                },
                ChatMessage {
                    role: "user",
                    content: ticket,
                },
            ],
            temperature: self.temperature,
        };
        let mut call = self
            .agent
            .post(format!("{}/chat/completions", self.base_url));
        if let Some(key) = &self.api_key {
            call = call.header("Authorization", format!("Bearer {key}"));
        }
        if self.loopback {
            // tiny_http, which serves the local model, gives each connection a thread from a
            // pool that can leave a new connection waiting while every thread holds an idle
            // keep-alive one: a request then hangs until the client times out. One connection
            // per request costs microseconds over loopback and frees the thread at once.
            call = call.header("Connection", "close");
        }
        let mut response = call.send_json(&request)?;
        let status = response.status().as_u16();
        let body = response.body_mut().read_to_string()?;
        if status != 200 {
            return Err(TriageError::Status {
                status,
                body: snippet(&body),
            });
        }
        let parsed: ChatResponse =
            serde_json::from_str(&body).map_err(|error| TriageError::Malformed {
                reason: error.to_string(),
                body: snippet(&body),
            })?;
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message.content)
            .ok_or_else(|| TriageError::Malformed {
                reason: "no choices[0].message.content".to_string(),
                body: snippet(&body),
            })?;
        let label = content
            .parse()
            .map_err(|()| TriageError::NotALabel(content.clone()))?;
        let mut usage = parsed.usage;
        usage.model = parsed.model;
        usage.cost = price(&usage.model, usage.prompt_tokens, usage.completion_tokens);
        Ok(Answer { label, usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_leniently() {
        assert_eq!("refund".parse(), Ok(Label::Refund));
        assert_eq!(" Shipping.\n".parse(), Ok(Label::Shipping));
        assert_eq!("\"account\"".parse(), Ok(Label::Account));
        assert_eq!("I think it is a bug".parse::<Label>(), Err(()));
    }

    #[test]
    fn prices_match_dated_snapshots() {
        let cost = price("gpt-4o-mini-2024-07-18", 1_000_000, 1_000_000);
        assert!((cost - 0.75).abs() < 1e-12);
        assert_eq!(price("some-other-model", 10, 10), 0.0);
    }
}
