//! Settings read at run time: environment variable, then the crate's config (read at compile
//! time and carried in the generated code), then the default. The variables, config keys and
//! text parsers come from the table the attribute uses too (`probtest-settings`); settings
//! that shape the generated items (`PROB_RUNS`, `PROB_TRANSPOSE`) are resolved by the
//! attribute instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use probtest_settings::{by_variable, parse_choice, parse_fraction, parse_seconds, parse_switch};

use crate::harness::registry::Config;
use crate::types::stats::paired::Adjustment;
use crate::types::stats::{self, ErrorPolicy, Metric, Prior, StatsConfig, Undecided};

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
    // Relative to the workspace root too, as the JSON report is.
    let html = set("PROB_HTML").map(|path| ReportPath {
        resolved: match config.root {
            Some(root) => Path::new(root).join(&path),
            None => PathBuf::from(&path),
        },
        display: path,
    });
    let mut problem = None;
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
    let mut switch = |name: &str, default: bool| match set(name) {
        Some(text) => parse_switch(&text).unwrap_or_else(|why| {
            problem.get_or_insert(format!("{name}: {why}"));
            default
        }),
        None => default,
    };
    let summary = switch("PROB_SUMMARY", true);
    let defer_verdicts = switch("PROB_DEFER_VERDICTS", false);
    let stats = resolve_stats(config, &set).unwrap_or_else(|why| {
        problem.get_or_insert(why);
        StatsConfig::default()
    });
    let session_key = crate::store::session_key(&env).unwrap_or_else(|why| {
        problem.get_or_insert(why);
        // The runs, errors now, still go to a session: the one the process would have
        // without the key.
        let without_key = |name: &str| (name != "PROB_SESSION").then(|| env(name)).flatten();
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

/// The longest delay accepted, in seconds: some 31.7 million years. Far below what a
/// `Duration` added to an `Instant` can hold, which a longer delay would overflow.
const LONGEST_DELAY: f64 = 1e15;

/// A delay longer than this many seconds (an hour) gets a warning: a suite that silently waits
/// that long looks hung.
const LONG_DELAY: f64 = 3600.0;

/// The delay between run starts, and a warning when it is long.
struct Delay {
    duration: Duration,
    warning: Option<String>,
}

/// `PROB_DELAY`, else the config's `delay`; `None` when neither is set. A value that is not a
/// number of seconds from 0 to [`LONGEST_DELAY`] is an error naming where it came from.
fn resolve_delay(
    config: &Config,
    set: &impl Fn(&str) -> Option<String>,
) -> Result<Option<Delay>, String> {
    // Where the value came from (for errors), the value as given, and both (for the warning).
    let (seconds, source, given, shown) = match set("PROB_DELAY") {
        Some(text) => {
            let seconds = parse_seconds(&text).map_err(|why| format!("PROB_DELAY: {why}"))?;
            let given = text.trim().to_string();
            let shown = format!("PROB_DELAY={given}");
            (seconds, "PROB_DELAY", given, shown)
        }
        None => match config.delay {
            Some(seconds) => {
                let shown = format!("config `delay` = {seconds}");
                (seconds, "config `delay`", seconds.to_string(), shown)
            }
            None => return Ok(None),
        },
    };
    let duration = Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|_| seconds <= LONGEST_DELAY)
        .ok_or_else(|| {
            format!(
                "{source}: expected at most {LONGEST_DELAY:e} seconds ({}), got `{given}`",
                human_duration(LONGEST_DELAY)
            )
        })?;
    let warning = (seconds > LONG_DELAY).then(|| delay_warning(&shown, seconds));
    Ok(Some(Delay { duration, warning }))
}

/// The warning for a long delay: `PROB_DELAY=1e9 spaces runs 1000000000 s (31.7 years) apart`.
fn delay_warning(shown: &str, seconds: f64) -> String {
    format!(
        "{shown} spaces runs {seconds} s ({}) apart",
        human_duration(seconds)
    )
}

/// Seconds from an hour on, in hours, days or years (of 365.25 days), to one decimal.
fn human_duration(seconds: f64) -> String {
    const HOUR: f64 = 3600.0;
    const DAY: f64 = 24.0 * HOUR;
    const YEAR: f64 = 365.25 * DAY;
    if seconds >= YEAR {
        format!("{:.1} years", seconds / YEAR)
    } else if seconds >= DAY {
        format!("{:.1} days", seconds / DAY)
    } else {
        format!("{:.1} hours", seconds / HOUR)
    }
}

/// The statistics settings: each from its environment variable, else the config (under the
/// key the table gives it), else the default. A bad value is an error naming where it came
/// from.
fn resolve_stats(
    config: &Config,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<StatsConfig, String> {
    let lookup = |variable: &str| -> Option<(String, String)> {
        if let Some(value) = env(variable) {
            return Some((value, variable.to_string()));
        }
        let key = by_variable(variable).key?;
        config
            .entries
            .iter()
            .find(|(name, _)| *name == key)
            .map(|(_, value)| (value.to_string(), format!("config `{key}`")))
    };
    let mut stats = StatsConfig::default();
    if let Some((value, source)) = lookup("PROB_METHOD") {
        stats.interval.method = value.parse().map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_CONFIDENCE") {
        stats.interval.level =
            stats::parse_level(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_PRIOR") {
        let numbers: Vec<f64> = value
            .split(',')
            .map(|part| part.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .unwrap_or_default();
        match numbers[..] {
            [a, b] if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() => {
                stats.interval.prior = Prior { a, b };
            }
            _ => {
                return Err(format!(
                    "{source}: expected two positive numbers `a, b` for a Beta(a, b) prior, got `{value}`"
                ))
            }
        }
    }
    if let Some((value, source)) = lookup("PROB_INTERVALS") {
        stats.intervals = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MIN_RATE") {
        stats.min_rate =
            Some(parse_fraction("a rate", &value).map_err(|why| format!("{source}: {why}"))?);
    }
    if let Some((value, source)) = lookup("PROB_UNDECIDED") {
        stats.undecided = match parse_choice(&value, &["fail", "pass"]) {
            Ok("pass") => Undecided::Pass,
            Ok(_) => Undecided::Fail,
            Err(why) => return Err(format!("{source}: {why}")),
        };
    }
    if let Some((value, source)) = lookup("PROB_ERRORS") {
        stats.errors = match parse_choice(&value, &["count", "exclude"]) {
            Ok("exclude") => ErrorPolicy::Exclude,
            Ok(_) => ErrorPolicy::Count,
            Err(why) => return Err(format!("{source}: {why}")),
        };
    }
    if let Some((value, source)) = lookup("PROB_METRIC") {
        stats.metrics = value
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Metric::parse)
            .collect::<Result<_, _>>()
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_EXPLAIN") {
        stats.explain = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_LATENCY") {
        stats.latency = parse_switch(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_LATENCY_QUANTILE") {
        stats.latency_quantile =
            stats::latency::parse_quantile(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    let whole = |value: &str, least: u64, what: &str| -> Result<u64, String> {
        value
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n >= least)
            .ok_or_else(|| format!("expected {what}, got `{value}`"))
    };
    if let Some((value, source)) = lookup("PROB_BOOTSTRAP") {
        stats.resamples = whole(&value, 1, "a whole number of resamples, at least 1")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_SEED") {
        stats.seed = whole(&value, 0, "a whole number at least 0")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MIN_INPUTS") {
        stats.min_inputs = whole(&value, 2, "a whole number of inputs, at least 2")
            .map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, _)) = lookup("PROB_COMPARE") {
        stats.compare = Some(value.trim().to_string()).filter(|axis| !axis.is_empty());
    }
    if let Some((value, source)) = lookup("PROB_ADJUST") {
        stats.adjust = Adjustment::parse(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_STOP") {
        stats.stop =
            stats::stopping::StopMode::parse(&value).map_err(|why| format!("{source}: {why}"))?;
    }
    if let Some((value, source)) = lookup("PROB_MARGIN") {
        let margin = value
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|m| (0.0..1.0).contains(m));
        stats.margin = Some(margin.ok_or_else(|| {
            let hint = match value.trim().parse::<f64>() {
                Ok(m) if (1.0..100.0).contains(&m) => format!(" (did you mean {}?)", m / 100.0),
                _ => String::new(),
            };
            format!("{source}: expected a margin at least 0 and below 1, got `{value}`{hint}")
        })?);
    }
    if let Some((value, _)) = lookup("PROB_BASELINE") {
        // Relative to the workspace root, as PROB_JSON is: every package's processes agree.
        let path = Path::new(value.trim());
        stats.baseline = Some(
            match config.root {
                Some(root) if path.is_relative() => Path::new(root).join(path),
                _ => path.to_path_buf(),
            }
            .to_string_lossy()
            .into_owned(),
        );
    } else if stats.margin.is_some() {
        return Err("PROB_MARGIN needs PROB_BASELINE".to_string());
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: Option<&'static str>, delay: Option<f64>) -> Config {
        Config {
            json,
            delay,
            root: Some("/ws"),
            entries: &[
                ("method", "wilson"),
                ("confidence", "0.9"),
                ("metrics", "pass^2"),
            ],
        }
    }

    #[test]
    fn environment_wins_over_config() {
        let env = |name: &str| match name {
            "PROB_JSON" => Some("out/report.json".to_string()),
            "PROB_DELAY" => Some("0.25".to_string()),
            "PROB_HTML" => Some("out/report.html".to_string()),
            _ => None,
        };
        let settings = resolve(&config(Some("/ws/cfg.json"), Some(2.0)), env);
        let json = settings.json.expect("set");
        assert_eq!(json.display, "out/report.json");
        assert_eq!(json.resolved, PathBuf::from("/ws/out/report.json"));
        let html = settings.html.expect("set");
        assert_eq!(html.display, "out/report.html");
        assert_eq!(html.resolved, PathBuf::from("/ws/out/report.html"));
        assert_eq!(settings.delay, Duration::from_millis(250));

        let settings = resolve(&config(Some("/ws/cfg.json"), Some(2.0)), |_| None);
        assert_eq!(
            settings.json.expect("set").resolved,
            PathBuf::from("/ws/cfg.json")
        );
        assert_eq!(settings.delay, Duration::from_secs(2));

        let settings = resolve(&config(None, None), |_| None);
        assert_eq!((settings.json, settings.delay), (None, Duration::ZERO));
        assert_eq!(settings.html, None);
        assert_eq!(
            (settings.per_test, settings.attempt, settings.problem),
            (false, 1, None)
        );
    }

    #[test]
    fn statistics_come_from_the_environment_then_the_config() {
        let settings = resolve(&config(None, None), |_| None);
        assert_eq!(settings.stats.interval.method, stats::Method::Wilson);
        assert_eq!(settings.stats.interval.level, 0.9);
        assert_eq!(settings.stats.metrics, [Metric::PassAll(2)]);
        let env = |name: &str| match name {
            "PROB_METHOD" => Some("bayes".to_string()),
            "PROB_PRIOR" => Some("0.5, 0.5".to_string()),
            "PROB_MIN_RATE" => Some("0.8".to_string()),
            "PROB_UNDECIDED" => Some("pass".to_string()),
            "PROB_METRIC" => Some("pass^3,pass@5".to_string()),
            "PROB_INTERVALS" => Some("0".to_string()),
            "PROB_EXPLAIN" => Some("1".to_string()),
            _ => None,
        };
        let stats = resolve(&config(None, None), env).stats;
        assert_eq!(stats.interval.method, stats::Method::Bayes);
        assert_eq!(stats.interval.prior, Prior { a: 0.5, b: 0.5 });
        assert_eq!(stats.min_rate, Some(0.8));
        assert_eq!(stats.undecided, Undecided::Pass);
        assert_eq!(stats.metrics, [Metric::PassAll(3), Metric::PassAny(5)]);
        assert!(!stats.intervals && stats.explain);
    }

    #[test]
    fn analysis_settings_come_from_the_environment_then_the_config() {
        let with = |entries: &'static [(&'static str, &'static str)]| Config {
            json: None,
            delay: None,
            root: Some("/ws"),
            entries,
        };
        let config = with(&[
            ("bootstrap", "400"),
            ("seed", "7"),
            ("min_inputs", "5"),
            ("compare", "model"),
            ("adjust", "bh"),
        ]);
        let stats = resolve(&config, |_| None).stats;
        assert_eq!((stats.resamples, stats.seed, stats.min_inputs), (400, 7, 5));
        assert_eq!(
            (stats.compare.as_deref(), stats.adjust),
            (Some("model"), Adjustment::Bh)
        );
        assert_eq!((stats.baseline, stats.margin), (None, None));
        let env = |name: &str| match name {
            "PROB_SEED" => Some("9".to_string()),
            "PROB_BASELINE" => Some("old.json".to_string()),
            "PROB_MARGIN" => Some("0.05".to_string()),
            _ => None,
        };
        let stats = resolve(&config, env).stats;
        assert_eq!(stats.seed, 9);
        // Relative to the workspace root, as PROB_JSON is.
        assert_eq!(stats.baseline.as_deref(), Some("/ws/old.json"));
        assert_eq!(stats.margin, Some(0.05));
        let problem = |name: &'static str, value: &'static str| {
            resolve(&with(&[]), move |n| (n == name).then(|| value.to_string()))
                .problem
                .unwrap_or_default()
        };
        assert_eq!(
            problem("PROB_BOOTSTRAP", "many"),
            "PROB_BOOTSTRAP: expected a whole number of resamples, at least 1, got `many`"
        );
        assert_eq!(
            problem("PROB_MIN_INPUTS", "1"),
            "PROB_MIN_INPUTS: expected a whole number of inputs, at least 2, got `1`"
        );
        assert_eq!(
            problem("PROB_ADJUST", "fdr"),
            "PROB_ADJUST: expected none, holm, bonferroni or bh, got `fdr`"
        );
        assert_eq!(
            problem("PROB_MARGIN", "0.05"),
            "PROB_MARGIN needs PROB_BASELINE"
        );
        let margin = resolve(&with(&[]), |n| match n {
            "PROB_MARGIN" => Some("5".to_string()),
            "PROB_BASELINE" => Some("old.json".to_string()),
            _ => None,
        });
        assert_eq!(
            margin.problem.as_deref(),
            Some("PROB_MARGIN: expected a margin at least 0 and below 1, got `5` (did you mean 0.05?)")
        );
    }

    #[test]
    fn bad_statistics_values_name_their_source() {
        let problem = |name: &'static str, value: &'static str| {
            resolve(&config(None, None), move |n| {
                (n == name).then(|| value.to_string())
            })
            .problem
            .unwrap_or_default()
        };
        assert_eq!(
            problem("PROB_CONFIDENCE", "95"),
            "PROB_CONFIDENCE: expected a number strictly between 0 and 1, got `95`; did you mean 0.95?"
        );
        assert_eq!(
            problem("PROB_MIN_RATE", "90"),
            "PROB_MIN_RATE: expected a rate strictly between 0 and 1, got `90`; did you mean 0.9?"
        );
        assert!(problem("PROB_METHOD", "beta")
            .starts_with("PROB_METHOD: expected exact, wilson or bayes"));
        assert!(
            problem("PROB_UNDECIDED", "maybe").starts_with("PROB_UNDECIDED: expected fail or pass")
        );
        assert!(problem("PROB_PRIOR", "1").starts_with("PROB_PRIOR: expected two positive numbers"));
        assert_eq!(
            problem("PROB_STOP", "early"),
            "PROB_STOP: expected off, curtail or sequential, got `early`"
        );
        assert!(problem("PROB_METRIC", "recall@3").contains("pass^k or pass@k"));
        let from_config = Config {
            json: None,
            delay: None,
            root: None,
            entries: &[("errors", "skip")],
        };
        let settings = resolve(&from_config, |_| None);
        assert_eq!(
            settings.problem.as_deref(),
            Some("config `errors`: expected count or exclude, got `skip`")
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
        assert_eq!(settings.session_key, "nextest-1234");
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

    #[test]
    fn a_long_delay_is_warned_of_in_human_units() {
        let env = |name: &str| (name == "PROB_DELAY").then(|| " 1e9 ".to_string());
        let settings = resolve(&config(None, None), env);
        assert_eq!(settings.problem, None);
        assert_eq!(settings.delay, Duration::from_secs(1_000_000_000));
        assert_eq!(
            settings.warnings,
            ["PROB_DELAY=1e9 spaces runs 1000000000 s (31.7 years) apart"]
        );
        let settings = resolve(&config(None, Some(7200.0)), |_| None);
        assert_eq!(
            settings.warnings,
            ["config `delay` = 7200 spaces runs 7200 s (2.0 hours) apart"]
        );
        let settings = resolve(&config(None, Some(3.0 * 86400.0)), |_| None);
        assert_eq!(
            settings.warnings,
            ["config `delay` = 259200 spaces runs 259200 s (3.0 days) apart"]
        );
        // An hour is long, but not unusually so for a rate limit.
        for short in [Some(3600.0), Some(0.5), None] {
            assert!(resolve(&config(None, short), |_| None).warnings.is_empty());
        }
    }

    #[test]
    fn a_delay_too_long_to_wait_is_refused() {
        let env = |name: &str| (name == "PROB_DELAY").then(|| "1e20".to_string());
        let settings = resolve(&config(None, None), env);
        assert_eq!(
            settings.problem.as_deref(),
            Some("PROB_DELAY: expected at most 1e15 seconds (31688087.8 years), got `1e20`")
        );
        assert_eq!(settings.delay, Duration::ZERO);
        assert!(settings.warnings.is_empty());
        let settings = resolve(&config(None, Some(1e300)), |_| None);
        assert!(settings
            .problem
            .is_some_and(|problem| problem.starts_with("config `delay`: expected at most 1e15")));
    }

    #[test]
    fn a_session_key_that_cleans_to_nothing_is_a_problem() {
        for bad in ["..", ".", "..."] {
            let env = |name: &str| match name {
                "PROB_SESSION" => Some(bad.to_string()),
                "NEXTEST_RUN_ID" => Some("77".to_string()),
                _ => None,
            };
            let settings = resolve(&config(None, None), env);
            assert_eq!(
                settings.problem,
                Some(format!(
                    "PROB_SESSION={bad:?} is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"
                ))
            );
            // The runs, errors, are kept in the session the process would have had.
            assert_eq!(settings.session_key, "nextest-77");
        }
        let env = |name: &str| (name == "PROB_SESSION").then(|| "/tmp/x".to_string());
        let settings = resolve(&config(None, None), env);
        assert_eq!(
            (settings.problem, settings.session_key.as_str()),
            (None, "_tmp_x")
        );
    }
}
