//! The rows of the table: one constant per setting, with its variable, config key, phase, the
//! text of its row in the documentation and its parser; [`SETTINGS`] lists them in the order
//! the documentation does.

use std::time::Duration;

use crate::choices::*;
use crate::parse::*;
use crate::{Phase, Row, Setting};

/// `PROB_RUNS`.
pub const RUNS: Setting<u32> = Setting::new(
    "PROB_RUNS",
    Some("runs"),
    Phase::Compile,
    "runs per case (the variable overrides the attribute; the config is the default); below 1 counts as 1",
    parse_runs,
);
/// `PROB_JSON`; resolved relative to the workspace root.
pub const JSON: Setting<String> = Setting::new(
    "PROB_JSON",
    Some("json"),
    Phase::Run,
    "write the JSON report there",
    verbatim,
);
/// `PROB_HTML`; resolved relative to the workspace root, as `PROB_JSON` is.
pub const HTML: Setting<String> = Setting::new(
    "PROB_HTML",
    None,
    Phase::Run,
    "write the HTML report there when a test binary exits (and when `cargo probtest run` ends), relative as `PROB_JSON` (with the default `html` feature)",
    verbatim,
);
/// `PROB_DELAY`, in seconds.
pub const DELAY: Setting<f64> = Setting::new(
    "PROB_DELAY",
    Some("delay"),
    Phase::Run,
    "seconds between run starts within a process, never before the first",
    parse_seconds,
);
/// `PROB_TRANSPOSE`.
pub const TRANSPOSE: Setting<bool> = Setting::new(
    "PROB_TRANSPOSE",
    Some("transpose"),
    Phase::Compile,
    "run-major order: run 1 of every case of a module, then run 2, ...",
    parse_switch,
);
/// `PROB_GATE_ITEMS`.
pub const GATE_ITEMS: Setting<bool> = Setting::new(
    "PROB_GATE_ITEMS",
    Some("gate_items"),
    Phase::Compile,
    "`1` (default) or `0`: a test item per gated case, `<case>::verdict`, that passes or fails with its gate's verdict, so that libtest's failure list, nextest's JUnit and rerun-failed tools name a failed gate",
    parse_switch,
);
/// `PROB_METHOD`.
pub const METHOD: Setting<Method> = Setting::new(
    "PROB_METHOD",
    Some("method"),
    Phase::Run,
    "`exact` (default, Clopper-Pearson), `wilson` or `bayes`: how intervals are computed",
    parse_method,
);
/// `PROB_CONFIDENCE`.
pub const CONFIDENCE: Setting<f64> = Setting::new(
    "PROB_CONFIDENCE",
    Some("confidence"),
    Phase::Run,
    "the intervals' confidence level (0.95)",
    parse_level,
);
/// `PROB_PRIOR`: `a` and `b` of Beta(a, b).
pub const PRIOR: Setting<(f64, f64)> = Setting::new(
    "PROB_PRIOR",
    Some("prior"),
    Phase::Run,
    "`a, b`: the Beta(a, b) prior of the `bayes` method (`1, 1`)",
    parse_prior,
);
/// `PROB_INTERVALS`.
pub const INTERVALS: Setting<bool> = Setting::new(
    "PROB_INTERVALS",
    Some("intervals"),
    Phase::Run,
    "`0` hides the interval column",
    parse_switch,
);
/// `PROB_MIN_RATE`.
pub const MIN_RATE: Setting<f64> = Setting::new(
    "PROB_MIN_RATE",
    Some("min_rate"),
    Phase::Run,
    "a gate for every case without its own",
    parse_rate,
);
/// `PROB_UNDECIDED`: `fail` or `pass`.
pub const UNDECIDED: Setting<Undecided> = Setting::new(
    "PROB_UNDECIDED",
    Some("undecided"),
    Phase::Run,
    "`pass` lets an UNDECIDED gate pass the session (`fail` by default)",
    parse_undecided,
);
/// `PROB_ERRORS`: `count` or `exclude`.
pub const ERRORS: Setting<Errors> = Setting::new(
    "PROB_ERRORS",
    Some("errors"),
    Phase::Run,
    "`exclude` takes errored runs out of gates' samples (`count` by default)",
    parse_errors,
);
/// `PROB_METRIC`.
pub const METRIC: Setting<Vec<PassK>> = Setting::new(
    "PROB_METRIC",
    Some("metrics"),
    Phase::Run,
    "`pass^3,pass@5`: unbiased pass^k and pass@k",
    parse_metrics,
);
/// `PROB_EXPLAIN`.
pub const EXPLAIN: Setting<bool> = Setting::new(
    "PROB_EXPLAIN",
    Some("explain"),
    Phase::Run,
    "`1` explains every verdict in plain language",
    parse_switch,
);
/// `PROB_LATENCY`.
pub const LATENCY: Setting<bool> = Setting::new(
    "PROB_LATENCY",
    Some("latency"),
    Phase::Run,
    "`1` shows each case's latency quantile with its order-statistic interval",
    parse_switch,
);
/// `PROB_LATENCY_QUANTILE`.
pub const LATENCY_QUANTILE: Setting<f64> = Setting::new(
    "PROB_LATENCY_QUANTILE",
    Some("latency_quantile"),
    Phase::Run,
    "the latency quantile of cases whose attribute sets none (0.95)",
    parse_quantile,
);
/// `PROB_BOOTSTRAP`.
pub const BOOTSTRAP: Setting<u64> = Setting::new(
    "PROB_BOOTSTRAP",
    Some("bootstrap"),
    Phase::Run,
    "bootstrap resamples of function-level intervals and comparisons (5000)",
    parse_resamples,
);
/// `PROB_SEED`.
pub const SEED: Setting<u64> = Setting::new(
    "PROB_SEED",
    Some("seed"),
    Phase::Run,
    "the seed of every resampling, so that a report is reproducible (0)",
    parse_seed,
);
/// `PROB_MIN_INPUTS`.
pub const MIN_INPUTS: Setting<u64> = Setting::new(
    "PROB_MIN_INPUTS",
    Some("min_inputs"),
    Phase::Run,
    "the fewest cases a function-level interval needs (10)",
    parse_min_inputs,
);
/// `PROB_COMPARE`; blank compares nothing.
pub const COMPARE: Setting<String> = Setting::new(
    "PROB_COMPARE",
    Some("compare"),
    Phase::Run,
    "the argument whose values are compared, each against the first",
    trimmed,
);
/// `PROB_ADJUST`.
pub const ADJUST: Setting<Adjustment> = Setting::new(
    "PROB_ADJUST",
    Some("adjust"),
    Phase::Run,
    "`none`, `holm`, `bonferroni` or `bh`: the comparisons' p-value adjustment",
    parse_adjustment,
);
/// `PROB_BASELINE`; a relative path is relative to the workspace root, and a name with no such
/// file is a saved baseline's.
pub const BASELINE: Setting<String> = Setting::new(
    "PROB_BASELINE",
    None,
    Phase::Run,
    "an earlier report (probtest's or pytest-probability's) to compare every function with, relative as `PROB_JSON`; or the name of one `cargo probtest baseline save` kept",
    trimmed,
);
/// `PROB_MARGIN`; needs `PROB_BASELINE`.
pub const MARGIN: Setting<f64> = Setting::new(
    "PROB_MARGIN",
    None,
    Phase::Run,
    "with `PROB_BASELINE`: fail a function whose pass rate may have dropped by more than this",
    parse_margin,
);
/// `PROB_STOP`.
pub const STOP: Setting<Stop> = Setting::new(
    "PROB_STOP",
    Some("stop"),
    Phase::Run,
    "`off` (default), `curtail` (skip a gated case's remaining runs once its verdict can no longer change) or `sequential` (judge rate gates on an anytime-valid confidence sequence and stop as soon as it decides)",
    parse_stop,
);
/// `PROB_DEFER_VERDICTS`.
pub const DEFER_VERDICTS: Setting<bool> = Setting::new(
    "PROB_DEFER_VERDICTS",
    None,
    Phase::Run,
    "`1`: gated cases' runs never fail their items; whoever reads the session judges (`cargo probtest run` sets it)",
    parse_switch,
);
/// `PROB_SESSION`; the store checks that it makes a usable key.
pub const SESSION: Setting<String> = Setting::new(
    "PROB_SESSION",
    None,
    Phase::Run,
    "the session key, for grouping runs your own way",
    verbatim,
);
/// `PROB_STORE`.
pub const STORE: Setting<String> = Setting::new(
    "PROB_STORE",
    None,
    Phase::Run,
    "the directory that holds the sessions instead of `<target>/probtest/sessions` (`cargo probtest doctor` gives its runs one of their own)",
    verbatim,
);
/// `PROB_SUMMARY`.
pub const SUMMARY: Setting<bool> = Setting::new(
    "PROB_SUMMARY",
    None,
    Phase::Run,
    "`0` turns off the section each test process prints at exit",
    parse_switch,
);
/// `PROB_ITEMS_OUT`.
pub const ITEMS_OUT: Setting<String> = Setting::new(
    "PROB_ITEMS_OUT",
    None,
    Phase::Run,
    "a file: at start-up, a test binary writes its generated items there as JSON, each with its row and run (`cargo probtest doctor` sets it to diagnose a row)",
    verbatim,
);
/// `PROB_RECONCILE`: only `1` turns it on, as `cargo probtest run --nextest` sets it.
pub const RECONCILE: Setting<bool> = Setting::new(
    "PROB_RECONCILE",
    None,
    Phase::Run,
    "`1`: when nextest lists a test binary, its generated items are written to the session, so that a test process that dies before start-up is still counted (`cargo probtest run --nextest` sets it)",
    |text| Ok(text == "1"),
);
/// `PROB_TIMEOUT`.
pub const TIMEOUT: Setting<Duration> = Setting::new(
    "PROB_TIMEOUT",
    Some("timeout"),
    Phase::Run,
    "how long a run may take (`30s`, `1m30s`); the attribute's `timeout` is overridden by the variable and overrides the config. A run past it is an error",
    parse_duration,
);
/// `PROB_LIMIT_<KEY>`, named for a key by [`limit_variable`](crate::limit_variable).
pub const LIMIT: Setting<u32> = Setting::new(
    "PROB_LIMIT_<KEY>",
    Some("limits"),
    Phase::Run,
    "how many guards of `probtest::limit(\"<key>\")` may be held at once across the session (`[package.metadata.probtest.limits] openai = { concurrency = 4, per_minute = 60 }`)",
    parse_limit,
);
/// `PROB_LIMIT_<KEY>_PER_MINUTE`.
pub const LIMIT_PER_MINUTE: Setting<u32> = Setting::new(
    "PROB_LIMIT_<KEY>_PER_MINUTE",
    None,
    Phase::Run,
    "how many guards of `probtest::limit(\"<key>\")` may be taken a minute (the config's `per_minute` in `limits`)",
    parse_limit,
);
/// `PROB_CACHE`.
pub const CACHE: Setting<Cache> = Setting::new(
    "PROB_CACHE",
    Some("cache"),
    Phase::Run,
    "`record`, `replay` or `off` (default): what `probtest::cached` does",
    parse_cache,
);
/// `PROB_CACHE_DIR`.
pub const CACHE_DIR: Setting<String> = Setting::new(
    "PROB_CACHE_DIR",
    None,
    Phase::Run,
    "the cassette's directory instead of `<target>/probtest/cache` (`cargo probtest doctor` records and replays a row's answers in one of its own)",
    verbatim,
);
/// `PROB_BACKTRACE`.
pub const BACKTRACE: Setting<bool> = Setting::new(
    "PROB_BACKTRACE",
    Some("backtrace"),
    Phase::Run,
    "`1`: a stored panic keeps the user's own frames (probtest's, std's, tokio's and libtest's left out)",
    parse_switch,
);

/// Every setting, in the documentation's order.
pub const SETTINGS: &[&dyn Row] = &[
    &RUNS,
    &JSON,
    &HTML,
    &DELAY,
    &TRANSPOSE,
    &GATE_ITEMS,
    &METHOD,
    &CONFIDENCE,
    &PRIOR,
    &INTERVALS,
    &MIN_RATE,
    &UNDECIDED,
    &ERRORS,
    &METRIC,
    &EXPLAIN,
    &LATENCY,
    &LATENCY_QUANTILE,
    &BOOTSTRAP,
    &SEED,
    &MIN_INPUTS,
    &COMPARE,
    &ADJUST,
    &BASELINE,
    &MARGIN,
    &STOP,
    &DEFER_VERDICTS,
    &SESSION,
    &STORE,
    &SUMMARY,
    &ITEMS_OUT,
    &RECONCILE,
    &TIMEOUT,
    &LIMIT,
    &LIMIT_PER_MINUTE,
    &CACHE,
    &CACHE_DIR,
    &BACKTRACE,
];
