//! JSON text written by hand: strings escaped as serde_json escapes them, numbers spelled so
//! they read back exactly.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.
//!
//! Why by hand: test builds compile probtest and serde_json without optimizations, and there encoding these
//! through serde_json took longer than a short test; so did appending them piece by piece to a
//! `String`, a call chain with debug checks per piece. Each text here is one `format!`: std
//! comes precompiled with optimizations, and `format!` runs in it from start to end, calling
//! back here only for strings to escape and numbers JSON cannot hold. Usage, gates, metrics and
//! non-default settings go through serde_json, and only when present. The tests check that
//! every form here reads back as the same JSON value that serde_json writes (the texts differ
//! only in how a large exponent is spelled: `1e21` here, `1e+21` there).

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::Serialize;

/// A JSON string, escaped as serde_json escapes it, quotes included.
pub(crate) struct Str<'a>(pub(crate) &'a str);

impl fmt::Display for Str<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let bytes = text.as_bytes();
        out.write_str("\"")?;
        let mut plain_from = 0;
        // An index loop: iterator adapters cost several calls a byte in unoptimized builds.
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            at += 1;
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..=0x1f => "",
                _ => continue,
            };
            out.write_str(&text[plain_from..at - 1])?;
            plain_from = at;
            if escape.is_empty() {
                write!(out, "\\u{byte:04x}")?;
            } else {
                out.write_str(escape)?;
            }
        }
        out.write_str(&text[plain_from..])?;
        out.write_str("\"")
    }
}

/// An optional string: the string, or `null`.
pub(crate) struct OptionalStr<'a>(pub(crate) Option<&'a str>);

impl fmt::Display for OptionalStr<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(text) => Str(text).fmt(out),
            None => out.write_str("null"),
        }
    }
}

/// A number: the shortest text that reads back as it (`0.5`, `1e-7`), or `null` for a value
/// JSON cannot hold, as serde_json writes it.
pub(crate) struct Num(pub(crate) f64);

impl fmt::Display for Num {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            fmt::Debug::fmt(&self.0, out)
        } else {
            out.write_str("null")
        }
    }
}

/// A value through serde_json: unit enum variants, and what is usually empty.
pub(crate) fn serde<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    serde_json::to_string(value).map_err(io::Error::other)
}

/// `empty` when the value is empty (without calling serde_json), else the value.
pub(crate) fn serde_or<'a, T: Serialize + ?Sized>(
    value: &T,
    is_empty: bool,
    empty: &'a str,
) -> io::Result<Cow<'a, str>> {
    if is_empty {
        Ok(Cow::Borrowed(empty))
    } else {
        serde(value).map(Cow::Owned)
    }
}

/// A JSON string of `text`, quotes included.
pub(crate) fn quoted(text: &str) -> String {
    Str(text).to_string()
}
