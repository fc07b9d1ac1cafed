//! Provoking one axis through values of the victim's own run (a seed, a clock, a home, an
//! environment): the first value that fails every run, verified, with its counterfactual, its
//! significance, and a verdict that says what the axis means.

use crate::doctor::axes::{self, Axis};
use crate::doctor::diagnose::{fingerprints, tally, Diagnosis, Doctor, Reproduction};
use crate::doctor::fingerprint::Ending;
use crate::doctor::runner::Plan;

impl Doctor<'_> {
    /// Provokes a preload axis: the first value that fails every run, verified, with its
    /// counterfactual and the significance gate.
    pub(super) fn provoke(&mut self, axis: Axis) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        self.progress(&format!("provoking {axis}"));
        let mut winner = None;
        let mut passed = None;
        for provocation in axes::provocations(axis) {
            if self.over_budget() || (winner.is_some() && passed.is_some()) {
                break;
            }
            let endings = self.sample(
                &format!("provoke: {}", provocation.label),
                &Plan::alone(&victim, provocation.perturbation.clone()),
                2,
                "",
            );
            if winner.is_none() && endings.iter().all(Ending::failed) {
                winner = Some((provocation, fingerprints(&endings)));
            } else if passed.is_none() && endings.iter().all(|e| *e == Ending::Pass) {
                passed = Some(provocation.perturbation);
            }
        }
        let (mut provocation, prints) = winner?;
        if axis == Axis::Time && provocation.perturbation.tz.is_none() {
            // Recorded in the repro, so that it fails on a machine in another zone too.
            provocation.perturbation.tz = axes::local_zone();
        }
        let plan = Plan::alone(&victim, provocation.perturbation.clone());
        // The counterfactual: a value of the same axis that passed, else the benign one.
        let benign = passed.unwrap_or_else(|| axes::benign(axis));
        let (verify, counter) = self.verify_and_counter(
            (&format!("VERIFY: {}", provocation.label), &plan),
            (
                &format!("counterfactual: {}", axes::describe(&benign)),
                &Plan::alone(&victim, benign.clone()),
            ),
        );
        let (verify_runs, verify_failed) = tally(&verify);
        if verify_failed < verify_runs {
            return None;
        }
        let counter_tally = tally(&counter);
        let counter_passes = counter_tally.1 == 0 && counter.iter().all(|e| *e == Ending::Pass);
        let (base_runs, base_failed) = self.baseline;
        let (p_value, _) = self.credit(
            &provocation.label,
            (verify_runs, verify_failed),
            counter_tally,
        )?;
        let observed = prints
            .iter()
            .any(|print| self.baseline_prints.contains(print));
        let claim = if observed { "observed" } else { "latent" };
        let value = axes::describe(&provocation.perturbation);
        let (verdict, mut headline, mut explanation) = match axis {
            Axis::Entropy => (
                "flaky-entropy",
                "depends on the OS's randomness (hash order, random seeds)".to_string(),
                format!(
                    "Failed {base_failed}/{base_runs} isolated baseline runs; fails {verify_failed}/{verify_runs} with every draw from the OS pinned to seed {} and passes with {}. The outcome depends on what the process draws from the OS: std's HashMap and HashSet iteration order (their keys come from getrandom), rand's OS-seeded generators, random ids. If the test iterates a HashMap or HashSet, the order leaking into an assertion is the likely cause: sort, or use a BTreeMap.",
                    provocation.perturbation.seed.unwrap_or_default(),
                    axes::describe(&benign)
                ),
            ),
            Axis::Fs => (
                "flaky-fs",
                "depends on files in the user's home directory".to_string(),
                format!(
                    "Failed {base_failed}/{base_runs} isolated baseline runs; fails {verify_failed}/{verify_runs} with a fresh, empty HOME (and XDG directories) and passes with the user's own. The test reads something from the home directory (configuration, credentials, a cache, leftovers of an earlier run) that a clean machine, a CI runner or another developer does not have."
                ),
            ),
            Axis::Env => (
                "flaky-env",
                "depends on the environment it inherits".to_string(),
                format!(
                    "Failed {base_failed}/{base_runs} isolated baseline runs; fails {verify_failed}/{verify_runs} with the environment scrubbed to {} and passes with the one it was given. The test reads an environment variable (a token, a locale, a path, a switch) that a clean CI runner or another developer's shell does not set.",
                    axes::KEPT_VARIABLES.join(", ")
                ),
            ),
            _ => (
                "flaky-time",
                "depends on the wall clock".to_string(),
                format!(
                    "Failed {base_failed}/{base_runs} isolated baseline runs; fails {verify_failed}/{verify_runs} with the clock started at {} and passes with the {}. The outcome depends on when it runs: a boundary of a second, minute, day, month or year, or an assumption about the time of day.",
                    provocation
                        .perturbation
                        .clock
                        .map(|clock| axes::utc(clock.at))
                        .unwrap_or_default(),
                    axes::describe(&benign)
                ),
            ),
        };
        if !counter_passes {
            headline = format!("{headline} (elevates the failure rate)");
            explanation.push_str(" The benign value did not pass every run either: the axis raises the failure rate rather than deciding it.");
        }
        if claim == "latent" {
            explanation.push_str(" The failure it provokes differs from the one the baseline showed: a latent bug on this axis.");
        }
        let reproduction = Reproduction::new(axis, value, plan, (verify_runs, verify_failed));
        let mut diagnosis = self.conclude(
            verdict,
            Some(claim),
            headline,
            explanation,
            Some(reproduction),
            None,
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
    }
}
