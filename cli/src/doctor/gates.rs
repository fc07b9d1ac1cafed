//! The doctor's statistical gates: how sure a repro is (the exact one-sided Clopper-Pearson
//! lower bound on its failure rate, from probtest's own statistics), and whether a
//! perturbation's failure rate beats the baseline's (Fisher's exact test, one-sided), so that a
//! coin-flip flake is never blamed on a seed that happened to streak.

use probtest::stats::{IntervalSpec, Method};

/// Whether a perturbation's failure rate beats the baseline's: probtest's one-sided Fisher test.
pub use probtest::stats::paired::fisher_greater;

/// The level of both gates.
pub const CONFIDENCE: f64 = 0.95;

/// The lower bound, at [`CONFIDENCE`], on the rate of failure after `failed` failures in `runs`
/// runs: one-sided, so 10 failures in 10 runs give 74%, as the seed's reports say it.
pub fn repro_lower_bound(failed: u64, runs: u64) -> f64 {
    // A one-sided bound at 95% is the lower end of the two-sided interval at 90%.
    let spec = IntervalSpec {
        method: Method::Exact,
        level: 1.0 - 2.0 * (1.0 - CONFIDENCE),
        ..IntervalSpec::default()
    };
    spec.interval(failed, runs)
        .map_or(0.0, |interval| interval.low)
}

/// How many runs make it likely, with probability `1 - miss`, to see at least one failure of a
/// test that fails at `rate` per run; at least one.
pub fn runs_to_see(rate: f64, miss: f64) -> usize {
    if rate.is_nan() || rate <= 0.0 || rate >= 1.0 {
        return 1;
    }
    ((miss.ln() / (1.0 - rate).ln()).ceil() as usize).max(1)
}

/// The failure rate per run above which `runs` runs without a failure would, with
/// [`CONFIDENCE`], have shown one: the power of a sample that saw none.
pub fn detectable_rate(runs: u64) -> f64 {
    if runs == 0 {
        return 1.0;
    }
    1.0 - (1.0 - CONFIDENCE).powf(1.0 / runs as f64)
}

/// Whether a one-sided p-value is significant at [`CONFIDENCE`].
pub fn significant(p_value: f64) -> bool {
    p_value < 1.0 - CONFIDENCE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_of_ten_is_at_least_74_percent() {
        let bound = repro_lower_bound(10, 10);
        assert!((bound - 0.05f64.powf(0.1)).abs() < 1e-9, "{bound}");
        assert!((0.74..0.75).contains(&bound));
        assert_eq!(repro_lower_bound(0, 10), 0.0);
        assert_eq!(repro_lower_bound(0, 0), 0.0);
    }

    #[test]
    fn sample_sizes_and_power_agree() {
        // A 10% flake shows within 29 runs with 95% probability; 0.95^29 < 0.05 < 0.95^28.
        assert_eq!(runs_to_see(0.1, 0.05), 29);
        assert_eq!(runs_to_see(0.0, 0.05), 1);
        assert_eq!(runs_to_see(1.0, 0.05), 1);
        // 59 clean runs rule out a 5% rate, 299 a 1% rate (the rule of three).
        assert!((detectable_rate(59) - 0.0495).abs() < 0.001);
        assert!((detectable_rate(299) - 0.00997).abs() < 0.0002);
        for runs in [5, 30, 200] {
            let rate = detectable_rate(runs);
            assert!(runs_to_see(rate * 1.0001, 0.05) <= runs as usize);
        }
    }

    #[test]
    fn fisher_matches_the_textbook_values() {
        // 10/10 against 3/10: p = C(13,10)/C(20,10) = 286/184756.
        let p = fisher_greater(10, 10, 3, 10);
        assert!((p - 286.0 / 184_756.0).abs() < 1e-12, "{p}");
        // The same rate is no evidence.
        assert!(fisher_greater(3, 10, 3, 10) > 0.5);
        assert!((fisher_greater(0, 10, 5, 10) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_streak_on_a_coin_flip_flake_earns_no_credit() {
        // The baseline fails half the time; a seed that failed 2 of 2 proves nothing.
        assert!(!significant(fisher_greater(2, 2, 5, 10)));
        // 10 of 10 against 5 of 10 does.
        assert!(significant(fisher_greater(10, 10, 5, 10)));
        // A flake the baseline never showed, provoked 10 of 10.
        assert!(significant(fisher_greater(10, 10, 0, 10)));
    }
}
