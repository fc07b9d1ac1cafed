//! Evals of a randomized estimator. One run within tolerance says little about the next; ten
//! runs per sample size show how reliable each size is.

use benches_example::estimate;
use probtest::probability;

// The estimate's standard error is 4·sqrt(p(1-p)/n) with p = π/4, about 1.64/sqrt(n). A
// tolerance of six standard errors makes a failure mean a bug, not bad luck.
#[probability(runs = 10, params(samples = [10_000, 40_000]))]
fn bench_pi(samples: u32) {
    let estimate = estimate::pi(samples);
    let tolerance = 6.0 * 1.642 / f64::from(samples).sqrt();
    assert!(
        (estimate - std::f64::consts::PI).abs() < tolerance,
        "estimate {estimate} is off by more than {tolerance:.4}"
    );
}
