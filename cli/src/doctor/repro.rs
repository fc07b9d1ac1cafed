//! The repro blob, `pd1:<base64url of JSON>`: which test, of which target, under which
//! perturbation (or beside or after which sibling). Decoded strictly: an unknown axis or field,
//! a newer version, or a blob for a test its binary does not have fails loudly, never quietly
//! doing less than it claims.

use serde_json::{json, Value};

use crate::doctor::axes::{Axis, Perturbation};
use crate::doctor::runner::Plan;

/// The blob's prefix, with its format's version.
const PREFIX: &str = "pd1:";
/// The payload's version.
const VERSION: u64 = 1;

/// What a repro blob says.
#[derive(Clone, Debug, PartialEq)]
pub struct Repro {
    /// The package and target (`cargo test` arguments that select the binary).
    pub select: Vec<String>,
    /// The test that fails.
    pub test: String,
    pub axis: Axis,
    /// The run that makes it fail.
    pub plan: Plan,
}

impl Repro {
    /// The blob.
    pub fn encode(&self) -> String {
        let payload = json!({
            "v": VERSION,
            "select": self.select,
            "test": self.test,
            "axis": self.axis.name(),
            "tests": self.plan.tests,
            "threads": self.plan.threads,
            "perturbation": self.plan.perturbation.to_json(),
        });
        format!("{PREFIX}{}", base64url(payload.to_string().as_bytes()))
    }

    /// The repro of `blob`, or why it is not one.
    pub fn decode(blob: &str) -> Result<Repro, String> {
        let Some(body) = blob.strip_prefix(PREFIX) else {
            return Err(match blob.split_once(':') {
                Some((prefix, _)) if prefix.starts_with("pd") => format!(
                    "a repro blob of format `{prefix}`, newer than this probtest reads (pd1)"
                ),
                _ => "not a repro blob (it starts with `pd1:`)".to_string(),
            });
        };
        let bytes = unbase64url(body).ok_or("the blob is not base64url")?;
        let payload: Value =
            serde_json::from_slice(&bytes).map_err(|_| "the blob's payload is not JSON")?;
        let object = payload
            .as_object()
            .ok_or("the blob's payload is not an object")?;
        const FIELDS: [&str; 7] = [
            "v",
            "select",
            "test",
            "axis",
            "tests",
            "threads",
            "perturbation",
        ];
        if let Some(key) = object.keys().find(|key| !FIELDS.contains(&key.as_str())) {
            return Err(format!("the blob has an unknown field `{key}`"));
        }
        match object.get("v").and_then(Value::as_u64) {
            Some(VERSION) => {}
            Some(version) => {
                return Err(format!(
                    "the blob is of version {version}, newer than this probtest reads ({VERSION})"
                ))
            }
            None => return Err("the blob has no version".into()),
        }
        let strings = |key: &str| -> Result<Vec<String>, String> {
            object
                .get(key)
                .and_then(Value::as_array)
                .ok_or(format!("the blob has no `{key}`"))?
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_string)
                        .ok_or(format!("the blob's `{key}` holds a non-string"))
                })
                .collect()
        };
        let test = object
            .get("test")
            .and_then(Value::as_str)
            .ok_or("the blob names no test")?
            .to_string();
        let axis = Axis::parse(
            object
                .get("axis")
                .and_then(Value::as_str)
                .ok_or("the blob names no axis")?,
        )?;
        let tests = strings("tests")?;
        if !tests.contains(&test) {
            return Err("the blob's run does not run its test".into());
        }
        let threads = match object.get("threads") {
            None | Some(Value::Null) => None,
            Some(threads) => Some(
                threads
                    .as_u64()
                    .filter(|threads| (1..=1024).contains(threads))
                    .ok_or("the blob's thread count is not a number from 1 to 1024")?
                    as usize,
            ),
        };
        let perturbation = Perturbation::from_json(
            object
                .get("perturbation")
                .ok_or("the blob has no perturbation")?,
        )?;
        Ok(Repro {
            select: strings("select")?,
            test,
            axis,
            plan: Plan {
                tests,
                threads,
                perturbation,
            },
        })
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// `bytes` in base64url without padding: a blob pastes into a shell without quotes.
fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let word = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for index in 0..=chunk.len() {
            out.push(char::from(
                ALPHABET[(word >> (18 - 6 * index) & 63) as usize],
            ));
        }
    }
    out
}

/// The bytes of a base64url text without padding; `None` for anything else.
fn unbase64url(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        let mut word = 0u32;
        for (index, byte) in chunk.iter().enumerate() {
            let value = ALPHABET.iter().position(|c| c == byte)? as u32;
            word |= value << (18 - 6 * index);
        }
        out.extend_from_slice(&word.to_be_bytes()[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::axes::Clock;

    fn sample() -> Repro {
        Repro {
            select: vec![
                "-p".into(),
                "pt-doctor".into(),
                "--test".into(),
                "order".into(),
            ],
            test: "b_order_victim".into(),
            axis: Axis::Order,
            plan: Plan {
                tests: vec!["a_polluter".into(), "b_order_victim".into()],
                threads: Some(1),
                perturbation: Perturbation {
                    clock: Some(Clock {
                        at: 1.5,
                        frozen: false,
                    }),
                    tz: Some("Europe/Berlin".into()),
                    ..Perturbation::default()
                },
            },
        }
    }

    #[test]
    fn blobs_round_trip() {
        let repro = sample();
        let blob = repro.encode();
        assert!(blob.starts_with("pd1:"));
        assert!(blob[4..].bytes().all(|b| ALPHABET.contains(&b)), "{blob}");
        assert_eq!(Repro::decode(&blob), Ok(repro));
        for length in 0..8 {
            let bytes: Vec<u8> = (0..length).map(|i| (i * 37 + 5) as u8).collect();
            assert_eq!(unbase64url(&base64url(&bytes)), Some(bytes));
        }
    }

    #[test]
    fn bad_blobs_fail_loudly() {
        let with = |payload: Value| format!("pd1:{}", base64url(payload.to_string().as_bytes()));
        let good: Value =
            serde_json::from_slice(&unbase64url(&sample().encode()[4..]).expect("base64"))
                .expect("json");
        let changed = |key: &str, value: Value| {
            let mut payload = good.clone();
            payload[key] = value;
            with(payload)
        };
        for (blob, error) in [
            ("garbage".to_string(), "not a repro blob"),
            ("pd2:AAAA".to_string(), "newer than this probtest reads"),
            ("pd1:!!!!".to_string(), "not base64url"),
            ("pd1:e30".to_string(), "no version"),
            (changed("v", json!(2)), "version 2, newer"),
            (changed("axis", json!("weather")), "unknown axis `weather`"),
            (changed("extra", json!(1)), "unknown field `extra`"),
            (
                changed("tests", json!(["a_polluter"])),
                "does not run its test",
            ),
            (changed("threads", json!(0)), "thread count"),
            (
                changed("perturbation", json!({"seed": "x"})),
                "seed is not a whole number",
            ),
        ] {
            let decoded = Repro::decode(&blob);
            assert!(
                decoded.as_ref().is_err_and(|e| e.contains(error)),
                "{blob}: {decoded:?}"
            );
        }
    }
}
