//! The store's small JSON files besides its log: a session's `session.json`, and a value of
//! the cassette of `probtest::cached`. The store puts them on disk and finds them; their shape
//! is here.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::usage::TokenUsage;

/// `session.json`: `{"key","started"}`, written once by the session's first process.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct SessionFile {
    /// The session's key.
    pub(crate) key: String,
    /// Nanoseconds since the Unix epoch; orders sessions for pruning and for "latest".
    pub(crate) started: u128,
}

/// One recorded call of the cassette: `{"key","value","usage","cost"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct CacheEntry {
    /// The key as given, to check it against the file's name, which is cleaned.
    pub(crate) key: String,
    /// The call's value, as serde wrote the user's type.
    pub(crate) value: Value,
    /// The usage the call recorded.
    #[serde(default)]
    pub(crate) usage: Vec<TokenUsage>,
    /// The cost the call recorded apart from its usage's.
    #[serde(default)]
    pub(crate) cost: f64,
}
