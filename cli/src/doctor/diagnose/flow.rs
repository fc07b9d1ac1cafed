//! The loop: the baseline, then the control sweep and the stabilizer among the pinned axes, then
//! each axis provoked in turn and the tests around the victim, to the first diagnosis.

use crate::doctor::axes::{self, Axis, Perturbation};
use crate::doctor::diagnose::{fingerprints, tally, Diagnosis, Doctor};
use crate::doctor::fingerprint::Ending;
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
    pub(super) fn controlled_axes_text(&self) -> String {
        phrase(&self.controlled_axes())
    }

    /// The axes provoked on the victim's own runs, as a phrase: "the clock, entropy and the
    /// network".
    pub(super) fn provoked_axes_text(&self) -> String {
        phrase(&self.provocable(&self.controlled_axes()))
    }
}
