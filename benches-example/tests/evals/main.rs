//! The example evals, in one test binary so that one process prints one summary and writes one
//! report covering all of them.

mod estimate;
mod triage;
