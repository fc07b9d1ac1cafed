//! Text pieces every section of the terminal output shares: the rule line, percentages,
//! money, token counts, colors.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::types::stats::Rule;
use crate::types::status::Color;
use crate::types::usage::UsageTotals;

pub(crate) use crate::types::count::thousands;

/// Width of the rule line, as pytest draws it.
const RULE_WIDTH: usize = 80;

pub(crate) fn paint(text: &str, color: Color, enabled: bool) -> String {
    if !enabled || text.is_empty() {
        return text.to_string();
    }
    let code = match color {
        Color::Green => "32",
        Color::Yellow => "33",
        Color::Red => "31",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// The rule line with a centred title, 80 columns wide.
pub(crate) fn rule(title: &str) -> String {
    let side = (RULE_WIDTH.saturating_sub(title.len() + 2) / 2).max(1);
    let mut line = format!("{} {title} {}", "=".repeat(side), "=".repeat(side));
    if line.len() < RULE_WIDTH {
        line.push('=');
    }
    line
}

/// Amounts from this on are written with an exponent.
const LARGE_AMOUNT: f64 = 1e15;

/// Amounts below this have fewer than two significant digits in four decimals.
const SMALL_AMOUNT: f64 = 0.001;

/// The most decimals a small amount is written with; a smaller one takes an exponent.
const MAX_DECIMALS: i32 = 12;

/// `$0.0123`; a small amount with the decimals its first two significant digits need
/// (`$0.000091`, never `$0.0000` for a cost that is not zero: a cheap run's cost, and what a
/// pass of it costs, must read as what they are); an amount too large to read digit by digit
/// (a total that overflowed and stopped at the largest number has 309 digits) as
/// `$1.7977e308`, and one too small for twelve decimals as `$1.2e-15`.
pub fn money(amount: f64) -> String {
    let size = amount.abs();
    if size >= LARGE_AMOUNT {
        return format!("${amount:.4e}");
    }
    if size >= SMALL_AMOUNT || size == 0.0 || !size.is_finite() {
        return format!("${amount:.4}");
    }
    // The first significant digit's place, and one more.
    let decimals = 1 - size.log10().floor() as i32;
    if decimals > MAX_DECIMALS {
        return format!("${amount:.1e}");
    }
    format!("${amount:.*}", decimals.max(4) as usize)
}

/// A model as a report names it: `(unnamed)` for usage recorded without one.
pub fn model_name(model: &str) -> &str {
    if model.is_empty() {
        "(unnamed)"
    } else {
        model
    }
}

pub(crate) fn token_text(usage: &UsageTotals) -> String {
    let mut text = format!(
        "{} in / {} out",
        thousands(usage.input_tokens),
        thousands(usage.output_tokens)
    );
    if usage.cached_input_tokens > 0 {
        let _ = write!(text, " / {} cached", thousands(usage.cached_input_tokens));
    }
    text
}

/// The number of decimal digits of `n`: the width of its text, found without making it.
pub(crate) fn digits(mut n: u64) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

/// A bound as a whole percent, rounded half up; 0% and 100% only for bounds exactly 0 or 1, so
/// that a bound of 99.7% never reads as certainty.
pub fn bound_percent(value: f64) -> String {
    format!("{}%", whole_percent(value))
}

/// The number [`bound_percent`] shows.
pub(crate) fn whole_percent(value: f64) -> i64 {
    let percent = (value * 100.0 + 0.5).floor() as i64;
    if value > 0.0 && percent <= 0 {
        1
    } else if value < 1.0 && percent >= 100 {
        99
    } else {
        percent
    }
}

/// The length of [`bound_percent`]'s text for `value`, found without making it.
pub(crate) fn bound_percent_width(value: f64) -> usize {
    let percent = whole_percent(value);
    digits(percent.unsigned_abs()) + usize::from(percent < 0) + 1
}

/// The width of each column of a table: its widest cell, the header's included, in characters.
pub(crate) fn column_widths(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|column| {
            std::iter::once(header)
                .chain(rows.iter().map(Vec::as_slice))
                .map(|cells| cells.get(column).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// `text` as one shell word: as it is when it needs no quoting, else in single quotes. The
/// summary's hint and the reports' doctor commands both quote with it.
/// The command that diagnoses a case's row, with `-p` so that it builds the case's package
/// alone (in a workspace, the doctor otherwise builds every package).
pub(crate) fn doctor_command(info: &crate::model::CaseInfo) -> String {
    if info.package.is_empty() {
        format!("cargo probtest doctor {}", shell_word(&info.case))
    } else {
        format!(
            "cargo probtest doctor -p {} {}",
            shell_word(&info.package),
            shell_word(&info.case)
        )
    }
}

pub(crate) fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-' | '+' | '/'));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `min_rate 0.9` or `min_passes 19`.
pub fn bar_text(rule: Rule) -> String {
    match rule {
        Rule::MinRate(bar) => format!("min_rate {bar}"),
        Rule::MinPasses(bar) => format!("min_passes {bar}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_s_width_is_the_length_of_its_text() {
        for value in [
            0.0,
            1e-9,
            0.004,
            0.05,
            0.5,
            0.994,
            0.996,
            1.0,
            -0.2,
            2.5,
            f64::NAN,
        ] {
            assert_eq!(
                bound_percent_width(value),
                bound_percent(value).len(),
                "{value}"
            );
        }
    }

    #[test]
    fn digits_is_the_length_of_the_text() {
        for n in [0, 1, 9, 10, 99, 100, 12_345, u64::MAX / 10, u64::MAX] {
            assert_eq!(digits(n), n.to_string().len(), "{n}");
        }
    }

    #[test]
    fn money_has_four_decimals_and_an_exponent_when_huge() {
        assert_eq!(money(0.01234), "$0.0123");
        assert_eq!(money(123_456.0), "$123456.0000");
        assert_eq!(money(f64::MAX), "$1.7977e308");
        assert_eq!(money(2e15), "$2.0000e15");
        assert_eq!(money(0.0), "$0.0000");
    }

    #[test]
    fn a_small_amount_keeps_two_significant_digits() {
        assert_eq!(money(0.00009125000000000002), "$0.000091");
        assert_eq!(money(0.00004), "$0.000040");
        assert_eq!(money(0.0001), "$0.00010");
        assert_eq!(money(0.00099), "$0.00099");
        assert_eq!(money(0.001), "$0.0010");
        assert_eq!(money(0.0012), "$0.0012");
        assert_eq!(money(1.5e-11), "$0.000000000015");
        assert_eq!(money(1.5e-12), "$1.5e-12");
        assert_eq!(money(1.5e-15), "$1.5e-15");
        for amount in [1e-4, 3.3e-5, 7e-7, 2e-9, 1e-11] {
            assert_ne!(money(amount), "$0.0000", "{amount}");
        }
    }
}
