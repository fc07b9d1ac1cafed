//! The axes of nondeterminism the doctor varies, and the perturbations on each: a value that
//! controls the axis (its nondeterminism pinned to a benign value), values that provoke it, and
//! how a perturbation reaches a test process (environment variables read by the preload
//! library, the CPUs it may run on and the load beside it, or which sibling tests run beside
//! the victim and how).

use std::fmt;

use serde_json::{json, Value};

use crate::doctor::preload::{
    ENV_NET, ENV_SEED, ENV_SEED_SCOPE, ENV_TICK_MS, ENV_TIME, ENV_TIME_FROZEN,
};

/// An axis of nondeterminism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// The wall clock.
    Time,
    /// What the process draws from the OS: std's `HashMap` keys, `rand`'s seeds, UUIDs.
    Entropy,
    /// Tests that ran before the victim in its process.
    Order,
    /// Tests that run beside the victim, as threads of its process.
    Parallel,
    /// How the victim's own threads are scheduled: on one core or many, with the machine idle
    /// or busy.
    Scheduling,
    /// Connections to other machines.
    Network,
    /// Files outside the test: the user's home directory and what it holds.
    Fs,
    /// The environment variables the test inherits.
    Env,
}

impl Axis {
    /// Every axis, in the order the doctor tries them.
    pub const ALL: [Axis; 8] = [
        Axis::Entropy,
        Axis::Time,
        Axis::Scheduling,
        Axis::Network,
        Axis::Order,
        Axis::Parallel,
        Axis::Fs,
        Axis::Env,
    ];

    /// The axis's name, as `--axes` and the verdicts spell it.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Time => "time",
            Axis::Entropy => "entropy",
            Axis::Order => "order",
            Axis::Parallel => "parallel",
            Axis::Scheduling => "scheduling",
            Axis::Network => "network",
            Axis::Fs => "fs",
            Axis::Env => "env",
        }
    }

    /// The axis named `name`.
    pub fn parse(name: &str) -> Result<Axis, String> {
        Axis::ALL
            .into_iter()
            .find(|axis| axis.name() == name.trim())
            .ok_or_else(|| {
                format!(
                    "unknown axis `{name}`; the axes are {}",
                    Axis::ALL.map(Axis::name).join(", ")
                )
            })
    }

    /// Whether the axis is varied through the preload library.
    pub fn needs_preload(self) -> bool {
        matches!(self, Axis::Time | Axis::Entropy | Axis::Network)
    }

    /// Whether the control sweep pins the axis. The network is not among them: blocking it
    /// replaces the outside world's variance with a failure, so it is only provoked.
    pub fn is_controlled(self) -> bool {
        matches!(self, Axis::Time | Axis::Entropy | Axis::Scheduling)
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A wall clock pinned by the preload library.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// Where it starts: seconds since the Unix epoch.
    pub at: f64,
    /// Whether it stays there.
    pub frozen: bool,
}

/// The CPUs a run's process may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpus {
    /// The first CPU the doctor may use: the victim's threads take turns.
    One,
    /// Every CPU the doctor may use: the victim's threads run at once.
    All,
}

impl Cpus {
    fn name(self) -> &'static str {
        match self {
            Cpus::One => "one",
            Cpus::All => "all",
        }
    }
}

/// What a run changes in the victim's process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Perturbation {
    /// The seed of every draw from the OS.
    pub seed: Option<u64>,
    /// The seed pins std's hash keys only; every other draw is real.
    pub hash_only: bool,
    /// The wall clock.
    pub clock: Option<Clock>,
    /// Tick jitter: every read of a clock at least this many milliseconds after the last.
    pub tick_ms: Option<u32>,
    /// Connections to other machines fail, as without a route.
    pub network_blocked: bool,
    /// The CPUs the process may use; `None` leaves it as the doctor's.
    pub cpus: Option<Cpus>,
    /// Busy threads beside the run, on the CPUs it may use.
    pub stress: bool,
    /// A fresh, empty home directory (`HOME` and the XDG directories in it) instead of the
    /// user's.
    pub fresh_home: bool,
    /// The environment scrubbed to what a test needs to start (see [`KEPT_VARIABLES`]).
    pub scrubbed_env: bool,
    /// The time zone (`TZ`): where the local time of a pinned clock is.
    pub tz: Option<String>,
}

/// What a scrubbed environment keeps: how to find programs and libraries, the home directory
/// (the `fs` axis varies it), and what cargo gives a test.
pub const KEPT_VARIABLES: &[&str] = &["PATH", "HOME", "LD_LIBRARY_PATH", "TMPDIR"];

impl Perturbation {
    /// Nothing changed.
    pub fn none() -> Perturbation {
        Perturbation::default()
    }

    /// Whether the run needs the preload library.
    pub fn needs_preload(&self) -> bool {
        self.seed.is_some()
            || self.clock.is_some()
            || self.tick_ms.is_some()
            || self.network_blocked
    }

    /// Whether the run changes how the machine schedules it: such runs go one at a time, never
    /// beside another run that would load the CPUs they measure.
    pub fn schedules(&self) -> bool {
        self.cpus.is_some() || self.stress
    }

    /// The environment variables that apply it.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let mut env = Vec::new();
        if let Some(seed) = self.seed {
            env.push((ENV_SEED, seed.to_string()));
            if self.hash_only {
                env.push((ENV_SEED_SCOPE, "hash".to_string()));
            }
        }
        if let Some(tick) = self.tick_ms {
            env.push((ENV_TICK_MS, tick.to_string()));
        }
        if self.network_blocked {
            env.push((ENV_NET, "block".to_string()));
        }
        if let Some(tz) = &self.tz {
            env.push(("TZ", tz.clone()));
        }
        if let Some(clock) = self.clock {
            env.push((ENV_TIME, format!("{:.3}", clock.at)));
            if clock.frozen {
                env.push((ENV_TIME_FROZEN, "1".to_string()));
            }
        }
        env
    }

    /// The perturbation as the repro blob records it.
    pub fn to_json(&self) -> Value {
        json!({
            "seed": self.seed,
            "hash_only": self.hash_only,
            "clock": self.clock.map(|clock| json!({"at": clock.at, "frozen": clock.frozen})),
            "tick_ms": self.tick_ms,
            "network_blocked": self.network_blocked,
            "cpus": self.cpus.map(Cpus::name),
            "stress": self.stress,
            "fresh_home": self.fresh_home,
            "scrubbed_env": self.scrubbed_env,
            "tz": self.tz,
        })
    }

    /// A perturbation from the repro blob, strictly: anything unexpected is an error.
    pub fn from_json(value: &Value) -> Result<Perturbation, String> {
        let object = value
            .as_object()
            .ok_or("the perturbation is not an object")?;
        const FIELDS: [&str; 10] = [
            "seed",
            "hash_only",
            "clock",
            "tick_ms",
            "network_blocked",
            "cpus",
            "stress",
            "fresh_home",
            "scrubbed_env",
            "tz",
        ];
        if let Some(key) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
            return Err(format!("unknown perturbation field `{key}`"));
        }
        let flag = |key: &str| -> Result<bool, String> {
            match object.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(value) => value
                    .as_bool()
                    .ok_or(format!("`{key}` is not true or false")),
            }
        };
        let seed = match object.get("seed") {
            None | Some(Value::Null) => None,
            Some(seed) => Some(seed.as_u64().ok_or("the seed is not a whole number")?),
        };
        let clock = match object.get("clock") {
            None | Some(Value::Null) => None,
            Some(clock) => Some(Clock {
                at: clock
                    .get("at")
                    .and_then(Value::as_f64)
                    .filter(|at| at.is_finite() && *at >= 0.0)
                    .ok_or("the clock has no valid `at`")?,
                frozen: clock
                    .get("frozen")
                    .and_then(Value::as_bool)
                    .ok_or("the clock has no `frozen`")?,
            }),
        };
        let tick_ms = match object.get("tick_ms") {
            None | Some(Value::Null) => None,
            Some(tick) => Some(
                tick.as_u64()
                    .filter(|tick| (1..=60_000).contains(tick))
                    .ok_or("`tick_ms` is not a number of milliseconds from 1 to 60000")?
                    as u32,
            ),
        };
        let cpus = match object.get("cpus") {
            None | Some(Value::Null) => None,
            Some(value) => Some(match value.as_str() {
                Some("one") => Cpus::One,
                Some("all") => Cpus::All,
                _ => return Err("`cpus` is neither \"one\" nor \"all\"".into()),
            }),
        };
        let hash_only = flag("hash_only")?;
        if hash_only && seed.is_none() {
            return Err("`hash_only` without a seed".into());
        }
        let tz = match object.get("tz") {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                value
                    .as_str()
                    .filter(|tz| !tz.is_empty() && !tz.contains('\0'))
                    .ok_or("`tz` is not a time zone name")?
                    .to_string(),
            ),
        };
        Ok(Perturbation {
            seed,
            hash_only,
            clock,
            tick_ms,
            network_blocked: flag("network_blocked")?,
            cpus,
            stress: flag("stress")?,
            fresh_home: flag("fresh_home")?,
            scrubbed_env: flag("scrubbed_env")?,
            tz,
        })
    }
}

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

/// The provoking values of a preload axis.
pub fn provocations(axis: Axis) -> Vec<Provocation> {
    match axis {
        Axis::Entropy => (1..=8u64)
            .map(|seed| Provocation {
                label: format!("entropy seed {seed}"),
                perturbation: Perturbation {
                    seed: Some(seed),
                    ..Perturbation::default()
                },
            })
            .collect(),
        Axis::Time => ADVERSARIAL_INSTANTS
            .iter()
            .map(|(label, at)| (label, at, None))
            .chain(
                DST_INSTANTS
                    .iter()
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
        Axis::Env => vec![Provocation {
            label: "a scrubbed environment".into(),
            perturbation: Perturbation {
                scrubbed_env: true,
                ..Perturbation::default()
            },
        }],
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(with_zone.len(), DST_INSTANTS.len());
        assert!(with_zone[0]
            .env()
            .contains(&("TZ", "America/New_York".to_string())));
    }

    #[test]
    fn perturbations_round_trip_and_decode_strictly() {
        let perturbation = Perturbation {
            seed: Some(7),
            hash_only: true,
            clock: Some(Clock {
                at: 1_773_146_100.0,
                frozen: true,
            }),
            tick_ms: Some(250),
            network_blocked: true,
            cpus: Some(Cpus::One),
            stress: true,
            fresh_home: true,
            scrubbed_env: true,
            tz: Some("America/New_York".into()),
        };
        assert_eq!(
            Perturbation::from_json(&perturbation.to_json()),
            Ok(perturbation)
        );
        assert!(Perturbation::from_json(&json!({"seed": 1, "weather": "x"})).is_err());
        assert!(Perturbation::from_json(&json!({"seed": -1})).is_err());
        assert!(Perturbation::from_json(&json!({"tz": ""})).is_err());
        assert!(Perturbation::from_json(&json!({"clock": {"at": "noon"}})).is_err());
        assert!(Perturbation::from_json(&json!({"cpus": "some"})).is_err());
        assert!(Perturbation::from_json(&json!({"tick_ms": 0})).is_err());
        assert!(Perturbation::from_json(&json!({"hash_only": true})).is_err());
        assert!(Perturbation::from_json(&json!({"stress": "yes"})).is_err());
    }

    #[test]
    fn axes_parse_by_name_and_name_the_accepted_ones() {
        assert_eq!(Axis::parse("time"), Ok(Axis::Time));
        assert_eq!(
            Axis::parse("weather"),
            Err(
                "unknown axis `weather`; the axes are entropy, time, scheduling, network, order, parallel, fs, env"
                    .into()
            )
        );
    }
}
