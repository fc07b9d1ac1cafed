//! The tests before the victim in one thread (order): the one that breaks it, found by halving
//! them with checks sized from the rate the whole prefix fails at, verified, with its
//! counterfactual. The tests beside it are `races`'.

use crate::doctor::axes::{Axis, Perturbation};
use crate::doctor::diagnose::{tally, Diagnosis, Doctor, Reproduction};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::Plan;

impl Doctor<'_> {
    /// The tests before the victim, in one thread: whether they make it fail, and which one.
    pub(super) fn order(&mut self) -> Option<Diagnosis> {
        let before = self.tests_before();
        if !self.settings.axes.contains(&Axis::Order) || before.is_empty() {
            return None;
        }
        let label = format!("after the {} tests before it, one thread", before.len());
        let plan = self.with(&before);
        // An order dependence shows every time; one that shows some of the time gets more runs,
        // to size the checks of the halving.
        let mut endings = self.sample(&label, &plan, 2, "");
        if !endings.iter().any(Ending::failed) {
            return None;
        }
        if !endings.iter().all(Ending::failed) {
            let more = self.runner.run_many(&plan, 8, true);
            endings.extend(more);
            if let Some(last) = self.evidence.last_mut() {
                (last.runs, last.failed) = tally(&endings);
            }
        }
        let (runs, failed) = tally(&endings);
        let rate = failed as f64 / runs.max(1) as f64;
        // Each check runs until the victim fails, up to the runs that make missing a failure
        // at this rate unlikely (5%): a check never clears a test on too few runs.
        let check_runs = gates::runs_to_see(rate, 0.05).min(60);
        self.progress(&format!(
            "fails {label} ({failed}/{runs}): halving, {check_runs} run(s) a check"
        ));
        self.bisect(before, check_runs)
    }

    /// A test that fails every run alone but passes in its suite (a brittle test): the test
    /// before it whose run leaves the state it needs (the state-setter), found by halving,
    /// verified.
    pub(super) fn state_setter(&mut self) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        let before = self.tests_before();
        if !self.settings.axes.contains(&Axis::Order) || before.is_empty() || self.over_budget() {
            return None;
        }
        let label = format!("after the {} tests before it, one thread", before.len());
        let endings = self.sample(&label, &self.with(&before), 2, "");
        if endings.iter().any(|ending| *ending != Ending::Pass) {
            return None;
        }
        self.progress("fails alone but passes after the tests before it: halving them");
        let setter = match halve(before, |half| {
            !self.over_budget() && self.passes_with(half, 2)
        }) {
            Halved::One(setter) => setter,
            Halved::Together(set) => {
                self.warnings.push(format!(
                    "no single test among {} makes it pass alone; together they do: {}",
                    set.len(),
                    set.join(", ")
                ));
                return None;
            }
        };
        let plan = self.with(std::slice::from_ref(&setter));
        let alone = Plan::alone(&victim, Perturbation::none());
        let (verify, counter) = self.verify_and_counter(
            (&format!("VERIFY: after {setter}, passes"), &plan),
            ("counterfactual: alone, fails", &alone),
        );
        let (runs, failed) = tally(&verify);
        let (counter_runs, counter_failed) = tally(&counter);
        // The verification's note reads the other way round: passing is the point here.
        let at = self.evidence.len() - 2;
        self.evidence[at].note = if failed == 0 {
            "✓ passes every run".into()
        } else {
            format!("✗ fails {failed}/{runs}")
        };
        self.evidence[at + 1].note = if counter_failed == counter_runs {
            "✓ fails every run".into()
        } else {
            format!("✗ passes {}/{counter_runs}", counter_runs - counter_failed)
        };
        if failed > 0 || counter_failed < counter_runs {
            return None;
        }
        let reproduction = Reproduction::new(
            Axis::Order,
            "alone, without it".into(),
            alone,
            (counter_runs, counter_failed),
        );
        let explanation = format!(
            "Fails every run alone ({} runs), but passes after {setter} in the same process (--test-threads=1, in libtest's name order): {runs}/{runs} passed that way. {setter} leaves behind state (an environment variable, a static, a file) that {victim} depends on and never sets up itself: a brittle test. It fails whenever the suite runs in another order, is filtered, or runs on several threads. Have it set up what it needs.",
            self.baseline.0
        );
        let diagnosis = self.conclude(
            "flaky-order",
            Some("observed"),
            "test-order dependent: passes only after another test (brittle)".into(),
            explanation,
            Some(reproduction),
            Some(setter),
        );
        Some(diagnosis)
    }

    /// Whether the victim passes after `set` in every one of `runs` runs.
    fn passes_with(&mut self, set: &[String], runs: usize) -> bool {
        let plan = self.with(set);
        (0..runs).all(|_| self.runner.run(&plan) == Ending::Pass)
    }

    /// The tests libtest runs before the victim in one thread: those whose names sort before.
    fn tests_before(&self) -> Vec<String> {
        let victim = self.victim();
        self.tests
            .iter()
            .take_while(|test| *test != victim)
            .cloned()
            .collect()
    }

    /// The plan of the victim after `set` in one thread.
    fn with(&self, set: &[String]) -> Plan {
        let mut tests = set.to_vec();
        tests.push(self.victim().to_string());
        Plan {
            threads: Some(1),
            tests,
            perturbation: Perturbation::none(),
        }
    }

    /// Whether the victim fails after `set` within `runs` runs.
    fn fails_with(&mut self, set: &[String], runs: usize) -> bool {
        let plan = self.with(set);
        (0..runs).any(|_| self.runner.run(&plan).failed())
    }

    /// Halves `set` until one test alone breaks the victim, verifies it and checks the
    /// counterfactual.
    fn bisect(&mut self, set: Vec<String>, check_runs: usize) -> Option<Diagnosis> {
        let culprit = match halve(set, |half| {
            !self.over_budget() && self.fails_with(half, check_runs)
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
        let plan = self.with(std::slice::from_ref(&culprit));
        let label = format!("VERIFY: after {culprit}");
        let counter_plan = Plan::alone(self.victim(), Perturbation::none());
        let (verify, counter) =
            self.verify_and_counter((&label, &plan), ("counterfactual: alone", &counter_plan));
        let (verify_runs, verify_failed) = tally(&verify);
        let (p_value, full) = self.credit(&label, (verify_runs, verify_failed), tally(&counter))?;
        let value = format!("[{culprit}, {}]", self.victim());
        let reproduction =
            Reproduction::new(Axis::Order, value, plan, (verify_runs, verify_failed));
        let victim = self.victim().to_string();
        let mut headline = "test-order dependent".to_string();
        if !full {
            headline.push_str(" (elevates the failure rate)");
        }
        let explanation = format!(
            "The test passes on its own, but fails when it runs after {culprit} in the same process (--test-threads=1, in libtest's name order): fails {verify_failed}/{verify_runs} in that order. {culprit} leaves behind state (a static, an environment variable, a file) that {victim} depends on being absent."
        );
        // The unperturbed run of the victim after its siblings failed: that is the failure the
        // user sees in the suite, and this explains it.
        let mut diagnosis = self.conclude(
            "flaky-order",
            Some("observed"),
            headline,
            explanation,
            Some(reproduction),
            Some(culprit),
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
    }
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
}
