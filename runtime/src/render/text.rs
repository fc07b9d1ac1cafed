//! Text pieces every section of the terminal output shares: the rule line, percentages,
//! money, token counts, colors, and text from a test shown with its control characters escaped.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;
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

/// `text` as one shell word: as it is when it needs no quoting, else in single quotes; with a
/// character [`shown`] escapes, in `$'…'` with that character as `\u{…}`, which bash and zsh
/// read back as the character, so that the command still names the case and shows nothing that
/// acts on the terminal. The summary's hint and the reports' doctor commands both quote with it.
pub(crate) fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '-' | '+' | '/'));
    if plain {
        text.to_string()
    } else if text.chars().any(escaped) {
        let mut word = String::from("$'");
        for c in text.chars() {
            match c {
                '\\' | '\'' => {
                    word.push('\\');
                    word.push(c);
                }
                c if escaped(c) => {
                    let _ = write!(word, "\\u{:04x}", c as u32);
                }
                c => word.push(c),
            }
        }
        word.push('\'');
        word
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Whether a character of a test's text (an id, a message, a model's name) is shown escaped:
/// C0 controls (escape sequences, carriage returns), DEL, C1 controls, and the bidirectional
/// marks, embeddings, overrides and isolates (U+200E, U+200F, U+202A to U+202E, U+2066 to
/// U+2069), which reorder what a terminal or a page shows around them.
pub(crate) fn escaped(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with each character `escaped` picks written as `\u{1b}`, so that an id or a message
/// shows what it holds instead of acting on the terminal or the page; borrowed when nothing is.
pub fn shown(text: &str) -> Cow<'_, str> {
    shown_keeping(text, false)
}

/// As [`shown`], with line breaks and tabs kept: a message shown as a block of lines.
pub fn shown_block(text: &str) -> Cow<'_, str> {
    shown_keeping(text, true)
}

fn shown_keeping(text: &str, lines: bool) -> Cow<'_, str> {
    // Every escaped character is ASCII, or starts with byte 0xC2 (C1) or 0xE2 (the marks): most
    // texts are ids and pass this one loop over their bytes.
    let suspect = text
        .bytes()
        .any(|b| b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xe2);
    if !suspect {
        return Cow::Borrowed(text);
    }
    let keep = |c: char| lines && matches!(c, '\n' | '\t');
    if !text.chars().any(|c| escaped(c) && !keep(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) && !keep(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
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
    fn control_characters_and_bidi_marks_are_shown_escaped() {
        assert!(matches!(shown("triage::refund-Terse"), Cow::Borrowed(_)));
        assert!(matches!(shown("naïve – ≤2s"), Cow::Borrowed(_)));
        assert_eq!(shown("red\u{1b}[31mtext"), "red\\u{1b}[31mtext");
        assert_eq!(
            shown("abc\u{202e}fed\u{2066}\u{2069}\u{200e}\u{200f}"),
            "abc\\u{202e}fed\\u{2066}\\u{2069}\\u{200e}\\u{200f}"
        );
        assert_eq!(shown("a\u{7f}\u{85}\u{9b}b"), "a\\u{7f}\\u{85}\\u{9b}b");
        assert_eq!(shown("one\ntwo\tthree\r"), "one\\u{a}two\\u{9}three\\u{d}");
        assert_eq!(
            shown_block("one\ntwo\tthree\r\u{1b}"),
            "one\ntwo\tthree\\u{d}\\u{1b}"
        );
        assert!(matches!(shown_block("one\n\ttwo"), Cow::Borrowed(_)));
        // Neighbours of the escaped ranges are shown as they are.
        assert_eq!(
            shown("\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}"),
            "\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}"
        );
    }

    #[test]
    fn a_shell_word_with_control_characters_is_quoted_as_bash_reads_it_back() {
        assert_eq!(shell_word("triage::refund"), "triage::refund");
        assert_eq!(shell_word("it's here"), "'it'\\''s here'");
        assert_eq!(
            shell_word("a\u{1b}[31m'b\u{202e}"),
            "$'a\\u001b[31m\\'b\\u202e'"
        );
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
