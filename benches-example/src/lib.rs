//! The systems under test of the example evals: a support-ticket classifier that samples its
//! answer like a language model, and a randomized estimator.

pub mod estimate;
pub mod triage;
