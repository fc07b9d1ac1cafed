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
mod leave_out;
mod provoke;
mod races;
mod siblings;
mod signatures;

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
    /// The lower bound, at 95%, on the failure rate per run of the plan.
    pub lower_bound: f64,
    /// For a stress repro (a race, which fails some runs): the most runs of the plan to make
    /// until one fails.
    pub attempts: Option<u64>,
    /// How the verifying runs failed.
    pub fingerprints: BTreeSet<String>,
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
            attempts: None,
            fingerprints: BTreeSet::new(),
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
    /// Latent findings made on the way: bugs the doctor provoked that are not the failure
    /// seen.
    pub also_found: Vec<Latent>,
    /// The ways the test failed unperturbed, when there were several, each with its cause.
    pub signatures: Vec<Signature>,
}

/// One way a test failed unperturbed.
#[derive(Clone, Debug, PartialEq)]
pub struct Signature {
    pub fingerprint: String,
    /// Unperturbed runs that failed this way.
    pub seen: u64,
    /// What makes it fail this way (`entropy: entropy seed 12`), if anything found does.
    pub cause: Option<String>,
}

/// A latent finding listed beneath a diagnosis.
#[derive(Clone, Debug, PartialEq)]
pub struct Latent {
    pub verdict: String,
    pub headline: String,
    /// The value that provoked it, as the report shows it.
    pub value: String,
}

/// What the race search covered, for the power a `not-flaky` verdict states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub siblings: usize,
    pub suite_runs: u64,
    pub fewest_pair_runs: u64,
}

impl Diagnosis {
    /// No diagnosis, because the runs could not be set up: `why`.
    pub fn cannot_run(why: String) -> Diagnosis {
        Diagnosis {
            verdict: "incomplete".into(),
            claim: None,
            headline: "could not run the test".into(),
            explanation: why,
            evidence: Vec::new(),
            reproduction: None,
            culprit: None,
            warnings: Vec::new(),
            baseline: (0, 0),
            p_value: None,
            also_found: Vec::new(),
            signatures: Vec::new(),
        }
    }

    /// Whether a diagnosis was made (exit 0), rather than none (exit 1): a flaky verdict, an
    /// unattributed one included (the test failed, unperturbed, and passed too), a plain
    /// failure or a hang.
    pub fn made(&self) -> bool {
        self.verdict.starts_with("flaky-")
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
    /// What the user's report says of the row, when the victim is a probtest row's item.
    pub prior: Option<Prior>,
}

/// A row's record in the user's report: the evidence the user has before the doctor runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Prior {
    /// The report's path, as shown.
    pub report: String,
    pub runs: u64,
    pub failed: u64,
    /// The failing runs' numbers.
    pub failing_runs: Vec<u64>,
    /// The failing runs' fingerprints, as the doctor's runs of a row read them.
    pub fingerprints: BTreeSet<String>,
}

/// The most baseline runs a prior rate asks for.
const MOST_BASELINE_RUNS: usize = 200;

impl Settings {
    /// The baseline's runs: `--runs`, or more when the report's rate says a failure could be
    /// missed in that many (at 4 failures in 40, 29 runs see one with 95% probability).
    pub fn baseline_runs(&self) -> usize {
        let sized = self
            .prior
            .as_ref()
            .filter(|prior| prior.failed > 0 && prior.runs > 0)
            .map_or(0, |prior| {
                gates::runs_to_see(prior.failed as f64 / prior.runs as f64, 0.05)
            });
        self.runs.max(sized.min(MOST_BASELINE_RUNS))
    }

    /// The baseline's note: the report's rate that sized it.
    pub fn prior_note(&self) -> String {
        match &self.prior {
            Some(prior) if prior.failed > 0 => format!(
                "sized from the report's {}/{} failed",
                prior.failed, prior.runs
            ),
            _ => String::new(),
        }
    }
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
    /// Latent findings so far.
    latent: Vec<Diagnosis>,
    /// What the race search covered.
    searched: Option<Search>,
    /// Runs of the victim alone, unperturbed, taken during a later stage, that failed: the
    /// baseline missed a failure of its own runs.
    fails_alone: Option<(u64, u64)>,
    /// How the doctor's unperturbed runs alone failed, with how often.
    seen_prints: std::collections::BTreeMap<String, u64>,
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
            baseline_prints: settings
                .prior
                .as_ref()
                .map(|prior| prior.fingerprints.clone())
                .unwrap_or_default(),
            reference: (0, 0),
            latent: Vec::new(),
            searched: None,
            fails_alone: None,
            seen_prints: std::collections::BTreeMap::new(),
        }
    }

    fn victim(&self) -> &str {
        &self.runner.victim
    }

    /// Whether the budget is spent: by the diagnosis's own runs, or by what the runner did
    /// before it (the run watching for side effects), which its deadline counts.
    fn over_budget(&self) -> bool {
        self.started.elapsed() >= self.settings.budget || self.runner.out_of_time()
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
            also_found: Vec::new(),
            signatures: Vec::new(),
        };
        for made in [
            "flaky-entropy",
            "flaky-unattributed",
            "flaky-order",
            "deterministic-failure",
            "hang",
        ] {
            assert!(diagnosis(made).made(), "{made}");
        }
        for none in ["not-flaky", "incomplete"] {
            assert!(!diagnosis(none).made(), "{none}");
        }
    }
}
