//! Sorting samples in IEEE 754 total order, as `f64::total_cmp` orders them.
//!
//! A case's run times are sorted at every exit, in a test binary built without optimizations,
//! where a generic sort pays several calls per comparison; a short sample is sorted here by
//! insertion on integer keys instead (some ten times fewer instructions for ten runs).
//!
//! Layer: types.

/// Samples up to this long are sorted by insertion.
const SHORT: usize = 32;

/// Sorts `values` as `values.sort_by(f64::total_cmp)` does.
pub(crate) fn sort_total(values: &mut [f64]) {
    if values.len() > SHORT {
        values.sort_by(f64::total_cmp);
        return;
    }
    let mut at = 1;
    while at < values.len() {
        let moving = values[at];
        let key = total_key(moving);
        let mut to = at;
        while to > 0 && total_key(values[to - 1]) > key {
            values[to] = values[to - 1];
            to -= 1;
        }
        values[to] = moving;
        at += 1;
    }
}

/// The integer whose order is `f64::total_cmp`'s: negative numbers' magnitude bits flipped.
#[inline(always)]
fn total_key(value: f64) -> i64 {
    let bits = value.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_total_cmp_does_for_short_and_long_samples() {
        let special = [
            f64::NAN,
            -f64::NAN,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            1e-310,
            -1e-310,
            1.5,
            -1.5,
        ];
        // A fixed generator: every length up to past `SHORT`, each mixing the special values
        // with ordinary ones.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..=SHORT + 8 {
            for _ in 0..20 {
                let values: Vec<f64> = (0..len)
                    .map(|_| {
                        let draw = next();
                        if draw % 3 == 0 {
                            special[(draw / 3) as usize % special.len()]
                        } else {
                            (draw % 1000) as f64 / 7.0 - 50.0
                        }
                    })
                    .collect();
                let mut expected = values.clone();
                expected.sort_by(f64::total_cmp);
                let mut sorted = values.clone();
                sort_total(&mut sorted);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&sorted), bits(&expected), "{values:?}");
            }
        }
    }
}
