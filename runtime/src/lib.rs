//! # probtest: nondeterministic tests as first-class tests
//!
//! Some tests pass seven times in ten: LLM evals, randomized algorithms, anything that samples.
//! One green run of such a test is not evidence. probtest runs each case many times, classifies
//! every run, and prints what happened as pass fractions, with cost and token usage.
//!
//! ```no_run
//! use probtest::probability;
//!
//! #[derive(Debug, Clone, Copy)]
//! enum Style { Terse, Verbose }
//!
//! # fn triage(_: &str, _: Style) -> &'static str { "refund" }
//! #[probability(runs = 10, params(
//!     text = ["refund please", "where is my order"],
//!     style = [Style::Terse, Style::Verbose => "chatty"],
//! ))]
//! fn bench_triage(text: &str, style: Style) {
//!     let label = triage(text, style);
//!     probtest::record_usage!(model = "m-small", input_tokens = 120, output_tokens = 4, cost = 0.0002);
//!     assert_eq!(label, "refund");
//! }
//! ```
//!
//! Plain `cargo test` (or `cargo nextest run`) runs the 40 generated tests, and at exit prints:
//!
//! ```text
//! ================================= probability ==================================
//!   triage::refund please-Terse         10/10  $0.0020
//!   triage::refund please-chatty         9/10  $0.0020  FLAKY
//!   triage::where is my order-Terse      0/10  $0.0020  FAIL
//!   triage::where is my order-chatty     0/10  $0.0020  FAIL
//!
//!   Overall: 19/40 passed (48%)
//!   Cost:    $0.0080
//!   Tokens:  m-small  4,800 in / 160 out  $0.0080
//! ```
//!
//! ## The attribute
//!
//! `#[probability(runs = N, params(...))]` goes on a function in any test suite. Every key is
//! optional.
//!
//! - `runs = N`: an integer literal from 1 to 100,000, the number of runs per case.
//!   `PROB_RUNS` overrides it (with the same cap); without either, the config's `runs`
//!   applies, else 1.
//! - `params(...)`: groups of values. `name = [a, b]` gives one argument its values;
//!   `(x, y) = [(1, 2), (3, 4)]` gives several arguments zipped values. The cases are the
//!   cartesian product of the groups in written order. Every argument has exactly one group.
//! - `value => "id"` names a value (or a zipped tuple) in ids.
//!
//! **Case ids** follow pytest: a string gives its contents, a number, bool or char literal its
//! text (`-1` for negative literals), a path its last segment (`Style::Terse` gives `Terse`), any
//! other expression `<argument><index>` (`cfg0`). Zipped values and groups join with `-`.
//! Repeated ids get `0`, `1`, ... appended. A function without params has one case named after
//! it. **Rows** in the summary and report are `<short>::<case-id>`, where the short name drops a
//! leading `bench_`.
//!
//! **Test items** are `<fn>::<case>::run<N>` in the function's module: the case as an
//! identifier (`refund_please_terse`), the run number zero-padded so that `--test-threads=1`
//! runs them in numeric order. With one run the `run<N>` level is left out; without params, the
//! case level. Select them with libtest's usual filters: `cargo test triage::refund`.
//!
//! ### Cases from a data file
//!
//! `cases(...)` takes a function's cases from a JSON Lines file (`.jsonl`, one object a line) or
//! a CSV file with a header (`.csv`), read when the attribute expands, relative to the package's
//! directory (`CARGO_MANIFEST_DIR`):
//!
//! ```ignore
//! #[derive(serde::Deserialize)]
//! struct Ticket { text: String, expected: Label }
//!
//! // Each row, whole, into the one argument (any `T: serde::de::DeserializeOwned`).
//! #[probability(runs = 5, cases(ticket = "data/tickets.jsonl", id = "name"))]
//! fn bench_triage(ticket: Ticket) { /* .. */ }
//!
//! // Each named argument from the field of its name; `&str` is read as a `String`.
//! #[probability(runs = 5, cases((text, expected) = "data/tickets.csv", id = "name"))]
//! fn bench_fields(text: &str, expected: Label) { /* .. */ }
//! ```
//!
//! The rows are one more group of the cartesian product, placed where `cases` is written
//! relative to `params(...)`. A row's id is its `id` field's value (a string, number or
//! boolean), else `row<N>`, composed with the other groups' ids as usual. Every row and run is a
//! test item at compile time, and the expansion includes the file, so editing it rebuilds the
//! tests. A file that is missing, empty or malformed (the message names the line), an unknown
//! field, or an id that is missing, empty or repeated (naming the row and its line) is a compile
//! error at the token that names it.
//!
//! Rows are deserialized into the arguments' types with serde when each run starts: a row that
//! does not fit is that run's error, `row 3 of `data/tickets.jsonl` (line 3) does not fit the
//! arguments: field `expected`: unknown variant ..`. A CSV cell is read as its argument's type
//! asks: a number, a boolean, an enum's variant, `None` when empty, JSON for a list or a map. An
//! `Option` field a JSON row leaves out is `None`. The report's `params` hold each row's text.
//!
//! The function may return `()` or `Result<(), E: Debug>`. An `async fn` needs a test attribute
//! after `#[probability]` (`#[tokio::test]`, or any attribute whose last segment is `test`); it
//! is put on every generated item. `#[ignore]`, `#[cfg]`, doc comments and lint attributes carry
//! over. The body is compiled once; each generated item is a one-line call.
//!
//! ## Run classes and statuses
//!
//! Every run ends in one of three classes: **pass** (a clean return or `Ok`), **fail** (an
//! `assert!`, `assert_eq!`, `assert_ne!` or `debug_` form failed, in the body or, with std's
//! messages, in a helper it calls) and **error** (any other panic, an `Err` return, a failed
//! setup, a process that died mid-run). A failed or errored run also fails its test item, so the
//! exit status follows the usual test semantics.
//!
//! | classes present | rendered | example |
//! |---|---|---|
//! | pass | (green, no word) | `10/10` |
//! | fail | `FAIL` | `0/10 FAIL` |
//! | error | `ERROR` | `0/10 ERROR` |
//! | pass + fail | `FLAKY` | `5/10 FLAKY` |
//! | pass + error | `N ERRORED` | `7/10 3 ERRORED` |
//! | fail + error | `FAIL (N errored)` | `0/10 FAIL (2 errored)` |
//! | pass + fail + error | `FLAKY (N errored)` | `5/10 FLAKY (1 errored)` |
//!
//! ## Intervals and gates
//!
//! Every row carries an interval on its pass probability ([`stats`]): exact Clopper-Pearson by
//! default, Wilson, or a Bayes credible interval. `min_rate = 0.9` in the attribute gates the
//! case: PASS when the whole interval lies above the bar, FAIL when it lies below, UNDECIDED in
//! between; `min_passes = 19` counts passes instead. `confidence`, `method` and `prior` in the
//! attribute override the session's for that gate. In a gated case a failing run is a sample,
//! not a verdict: under `cargo test` the case's last run judges it; under plain `cargo nextest
//! run`, where no process sees every run, failing runs keep failing, and `cargo probtest run
//! --nextest` judges the session instead.
//!
//! ```no_run
//! # fn answer() -> bool { true }
//! #[probtest::probability(runs = 40, min_rate = 0.8, confidence = 0.9)]
//! fn bench_mostly_right() {
//!     assert!(answer());
//! }
//! ```
//!
//! ## Cost and tokens
//!
//! [`record_usage()`] takes a [`TokenUsage`] or any serializable provider usage struct;
//! [`record_usage!`] takes keyword fields; [`record_cost`] adds a non-token cost. Usage recorded
//! before a failing assertion is kept. From threads a run spawns, record through
//! [`current_run`].
//!
//! ## Settings
//!
//! <!-- settings:start -->
//! | variable | config key | meaning |
//! |---|---|---|
//! | `PROB_RUNS` | `runs` | runs per case (the variable overrides the attribute; the config is the default); below 1 counts as 1 |
//! | `PROB_JSON` | `json` | write the JSON report there |
//! | `PROB_HTML` | | write the HTML report there when a test binary exits (and when `cargo probtest run` ends), relative as `PROB_JSON` (with the default `html` feature) |
//! | `PROB_DELAY` | `delay` | seconds between run starts within a process, never before the first |
//! | `PROB_TRANSPOSE` | `transpose` | run-major order: run 1 of every case of a module, then run 2, ... |
//! | `PROB_GATE_ITEMS` | `gate_items` | `1` (default) or `0`: a test item per gated case, `<case>::verdict`, that passes or fails with its gate's verdict, so that libtest's failure list, nextest's JUnit and rerun-failed tools name a failed gate |
//! | `PROB_METHOD` | `method` | `exact` (default, Clopper-Pearson), `wilson` or `bayes`: how intervals are computed |
//! | `PROB_CONFIDENCE` | `confidence` | the intervals' confidence level (0.95) |
//! | `PROB_PRIOR` | `prior` | `a, b`: the Beta(a, b) prior of the `bayes` method (`1, 1`) |
//! | `PROB_INTERVALS` | `intervals` | `0` hides the interval column |
//! | `PROB_MIN_RATE` | `min_rate` | a gate for every case without its own |
//! | `PROB_UNDECIDED` | `undecided` | `pass` lets an UNDECIDED gate pass the session (`fail` by default) |
//! | `PROB_ERRORS` | `errors` | `exclude` takes errored runs out of gates' samples (`count` by default) |
//! | `PROB_METRIC` | `metrics` | `pass^3,pass@5`: unbiased pass^k and pass@k |
//! | `PROB_EXPLAIN` | `explain` | `1` explains every verdict in plain language |
//! | `PROB_LATENCY` | `latency` | `1` shows each case's latency quantile with its order-statistic interval |
//! | `PROB_LATENCY_QUANTILE` | `latency_quantile` | the latency quantile of cases whose attribute sets none (0.95) |
//! | `PROB_BOOTSTRAP` | `bootstrap` | bootstrap resamples of function-level intervals and comparisons (5000) |
//! | `PROB_SEED` | `seed` | the seed of every resampling, so that a report is reproducible (0) |
//! | `PROB_MIN_INPUTS` | `min_inputs` | the fewest cases a function-level interval needs (10) |
//! | `PROB_COMPARE` | `compare` | the argument whose values are compared, each against the first |
//! | `PROB_ADJUST` | `adjust` | `none`, `holm`, `bonferroni` or `bh`: the comparisons' p-value adjustment |
//! | `PROB_BASELINE` | | an earlier report (probtest's or pytest-probability's) to compare every function with, relative as `PROB_JSON`; or the name of one `cargo probtest baseline save` kept |
//! | `PROB_MARGIN` | | with `PROB_BASELINE`: fail a function whose pass rate may have dropped by more than this |
//! | `PROB_STOP` | `stop` | `off` (default), `curtail` (skip a gated case's remaining runs once its verdict can no longer change) or `sequential` (judge rate gates on an anytime-valid confidence sequence and stop as soon as it decides) |
//! | `PROB_DEFER_VERDICTS` | | `1`: gated cases' runs never fail their items; whoever reads the session judges (`cargo probtest run` sets it) |
//! | `PROB_SESSION` | | the session key, for grouping runs your own way |
//! | `PROB_STORE` | | the directory that holds the sessions instead of `<target>/probtest/sessions` (`cargo probtest doctor` gives its runs one of their own) |
//! | `PROB_SUMMARY` | | `0` turns off the section each test process prints at exit |
//! | `PROB_ITEMS_OUT` | | a file: at start-up, a test binary writes its generated items there as JSON, each with its row and run (`cargo probtest doctor` sets it to diagnose a row) |
//! | `PROB_RECONCILE` | | `1`: when nextest lists a test binary, its generated items are written to the session, so that a test process that dies before start-up is still counted (`cargo probtest run --nextest` sets it) |
//! | `PROB_TIMEOUT` | `timeout` | how long a run may take (`30s`, `1m30s`); the attribute's `timeout` is overridden by the variable and overrides the config. A run past it is an error |
//! | `PROB_LIMIT_<KEY>` | `limits` | how many guards of `probtest::limit("<key>")` may be held at once across the session (`[package.metadata.probtest.limits] openai = { concurrency = 4, per_minute = 60 }`) |
//! | `PROB_LIMIT_<KEY>_PER_MINUTE` | | how many guards of `probtest::limit("<key>")` may be taken a minute (the config's `per_minute` in `limits`) |
//! | `PROB_CACHE` | `cache` | `record`, `replay` or `off` (default): what `probtest::cached` does |
//! | `PROB_CACHE_DIR` | | the cassette's directory instead of `<target>/probtest/cache` (`cargo probtest doctor` records and replays a row's answers in one of its own) |
//! | `PROB_BACKTRACE` | `backtrace` | `1`: a stored panic keeps the user's own frames (probtest's, std's, tokio's and libtest's left out) |
//! <!-- settings:end -->
//!
//! Config lives in `[package.metadata.probtest]`, then `[workspace.metadata.probtest]`, of
//! `Cargo.toml`. Changing `PROB_RUNS`, `PROB_TRANSPOSE` or the config rebuilds the tests. A
//! relative `PROB_JSON` is relative to the workspace root (the package's root outside a
//! workspace), whichever package's tests write it; a relative config `json` is relative to the
//! `Cargo.toml` that declares it. A bad value is one line naming the variable and the value: at
//! compile time for `PROB_RUNS`, `PROB_TRANSPOSE` and every config key (with its file); for a
//! runtime variable (`PROB_CONFIDENCE`, `PROB_DELAY`, ...), on stderr when the test binary
//! starts, which then exits with status 2 before any test runs (under nextest, its test list
//! fails with the line). A limit key holding `,`, `=` or `/` is refused, in the config, the
//! attribute and `probtest::limit`.
//!
//! ## Setup and teardown
//!
//! [`macro@setup`] and [`macro@teardown`] register a function for the module it is written in
//! and its submodules: setup runs once before the module's first bench run, teardown once after
//! its last (at the latest at process exit). A failing setup makes every run of the module an
//! error carrying the setup's message.
//!
//! ## Sessions
//!
//! The unit of the report is the session: one `cargo nextest run` (every process shares
//! `NEXTEST_RUN_ID`), or one `cargo test` with all its test binaries (they share the cargo
//! process that started them), or whatever shares `PROB_SESSION`. Every run is written to the
//! session store under `target/probtest/sessions/` as it starts and ends, so a run whose process
//! died is an error ("the test process died before the run finished"), never missing. nextest
//! retries are kept in the records with their `attempt` and left out of the counts. Under
//! `cargo test` each test binary prints its own section at exit; a nextest process holds one run
//! and prints none: `cargo probtest run --nextest` prints the session's section.
//!
//! ## The report
//!
//! With `PROB_JSON` set, the session's [`Report`] is kept as JSON (parent directories are
//! created), covering every run of every process and complete when the runner exits: each run's
//! start and end patch it in place, so the cost of a run does not grow with the session. It has
//! `schema`, `created`, `runs`, `exit_status`, `totals`, `rows[]` with the raw pass/fail/error counts of each case, and `records[]` with every run's outcome,
//! message, location, time, cost and usage.
//!
//! A failed or errored run's message is kept whole, every line of it (an `assert_eq!`'s `left:`
//! and `right:` lines are the wrong answer), up to 4 KiB and 40 lines, after which
//! `… (N more bytes)` says how much was left out. Secrets are redacted to `[redacted]` before it
//! is stored: the values (8 characters or more) of environment variables whose names contain
//! `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL` or `AUTH`; the value of an
//! `Authorization:`, `Proxy-Authorization:`, `api-key:` or `x-api-key:` line; what follows
//! `Bearer ` or `Basic `; and keys shaped like `sk-…`, `ghp_…`, `xoxb-…` or `AKIA…`. The
//! summary, HTML, Markdown and JUnit show ids, messages and model names with control characters
//! and bidirectional overrides escaped (`\u{1b}`).

extern crate self as probtest;

// The layers, bottom to top; each imports only from the layers below it (see ARCHITECTURE.md,
// and `tests/layers.rs`, which fails on an upward import).
#[cfg(any(feature = "html", feature = "_cli"))]
pub mod export;
mod format;
mod harness;
mod model;
mod render;
mod store;
mod types;

pub use harness::accounting::{
    current_run, record_cost, record_usage, try_record_cost, try_record_usage, RecordError,
    RunHandle,
};
pub use harness::cache::cached;
pub use harness::limits::{limit, try_limit, LimitGuard};
pub use model::analysis;
pub use model::stops::{Stop, Stopping};
/// Each case's pass fraction over the sessions the store keeps, and the latest change
/// (`cargo probtest report --history`).
pub mod trend {
    pub use crate::model::trend::{CaseHistory, Change, History};
    pub use crate::render::trend::history as render;
}
/// The plan of a suite that has not run (`cargo probtest plan`): per case, what its gate needs,
/// the chance the planned runs pass it and catch a rare failure, and their cost.
pub mod planning {
    pub use crate::model::planning::{Plan, PlanRow, PlanSettings};
    pub use crate::render::planning::plan as render;
}
pub use model::{
    Aggregate, BinaryNotRun, CaseInfo, CompareSpec, Part, Record, Report, Row, Totals,
    SCHEMA_VERSION,
};
pub use render::{color_enabled, summary, Options as RenderOptions};
pub use types::key::CaseKey;
pub use types::ordered_map::OrderedMap;
pub use types::stats;
pub use types::status::{status_text, Outcome, Status};
pub use types::usage::{TokenUsage, UsageTotals};

/// Turns one function into per-case, per-run test items; see the [crate documentation](crate).
pub use probtest_macros::probability;

/// Runs a test under the perturbation of a repro blob that `cargo probtest doctor` printed, on
/// every ordinary `cargo test` and `cargo nextest run`, until the flake is fixed.
///
/// Paste the attribute line the doctor prints above the test (a `#[test]`, `#[tokio::test]`, ...
/// or a `#[probability]` function, whose item the blob names). The test binary then runs that
/// test once more in a process of its own, under the blob's pinned entropy, clock or blocked
/// network (through the preload library this crate builds from its C source with the default
/// `preload` feature, on Linux with glibc), or its scrubbed environment or fresh `HOME`. The test
/// fails either way: with the flake's own failure while it reproduces, and with
/// `DID NOT REPRODUCE` once it no longer does, so that a stale attribute is noticed and removed.
///
/// The blob is checked when the test compiles: its format and version, an axis an attribute can
/// carry (entropy, time, network, env, fs; the order, parallel and scheduling axes print a
/// `cargo probtest repro` command instead), and the test it names. Inside the doctor's own runs
/// the attribute is inert.
///
/// ```ignore
/// #[probtest::repro("pd1:eyJheGlzIjoiZW50cm9weSIs...")]
/// #[test]
/// fn shuffled_deck_starts_with_an_ace() { /* ... */ }
/// ```
pub use probtest_macros::repro;

/// Registers a function to run once before the first bench run of its module (and submodules).
///
/// The function takes no arguments and returns `()` or `Result<(), E: Debug>`. When it panics or
/// returns `Err`, every run of the module is an error with its message.
///
/// ```no_run
/// #[probtest::setup]
/// fn start_model_server() {
///     // spawn a server, seed a database, ...
/// }
/// ```
pub use probtest_macros::setup;

/// Registers a function to run once after the last bench run of its module (and submodules), at
/// the latest at process exit.
///
/// ```no_run
/// #[probtest::teardown]
/// fn stop_model_server() {
///     // stop what setup started
/// }
/// ```
pub use probtest_macros::teardown;

/// What generated code calls. Not a public API: it changes without notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::harness::accounting::fields;
    pub use crate::harness::registry::{register_hook, Bench, Case, Config, Hook, Layout, BENCHES};
    pub use crate::harness::runner::{run, run_async, run_async_item, BenchReturn};
    pub use crate::harness::verdict::{margin_verdict, verdict};
    // The gate's types by a path of their own, so that generated code does not depend on where
    // the public `stats` module puts them.
    pub use crate::types::stats::{GateSpec, Method, Prior, Rule};
    pub use ctor;
    pub use linkme;

    /// `#[probtest::repro]`: the test run again under the blob's perturbation.
    pub mod repro {
        pub use crate::harness::repro::run;
    }

    /// The rows of `cases(...)`, read into the arguments' types when a run starts.
    pub mod dataset {
        pub use crate::harness::dataset::{arg, ran, RowError, Source};
    }

    /// Cases and records shaped like a real session's, for benchmarks of report building and
    /// rendering.
    pub fn synthetic_records(
        cases: usize,
        runs: u32,
    ) -> (Vec<crate::CaseInfo>, Vec<crate::Record>) {
        crate::model::synthetic_records(cases, runs)
    }

    /// Writes `report` as the whole JSON file at `path`, as a test process writes it at exit,
    /// for benchmarks of report writing.
    pub fn write_report(report: &crate::Report, path: &std::path::Path) -> std::io::Result<()> {
        crate::store::write_report(report, path)
    }

    /// probtest's versions of std's assertion macros.
    pub mod assertions {
        pub use crate::harness::assertions::*;
    }
}

/// What `cargo-probtest` needs of the runtime besides the public API: the reporter, to add its
/// own sinks (Markdown, JUnit XML, the job summary), and the text pieces its files share with
/// the terminal. Behind the internal `_cli` feature, which only `cargo-probtest` enables, so
/// that a user's test build compiles none of it. Not a public API: it changes without notice.
#[cfg(feature = "_cli")]
#[doc(hidden)]
pub mod __cli {
    /// The preload library the runtime builds and embeds (with the `preload` feature).
    pub mod preload {
        pub use crate::harness::repro::preload::{library_in, LIBRARY};
    }
    pub use crate::export::pieces::{
        doctor_command, failure_groups, fraction, gates_text, interval_text, needs_attention,
        not_run_note, not_run_text, overall_text, records_by_row, run_spans, status_with_not_run,
        verdict_word, FailureGroup,
    };
    pub use crate::format::doctor_split::{
        doctor_file_of, tags as doctor_tags, DoctorAnswer, DoctorSplit,
    };
    pub use crate::harness::reporter::{
        Html, Json, OutputFile, Reporter, SessionSource, Sink, SinkError, Summary,
    };
    pub use crate::render::latency_block::seconds as latency_seconds;
    pub use crate::render::text::{bar_text, bound_percent, model_name, money, shown, shown_block};
    pub use crate::render::waits::replayed_text;
    pub use crate::types::count::thousands;

    /// The session store as `cargo probtest` reads it: sessions listed, loaded and reconciled
    /// with what nextest ran, and files written whole.
    pub mod store {
        pub use crate::store::baseline_file::{
            baseline_path, baselines_dir, is_baseline_name, saved_baselines, unknown_baseline,
        };
        pub use crate::store::{
            sanitize_key, sessions_dir, write_file, Executed, Session, SessionData,
        };
    }
}
