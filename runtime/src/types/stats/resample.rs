//! Resampling: a seeded generator that draws the same numbers as Python's `random.Random(seed)`,
//! an exactly rounded sum, the bootstrap of a mean over whole units, and percentile and normal
//! intervals. Drawing what pytest-probability draws makes a bootstrap interval here equal the
//! peer's on the same data, not merely close to it.
//!
//! Layer: types.

/// The generator's next word, tempered (`genrand_uint32`): a macro, so that the bootstrap's
/// inner loop reads words without a call in a build without optimizations.
macro_rules! next_word {
    ($rng:expr) => {{
        if $rng.index >= 624 {
            $rng.twist();
        }
        let mut y = $rng.state[$rng.index];
        $rng.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }};
}

/// Mersenne Twister MT19937, seeded and read as CPython's `random` module does.
pub struct PyRandom {
    state: [u32; 624],
    index: usize,
}

impl PyRandom {
    /// The generator of `random.Random(seed)` for a non-negative integer seed.
    pub fn new(seed: u64) -> PyRandom {
        // CPython keys the generator with the seed's 32-bit words, least significant first,
        // and with one zero word for 0.
        let mut key = vec![seed as u32];
        if seed >> 32 != 0 {
            key.push((seed >> 32) as u32);
        }
        let mut rng = PyRandom {
            state: [0; 624],
            index: 624,
        };
        rng.init_by_array(&key);
        rng
    }

    fn init_genrand(&mut self, seed: u32) {
        self.state[0] = seed;
        for i in 1..624 {
            let previous = self.state[i - 1];
            self.state[i] = 1_812_433_253u32
                .wrapping_mul(previous ^ (previous >> 30))
                .wrapping_add(i as u32);
        }
        self.index = 624;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let (mut i, mut j) = (1usize, 0usize);
        let mt = &mut self.state;
        for _ in 0..624.max(key.len()) {
            let previous = mt[i - 1];
            mt[i] = (mt[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            let previous = mt[i - 1];
            mt[i] = (mt[i] ^ (previous ^ (previous >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX: u32 = 0x9908_b0df;
        let mt = &mut self.state;
        macro_rules! mix {
            ($upper:expr, $lower:expr, $far:expr) => {{
                let y = ($upper & UPPER) | ($lower & LOWER);
                $far ^ (y >> 1) ^ if y & 1 == 1 { MATRIX } else { 0 }
            }};
        }
        // The reference implementation's three loops, as `while` loops over a macro: no index
        // wraps inside them, and a build without optimizations makes neither a closure call
        // nor a range iterator's call per word.
        let mut k = 0;
        while k < 227 {
            mt[k] = mix!(mt[k], mt[k + 1], mt[k + 397]);
            k += 1;
        }
        while k < 623 {
            mt[k] = mix!(mt[k], mt[k + 1], mt[k - 227]);
            k += 1;
        }
        mt[623] = mix!(mt[623], mt[0], mt[396]);
        self.index = 0;
    }

    /// The next 32 random bits (`genrand_uint32`).
    pub fn next_u32(&mut self) -> u32 {
        next_word!(self)
    }

    /// A float in [0, 1) with 53 random bits, as `random.random()`.
    pub fn random(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// An index below `n`, as `random.choices` picks one: `floor(random() * n)`.
    pub fn choice(&mut self, n: usize) -> usize {
        ((self.random() * n as f64).floor() as usize).min(n.saturating_sub(1))
    }

    /// Fills `out` with indices below `n`, each drawn as [`PyRandom::choice`] draws it, in order.
    ///
    /// The bootstrap's inner loop: a session's resamples make millions of draws, and test
    /// binaries are built without optimizations, where every call of `choice`, `random` and
    /// `next_u32` costs more than its arithmetic. The words are read and tempered inline here
    /// (`next_word!`), so the loop makes no call but the generator's twist every 312 draws.
    pub fn fill_choices(&mut self, n: usize, out: &mut [usize]) {
        let scale = n as f64;
        let last = n.saturating_sub(1);
        let mut i = 0;
        while i < out.len() {
            let a = next_word!(self) >> 5;
            let b = next_word!(self) >> 6;
            let unit = (a as f64 * 67_108_864.0 + b as f64) * (1.0 / 9_007_199_254_740_992.0);
            // A non-negative product: truncation is `floor`.
            let index = (unit * scale) as usize;
            out[i] = if index > last { last } else { index };
            i += 1;
        }
    }

    /// `m` random bits, one per element, as the low bits of `random.randbytes(m)`.
    pub fn low_bits(&mut self, m: usize, out: &mut Vec<bool>) {
        out.clear();
        // randbytes(m) is getrandbits(8m) in little-endian order: whole 32-bit words, the last
        // one shifted down to the bits that remain.
        let mut left = 8 * m;
        while left > 0 {
            let mut word = self.next_u32();
            let bits = left.min(32);
            if bits < 32 {
                word >>= 32 - bits;
            }
            for byte in 0..bits / 8 {
                out.push((word >> (8 * byte)) & 1 == 1);
            }
            left -= bits;
        }
    }
}

/// The exactly rounded sum of `values` (Shewchuk's algorithm, as Python's `math.fsum`): the
/// same total in any order, so a mean does not depend on the order results arrived in.
pub fn fsum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut values = values.into_iter();
    let Some(first) = values.next() else {
        return 0.0;
    };
    // One value is its own sum, without a list of partials to allocate: a function of one case
    // takes four such sums at every exit.
    let Some(second) = values.next() else {
        return first;
    };
    let mut partials: Vec<f64> = vec![first];
    for mut x in std::iter::once(second).chain(values) {
        let mut kept = 0;
        for j in 0..partials.len() {
            let mut y = partials[j];
            if x.abs() < y.abs() {
                std::mem::swap(&mut x, &mut y);
            }
            let high = x + y;
            let low = y - (high - x);
            if low != 0.0 {
                partials[kept] = low;
                kept += 1;
            }
            x = high;
        }
        partials.truncate(kept);
        partials.push(x);
    }
    // Rounding the partials' sum as math.fsum does, half-way cases included.
    let Some(mut high) = partials.pop() else {
        return 0.0;
    };
    let mut low = 0.0;
    while let Some(y) = partials.pop() {
        let x = high;
        high = x + y;
        let yr = high - x;
        low = y - yr;
        if low != 0.0 {
            break;
        }
    }
    if let Some(&next) = partials.last() {
        if (low < 0.0 && next < 0.0) || (low > 0.0 && next > 0.0) {
            let y = low * 2.0;
            let x = high + y;
            if y == x - high {
                high = x;
            }
        }
    }
    high
}

/// The mean of `values` as `statistics.fmean` computes it: the exactly rounded sum over the
/// count. `None` for no values.
pub fn fmean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(fsum(values.iter().copied()) / values.len() as f64)
}

/// The bootstrap distribution of the mean of `values`: `resamples` draws of `values.len()`
/// values with replacement, each from the generator of `seed`, in draw order. Each value stands
/// for a whole unit (an input with all its runs), so this is a cluster bootstrap.
///
/// A resample's mean is the exactly rounded sum of its draws over their number, as
/// `statistics.fmean` makes it; the sum is taken over the distinct values, each times the
/// number of its draws (the products split exactly in two by a fused multiply-add), so that a
/// resample costs its draws and a handful of additions rather than a compensated sum of every
/// draw. Pass fractions take few distinct values: a session of thousands of cases resamples in
/// about the time it takes to draw.
pub fn bootstrap_means(values: &[f64], resamples: u64, seed: u64) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut distinct = values.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup_by(|a, b| a.total_cmp(b).is_eq());
    let slot: Vec<usize> = values
        .iter()
        .map(|v| {
            distinct
                .binary_search_by(|d| d.total_cmp(v))
                .expect("every value is among the distinct ones")
        })
        .collect();
    let n = values.len();
    let mut counts = vec![0u64; distinct.len()];
    let mut terms = Vec::with_capacity(2 * distinct.len());
    let mut resample_mean = |counts: &[u64]| {
        terms.clear();
        for (&value, &count) in distinct.iter().zip(counts) {
            if count > 0 {
                let count = count as f64;
                let product = count * value;
                terms.push(product);
                terms.push(libm::fma(count, value, -product));
            }
        }
        fsum(terms.iter().copied()) / n as f64
    };
    if distinct.len() == 1 {
        // Every resample draws the one value n times: the same mean each time, whatever the
        // draws. A session whose cases all passed every run is this case.
        counts[0] = n as u64;
        let mean = resample_mean(&counts);
        return vec![mean; resamples as usize];
    }
    let mut rng = PyRandom::new(seed);
    let mut drawn = vec![0usize; n];
    (0..resamples)
        .map(|_| {
            counts.fill(0);
            rng.fill_choices(n, &mut drawn);
            let mut i = 0;
            while i < n {
                counts[slot[drawn[i]]] += 1;
                i += 1;
            }
            resample_mean(&counts)
        })
        .collect()
}

/// The percentile interval at `level` of the bootstrap of the mean of `values`
/// ([`bootstrap_means`], [`percentile_interval`]). The last few are remembered: a test binary
/// builds its report twice at exit (the session's, folded into the JSON file, and its own
/// summary's), and when it is alone in its session both resample the same values.
pub fn bootstrap_interval(
    values: &[f64],
    resamples: u64,
    seed: u64,
    level: f64,
) -> Option<(f64, f64)> {
    use std::sync::Mutex;
    type Key = (Vec<u64>, u64, u64, u64);
    type Entry = (Key, Option<(f64, f64)>);
    static MEMO: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
    const KEPT: usize = 64;
    let key: Key = (
        values.iter().map(|v| v.to_bits()).collect(),
        resamples,
        seed,
        level.to_bits(),
    );
    if let Some(found) = MEMO
        .lock()
        .ok()
        .and_then(|memo| memo.iter().find(|(k, _)| *k == key).map(|(_, v)| *v))
    {
        return found;
    }
    let interval = percentile_interval(&bootstrap_means(values, resamples, seed), level);
    if let Ok(mut memo) = MEMO.lock() {
        if memo.len() >= KEPT {
            memo.remove(0);
        }
        memo.push((key, interval));
    }
    interval
}

/// The equal-tailed percentile interval of a bootstrap distribution at `level`, interpolating
/// between order statistics (Hyndman and Fan type 7, numpy's default). `None` for no samples.
pub fn percentile_interval(samples: &[f64], level: f64) -> Option<(f64, f64)> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let alpha = 1.0 - level;
    Some((
        type7(&sorted, alpha / 2.0),
        type7(&sorted, 1.0 - alpha / 2.0),
    ))
}

fn type7(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let i = position.floor() as usize;
    if i + 1 >= sorted.len() {
        return sorted[sorted.len() - 1];
    }
    let fraction = position - i as f64;
    sorted[i] + fraction * (sorted[i + 1] - sorted[i])
}

/// The normal-approximation interval for the mean of `values`: mean ± z·s/√N, with the sample
/// standard deviation. The cross-check of a bootstrap interval; not clipped to [0, 1], since a
/// bound past either end says the approximation is poor there. `None` below two values.
pub fn normal_interval(values: &[f64], level: f64) -> Option<(f64, f64)> {
    if values.len() < 2 {
        return None;
    }
    let mean = fmean(values)?;
    let squares = fsum(values.iter().map(|v| (v - mean) * (v - mean)));
    let sd = (squares / (values.len() - 1) as f64).sqrt();
    let z = super::quantile::normal_quantile(0.5 + level / 2.0);
    let half = z * sd / (values.len() as f64).sqrt();
    Some((mean - half, mean + half))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn filled_choices_are_the_choices_drawn_one_by_one() {
        // Across several twists, from an odd word (after one `next_u32`) as from an even one.
        for skip in [0, 1] {
            let mut one_by_one = PyRandom::new(9);
            let mut filled = PyRandom::new(9);
            for _ in 0..skip {
                one_by_one.next_u32();
                filled.next_u32();
            }
            let expected: Vec<usize> = (0..1000).map(|_| one_by_one.choice(7)).collect();
            let mut drawn = vec![0; 1000];
            filled.fill_choices(7, &mut drawn);
            assert_eq!(drawn, expected);
            assert_eq!(filled.next_u32(), one_by_one.next_u32());
        }
    }

    #[test]
    fn one_distinct_value_resamples_to_its_own_mean() {
        // As the draws would give it: the exactly rounded sum of n copies, over n.
        let means = bootstrap_means(&[0.7; 30], 50, 1);
        assert_eq!(means, vec![fsum([0.7; 30]) / 30.0; 50]);
        assert_eq!(bootstrap_means(&[1.0; 3], 4, 0), vec![1.0; 4]);
    }

    #[test]
    fn the_generator_draws_what_python_draws() {
        // random.Random(0).random(), three times; and getrandbits(32) of seed 42.
        let mut rng = PyRandom::new(0);
        let draws: Vec<f64> = (0..3).map(|_| rng.random()).collect();
        assert_eq!(
            draws,
            [0.8444218515250481, 0.7579544029403025, 0.420571580830845]
        );
        assert_eq!(PyRandom::new(42).next_u32(), 2_746_317_213);
        // random.Random(2**40 + 7).random(): a seed of two words.
        assert_eq!(PyRandom::new((1 << 40) + 7).random(), 0.6137037779936511);
        // random.Random(5).randbytes(7): 69, 124, 118, 159, 216, 100, 65.
        let mut bits = Vec::new();
        PyRandom::new(5).low_bits(7, &mut bits);
        assert_eq!(bits, [true, false, false, true, false, false, true]);
    }

    #[test]
    fn fsum_is_exactly_rounded() {
        assert_eq!(fsum([0.1; 10]), 1.0);
        assert_eq!(fsum([1e100, 1.0, -1e100, 1e-100]), 1.0);
        assert_eq!(fsum([]), 0.0);
        // One value is its own sum, whatever it is; two take the general path.
        for one in [0.7, -0.0, 1e300, f64::INFINITY, f64::MIN_POSITIVE / 4.0] {
            assert_eq!(fsum([one]).to_bits(), one.to_bits());
        }
        assert!(fsum([f64::NAN]).is_nan());
        assert_eq!(fsum([0.1, 0.2]), 0.30000000000000004);
        assert_eq!(fsum([1e16, 1.0]), 1e16);
        assert_eq!(fsum([1e16, 1.0, 1.0]), 1.0000000000000002e16);
        // statistics.fmean([0.1, 0.2, 0.3]): the exactly rounded 0.6, over 3.
        assert_eq!(fmean(&[0.1, 0.2, 0.3]), Some(0.19999999999999998));
    }

    #[test]
    fn percentiles_interpolate_between_order_statistics() {
        // pytest-probability's percentile_interval(range(101), 0.95): 1 − 0.95 is a hair
        // above 0.05 in floating point.
        let samples: Vec<f64> = (0..=100).map(f64::from).collect();
        assert_eq!(
            percentile_interval(&samples, 0.95),
            Some((2.500000000000002, 97.5))
        );
        assert_eq!(percentile_interval(&[3.0], 0.95), Some((3.0, 3.0)));
        assert_eq!(percentile_interval(&[], 0.95), None);
    }
}
