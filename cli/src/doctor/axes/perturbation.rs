//! What a run changes in the victim's process (a seed, a clock, tick jitter, a blocked network,
//! its CPUs and the load beside it, a fresh home, a scrubbed environment, a time zone), the
//! environment variables that apply it, and its form in the repro blob.

use serde_json::{json, Value};

use crate::doctor::preload::{
    ENV_NET, ENV_SEED, ENV_SEED_SCOPE, ENV_TICK_MS, ENV_TIME, ENV_TIME_FROZEN,
};

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

#[cfg(test)]
mod tests {
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
}
