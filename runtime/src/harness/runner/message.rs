//! What a failed run's message keeps: every line of it (an `assert_eq!`'s `left:` and `right:`
//! lines are the model's wrong answer), with secrets replaced by `[redacted]`, capped at
//! [`MAX_BYTES`] bytes and [`MAX_LINES`] lines with a marker saying how many bytes were left out.
//!
//! Secrets are kept out by redaction, not by truncation: a message may hold anything the program
//! put into it, a request's headers included. Three kinds are recognised:
//!
//! - the values (8 characters or more) of this process's environment variables whose names look
//!   secret (they contain `KEY`, `TOKEN`, `SECRET`, `PASSWORD`, `PASSWD`, `CREDENTIAL` or `AUTH`,
//!   in any case), read once per process, at its first failed run;
//! - the value of an `Authorization:`, `Proxy-Authorization:`, `api-key:` or `x-api-key:`
//!   header line, and the credentials after `Bearer ` or `Basic `;
//! - the shapes of common keys: `sk-…`, `ghp_…` (and GitHub's other token prefixes),
//!   `xoxb-…` (Slack's), `AKIA…` (AWS access key ids).
//!
//! Layer: harness.

use std::sync::OnceLock;

/// A kept message holds at most this many bytes of the message (then the marker).
pub(crate) const MAX_BYTES: usize = 4096;
/// A kept message holds at most this many lines of the message (then the marker).
pub(crate) const MAX_LINES: usize = 40;
/// What a secret is replaced with.
pub(crate) const REDACTED: &str = "[redacted]";
/// How much of a message is redacted before the cap: anything later is dropped by the cap, and
/// a message of megabytes is not scanned to the end.
const SCANNED_BYTES: usize = 4 * MAX_BYTES;

/// `message` as a record keeps it: redacted, then capped.
pub(crate) fn kept(message: &str) -> String {
    kept_with(message, secret_values())
}

fn kept_with(message: &str, secrets: &[String]) -> String {
    let scanned = &message[..floor_boundary(message, SCANNED_BYTES)];
    let redacted = redact(scanned, secrets);
    cap(&redacted, message.len() - scanned.len())
}

/// The values of this process's secret-looking environment variables, longest first (so that a
/// value holding another is replaced whole); read at the first failed run, then kept.
fn secret_values() -> &'static [String] {
    static VALUES: OnceLock<Vec<String>> = OnceLock::new();
    VALUES.get_or_init(|| secrets_of(std::env::vars_os()))
}

/// The secret values among `vars`, longest first, each once.
fn secrets_of(vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>) -> Vec<String> {
    let mut values: Vec<String> = vars
        .filter_map(|(name, value)| {
            let name = name.to_str()?.to_ascii_uppercase();
            let secret = SECRET_NAMES.iter().any(|part| name.contains(part));
            let value = value.into_string().ok()?;
            (secret && value.chars().count() >= 8).then_some(value)
        })
        .collect();
    values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    values.dedup();
    values
}

/// What the name of an environment variable holding a secret contains, upper-cased.
const SECRET_NAMES: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// Header lines whose value is a credential, lower-cased, with their colon.
const SECRET_HEADERS: &[&str] = &[
    "authorization:",
    "proxy-authorization:",
    "api-key:",
    "x-api-key:",
];

/// `text` with `secrets`, credential headers, `Bearer`/`Basic` credentials and key shapes
/// replaced by [`REDACTED`].
pub(crate) fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_string();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    let mut out = String::with_capacity(text.len());
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match header_value(line) {
            Some(at) => {
                out.push_str(&line[..at]);
                out.push(' ');
                out.push_str(REDACTED);
            }
            None => redact_words(line, &mut out),
        }
    }
    out
}

/// Where the value of a credential header line starts (just after its colon), if it is one.
fn header_value(line: &str) -> Option<usize> {
    let start = line.len() - line.trim_start().len();
    let rest = &line.as_bytes()[start..];
    SECRET_HEADERS.iter().find_map(|header| {
        let name = rest.get(..header.len())?;
        (name.eq_ignore_ascii_case(header.as_bytes())
            && !line[start + header.len()..].trim().is_empty())
        .then_some(start + header.len())
    })
}

/// The credentials and key shapes of one line replaced, appended to `out`.
fn redact_words(line: &str, out: &mut String) {
    let bytes = line.as_bytes();
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        // A key or scheme starts a word: it follows no letter, digit, `_` or `-`.
        let starts_word = at == 0 || !is_token_byte(bytes[at - 1]);
        let found = if starts_word {
            credential(&bytes[at..]).or_else(|| key_shape(&bytes[at..]))
        } else {
            None
        };
        match found {
            Some((keep, secret)) => {
                out.push_str(&line[copied..at + keep]);
                out.push_str(REDACTED);
                at += keep + secret;
                copied = at;
            }
            None => at += 1,
        }
    }
    out.push_str(&line[copied..]);
}

fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

/// How long the run of bytes at the start of `bytes` is whose bytes all pass `take`.
fn run_of(bytes: &[u8], take: impl Fn(u8) -> bool) -> usize {
    bytes.iter().take_while(|&&byte| take(byte)).count()
}

/// `Bearer <token>` or `Basic <credentials>` at the start of `bytes`: the length of what is
/// kept (the scheme and its space) and of the secret after it.
fn credential(bytes: &[u8]) -> Option<(usize, usize)> {
    for scheme in [&b"Bearer "[..], b"bearer ", b"Basic ", b"basic "] {
        if bytes.starts_with(scheme) {
            // RFC 6750's token characters, which cover Basic's base64 too.
            let secret = run_of(&bytes[scheme.len()..], |byte| {
                byte.is_ascii_alphanumeric() || b"-._~+/=".contains(&byte)
            });
            if secret >= 8 {
                return Some((scheme.len(), secret));
            }
        }
    }
    None
}

/// A common key's shape at the start of `bytes`: the length of the key (all of it secret).
fn key_shape(bytes: &[u8]) -> Option<(usize, usize)> {
    // (prefix, shortest body, whether a body byte may be any token byte or only upper-case
    // letters and digits)
    const SHAPES: &[(&[u8], usize, bool)] = &[
        (b"sk-", 16, true),
        (b"ghp_", 20, true),
        (b"gho_", 20, true),
        (b"ghu_", 20, true),
        (b"ghs_", 20, true),
        (b"ghr_", 20, true),
        (b"github_pat_", 20, true),
        (b"xoxa-", 10, true),
        (b"xoxb-", 10, true),
        (b"xoxp-", 10, true),
        (b"xoxr-", 10, true),
        (b"xoxs-", 10, true),
        (b"AKIA", 16, false),
    ];
    SHAPES.iter().find_map(|&(prefix, shortest, any)| {
        let rest = bytes.strip_prefix(prefix)?;
        let body = if any {
            run_of(rest, is_token_byte)
        } else {
            run_of(rest, |byte| {
                byte.is_ascii_uppercase() || byte.is_ascii_digit()
            })
        };
        (body >= shortest).then_some((0, prefix.len() + body))
    })
}

/// `text` cut to [`MAX_LINES`] lines and [`MAX_BYTES`] bytes, with `… (N more bytes)` when
/// anything was cut: what was cut of `text`, and `beyond`, bytes past its end.
pub(crate) fn cap(text: &str, beyond: usize) -> String {
    let by_lines = text
        .match_indices('\n')
        .nth(MAX_LINES - 1)
        .map_or(text.len(), |(at, _)| at);
    let cut = by_lines.min(floor_boundary(text, MAX_BYTES));
    if cut == text.len() && beyond == 0 {
        return text.to_string();
    }
    let more = text.len() - cut + beyond;
    let kept = &text[..cut];
    // A cut at a line's end puts the marker on a line of its own; inside a line, after it.
    let separator = if text[cut..].starts_with('\n') {
        "\n"
    } else {
        ""
    };
    format!("{kept}{separator}… ({more} more bytes)")
}

/// The largest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    (0..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env(vars: &[(&str, &str)]) -> Vec<String> {
        secrets_of(
            vars.iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
        )
    }

    #[test]
    fn secret_looking_variables_of_eight_characters_or_more_are_secrets() {
        let secrets = env(&[
            ("OPENAI_API_KEY", "key-abcdefgh"),
            ("github_token", "tok-12345678"),
            ("DB_PASSWORD", "hunter22"),
            ("MY_PASSWD", "p"),
            ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG"),
            ("GOOGLE_APPLICATION_CREDENTIALS", "/etc/creds.json"),
            ("X_AUTH", "auth-value-1"),
            ("HOME", "/home/someone"),
            ("PATH", "/usr/bin:/bin"),
            ("COPY_OF_KEY", "key-abcdefgh"),
        ]);
        assert_eq!(
            secrets,
            [
                "wJalrXUtnFEMI/K7MDENG",
                "/etc/creds.json",
                "auth-value-1",
                "key-abcdefgh",
                "tok-12345678",
                "hunter22",
            ]
        );
    }

    #[test]
    fn every_line_is_kept_and_secrets_are_redacted() {
        let secrets = env(&[("PT_API_KEY", "plain-secret-value")]);
        let message = "the provider refused the call\n\
                       Authorization: Bearer plain-secret-value\n\
                       retry later, key plain-secret-value";
        assert_eq!(
            kept_with(message, &secrets),
            "the provider refused the call\n\
             Authorization: [redacted]\n\
             retry later, key [redacted]"
        );
        // Without the variable, the header line alone gives the key away nowhere.
        assert_eq!(
            kept_with(message, &[]),
            "the provider refused the call\n\
             Authorization: [redacted]\n\
             retry later, key plain-secret-value"
        );
    }

    #[test]
    fn headers_schemes_and_key_shapes_are_redacted() {
        for (text, expected) in [
            ("  x-api-key: abc", "  x-api-key: [redacted]"),
            ("API-KEY:abc", "API-KEY: [redacted]"),
            (
                "Proxy-Authorization: Basic dXNlcjpwYXNz",
                "Proxy-Authorization: [redacted]",
            ),
            ("authorization:", "authorization:"),
            (
                r#"{"authorization": "Bearer eyJhbGciOi.J9.x-y_z"}"#,
                r#"{"authorization": "Bearer [redacted]"}"#,
            ),
            ("sent basic dXNlcjpwYXNz=", "sent basic [redacted]"),
            ("Bearer short", "Bearer short"),
            (
                "key sk-proj-abcdefghijklmnop1234 refused",
                "key [redacted] refused",
            ),
            (
                "task-sk-abcdefghijklmnop1234",
                "task-sk-abcdefghijklmnop1234",
            ),
            ("sk-short", "sk-short"),
            (
                "token=ghp_abcdefghijklmnopqrstuvwxyz0123",
                "token=[redacted]",
            ),
            ("github_pat_11ABCDEFG0123456789_abcdef", "[redacted]"),
            (
                "slack xoxb-1234-5678-abcdef said no",
                "slack [redacted] said no",
            ),
            ("id AKIAIOSFODNN7EXAMPLE.", "id [redacted]."),
            ("AKIA is a prefix", "AKIA is a prefix"),
            (
                "assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\"",
                "assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\"",
            ),
            ("naïve Bearer ééé", "naïve Bearer ééé"),
        ] {
            assert_eq!(redact(text, &[]), expected, "{text}");
        }
    }

    #[test]
    fn a_long_message_is_capped_with_a_marker() {
        let short = "one\ntwo";
        assert_eq!(cap(short, 0), short);
        let lines: Vec<String> = (1..=45).map(|n| format!("line {n}")).collect();
        let text = lines.join("\n");
        let capped = cap(&text, 0);
        let kept: Vec<&str> = capped.lines().collect();
        assert_eq!(kept.len(), MAX_LINES + 1, "{capped}");
        assert_eq!(kept[MAX_LINES - 1], "line 40");
        let rest = text.len() - lines[..40].join("\n").len();
        assert_eq!(kept[MAX_LINES], format!("… ({rest} more bytes)"));
        // Bytes: cut inside a line, at a char boundary, the marker after it.
        let wide = "é".repeat(MAX_BYTES);
        let capped = cap(&wide, 0);
        assert!(capped.starts_with(&"é".repeat(MAX_BYTES / 2)));
        assert!(
            capped.ends_with(&format!("é… ({} more bytes)", wide.len() - MAX_BYTES)),
            "{}",
            &capped[capped.len() - 40..]
        );
        // What the scan left out is counted too.
        assert_eq!(cap("short", 10), "short… (10 more bytes)");
    }

    #[test]
    fn a_huge_message_is_scanned_only_as_far_as_the_cap_reaches() {
        let mut message = "x".repeat(MAX_BYTES - 10);
        message.push_str(" Bearer abcdefghijkl");
        message.push_str(&"y".repeat(10 * SCANNED_BYTES));
        let kept = kept_with(&message, &[]);
        assert!(kept.len() < MAX_BYTES + 40, "{}", kept.len());
        assert!(!kept.contains("abcdefgh"), "{}", &kept[MAX_BYTES - 20..]);
        let shown = floor_boundary(&redact(&message[..SCANNED_BYTES], &[]), MAX_BYTES);
        let total = redact(&message[..SCANNED_BYTES], &[]).len() + message.len() - SCANNED_BYTES;
        assert!(kept.ends_with(&format!("… ({} more bytes)", total - shown)));
    }
}
