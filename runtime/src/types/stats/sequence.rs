//! The anytime-valid confidence sequence a rate gate is judged by under `PROB_STOP=sequential`:
//! the pass rates whose beta-binomial mixture wealth after x passes in n runs is still below
//! 1/α. Under a true rate p the wealth is a nonnegative martingale starting at 1, so by Ville's
//! inequality the chance that the interval *ever* leaves p out, checked after every run, is at
//! most α; that is what lets a gate stop the moment its interval clears the bar.
//!
//! The method is pytest-probability's (`stats.confidence_sequence`), step for step, so that
//! both tools stop the same runs: the same Jeffreys mixing prior, the same Newton iteration in
//! the log-odds, the same closed form at x = n.

use super::quantile::ln_beta;

/// The mixing prior: Jeffreys' Beta(½, ½), whose worst-case penalty is smallest (about
/// ½·log n) and stays that small at 0 and n passes, where pass-rate gates live.
pub const SEQUENCE_PRIOR: (f64, f64) = (0.5, 0.5);

/// From this level on (1 − e^(−½) ≈ 0.39) the default sequence's bounds move one way per run:
/// a pass never lowers either bound, a non-pass never raises one, which lets a case stop as
/// UNDECIDED once no remaining run could reach a verdict.
pub fn monotone_level() -> f64 {
    -libm::expm1(-0.5)
}

/// log of the mixture's probability of one particular sequence of x passes in n runs; never
/// above 0.
fn log_mixture(x: u64, n: u64, a: f64, b: f64) -> f64 {
    ln_beta(a + x as f64, b + (n - x) as f64) - ln_beta(a, b)
}

/// log Mₙ(p): the mixture's evidence against a pass rate p after x passes in n runs; `+inf`
/// where p is ruled out outright (0 with a pass, 1 with a non-pass).
pub fn mixture_log_wealth(x: u64, n: u64, p: f64, prior: (f64, f64)) -> f64 {
    if (p == 0.0 && x > 0) || (p == 1.0 && n > x) {
        return f64::INFINITY;
    }
    let mut wealth = log_mixture(x, n, prior.0, prior.1);
    if x > 0 {
        wealth -= x as f64 * libm::log(p);
    }
    if n > x {
        wealth -= (n - x) as f64 * libm::log1p(-p);
    }
    wealth
}

/// log(1 + eᵘ) without overflow.
fn softplus(u: f64) -> f64 {
    if u > 0.0 {
        u + libm::log1p(libm::exp(-u))
    } else {
        libm::log1p(libm::exp(u))
    }
}

/// 1 / (1 + e⁻ᵘ), accurate on both sides.
fn expit(u: f64) -> f64 {
    if u >= 0.0 {
        1.0 / (1.0 + libm::exp(-u))
    } else {
        let e = libm::exp(u);
        e / (1.0 + e)
    }
}

/// The lower bound: the p below x/n where the log wealth reaches `threshold` = log(1/α).
/// In the log-odds u the log wealth is convex and falls to its minimum at the observed rate, so
/// Newton's method from the left of the root never overshoots; a bisection guard covers
/// rounding. The iteration is the peer's, so that both tools land on the same double.
fn lower(x: u64, n: u64, threshold: f64, a: f64, b: f64) -> f64 {
    if x == 0 {
        return 0.0;
    }
    let log_mix = log_mixture(x, n, a, b);
    let (xf, nf) = (x as f64, n as f64);
    if x == n {
        return libm::exp(-(threshold - log_mix) / nf);
    }
    let g = |u: f64| log_mix + xf * softplus(-u) + (nf - xf) * softplus(u) - threshold;
    let centre = libm::log(xf / (nf - xf));
    let (mut inside, mut step) = (centre, 1.0);
    let mut outside = centre - step;
    while g(outside) < 0.0 {
        inside = outside;
        step *= 2.0;
        outside = centre - step;
    }
    let mut u = outside;
    for _ in 0..200 {
        let dg = nf * expit(u) - xf;
        let mut next = if dg < 0.0 { u - g(u) / dg } else { f64::NAN };
        if !(u < next && next < inside) {
            next = 0.5 * (u + inside);
        }
        if g(next) < 0.0 {
            inside = next;
            next = 0.5 * (u + inside);
            if g(next) < 0.0 {
                inside = next;
                continue;
            }
        }
        if next - u <= 1e-15 * u.abs().max(1.0) {
            u = next;
            break;
        }
        u = next;
    }
    expit(u)
}

/// The sequence's interval after x passes in n runs at `level` with mixing prior `prior`;
/// (0, 1) before any run. The upper bound is the mirrored count's lower bound, which is more
/// accurate than a root a hair below 1.
pub fn confidence_sequence(x: u64, n: u64, level: f64, prior: (f64, f64)) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let threshold = -libm::log1p(-level);
    let low = lower(x, n, threshold, prior.0, prior.1);
    let high = 1.0 - lower(n - x, n, threshold, prior.1, prior.0);
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_where_the_wealth_reaches_one_over_alpha() {
        for (x, n) in [(1, 2), (7, 10), (45, 50), (300, 1000), (999, 1000)] {
            let (low, high) = confidence_sequence(x, n, 0.95, SEQUENCE_PRIOR);
            let target = -libm::log1p(-0.95);
            for bound in [low, high] {
                let wealth = mixture_log_wealth(x, n, bound, SEQUENCE_PRIOR);
                assert!(
                    (wealth - target).abs() < 1e-9,
                    "{x}/{n}: {wealth} at {bound}"
                );
            }
            let rate = x as f64 / n as f64;
            assert!(low < rate && rate < high);
        }
    }

    #[test]
    fn a_pass_never_lowers_a_bound_above_the_monotone_level() {
        assert!((monotone_level() - 0.393_469_340_287_366_6).abs() < 1e-15);
        for n in 1..60 {
            for x in 0..=n {
                let (low, high) = confidence_sequence(x, n, 0.95, SEQUENCE_PRIOR);
                let (pass_low, pass_high) = confidence_sequence(x + 1, n + 1, 0.95, SEQUENCE_PRIOR);
                let (fail_low, fail_high) = confidence_sequence(x, n + 1, 0.95, SEQUENCE_PRIOR);
                assert!(pass_low >= low && pass_high >= high, "a pass after {x}/{n}");
                assert!(fail_low <= low && fail_high <= high, "a fail after {x}/{n}");
            }
        }
    }
}
