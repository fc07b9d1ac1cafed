//! Early stopping (`PROB_STOP`): when a gated case's remaining runs can be skipped. Under
//! `curtail` a case stops once no way its remaining runs could go changes its verdict, so its
//! verdict is the one every run would give; under `sequential` a rate gate is judged by the
//! confidence sequence (`sequence`), valid however early it stops, and stops as soon as that
//! interval clears the bar or falls below it.
//!
//! The rules are pytest-probability's (`Gate.settled`, `Gate.decided`, `_stoppable`), so that
//! on the same runs both tools stop the same ones.

use std::fmt;

use super::sequence::{monotone_level, SEQUENCE_PRIOR};
use super::{ErrorPolicy, GateSpec, Method, Prior, Rule, StatsConfig, Verdict};

/// Early stopping, from `PROB_STOP` (config `stop`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StopMode {
    /// Every run runs. The default.
    #[default]
    Off,
    /// A gated case's remaining runs are skipped once its verdict can no longer change.
    Curtail,
    /// Rate gates are judged on the confidence sequence and stop as soon as it decides them;
    /// count gates are curtailed.
    Sequential,
}

impl StopMode {
    /// The mode as settings and reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            StopMode::Off => "off",
            StopMode::Curtail => "curtail",
            StopMode::Sequential => "sequential",
        }
    }

    /// Parses `off`, `curtail` or `sequential`.
    pub fn parse(text: &str) -> Result<StopMode, String> {
        probtest_settings::parse_stop(text).map(StopMode::from)
    }

    /// Whether the mode is `off`, for leaving it out of reports that do not stop.
    pub fn is_off(&self) -> bool {
        *self == StopMode::Off
    }
}

impl From<probtest_settings::Stop> for StopMode {
    fn from(stop: probtest_settings::Stop) -> StopMode {
        match stop {
            probtest_settings::Stop::Off => StopMode::Off,
            probtest_settings::Stop::Curtail => StopMode::Curtail,
            probtest_settings::Stop::Sequential => StopMode::Sequential,
        }
    }
}

impl fmt::Display for StopMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `PROB_STOP` may stop a case with this gate: it is gated and no other verdict needs
/// every one of its runs (`needs_every_run`: its function's comparison margin, or a latency
/// gate, whose sample of run times skipped runs would shrink; nor a margin against a
/// baseline). Being conservative keeps every other verdict the one all the runs would give.
pub fn stoppable(gate: Option<&GateSpec>, needs_every_run: bool, config: &StatsConfig) -> bool {
    let baseline_margin = config.margin.is_some() && config.baseline.is_some();
    gate.is_some() && !config.stop.is_off() && !(needs_every_run || baseline_margin)
}

/// The gate a case is judged by under `config`: under `sequential` a stoppable rate gate is
/// judged by the confidence sequence at its own level, the mixing prior (Jeffreys) replacing
/// any Bayesian prior; every other gate as it is.
pub fn judged_gate(
    gate: Option<GateSpec>,
    needs_every_run: bool,
    config: &StatsConfig,
) -> Option<GateSpec> {
    let gate = gate?;
    let sequential = config.stop == StopMode::Sequential
        && matches!(gate.rule, Rule::MinRate(_))
        && stoppable(Some(&gate), needs_every_run, config);
    if !sequential {
        return Some(gate);
    }
    Some(GateSpec {
        method: Some(Method::Sequential),
        prior: Some(Prior {
            a: SEQUENCE_PRIOR.0,
            b: SEQUENCE_PRIOR.1,
        }),
        ..gate
    })
}

/// A gate as stopping judges it: the verdict on a number of passes among judged runs.
struct Judge<'a> {
    gate: &'a GateSpec,
    config: &'a StatsConfig,
}

impl Judge<'_> {
    fn verdict(&self, passes: u64, total: u64) -> Verdict {
        // As non-passes that are not errors the runs are all judged, whatever the policy.
        self.gate
            .judge(self.config, passes, total - passes, 0)
            .verdict
    }

    /// `(pass_at, fail_at)` with `total` judged runs: the fewest passes that PASS (`total + 1`
    /// when none does) and the most that FAIL (`-1` when none does). With the runs fixed every
    /// bound rises with the passes, so bisection finds both.
    fn cutoffs(&self, total: u64) -> (i64, i64) {
        let total_i = total as i64;
        let pass_at = if self.verdict(total, total) == Verdict::Pass {
            let (mut low, mut high) = (-1i64, total_i);
            while high - low > 1 {
                let mid = (low + high) / 2;
                if self.verdict(mid as u64, total) == Verdict::Pass {
                    high = mid;
                } else {
                    low = mid;
                }
            }
            high
        } else {
            total_i + 1
        };
        let (mut low, mut high) = (-1i64, total_i + 1);
        while high - low > 1 {
            let mid = (low + high) / 2;
            if self.verdict(mid as u64, total) != Verdict::Fail {
                high = mid;
            } else {
                low = mid;
            }
        }
        (pass_at, high - 1)
    }

    fn judged(&self, passes: u64, fails: u64, errors: u64) -> u64 {
        passes
            + fails
            + match self.config.errors {
                ErrorPolicy::Count => errors,
                ErrorPolicy::Exclude => 0,
            }
    }
}

/// The case's verdict if its `remaining` runs can no longer change it, else `None`. Each
/// remaining run may pass or not (or, errors excluded, leave the sample), so the two extremes
/// decide: PASS is certain when it holds with every remaining run failing, FAIL when it holds
/// with every one passing, UNDECIDED when neither is reachable. Never settled before a run is
/// recorded, so a stopped case always has a row.
pub fn settled(
    gate: &GateSpec,
    config: &StatsConfig,
    [passes, fails, errors]: [u64; 3],
    remaining: u64,
) -> Option<Verdict> {
    if passes + fails + errors == 0 {
        return None;
    }
    let judge = Judge { gate, config };
    let judged = judge.judged(passes, fails, errors);
    let (pass_at, fail_at) = judge.cutoffs(judged + remaining);
    let (p, r) = (passes as i64, remaining as i64);
    let verdict = if p >= pass_at {
        Verdict::Pass
    } else if p + r <= fail_at {
        Verdict::Fail
    } else if fail_at < p && p + r < pass_at {
        Verdict::Undecided
    } else {
        return None;
    };
    // Every run so far errored and is excluded: the remaining ones could all error too and
    // leave nothing to judge, so that verdict must agree as well.
    if judged == 0 && judge.verdict(0, 0) != verdict {
        return None;
    }
    Some(verdict)
}

/// The verdict to stop the case on after these runs, or `None` to keep running: the rule
/// `PROB_STOP` applies before each run. A fixed-run gate (a count gate, or any gate under
/// `curtail`) stops once [`settled`]. A sequential gate stops as soon as its verdict on the
/// runs so far is PASS or FAIL, and as UNDECIDED once neither is reachable within the remaining
/// runs, which needs the sequence's bounds to move one way per run (from
/// [`monotone_level`](super::sequence::monotone_level) on).
pub fn decided(
    gate: &GateSpec,
    config: &StatsConfig,
    counts: [u64; 3],
    remaining: u64,
) -> Option<Verdict> {
    let sequential = gate.method == Some(Method::Sequential);
    if !sequential {
        return settled(gate, config, counts, remaining);
    }
    let judge = Judge { gate, config };
    let [passes, fails, errors] = counts;
    let judged = judge.judged(passes, fails, errors);
    if judged > 0 {
        let verdict = judge.verdict(passes, judged);
        if verdict != Verdict::Undecided {
            return Some(verdict);
        }
    }
    if gate.interval(config).level < monotone_level() {
        return None;
    }
    (settled(gate, config, counts, remaining) == Some(Verdict::Undecided))
        .then_some(Verdict::Undecided)
}

#[cfg(test)]
mod tests;
