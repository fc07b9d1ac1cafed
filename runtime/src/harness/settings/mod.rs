//! Settings read at run time: environment variable, then the crate's config (read at compile
//! time and carried in the generated code), then the default. Each is read through its row of
//! the table the attribute uses too (`probtest-settings`), which names its variable and config
//! key and parses it; settings
//! that shape the generated items (`PROB_RUNS`, `PROB_TRANSPOSE`) are resolved by the
//! attribute instead. This module holds the resolved [`Settings`] of the process; `delay` and
//! `statistics` parse and check their groups of values.
//!
//! Layer: harness.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use probtest_settings as table;

use crate::harness::registry::Config;
use crate::harness::reporter::OutputFile;
use crate::types::stats::StatsConfig;

mod delay;
mod statistics;

use delay::{resolve_delay, Delay};
use statistics::resolve_stats;

/// Settings of this process.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    /// Where to write the JSON report.
    pub(crate) json: Option<ReportPath>,
    /// Where to write the HTML report at exit (`PROB_HTML`).
    pub(crate) html: Option<ReportPath>,
    /// Minimum time between run starts in this process.
    pub(crate) delay: Duration,
    /// The session this process's runs belong to.
    pub(crate) session_key: String,
    /// Whether this process runs a single test (nextest's process-per-test mode).
    pub(crate) per_test: bool,
    /// nextest's attempt number: 1, or more for a retry.
    pub(crate) attempt: u32,
    /// Whether this process prints its own section at exit (`PROB_SUMMARY`, default on).
    pub(crate) summary: bool,
    /// Intervals, gates, metrics and explanations.
    pub(crate) stats: StatsConfig,
    /// Whether gated cases' failing runs leave their verdict to whoever reads the session
    /// (`PROB_DEFER_VERDICTS`, set by `cargo probtest run`) instead of failing their items.
    pub(crate) defer_verdicts: bool,
    /// A bad value, as the one-line message every run of the process errors with.
    pub(crate) problem: Option<String>,
    /// Values that work but probably were not meant, one line each, printed once per process
    /// before its first run.
    pub(crate) warnings: Vec<String>,
}

/// A report path as the user gave it and as it resolves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReportPath {
    pub(crate) display: String,
    pub(crate) resolved: PathBuf,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// The settings, resolved at the first run, their warnings printed then.
pub(crate) fn get(config: &Config) -> &'static Settings {
    // `get` first: every run asks, and `get_or_init` is several calls deeper in a test binary
    // built without optimizations.
    if let Some(settings) = SETTINGS.get() {
        return settings;
    }
    SETTINGS.get_or_init(|| {
        let settings = resolve(config, |name| std::env::var(name).ok());
        // Past libtest's capture, which takes only what the print macros write: a suite
        // that waits for years must say so while it waits, whatever the test's outcome.
        let mut stderr = std::io::stderr().lock();
        for warning in &settings.warnings {
            let _ = writeln!(stderr, "probtest: warning: {warning}");
        }
        settings
    })
}

/// The settings, if any run resolved them.
pub(crate) fn peek() -> Option<&'static Settings> {
    SETTINGS.get()
}

pub(crate) fn resolve(config: &Config, env: impl Fn(&str) -> Option<String>) -> Settings {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let mut problem = None;
    // A path as given, blank as unset; it cannot be refused.
    let path = |setting: &table::Setting<String>| setting.from_env(&set).ok().flatten();
    let json = match path(&table::JSON) {
        // Relative to the workspace root, so that every package's test processes agree on the
        // file; cargo test and nextest start each test process in its own package's directory.
        Some(path) => Some(ReportPath {
            resolved: OutputFile::resolve(&path, config.root.map(Path::new)),
            display: path,
        }),
        None => config.json.map(|path| ReportPath {
            display: path.to_string(),
            resolved: PathBuf::from(path),
        }),
    };
    // Relative to the workspace root too, as the JSON report is.
    let html = path(&table::HTML).map(|path| ReportPath {
        resolved: OutputFile::resolve(&path, config.root.map(Path::new)),
        display: path,
    });
    let mut warnings = Vec::new();
    let delay = resolve_delay(config, &set).unwrap_or_else(|why| {
        problem = Some(why);
        None
    });
    let delay = match delay {
        Some(Delay { duration, warning }) => {
            warnings.extend(warning);
            duration
        }
        None => Duration::ZERO,
    };
    let mut switch = |setting: &table::Setting<bool>, default: bool| {
        setting
            .from_env(&set)
            .unwrap_or_else(|why| {
                problem.get_or_insert(why);
                None
            })
            .unwrap_or(default)
    };
    let summary = switch(&table::SUMMARY, true);
    let defer_verdicts = switch(&table::DEFER_VERDICTS, false);
    let stats = resolve_stats(config, &set).unwrap_or_else(|why| {
        problem.get_or_insert(why);
        StatsConfig::default()
    });
    let session_key = crate::store::session_key(&env).unwrap_or_else(|why| {
        problem.get_or_insert(why);
        // The runs, errors now, still go to a session: the one the process would have
        // without the key.
        let without_key = |name: &str| {
            (name != table::SESSION.variable)
                .then(|| env(name))
                .flatten()
        };
        crate::store::session_key(&without_key)
            .unwrap_or_else(|_| format!("process-{}", std::process::id()))
    });
    if problem.is_some() {
        // Every run errors at once, without waiting: a warning about the wait would mislead.
        warnings.clear();
    }
    Settings {
        json,
        html,
        delay,
        summary,
        stats,
        defer_verdicts,
        session_key,
        per_test: set("NEXTEST_EXECUTION_MODE").is_some_and(|mode| mode == "process-per-test"),
        // nextest sets it; anything unreadable counts as a first attempt.
        attempt: set("NEXTEST_ATTEMPT")
            .and_then(|text| text.trim().parse().ok())
            .filter(|&attempt| attempt >= 1)
            .unwrap_or(1),
        problem,
        warnings,
    }
}

#[cfg(test)]
mod tests;
