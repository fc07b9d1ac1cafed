//! Two arms of one input, and many inputs' differences: the Newcombe interval on a difference
//! of proportions, Fisher's exact test, the sign-flip permutation test, and adjustments of
//! p-values for making several comparisons.
//!
//! Layer: types.

use std::collections::BTreeMap;

use super::quantile::normal_quantile;
use super::resample::PyRandom;

/// The Wilson score interval for `x` passes in `n` runs, its bounds pinned to 0 at `x = 0` and
/// to 1 at `x = n`, where they are 0 and 1 analytically.
pub fn wilson(x: u64, n: u64, level: f64) -> (f64, f64) {
    let z = normal_quantile(0.5 + level / 2.0);
    let (xf, nf) = (x as f64, n as f64);
    let z2 = z * z;
    let p = xf / nf;
    let center = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = z / (1.0 + z2 / nf) * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let low = if x == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if x == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (low, high)
}

/// Newcombe's hybrid-score interval (method 10) for p1 − p2, from two independent samples:
/// `x1` of `n1` and `x2` of `n2`.
pub fn newcombe(x1: u64, n1: u64, x2: u64, n2: u64, level: f64) -> (f64, f64) {
    let (l1, u1) = wilson(x1, n1, level);
    let (l2, u2) = wilson(x2, n2, level);
    let (p1, p2) = (x1 as f64 / n1 as f64, x2 as f64 / n2 as f64);
    let difference = p1 - p2;
    let low = difference - ((p1 - l1).powi(2) + (u2 - p2).powi(2)).sqrt();
    let high = difference + ((u1 - p1).powi(2) + (p2 - l2).powi(2)).sqrt();
    (low.max(-1.0), high.min(1.0))
}

fn log_comb(n: u64, k: u64) -> f64 {
    lgamma(n as f64 + 1.0) - lgamma(k as f64 + 1.0) - lgamma((n - k) as f64 + 1.0)
}

/// log Γ(x) for x ≥ 1 as CPython's `math.lgamma` computes it (Lanczos' approximation, the
/// same coefficients and order of operations), so that an exact test's tail sums the same
/// terms as pytest-probability's: a p-value of 1 in exact arithmetic prints the same.
fn lgamma(x: f64) -> f64 {
    #[allow(clippy::excessive_precision)]
    const G: f64 = 6.024_680_040_776_729_583_740_234_375;
    // CPython's digits, as written there: each rounds to the same double.
    #[allow(clippy::excessive_precision, clippy::unreadable_literal)]
    const NUM: [f64; 13] = [
        23531376880.410759688572007674451636754734846804940,
        42919803642.649098768957899047001988850926355848959,
        35711959237.355668049440185451547166705960488635843,
        17921034426.037209699919755754458931112671403265390,
        6039542586.3520280050642916443072979210699388420708,
        1439720407.3117216736632230727949123939715485786772,
        248874557.86205415651146038641322942321632125127801,
        31426415.585400194380614231628318205362874684987640,
        2876370.6289353724412254090516208496135991145378768,
        186056.26539522349504029498971604569928220784236328,
        8071.6720023658162106380029022722506138218516325024,
        210.82427775157934587250973392071336271166969580291,
        2.5066282746310002701649081771338373386264310793408,
    ];
    const DEN: [f64; 13] = [
        0.0,
        39_916_800.0,
        120_543_840.0,
        150_917_976.0,
        105_258_076.0,
        45_995_730.0,
        13_339_535.0,
        2_637_558.0,
        357_423.0,
        32_670.0,
        1_925.0,
        66.0,
        1.0,
    ];
    if x == x.floor() && x <= 2.0 {
        return 0.0;
    }
    let (mut num, mut den) = (0.0, 0.0);
    if x < 5.0 {
        for i in (0..13).rev() {
            num = num * x + NUM[i];
            den = den * x + DEN[i];
        }
    } else {
        for i in 0..13 {
            num = num / x + NUM[i];
            den = den / x + DEN[i];
        }
    }
    let r = libm::log(num / den) - G;
    r + (x - 0.5) * (libm::log(x + G - 0.5) - 1.0)
}

/// Fisher's exact two-sided p-value for p1 = p2 on `x1` of `n1` against `x2` of `n2`: the sum
/// over tables no more likely than the observed one (with scipy's 1e-7 relative tolerance, so
/// tables tied in exact arithmetic are not lost to rounding).
pub fn fisher_exact(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    let successes = x1 + x2;
    let (low, high) = (successes.saturating_sub(n2), successes.min(n1));
    let denominator = log_comb(n1 + n2, successes);
    let log_pmf = |k: u64| log_comb(n1, k) + log_comb(n2, successes - k) - denominator;
    let cutoff = log_pmf(x1) + libm::log1p(1e-7);
    let terms = (low..=high)
        .map(log_pmf)
        .filter(|&l| l <= cutoff)
        .map(libm::exp);
    super::resample::fsum(terms).min(1.0)
}

/// Fisher's exact one-sided p-value that the first sample's rate (`x1` of `n1`) is higher than
/// the second's (`x2` of `n2`): the chance, with both drawn at one rate, of a first sample at
/// least as high. The doctor's gate on whether a perturbation beats its baseline.
pub fn fisher_greater(x1: u64, n1: u64, x2: u64, n2: u64) -> f64 {
    let successes = x1 + x2;
    if x1 <= successes.saturating_sub(n2) {
        // The tail is every table: exactly 1, where summing rounded terms may miss it.
        return 1.0;
    }
    let denominator = log_comb(n1 + n2, successes);
    let highest = successes.min(n1);
    let terms = (x1..=highest)
        .map(|k| libm::exp(log_comb(n1, k) + log_comb(n2, successes - k) - denominator));
    super::resample::fsum(terms).min(1.0)
}

/// The most (sum, count) updates the exact sign-flip distribution may take before the test
/// turns to random sign patterns.
const EXACT_WORK: usize = 1_000_000;

/// One input's difference of pass fractions, `arm` minus `baseline` (each `(passes, runs)`),
/// as an exact fraction: numerator and denominator.
pub fn exact_difference(baseline: (u64, u64), arm: (u64, u64)) -> (i128, i128) {
    let numerator =
        i128::from(arm.0) * i128::from(baseline.1) - i128::from(baseline.0) * i128::from(arm.1);
    let denominator = i128::from(arm.1) * i128::from(baseline.1);
    let divisor = gcd(numerator.unsigned_abs(), denominator.unsigned_abs()).max(1) as i128;
    (numerator / divisor, denominator / divisor)
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The two-sided sign-flip permutation p-value of paired differences, given as exact fractions
/// (see [`exact_difference`]), and whether it is exact: the share of the 2^N sign patterns
/// whose sum is at least as far from 0 as the observed one. Zero differences drop out.
///
/// Exact when the distribution of the sum takes at most a million steps to build; otherwise
/// (1 + hits)/(1 + resamples) over random sign patterns from the generator of `seed`, the
/// patterns pytest-probability draws.
pub fn sign_flip(differences: &[(i128, i128)], resamples: u64, seed: u64) -> (f64, bool) {
    let nonzero: Vec<(i128, i128)> = differences.iter().copied().filter(|d| d.0 != 0).collect();
    if nonzero.is_empty() {
        return (1.0, true);
    }
    let scale = nonzero.iter().fold(1u128, |l, d| {
        l / gcd(l, d.1.unsigned_abs()) * d.1.unsigned_abs()
    });
    let signed: Vec<i128> = nonzero
        .iter()
        .map(|d| d.0 * (scale as i128 / d.1))
        .collect();
    let unit = signed
        .iter()
        .fold(0u128, |g, v| gcd(g, v.unsigned_abs()))
        .max(1);
    let values: Vec<u128> = signed.iter().map(|v| v.unsigned_abs() / unit).collect();
    let observed = signed.iter().sum::<i128>().unsigned_abs() / unit;
    let total: u128 = values.iter().sum();
    let m = values.len();
    // Σ ±vᵢ = 2·(the sum of the + ones) − Σ vᵢ: count subset sums. Counts stay exact in u128
    // up to 127 differences, and are kept as shares of 2^m beyond.
    let mut counts: BTreeMap<u128, f64> = BTreeMap::from([(0, 1.0)]);
    let mut exact_counts: BTreeMap<u128, u128> = BTreeMap::from([(0, 1)]);
    let exact_ints = m < 127;
    let mut work = 0usize;
    let mut feasible = true;
    for &v in &values {
        if exact_ints {
            let mut next: BTreeMap<u128, u128> = BTreeMap::new();
            for (&s, &c) in &exact_counts {
                *next.entry(s).or_default() += c;
                *next.entry(s + v).or_default() += c;
            }
            exact_counts = next;
            work += exact_counts.len();
        } else {
            let mut next: BTreeMap<u128, f64> = BTreeMap::new();
            for (&s, &c) in &counts {
                *next.entry(s).or_default() += c * 0.5;
                *next.entry(s + v).or_default() += c * 0.5;
            }
            counts = next;
            work += counts.len();
        }
        if work > EXACT_WORK {
            feasible = false;
            break;
        }
    }
    let far = |s: u128| (2 * s).abs_diff(total) >= observed;
    if feasible {
        if exact_ints {
            let hits: u128 = exact_counts
                .iter()
                .filter(|(s, _)| far(**s))
                .map(|(_, c)| c)
                .sum();
            return ((hits as f64 / (1u128 << m) as f64).min(1.0), true);
        }
        let share: f64 = counts
            .iter()
            .filter(|(s, _)| far(**s))
            .map(|(_, c)| c)
            .sum();
        return (share.min(1.0), true);
    }
    let mut rng = PyRandom::new(seed);
    let mut bits = Vec::with_capacity(m);
    let mut hits = 0u64;
    for _ in 0..resamples {
        rng.low_bits(m, &mut bits);
        let plus: u128 = values
            .iter()
            .zip(&bits)
            .filter(|(_, b)| **b)
            .map(|(v, _)| v)
            .sum();
        if far(plus) {
            hits += 1;
        }
    }
    ((1 + hits) as f64 / (1 + resamples) as f64, false)
}

/// How p-values are adjusted for making several comparisons (`PROB_ADJUST`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Adjustment {
    /// Unchanged: exploratory.
    #[default]
    None,
    /// Holm's step-down: controls the chance of any false alarm.
    Holm,
    /// Each p times the number of comparisons.
    Bonferroni,
    /// Benjamini-Hochberg: controls the expected share of false alarms.
    Bh,
}

impl Adjustment {
    /// The name as `PROB_ADJUST` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Adjustment::None => "none",
            Adjustment::Holm => "holm",
            Adjustment::Bonferroni => "bonferroni",
            Adjustment::Bh => "bh",
        }
    }

    /// Parses `none`, `holm`, `bonferroni` or `bh`.
    pub fn parse(text: &str) -> Result<Adjustment, String> {
        probtest_settings::parse_adjustment(text).map(Adjustment::from)
    }
}

impl From<probtest_settings::Adjustment> for Adjustment {
    fn from(adjustment: probtest_settings::Adjustment) -> Adjustment {
        match adjustment {
            probtest_settings::Adjustment::None => Adjustment::None,
            probtest_settings::Adjustment::Holm => Adjustment::Holm,
            probtest_settings::Adjustment::Bonferroni => Adjustment::Bonferroni,
            probtest_settings::Adjustment::Bh => Adjustment::Bh,
        }
    }
}

/// `pvalues` adjusted for making that many comparisons, in the order given, each capped at 1:
/// the values of statsmodels' `multipletests` with `holm`, `bonferroni` and `fdr_bh`.
pub fn adjust_pvalues(pvalues: &[f64], method: Adjustment) -> Vec<f64> {
    let m = pvalues.len();
    if method == Adjustment::None || m == 0 {
        return pvalues.to_vec();
    }
    if method == Adjustment::Bonferroni {
        return pvalues.iter().map(|p| (p * m as f64).min(1.0)).collect();
    }
    let mut order: Vec<usize> = (0..m).collect();
    // Stable, as Python's sort: tied p-values keep their order.
    order.sort_by(|&a, &b| pvalues[a].total_cmp(&pvalues[b]));
    let mut out = vec![0.0; m];
    if method == Adjustment::Holm {
        let mut running: f64 = 0.0;
        for (rank, &i) in order.iter().enumerate() {
            running = running.max(((m - rank) as f64 * pvalues[i]).min(1.0));
            out[i] = running;
        }
        return out;
    }
    let mut running: f64 = 1.0;
    for rank in (0..m).rev() {
        let i = order[rank];
        running = running.min(m as f64 / (rank + 1) as f64 * pvalues[i]);
        out[i] = running.min(1.0);
    }
    out
}
