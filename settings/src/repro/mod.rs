//! The repro blob, `pd1:<base64url of JSON>`: which test, of which package and target, under
//! which perturbation (or beside or after which sibling). A blob is pasted from elsewhere, so it
//! decodes to a closed set: names of a fixed charset, a target kind from a fixed list, values the
//! preload library applies, no unknown field. The `cargo test` arguments that build its test are
//! made here from those, never read from the blob: a blob can run nothing but the test it names.
//!
//! The format has one owner, this module, read by all three sides: the doctor writes and reads
//! blobs, `#[probtest::repro]` checks its blob at compile time, and the runtime applies it when
//! the test runs. `axis` names the axes, `perturbation` what a run changes and the variables
//! that apply it (`variables`), `payload` the wire shape, `names` the rules for the names,
//! `describe` how a perturbation reads.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};

mod axis;
mod describe;
mod names;
mod payload;
mod perturbation;
#[cfg(test)]
mod tests;
pub mod variables;

pub use axis::Axis;
pub use describe::{describe, utc};
use names::{check_name, check_test};
pub use names::{shown, shown_json, TargetKind};
pub use payload::{fields_of, unknown_field};
use payload::{Payload, MOST_THREADS, THREADS_RANGE};
pub use perturbation::{Clock, Cpus, Perturbation, KEPT_VARIABLES, MAX_CLOCK_SECONDS};

/// One run of a test binary: which tests, on how many threads, under what.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The tests run, the victim among them (libtest runs them in name order).
    pub tests: Vec<String>,
    /// `--test-threads`: `None` for libtest's default (one thread per core).
    pub threads: Option<usize>,
    /// What the run changes in the process.
    pub perturbation: Perturbation,
}

impl Plan {
    /// Whether the run must have the machine to itself: tests that run beside each other (which
    /// would meet another run's through the files and ports they share), or a run whose
    /// scheduling is the point.
    pub fn exclusive(&self) -> bool {
        self.tests.len() > 1 || self.perturbation.schedules()
    }

    /// The victim alone, on one thread.
    pub fn alone(victim: &str, perturbation: Perturbation) -> Plan {
        Plan {
            tests: vec![victim.to_string()],
            threads: Some(1),
            perturbation,
        }
    }
}

/// The blob's prefix, with its format's version.
const PREFIX: &str = "pd1:";
/// The payload's version. Version 1 named its target as free `cargo test` arguments.
const VERSION: u64 = 2;

/// What a repro blob says.
#[derive(Clone, Debug, PartialEq)]
pub struct Repro {
    /// The package of the test's binary.
    pub package: String,
    /// The kind of its target.
    pub kind: TargetKind,
    /// The target's name; `None` for the library.
    pub target: Option<String>,
    /// The test that fails.
    pub test: String,
    /// The axis the perturbation is on.
    pub axis: Axis,
    /// The run that makes it fail.
    pub plan: Plan,
    /// For a stress repro (a race): the most runs of the plan to make until one fails; `None`
    /// for one run.
    pub attempts: Option<u64>,
}

impl Repro {
    /// The repro of `test` of the target `target` of `package`, of the kind cargo's messages
    /// name `cargo_kind`, failing under `plan`; an error when the names or the plan's values are
    /// not ones a blob can carry (a blob that would be refused is no repro).
    pub fn for_target(
        package: &str,
        cargo_kind: &str,
        target: &str,
        test: &str,
        axis: Axis,
        plan: Plan,
    ) -> Result<Repro, String> {
        let kind = TargetKind::of_cargo(cargo_kind).ok_or(format!(
            "a target of kind {} cannot be named in a repro",
            shown(cargo_kind)
        ))?;
        let repro = Repro {
            package: package.to_string(),
            kind,
            target: (kind != TargetKind::Lib).then(|| target.to_string()),
            test: test.to_string(),
            axis,
            plan,
            attempts: None,
        };
        repro.check()?;
        Ok(repro)
    }

    /// The `cargo test` arguments that select the test's binary alone, made from the checked
    /// names.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = vec!["-p".to_string(), self.package.clone()];
        match (&self.target, self.kind) {
            (Some(target), kind) if kind != TargetKind::Lib => {
                args.push(format!("--{}", kind.name()));
                args.push(target.clone());
            }
            _ => args.push("--lib".to_string()),
        }
        args
    }

    /// The blob.
    pub fn encode(&self) -> String {
        let payload = Payload {
            v: VERSION,
            attempts: self.attempts,
            axis: Some(self.axis.name().to_string()),
            kind: Some(self.kind.name().to_string()),
            package: Some(self.package.clone()),
            perturbation: Some(self.plan.perturbation.clone()),
            target: self.target.clone(),
            test: Some(self.test.clone()),
            tests: Some(self.plan.tests.clone()),
            threads: self.plan.threads,
        };
        // Strings, numbers and booleans only: serializing cannot fail.
        let json = serde_json::to_string(&payload).unwrap_or_default();
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
    }

    /// The repro of `blob`, or why it is not one.
    pub fn decode(blob: &str) -> Result<Repro, String> {
        let Some(body) = blob.strip_prefix(PREFIX) else {
            return Err(match blob.split_once(':') {
                Some((prefix, _)) if prefix.starts_with("pd") => format!(
                    "a repro blob of format {}, newer than this probtest reads (pd1)",
                    shown(prefix)
                ),
                _ => "not a repro blob (it starts with `pd1:`)".to_string(),
            });
        };
        let bytes = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| "the blob is not base64url")?;
        let payload: Value = serde_json::from_slice(&bytes)
            .map_err(|error| format!("the blob's payload is not JSON ({error})"))?;
        let object = payload
            .as_object()
            .ok_or("the blob's payload is not an object")?;
        // The version first: an older payload has fields this one does not know.
        check_version(object)?;
        unknown_field::<Payload>(object, "the blob has an unknown field")?;
        // A `Value` carries no position: an error is the reader's own message alone.
        let payload: Payload =
            serde_json::from_value(payload).map_err(|error| error.to_string())?;
        let kind = payload.kind.ok_or("the blob has no `kind` string")?;
        let kind = TargetKind::parse(&kind).ok_or(format!(
            "the blob's target kind {} is not one of lib, test, bin, example, bench",
            shown(&kind)
        ))?;
        let repro = Repro {
            attempts: payload.attempts,
            package: payload.package.ok_or("the blob has no `package` string")?,
            kind,
            target: payload.target,
            test: payload.test.ok_or("the blob has no `test` string")?,
            axis: parse_axis(&payload.axis.ok_or("the blob has no `axis` string")?)?,
            plan: Plan {
                tests: payload.tests.ok_or("the blob has no `tests` list")?,
                threads: payload.threads,
                perturbation: payload.perturbation.ok_or("the blob has no perturbation")?,
            },
        };
        repro.check()?;
        Ok(repro)
    }

    /// Whether `#[probtest::repro]` above the test can carry the repro; the error says what to
    /// run instead. The order and parallel axes need other tests in the run, a race's stress
    /// repro many runs, and the scheduling axis a pinned CPU and load beside the run:
    /// `cargo probtest repro` runs those.
    pub fn carried_by_attribute(&self) -> Result<(), String> {
        let carried = matches!(
            self.axis,
            Axis::Entropy | Axis::Time | Axis::Network | Axis::Env | Axis::Fs
        );
        if carried && self.attempts.is_none() && self.plan.tests.len() == 1 {
            return Ok(());
        }
        Err(format!(
            "a repro on the {} axis cannot be carried by an attribute: it needs {}; run \
             `cargo probtest repro <blob>` instead",
            self.axis,
            match self.axis {
                Axis::Order | Axis::Parallel => "other tests in its run",
                Axis::Scheduling => "a pinned CPU and load beside its run",
                _ => "many runs",
            }
        ))
    }

    /// Whether every name and value is one a blob may carry: the same rules for a blob the
    /// doctor makes and one pasted from elsewhere.
    fn check(&self) -> Result<(), String> {
        check_name("package", &self.package)?;
        match (self.kind, &self.target) {
            (TargetKind::Lib, Some(_)) => {
                return Err("the blob names a target for `lib`, which has none".into())
            }
            (TargetKind::Lib, None) => {}
            (kind, None) => {
                return Err(format!(
                    "the blob names no target for kind `{}`",
                    kind.name()
                ))
            }
            (_, Some(target)) => check_name("target", target)?,
        }
        check_test("test", &self.test)?;
        for sibling in &self.plan.tests {
            check_test("sibling test", sibling)?;
        }
        if !self.plan.tests.contains(&self.test) {
            return Err("the blob's run does not run its test".into());
        }
        if self
            .plan
            .threads
            .is_some_and(|threads| !(1..=MOST_THREADS).contains(&threads))
        {
            return Err(THREADS_RANGE.into());
        }
        self.plan
            .perturbation
            .check()
            .map_err(|problem| format!("the blob's perturbation: {problem}"))
    }
}

/// The axis a blob names, spelt exactly as the doctor spells it.
fn parse_axis(name: &str) -> Result<Axis, String> {
    Axis::ALL
        .into_iter()
        .find(|axis| axis.name() == name)
        .ok_or(format!(
            "the blob's axis {} is not one of {}",
            shown(name),
            Axis::ALL.map(Axis::name).join(", ")
        ))
}

/// Refuses a payload of another version; version 1's `select` went onto cargo's command line.
fn check_version(object: &Map<String, Value>) -> Result<(), String> {
    const OLDER: &str = "the blob was made by an older probtest, whose blobs this one no \
                         longer runs; run the doctor again for a new one";
    if object.contains_key("select") {
        return Err(OLDER.into());
    }
    match object.get("v").map(|v| (v, v.as_u64())) {
        Some((_, Some(VERSION))) => Ok(()),
        Some((_, Some(version))) if version < VERSION => Err(OLDER.into()),
        Some((_, Some(version))) => Err(format!(
            "the blob is of version {version}, newer than this probtest reads ({VERSION})"
        )),
        Some((version, None)) => Err(format!(
            "the blob's version {} is not a version",
            shown_json(version)
        )),
        None => Err("the blob has no version".into()),
    }
}
