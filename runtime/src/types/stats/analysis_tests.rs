//! The statistics of comparisons and function-level estimates checked against scipy and
//! statsmodels reference values (`scripts/reference_stats.py`) and against pytest-probability's
//! own results on the same inputs.

use serde_json::Value;

use super::cluster::{icc, projected_width};
use super::paired::{
    adjust_pvalues, exact_difference, fisher_exact, fisher_greater, newcombe, sign_flip, Adjustment,
};
use super::resample::{bootstrap_means, percentile_interval};

const REFERENCE: &str = include_str!("../../../tests/data/reference_stats.json");

fn reference(key: &str) -> Vec<Value> {
    let all: Value = serde_json::from_str(REFERENCE).expect("reference data parses");
    all[key].as_array().expect("reference cases").clone()
}

/// Within 1e-9 relative, or 1e-12 absolute for values at 0.
fn close(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= 1e-9 * theirs.abs().max(1e-3)
}

fn n(case: &Value, key: &str) -> u64 {
    case[key].as_u64().expect("a count")
}

#[test]
fn newcombe_and_fisher_match_statsmodels_and_scipy() {
    let cases = reference("two_arms");
    assert!(cases.len() >= 30);
    for case in &cases {
        let (x1, n1, x2, n2) = (n(case, "x1"), n(case, "n1"), n(case, "x2"), n(case, "n2"));
        let level = case["level"].as_f64().expect("level");
        let (low, high) = newcombe(x1, n1, x2, n2, level);
        let (want_low, want_high) = (
            case["low"].as_f64().unwrap(),
            case["high"].as_f64().unwrap(),
        );
        assert!(
            close(low, want_low) && close(high, want_high),
            "{x1}/{n1} vs {x2}/{n2} at {level}: ({low}, {high}) vs ({want_low}, {want_high})"
        );
        if let Some(p) = case["fisher"].as_f64() {
            let ours = fisher_exact(x1, n1, x2, n2);
            assert!(
                close(ours, p),
                "fisher {x1}/{n1} vs {x2}/{n2}: {ours} vs {p}"
            );
        }
    }
}

#[test]
fn icc_matches_a_one_way_anova_in_statsmodels() {
    for case in reference("icc") {
        let counts: Vec<(u64, u64)> = case["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|pair| (pair[0].as_u64().unwrap(), pair[1].as_u64().unwrap()))
            .collect();
        let want = case["icc"].as_f64().unwrap();
        let raw = icc(&counts, false).expect("defined");
        assert!(close(raw, want), "{counts:?}: {raw} vs {want}");
        assert_eq!(icc(&counts, true), Some(raw.clamp(0.0, 1.0)));
    }
    // Undefined: one input, every input run once, no variation.
    assert_eq!(icc(&[(3, 10)], true), None);
    assert_eq!(icc(&[(1, 1), (0, 1)], true), None);
    assert_eq!(icc(&[(10, 10), (10, 10)], true), None);
}

#[test]
fn adjustments_match_statsmodels_multipletests() {
    for case in reference("adjustments") {
        let ps: Vec<f64> = case["p"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_f64().unwrap())
            .collect();
        for (name, method) in [
            ("holm", Adjustment::Holm),
            ("bonferroni", Adjustment::Bonferroni),
            ("bh", Adjustment::Bh),
        ] {
            let want: Vec<f64> = case[name]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_f64().unwrap())
                .collect();
            let ours = adjust_pvalues(&ps, method);
            assert!(
                ours.iter().zip(&want).all(|(a, b)| close(*a, *b)),
                "{name} of {ps:?}: {ours:?} vs {want:?}"
            );
        }
        assert_eq!(adjust_pvalues(&ps, Adjustment::None), ps);
    }
}

#[test]
fn the_sign_flip_test_is_exact_and_equals_mcnemar_with_one_run() {
    // One run per arm: differences of ±1 are McNemar's exact test. 6 discordant pairs, all
    // one way: 2 of the 64 sign patterns are as extreme.
    let one = |b: u64, a: u64| exact_difference((b, 1), (a, 1));
    let diffs: Vec<_> = (0..6)
        .map(|_| one(0, 1))
        .chain([one(1, 1), one(0, 0)])
        .collect();
    assert_eq!(sign_flip(&diffs, 5000, 0), (2.0 / 64.0, true));
    // pytest-probability's sign_flip_test([0.2, -0.1, 0.3, 0.5, 0.0, 0.1]): 0.1875, exact.
    let tenths: Vec<_> = [(5, 7), (5, 4), (5, 8), (5, 10), (5, 5), (5, 6)]
        .iter()
        .map(|&(b, a)| exact_difference((b, 10), (a, 10)))
        .collect();
    assert_eq!(sign_flip(&tenths, 5000, 0), (0.1875, true));
    assert_eq!(sign_flip(&[], 5000, 0), (1.0, true));
}

#[test]
fn the_bootstrap_draws_what_pytest_probability_draws() {
    // stats.percentile_interval(stats.bootstrap([i / 10 for i in (3, 7, 10, 0, 5, 9, 8, 6, 6,
    // 2)], resamples=2000, seed=3)) is (0.37, 0.74): the same draws give the same interval,
    // to the last bit.
    let values: Vec<f64> = [3, 7, 10, 0, 5, 9, 8, 6, 6, 2]
        .iter()
        .map(|&v| f64::from(v) / 10.0)
        .collect();
    let samples = bootstrap_means(&values, 2000, 3);
    assert_eq!(
        percentile_interval(&samples, 0.95),
        Some((PEER_LOW, PEER_HIGH))
    );
}

const PEER_LOW: f64 = 0.37;
const PEER_HIGH: f64 = 0.74;

#[test]
fn doubling_inputs_always_narrows_by_a_factor_of_root_two() {
    for rho in [0.0, 0.3, 1.0] {
        assert!((projected_width(10.0, rho, 1.0, 2.0) - 0.5f64.sqrt()).abs() < 1e-15);
    }
    // At ρ = 0 runs are as good as inputs; at ρ = 1 more runs add nothing.
    assert!((projected_width(10.0, 0.0, 2.0, 1.0) - 0.5f64.sqrt()).abs() < 1e-15);
    assert!((projected_width(10.0, 1.0, 2.0, 1.0) - 1.0).abs() < 1e-15);
}

#[test]
fn fisher_sums_the_terms_pytest_probability_sums() {
    // pytest-probability's fisher_exact(6, 10, 6, 10) is 0.9999999999999934 with CPython's
    // lgamma, and prints as 0.99; the same terms give the same sum here.
    assert_eq!(fisher_exact(6, 10, 6, 10), 0.9999999999999934);
    assert_eq!(fisher_exact(9, 10, 9, 10), 1.0);
}

#[test]
fn fisher_greater_is_the_exact_upper_tail() {
    // Exact sums of hypergeometric terms, from rational arithmetic.
    for ((x1, n1, x2, n2), want) in [
        ((10, 10, 3, 10), 1.0 / 646.0),
        ((2, 2, 5, 10), 7.0 / 22.0),
        ((10, 10, 5, 10), 21.0 / 1292.0),
        ((10, 10, 0, 10), 1.0 / 184_756.0),
        ((3, 10, 3, 10), 443.0 / 646.0),
        ((7, 200, 1, 300), 0.008_083_368_783_264_202),
        ((40, 100, 20, 100), 0.001_595_908_412_964_382),
    ] {
        let p = fisher_greater(x1, n1, x2, n2);
        assert!(
            (p - want).abs() <= 1e-12 * want.max(1e-300) + 1e-15,
            "{x1}/{n1} vs {x2}/{n2}: {p} vs {want}"
        );
    }
    assert_eq!(fisher_greater(0, 10, 5, 10), 1.0);
    assert_eq!(fisher_greater(0, 0, 0, 0), 1.0);
}

#[test]
fn a_remembered_interval_is_the_one_the_bootstrap_gives() {
    use super::resample::bootstrap_interval;
    let values: Vec<f64> = (0..30).map(|i| f64::from(i % 7) / 6.0).collect();
    let direct = percentile_interval(&bootstrap_means(&values, 300, 5), 0.9);
    assert_eq!(bootstrap_interval(&values, 300, 5, 0.9), direct);
    assert_eq!(
        bootstrap_interval(&values, 300, 5, 0.9),
        direct,
        "remembered"
    );
    // Another seed is another key.
    let other = percentile_interval(&bootstrap_means(&values, 300, 6), 0.9);
    assert_eq!(bootstrap_interval(&values, 300, 6, 0.9), other);
}
