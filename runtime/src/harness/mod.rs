//! What runs inside a test binary: the registry of benches and hooks, the run context (what is
//! current on a thread during a run), the runner that executes one run, the features a run uses
//! (recording, limits, the cassette, timeouts, frames), this process's recorder, and the
//! settings.
//!
//! Layer: harness, the top. May import every layer below: `types`, `model`, `format`, `render`,
//! `store`, `export`.

pub(crate) mod accounting;
pub(crate) mod assertions;
pub(crate) mod cache;
pub(crate) mod context;
pub(crate) mod dataset;
pub(crate) mod frames;
pub(crate) mod limits;
pub(crate) mod margins;
pub(crate) mod recorder;
pub(crate) mod registry;
pub(crate) mod reporter;
pub(crate) mod repro;
pub(crate) mod runner;
pub(crate) mod settings;
pub(crate) mod startup;
pub(crate) mod stop_check;
pub(crate) mod timeout;
pub(crate) mod verdict;
