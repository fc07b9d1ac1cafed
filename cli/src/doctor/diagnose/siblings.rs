//! The tests around the victim: those before it in one thread (order) and those beside it
//! in parallel; the one that breaks it, found by halving them, verified, with its
//! counterfactual.

use crate::doctor::axes::{Axis, Perturbation};
use crate::doctor::diagnose::{tally, Diagnosis, Doctor, Reproduction};
use crate::doctor::fingerprint::Ending;
use crate::doctor::runner::Plan;

impl Doctor<'_> {
    /// Order, then parallel: the tests of the victim's binary that make it fail.
    pub(super) fn siblings(&mut self) -> Option<Diagnosis> {
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
        let reproduction = Reproduction::new(axis, value, plan, (verify_runs, verify_failed));
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
