//! Settings read at run time: environment variable, then the crate's config (read at compile
//! time and carried in the generated code), then the default. Settings that shape the generated
//! items (`PROB_RUNS`, `PROB_TRANSPOSE`) are resolved by the macro instead.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::registry::Config;

/// Settings of this process.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    /// Where to write the JSON report.
    pub(crate) json: Option<ReportPath>,
    /// Minimum time between run starts in this process.
    pub(crate) delay: Duration,
    /// The session this process's runs belong to.
    pub(crate) session: String,
    /// Whether this process runs a single test (nextest's process-per-test mode).
    pub(crate) per_test: bool,
    /// nextest's attempt number: 1, or more for a retry.
    pub(crate) attempt: u32,
    /// Whether this process prints its own section at exit (`PROB_SUMMARY`, default on).
    pub(crate) summary: bool,
    /// A bad value, as the one-line message every run of the process errors with.
    pub(crate) problem: Option<String>,
}

/// A report path as the user gave it and as it resolves.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReportPath {
    pub(crate) display: String,
    pub(crate) resolved: PathBuf,
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// The settings, resolved at the first run.
pub(crate) fn get(config: &Config) -> &'static Settings {
    SETTINGS.get_or_init(|| resolve(config, |name| std::env::var(name).ok()))
}

/// The settings, if any run resolved them.
pub(crate) fn peek() -> Option<&'static Settings> {
    SETTINGS.get()
}

pub(crate) fn resolve(config: &Config, env: impl Fn(&str) -> Option<String>) -> Settings {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let json = match set("PROB_JSON") {
        // Relative to the workspace root, so that every package's test processes agree on the
        // file; cargo test and nextest start each test process in its own package's directory.
        Some(path) => Some(ReportPath {
            resolved: match config.root {
                Some(root) => Path::new(root).join(&path),
                None => PathBuf::from(&path),
            },
            display: path,
        }),
        None => config.json.map(|path| ReportPath {
            display: path.to_string(),
            resolved: PathBuf::from(path),
        }),
    };
    let mut problem = None;
    let delay = match set("PROB_DELAY") {
        Some(text) => parse_delay(&text).unwrap_or_else(|| {
            problem = Some(format!(
                "PROB_DELAY: expected a number of seconds >= 0, got `{text}`"
            ));
            Duration::ZERO
        }),
        None => config.delay.map_or(Duration::ZERO, Duration::from_secs_f64),
    };
    let summary = match set("PROB_SUMMARY") {
        Some(text) => parse_switch(&text).unwrap_or_else(|| {
            problem.get_or_insert(format!(
                "PROB_SUMMARY: expected 1/0, true/false, yes/no or on/off, got `{text}`"
            ));
            true
        }),
        None => true,
    };
    Settings {
        json,
        delay,
        summary,
        session: crate::store::session_key(&env),
        per_test: set("NEXTEST_EXECUTION_MODE").is_some_and(|mode| mode == "process-per-test"),
        // nextest sets it; anything unreadable counts as a first attempt.
        attempt: set("NEXTEST_ATTEMPT")
            .and_then(|text| text.trim().parse().ok())
            .filter(|&attempt| attempt >= 1)
            .unwrap_or(1),
        problem,
    }
}

fn parse_switch(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn parse_delay(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().parse().ok()?;
    Duration::try_from_secs_f64(seconds).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: Option<&'static str>, delay: Option<f64>) -> Config {
        Config {
            json,
            delay,
            root: Some("/ws"),
        }
    }

    #[test]
    fn environment_wins_over_config() {
        let env = |name: &str| match name {
            "PROB_JSON" => Some("out/report.json".to_string()),
            "PROB_DELAY" => Some("0.25".to_string()),
            _ => None,
        };
        let settings = resolve(&config(Some("/ws/cfg.json"), Some(2.0)), env);
        let json = settings.json.expect("set");
        assert_eq!(json.display, "out/report.json");
        assert_eq!(json.resolved, PathBuf::from("/ws/out/report.json"));
        assert_eq!(settings.delay, Duration::from_millis(250));

        let settings = resolve(&config(Some("/ws/cfg.json"), Some(2.0)), |_| None);
        assert_eq!(
            settings.json.expect("set").resolved,
            PathBuf::from("/ws/cfg.json")
        );
        assert_eq!(settings.delay, Duration::from_secs(2));

        let settings = resolve(&config(None, None), |_| None);
        assert_eq!((settings.json, settings.delay), (None, Duration::ZERO));
        assert_eq!(
            (settings.per_test, settings.attempt, settings.problem),
            (false, 1, None)
        );
    }

    #[test]
    fn the_summary_can_be_switched_off() {
        let off = resolve(&config(None, None), |name| {
            (name == "PROB_SUMMARY").then(|| "0".to_string())
        });
        assert!(!off.summary);
        assert!(resolve(&config(None, None), |_| None).summary);
        let bad = resolve(&config(None, None), |name| {
            (name == "PROB_SUMMARY").then(|| "loud".to_string())
        });
        assert_eq!(
            bad.problem.as_deref(),
            Some("PROB_SUMMARY: expected 1/0, true/false, yes/no or on/off, got `loud`")
        );
    }

    #[test]
    fn nextest_tells_the_session_mode_and_attempt() {
        let env = |name: &str| match name {
            "NEXTEST_RUN_ID" => Some("1234".to_string()),
            "NEXTEST_EXECUTION_MODE" => Some("process-per-test".to_string()),
            "NEXTEST_ATTEMPT" => Some("3".to_string()),
            _ => None,
        };
        let settings = resolve(&config(None, None), env);
        assert_eq!(settings.session, "nextest-1234");
        assert!(settings.per_test);
        assert_eq!(settings.attempt, 3);
    }

    #[test]
    fn a_bad_delay_names_the_variable_and_value() {
        for bad in ["-1", "soon", "NaN", "inf"] {
            let env = |name: &str| (name == "PROB_DELAY").then(|| bad.to_string());
            let settings = resolve(&config(None, None), env);
            assert_eq!(
                settings.problem,
                Some(format!(
                    "PROB_DELAY: expected a number of seconds >= 0, got `{bad}`"
                ))
            );
        }
    }
}
