//! Terminal text rendered from the session model: the `probability` summary, the gates and
//! metrics blocks, and plain-language explanations. Later sinks (HTML, Markdown, JUnit) go
//! beside it as siblings reading the same [`Report`](crate::Report).
//!
//! Layer: render. May import `crate::types` and `crate::model`; never `format`, `store` or
//! `harness`.

pub(crate) mod analysis;
#[cfg(test)]
mod analysis_tests;
pub(crate) mod baseline_section;
pub(crate) mod compare;
#[cfg(test)]
mod escape_tests;
pub(crate) mod explain;
pub(crate) mod explained;
pub(crate) mod latency_block;
pub(crate) mod metrics;
pub(crate) mod not_run;
pub mod planning;
pub(crate) mod stop_notes;
pub(crate) mod summary;
pub(crate) mod text;
pub mod trend;
pub(crate) mod waits;

pub use summary::{color_enabled, summary, Options};
pub(crate) use text::{bar_text, bound_percent};
