//! The diagnosis loop: baseline, control sweep, provocation, verification, counterfactual, with
//! every gate of the contract; and for a test that fails only beside its siblings, the bisection
//! to the one that breaks it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::doctor::axes::{self, Axis, Perturbation};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::{Plan, Runner};

mod explain;
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

/// Whether every run ended alike (all passed, or all failed): the nondeterminism is gone.
fn uniform(endings: &[Ending]) -> bool {
    let (runs, failed) = tally(endings);
    failed == 0 || failed == runs
}

/// Whether pinning settled the outcome, given the baseline's `(runs, failed)`: every run alike
/// when the baseline varied; every run passing when the baseline failed throughout (failing
/// throughout again changes nothing).
fn settles(endings: &[Ending], (base_runs, base_failed): (u64, u64)) -> bool {
    if base_runs > 0 && base_failed == base_runs {
        tally(endings).1 == 0
    } else {
        uniform(endings)
    }
}

fn fingerprints(endings: &[Ending]) -> BTreeSet<String> {
    endings
        .iter()
        .filter_map(|ending| ending.fingerprint().map(str::to_string))
        .collect()
}

/// Axes as a phrase: "the clock, entropy and scheduling".
fn phrase(axes: &[Axis]) -> String {
    let names: Vec<&str> = axes
        .iter()
        .filter_map(|axis| match axis {
            Axis::Time => Some("the clock"),
            Axis::Entropy => Some("entropy"),
            Axis::Scheduling => Some("scheduling"),
            Axis::Network => Some("the network"),
            Axis::Fs => Some("the home directory"),
            Axis::Env => Some("the environment"),
            Axis::Order | Axis::Parallel => None,
        })
        .collect();
    match names.as_slice() {
        [] => "no axis".to_string(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
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

    /// The whole loop.
    pub fn diagnose(mut self) -> Diagnosis {
        let runs = self.settings.runs;
        let victim = self.victim().to_string();
        let base = self.sample(
            "baseline (isolated, no perturbation)",
            &Plan::alone(&victim, Perturbation::none()),
            runs,
            "",
        );
        self.baseline = tally(&base);
        self.reference = self.baseline;
        self.baseline_prints = fingerprints(&base);
        let (base_runs, base_failed) = self.baseline;
        self.progress(&format!("baseline {base_runs} runs ({base_failed} failed)"));

        let hangs = base
            .iter()
            .filter(|ending| **ending == Ending::Hang)
            .count();
        if hangs > 0 {
            return self.hang(hangs as u64);
        }
        let controlled = self.controlled_axes();
        if base_failed == base_runs {
            // Ten fast runs can share one bad second or one seed's fate, and a race can lose on
            // every run of a machine with many cores: only a test that also fails under full
            // control fails deterministically.
            if controlled.is_empty() {
                return self.deterministic(false);
            }
            // Two pinned values: one value of an axis can be a failing one (a seed whose hash
            // order breaks the test), and a test that fails under both fails whatever they are.
            let half = runs.div_ceil(2);
            let first = self.sample(
                "control: every axis pinned",
                &Plan::alone(&victim, axes::control(&controlled)),
                half,
                "",
            );
            let second = self.sample(
                "control: every axis pinned otherwise",
                &Plan::alone(&victim, axes::control_otherwise(&controlled)),
                runs - half,
                "",
            );
            if first.iter().chain(&second).all(Ending::failed) {
                return self.deterministic(true);
            }
            let pinned: Vec<Ending> = first.into_iter().chain(second).collect();
            self.reference = tally(&pinned);
            self.progress("the failures stop under control: flaky");
        }
        if base_failed == 0 {
            return self.diagnose_passing(&controlled);
        }
        self.diagnose_flaky(&controlled)
    }

    /// The axes the control sweep pins: of those asked for, the ones this machine and binary
    /// can pin (the clock and entropy need the preload library, scheduling more than one CPU).
    fn controlled_axes(&self) -> Vec<Axis> {
        self.settings
            .axes
            .iter()
            .copied()
            .filter(|axis| axis.is_controlled() && self.can_vary(*axis))
            .collect()
    }

    /// Whether `axis` can be varied for this binary on this machine.
    fn can_vary(&self, axis: Axis) -> bool {
        match axis {
            Axis::Scheduling => {
                self.runner.cpus() > 1 && crate::doctor::runner::first_cpu().is_some()
            }
            axis if axis.needs_preload() => self.runner.preload.is_some(),
            _ => true,
        }
    }

    /// A baseline with failures: which pinned axis stops them, then provoking it.
    fn diagnose_flaky(mut self, controlled: &[Axis]) -> Diagnosis {
        let victim = self.victim().to_string();
        let runs = self.settings.runs;
        let mut order: Vec<Axis> = controlled.to_vec();
        if !controlled.is_empty() {
            let control = self.sample(
                "control: every axis pinned",
                &Plan::alone(&victim, axes::control(controlled)),
                runs,
                "",
            );
            if settles(&control, self.baseline) {
                self.progress(
                    "every axis pinned: the outcome no longer varies; finding the stabilizer",
                );
                let mut stabilizers = Vec::new();
                if controlled.len() > 1 {
                    for axis in controlled {
                        let alone = self.sample(
                            &format!("control: {axis} alone pinned"),
                            &Plan::alone(&victim, axes::control(&[*axis])),
                            runs,
                            "",
                        );
                        if settles(&alone, self.baseline) {
                            stabilizers.push(*axis);
                        }
                    }
                } else {
                    stabilizers.push(controlled[0]);
                }
                // The stabilizer is swept first.
                order.sort_by_key(|axis| !stabilizers.contains(axis));
            }
        }
        for axis in self.provocable(&order) {
            if self.over_budget() {
                return self.incomplete();
            }
            if let Some(diagnosis) = self.provoke(axis) {
                return diagnosis;
            }
        }
        if self.settings.axes.contains(&Axis::Order) || self.settings.axes.contains(&Axis::Parallel)
        {
            if let Some(diagnosis) = self.siblings() {
                return diagnosis;
            }
        }
        self.unattributed()
    }

    /// A baseline that always passes: the victim among its siblings, after them in one thread
    /// and beside them in many; then every other axis provoked, for a latent bug (runs in quick
    /// succession sample the clock at nearly one instant, and can all miss its bad moments).
    fn diagnose_passing(mut self, controlled: &[Axis]) -> Diagnosis {
        if let Some(diagnosis) = self.siblings() {
            return diagnosis;
        }
        for axis in self.provocable(controlled) {
            if self.over_budget() {
                return self.incomplete();
            }
            if let Some(diagnosis) = self.provoke(axis) {
                return diagnosis;
            }
        }
        if self.over_budget() {
            return self.incomplete();
        }
        let runs = self.baseline.0;
        self.conclude(
            "not-flaky",
            None,
            "not flaky".into(),
            format!(
                "Passed {runs} of {runs} isolated runs, beside its binary's other tests (in one thread and in parallel), and with {} provoked. Nothing here makes it fail.",
                self.provoked_axes_text()
            ),
            None,
            None,
        )
    }

    /// The axes provoked by values of the victim's own run: the controlled axes given (in their
    /// order), then the network, `fs` and `env` when they are asked for and can be varied.
    fn provocable(&self, controlled: &[Axis]) -> Vec<Axis> {
        let mut axes = controlled.to_vec();
        for axis in [Axis::Network, Axis::Fs, Axis::Env] {
            if self.settings.axes.contains(&axis) && self.can_vary(axis) {
                axes.push(axis);
            }
        }
        axes
    }

    /// The axes the control sweep pins, as a phrase: "the clock, entropy and scheduling".
    fn controlled_axes_text(&self) -> String {
        phrase(&self.controlled_axes())
    }

    /// The axes provoked on the victim's own runs, as a phrase: "the clock, entropy and the
    /// network".
    fn provoked_axes_text(&self) -> String {
        phrase(&self.provocable(&self.controlled_axes()))
    }

    /// The significance gate: credit for a perturbation that failed `verify` (runs, failed)
    /// only when that beats the reference's rate (the baseline's) or, when the counterfactual
    /// passed every run, that benign value's, in Fisher's exact test (one-sided, 0.05). Returns
    /// the p-value, and whether the diagnosis is whole (n/n, and a counterfactual that passes)
    /// rather than "elevates the failure rate"; `None`, with a warning, for no credit.
    fn credit(
        &mut self,
        label: &str,
        verify: (u64, u64),
        counter: (u64, u64),
    ) -> Option<(f64, bool)> {
        let (verify_runs, verify_failed) = verify;
        let (ref_runs, ref_failed) = self.reference;
        let against_reference =
            gates::fisher_greater(verify_failed, verify_runs, ref_failed, ref_runs);
        // Both values of one axis, their runs taken in turns: a flake that this axis does not
        // decide fails about as often under either.
        let against_counter =
            gates::fisher_greater(verify_failed, verify_runs, counter.1, counter.0);
        let counter_passes = counter.0 > 0 && counter.1 == 0;
        let p_value = if counter_passes {
            against_reference.min(against_counter)
        } else {
            against_reference.max(against_counter)
        };
        if !gates::significant(p_value) {
            self.warnings.push(format!(
                "{label}: fails {verify_failed}/{verify_runs}, not significantly more than the baseline's {ref_failed}/{ref_runs} {} the benign value's {}/{} (Fisher's exact test, one-sided, p = {p_value:.3}): no credit",
                if counter_passes { "or" } else { "and" },
                counter.1,
                counter.0
            ));
            return None;
        }
        Some((p_value, verify_failed == verify_runs && counter_passes))
    }

    fn hang(mut self, hangs: u64) -> Diagnosis {
        let (runs, _) = self.baseline;
        let timeout = self.runner.timeout().as_secs_f64();
        self.conclude(
            "hang",
            None,
            "hangs".into(),
            format!(
                "{hangs} of {runs} isolated runs did not finish within {timeout:.0} s and were killed. A test that sometimes never ends waits on something that does not come: a lock, a channel, a thread, a network peer."
            ),
            None,
            None,
        )
    }

    fn deterministic(mut self, controlled: bool) -> Diagnosis {
        if !controlled {
            self.warnings.push(
                "no axis could be pinned for this binary (the clock and entropy need the preload library, scheduling more than one CPU): the failures were not checked under control".into(),
            );
        }
        let (runs, _) = self.baseline;
        let prints: Vec<String> = self.baseline_prints.iter().cloned().collect();
        self.conclude(
            "deterministic-failure",
            None,
            "fails every time".into(),
            format!(
                "Failed all {runs} isolated runs{}: this is a plain failure, not a flake. {}",
                if controlled {
                    format!(
                        ", and every run with {} pinned",
                        self.controlled_axes_text()
                    )
                } else {
                    String::new()
                },
                match prints.as_slice() {
                    [one] => format!("It {one}."),
                    _ => format!("It fails {} ways.", prints.len()),
                }
            ),
            None,
            None,
        )
    }

    fn unattributed(mut self) -> Diagnosis {
        let (runs, failed) = self.baseline;
        self.conclude(
            "flaky-unattributed",
            None,
            "flaky, cause outside the covered axes".into(),
            format!(
                "Failed {failed}/{runs} isolated runs, but no covered axis ({}, the tests before or beside it) decides it. For an LLM eval or a test of a randomized algorithm judged by its rate, this is expected: the evidence is above.",
                self.provoked_axes_text()
            ),
            None,
            None,
        )
    }

    fn incomplete(mut self) -> Diagnosis {
        let budget = self.settings.budget.as_secs();
        self.conclude(
            "incomplete",
            None,
            "out of time".into(),
            format!("The budget of {budget} s ran out before a diagnosis; the evidence so far is above. Raise --budget to go on."),
            None,
            None,
        )
    }

    fn conclude(
        &mut self,
        verdict: &str,
        claim: Option<&'static str>,
        headline: String,
        explanation: String,
        reproduction: Option<Reproduction>,
        culprit: Option<String>,
    ) -> Diagnosis {
        Diagnosis {
            verdict: verdict.to_string(),
            claim,
            headline,
            explanation,
            evidence: std::mem::take(&mut self.evidence),
            reproduction,
            culprit,
            warnings: std::mem::take(&mut self.warnings),
            baseline: self.baseline,
            p_value: None,
        }
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
