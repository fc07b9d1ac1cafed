//! The delay between run starts (`PROB_DELAY`, the config's `delay`): parsed, capped at what
//! an `Instant` can be pushed by, and warned of when it is long enough to look like a hang.
//!
//! Layer: harness.

use std::time::Duration;

use probtest_settings::DELAY;

use crate::harness::registry::Config;

/// The longest delay accepted, in seconds: some 31.7 million years. Far below what a
/// `Duration` added to an `Instant` can hold, which a longer delay would overflow.
const LONGEST_DELAY: f64 = 1e15;

/// A delay longer than this many seconds (an hour) gets a warning: a suite that silently waits
/// that long looks hung.
const LONG_DELAY: f64 = 3600.0;

/// The delay between run starts, and a warning when it is long.
pub(super) struct Delay {
    pub(super) duration: Duration,
    pub(super) warning: Option<String>,
}

/// `PROB_DELAY`, else the config's `delay`; `None` when neither is set. A value that is not a
/// number of seconds from 0 to [`LONGEST_DELAY`] is an error naming where it came from.
pub(super) fn resolve_delay(
    config: &Config,
    set: &impl Fn(&str) -> Option<String>,
) -> Result<Option<Delay>, String> {
    // Where the value came from (for errors), the value as given, and both (for the warning).
    // The text is read here rather than through `DELAY.from_env`: the warning quotes it.
    let (seconds, source, given, shown) = match set(DELAY.variable) {
        Some(text) => {
            let seconds = DELAY.parse_from(DELAY.variable, &text)?;
            let given = text.trim().to_string();
            let shown = format!("{}={given}", DELAY.variable);
            (seconds, DELAY.variable, given, shown)
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
