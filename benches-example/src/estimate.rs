//! A Monte Carlo estimator: its answer is random by design, so a single run proves little and
//! the honest test is a pass fraction over many runs.

use rand::Rng;

/// Estimates π from `samples` random points in the unit square.
pub fn pi(samples: u32) -> f64 {
    let mut rng = rand::rng();
    let inside = (0..samples)
        .filter(|_| {
            let (x, y): (f64, f64) = (rng.random(), rng.random());
            x * x + y * y <= 1.0
        })
        .count();
    4.0 * inside as f64 / f64::from(samples)
}
