//! The quick path of a run: for a function with nothing to do around its runs (no gate,
//! margin, timeout, limit, setup, teardown, delay or early stopping) whose case this process
//! has recorded in a slot already, a run is its slot's start, the body, and its slot's end.
//! Anything else the body does (a failure, recorded usage, a wait for a limit) is finished by
//! the full path. In a test binary built without optimizations, each function a run calls is
//! a cold call on a new thread (libtest starts one per test), so the run calls few.
//!
//! Layer: harness.

use std::cell::RefCell;
use std::panic::catch_unwind;
use std::time::Instant;

use super::{fail_item, Active, BenchReturn};
use crate::harness::context::{with_current, RunCell};
use crate::harness::recorder;
use crate::harness::registry::{self, Bench, Case};
use crate::harness::settings::Settings;
use crate::types::status::Outcome;

/// Whether the runs of `bench` may take the quick path: worked out at its first run, then kept.
pub(super) fn eligible(bench: &'static Bench, settings: &Settings) -> bool {
    if let Some(known) = bench.quick() {
        return known;
    }
    let quick = plain(bench, settings);
    bench.set_quick(quick);
    quick
}

/// Whether nothing happens around the runs of `bench` but recording them, in a process of
/// many runs.
fn plain(bench: &'static Bench, settings: &Settings) -> bool {
    let stats = &settings.stats;
    let quiet_settings = settings.problem.is_none()
        && !settings.per_test
        && settings.delay.is_zero()
        && stats.stop.is_off()
        && stats.min_rate.is_none()
        && stats.margin.is_none();
    let quiet_bench = bench.gate().is_none()
        && bench.latency().is_none()
        && !bench.has_margin()
        && !bench.has_verdict_item()
        && !bench.has_margin_item()
        && bench.limit().is_none();
    let no_timeout = bench
        .cases()
        .first()
        .is_some_and(|case| matches!(crate::harness::timeout::of(case), Ok(None)));
    quiet_settings
        && quiet_bench
        && no_timeout
        && crate::harness::frames::enabled().is_ok()
        && !registry::has_setups()
        && !registry::has_teardowns()
}

/// Runs run `run` of `case`, whose start is in slot `ticket`.
pub(super) fn run<R: BenchReturn>(
    case: &'static Case,
    run: u32,
    settings: &'static Settings,
    ticket: u64,
    body: fn() -> R,
) {
    let cell = RunCell::of_run(case, run);
    let started = Instant::now();
    let result = with_current(&cell, || catch_unwind(|| body().into_result()));
    // A pass that asked for nothing (no usage, cost, wait or handle) is an outcome and a time.
    if let (Ok(Ok(())), None) = (&result, cell.made()) {
        if recorder::ended_in_slot(ticket, Outcome::Pass, started.elapsed(), 0.0, settings) {
            case.note(Outcome::Pass);
            return;
        }
    }
    let active = Active {
        case,
        run,
        ticket,
        in_slot: true,
        settings,
        cell,
        started,
        problem: RefCell::new(None),
    };
    fail_item(active.finish(result));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::registry::{Config, Layout};
    use crate::types::stats::{GateSpec, Rule};

    static PLAIN_CASES: [&Case; 1] = [&PLAIN_CASE];
    static PLAIN_CASE: Case = Case::new(&PLAIN, 0, "", "", "", &[]);
    static PLAIN: Bench = Bench::new(
        "evals",
        "bench_plain",
        "evals::__probtest_bench_plain",
        file!(),
        line!(),
        3,
        &PLAIN_CASES,
        Layout::Runs,
        Config::new(None, None, None, &[]),
        None,
    );
    static GATED_CASES: [&Case; 1] = [&GATED_CASE];
    static GATED_CASE: Case = Case::new(&GATED, 0, "", "", "", &[]);
    static GATED: Bench = Bench::new(
        "evals",
        "bench_gated",
        "evals::__probtest_bench_gated",
        file!(),
        line!(),
        3,
        &GATED_CASES,
        Layout::Runs,
        Config::new(None, None, None, &[]),
        Some(GateSpec {
            rule: Rule::MinRate(0.8),
            method: None,
            level: None,
            prior: None,
        }),
    );

    fn settings(env: &[(&str, &str)]) -> Settings {
        crate::harness::settings::resolve(&PLAIN.config, |name| {
            env.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    #[test]
    fn only_a_function_with_nothing_around_its_runs_takes_the_quick_path() {
        assert!(plain(&PLAIN, &settings(&[])));
        assert!(!plain(&GATED, &settings(&[])), "a gate judges its runs");
        for setting in [
            ("PROB_STOP", "curtail"),
            ("PROB_MIN_RATE", "0.8"),
            ("PROB_DELAY", "0.01"),
        ] {
            let settings = settings(&[setting]);
            assert!(
                settings.problem.is_none(),
                "{setting:?} reads: {:?}",
                settings.problem
            );
            assert!(!plain(&PLAIN, &settings), "{setting:?}");
        }
    }
}
