//! The significance gate a provoked failure must pass for credit, and the verdicts that need
//! no reproduction: a hang, a plain failure, a flake outside the covered axes, a budget spent.

use crate::doctor::diagnose::{Diagnosis, Doctor, Reproduction};
use crate::doctor::gates;

impl Doctor<'_> {
    /// The significance gate: credit for a perturbation that failed `verify` (runs, failed)
    /// only when that beats the reference's rate (the baseline's) or, when the counterfactual
    /// passed every run, that benign value's, in Fisher's exact test (one-sided, 0.05). Returns
    /// the p-value, and whether the diagnosis is whole (n/n, and a counterfactual that passes)
    /// rather than "elevates the failure rate"; `None`, with a warning, for no credit.
    pub(super) fn credit(
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

    pub(super) fn hang(mut self, hangs: u64) -> Diagnosis {
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

    pub(super) fn deterministic(mut self, controlled: bool) -> Diagnosis {
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

    pub(super) fn unattributed(mut self) -> Diagnosis {
        let (runs, failed) = self.baseline;
        let diagnosis = self.conclude(
            "flaky-unattributed",
            None,
            "flaky, cause outside the covered axes".into(),
            format!(
                "Failed {failed}/{runs} isolated runs, but no covered axis ({}, the tests before or beside it) decides it. For an LLM eval or a test of a randomized algorithm judged by its rate, this is expected: the evidence is above.",
                self.provoked_axes_text()
            ),
            None,
            None,
        );
        self.with_latent(diagnosis)
    }

    pub(super) fn incomplete(mut self) -> Diagnosis {
        let budget = self.settings.budget.as_secs();
        let diagnosis = self.conclude(
            "incomplete",
            None,
            "out of time".into(),
            format!("The budget of {budget} s ran out before a diagnosis; the evidence so far is above. Raise --budget to go on."),
            None,
            None,
        );
        self.with_latent(diagnosis)
    }

    pub(super) fn conclude(
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
            also_found: Vec::new(),
            signatures: Vec::new(),
        }
    }
}
