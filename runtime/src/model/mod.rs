//! The model of a session: cases, records, and the report built from them (rows, totals,
//! aggregates, verdicts). One model, many sinks: the terminal summary, the JSON report and
//! every later writer read a [`Report`], never recompute it.
//!
//! Layer: model. May import `crate::types` only; no I/O, no `serde_json`, no terminal text.

pub(crate) mod aggregate;
pub mod analysis;
mod build;
pub(crate) mod case;
pub(crate) mod explanations;
pub(crate) mod latency_gate;
pub(crate) mod not_run;
pub(crate) mod order;
pub mod planning;
pub(crate) mod record;
pub(crate) mod report;
pub mod stops;
pub(crate) mod synthetic;
#[cfg(test)]
pub(crate) mod tests;
pub mod trend;
pub(crate) mod waits;

pub(crate) use case::{effective_gate, infeasible};
pub use case::{CaseInfo, CompareSpec, Part};
pub use not_run::BinaryNotRun;
#[cfg(feature = "_cli")]
pub(crate) use not_run::ExpectedBinary;
pub use record::Record;
pub use report::{Aggregate, Report, Row, Totals, SCHEMA_VERSION};
pub(crate) use synthetic::synthetic_records;
