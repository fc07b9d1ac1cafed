//! The text parsers of settings: each refusal says what was expected and quotes the value, and
//! the caller puts where the value came from (`PROB_CONFIDENCE: `, ``config `confidence`: ``)
//! in front of it.

use crate::{more_than_max_runs, MAX_RUNS};

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

/// The value as given, for paths and keys whose own checks happen where they are used.
pub fn verbatim(text: &str) -> Result<String, String> {
    Ok(text.to_string())
}

/// The value without the blanks around it.
pub fn trimmed(text: &str) -> Result<String, String> {
    Ok(text.trim().to_string())
}

/// A confidence level: a probability strictly between 0 and 1.
pub fn parse_level(text: &str) -> Result<f64, String> {
    parse_fraction("a number", text)
}

/// A latency quantile: a probability strictly between 0 and 1.
pub fn parse_quantile(text: &str) -> Result<f64, String> {
    parse_fraction("a quantile", text)
}

/// A rate a gate requires: a probability strictly between 0 and 1.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    parse_fraction("a rate", text)
}

/// The two positive numbers `a, b` of a Beta(a, b) prior.
pub fn parse_prior(text: &str) -> Result<(f64, f64), String> {
    let mut numbers = text.split(',').map(|part| part.trim().parse::<f64>());
    match (numbers.next(), numbers.next(), numbers.next()) {
        (Some(Ok(a)), Some(Ok(b)), None)
            if a > 0.0 && b > 0.0 && a.is_finite() && b.is_finite() =>
        {
            Ok((a, b))
        }
        _ => Err(format!(
            "expected two positive numbers `a, b` for a Beta(a, b) prior, got `{text}`"
        )),
    }
}

/// A whole number at least `least`; `what` says what was expected when it is not one.
pub fn parse_whole(text: &str, least: u64, what: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|n| *n >= least)
        .ok_or_else(|| format!("expected {what}, got `{text}`"))
}

/// Bootstrap resamples: at least 1.
pub fn parse_resamples(text: &str) -> Result<u64, String> {
    parse_whole(text, 1, "a whole number of resamples, at least 1")
}

/// A seed: any whole number.
pub fn parse_seed(text: &str) -> Result<u64, String> {
    parse_whole(text, 0, "a whole number at least 0")
}

/// The fewest inputs of an interval over inputs: at least 2.
pub fn parse_min_inputs(text: &str) -> Result<u64, String> {
    parse_whole(text, 2, "a whole number of inputs, at least 2")
}

/// A limit's count (concurrency or per minute): a whole number at least 1.
pub fn parse_limit(text: &str) -> Result<u32, String> {
    text.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| format!("expected a whole number at least 1, got `{text}`"))
}

/// A baseline's margin: at least 0 and below 1; a percentage is refused with the fraction it
/// probably meant.
pub fn parse_margin(text: &str) -> Result<f64, String> {
    let number = text.trim().parse::<f64>().ok();
    if let Some(margin) = number.filter(|m| (0.0..1.0).contains(m)) {
        return Ok(margin);
    }
    let hint = match number {
        Some(m) if (1.0..100.0).contains(&m) => format!(" (did you mean {}?)", m / 100.0),
        _ => String::new(),
    };
    Err(format!(
        "expected a margin at least 0 and below 1, got `{text}`{hint}"
    ))
}

/// One of the metrics `PROB_METRIC` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassK {
    /// `pass^k`: all k runs of an input pass.
    All(u64),
    /// `pass@k`: at least one of k runs of an input passes.
    Any(u64),
}

/// `pass^3` or `pass@5`.
pub fn parse_pass_k(text: &str) -> Result<PassK, String> {
    let text = text.trim();
    let number = |rest: &str| -> Result<u64, String> {
        rest.parse::<u64>()
            .ok()
            .filter(|&k| k >= 1)
            .ok_or_else(|| format!("expected pass^k or pass@k with a whole k >= 1, got `{text}`"))
    };
    if let Some(rest) = text.strip_prefix("pass^") {
        Ok(PassK::All(number(rest)?))
    } else if let Some(rest) = text.strip_prefix("pass@") {
        Ok(PassK::Any(number(rest)?))
    } else {
        Err(format!("expected pass^k or pass@k, got `{text}`"))
    }
}

/// A comma-separated list of metrics (`pass^3,pass@5`); empty parts are skipped.
pub fn parse_metrics(text: &str) -> Result<Vec<PassK>, String> {
    text.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(parse_pass_k)
        .collect()
}
