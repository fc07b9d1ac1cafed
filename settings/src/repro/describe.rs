//! How a perturbation reads in a report, and an instant as a UTC date and time.

use super::{Cpus, Perturbation};

/// How a perturbation reads in a report.
pub fn describe(perturbation: &Perturbation) -> String {
    let mut parts = Vec::new();
    if let Some(seed) = perturbation.seed {
        parts.push(if perturbation.hash_only {
            format!("std's hash keys from entropy seed {seed}, other draws real")
        } else {
            format!("entropy seed {seed}")
        });
    }
    if let Some(clock) = perturbation.clock {
        parts.push(format!(
            "clock at {}{}",
            utc(clock.at),
            if clock.frozen { ", frozen" } else { "" }
        ));
    }
    if let Some(tick) = perturbation.tick_ms {
        parts.push(format!("every clock read {tick} ms after the last"));
    }
    if perturbation.network_blocked {
        parts.push("outbound connections blocked".to_string());
    }
    match (perturbation.cpus, perturbation.stress) {
        (Some(Cpus::One), false) => parts.push("one core".to_string()),
        (Some(Cpus::One), true) => parts.push("one core, shared with busy threads".to_string()),
        (Some(Cpus::All), false) => parts.push("every core".to_string()),
        (Some(Cpus::All), true) | (None, true) => {
            parts.push("every core, each shared with busy threads".to_string())
        }
        (None, false) => {}
    }
    if perturbation.fresh_home {
        parts.push("a fresh, empty HOME".to_string());
    }
    if perturbation.scrubbed_env {
        parts.push("a scrubbed environment".to_string());
    }
    if perturbation.xdg_dirs {
        parts.push("the XDG base directories set".to_string());
    }
    if let Some(tz) = &perturbation.tz {
        parts.push(format!("TZ={tz}"));
    }
    if parts.is_empty() {
        "no perturbation".to_string()
    } else {
        parts.join(", ")
    }
}

/// `at` (seconds since the epoch) as `YYYY-MM-DD HH:MM:SS.mmm UTC`.
pub fn utc(at: f64) -> String {
    let millis = (at * 1000.0).round() as i64;
    let (secs, ms) = (millis.div_euclid(1000), millis.rem_euclid(1000));
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{ms:03} UTC",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// The calendar date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
