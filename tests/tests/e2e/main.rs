//! End-to-end tests, one module per topic: fixture crates written under `target/e2e/`, built
//! and run with real `cargo test`, `cargo nextest run` and `cargo probtest`, and what they print
//! and write checked. One test binary, so that `support` compiles and links once.
//!
//! The suite's tests share this process: none sets an environment variable or the current
//! directory of its own process (a command gets its own through `support::Run`), and a test
//! that needs the machine quiet takes it alone with `support::machine::alone`.

mod analysis;
mod cassette;
mod cli;
mod conventions;
mod dataset;
mod doctor;
mod example;
mod export;
mod gate_items;
mod gates;
mod history;
mod hooks;
mod hostile;
mod html;
mod interop;
mod latency;
mod limits;
mod not_run;
mod outcomes;
mod plan;
mod sessions;
mod settings;
mod stopping;
mod store;
mod support;
mod usage;
