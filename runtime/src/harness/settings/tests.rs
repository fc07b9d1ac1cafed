//! Unit tests of the settings: where each value comes from, and the problems and warnings of
//! bad or surprising values.
//!
//! Layer: harness.

use super::*;
use crate::types::stats::paired::Adjustment;
use crate::types::stats::{self, Metric, Prior, Undecided};

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
    assert!(
        problem("PROB_METHOD", "beta").starts_with("PROB_METHOD: expected exact, wilson or bayes")
    );
    assert!(problem("PROB_UNDECIDED", "maybe").starts_with("PROB_UNDECIDED: expected fail or pass"));
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
