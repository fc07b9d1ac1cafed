//! Terminal text rendered from the session model: the `probability` summary, the gates and
//! metrics blocks, and plain-language explanations. Later sinks (HTML, Markdown, JUnit) go
//! beside it as siblings reading the same [`Report`](crate::Report).
//!
//! Layer: render. May import `crate::types` and `crate::model`; never `format`, `store` or
//! `harness`.

pub(crate) mod analysis;
#[cfg(test)]
mod analysis_tests;
pub(crate) mod baseline;
pub(crate) mod compare;
pub(crate) mod explain;
pub(crate) mod explained;
pub mod history;
pub(crate) mod latency;
pub(crate) mod metrics;
pub mod plan;
pub(crate) mod stopping;
pub(crate) mod summary;
pub(crate) mod text;
pub(crate) mod waits;

pub use summary::{color_enabled, summary, Options};
pub(crate) use text::{bar_text, bound_percent};
