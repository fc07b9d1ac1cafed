//! Races between the victim and the tests beside it. A race between sibling tests fails a few
//! runs in a hundred of the whole suite, never alone and never in one thread; paired with the
//! one sibling it races, on two threads, it fails several times as often. So the search runs
//! the victim paired with each sibling in turn, many short runs each, with the whole binary
//! now and then (the suite as the user runs it); a pair that fails is verified on fresh runs
//! against the victim alone and the same pair in one thread (Fisher's exact test), and its
//! repro is a stress repro: the pair run until it fails, up to a bound sized from its rate.

use std::time::{Duration, Instant};

use crate::doctor::axes::{Axis, Perturbation};
use crate::doctor::diagnose::{tally, Diagnosis, Doctor, Evidence, Reproduction, Search};
use crate::doctor::fingerprint::Ending;
use crate::doctor::gates;
use crate::doctor::runner::Plan;

/// The rate per paired run that the search is sized to see: with this many runs of a pair
/// without a failure, a race failing 1% of that pair's runs would have shown with 95%
/// confidence. Real races between siblings fail 0.5-25% of paired runs.
const PAIR_RATE: f64 = 0.01;
/// The fewest and the most verifying runs of one pair; in between, sized from the rate the
/// search saw it fail at, so that a real race at that rate fails about eight times.
const FEWEST_VERIFY_RUNS: u64 = 100;
const MOST_VERIFY_RUNS: u64 = 6_000;
/// Runs per round of a sibling in the victim's own module, which shares its statics and
/// helpers and so is likelier to race it, against one for any other.
const SAME_MODULE_RUNS: usize = 3;
/// The significance a pair's race must reach: stricter than the other gates', as the search
/// may verify several candidates.
const RACE_ALPHA: f64 = 0.01;
/// The chance with which a stress repro fails within its bound...
const STRESS_CONFIDENCE: f64 = 0.99;
/// ...even when the pair fails this many times less often than its lower bound: a race's rate
/// moves with the machine's load, two or three times between one minute and the next.
const STRESS_MARGIN: f64 = 3.0;
/// The most runs a stress repro makes.
const MOST_STRESS_RUNS: u64 = 20_000;

/// How many times a pair that fails again in the search is verified again: its rate moves with
/// the machine's load, and one verification can fall in a quiet stretch.
const MOST_VERIFICATIONS: u32 = 3;
/// The fewest fresh runs a verification makes before it lets a pair go unseen.
const FEWEST_UNSEEN_RUNS: u64 = 300;

/// A pair's runs in the search.
struct Pair {
    sibling: String,
    runs: u64,
    failed: u64,
    /// Its verifications so far, and their fresh runs, pooled.
    verifications: u32,
    fresh: Fresh,
}

/// A pair's verifying runs: the pair on two threads, and the controls taken in turns with it
/// (the pair on one thread, and the victim alone).
#[derive(Clone, Copy, Default)]
struct Fresh {
    runs: u64,
    failed: u64,
    control_runs: u64,
    control_failed: u64,
    alone_runs: u64,
    alone_failed: u64,
}

impl Doctor<'_> {
    /// Searches the siblings for the one whose running beside the victim makes it fail, within
    /// `share` of the budget: the diagnosis, or `None` with the search's evidence recorded.
    pub(super) fn races(&mut self, share: Duration) -> Option<Diagnosis> {
        let victim = self.victim().to_string();
        let siblings: Vec<String> = self
            .tests
            .iter()
            .filter(|test| **test != victim)
            .cloned()
            .collect();
        if siblings.is_empty() || !self.settings.axes.contains(&Axis::Parallel) {
            return None;
        }
        self.progress(&format!(
            "pairing it with each of its {} siblings on two threads",
            siblings.len()
        ));
        let stop_at = Instant::now() + share;
        let target = gates::runs_to_see(PAIR_RATE, 1.0 - gates::CONFIDENCE) as u64;
        let whole = Plan {
            tests: self.tests.to_vec(),
            threads: None,
            perturbation: Perturbation::none(),
        };
        let mut pairs: Vec<Pair> = siblings
            .into_iter()
            .map(|sibling| Pair {
                sibling,
                runs: 0,
                failed: 0,
                verifications: 0,
                fresh: Fresh::default(),
            })
            .collect();
        let mut suite: Vec<Ending> = Vec::new();
        let mut round = 0u64;
        let found = 'search: loop {
            // The suite's runs are a side sample: the pairs decide when the search has looked.
            let done = pairs.iter().all(|pair| pair.runs >= target);
            if done || self.over_budget() || Instant::now() >= stop_at {
                break None;
            }
            // The suite as the user runs it, every fourth round: what the user saw.
            if round.is_multiple_of(4) {
                let ending = self.runner.run(&whole);
                if ending != Ending::NotRun {
                    suite.push(ending);
                }
            }
            let turns = pairs
                .iter()
                .enumerate()
                .flat_map(|(index, pair)| {
                    let runs = if same_module(&pair.sibling, &victim) {
                        SAME_MODULE_RUNS
                    } else {
                        1
                    };
                    std::iter::repeat_n(index, runs)
                })
                .collect::<Vec<usize>>();
            for index in turns {
                if Instant::now() >= stop_at || self.over_budget() {
                    break;
                }
                let plan = pair_plan(&pairs[index].sibling, &victim, 2);
                let ending = self.runner.run(&plan);
                if ending == Ending::NotRun {
                    continue;
                }
                pairs[index].runs += 1;
                if ending.failed() {
                    pairs[index].failed += 1;
                    if pairs[index].verifications < MOST_VERIFICATIONS {
                        pairs[index].verifications += 1;
                        let sibling = pairs[index].sibling.clone();
                        let seen = (pairs[index].runs, pairs[index].failed);
                        self.record_search(&suite, &pairs);
                        let fresh = &mut pairs[index].fresh;
                        if let Some(diagnosis) = self.verify_race(&sibling, seen, fresh, stop_at) {
                            break 'search Some(diagnosis);
                        }
                        if self.fails_alone.is_some() {
                            return None;
                        }
                    }
                }
            }
            round += 1;
        };
        if found.is_some() {
            return found;
        }
        self.record_search(&suite, &pairs);
        let (runs, failed) = tally(&suite);
        if failed > 0 {
            if let Some(diagnosis) = self.leave_one_out(&whole, (runs, failed), stop_at) {
                return Some(diagnosis);
            }
            return Some(self.suite_race(&whole, (runs, failed)));
        }
        None
    }

    /// The search's evidence so far: the suite's runs and the pairs' runs, as two rows.
    fn record_search(&mut self, suite: &[Ending], pairs: &[Pair]) {
        let (runs, failed) = tally(suite);
        // One pair of rows for the search, however often it is recorded on the way.
        self.evidence.retain(|row| {
            !row.label.starts_with("beside its ") && !row.label.starts_with("paired with ")
        });
        self.searched = Some(Search {
            siblings: pairs.len(),
            suite_runs: runs,
            fewest_pair_runs: pairs.iter().map(|pair| pair.runs).min().unwrap_or(0),
        });
        let paired = pairs.iter().map(|pair| pair.runs).sum();
        let paired_failed = pairs.iter().map(|pair| pair.failed).sum();
        let fewest = pairs.iter().map(|pair| pair.runs).min().unwrap_or(0);
        self.evidence.push(Evidence {
            label: format!("beside its {}, in parallel", siblings_text(pairs.len())),
            runs,
            failed,
            note: String::new(),
        });
        self.evidence.push(Evidence {
            label: format!("paired with {}, two threads", each_text(pairs.len())),
            runs: paired,
            failed: paired_failed,
            note: if fewest > 0 {
                format!("≥{fewest} runs each")
            } else {
                String::new()
            },
        });
    }

    /// Fresh runs of the victim beside `sibling` on two threads, against the same pair in one
    /// thread, until the race is significant or clearly absent: the diagnosis, or `None` with
    /// a warning that names no one.
    fn verify_race(
        &mut self,
        sibling: &str,
        (seen_runs, seen_failed): (u64, u64),
        fresh: &mut Fresh,
        stop_at: Instant,
    ) -> Option<Diagnosis> {
        let seen = seen_failed as f64 / seen_runs.max(1) as f64;
        let victim = self.victim().to_string();
        self.progress(&format!("failed beside {sibling}: verifying on fresh runs"));
        let pair = pair_plan(sibling, &victim, 2);
        let counter = pair_plan(sibling, &victim, 1);
        let alone = Plan::alone(&victim, Perturbation::none());
        let Fresh {
            mut runs,
            mut failed,
            control_runs: mut counter_runs,
            control_failed: mut counter_failed,
            mut alone_runs,
            mut alone_failed,
        } = *fresh;
        // This verification's own runs, for the rule that lets an unseen pair go.
        let runs_before = runs;
        let bound =
            ((8.0 / seen.max(1e-6)).ceil() as u64).clamp(FEWEST_VERIFY_RUNS, MOST_VERIFY_RUNS);
        // The control is taken now, in turns with the pair, and never from the baseline: a
        // flake that drifts with the moment (the clock's fraction of a second, the machine's
        // load) then falls on both alike, and earns the sibling nothing.
        let p_value = loop {
            let mut batch = 0;
            for turn in 0..20 {
                if self.over_budget() {
                    break;
                }
                let ending = self.runner.run(&pair);
                if ending != Ending::NotRun {
                    batch += 1;
                    runs += 1;
                    failed += u64::from(ending.failed());
                }
                let by_itself = turn % 2 == 1;
                let control = self.runner.run(if by_itself { &alone } else { &counter });
                if control != Ending::NotRun {
                    counter_runs += 1;
                    counter_failed += u64::from(control.failed());
                    if by_itself {
                        alone_runs += 1;
                        alone_failed += u64::from(control.failed());
                        if let Some(print) = control.fingerprint() {
                            self.baseline_prints.insert(print.to_string());
                        }
                    }
                }
            }
            let p_value = gates::fisher_greater(failed, runs, counter_failed, counter_runs);
            // No race shows when the controls fail as often as the pair does.
            let futile = counter_failed >= 3 && failed * counter_runs <= counter_failed * runs;
            // Past its bound, a pair goes on while it has failed more often than its controls,
            // as long as the budget lasts: a race at 0.5% per run needs thousands of runs.
            let spent = runs >= MOST_VERIFY_RUNS
                || (runs >= bound && failed > 0 && failed <= counter_failed);
            // Three times the runs it took to see the failure once, without seeing it again: at
            // the rate that one failure suggests, that happens 5% of the time.
            let unseen =
                failed == 0 && runs - runs_before >= (3 * seen_runs).max(FEWEST_UNSEEN_RUNS);
            if (failed >= 3 && p_value < RACE_ALPHA)
                || futile
                || spent
                || unseen
                || Instant::now() >= stop_at
                || batch == 0
                || self.over_budget()
            {
                break p_value;
            }
        };
        *fresh = Fresh {
            runs,
            failed,
            control_runs: counter_runs,
            control_failed: counter_failed,
            alone_runs,
            alone_failed,
        };
        let rate = if runs > 0 {
            failed as f64 / runs as f64
        } else {
            0.0
        };
        let lower = gates::repro_lower_bound(failed, runs);
        // One pair of rows per sibling, with its verifications' runs pooled.
        let verify_label = format!("VERIFY: beside {sibling}, two threads");
        let counter_label = format!("counterfactual: with {sibling} in one thread, and alone");
        self.evidence
            .retain(|row| row.label != verify_label && row.label != counter_label);
        let said = format!("{victim} failed beside {sibling} while searching");
        self.warnings.retain(|warning| !warning.starts_with(&said));
        self.evidence.push(Evidence {
            label: verify_label,
            runs,
            failed,
            note: format!("{} per run, ≥{}", percent(rate), percent(lower)),
        });
        self.evidence.push(Evidence {
            label: counter_label,
            runs: counter_runs,
            failed: counter_failed,
            note: if counter_failed == 0 {
                "✓ passes".into()
            } else {
                "✗ fails too".into()
            },
        });
        if alone_failed > 0 {
            // The victim fails by itself, unperturbed: the baseline was a lucky streak, and the
            // failure is its own run's, for the axes of that run to explain.
            self.fails_alone = Some((alone_runs, alone_failed));
        }
        if failed < 3 || p_value >= RACE_ALPHA {
            self.warnings.push(format!(
                "{victim} failed beside {sibling} while searching, but {failed} of {runs} verifying runs beside it (against {counter_failed} of {counter_runs} with the two in one thread and alone, in turns; Fisher's exact test, one-sided, p = {p_value:.3}) do not show a race with it: no credit",
            ));
            return None;
        }
        let attempts = stress_attempts(lower);
        let (base_runs, _) = self.baseline;
        let mut reproduction = Reproduction::new(
            Axis::Parallel,
            format!("{sibling} beside it"),
            pair,
            (runs, failed),
        );
        reproduction.attempts = Some(attempts);
        let explanation = format!(
            "Never failed alone ({base_runs} runs); {counter_failed} of {counter_runs} runs with {sibling} in one thread or alone, taken in turns, failed; but it fails {failed} of {runs} runs ({}, at least {} at 95% confidence) while {sibling} runs beside it on a second thread of the same process (Fisher's exact test, one-sided, p = {p_value:.2e}). The two share something (a static, an environment variable, a file, a port) without synchronization: a race{}. The repro runs the pair until it fails, up to {attempts} times: it fails within that with probability ≥ {:.0}%, even at a third of that lower bound. Synchronize the shared state, or give each test its own; `serial_test` or a shared Mutex serializes the two.",
            percent(rate),
            percent(lower),
            if failed < runs {
                ", which fails some runs, not all, and more rarely in the whole suite"
            } else {
                ""
            },
            STRESS_CONFIDENCE * 100.0,
        );
        let mut diagnosis = self.conclude(
            "flaky-parallel",
            Some("observed"),
            "races with a sibling test".into(),
            explanation,
            Some(reproduction),
            Some(sibling.to_string()),
        );
        diagnosis.p_value = Some(p_value);
        Some(diagnosis)
    }

    /// A victim that failed beside its siblings, with no one sibling found to break it: the
    /// suite's own runs are the evidence and the repro.
    fn suite_race(&mut self, whole: &Plan, (runs, failed): (u64, u64)) -> Diagnosis {
        let lower = gates::repro_lower_bound(failed, runs);
        let attempts = stress_attempts(lower);
        let mut reproduction = Reproduction::new(
            Axis::Parallel,
            "its siblings beside it".into(),
            whole.clone(),
            (runs, failed),
        );
        reproduction.attempts = Some(attempts);
        let (base_runs, _) = self.baseline;
        self.conclude(
            "flaky-parallel",
            Some("observed"),
            "fails beside its siblings".into(),
            format!(
                "Never failed alone ({base_runs} runs), but failed {failed} of {runs} runs of its whole binary in parallel; no single sibling beside it was found to break it within the budget (several may, together). The repro runs the whole binary until it fails, up to {attempts} times."
            ),
            Some(reproduction),
            None,
        )
    }
}

/// "3 siblings", "1 sibling".
fn siblings_text(count: usize) -> String {
    match count {
        1 => "1 sibling".to_string(),
        many => format!("{many} siblings"),
    }
}

/// "each of 3 siblings", "its 1 sibling".
fn each_text(count: usize) -> String {
    match count {
        1 => "its 1 sibling".to_string(),
        many => format!("each of {many} siblings"),
    }
}

/// Whether `sibling` is in `victim`'s module (`config::tests::a` beside `config::tests::b`).
fn same_module(sibling: &str, victim: &str) -> bool {
    let module = |name: &str| name.rsplit_once("::").map(|(module, _)| module.to_string());
    module(sibling) == module(victim)
}

/// The victim and `sibling` on `threads` threads (libtest starts them in name order).
fn pair_plan(sibling: &str, victim: &str, threads: usize) -> Plan {
    let mut tests = vec![sibling.to_string(), victim.to_string()];
    tests.sort();
    Plan {
        tests,
        threads: Some(threads),
        perturbation: Perturbation::none(),
    }
}

/// How many runs a stress repro makes so that a failure rate of at least `lower` fails within
/// them with [`STRESS_CONFIDENCE`], and does so still at a [`STRESS_MARGIN`] times lower rate.
pub fn stress_attempts(lower: f64) -> u64 {
    (gates::runs_to_see(lower / STRESS_MARGIN, 1.0 - STRESS_CONFIDENCE) as u64)
        .min(MOST_STRESS_RUNS)
}

/// A rate as a percentage with as many decimals as a small one needs: `12%`, `0.8%`.
pub fn percent(rate: f64) -> String {
    let percent = rate * 100.0;
    if percent >= 10.0 || percent == 0.0 {
        format!("{percent:.0}%")
    } else {
        format!("{percent:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stress_repro_is_sized_to_fail_with_the_stated_chance() {
        // At 15% per run measured, sized for 5%: 90 runs fail at least once with probability
        // 1 - 0.95^90 > 99%.
        assert_eq!(stress_attempts(0.15), 90);
        assert!(1.0 - 0.95f64.powi(90) >= 0.99 && 1.0 - 0.95f64.powi(89) < 0.99);
        assert_eq!(stress_attempts(0.0), 1);
        assert_eq!(stress_attempts(1e-9), MOST_STRESS_RUNS);
    }

    #[test]
    fn siblings_in_the_victims_module_are_told_apart() {
        assert!(same_module("config::tests::a", "config::tests::b"));
        assert!(!same_module("scan::tests::a", "config::tests::b"));
        assert!(same_module("a", "b"));
    }

    #[test]
    fn pairs_run_in_name_order() {
        let plan = pair_plan("b_writer", "a_victim", 2);
        assert_eq!(plan.tests, ["a_victim", "b_writer"]);
        assert_eq!(plan.threads, Some(2));
    }

    #[test]
    fn rates_read_as_percentages() {
        assert_eq!(percent(0.125), "12%");
        assert_eq!(percent(0.008), "0.8%");
        assert_eq!(percent(0.0), "0%");
    }
}
