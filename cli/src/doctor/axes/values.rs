//! The values of each axis: the control values that pin it, the values that provoke it
//! (adversarial instants, seeds, schedules, a blocked network, a fresh home, a scrubbed
//! environment), and the benign value of the counterfactual.

use crate::doctor::axes::{Axis, Clock, Cpus, Perturbation};

/// The seed that controls the entropy axis.
pub const CONTROL_SEED: u64 = 0x5eed;

/// The instant that controls the time axis: mid-second, mid-minute, mid-day, mid-month, mid-year
/// (2021-06-15 12:30:30.5 UTC), flowing.
pub const CONTROL_CLOCK: Clock = Clock {
    at: 1_623_760_230.5,
    frozen: false,
};

/// Every controlled axis in `axes` pinned: what the control sweep runs under. Scheduling is
/// pinned to one core, where the victim's threads take turns.
pub fn control(axes: &[Axis]) -> Perturbation {
    Perturbation {
        seed: axes.contains(&Axis::Entropy).then_some(CONTROL_SEED),
        clock: axes.contains(&Axis::Time).then_some(CONTROL_CLOCK),
        cpus: axes.contains(&Axis::Scheduling).then_some(Cpus::One),
        ..Perturbation::default()
    }
}

/// Every controlled axis pinned at other values than [`control`]'s: with it, a test that
/// fails under both fails whatever the pinned values.
pub fn control_otherwise(axes: &[Axis]) -> Perturbation {
    Perturbation {
        seed: axes.contains(&Axis::Entropy).then_some(CONTROL_SEED + 1),
        clock: axes.contains(&Axis::Time).then_some(Clock {
            // A day and a quarter-second later: still mid-everything.
            at: CONTROL_CLOCK.at + 86_400.25,
            frozen: false,
        }),
        cpus: axes.contains(&Axis::Scheduling).then_some(Cpus::One),
        ..Perturbation::default()
    }
}

/// The tick of the jitter provocation: a pause this long between any two clock reads is what a
/// loaded CI machine gives a test now and then.
pub const JITTER_TICK_MS: u32 = 250;

/// A value that provokes an axis, with its label.
pub struct Provocation {
    pub label: String,
    pub perturbation: Perturbation,
}

/// Seeds 1 to `count`, each pinning every draw from the OS.
pub fn seed_provocations(count: u64) -> Vec<Provocation> {
    (1..=count)
        .map(|seed| Provocation {
            label: format!("entropy seed {seed}"),
            perturbation: Perturbation {
                seed: Some(seed),
                ..Perturbation::default()
            },
        })
        .collect()
}

/// The provoking values of a preload axis.
pub fn provocations(axis: Axis) -> Vec<Provocation> {
    match axis {
        Axis::Entropy => seed_provocations(8),
        Axis::Time => ADVERSARIAL_INSTANTS
            .iter()
            .map(|(label, at)| (label, at, None))
            .chain(
                DST_INSTANTS
                    .iter()
                    .chain(ZONE_INSTANTS)
                    .map(|(label, at, tz)| (label, at, Some(tz.to_string()))),
            )
            .map(|(label, at, tz)| Provocation {
                label: format!("clock at {label}"),
                perturbation: Perturbation {
                    clock: Some(Clock {
                        at: *at,
                        frozen: false,
                    }),
                    tz,
                    ..Perturbation::default()
                },
            })
            .chain(std::iter::once(Provocation {
                label: format!("tick jitter: every clock read {JITTER_TICK_MS} ms after the last"),
                perturbation: Perturbation {
                    clock: Some(CONTROL_CLOCK),
                    tick_ms: Some(JITTER_TICK_MS),
                    ..Perturbation::default()
                },
            }))
            .collect(),
        Axis::Scheduling => [
            (Cpus::One, true, "one core, shared with busy threads"),
            (Cpus::All, true, "every core, each shared with busy threads"),
            (Cpus::All, false, "every core, idle"),
        ]
        .into_iter()
        .map(|(cpus, stress, label)| Provocation {
            label: format!("scheduled on {label}"),
            perturbation: Perturbation {
                cpus: Some(cpus),
                stress,
                ..Perturbation::default()
            },
        })
        .collect(),
        Axis::Network => vec![Provocation {
            label: "outbound connections blocked (loopback open)".into(),
            perturbation: Perturbation {
                network_blocked: true,
                ..Perturbation::default()
            },
        }],
        Axis::Fs => vec![Provocation {
            label: "a fresh, empty HOME".into(),
            perturbation: Perturbation {
                fresh_home: true,
                ..Perturbation::default()
            },
        }],
        Axis::Env => vec![
            Provocation {
                label: "a scrubbed environment".into(),
                perturbation: Perturbation {
                    scrubbed_env: true,
                    ..Perturbation::default()
                },
            },
            Provocation {
                label: "the XDG base directories set to their defaults".into(),
                perturbation: Perturbation {
                    xdg_dirs: true,
                    ..Perturbation::default()
                },
            },
        ],
        Axis::Order | Axis::Parallel => Vec::new(),
    }
}

/// Instants where code that reads the clock breaks: the ends and starts of minutes, days,
/// months and years, a leap day, the 32-bit `time_t` limit (UTC).
const ADVERSARIAL_INSTANTS: &[(&str, f64)] = &[
    ("2026-03-10 12:34:59.990 (a minute's end)", 1_773_146_099.99),
    (
        "2026-03-10 12:35:00.000 (a minute's start)",
        1_773_146_100.0,
    ),
    (
        "2026-06-30 23:59:59.990 (a day's and a month's end)",
        1_782_863_999.99,
    ),
    ("2026-07-01 00:00:00.000 (a month's start)", 1_782_864_000.0),
    ("2028-02-29 12:00:00.000 (a leap day)", 1_835_438_400.0),
    ("2026-12-31 23:59:59.990 (a year's end)", 1_798_761_599.99),
    (
        "2038-01-19 03:14:07.000 (the 32-bit time_t limit)",
        2_147_483_647.0,
    ),
];

/// Instants just before a daylight-saving change, with the zone whose local time changes then:
/// local time that jumps forward an hour, or repeats one.
const DST_INSTANTS: &[(&str, f64, &str)] = &[
    (
        "2026-03-08 06:59:59.990 (01:59:59 in New York, before clocks spring forward)",
        1_772_953_199.99,
        "America/New_York",
    ),
    (
        "2026-11-01 05:59:59.990 (01:59:59 in New York, before the hour repeats)",
        1_793_512_799.99,
        "America/New_York",
    ),
];

/// Instants at a UTC day's boundary with a zone far from UTC: the local date is another day
/// than UTC's there, so that code that mixes UTC and local dates breaks, while under `TZ=UTC`
/// the same instant passes.
const ZONE_INSTANTS: &[(&str, f64, &str)] = &[
    (
        "2026-06-30 23:59:59.990 (already July 1 in Kiritimati, UTC+14)",
        1_782_863_999.99,
        "Pacific/Kiritimati",
    ),
    (
        "2026-07-01 00:00:00.000 (still June 30 in Pago Pago, UTC-11)",
        1_782_864_000.0,
        "Pacific/Pago_Pago",
    ),
];

/// Whether `perturbation` is one of the far zones' instants: its counterfactual is the same
/// instant under `TZ=UTC`, so that a pass there says the zone is what matters.
pub fn in_far_zone(perturbation: &Perturbation) -> bool {
    perturbation.tz.as_deref().is_some_and(|tz| {
        ZONE_INSTANTS.iter().any(|(_, at, zone)| {
            *zone == tz && perturbation.clock.is_some_and(|clock| clock.at == *at)
        })
    })
}

/// The time zone this machine's local time is in: `TZ`, else the zone `/etc/localtime` links
/// to, else `/etc/timezone`; `None` when none says. A time repro records it, so that it fails
/// on another machine too.
pub fn local_zone() -> Option<String> {
    if let Some(tz) = std::env::var("TZ").ok().filter(|tz| !tz.is_empty()) {
        return Some(tz);
    }
    let linked = std::fs::read_link("/etc/localtime")
        .ok()
        .and_then(|target| {
            let text = target.to_string_lossy().into_owned();
            text.split_once("zoneinfo/")
                .map(|(_, zone)| zone.to_string())
        });
    linked.or_else(|| {
        std::fs::read_to_string("/etc/timezone")
            .ok()
            .map(|zone| zone.trim().to_string())
            .filter(|zone| !zone.is_empty())
    })
}

/// The benign value of an axis, for the counterfactual: the control value of a controlled
/// axis (one core for scheduling); nothing changed for the others (the network open, the
/// user's own home and environment).
pub fn benign(axis: Axis) -> Perturbation {
    control(&[axis])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::axes::utc;

    #[test]
    fn adversarial_instants_are_what_their_labels_say() {
        for (label, at) in ADVERSARIAL_INSTANTS {
            let shown = utc(*at);
            assert!(
                label.starts_with(shown.trim_end_matches(" UTC")),
                "{label} is {shown}"
            );
        }
        assert_eq!(utc(CONTROL_CLOCK.at), "2021-06-15 12:30:30.500 UTC");
        for (label, at, _) in DST_INSTANTS {
            assert!(
                label.starts_with(utc(*at).trim_end_matches(" UTC")),
                "{label} is {}",
                utc(*at)
            );
        }
        let with_zone: Vec<Perturbation> = provocations(Axis::Time)
            .into_iter()
            .map(|provocation| provocation.perturbation)
            .filter(|perturbation| perturbation.tz.is_some())
            .collect();
        assert_eq!(with_zone.len(), DST_INSTANTS.len() + ZONE_INSTANTS.len());
        for (label, at, zone) in ZONE_INSTANTS {
            assert!(
                label.starts_with(utc(*at).trim_end_matches(" UTC")),
                "{label}"
            );
            assert!(
                std::path::Path::new("/usr/share/zoneinfo")
                    .join(zone)
                    .exists()
                    || !std::path::Path::new("/usr/share/zoneinfo").exists(),
                "{zone} is a zone"
            );
        }
        assert!(with_zone[0]
            .env()
            .contains(&("TZ", "America/New_York".to_string())));
    }
}
