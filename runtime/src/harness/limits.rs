//! `probtest::limit`: a guard that holds one of a key's slots, so that at most `N` calls to a
//! rate-limited service are in flight across every process of the session, and starts are
//! spread to at most `M` a minute. The slots are files of the session's store
//! (`store::limits`); the time spent waiting for them is the run's, not its latency.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use probtest_settings::{limit_variable, LIMIT};

use crate::harness::{context, recorder, registry, settings};
use crate::store::limits::{self as slots, SlotLock};

/// A key's limits, as resolved from the environment, then the config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Limit {
    /// How many guards may be held at once; `None`: as many as are asked for.
    pub(crate) concurrency: Option<u32>,
    /// How many guards may be taken a minute; `None`: no limit.
    pub(crate) per_minute: Option<u32>,
}

/// A held slot of a limit, from [`limit`]. While it lives, it counts against the key's
/// concurrency in every process of the session; dropping it frees the slot. A process that
/// dies frees its slots too, however it dies.
#[must_use = "the limit is held only while the guard lives"]
#[derive(Debug)]
pub struct LimitGuard {
    key: String,
    _slot: Option<SlotLock>,
}

impl LimitGuard {
    /// The key the guard holds a slot of.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Waits until a slot of the limit `key` is free, then holds it until the guard is dropped.
///
/// `N` guards of one key may be held at once across every process of the session (every test
/// binary of a `cargo test`, every process of a `cargo nextest run`, every thread): `N` from
/// `PROB_LIMIT_<KEY>` or the config's `[package.metadata.probtest.limits] <key> = {
/// concurrency = N, per_minute = M }`. With a per-minute limit (`PROB_LIMIT_<KEY>_PER_MINUTE`,
/// `per_minute`), guards are handed out at most `M` a minute, evenly spaced. A key with no
/// limit set is not limited. Time spent waiting is recorded with the run, apart from its time.
///
/// ```no_run
/// # fn call_the_model() {}
/// #[probtest::probability(runs = 10)]
/// fn bench_answer() {
///     let _slot = probtest::limit("openai");
///     call_the_model();
/// }
/// ```
///
/// # Panics
///
/// When the limit's setting is not a whole number at least 1 (naming the variable and the
/// value), or the session's store cannot hold the lock files (naming the file).
#[track_caller]
pub fn limit(key: &str) -> LimitGuard {
    match try_limit(key) {
        Ok(guard) => guard,
        Err(why) => panic!("{why}"),
    }
}

/// Like [`limit`], returning the problem instead of panicking.
pub fn try_limit(key: &str) -> Result<LimitGuard, String> {
    let limit = resolved(key)?;
    let file_key = crate::store::sanitize_key(key);
    if limit.concurrency.is_none() && limit.per_minute.is_none() {
        return Ok(LimitGuard {
            key: key.to_string(),
            _slot: None,
        });
    }
    let dir = slots::limits_dir(&session_dir()?);
    let state = context::current();
    let began = Instant::now();
    if let Some(state) = &state {
        state.begin_wait(began);
    }
    let taken = take(&dir, &file_key, limit);
    let waited = began.elapsed();
    if let Some(state) = &state {
        state.end_wait(key, waited);
    }
    Ok(LimitGuard {
        key: key.to_string(),
        _slot: taken?,
    })
}

fn take(dir: &std::path::Path, key: &str, limit: Limit) -> Result<Option<SlotLock>, String> {
    // The slot first, then the start: a start reserved while waiting for a slot would be
    // spent by the time the slot comes, bunching the starts the limit spreads.
    let slot = match limit.concurrency {
        Some(concurrency) => {
            Some(slots::acquire_slot(dir, key, concurrency).map_err(|error| error.to_string())?)
        }
        None => None,
    };
    if let Some(per_minute) = limit.per_minute {
        let wait = slots::reserve_start(dir, key, per_minute).map_err(|error| error.to_string())?;
        std::thread::sleep(wait);
    }
    Ok(slot)
}

/// The session directory the limit files live in: this process's session.
fn session_dir() -> Result<std::path::PathBuf, String> {
    static DIR: OnceLock<Result<std::path::PathBuf, String>> = OnceLock::new();
    DIR.get_or_init(|| {
        let session = match settings::peek() {
            Some(settings) => {
                let target = recorder::target_dir().map_err(|error| error.to_string())?;
                crate::store::Session::new(
                    &crate::store::sessions_dir(&target),
                    &settings.session_key,
                )
            }
            None => recorder::session_of_process()?,
        };
        Ok(session.dir().to_path_buf())
    })
    .clone()
}

/// The limit of `key`, resolved once per process.
fn resolved(key: &str) -> Result<Limit, String> {
    static LIMITS: Mutex<BTreeMap<String, Result<Limit, String>>> = Mutex::new(BTreeMap::new());
    let mut limits = LIMITS.lock().unwrap_or_else(|poison| poison.into_inner());
    limits
        .entry(key.to_string())
        .or_insert_with(|| {
            let config = registry::BENCHES
                .iter()
                .next()
                .zip(LIMIT.key)
                .and_then(|(bench, limits)| config_entry(bench.config.entries, limits));
            resolve(key, config, |name| std::env::var(name).ok())
        })
        .clone()
}

fn config_entry(entries: &'static [(&str, &'static str)], key: &str) -> Option<&'static str> {
    entries
        .iter()
        .find(|(name, _)| *name == key)
        .map(|(_, value)| *value)
}

/// `key`'s limit: each of its two numbers from its variable, else the config's `limits` text
/// (`openai=4/60,local=2/`, as the attribute hands it over), else none.
pub(crate) fn resolve(
    key: &str,
    config: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Limit, String> {
    let concurrency_variable = limit_variable(key);
    let per_minute_variable = format!("{concurrency_variable}_PER_MINUTE");
    let from_config = config
        .into_iter()
        .flat_map(|text| text.split(','))
        .filter_map(|part| part.split_once('='))
        .find(|(name, _)| *name == key)
        .map(|(_, numbers)| numbers.split_once('/').unwrap_or((numbers, "")));
    let number = |variable: &str, configured: Option<&str>| -> Result<Option<u32>, String> {
        let (text, source) = match env(variable).filter(|text| !text.trim().is_empty()) {
            Some(text) => (text, variable.to_string()),
            None => match configured.filter(|text| !text.is_empty()) {
                Some(text) => (text.to_string(), format!("config `limits.{key}`")),
                None => return Ok(None),
            },
        };
        LIMIT.parse_from(&source, &text).map(Some)
    };
    Ok(Limit {
        concurrency: number(&concurrency_variable, from_config.map(|(c, _)| c))?,
        per_minute: number(&per_minute_variable, from_config.map(|(_, p)| p))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_over_the_config_number_by_number() {
        let config = Some("openai=4/60,local=2/");
        let none = |_: &str| None;
        assert_eq!(
            resolve("openai", config, none),
            Ok(Limit {
                concurrency: Some(4),
                per_minute: Some(60)
            })
        );
        assert_eq!(
            resolve("local", config, none),
            Ok(Limit {
                concurrency: Some(2),
                per_minute: None
            })
        );
        assert_eq!(resolve("other", config, none), Ok(Limit::default()));
        let env = |name: &str| (name == "PROB_LIMIT_OPENAI").then(|| "1".to_string());
        assert_eq!(
            resolve("openai", config, env),
            Ok(Limit {
                concurrency: Some(1),
                per_minute: Some(60)
            })
        );
    }

    #[test]
    fn a_bad_limit_names_the_variable_and_value() {
        let env = |name: &str| (name == "PROB_LIMIT_OPEN_AI_PER_MINUTE").then(|| "0".to_string());
        assert_eq!(
            resolve("open-ai", None, env),
            Err(
                "PROB_LIMIT_OPEN_AI_PER_MINUTE: expected a whole number at least 1, got `0`"
                    .to_string()
            )
        );
        assert_eq!(
            resolve("x", Some("x=many/"), |_| None),
            Err("config `limits.x`: expected a whole number at least 1, got `many`".to_string())
        );
    }
}
