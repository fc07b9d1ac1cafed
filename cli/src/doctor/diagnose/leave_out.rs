//! A race that shows in the whole suite and in no pair of tests (its timing needs the others
//! around it): the sibling without which the suite no longer makes the victim fail, found by
//! leaving each out in turn, with checks sized from the suite's rate, and verified on fresh
//! runs of the suite with it against the suite without it.

use std::time::Instant;

use crate::doctor::axes::Axis;
use crate::doctor::diagnose::races::{percent, stress_attempts};
use crate::doctor::diagnose::{tally, Diagnosis, Doctor, Evidence, Reproduction};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::Plan;

/// A third of the most siblings a warning names.
const MOST_CANDIDATES: usize = 3;
/// The most runs of each side of a verification.
const MOST_RUNS: u64 = 2_000;
/// The significance the suite with the sibling must reach against the suite without it.
const ALPHA: f64 = 0.01;

impl Doctor<'_> {
    /// The sibling whose absence stops the victim failing in its whole binary, which failed
    /// `failed` of `runs` runs: the diagnosis naming it, or `None`.
    pub(super) fn leave_one_out(
        &mut self,
        whole: &Plan,
        (runs, failed): (u64, u64),
        stop_at: Instant,
    ) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        let rate = failed as f64 / runs.max(1) as f64;
        // Enough runs of the suite less one sibling that, were the failure still there at the
        // suite's rate, it would show with 95% probability.
        let check = gates::runs_to_see(rate, 0.05).clamp(10, 200);
        self.progress(&format!(
            "it fails in its whole binary ({failed}/{runs}) and beside no one sibling: leaving each out in turn, {check} runs each"
        ));
        let siblings: Vec<String> = whole
            .tests
            .iter()
            .filter(|test| **test != victim)
            .cloned()
            .collect();
        let mut needed = Vec::new();
        let (mut made, mut seen_failing) = (0u64, 0u64);
        for sibling in &siblings {
            if self.over_budget() || Instant::now() >= stop_at {
                return None;
            }
            let without = less(whole, sibling);
            let mut failed_without = false;
            for _ in 0..check {
                let ending = self.runner.run(&without);
                made += u64::from(ending != Ending::NotRun);
                if ending.failed() {
                    failed_without = true;
                    seen_failing += 1;
                    break;
                }
            }
            if !failed_without {
                needed.push(sibling.clone());
            }
        }
        self.evidence.push(Evidence {
            label: "the whole binary, less one sibling at a time".into(),
            runs: made,
            failed: seen_failing,
            note: match needed.as_slice() {
                [] => "fails without each".into(),
                [one] => format!("never without {one}"),
                more => format!("never without {} of them", more.len()),
            },
        });
        match needed.as_slice() {
            [] => {}
            // One sibling the failure needs: verified, it is the one the victim races.
            [one] => {
                let one = one.clone();
                return self.verify_needed(whole, &one, stop_at);
            }
            // Several: the failure needs them together (one may only set up the timing), so
            // none of them alone is named.
            several => self.warnings.push(format!(
                "the failure in the whole binary went away without any one of {}: it needs them together, and none is named alone",
                several
                    .iter()
                    .take(MOST_CANDIDATES * 3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
        None
    }

    /// Fresh runs of the whole binary and of it without `candidate`, in turns, until the
    /// difference is significant or clearly absent.
    fn verify_needed(
        &mut self,
        whole: &Plan,
        candidate: &str,
        stop_at: Instant,
    ) -> Option<Diagnosis> {
        let without = less(whole, candidate);
        let (mut runs, mut failed, mut runs_without, mut failed_without) = (0, 0, 0, 0);
        let p_value = loop {
            let (with_endings, without_endings) =
                self.runner
                    .run_interleaved((whole, 20), (&without, 20), true);
            let (batch, batch_failed) = tally(&with_endings);
            let (batch_without, batch_failed_without) = tally(&without_endings);
            (runs, failed) = (runs + batch, failed + batch_failed);
            (runs_without, failed_without) = (
                runs_without + batch_without,
                failed_without + batch_failed_without,
            );
            let p_value = gates::fisher_greater(failed, runs, failed_without, runs_without);
            let futile = failed_without >= 3 && failed * runs_without <= failed_without * runs;
            if (failed >= 3 && p_value < ALPHA)
                || futile
                || runs >= MOST_RUNS
                || batch == 0
                || self.over_budget()
                || Instant::now() >= stop_at
            {
                break p_value;
            }
        };
        let lower = gates::repro_lower_bound(failed, runs);
        self.evidence.push(Evidence {
            label: format!("VERIFY: the whole binary, with {candidate}"),
            runs,
            failed,
            note: format!(
                "{} per run, ≥{}",
                percent(failed as f64 / runs.max(1) as f64),
                percent(lower)
            ),
        });
        self.evidence.push(Evidence {
            label: format!("counterfactual: the whole binary without {candidate}"),
            runs: runs_without,
            failed: failed_without,
            note: if failed_without == 0 {
                "✓ passes".into()
            } else {
                "✗ fails too".into()
            },
        });
        if failed < 3 || p_value >= ALPHA {
            return None;
        }
        let attempts = stress_attempts(lower);
        let mut reproduction = Reproduction::new(
            Axis::Parallel,
            format!("its siblings beside it, {candidate} among them"),
            whole.clone(),
            (runs, failed),
        );
        reproduction.attempts = Some(attempts);
        let (base_runs, _) = self.baseline;
        let victim = self.victim().to_string();
        let mut diagnosis = self.conclude(
            "flaky-parallel",
            Some("observed"),
            "races with a sibling test".into(),
            format!(
                "Never failed alone ({base_runs} runs), nor beside any one sibling on two threads, but fails {failed} of {runs} runs of its whole binary in parallel ({}, at least {} at 95% confidence) and {failed_without} of {runs_without} without {candidate} (Fisher's exact test, one-sided, p = {p_value:.2e}). {victim} races with {candidate} over something they share (a static, an environment variable, a file, a port), at a timing the rest of the suite sets up. The repro runs the whole binary until it fails, up to {attempts} times: it fails within that with probability ≥ 99%, even at a third of that lower bound.",
                percent(failed as f64 / runs.max(1) as f64),
                percent(lower),
            ),
            Some(reproduction),
            Some(candidate.to_string()),
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
    }
}

/// `plan` without `test`.
fn less(plan: &Plan, test: &str) -> Plan {
    Plan {
        tests: plan
            .tests
            .iter()
            .filter(|name| *name != test)
            .cloned()
            .collect(),
        ..plan.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::axes::Perturbation;

    #[test]
    fn a_plan_less_one_test_keeps_the_rest_in_order() {
        let plan = Plan {
            tests: vec!["a".into(), "b".into(), "victim".into()],
            threads: None,
            perturbation: Perturbation::none(),
        };
        assert_eq!(less(&plan, "b").tests, ["a", "victim"]);
        assert_eq!(less(&plan, "b").threads, None);
    }
}
