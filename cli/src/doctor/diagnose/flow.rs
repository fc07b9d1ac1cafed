//! The loop: the baseline, then the control sweep and the stabilizer among the pinned axes, then
//! each axis provoked in turn and the tests around the victim, to the first diagnosis.

use crate::doctor::axes::{self, Axis, Perturbation};
use crate::doctor::diagnose::races::percent;
use crate::doctor::diagnose::{fingerprints, tally, Diagnosis, Doctor, Latent};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::Plan;

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

impl Doctor<'_> {
    /// The whole loop.
    pub fn diagnose(mut self) -> Diagnosis {
        let runs = self.settings.runs;
        let victim = self.victim().to_string();
        let base = self.sample(
            "baseline (isolated, no perturbation)",
            &Plan::alone(&victim, Perturbation::none()),
            self.settings.baseline_runs(),
            &self.settings.prior_note(),
        );
        self.baseline = tally(&base);
        if self.over_budget() && base.len() < 2 {
            return self.incomplete();
        }
        self.reference = self.baseline;
        self.baseline_prints.extend(fingerprints(&base));
        for print in base.iter().filter_map(Ending::fingerprint) {
            *self.seen_prints.entry(print.to_string()).or_default() += 1;
        }
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
                if let Some(diagnosis) = self.state_setter() {
                    return diagnosis;
                }
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
                if let Some(diagnosis) = self.state_setter() {
                    return diagnosis;
                }
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
    pub(super) fn controlled_axes(&self) -> Vec<Axis> {
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

    /// A baseline with failures: which pinned axis stops them, then provoking it. A finding
    /// that explains other failures than the ones seen (latent) does not end the search; the
    /// observed failures are never called `not-flaky`.
    fn diagnose_flaky(mut self, controlled: &[Axis]) -> Diagnosis {
        let victim = self.victim().to_string();
        // Enough runs that a pinned axis which leaves the flake alone shows it: a 5% flake
        // passes 10 runs more often than not.
        let (base_runs, base_failed) = self.baseline;
        let sized = if base_failed > 0 && base_failed < base_runs {
            gates::runs_to_see(base_failed as f64 / base_runs as f64, 0.05)
        } else {
            0
        };
        let runs = self.settings.runs.max(sized.min(60));
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
                if diagnosis.claim == Some("observed") {
                    let mut diagnosis = self.with_latent(diagnosis);
                    let signatures = self.attribute_signatures(&diagnosis);
                    diagnosis.evidence.append(&mut self.evidence);
                    diagnosis.signatures = signatures;
                    return diagnosis;
                }
                self.keep_latent(diagnosis);
            }
        }
        if self.over_budget() {
            return self.incomplete();
        }
        self.unattributed()
    }

    /// A baseline that always passes: first what the user runs, unperturbed (the victim after
    /// its siblings in one thread, beside them in parallel, paired with each), whose failure is
    /// the one the user saw; the axes provoked on the victim's own runs find latent bugs, which
    /// are the answer only when nothing unperturbed fails.
    fn diagnose_passing(mut self, controlled: &[Axis]) -> Diagnosis {
        if let Some(diagnosis) = self.order() {
            return self.with_latent(diagnosis);
        }
        // Provoking the axes takes seconds; the race search gets most of what is left, and
        // leaves some for the latent search after it.
        let left = self.settings.budget.saturating_sub(self.started.elapsed());
        if let Some(diagnosis) = self.races(left.mul_f64(0.8)) {
            return self.with_latent(diagnosis);
        }
        if let Some((runs, failed)) = self.fails_alone {
            // It fails alone after all: its own run's axes explain it, with these runs as the
            // baseline's evidence.
            self.progress(&format!(
                "it failed {failed} of {runs} runs alone while the search went on: flaky by itself"
            ));
            self.baseline = (self.baseline.0 + runs, self.baseline.1 + failed);
            self.reference = self.baseline;
            return self.diagnose_flaky(controlled);
        }
        for axis in self.provocable(controlled) {
            if self.over_budget() {
                break;
            }
            if let Some(diagnosis) = self.provoke(axis) {
                self.keep_latent(diagnosis);
            }
        }
        if !self.latent.is_empty() {
            let mut first = self.latent.remove(0);
            first.evidence = std::mem::take(&mut self.evidence);
            first.warnings = std::mem::take(&mut self.warnings);
            return self.with_latent(first);
        }
        if self.over_budget() {
            return self.incomplete();
        }
        let power = self.power_text();
        self.conclude(
            "not-flaky",
            None,
            "not flaky".into(),
            format!(
                "Passed every run: alone, after and beside its binary's other tests, and with {} provoked. {power} Nothing here makes it fail.",
                self.provoked_axes_text()
            ),
            None,
            None,
        )
    }

    /// What the unperturbed runs could have seen: "A failure rate above 9.5% per run alone, ...
    /// would have shown with 95% confidence."
    fn power_text(&self) -> String {
        let mut parts = vec![format!(
            "{} per run alone ({} runs)",
            percent(gates::detectable_rate(self.baseline.0)),
            self.baseline.0
        )];
        if let Some(search) = &self.searched {
            if search.suite_runs > 0 {
                parts.push(format!(
                    "{} in the whole binary in parallel ({} runs)",
                    percent(gates::detectable_rate(search.suite_runs)),
                    search.suite_runs
                ));
            }
            if search.fewest_pair_runs > 0 {
                parts.push(format!(
                    "{} beside {} ({} runs or more each)",
                    percent(gates::detectable_rate(search.fewest_pair_runs)),
                    match search.siblings {
                        1 => "its one sibling".to_string(),
                        many => format!("any one of its {many} siblings"),
                    },
                    search.fewest_pair_runs
                ));
            }
        }
        let listed = match parts.as_slice() {
            [one] => one.clone(),
            [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
            [] => String::new(),
        };
        format!("A failure rate above {listed} would have shown with 95% confidence.")
    }

    /// Keeps a latent finding for later, and takes back the evidence and warnings it carries:
    /// the search goes on with them.
    fn keep_latent(&mut self, mut diagnosis: Diagnosis) {
        self.evidence = std::mem::take(&mut diagnosis.evidence);
        self.warnings = std::mem::take(&mut diagnosis.warnings);
        self.latent.push(diagnosis);
    }

    /// `diagnosis` with the latent findings made on the way listed beneath it.
    pub(super) fn with_latent(&mut self, mut diagnosis: Diagnosis) -> Diagnosis {
        diagnosis.also_found = std::mem::take(&mut self.latent)
            .into_iter()
            .map(|latent| Latent {
                verdict: latent.verdict,
                headline: latent.headline,
                value: latent
                    .reproduction
                    .map(|reproduction| reproduction.value)
                    .unwrap_or_default(),
            })
            .collect();
        diagnosis
    }

    /// The axes provoked by values of the victim's own run: the controlled axes given (in their
    /// order), then the network, `fs` and `env` when they are asked for and can be varied.
    pub(super) fn provocable(&self, controlled: &[Axis]) -> Vec<Axis> {
        let mut axes = controlled.to_vec();
        for axis in [Axis::Network, Axis::Fs, Axis::Env] {
            if self.settings.axes.contains(&axis) && self.can_vary(axis) {
                axes.push(axis);
            }
        }
        axes
    }

    /// The axes the control sweep pins, as a phrase: "the clock, entropy and scheduling".
    pub(super) fn controlled_axes_text(&self) -> String {
        phrase(&self.controlled_axes())
    }

    /// The axes provoked on the victim's own runs, as a phrase: "the clock, entropy and the
    /// network".
    pub(super) fn provoked_axes_text(&self) -> String {
        phrase(&self.provocable(&self.controlled_axes()))
    }
}
