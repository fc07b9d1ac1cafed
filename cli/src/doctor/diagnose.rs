//! The diagnosis loop: baseline, control sweep, provocation, verification, counterfactual, with
//! every gate of the contract; and for a test that fails only beside its siblings, the bisection
//! to the one that breaks it.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::doctor::axes::{self, Axis, Perturbation};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::{Plan, Runner};

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

/// Where halving a set of suspects ends.
#[derive(Debug, PartialEq, Eq)]
pub enum Halved {
    /// The one test that breaks the victim.
    One(String),
    /// No half breaks it alone (or the checks ran out): these break it together.
    Together(Vec<String>),
}

/// Halves `set`, keeping a half with which the victim still fails (`fails` says), until one
/// test is left: a binary search, so `n` suspects take about `2 log2 n` checks. Never called
/// with a set that does not fail as a whole.
pub fn halve(mut set: Vec<String>, mut fails: impl FnMut(&[String]) -> bool) -> Halved {
    while set.len() > 1 {
        let second = set.split_off(set.len() / 2);
        if fails(&set) {
            continue;
        }
        if fails(&second) {
            set = second;
            continue;
        }
        set.extend(second);
        return Halved::Together(set);
    }
    match set.pop() {
        Some(one) => Halved::One(one),
        None => Halved::Together(Vec::new()),
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

/// Whether every run ended alike (all passed, or all failed): the nondeterminism is gone.
fn uniform(endings: &[Ending]) -> bool {
    let (runs, failed) = tally(endings);
    failed == 0 || failed == runs
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
        // Tests of one process run beside each other: never two such processes at once, whose
        // tests would meet through the files and ports they share.
        let serial = plan.tests.len() > 1;
        let endings = self.runner.run_many(plan, count, serial);
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
        let serial = plan.tests.len() > 1 || counter_plan.tests.len() > 1;
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
        let preload_axes: Vec<Axis> = self
            .settings
            .axes
            .iter()
            .copied()
            .filter(|axis| axis.needs_preload() && self.runner.preload.is_some())
            .collect();
        if base_failed == base_runs {
            // Ten fast runs can share one bad second or one seed's fate: only a test that also
            // fails under full control fails deterministically.
            if preload_axes.is_empty() {
                return self.deterministic(false);
            }
            // Two pinned values: one value of an axis can be a failing one (a seed whose hash
            // order breaks the test), and a test that fails under both fails whatever they are.
            let half = runs.div_ceil(2);
            let first = self.sample(
                "control: every axis pinned",
                &Plan::alone(&victim, axes::control(&preload_axes)),
                half,
                "",
            );
            let second = self.sample(
                "control: every axis pinned otherwise",
                &Plan::alone(&victim, axes::control_otherwise(&preload_axes)),
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
            return self.diagnose_passing(&preload_axes);
        }
        self.diagnose_flaky(&preload_axes)
    }

    /// A baseline with failures: which pinned axis stops them, then provoking it.
    fn diagnose_flaky(mut self, preload_axes: &[Axis]) -> Diagnosis {
        let victim = self.victim().to_string();
        let runs = self.settings.runs;
        let mut order: Vec<Axis> = preload_axes.to_vec();
        if !preload_axes.is_empty() {
            let control = self.sample(
                "control: every axis pinned",
                &Plan::alone(&victim, axes::control(preload_axes)),
                runs,
                "",
            );
            if uniform(&control) {
                self.progress(
                    "every axis pinned: the outcome no longer varies; finding the stabilizer",
                );
                let mut stabilizers = Vec::new();
                if preload_axes.len() > 1 {
                    for axis in preload_axes {
                        let alone = self.sample(
                            &format!("control: {axis} alone pinned"),
                            &Plan::alone(&victim, axes::control(&[*axis])),
                            runs,
                            "",
                        );
                        if uniform(&alone) {
                            stabilizers.push(*axis);
                        }
                    }
                } else {
                    stabilizers.push(preload_axes[0]);
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
    /// and beside them in many; then the clock and entropy provoked, for a latent bug (runs in
    /// quick succession sample the clock at nearly one instant, and can all miss its bad
    /// moments).
    fn diagnose_passing(mut self, preload_axes: &[Axis]) -> Diagnosis {
        if let Some(diagnosis) = self.siblings() {
            return diagnosis;
        }
        for axis in self.provocable(preload_axes) {
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
                "Passed {runs} of {runs} isolated runs, beside its binary's other tests (in one thread and in parallel), and with the clock and entropy provoked. Nothing here makes it fail."
            ),
            None,
            None,
        )
    }

    /// The axes provoked by values of the victim's own run: the preload axes given (in their
    /// order), then `fs` and `env` when they are asked for.
    fn provocable(&self, preload_axes: &[Axis]) -> Vec<Axis> {
        let mut axes = preload_axes.to_vec();
        for axis in [Axis::Fs, Axis::Env] {
            if self.settings.axes.contains(&axis) {
                axes.push(axis);
            }
        }
        axes
    }

    /// Order, then parallel: the tests of the victim's binary that make it fail.
    fn siblings(&mut self) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        let before: Vec<String> = self
            .tests
            .iter()
            .take_while(|test| **test != victim)
            .cloned()
            .collect();
        let others: Vec<String> = self
            .tests
            .iter()
            .filter(|test| **test != victim)
            .cloned()
            .collect();
        // After the tests before it in one thread, twice (an order dependence shows every
        // time); beside all the others, four times (a race shows some of the time).
        let checks = [
            (
                Axis::Order,
                before,
                Some(1),
                2,
                "after the {} tests before it, one thread",
            ),
            (
                Axis::Parallel,
                others,
                None,
                4,
                "beside its {} siblings, in parallel",
            ),
        ];
        for (axis, set, threads, runs, label) in checks {
            if !self.settings.axes.contains(&axis) || set.is_empty() {
                continue;
            }
            let mut tests = set.clone();
            tests.push(victim.clone());
            let plan = Plan {
                tests,
                threads,
                perturbation: Perturbation::none(),
            };
            let label = label.replace("{}", &set.len().to_string());
            let endings = self.sample(&label, &plan, runs, "");
            if endings.iter().any(Ending::failed) {
                self.progress(&format!("fails {}: bisecting", label));
                if let Some(diagnosis) = self.bisect(axis, set) {
                    return Some(diagnosis);
                }
            }
        }
        None
    }

    /// The plan of the victim with `set` before (order) or beside (parallel) it.
    fn with(&self, axis: Axis, set: &[String]) -> Plan {
        let mut tests = set.to_vec();
        tests.push(self.victim().to_string());
        Plan {
            threads: match axis {
                Axis::Order => Some(1),
                _ => Some(set.len() + 1),
            },
            tests,
            perturbation: Perturbation::none(),
        }
    }

    /// Whether the victim fails with `set`: both of two runs in order, any of four in parallel
    /// (a race shows some of the time).
    fn fails_with(&mut self, axis: Axis, set: &[String]) -> bool {
        let plan = self.with(axis, set);
        match axis {
            Axis::Order => tally(&self.runner.run_many(&plan, 2, true)).1 == 2,
            // A race: the first failure is enough, and most runs that will fail do at once.
            _ => (0..4).any(|_| self.runner.run(&plan).failed()),
        }
    }

    /// Halves `set` until one test alone breaks the victim, verifies it and checks the
    /// counterfactual.
    fn bisect(&mut self, axis: Axis, set: Vec<String>) -> Option<Diagnosis> {
        let started = self.started;
        let budget = self.settings.budget;
        let culprit = match halve(set, |half| {
            started.elapsed() < budget && self.fails_with(axis, half)
        }) {
            Halved::One(culprit) => culprit,
            Halved::Together(set) => {
                self.warnings.push(format!(
                    "no single test among {} breaks it alone; together they do: {}",
                    set.len(),
                    set.join(", ")
                ));
                return None;
            }
        };
        let plan = self.with(axis, std::slice::from_ref(&culprit));
        let (label, counter_label, counter_plan) = match axis {
            Axis::Order => (
                format!("VERIFY: after {culprit}"),
                "counterfactual: alone".to_string(),
                Plan::alone(self.victim(), Perturbation::none()),
            ),
            _ => (
                format!("VERIFY: beside {culprit}"),
                format!("counterfactual: with {culprit}, one thread"),
                Plan {
                    threads: Some(1),
                    ..plan.clone()
                },
            ),
        };
        let (verify, counter) =
            self.verify_and_counter((&label, &plan), (&counter_label, &counter_plan));
        let (verify_runs, verify_failed) = tally(&verify);
        let (p_value, full) = self.credit(&label, (verify_runs, verify_failed), tally(&counter))?;
        let value = match axis {
            Axis::Order => format!("[{culprit}, {}]", self.victim()),
            _ => format!("{culprit} beside it"),
        };
        let reproduction = Reproduction {
            axis,
            value,
            plan,
            runs: verify_runs,
            failed: verify_failed,
            lower_bound: gates::repro_lower_bound(verify_failed, verify_runs),
        };
        let victim = self.victim().to_string();
        let (verdict, mut headline, explanation) = match axis {
            Axis::Order => (
                "flaky-order",
                "test-order dependent".to_string(),
                format!(
                    "The test passes on its own, but fails when it runs after {culprit} in the same process (--test-threads=1, in libtest's name order): fails {verify_failed}/{verify_runs} in that order. {culprit} leaves behind state (a static, an environment variable, a file) that {victim} depends on being absent."
                ),
            ),
            _ => (
                "flaky-parallel",
                "breaks when a sibling test runs beside it".to_string(),
                format!(
                    "The test passes on its own and after its siblings in one thread, but fails while {culprit} runs beside it as another thread of the same process: fails {verify_failed}/{verify_runs} that way. The two share something (a static, an environment variable, a file, a port) without synchronization."
                ),
            ),
        };
        if !full {
            headline.push_str(" (elevates the failure rate)");
        }
        // The unperturbed run of the victim among its siblings failed: that is the failure the
        // user sees in the suite, and this explains it.
        let mut diagnosis = self.conclude(
            verdict,
            Some("observed"),
            headline,
            explanation,
            Some(reproduction),
            Some(culprit),
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
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

    /// Provokes a preload axis: the first value that fails every run, verified, with its
    /// counterfactual and the significance gate.
    fn provoke(&mut self, axis: Axis) -> Option<Diagnosis> {
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
        let reproduction = Reproduction {
            axis,
            value,
            plan,
            runs: verify_runs,
            failed: verify_failed,
            lower_bound: gates::repro_lower_bound(verify_failed, verify_runs),
        };
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
                "the clock and entropy could not be pinned for this binary: the failures were not checked under control".into(),
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
                    ", and every run with the clock and entropy pinned"
                } else {
                    ""
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
                "Failed {failed}/{runs} isolated runs, but no covered axis (the clock, entropy, the tests before or beside it) decides it. For an LLM eval or a test of a randomized algorithm judged by its rate, this is expected: the evidence is above."
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

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("t{i:02}")).collect()
    }

    #[test]
    fn halving_finds_the_one_polluter_in_logarithmic_checks() {
        for count in [1, 2, 3, 7, 16, 33] {
            for culprit in 0..count {
                let wanted = format!("t{culprit:02}");
                let mut checks = 0;
                let found = halve(names(count), |half| {
                    checks += 1;
                    half.contains(&wanted)
                });
                assert_eq!(found, Halved::One(wanted.clone()), "{count} suspects");
                let bound = 2 * (usize::BITS - count.leading_zeros()) as usize;
                assert!(checks <= bound, "{checks} checks for {count} suspects");
            }
        }
    }

    #[test]
    fn two_tests_that_break_it_only_together_are_named_together() {
        let found = halve(names(8), |half| {
            half.contains(&"t01".to_string()) && half.contains(&"t06".to_string())
        });
        assert_eq!(found, Halved::Together(names(8)));
        // Halving goes as far as one half keeps failing on its own.
        let found = halve(names(8), |half| {
            half.contains(&"t01".to_string()) && half.contains(&"t02".to_string())
        });
        assert_eq!(
            found,
            Halved::Together(vec!["t00".into(), "t01".into(), "t02".into(), "t03".into()])
        );
    }

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
