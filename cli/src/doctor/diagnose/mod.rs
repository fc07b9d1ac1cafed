//! The diagnosis loop: baseline, control sweep, provocation, verification, counterfactual, with
//! every gate of the contract; and for a test that fails only beside its siblings, the bisection
//! to the one that breaks it.
//!
//! This module holds what a diagnosis is made of and the doctor's runs, each recorded as
//! evidence; `flow` is the loop, `conclude` the significance gate and the verdicts without a
//! reproduction, `provoke` and `siblings` the searches for one.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::doctor::axes::Axis;
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::{Plan, Runner};

mod conclude;
mod explain;
mod flow;
mod provoke;
mod siblings;

/// One line of the evidence table.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    pub label: String,
    pub runs: u64,
    pub failed: u64,
    pub note: String,
}

/// How to make the test fail: the perturbation (or the tests beside or before it) that does.
#[derive(Clone, Debug, PartialEq)]
pub struct Reproduction {
    pub axis: Axis,
    /// The value, as the report shows it.
    pub value: String,
    /// The run that fails.
    pub plan: Plan,
    pub runs: u64,
    pub failed: u64,
    pub lower_bound: f64,
}

impl Reproduction {
    /// The reproduction that failed `failed` of `runs` verifying runs, with its lower bound.
    pub fn new(axis: Axis, value: String, plan: Plan, (runs, failed): (u64, u64)) -> Reproduction {
        Reproduction {
            axis,
            value,
            plan,
            runs,
            failed,
            lower_bound: gates::repro_lower_bound(failed, runs),
        }
    }
}

/// What the doctor concluded.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnosis {
    /// `flaky-entropy`, `not-flaky`, ...
    pub verdict: String,
    /// For a flaky verdict: `observed` (it explains the failures of the baseline) or `latent`
    /// (a different failure the doctor provoked).
    pub claim: Option<&'static str>,
    pub headline: String,
    pub explanation: String,
    pub evidence: Vec<Evidence>,
    pub reproduction: Option<Reproduction>,
    /// The sibling test that breaks the victim (order, parallel).
    pub culprit: Option<String>,
    pub warnings: Vec<String>,
    pub baseline: (u64, u64),
    pub p_value: Option<f64>,
}

impl Diagnosis {
    /// Whether a diagnosis was made (exit 0), rather than none (exit 1).
    pub fn made(&self) -> bool {
        self.verdict.starts_with("flaky-") && self.verdict != "flaky-unattributed"
            || self.verdict == "deterministic-failure"
            || self.verdict == "hang"
    }
}

/// The doctor's settings for one test.
pub struct Settings {
    /// Runs of the baseline and of the verification.
    pub runs: usize,
    /// The axes to vary.
    pub axes: Vec<Axis>,
    /// When to stop with `incomplete`.
    pub budget: Duration,
}

/// Runs of the counterfactual.
const COUNTERFACTUAL_RUNS: usize = 5;

/// Runs made for a set of endings, and how many failed.
fn tally(endings: &[Ending]) -> (u64, u64) {
    (
        endings.len() as u64,
        endings.iter().filter(|ending| ending.failed()).count() as u64,
    )
}

fn fingerprints(endings: &[Ending]) -> BTreeSet<String> {
    endings
        .iter()
        .filter_map(|ending| ending.fingerprint().map(str::to_string))
        .collect()
}

/// The doctor at work on one test.
pub struct Doctor<'a> {
    runner: &'a Runner,
    settings: &'a Settings,
    /// The binary's tests, in the order libtest runs them.
    tests: &'a [String],
    started: Instant,
    evidence: Vec<Evidence>,
    warnings: Vec<String>,
    baseline: (u64, u64),
    baseline_prints: BTreeSet<String>,
    /// The runs a provoked failure rate must beat: the baseline's, or, when the baseline failed
    /// every run (quick runs read the clock at nearly one instant) and pinning the axes made
    /// it pass, the pinned runs'.
    reference: (u64, u64),
}

impl<'a> Doctor<'a> {
    pub fn new(
        runner: &'a Runner,
        settings: &'a Settings,
        tests: &'a [String],
        warnings: Vec<String>,
    ) -> Doctor<'a> {
        Doctor {
            runner,
            settings,
            tests,
            started: Instant::now(),
            evidence: Vec::new(),
            warnings,
            baseline: (0, 0),
            baseline_prints: BTreeSet::new(),
            reference: (0, 0),
        }
    }

    fn victim(&self) -> &str {
        &self.runner.victim
    }

    fn over_budget(&self) -> bool {
        self.started.elapsed() >= self.settings.budget
    }

    /// Runs `plan` `count` times and records the evidence; returns the endings.
    fn sample(&mut self, label: &str, plan: &Plan, count: usize, note: &str) -> Vec<Ending> {
        let endings = self.runner.run_many(plan, count, plan.exclusive());
        let (runs, failed) = tally(&endings);
        let mut note = note.to_string();
        let hangs = endings.iter().filter(|e| **e == Ending::Hang).count();
        if hangs > 0 && !label.starts_with("baseline") {
            note = format!(
                "{note}{}{hangs} hung",
                if note.is_empty() { "" } else { "; " }
            );
        }
        self.evidence.push(Evidence {
            label: label.to_string(),
            runs,
            failed,
            note,
        });
        endings
    }

    /// The verification and the counterfactual, their runs taking turns (see
    /// `Runner::run_interleaved`), each recorded as evidence.
    fn verify_and_counter(
        &mut self,
        (label, plan): (&str, &Plan),
        (counter_label, counter_plan): (&str, &Plan),
    ) -> (Vec<Ending>, Vec<Ending>) {
        let serial = plan.exclusive() || counter_plan.exclusive();
        let (verify, counter) = self.runner.run_interleaved(
            (plan, self.settings.runs),
            (counter_plan, COUNTERFACTUAL_RUNS),
            serial,
        );
        for (label, endings) in [(label, &verify), (counter_label, &counter)] {
            let (runs, failed) = tally(endings);
            self.evidence.push(Evidence {
                label: label.to_string(),
                runs,
                failed,
                note: String::new(),
            });
        }
        let (runs, failed) = tally(&verify);
        let at = self.evidence.len() - 2;
        self.evidence[at].note = if failed == runs {
            "✓ deterministic".into()
        } else {
            format!("✗ fails {failed}/{runs}")
        };
        self.evidence[at + 1].note = if tally(&counter).1 == 0 {
            "✓ passes".into()
        } else {
            "✗ fails too".into()
        };
        (verify, counter)
    }

    fn progress(&self, text: &str) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "doctor: {text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_diagnosis_with_a_culprit_or_a_perturbation_counts_as_made() {
        let diagnosis = |verdict: &str| Diagnosis {
            verdict: verdict.into(),
            claim: None,
            headline: String::new(),
            explanation: String::new(),
            evidence: Vec::new(),
            reproduction: None,
            culprit: None,
            warnings: Vec::new(),
            baseline: (10, 0),
            p_value: None,
        };
        for made in [
            "flaky-entropy",
            "flaky-order",
            "deterministic-failure",
            "hang",
        ] {
            assert!(diagnosis(made).made(), "{made}");
        }
        for none in ["not-flaky", "flaky-unattributed", "incomplete"] {
            assert!(!diagnosis(none).made(), "{none}");
        }
    }
}
