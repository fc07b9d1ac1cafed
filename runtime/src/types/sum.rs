//! Sums that stay finite. JSON has no infinity: serde_json writes one as `null`, which a
//! report's reader then refuses where a number belongs, so a total that overflows stops at the
//! largest finite number instead, and the report says so.
//!
//! Layer: types (pure). Imports nothing from the crate.

/// `total + amount`, or the largest finite number (the most negative one, below) where the
/// sum overflows. A NaN amount, which the recording API refuses, adds nothing.
pub(crate) fn saturating_add(total: f64, amount: f64) -> f64 {
    let sum = total + amount;
    if sum.is_nan() {
        finite(total)
    } else {
        sum.clamp(f64::MIN, f64::MAX)
    }
}

/// `value` as a number JSON can hold: an infinity becomes the largest finite number of its
/// sign, NaN becomes 0.
pub(crate) fn finite(value: f64) -> f64 {
    if value.is_nan() {
        0.0
    } else {
        value.clamp(f64::MIN, f64::MAX)
    }
}

/// Whether a sum made with [`saturating_add`] stopped at the largest number: it overflowed (or
/// its amounts add up to that very number, which no real cost does).
pub(crate) fn is_saturated(total: f64) -> bool {
    total == f64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_stop_at_the_largest_finite_number() {
        assert_eq!(saturating_add(0.25, 0.5), 0.75);
        assert_eq!(saturating_add(1e308, 1e308), f64::MAX);
        assert_eq!(saturating_add(f64::MAX, 1e308), f64::MAX);
        assert_eq!(saturating_add(1.0, f64::INFINITY), f64::MAX);
        assert_eq!(saturating_add(-1e308, -1e308), f64::MIN);
        assert_eq!(saturating_add(2.0, f64::NAN), 2.0);
        assert_eq!(saturating_add(f64::INFINITY, f64::NAN), f64::MAX);
        assert!(is_saturated(saturating_add(1e308, 1e308)));
        assert!(!is_saturated(1e308));
    }

    #[test]
    fn every_value_becomes_one_json_holds() {
        assert_eq!(finite(1.5), 1.5);
        assert_eq!(finite(f64::INFINITY), f64::MAX);
        assert_eq!(finite(f64::NEG_INFINITY), f64::MIN);
        assert_eq!(finite(f64::NAN), 0.0);
    }
}
