//! The axes of nondeterminism the doctor varies, by the names `--axes`, the verdicts and the
//! repro blob spell.

use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;

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
