//! The one table of probtest's settings, shared by its attribute (which reads the settings that
//! shape the generated tests, at compile time) and its runtime (which reads the rest when a
//! test runs): each setting's environment variable, its config key, when it is read, and the
//! text parsers that both sides use. Each is resolved from its environment variable, then the
//! config (`[package.metadata.probtest]`, then `[workspace.metadata.probtest]`), then its
//! default. It also holds the one rule of generated item names that both sides need: how wide
//! a run number is, which the attribute writes and the runtime reads back.
//!
//! Use it through the `probtest` crate; this crate has no API of its own to promise.

/// When a setting is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// By the attribute, at compile time: the setting shapes the generated tests, and changing
    /// it rebuilds them.
    Compile,
    /// By the runtime, when a test runs; the attribute hands it the config's value as text.
    Run,
}

/// One setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable: `PROB_RUNS`.
    pub variable: &'static str,
    /// The key in `[package.metadata.probtest]`, if the config can set it.
    pub key: Option<&'static str>,
    /// When it is read.
    pub phase: Phase,
    /// What it means, in a few words (the README's table says the same).
    pub meaning: &'static str,
}

const fn setting(
    variable: &'static str,
    key: Option<&'static str>,
    phase: Phase,
    meaning: &'static str,
) -> Setting {
    Setting {
        variable,
        key,
        phase,
        meaning,
    }
}

/// Every setting.
pub const SETTINGS: &[Setting] = &[
    setting("PROB_RUNS", Some("runs"), Phase::Compile, "runs per case"),
    setting(
        "PROB_JSON",
        Some("json"),
        Phase::Run,
        "the JSON report's path",
    ),
    setting("PROB_HTML", None, Phase::Run, "the HTML report's path"),
    setting(
        "PROB_DELAY",
        Some("delay"),
        Phase::Run,
        "seconds between run starts",
    ),
    setting(
        "PROB_TRANSPOSE",
        Some("transpose"),
        Phase::Compile,
        "run-major order",
    ),
    setting(
        "PROB_GATE_ITEMS",
        Some("gate_items"),
        Phase::Compile,
        "a verdict item per gated case",
    ),
    setting(
        "PROB_METHOD",
        Some("method"),
        Phase::Run,
        "the interval method",
    ),
    setting(
        "PROB_CONFIDENCE",
        Some("confidence"),
        Phase::Run,
        "the intervals' level",
    ),
    setting(
        "PROB_PRIOR",
        Some("prior"),
        Phase::Run,
        "the Bayes method's Beta prior",
    ),
    setting(
        "PROB_INTERVALS",
        Some("intervals"),
        Phase::Run,
        "the interval column",
    ),
    setting(
        "PROB_MIN_RATE",
        Some("min_rate"),
        Phase::Run,
        "a gate for every case",
    ),
    setting(
        "PROB_UNDECIDED",
        Some("undecided"),
        Phase::Run,
        "what UNDECIDED means",
    ),
    setting(
        "PROB_ERRORS",
        Some("errors"),
        Phase::Run,
        "how errors enter gates",
    ),
    setting(
        "PROB_METRIC",
        Some("metrics"),
        Phase::Run,
        "pass^k and pass@k",
    ),
    setting(
        "PROB_EXPLAIN",
        Some("explain"),
        Phase::Run,
        "plain-language verdicts",
    ),
    setting(
        "PROB_LATENCY",
        Some("latency"),
        Phase::Run,
        "each case's latency quantile",
    ),
    setting(
        "PROB_LATENCY_QUANTILE",
        Some("latency_quantile"),
        Phase::Run,
        "the latency quantile reported",
    ),
    setting(
        "PROB_BOOTSTRAP",
        Some("bootstrap"),
        Phase::Run,
        "bootstrap resamples",
    ),
    setting("PROB_SEED", Some("seed"), Phase::Run, "the resampling seed"),
    setting(
        "PROB_MIN_INPUTS",
        Some("min_inputs"),
        Phase::Run,
        "the fewest inputs for an interval over inputs",
    ),
    setting(
        "PROB_COMPARE",
        Some("compare"),
        Phase::Run,
        "the argument whose values are compared",
    ),
    setting(
        "PROB_ADJUST",
        Some("adjust"),
        Phase::Run,
        "the p-value adjustment",
    ),
    setting(
        "PROB_BASELINE",
        None,
        Phase::Run,
        "an earlier report to compare with",
    ),
    setting(
        "PROB_MARGIN",
        None,
        Phase::Run,
        "the drop from the baseline that fails",
    ),
    setting(
        "PROB_STOP",
        Some("stop"),
        Phase::Run,
        "stop a gated case's runs once it is decided",
    ),
    setting(
        "PROB_DEFER_VERDICTS",
        None,
        Phase::Run,
        "leave gated verdicts to the reader",
    ),
    setting("PROB_SESSION", None, Phase::Run, "the session key"),
    setting(
        "PROB_STORE",
        None,
        Phase::Run,
        "the directory that holds the sessions",
    ),
    setting(
        "PROB_SUMMARY",
        None,
        Phase::Run,
        "the section each process prints",
    ),
    setting(
        "PROB_ITEMS_OUT",
        None,
        Phase::Run,
        "where to write the binary's items",
    ),
    setting(
        "PROB_RECONCILE",
        None,
        Phase::Run,
        "list the generated items to the session",
    ),
    setting(
        "PROB_TIMEOUT",
        Some("timeout"),
        Phase::Run,
        "how long a run may take",
    ),
    setting(
        "PROB_LIMIT_<KEY>",
        Some("limits"),
        Phase::Run,
        "how many guards of a limit may be held at once",
    ),
    setting(
        "PROB_LIMIT_<KEY>_PER_MINUTE",
        None,
        Phase::Run,
        "how many guards of a limit may be taken a minute",
    ),
    setting(
        "PROB_CACHE",
        Some("cache"),
        Phase::Run,
        "record, replay or call through",
    ),
    setting(
        "PROB_BACKTRACE",
        Some("backtrace"),
        Phase::Run,
        "keep the user's frames of a panic",
    ),
];

/// The variable that sets the concurrency of the limit `key`: `PROB_LIMIT_OPENAI` for
/// `openai`, every character that is not a letter or digit as `_`.
pub fn limit_variable(key: &str) -> String {
    let mut variable = String::from("PROB_LIMIT_");
    for c in key.chars() {
        variable.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    variable
}

/// A duration written as humantime writes one: `30s`, `500ms`, `1m30s`, `1.5h`, `2 min`; units
/// `ns`, `us`, `ms`, `s`, `m`, `h`, `d` and their long names. Zero is refused: a timeout of
/// nothing fails every run.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let refused =
        |why: &str| format!("expected a duration such as `30s` or `1m30s`{why}, got `{text}`");
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(refused(""));
    }
    let mut total = 0.0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().map_err(|_| refused(""))?;
        rest = rest[digits..].trim_start();
        let letters = rest
            .find(|c: char| !c.is_alphabetic())
            .unwrap_or(rest.len());
        let seconds = match &rest[..letters] {
            "ns" | "nsec" | "nanos" => 1e-9,
            "us" | "µs" | "usec" | "micros" => 1e-6,
            "ms" | "msec" | "millis" => 1e-3,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86400.0,
            "" => return Err(refused(" (a number needs its unit)")),
            _ => return Err(refused("")),
        };
        total += number * seconds;
        rest = rest[letters..].trim_start();
    }
    match std::time::Duration::try_from_secs_f64(total) {
        Ok(duration) if !duration.is_zero() && total <= 1e15 => Ok(duration),
        Ok(duration) if duration.is_zero() => Err(refused(" longer than zero")),
        _ => Err(refused(" of at most 1e15 seconds")),
    }
}

/// A duration as [`parse_duration`] reads it, in its largest whole unit: `30s`, `2m`, `250ms`.
pub fn format_duration(duration: std::time::Duration) -> String {
    let nanos = duration.as_nanos();
    const UNITS: [(u128, &str); 6] = [
        (86_400_000_000_000, "d"),
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ];
    for (size, unit) in UNITS {
        if nanos >= size && nanos.is_multiple_of(size) {
            return format!("{}{unit}", nanos / size);
        }
    }
    if nanos >= 1_000_000_000 {
        return format!("{}s", duration.as_secs_f64());
    }
    format!("{nanos}ns")
}

/// The setting of an environment variable.
///
/// # Panics
///
/// When the table has no such variable: a name spelled wrong in probtest itself.
pub fn by_variable(variable: &str) -> &'static Setting {
    SETTINGS
        .iter()
        .find(|setting| setting.variable == variable)
        .unwrap_or_else(|| panic!("probtest has no setting {variable}"))
}

/// The config keys of the settings read at `phase`.
pub fn keys(phase: Phase) -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .filter(move |setting| setting.phase == phase)
        .filter_map(|setting| setting.key)
}

/// A switch: `1`/`0`, `true`/`false`, `yes`/`no` or `on`/`off`, in any case.
pub fn parse_switch(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!(
            "expected 1/0, true/false, yes/no or on/off, got `{text}`"
        )),
    }
}

/// The most runs per case probtest generates. Each run is a test item; far more than this and
/// the compiler runs out of memory building them, with no word about why.
pub const MAX_RUNS: u32 = 100_000;

/// Why a run count above [`MAX_RUNS`] is refused, after `what`, the words that show the count
/// where it was set (`` `runs = 1000000000` ``), so that every place that sets it says the same.
pub fn more_than_max_runs(what: &str) -> String {
    format!("{what} is more than {MAX_RUNS} runs per case, the most probtest generates")
}

/// How many digits the run number has in a generated item's name (`run07` of 10 runs): as
/// many as the last run's, so that libtest's byte-wise sort starts runs in numeric order, and
/// at least 4 where the run leads the name (run-major order, `PROB_TRANSPOSE`).
pub fn run_digits(runs: u32, leading: bool) -> usize {
    let digits = runs.checked_ilog10().map_or(1, |log| log as usize + 1);
    digits.max(if leading { 4 } else { 1 })
}

/// A whole number of runs, at most [`MAX_RUNS`]; values below 1 count as 1.
pub fn parse_runs(text: &str) -> Result<u32, String> {
    let trimmed = text.trim();
    let (negative, digits) = match trimmed.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, trimmed.strip_prefix('+').unwrap_or(trimmed)),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(format!("expected a whole number of runs, got `{text}`"));
    }
    if negative {
        return Ok(1);
    }
    // A count too long for a `u32` is a whole number all the same: over the cap, not malformed.
    match digits.parse::<u32>() {
        Ok(runs) if runs <= MAX_RUNS => Ok(runs.max(1)),
        _ => Err(more_than_max_runs(&format!("`{trimmed}`"))),
    }
}

/// A number of seconds, at least 0.
pub fn parse_seconds(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|seconds| seconds.is_finite() && *seconds >= 0.0)
        .ok_or_else(|| format!("expected a number of seconds >= 0, got `{text}`"))
}

/// Whether `value` is strictly between 0 and 1, as a confidence level or a rate must be.
pub fn is_fraction(value: f64) -> bool {
    value > 0.0 && value < 1.0
}

/// The fraction that a percentage probably meant: 0.95 for 95; `None` for anything else.
pub fn meant_fraction(value: f64) -> Option<f64> {
    (value > 1.0 && value < 100.0).then(|| value / 100.0)
}

/// A probability strictly between 0 and 1 (a confidence level, a rate). A percentage is
/// refused with the fraction it probably meant.
pub fn parse_fraction(what: &str, text: &str) -> Result<f64, String> {
    let refused = || format!("expected {what} strictly between 0 and 1, got `{text}`");
    let value: f64 = text.trim().parse().map_err(|_| refused())?;
    if is_fraction(value) {
        Ok(value)
    } else if let Some(meant) = meant_fraction(value) {
        Err(format!("{}; did you mean {meant}?", refused()))
    } else {
        Err(refused())
    }
}

/// One of `choices`, in any case.
pub fn parse_choice(text: &str, choices: &[&'static str]) -> Result<&'static str, String> {
    let wanted = text.trim().to_ascii_lowercase();
    choices
        .iter()
        .find(|choice| **choice == wanted)
        .copied()
        .ok_or_else(|| {
            let (last, first) = choices.split_last().unwrap_or((&"", &[]));
            let listed = if first.is_empty() {
                last.to_string()
            } else {
                format!("{} or {last}", first.join(", "))
            };
            format!("expected {listed}, got `{text}`")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_and_keys_are_unique_and_spelled_alike() {
        for (index, setting) in SETTINGS.iter().enumerate() {
            assert!(setting.variable.starts_with("PROB_"), "{setting:?}");
            for other in &SETTINGS[index + 1..] {
                assert_ne!(setting.variable, other.variable);
                assert!(
                    setting.key.is_none() || setting.key != other.key,
                    "{setting:?}"
                );
            }
        }
        assert_eq!(by_variable("PROB_METRIC").key, Some("metrics"));
        assert_eq!(
            keys(Phase::Compile).collect::<Vec<_>>(),
            ["runs", "transpose", "gate_items"]
        );
    }

    #[test]
    fn parsers_name_the_value_they_refuse() {
        assert_eq!(parse_switch(" On "), Ok(true));
        assert_eq!(
            parse_switch("loud"),
            Err("expected 1/0, true/false, yes/no or on/off, got `loud`".to_string())
        );
        assert_eq!(
            parse_runs("ten"),
            Err("expected a whole number of runs, got `ten`".to_string())
        );
        assert_eq!(parse_seconds("0.25"), Ok(0.25));
        assert!(parse_seconds("-1").is_err() && parse_seconds("inf").is_err());
        assert_eq!(
            parse_fraction("a rate", "90"),
            Err(
                "expected a rate strictly between 0 and 1, got `90`; did you mean 0.9?".to_string()
            )
        );
        assert_eq!(parse_choice("PASS", &["fail", "pass"]), Ok("pass"));
        assert_eq!(
            parse_choice("maybe", &["fail", "pass"]),
            Err("expected fail or pass, got `maybe`".to_string())
        );
    }

    #[test]
    fn run_counts_clamp_to_one_and_stop_at_the_cap() {
        for (text, runs) in [
            ("0", 1),
            ("-3", 1),
            ("-99999999999999999999", 1),
            (" 12 ", 12),
            ("+7", 7),
            ("100000", MAX_RUNS),
        ] {
            assert_eq!(parse_runs(text), Ok(runs), "{text}");
        }
        for text in ["100001", "1000000000", "4294967296", "99999999999999999999"] {
            assert_eq!(
                parse_runs(text),
                Err(format!(
                    "`{text}` is more than 100000 runs per case, the most probtest generates"
                )),
                "{text}"
            );
        }
        for text in ["", "-", "1.5", "1e3", "1_000", "--1"] {
            assert_eq!(
                parse_runs(text),
                Err(format!("expected a whole number of runs, got `{text}`")),
                "{text:?}"
            );
        }
    }

    #[test]
    fn durations_read_and_write_as_humantime_does() {
        use std::time::Duration;
        for (text, duration) in [
            ("30s", Duration::from_secs(30)),
            (" 1m30s ", Duration::from_secs(90)),
            ("1m 30s", Duration::from_secs(90)),
            ("500ms", Duration::from_millis(500)),
            ("1.5h", Duration::from_secs(5400)),
            ("2 minutes", Duration::from_secs(120)),
        ] {
            assert_eq!(parse_duration(text), Ok(duration), "{text}");
        }
        assert_eq!(
            parse_duration("30"),
            Err(
                "expected a duration such as `30s` or `1m30s` (a number needs its unit), got `30`"
                    .to_string()
            )
        );
        for bad in ["", "soon", "3 fortnights", "0s", "1e20s", "-1s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        for (duration, text) in [
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_millis(1500), "1500ms"),
        ] {
            assert_eq!(format_duration(duration), text);
            assert_eq!(parse_duration(text), Ok(duration));
        }
        assert_eq!(limit_variable("open-ai.v2"), "PROB_LIMIT_OPEN_AI_V2");
    }

    #[test]
    fn run_numbers_are_as_wide_as_the_last_run() {
        for (runs, nested, leading) in [
            (0, 1, 4),
            (1, 1, 4),
            (9, 1, 4),
            (10, 2, 4),
            (100, 3, 4),
            (MAX_RUNS, 6, 6),
        ] {
            assert_eq!(run_digits(runs, false), nested, "{runs}");
            assert_eq!(run_digits(runs, true), leading, "{runs}");
        }
    }

    /// The README's and the runtime's documented tables name every setting, with its key.
    #[test]
    fn the_documentation_lists_every_setting() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for document in ["README.md", "runtime/src/lib.rs"] {
            let Ok(text) = std::fs::read_to_string(root.join(document)) else {
                // Outside the workspace (a packaged crate): nothing to compare with.
                continue;
            };
            for setting in SETTINGS {
                let row = text
                    .lines()
                    .filter(|line| line.trim_start_matches("//!").trim_start().starts_with('|'))
                    .find(|line| line.contains(&format!("`{}`", setting.variable)))
                    .unwrap_or_else(|| {
                        panic!("{document}: no settings table row for {}", setting.variable)
                    });
                if let Some(key) = setting.key {
                    assert!(
                        row.contains(&format!("`{key}`")),
                        "{document}: the row of {} does not name its key `{key}`:\n{row}",
                        setting.variable
                    );
                }
            }
        }
    }
}
