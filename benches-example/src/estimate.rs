//! Randomized algorithms: their answers are random by design, so a single run within tolerance
//! proves little and the honest test is a pass fraction over many runs. A Monte Carlo estimate
//! of π, a HyperLogLog distinct count, reservoir sampling, and a power-of-two-choices load
//! balancer.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};

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

/// A HyperLogLog sketch: counts distinct items in `2^precision` bytes, whatever their number.
///
/// Each sketch hashes with its own randomly keyed hasher, so two sketches of the same stream
/// give different estimates: the randomness an eval has to live with.
#[derive(Clone, Debug)]
pub struct HyperLogLog {
    precision: u32,
    registers: Vec<u8>,
    hasher: RandomState,
}

impl HyperLogLog {
    /// An empty sketch of `2^precision` registers (`precision` from 4 to 16).
    pub fn new(precision: u32) -> HyperLogLog {
        assert!(
            (4..=16).contains(&precision),
            "precision {precision} is outside 4..=16"
        );
        HyperLogLog {
            precision,
            registers: vec![0; 1 << precision],
            hasher: RandomState::new(),
        }
    }

    /// Adds an item; adding it again changes nothing.
    pub fn insert<T: Hash + ?Sized>(&mut self, item: &T) {
        let hash = self.hasher.hash_one(item);
        // The first `precision` bits pick a register; the rest give the rank: the position of
        // their first 1 bit, which is k with probability 2^-k.
        let index = (hash >> (64 - self.precision)) as usize;
        let rest = hash << self.precision;
        let rank = (rest.leading_zeros() + 1).min(64 - self.precision + 1) as u8;
        self.registers[index] = self.registers[index].max(rank);
    }

    /// The estimated number of distinct items added.
    pub fn estimate(&self) -> f64 {
        let m = self.registers.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self
            .registers
            .iter()
            .map(|&rank| (-f64::from(rank)).exp2())
            .sum();
        let raw = alpha * m * m / sum;
        let empty = self.registers.iter().filter(|&&rank| rank == 0).count();
        if raw <= 2.5 * m && empty > 0 {
            // Few items: counting empty registers (linear counting) is more accurate.
            m * (m / empty as f64).ln()
        } else {
            raw
        }
    }

    /// The relative standard error of [`HyperLogLog::estimate`]: 1.04/sqrt(registers).
    pub fn standard_error(&self) -> f64 {
        1.04 / (self.registers.len() as f64).sqrt()
    }
}

/// Keeps a uniform random sample of `size` items from a stream of unknown length in one pass
/// (Vitter's algorithm R): item `i` replaces a random slot with probability `size / (i + 1)`.
pub fn reservoir_sample<T>(stream: impl IntoIterator<Item = T>, size: usize) -> Vec<T> {
    let mut rng = rand::rng();
    let mut reservoir = Vec::with_capacity(size);
    for (seen, item) in stream.into_iter().enumerate() {
        if seen < size {
            reservoir.push(item);
        } else {
            let slot = rng.random_range(0..=seen);
            if slot < size {
                reservoir[slot] = item;
            }
        }
    }
    reservoir
}

/// Places `requests` requests on `servers` servers, each on the less loaded of two servers
/// picked at random ("the power of two choices"), and returns the busiest server's load.
pub fn max_load_two_choices(requests: u32, servers: usize) -> u32 {
    let mut rng = rand::rng();
    let mut load = vec![0u32; servers];
    for _ in 0..requests {
        let (a, b) = (rng.random_range(0..servers), rng.random_range(0..servers));
        let target = if load[a] <= load[b] { a } else { b };
        load[target] += 1;
    }
    load.into_iter().max().unwrap_or(0)
}
