//! The system under test of the example evals.
