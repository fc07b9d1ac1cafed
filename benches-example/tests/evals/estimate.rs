//! Evals of randomized algorithms. Each run draws one answer from the algorithm's distribution,
//! so one run within tolerance says little about the next, and a bug that shifts or widens the
//! distribution can pass a single run by luck. Ten runs per case show how reliable each one
//! is. The tolerances are six standard errors or bounds as far out: a failure means a bug, not
//! bad luck (a normal variable strays six standard errors about twice in a billion draws).

use benches_example::estimate::{self, HyperLogLog};
use probtest::probability;

// The estimate's standard error is 4·sqrt(p(1-p)/n) with p = π/4, about 1.64/sqrt(n).
#[probability(runs = 10, params(samples = [10_000, 40_000]))]
fn bench_pi(samples: u32) {
    let estimate = estimate::pi(samples);
    let tolerance = 6.0 * 1.642 / f64::from(samples).sqrt();
    assert!(
        (estimate - std::f64::consts::PI).abs() < tolerance,
        "estimate {estimate} is off by more than {tolerance:.4}"
    );
}

// A HyperLogLog sketch of 4,096 registers has a relative standard error of 1.04/sqrt(4096),
// about 1.6%, and a randomly keyed hash: every run sees a different sketch of the same stream.
// The tolerance is six of those. A sketch that counted repeats, or a rank off by one (which
// doubles or halves the estimate), would fail every run; a subtler bias fails some, and only
// the fraction over runs tells the two apart from luck. 1,000 distinct ids exercise the
// small-range correction (counting empty registers), 50,000 the harmonic mean.
#[probability(runs = 10, params(distinct = [1_000, 50_000]))]
fn bench_distinct_count(distinct: u32) {
    let mut sketch = HyperLogLog::new(12);
    // Every visitor id appears three times; the sketch must count it once.
    for _ in 0..3 {
        for id in 0..distinct {
            sketch.insert(&id);
        }
    }
    let error = sketch.estimate() / f64::from(distinct) - 1.0;
    let tolerance = 6.0 * sketch.standard_error();
    assert!(
        error.abs() < tolerance,
        "estimated {:.0} distinct ids, off by {:.1}% (tolerance {:.1}%)",
        sketch.estimate(),
        error * 100.0,
        tolerance * 100.0
    );
}

// A uniform sample of `size` from the numbers 1..=100,000: its mean estimates the stream's
// mean, 50,000.5. Sampling without replacement from N values of standard deviation
// sqrt((N²-1)/12), the mean's standard error is that over sqrt(size), times
// sqrt((N-size)/(N-1)): about 2,900 for 100 and 900 for 1,000. A reservoir that keeps only the
// first items fails every run; one slightly biased towards early or late items passes many
// single runs, and shows up only as a pass rate below 100%.
#[probability(runs = 10, params(size = [100, 1_000]))]
fn bench_reservoir_mean(size: u32) {
    let n = 100_000u32;
    let sample = estimate::reservoir_sample(1..=n, size as usize);
    assert_eq!(sample.len(), size as usize);
    let mean = sample.iter().map(|&x| f64::from(x)).sum::<f64>() / f64::from(size);
    let (n, k) = (f64::from(n), f64::from(size));
    let standard_error = ((n * n - 1.0) / 12.0).sqrt() / k.sqrt() * ((n - k) / (n - 1.0)).sqrt();
    let tolerance = 6.0 * standard_error;
    assert!(
        (mean - (n + 1.0) / 2.0).abs() < tolerance,
        "sample mean {mean:.0} is off by more than {tolerance:.0}"
    );
}

// 100,000 requests on 100,000 servers. With one random choice the busiest server gets about
// ln n / ln ln n requests, 7 to 9 here; with the less loaded of two choices, ln ln n / ln 2 plus
// a constant: 3 or 4 in practice. The bound is 5: the expected number of servers that reach 6
// is about 1e-21 (Mitzenmacher's fluid limit, where the fraction with load >= i grows as
// s_{i-1}² - s_i²), while one choice stays under 6 essentially never, so a balancer that
// ignores the second choice fails every run.
#[probability(runs = 10)]
fn bench_two_choices() {
    let max_load = estimate::max_load_two_choices(100_000, 100_000);
    assert!(max_load <= 5, "the busiest server got {max_load} requests");
}
