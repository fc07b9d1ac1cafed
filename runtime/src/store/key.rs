//! The session key: which session this process belongs to, and the name its directory gets.
//!
//! Layer: store.

use std::fs;
use std::time::{SystemTime, UNIX_EPOCH};

/// The file name of a session key: anything but letters, digits, `.`, `_` and `-` becomes `_`.
pub fn sanitize_key(key: &str) -> String {
    let mut cleaned = String::with_capacity(key.len());
    // Every nextest process cleans its session key: char by char, without iterator adapters,
    // which cost several calls a character in unoptimized test builds.
    for c in key.chars() {
        let kept = c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-';
        cleaned.push(if kept { c } else { '_' });
    }
    if cleaned.starts_with('.') {
        cleaned = cleaned.trim_start_matches('.').to_string();
    }
    cleaned
}

/// The key of the session this process belongs to.
///
/// `PROB_SESSION` when set; else nextest's `NEXTEST_RUN_ID` (shared by every process of one
/// `cargo nextest run`); else, when cargo started this process, the cargo process's id and
/// start time (shared by every test binary of one `cargo test`, different for the next one);
/// else this process alone.
///
/// A `PROB_SESSION` that cleans to an empty name (`..`, `.`, `...`) is refused with a one-line
/// message naming the variable and its value: the session would be the sessions directory
/// itself. One that is a path (`a/../b`, `/tmp/x`) is cleaned to a name (`a_.._b`, `_tmp_x`).
pub(crate) fn session_key(env: &impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let variable = probtest_settings::SESSION.variable;
    if let Some(key) = set(variable) {
        return usable_key(variable, &key);
    }
    if let Some(run_id) = set("NEXTEST_RUN_ID") {
        return Ok(sanitize_key(&format!("nextest-{run_id}")));
    }
    let pid = std::process::id();
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        if process_name(parent).is_some_and(|name| name.starts_with("cargo")) {
            if let Some(start) = process_start(parent) {
                return Ok(format!("cargo-{parent}-{start}"));
            }
        }
    }
    Ok(match process_start(pid) {
        Some(start) => format!("process-{pid}-{start}"),
        None => format!("process-{pid}-{}", now_nanos()),
    })
}

/// `key` cleaned into a directory name, or why it cannot be one; `source` names where the key
/// came from, for the message.
fn usable_key(source: &str, key: &str) -> Result<String, String> {
    let cleaned = sanitize_key(key);
    if cleaned.is_empty() {
        return Err(format!(
            "{source}={key:?} is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"
        ));
    }
    Ok(cleaned)
}

/// The short name of a process, where the platform tells it.
#[cfg_attr(not(unix), allow(dead_code))]
fn process_name(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|name| name.trim().to_string())
}

/// When a process started, in clock ticks since boot (`/proc/<pid>/stat`, field 22): with the
/// pid, it names one process even after the pid is reused.
fn process_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after it are plain.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Now, in nanoseconds since the Unix epoch: when a session started, or a process joined it.
pub(super) fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn keys_come_from_the_override_then_nextest() {
        assert_eq!(
            session_key(&env_of(&[
                ("PROB_SESSION", "ci/shard 1"),
                ("NEXTEST_RUN_ID", "x")
            ])),
            Ok("ci_shard_1".to_string())
        );
        assert_eq!(
            session_key(&env_of(&[("NEXTEST_RUN_ID", "0b5c-11")])),
            Ok("nextest-0b5c-11".to_string())
        );
        let own = session_key(&env_of(&[])).expect("a key of its own");
        assert!(
            own.starts_with("cargo-") || own.starts_with("process-"),
            "{own}"
        );
        // The same process derives the same key every time.
        assert_eq!(Ok(own), session_key(&env_of(&[])));
    }

    #[test]
    fn keys_that_clean_to_nothing_are_refused() {
        for bad in ["..", ".", "...", "....."] {
            let refused = session_key(&env_of(&[("PROB_SESSION", bad)]));
            assert_eq!(
                refused,
                Err(format!(
                    "PROB_SESSION={bad:?} is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"
                ))
            );
        }
        assert_eq!(
            session_key(&env_of(&[("PROB_SESSION", "..")])).unwrap_err(),
            r#"PROB_SESSION=".." is not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"#
        );
    }

    #[test]
    fn keys_that_are_paths_become_one_name() {
        for (path, name) in [
            ("a/../b", "a_.._b"),
            ("/tmp/x", "_tmp_x"),
            ("../escape", "_escape"),
            ("./here", "_here"),
            ("..hidden", "hidden"),
        ] {
            assert_eq!(
                session_key(&env_of(&[("PROB_SESSION", path)])),
                Ok(name.to_string()),
                "{path}"
            );
        }
    }

    #[test]
    fn process_start_times_are_read_from_proc() {
        if Path::new("/proc/self/stat").exists() {
            assert!(process_start(std::process::id()).is_some());
        }
    }
}
