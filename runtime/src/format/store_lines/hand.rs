//! The reader of run lines, by hand: a start or an end exactly as [`start_line`] and
//! [`end_line`] write them, escaped text, usage and waits included. Anything else (a line
//! torn by a killed process, a field out of place) is no line at all.
//!
//! Written as index loops over bytes: in an unoptimized test binary, iterator adapters and
//! serde's generic reader cost several calls a byte, and a report's folding reads every run
//! line of the session.
//!
//! [`start_line`]: super::start_line
//! [`end_line`]: super::end_line
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;

use super::Line;
use crate::model::Record;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

/// A run line's start line, read by hand.
pub(super) fn start(bytes: &[u8]) -> Option<Line<'static>> {
    let mut line = Cursor(bytes);
    line.literal("{\"t\":\"start\",\"proc\":")?;
    let proc = line.string()?;
    line.literal(",\"seq\":")?;
    let seq = line.number()?;
    line.literal(",\"package\":")?;
    let package = line.string()?;
    line.literal(",\"module\":")?;
    let module = line.string()?;
    line.literal(",\"case\":")?;
    let case = line.string()?;
    line.literal(",\"run\":")?;
    let run = line.number()?;
    line.literal(",\"attempt\":")?;
    let attempt = line.number()?;
    line.literal("}")?;
    line.0.is_empty().then_some(Line::Start {
        proc: Cow::Owned(proc),
        seq,
        package: Cow::Owned(package),
        module: Cow::Owned(module),
        case: Cow::Owned(case),
        run,
        attempt,
    })
}

/// A run's end line, read by hand: its record names no case (its start does).
pub(super) fn end(bytes: &[u8]) -> Option<Line<'static>> {
    let mut line = Cursor(bytes);
    line.literal("{\"t\":\"end\",\"proc\":")?;
    let proc = line.string()?;
    line.literal(",\"seq\":")?;
    let seq = line.number()?;
    line.literal(",\"outcome\":")?;
    let outcome = match line.string()?.as_str() {
        "pass" => Outcome::Pass,
        "fail" => Outcome::Fail,
        "error" => Outcome::Error,
        "stopped" => Outcome::Stopped,
        _ => return None,
    };
    line.literal(",\"elapsed\":")?;
    let elapsed = line.number()?;
    line.literal(",\"cost\":")?;
    let cost = line.number()?;
    let mut record = Record {
        outcome,
        elapsed,
        cost,
        ..Record::default()
    };
    // The optional fields, each when the run has it, in the order the writer puts them.
    if line.literal(",\"message\":").is_some() {
        record.message = Some(line.string()?);
    }
    if line.literal(",\"location\":").is_some() {
        record.location = Some(line.string()?);
    }
    if line.literal(",\"usage\":").is_some() {
        record.usage = line.usage()?;
    }
    if line.literal(",\"waited\":").is_some() {
        record.waited = line.number()?;
    }
    if line.literal(",\"waited_for\":").is_some() {
        record.waited_for = Some(line.string()?);
    }
    if line.literal(",\"replayed\":").is_some() {
        record.replayed = Some(line.number()?);
    }
    line.literal("}")?;
    line.0.is_empty().then_some(Line::End {
        proc: Cow::Owned(proc),
        seq,
        record,
    })
}

/// What is left of a line.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn literal(&mut self, text: &str) -> Option<()> {
        self.0 = self.0.strip_prefix(text.as_bytes())?;
        Some(())
    }

    /// A JSON string, its escapes undone, its closing quote consumed.
    fn string(&mut self) -> Option<String> {
        self.literal("\"")?;
        let bytes = self.0;
        // Most strings have no escape: one copy of the text between the quotes.
        let mut at = 0;
        while at < bytes.len() && bytes[at] != b'"' && bytes[at] != b'\\' {
            at += 1;
        }
        let mut text = std::str::from_utf8(bytes.get(..at)?).ok()?.to_string();
        while *bytes.get(at)? == b'\\' {
            let unescaped = match *bytes.get(at + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let (unit, after) = unicode_escape(bytes, at)?;
                    at = after;
                    text.push(unit);
                    let from = at;
                    while at < bytes.len() && bytes[at] != b'"' && bytes[at] != b'\\' {
                        at += 1;
                    }
                    text.push_str(std::str::from_utf8(bytes.get(from..at)?).ok()?);
                    continue;
                }
                _ => return None,
            };
            text.push(unescaped);
            at += 2;
            let from = at;
            while at < bytes.len() && bytes[at] != b'"' && bytes[at] != b'\\' {
                at += 1;
            }
            text.push_str(std::str::from_utf8(bytes.get(from..at)?).ok()?);
        }
        self.0 = bytes.get(at + 1..)?;
        Some(text)
    }

    /// A number up to (not including) the `,`, `}` or `]` after it.
    fn number<T: std::str::FromStr>(&mut self) -> Option<T> {
        let mut at = 0;
        while at < self.0.len() && !matches!(self.0[at], b',' | b'}' | b']') {
            at += 1;
        }
        let text = std::str::from_utf8(self.0.get(..at)?).ok()?;
        self.0 = self.0.get(at..)?;
        text.parse().ok()
    }

    /// A record's usage, as serde writes a `TokenUsage` list: its fields in their order.
    fn usage(&mut self) -> Option<Vec<TokenUsage>> {
        self.literal("[")?;
        let mut usage = Vec::new();
        if self.literal("]").is_some() {
            return Some(usage);
        }
        loop {
            self.literal("{\"model\":")?;
            let model = self.string()?;
            self.literal(",\"input_tokens\":")?;
            let input_tokens = self.number()?;
            self.literal(",\"output_tokens\":")?;
            let output_tokens = self.number()?;
            self.literal(",\"cached_input_tokens\":")?;
            let cached_input_tokens = self.number()?;
            self.literal(",\"cost\":")?;
            let cost = self.number()?;
            self.literal("}")?;
            usage.push(TokenUsage {
                model,
                input_tokens,
                output_tokens,
                cached_input_tokens,
                cost,
            });
            if self.literal("]").is_some() {
                return Some(usage);
            }
            self.literal(",")?;
        }
    }
}

/// The character of the `\uXXXX` escape at `at` (with the low half after it, for a surrogate
/// pair), and where the text after it starts.
fn unicode_escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let unit = |from: usize| -> Option<u32> {
        let digits = std::str::from_utf8(bytes.get(from..from + 4)?).ok()?;
        u32::from_str_radix(digits, 16).ok()
    };
    let high = unit(at + 2)?;
    if !(0xD800..0xDC00).contains(&high) {
        return Some((char::from_u32(high)?, at + 6));
    }
    if bytes.get(at + 6..at + 8)? != b"\\u" {
        return None;
    }
    let low = unit(at + 8)?;
    if !(0xDC00..0xE000).contains(&low) {
        return None;
    }
    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
    Some((char::from_u32(code)?, at + 12))
}
