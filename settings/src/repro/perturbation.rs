//! What a run changes in the victim's process (a seed, a clock, tick jitter, a blocked network,
//! its CPUs and the load beside it, a fresh home, a scrubbed environment, a time zone), the
//! environment variables that apply it, and its form in the repro blob, held to values a run
//! applies as it says.

use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::variables::{ENV_NET, ENV_SEED, ENV_SEED_SCOPE, ENV_TICK_MS, ENV_TIME, ENV_TIME_FROZEN};
use super::{fields_of, shown, shown_json, unknown_field};

/// A wall clock pinned by the preload library.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// Where it starts: seconds since the Unix epoch.
    #[serde(deserialize_with = "clock_at")]
    pub at: f64,
    /// Whether it stays there.
    #[serde(deserialize_with = "clock_frozen")]
    pub frozen: bool,
}

/// The CPUs a run's process may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Cpus {
    /// The first CPU the doctor may use: the victim's threads take turns.
    One,
    /// Every CPU the doctor may use: the victim's threads run at once.
    All,
}

/// What a run changes in the victim's process; in the repro blob, this struct's fields and no
/// other. They are in the order serde_json sorted them when the blob was built as a map, so that
/// a repro's blob is the same text it always was; a missing field reads as `null` or `false`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Perturbation {
    /// The wall clock.
    #[serde(default, deserialize_with = "clock")]
    pub clock: Option<Clock>,
    /// The CPUs the process may use; `None` leaves it as the doctor's.
    #[serde(default, deserialize_with = "cpus")]
    pub cpus: Option<Cpus>,
    /// A fresh, empty home directory (`HOME` and the XDG directories in it) instead of the
    /// user's.
    #[serde(default, deserialize_with = "fresh_home")]
    pub fresh_home: bool,
    /// The seed pins std's hash keys only; every other draw is real.
    #[serde(default, deserialize_with = "hash_only")]
    pub hash_only: bool,
    /// Connections to other machines fail, as without a route.
    #[serde(default, deserialize_with = "network_blocked")]
    pub network_blocked: bool,
    /// The environment scrubbed to what a test needs to start (see [`KEPT_VARIABLES`]).
    #[serde(default, deserialize_with = "scrubbed_env")]
    pub scrubbed_env: bool,
    /// The seed of every draw from the OS.
    #[serde(default, deserialize_with = "seed")]
    pub seed: Option<u64>,
    /// Busy threads beside the run, on the CPUs it may use.
    #[serde(default, deserialize_with = "stress")]
    pub stress: bool,
    /// Tick jitter: every read of a clock at least this many milliseconds after the last.
    #[serde(default, deserialize_with = "tick_ms")]
    pub tick_ms: Option<u32>,
    /// The time zone (`TZ`): where the local time of a pinned clock is.
    #[serde(default, deserialize_with = "tz")]
    pub tz: Option<String>,
    /// The XDG base directories set to their defaults under `HOME`, as many desktops set them
    /// and a CI runner does not (or the other way round).
    #[serde(default, deserialize_with = "xdg_dirs")]
    pub xdg_dirs: bool,
}

/// What a scrubbed environment keeps: how to find programs and libraries, the home directory
/// (the `fs` axis varies it), and what cargo gives a test.
pub const KEPT_VARIABLES: &[&str] = &["PATH", "HOME", "LD_LIBRARY_PATH", "TMPDIR"];

/// The XDG base directories and their defaults under `HOME`.
pub const XDG_DIRS: [(&str, &str); 4] = [
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_STATE_HOME", ".local/state"),
];

impl Perturbation {
    /// The variables that give a run its home, `fresh` being the run's fresh home directory
    /// (made by the caller): with `fresh_home`, `HOME` is `fresh` and the XDG directories this
    /// process sets move into it, since they would still lead to the user's files (unset ones
    /// stay unset); with `xdg_dirs`, every XDG directory at its default under this process's
    /// `HOME`.
    pub fn home_env(&self, fresh: &std::path::Path) -> Vec<(&'static str, std::path::PathBuf)> {
        let mut env = Vec::new();
        if self.fresh_home {
            env.push(("HOME", fresh.to_path_buf()));
            for (name, under) in XDG_DIRS {
                if std::env::var_os(name).is_some() {
                    env.push((name, fresh.join(under)));
                }
            }
        }
        if self.xdg_dirs {
            if let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from) {
                for (name, under) in XDG_DIRS {
                    env.push((name, home.join(under)));
                }
            }
        }
        env
    }

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
        // Numbers, strings and booleans only: serializing cannot fail.
        serde_json::to_value(self).unwrap_or_default()
    }

    /// A perturbation from the repro blob, strictly: anything unexpected is an error, and every
    /// value is one [`Perturbation::check`] accepts.
    pub fn from_json(value: &Value) -> Result<Perturbation, String> {
        let object = value
            .as_object()
            .ok_or("the perturbation is not an object")?;
        unknown_field::<Perturbation>(object, "unknown perturbation field")?;
        // A `Value` carries no position: an error is the reader's own message alone.
        let perturbation = Perturbation::deserialize(value)
            .map_err(|error: serde_json::Error| error.to_string())?;
        perturbation.check()?;
        Ok(perturbation)
    }

    /// Whether every value is one the run can apply as it says: a clock the preload library
    /// pins, a tick it accepts, a time zone this machine has. A value it would ignore would
    /// leave a run that claims a perturbation it does not make.
    pub fn check(&self) -> Result<(), String> {
        if self.hash_only && self.seed.is_none() {
            return Err("`hash_only` without a seed".into());
        }
        if let Some(clock) = self.clock {
            check_clock(clock.at)?;
        }
        if let Some(tick) = self.tick_ms {
            if !(1..=MAX_TICK_MS).contains(&tick) {
                return Err(TICK_RANGE.into());
            }
        }
        if let Some(tz) = &self.tz {
            check_zone(tz)?;
        }
        Ok(())
    }
}

/// The latest instant the preload library pins, in whole seconds: its `parse_instant` refuses
/// more than `INT64_MAX / 4`, so that adding the time elapsed since can never overflow, and
/// leaves the clock real.
pub const MAX_CLOCK_SECONDS: u64 = i64::MAX as u64 / 4;

/// The longest tick the preload library accepts (`PROBTEST_DOCTOR_TICK_MS`), in milliseconds.
const MAX_TICK_MS: u32 = 60_000;

const TICK_RANGE: &str = "`tick_ms` is not a number of milliseconds from 1 to 60000";

/// Where `TZ` names are looked up: the zone files glibc reads.
const ZONEINFO: &str = "/usr/share/zoneinfo";

/// A field's JSON value; `None` for `null`.
fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Ok(Option::<Value>::deserialize(deserializer)?.filter(|value| !value.is_null()))
}

macro_rules! flags {
    ($($key:ident),*) => {$(
        /// A flag: `null` is `false`, anything but a boolean is refused by its name.
        fn $key<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
            match value(deserializer)? {
                None => Ok(false),
                Some(Value::Bool(flag)) => Ok(flag),
                Some(_) => Err(D::Error::custom(concat!(
                    "`",
                    stringify!($key),
                    "` is not true or false"
                ))),
            }
        }
    )*};
}

flags!(
    fresh_home,
    hash_only,
    network_blocked,
    scrubbed_env,
    stress,
    xdg_dirs
);

fn seed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    value(deserializer)?
        .map(|seed| {
            seed.as_u64().ok_or(D::Error::custom(format!(
                "the seed {} is not a whole number from 0 to {}",
                shown_json(&seed),
                u64::MAX
            )))
        })
        .transpose()
}

fn tick_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u32>, D::Error> {
    value(deserializer)?
        .map(|tick| {
            tick.as_u64()
                .and_then(|tick| u32::try_from(tick).ok())
                .ok_or(D::Error::custom(TICK_RANGE))
        })
        .transpose()
}

fn cpus<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Cpus>, D::Error> {
    value(deserializer)?
        .map(|cpus| match cpus.as_str() {
            Some("one") => Ok(Cpus::One),
            Some("all") => Ok(Cpus::All),
            _ => Err(D::Error::custom("`cpus` is neither \"one\" nor \"all\"")),
        })
        .transpose()
}

fn tz<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match value(deserializer)? {
        None => Ok(None),
        Some(Value::String(tz)) => Ok(Some(tz)),
        Some(_) => Err(D::Error::custom("the time zone is not a string")),
    }
}

/// A clock of the repro blob: `{"at": seconds, "frozen": bool}` and nothing else.
fn clock<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Clock>, D::Error> {
    let Some(clock) = value(deserializer)? else {
        return Ok(None);
    };
    let object = clock
        .as_object()
        .ok_or(D::Error::custom("the clock is not an object"))?;
    unknown_field::<Clock>(object, "unknown clock field").map_err(D::Error::custom)?;
    if let Some(missing) = fields_of::<Clock>()
        .iter()
        .find(|key| !object.contains_key(**key))
    {
        return Err(D::Error::custom(format!("the clock has no `{missing}`")));
    }
    Clock::deserialize(&clock)
        .map(Some)
        .map_err(|error| D::Error::custom(error.to_string()))
}

fn clock_at<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let at = Value::deserialize(deserializer)?;
    at.as_f64().ok_or(D::Error::custom(format!(
        "the clock's `at` {} is not a number of seconds",
        shown_json(&at)
    )))
}

fn clock_frozen<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Value::deserialize(deserializer)?
        .as_bool()
        .ok_or(D::Error::custom("the clock has no `frozen`"))
}

/// Whether the preload library pins the clock at `at`: what [`Perturbation::env`] writes of it
/// (`{:.3}`, never signed nor in exponent form for these) is digits it parses.
fn check_clock(at: f64) -> Result<(), String> {
    // A float to integer `as` saturates, so an instant past the range stays past it; the sign
    // bit refuses -0.0 too, which prints as `-0.000`.
    if at.is_finite() && at.is_sign_positive() && at.trunc() as u64 <= MAX_CLOCK_SECONDS {
        Ok(())
    } else {
        // 1e300 reads better than its 301 digits.
        let at = if at.abs() < 1e21 {
            at.to_string()
        } else {
            format!("{at:e}")
        };
        Err(format!(
            "the clock's `at` {at} is not a number of seconds from 0 to {MAX_CLOCK_SECONDS}, \
             the instants the preload library pins"
        ))
    }
}

/// Whether `tz` names a zone this machine has: `UTC`, or a file under [`ZONEINFO`] named by a
/// relative path of letters, digits and `/_+-`. glibc also reads `TZ` as an absolute path, a
/// `:`-prefixed one or a rule of its own; none of those is something a repro needs.
fn check_zone(tz: &str) -> Result<(), String> {
    if tz == "UTC" {
        return Ok(());
    }
    let well_formed = !tz.is_empty()
        && tz.len() <= 128
        && !tz.starts_with(['/', ':'])
        && tz
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/_+-".contains(c))
        && tz.split('/').all(|part| !part.is_empty() && part != "..");
    if !well_formed {
        return Err(format!(
            "the time zone {} is not a zone name (letters, digits, `/`, `_`, `+` and `-`, \
             relative, no `..`)",
            shown(tz)
        ));
    }
    let file = std::path::Path::new(ZONEINFO).join(tz);
    if !file.is_file() {
        return Err(format!(
            "the time zone {} is not one this machine has (no {})",
            shown(tz),
            file.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
            xdg_dirs: true,
            tz: Some("UTC".into()),
        };
        assert_eq!(
            Perturbation::from_json(&perturbation.to_json()),
            Ok(perturbation)
        );
        for (value, error) in [
            (
                json!({"seed": 1, "weather": "x"}),
                "unknown perturbation field",
            ),
            (json!({"seed": -1}), "seed -1 is not a whole number"),
            (
                json!({"seed": 18_446_744_073_709_551_616_f64}),
                "not a whole number from 0 to 18446744073709551615",
            ),
            (json!({"seed": "x"}), "not a whole number"),
            (json!({"tz": ""}), "not a zone name"),
            (json!({"tz": 3}), "time zone is not a string"),
            (
                json!({"clock": {"at": "noon", "frozen": false}}),
                "not a number",
            ),
            (json!({"clock": {"at": 1.0}}), "no `frozen`"),
            (json!({"clock": {"frozen": true}}), "no `at`"),
            (
                json!({"clock": {"at": 1.0, "frozen": true, "zone": "x"}}),
                "unknown clock field",
            ),
            (json!({"cpus": "some"}), "neither"),
            (json!({"tick_ms": 0}), "tick_ms"),
            (json!({"tick_ms": 60_001}), "tick_ms"),
            (json!({"tick_ms": 5_000_000_000_u64}), "tick_ms"),
            (json!({"hash_only": true}), "without a seed"),
            (json!({"stress": "yes"}), "not true or false"),
        ] {
            let decoded = Perturbation::from_json(&value);
            assert!(
                decoded.as_ref().is_err_and(|e| e.contains(error)),
                "{value}: {decoded:?}"
            );
        }
    }

    #[test]
    fn only_clocks_the_preload_library_pins_are_accepted() {
        let clock =
            |at: f64| Perturbation::from_json(&json!({"clock": {"at": at, "frozen": false}}));
        // The largest float below 2^61, the first past INT64_MAX / 4.
        let latest = 2f64.powi(61) - 256.0;
        for at in [0.0, 1.5, 2_147_483_647.0, latest] {
            let perturbation = clock(at).expect("a clock in range");
            let (_, value) = perturbation
                .env()
                .into_iter()
                .find(|(name, _)| *name == ENV_TIME)
                .expect("the clock's variable");
            // What the preload library's parse_instant accepts: digits, `.`, digits, the whole
            // part at most INT64_MAX / 4.
            let (whole, fraction) = value.split_once('.').expect("a fraction");
            assert!(whole
                .bytes()
                .chain(fraction.bytes())
                .all(|b| b.is_ascii_digit()));
            assert!(whole
                .parse::<u64>()
                .is_ok_and(|whole| whole <= MAX_CLOCK_SECONDS));
        }
        for at in [2f64.powi(61), 1e300, f64::MAX, -1.0, -0.0, -1e-9] {
            let decoded = clock(at);
            assert!(
                decoded
                    .as_ref()
                    .is_err_and(|e| e.contains("from 0 to 2305843009213693951")),
                "{at}: {decoded:?}"
            );
        }
        assert!(clock(1e300).is_err_and(|e| e.contains("1e300")));
        // JSON holds no NaN nor infinity: serde_json writes them as null, a clock without `at`.
        for at in [f64::NAN, f64::INFINITY] {
            assert!(clock(at).is_err(), "{at}");
        }
        let mut infinite = Perturbation::none();
        infinite.clock = Some(Clock {
            at: f64::NAN,
            frozen: true,
        });
        assert!(infinite.check().is_err());
    }

    #[test]
    fn only_zones_this_machine_has_are_accepted() {
        let zone = |tz: &str| Perturbation::from_json(&json!({ "tz": tz }));
        assert!(zone("UTC").is_ok());
        for tz in [
            "../../etc/passwd",
            "/etc/localtime",
            ":/etc/passwd",
            ":Europe/Berlin",
            "Europe/../../etc/passwd",
            "Europe//Berlin",
            "Europe/Berlin\n",
            "CET-1CEST,M3.5.0,M10.5.0/3",
            "",
        ] {
            let decoded = zone(tz);
            assert!(
                decoded
                    .as_ref()
                    .is_err_and(|e| e.contains("is not a zone name")),
                "{tz:?}: {decoded:?}"
            );
        }
        for tz in ["Nowhere/City", "America"] {
            let decoded = zone(tz);
            assert!(
                decoded
                    .as_ref()
                    .is_err_and(|e| e.contains("not one this machine has")),
                "{tz:?}: {decoded:?}"
            );
        }
        // A real zone passes where the machine has it.
        if std::path::Path::new(ZONEINFO)
            .join("America/New_York")
            .is_file()
        {
            assert!(zone("America/New_York").is_ok());
        }
    }
}
