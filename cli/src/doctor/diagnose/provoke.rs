//! Provoking one axis through values of the victim's own run (a seed, a clock, a schedule, a
//! blocked network, a home, an environment): the first value that fails every run, verified,
//! with its counterfactual, its significance, and a verdict that says what the axis means.

use std::collections::BTreeSet;

use crate::doctor::axes::{self, Axis, Perturbation};
use crate::doctor::diagnose::explain::{self, Found};
use crate::doctor::diagnose::{fingerprints, tally, Diagnosis, Doctor, Reproduction};
use crate::doctor::fingerprint::Ending;
use crate::doctor::runner::Plan;

impl Doctor<'_> {
    /// Provokes an axis: the first value that fails every run, verified, with its
    /// counterfactual and the significance gate.
    pub(super) fn provoke(&mut self, axis: Axis) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        self.progress(&format!("provoking {axis}"));
        let mut winner = None;
        let mut passed = None;
        if axis == Axis::Entropy {
            (winner, passed) = self.search_seeds();
        }
        for provocation in axes::provocations(axis) {
            if axis == Axis::Entropy || self.over_budget() || (winner.is_some() && passed.is_some())
            {
                break;
            }
            let endings = self.sample(
                &format!("provoke: {}", provocation.label),
                &Plan::alone(&victim, provocation.perturbation.clone()),
                2,
                "",
            );
            if endings.contains(&Ending::Hang) {
                // A run the perturbation stalled (a clock that jumps past every deadline, CPUs
                // kept busy) says something about the perturbation, not about the test.
                if let Some(last) = self.evidence.last_mut() {
                    last.note = "hung: perturbation-induced, no credit".into();
                }
                continue;
            }
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
        // The counterfactual: a value of the same axis that passed, else the benign one. Busy
        // or idle cores that passed twice may fail the next time: scheduling's benign value is
        // always its control, one idle core.
        let benign = match passed {
            // The same instant under UTC: whether the zone, not the instant, decides it.
            _ if axes::in_far_zone(&provocation.perturbation) => Perturbation {
                tz: Some("UTC".into()),
                ..provocation.perturbation.clone()
            },
            Some(passed) if axis != Axis::Scheduling => passed,
            _ => axes::benign(axis),
        };
        self.runner.take_events();
        let (verify, counter) = self.verify_and_counter(
            (&format!("VERIFY: {}", provocation.label), &plan),
            (
                &format!("counterfactual: {}", axes::describe(&benign)),
                &Plan::alone(&victim, benign.clone()),
            ),
        );
        let events = self.runner.take_events();
        let (verify_runs, verify_failed) = tally(&verify);
        // Noise makes a race likelier, rarely certain: for scheduling, a failure rate that
        // clears the significance gate is reported as raised, with its own lower bound.
        let certain = verify_failed == verify_runs;
        if (!certain && axis != Axis::Scheduling) || verify_failed == 0 {
            return None;
        }
        if verify.contains(&Ending::Hang) {
            return None;
        }
        let counter_tally = tally(&counter);
        let counter_passes = counter_tally.1 == 0 && counter.iter().all(|e| *e == Ending::Pass);
        let (p_value, _) = self.credit(
            &provocation.label,
            (verify_runs, verify_failed),
            counter_tally,
        )?;
        let observed = prints
            .iter()
            .any(|print| self.baseline_prints.contains(print));
        let hash_order = if axis == Axis::Entropy {
            Some(self.hash_order_alone(&provocation.perturbation, &events))
        } else {
            None
        };
        let found = Found {
            axis,
            perturbation: &provocation.perturbation,
            label: &provocation.label,
            benign: &benign,
            baseline: self.baseline,
            verify: (verify_runs, verify_failed),
            blocked: events
                .iter()
                .filter_map(|event| event.strip_prefix("blocked "))
                .map(str::to_string)
                .collect(),
            hash_order,
            // Under a replay of its answers no sampler is called: the randomness is the
            // harness's, said as any test's.
            row: self
                .runner
                .row
                .as_ref()
                .filter(|_| !self.runner.replaying())
                .map(|row| row.case.as_str()),
        };
        let (verdict, mut headline, mut explanation) = explain::verdict(&found);
        if !counter_passes {
            headline = format!("{headline} (elevates the failure rate)");
            explanation.push_str(" The benign value did not pass every run either: the axis raises the failure rate rather than deciding it.");
        } else if !certain {
            headline = format!("{headline} (elevates the failure rate)");
            explanation.push_str(&format!(" It failed {verify_failed} of {verify_runs} verifying runs, not all: the schedule makes the failure likely, not certain, so the repro fails about as often."));
        }
        if !observed {
            explanation.push_str(if self.baseline.1 == 0 {
                " The baseline never failed: a latent bug on this axis, found by provoking it."
            } else {
                " The failure it provokes differs from the one the baseline showed: a latent bug on this axis."
            });
        }
        let value = axes::describe(&provocation.perturbation);
        let mut reproduction = Reproduction::new(axis, value, plan, (verify_runs, verify_failed));
        reproduction.fingerprints = fingerprints(&verify);
        let mut diagnosis = self.conclude(
            verdict,
            Some(if observed { "observed" } else { "latent" }),
            headline,
            explanation,
            Some(reproduction),
            None,
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
    }

    /// Seeds tried one run each (a second where the first failed) until one fails twice: as
    /// many as make missing a failing seed unlikely at the rate the test failed unperturbed
    /// (a sampler that answers wrong 1 time in 12 has 1 failing seed in 12), at least 8. One
    /// row of evidence for them all.
    fn search_seeds(
        &mut self,
    ) -> (
        Option<(axes::Provocation, BTreeSet<String>)>,
        Option<Perturbation>,
    ) {
        let victim = self.victim().to_string();
        let (runs, failed) = self.baseline;
        let rate = if failed > 0 && failed < runs {
            failed as f64 / runs as f64
        } else {
            0.5
        };
        let count = crate::doctor::gates::runs_to_see(rate, 0.05).clamp(8, 120) as u64;
        let (mut tried, mut runs_made, mut failures) = (0u64, 0u64, 0u64);
        let mut winner = None;
        let mut passed = None;
        // On past a failing seed to a passing one: the counterfactual must be a value of the
        // axis that passes, and the control's seed may be a failing one.
        for provocation in axes::seed_provocations(count) {
            if self.over_budget() || (winner.is_some() && passed.is_some()) {
                break;
            }
            tried += 1;
            let plan = Plan::alone(&victim, provocation.perturbation.clone());
            let first = self.runner.run(&plan);
            runs_made += 1;
            if first == Ending::Pass {
                passed.get_or_insert(provocation.perturbation);
                continue;
            }
            if !first.failed() || first == Ending::Hang {
                continue;
            }
            failures += 1;
            if winner.is_some() {
                continue;
            }
            let second = self.runner.run(&plan);
            runs_made += 1;
            if second.failed() && second != Ending::Hang {
                failures += 1;
                let endings = [first, second];
                winner = Some((provocation, fingerprints(&endings)));
            }
        }
        let note = match &winner {
            Some((provocation, _)) => format!("{} failed twice", provocation.label),
            None => String::new(),
        };
        self.evidence.push(crate::doctor::diagnose::Evidence {
            label: format!("provoke: entropy seeds 1 to {tried}, a run each"),
            runs: runs_made,
            failed: failures,
            note,
        });
        (winner, passed)
    }

    /// Whether std's hash iteration order alone explains an entropy failure, where that can be
    /// told apart: from which kinds of draw the verifying runs made (std asks for its hash keys,
    /// and for nothing else, with `GRND_INSECURE`), and when they drew both kinds, from runs
    /// with only the hash keys pinned to the failing seed (the same keys as before: the two
    /// kinds come from separate streams of the seed).
    fn hash_order_alone(&mut self, failing: &Perturbation, events: &BTreeSet<String>) -> String {
        let hash = events.contains("entropy hash");
        let other = events.contains("entropy other");
        let seed = failing.seed.unwrap_or_default();
        match (hash, other) {
            (false, false) => "No draw from the OS was seen (a binary that draws through its own system calls is out of the preload library's reach): whether hash order alone explains it cannot be told.".into(),
            (false, true) => "It draws no hash keys: not hash order; an OS-seeded draw (rand's generators, random ids) decides it.".into(),
            (true, false) => "The only draws it makes from the OS are std's HashMap and HashSet keys: hash iteration order alone explains it.".into(),
            (true, true) => {
                // As many runs as the verification: at a coin-flip rate, five runs all fail by
                // chance one time in 32, which would credit hash order wrongly.
                let runs = self.settings.runs;
                let hash_only = Perturbation {
                    hash_only: true,
                    ..failing.clone()
                };
                let endings = self.sample(
                    &format!("hash keys alone from seed {seed}"),
                    &Plan::alone(self.victim(), hash_only),
                    runs,
                    "other draws real",
                );
                let (runs, failed) = tally(&endings);
                if failed == runs {
                    format!("With only std's hash keys pinned to seed {seed} and every other draw real, it failed {failed}/{runs}: hash iteration order alone explains it.")
                } else if failed == 0 {
                    format!("With only std's hash keys pinned to seed {seed} and every other draw real, it passed {runs}/{runs}: not hash order; another draw from the OS (rand's generators, random ids) decides it.")
                } else {
                    format!("With only std's hash keys pinned to seed {seed} and every other draw real, it failed {failed}/{runs}: hash order does not explain it alone; other draws from the OS (rand's generators, random ids) decide it, with or without it.")
                }
            }
        }
    }
}
