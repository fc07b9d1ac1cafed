//! Runs clustered by input: the intraclass correlation of their pass/fail outcomes and what it
//! says about an interval over inputs, and how more runs or more inputs would narrow it.
//!
//! Layer: types.

use super::resample::fsum;

/// The intraclass correlation ρ of per-run pass/fail outcomes grouped by input, from
/// `(passes, runs)` per input: one-way random-effects ANOVA, ICC(1), with the adjusted average
/// group size for unequal run counts. Clipped to [0, 1] with `clip`.
///
/// `None` when ρ is not defined: fewer than 2 inputs, every input run once, or no variation
/// at all (every run passed, or every run failed).
pub fn icc(counts: &[(u64, u64)], clip: bool) -> Option<f64> {
    let inputs = counts.len();
    let total: u64 = counts.iter().map(|&(_, n)| n).sum();
    if inputs < 2 || total == inputs as u64 || counts.iter().any(|&(_, n)| n == 0) {
        return None;
    }
    let passes: u64 = counts.iter().map(|&(x, _)| x).sum();
    let (passes, total_f) = (passes as f64, total as f64);
    let ssb =
        fsum(counts.iter().map(|&(x, n)| (x * x) as f64 / n as f64)) - passes * passes / total_f;
    let ssw = fsum(counts.iter().map(|&(x, n)| (x * (n - x)) as f64 / n as f64));
    // SSB is a difference of nearly equal sums when inputs barely differ: rounding must not
    // turn "no spread" into a negative one.
    let msb = ssb.max(0.0) / (inputs - 1) as f64;
    let msw = ssw / (total - inputs as u64) as f64;
    let k0 = (total_f - fsum(counts.iter().map(|&(_, n)| (n * n) as f64)) / total_f)
        / (inputs - 1) as f64;
    let denominator = msb + (k0 - 1.0) * msw;
    if denominator <= 0.0 {
        return None;
    }
    let rho = (msb - msw) / denominator;
    Some(if clip { rho.clamp(0.0, 1.0) } else { rho })
}

/// √((1 + (k − 1)ρ)/k): the standard deviation of an input's pass fraction over `k` runs,
/// relative to one run's. `k` may be fractional: the harmonic mean of unequal run counts.
pub fn width_factor(k: f64, rho: f64) -> f64 {
    ((1.0 + (k - 1.0) * rho) / k).sqrt()
}

/// How an interval's width over inputs would scale, new over today's, with `runs` times the
/// runs per input and `inputs` times the inputs.
pub fn projected_width(k: f64, rho: f64, runs: f64, inputs: f64) -> f64 {
    width_factor(k * runs, rho) / width_factor(k, rho) / inputs.sqrt()
}

/// The harmonic mean of run counts (as Python's `statistics.harmonic_mean`): the `k` at which
/// [`width_factor`] describes an equally weighted average over inputs exactly.
pub fn harmonic_mean(runs: &[u64]) -> Option<f64> {
    if runs.is_empty() || runs.contains(&0) {
        return None;
    }
    Some(runs.len() as f64 / fsum(runs.iter().map(|&n| 1.0 / n as f64)))
}
