//! Quantiles of the Beta and standard normal distributions, for the intervals in `stats`.
//!
//! Built on the pure-Rust `libm` crate instead of a statistics crate: std's `exp`, `ln` and
//! `powf` resolve to the system's `libm.so`, and loading that library costs every test process
//! that links probtest about 50 µs, under nextest one process per run (README, "Speed").
//! `tests/data/reference_stats.json` (scipy and statsmodels) checks every interval method
//! through these functions, and the tests below check CDF round trips at extreme shapes.

/// Newton steps (or bisections, where Newton leaves the bracket) before giving up; bisection
/// alone reaches the last bit of a double within about 1,100 halvings of [0, 1], Newton in
/// a handful of steps.
const MAX_STEPS: usize = 2_000;
/// Terms of the incomplete beta continued fraction before giving up: it converges in about
/// the square root of the larger shape, so this covers shapes into the millions.
const MAX_TERMS: usize = 100_000;

/// `ln B(a, b)`: the Beta quantiles here and the confidence sequence's mixture.
pub(super) fn ln_beta(a: f64, b: f64) -> f64 {
    libm::lgamma(a) + libm::lgamma(b) - libm::lgamma(a + b)
}

/// `x^a (1-x)^b / B(a, b)` in logs, the factor in front of the continued fraction.
fn ln_front(a: f64, b: f64, ln_beta: f64, x: f64) -> f64 {
    a * libm::log(x) + b * libm::log1p(-x) - ln_beta
}

/// The continued fraction of the regularized incomplete beta function, by the modified Lentz
/// method; it converges fast for `x < (a + 1) / (a + b + 2)`.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |value: f64| if value.abs() < TINY { TINY } else { value };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..=MAX_TERMS {
        let m = m as f64;
        let two_m = 2.0 * m;
        // The even term, then the odd term, of the fraction's expansion.
        let even = m * (b - m) * x / ((a + two_m - 1.0) * (a + two_m));
        d = 1.0 / nonzero(1.0 + even * d);
        c = nonzero(1.0 + even / c);
        fraction *= d * c;
        let odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + two_m + 1.0));
        d = 1.0 / nonzero(1.0 + odd * d);
        c = nonzero(1.0 + odd / c);
        let step = d * c;
        fraction *= step;
        if (step - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    fraction
}

/// The CDF of Beta(a, b) at `x` (the regularized incomplete beta function `I_x(a, b)`), given
/// `ln B(a, b)`.
fn beta_cdf(a: f64, b: f64, ln_beta: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = libm::exp(ln_front(a, b, ln_beta, x));
    // The fraction converges fast on one side of the mean; the other side goes through the
    // symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
    if x * (a + b + 2.0) < a + 1.0 {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The regularized incomplete beta function `I_x(a, b)`: the CDF of Beta(a, b) at `x`.
pub(crate) fn regularized_beta(a: f64, b: f64, x: f64) -> f64 {
    beta_cdf(a, b, ln_beta(a, b), x)
}

/// The density of Beta(a, b) at `x`, given `ln B(a, b)`.
fn beta_density(a: f64, b: f64, ln_beta: f64, x: f64) -> f64 {
    libm::exp(ln_front(a - 1.0, b - 1.0, ln_beta, x))
}

/// The `p` quantile of Beta(a, b), with the degenerate ends handled exactly; NaN for a shape
/// that is not above zero, which callers never pass.
pub(crate) fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    if !(a > 0.0 && b > 0.0) {
        return f64::NAN;
    }
    // Closed forms where a shape is 1 (the CDF is x^a, or 1 - (1 - x)^b): the bounds of a case
    // whose runs all passed or all failed, the commonest rows, without the iterative solver.
    if b == 1.0 {
        return libm::pow(p, 1.0 / a);
    }
    if a == 1.0 {
        // 1 - (1 - p)^(1/b), without the cancellation that costs small quantiles their digits.
        return -libm::expm1(libm::log1p(-p) / b);
    }
    let ln_beta = ln_beta(a, b);
    invert(p, 0.0, 1.0, a / (a + b), |x| {
        (beta_cdf(a, b, ln_beta, x), beta_density(a, b, ln_beta, x))
    })
    .clamp(0.0, 1.0)
}

/// The `p` quantile of the standard normal distribution, for `p` strictly between 0 and 1.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    let density_scale = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    // Beyond ±40 the CDF is 0 or 1 in doubles.
    invert(p, -40.0, 40.0, 0.0, |x| {
        (
            0.5 * libm::erfc(-x / std::f64::consts::SQRT_2),
            density_scale * libm::exp(-0.5 * x * x),
        )
    })
}

/// The `x` in `[low, high]` where an increasing CDF reaches `p`, from `start`: Newton steps
/// while they stay inside the bracket the CDF's values have narrowed, bisection otherwise, so
/// that it converges from any start, and fast once close.
fn invert(
    p: f64,
    mut low: f64,
    mut high: f64,
    start: f64,
    cdf_and_density: impl Fn(f64) -> (f64, f64),
) -> f64 {
    let mut x = start;
    for _ in 0..MAX_STEPS {
        let (cdf, density) = cdf_and_density(x);
        let error = cdf - p;
        if error == 0.0 {
            return x;
        }
        if error < 0.0 {
            low = x;
        } else {
            high = x;
        }
        let newton = x - error / density;
        let next = if density > 0.0 && newton > low && newton < high {
            newton
        } else {
            0.5 * (low + high)
        };
        // Done when a step moves by rounding alone, or the bracket has closed.
        let resolution = 4.0 * f64::EPSILON * next.abs().max(f64::MIN_POSITIVE);
        if (next - x).abs() <= resolution || high - low <= resolution {
            return next;
        }
        x = next;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beta_quantiles_invert_the_cdf_at_extreme_shapes() {
        let shapes = [0.5, 1.0, 1.5, 2.0, 7.0, 30.5, 250.0, 4_000.5, 100_000.0];
        let levels = [1e-6, 0.0005, 0.025, 0.5, 0.975, 0.9995, 1.0 - 1e-6];
        for a in shapes {
            for b in shapes {
                let ln_beta = ln_beta(a, b);
                for p in levels {
                    let x = beta_quantile(a, b, p);
                    assert!((0.0..=1.0).contains(&x), "Beta({a}, {b}) at {p}: {x}");
                    // Shapes in the hundreds of thousands leave ln B(a, b) a few units in the
                    // last place of lgamma's large values: about 1e-12 on the CDF. And where
                    // the density is steep, one unit in the last place of x moves the CDF by
                    // the density times that unit.
                    let back = beta_cdf(a, b, ln_beta, x);
                    let steep = 16.0 * f64::EPSILON * x * beta_density(a, b, ln_beta, x);
                    assert!(
                        (back - p).abs() <= 1e-9 * p.min(1.0 - p) + 1e-13 + steep,
                        "Beta({a}, {b}) at {p}: x = {x}, CDF(x) = {back}"
                    );
                }
            }
        }
    }

    #[test]
    fn beta_quantiles_match_scipy_at_extreme_shapes() {
        // scipy.stats.beta.ppf(p, a, b). At shapes of 100,000, ln B(a, b) keeps about ten
        // digits (it is a difference of lgamma values near 1e6), and so do the quantiles.
        for (a, b, p, expected) in [
            (0.5, 0.5, 1e-06, 2.46740110027031e-12),
            (0.5, 100000.0, 0.025, 4.910357849699779e-09),
            (0.5, 100000.0, 0.975, 2.5119178243257737e-05),
            (100000.0, 0.5, 0.025, 0.9999748808217568),
            (4000.5, 100000.0, 0.5, 0.03846320271181429),
            (4000.5, 100000.0, 1e-06, 0.03569519574980913),
            (250.0, 7.0, 0.9995, 0.9946844811014347),
            (30.5, 1.5, 0.0005, 0.7494881451840008),
            (1.5, 30.5, 0.999999, 0.39274776100701014),
            (100000.0, 100000.0, 0.025, 0.49780870143169204),
            (2.0, 250.0, 1e-06, 5.6482214990090765e-06),
            (7.0, 4000.5, 0.975, 0.00325670072304496),
        ] {
            let x = beta_quantile(a, b, p);
            assert!(
                (x - expected).abs() <= 1e-9 * expected,
                "Beta({a}, {b}) at {p}: {x}, scipy {expected}"
            );
        }
    }

    #[test]
    fn known_values() {
        // Symmetric shapes have their median at one half.
        for a in [0.5, 3.0, 1_000.0] {
            assert!((beta_quantile(a, a, 0.5) - 0.5).abs() < 1e-14);
        }
        // Beta(2, 2) has CDF 3x^2 - 2x^3.
        let x = beta_quantile(2.0, 2.0, 0.1);
        assert!((3.0 * x * x - 2.0 * x * x * x - 0.1).abs() < 1e-15);
        // scipy.stats.norm.ppf.
        for (p, z) in [
            (0.975, 1.959_963_984_540_054),
            (0.995, 2.575_829_303_548_900_4),
            (0.5, 0.0),
            (0.0005, -3.290_526_731_491_894_5),
            (1e-10, -6.361_340_902_404_056),
        ] {
            assert!(
                (normal_quantile(p) - z).abs() < 1e-12,
                "{p}: {}",
                normal_quantile(p)
            );
        }
    }

    #[test]
    fn the_cdf_matches_closed_forms() {
        // I_x(1, b) = 1 - (1 - x)^b and I_x(a, 1) = x^a.
        for x in [1e-9, 0.01, 0.3, 0.5, 0.77, 0.999] {
            for shape in [0.5, 1.0, 3.0, 40.0] {
                let lower = beta_cdf(1.0, shape, ln_beta(1.0, shape), x);
                assert!((lower - (1.0 - libm::pow(1.0 - x, shape))).abs() < 1e-14);
                let upper = beta_cdf(shape, 1.0, ln_beta(shape, 1.0), x);
                assert!((upper - libm::pow(x, shape)).abs() < 1e-14);
            }
        }
    }
}
