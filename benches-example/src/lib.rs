//! The systems under test of the example evals in `tests/evals/`.
//!
//! - [`triage`]: a support-ticket triage client that calls an OpenAI-compatible
//!   chat-completion endpoint, the kind of LLM integration an app ships.
//! - [`server`]: the local model server the evals start, so that they run offline: a real HTTP
//!   server on 127.0.0.1 whose [`model`] samples its answers like a language model.
//! - [`estimate`]: randomized algorithms whose answers vary from run to run.

pub mod estimate;
pub mod model;
pub mod server;
pub mod triage;
