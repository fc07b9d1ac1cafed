//! Planning without running: how many runs a gate needs to pass at all, how likely it is to pass
//! with the planned runs if the case's true pass rate is what the user assumes, how many runs
//! make that likely, and how likely the planned runs are to show a rare failure at all. The
//! methods are pytest-probability's (`--prob-plan`), so the two plan alike.

use crate::types::stats::quantile::regularized_beta;
use crate::types::stats::{GateSpec, Rule, StatsConfig, Verdict};

/// `P(X ≥ at_least)` for `X ~ Binomial(n, rate)`: the regularized incomplete beta function
/// `I_rate(at_least, n - at_least + 1)`, as scipy's `binom.sf(at_least - 1, n, rate)`.
pub fn binomial_at_least(at_least: u64, n: u64, rate: f64) -> f64 {
    if at_least == 0 {
        return 1.0;
    }
    if at_least > n {
        return 0.0;
    }
    if rate <= 0.0 {
        return 0.0;
    }
    if rate >= 1.0 {
        return 1.0;
    }
    regularized_beta(at_least as f64, (n - at_least + 1) as f64, rate)
}

/// `1 − (1 − rate)ⁿ`: the chance that `n` independent runs show at least one failure when each
/// fails with probability `rate`.
pub fn detection_chance(rate: f64, n: u64) -> f64 {
    if rate >= 1.0 {
        return if n > 0 { 1.0 } else { 0.0 };
    }
    -(n as f64 * (-rate).ln_1p()).exp_m1()
}

/// The fewest runs that show at least one failure with probability `level` when each run fails
/// with probability `rate`: `⌈ln(1 − level) / ln(1 − rate)⌉` (29 at 10% and 299 at 1% for 95%),
/// nudged by whole runs against [`detection_chance`] so that rounding at an exact boundary
/// cannot make it one off. `None` for a rate of 0, whose failures are never seen.
pub fn runs_to_see_failure(rate: f64, level: f64) -> Option<u64> {
    if rate <= 0.0 {
        return None;
    }
    if rate >= 1.0 {
        return Some(1);
    }
    let mut n = ((-level).ln_1p() / (-rate).ln_1p()).ceil().max(1.0) as u64;
    while n > 1 && detection_chance(rate, n - 1) >= level {
        n -= 1;
    }
    while detection_chance(rate, n) < level {
        n += 1;
    }
    Some(n)
}

/// The verdict of `gate` on `passes` passing runs of `n`, with none errored.
fn verdict(gate: &GateSpec, config: &StatsConfig, passes: u64, n: u64) -> Verdict {
    gate.judge(config, passes, n - passes, 0).verdict
}

/// The fewest passes of `n` runs that make `gate` PASS; `None` when even `n` of `n` do not.
/// More passes of the same runs never make a verdict worse, so this bisects.
pub fn critical_passes(gate: &GateSpec, config: &StatsConfig, n: u64) -> Option<u64> {
    if verdict(gate, config, n, n) != Verdict::Pass {
        return None;
    }
    // verdict(low) is not PASS (or low is "below zero"), verdict(high) is.
    let (mut low, mut high) = (None::<u64>, n);
    loop {
        let floor = low.map_or(0, |low| low + 1);
        if floor >= high {
            return Some(high);
        }
        let middle = floor + (high - floor) / 2;
        if verdict(gate, config, middle, n) == Verdict::Pass {
            high = middle;
        } else {
            low = Some(middle);
        }
    }
}

/// The chance that `n` runs give `gate` a PASS when every run passes with probability `rate`:
/// the binomial chance of at least [`critical_passes`] passes.
pub fn power(gate: &GateSpec, config: &StatsConfig, n: u64, rate: f64) -> f64 {
    critical_passes(gate, config, n).map_or(0.0, |critical| binomial_at_least(critical, n, rate))
}

/// The fewest runs `n ≤ cap` with `power(n, rate) ≥ target`; `None` when no `n` up to `cap`
/// gets there, which is always so for a rate gate whose bar is at or above `rate`.
///
/// Power saw-tooths as `n` grows (the passing count moves in whole runs), so every `n` from the
/// gate's least feasible count is tried; the critical count rises by at most one per extra run,
/// so it is tracked incrementally.
pub fn runs_for_power(
    gate: &GateSpec,
    config: &StatsConfig,
    rate: f64,
    target: f64,
    cap: u64,
) -> Option<u64> {
    if let Rule::MinRate(bar) = gate.rule {
        if rate <= bar {
            return None;
        }
    }
    let start = gate.runs_needed(config)?.max(1);
    if start > cap || power(gate, config, cap, rate) < target {
        return None;
    }
    let mut critical = critical_passes(gate, config, start)?;
    for n in start..=cap {
        while verdict(gate, config, critical, n) != Verdict::Pass {
            critical += 1;
        }
        if binomial_at_least(critical, n, rate) >= target {
            return Some(n);
        }
    }
    Some(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate_gate(bar: f64) -> GateSpec {
        GateSpec {
            rule: Rule::MinRate(bar),
            method: None,
            level: None,
            prior: None,
        }
    }

    #[test]
    fn binomial_tails_match_scipy() {
        // scipy.stats.binom.sf(k - 1, n, p)
        for (k, n, p, expected) in [
            (17, 20, 0.97, 0.997_331_169_251_631_1),
            (19, 20, 0.97, 0.880_161_977_726_796_8),
            (1, 10, 0.1, 0.651_321_559_900_000_1),
            (183, 200, 0.97, 0.999_960_263_430_152_5),
        ] {
            let got = binomial_at_least(k, n, p);
            assert!(
                (got - expected).abs() < 1e-12,
                "P(X >= {k}) of Binomial({n}, {p}) = {got}, not {expected}"
            );
        }
        assert_eq!(binomial_at_least(0, 5, 0.5), 1.0);
        assert_eq!(binomial_at_least(6, 5, 0.5), 0.0);
    }

    #[test]
    fn catching_a_flake_takes_what_the_closed_form_says() {
        assert_eq!(runs_to_see_failure(0.1, 0.95), Some(29));
        assert_eq!(runs_to_see_failure(0.01, 0.95), Some(299));
        assert_eq!(runs_to_see_failure(0.0, 0.95), None);
        assert!((detection_chance(0.1, 20) - 0.878_423_345_409_430_8).abs() < 1e-15);
        assert_eq!(detection_chance(1.0, 0), 0.0);
    }

    #[test]
    fn plans_agree_with_pytest_probability() {
        // pytest-probability 0.3.0, --prob-plan --prob-plan-assume 0.97: min runs, runs for 80%,
        // and the chance now, for min_rate 0.8 with 20 runs and min_rate 0.9 with 200.
        let config = StatsConfig::default();
        let gate = rate_gate(0.8);
        assert_eq!(gate.runs_needed(&config), Some(17));
        assert_eq!(runs_for_power(&gate, &config, 0.97, 0.8, 10_000), Some(26));
        assert_eq!((power(&gate, &config, 20, 0.97) * 100.0).round(), 54.0);
        let gate = rate_gate(0.9);
        assert_eq!(gate.runs_needed(&config), Some(36));
        assert_eq!(runs_for_power(&gate, &config, 0.97, 0.8, 10_000), Some(100));
        assert_eq!((power(&gate, &config, 200, 0.97) * 100.0).round(), 98.0);
        assert_eq!(power(&gate, &config, 10, 0.97), 0.0);
        // A bar at or above the assumed rate is never reached.
        assert_eq!(runs_for_power(&gate, &config, 0.9, 0.8, 10_000), None);
        let count = GateSpec {
            rule: Rule::MinPasses(8),
            ..gate
        };
        assert_eq!(runs_for_power(&count, &config, 0.97, 0.8, 10_000), Some(9));
        assert_eq!((power(&count, &config, 10, 0.97) * 100.0).round(), 100.0);
    }
}
