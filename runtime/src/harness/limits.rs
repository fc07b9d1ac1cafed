//! `probtest::limit`: a guard that holds one of a key's slots, so that at most `N` calls to a
//! rate-limited service are in flight across every process of the session, and starts are
//! spread to at most `M` a minute. The slots are files of the session's store
//! (`store::limits`); the time spent waiting for them is the run's, not its latency.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use probtest_settings::{limit_variable, LIMIT};

use crate::harness::context::{Release, RunState};
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
    slot: Option<Arc<HeldSlot>>,
}

impl LimitGuard {
    /// The key the guard holds a slot of.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl Drop for LimitGuard {
    fn drop(&mut self) {
        if let Some(slot) = &self.slot {
            slot.release();
        }
    }
}

/// A slot shared by its guard and its run, so that a run abandoned at its timeout frees the
/// slot though its body's thread, left running, still has the guard.
#[derive(Debug)]
struct HeldSlot(Mutex<Option<SlotLock>>);

impl Release for HeldSlot {
    fn release(&self) {
        // The lock file's `flock` goes with the file.
        drop(self.0.lock().unwrap_or_else(|p| p.into_inner()).take());
    }
}

/// Why a wait of an abandoned run ended: its run timed out, and whoever waits on its thread
/// must not take the limit.
fn gave_up(key: &str) -> String {
    format!("the run timed out waiting for limit `{key}`")
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
/// When `key` holds `,`, `=` or `/` or is blank; when the limit's setting is not a whole
/// number at least 1 (naming the variable and the value); when the session's store cannot
/// hold the lock files (naming the file); on the thread of a run abandoned at its timeout,
/// which must not go on to take the limit.
#[track_caller]
pub fn limit(key: &str) -> LimitGuard {
    match try_limit(key) {
        Ok(guard) => guard,
        Err(why) => panic!("{why}"),
    }
}

/// Like [`limit`], returning the problem instead of panicking.
pub fn try_limit(key: &str) -> Result<LimitGuard, String> {
    probtest_settings::check_limit_key(key).map_err(|why| format!("probtest::limit: {why}"))?;
    let limit = resolved(key)?;
    let file_key = crate::store::sanitize_key(key);
    if limit.concurrency.is_none() && limit.per_minute.is_none() {
        return Ok(LimitGuard {
            key: key.to_string(),
            slot: None,
        });
    }
    let dir = slots::limits_dir(&session_dir()?);
    let state = context::current();
    let began = Instant::now();
    if let Some(state) = &state {
        state.begin_wait(began, key);
    }
    let taken = take(&dir, key, &file_key, limit, state.as_deref());
    let waited = began.elapsed();
    if let Some(state) = &state {
        state.end_wait(key, waited);
    }
    Ok(LimitGuard {
        key: key.to_string(),
        slot: taken?,
    })
}

/// Takes a slot of `key` (named `file_key` on disk) and its start, for the run of `state`: the
/// slot is the run's as soon as it is taken, so that the run's timeout frees it, and the waits
/// end when the run is abandoned.
fn take(
    dir: &std::path::Path,
    key: &str,
    file_key: &str,
    limit: Limit,
    state: Option<&RunState>,
) -> Result<Option<Arc<HeldSlot>>, String> {
    let abandoned = || state.is_some_and(RunState::abandoned);
    // The slot first, then the start: a start reserved while waiting for a slot would be
    // spent by the time the slot comes, bunching the starts the limit spreads.
    let slot = match limit.concurrency {
        Some(concurrency) => {
            let taken = slots::acquire_slot(dir, file_key, concurrency, &abandoned)
                .map_err(|error| error.to_string())?
                .ok_or_else(|| gave_up(key))?;
            let slot = Arc::new(HeldSlot(Mutex::new(Some(taken))));
            if let Some(state) = state {
                if !state.hold(slot.clone()) {
                    return Err(gave_up(key));
                }
            }
            Some(slot)
        }
        None => None,
    };
    if let Some(per_minute) = limit.per_minute {
        if let Err(why) = pace(dir, key, file_key, per_minute, &abandoned) {
            // No guard will hold the slot: it goes now, not when the run ends.
            if let Some(slot) = &slot {
                slot.release();
            }
            return Err(why);
        }
    }
    Ok(slot)
}

/// Waits for the next start of `key` under its per-minute limit, in steps, so that a run
/// abandoned meanwhile stops waiting.
fn pace(
    dir: &std::path::Path,
    key: &str,
    file_key: &str,
    per_minute: u32,
    abandoned: &dyn Fn() -> bool,
) -> Result<(), String> {
    let wait =
        slots::reserve_start(dir, file_key, per_minute).map_err(|error| error.to_string())?;
    let until = Instant::now() + wait;
    loop {
        if abandoned() {
            return Err(gave_up(key));
        }
        let now = Instant::now();
        if now >= until {
            return Ok(());
        }
        std::thread::sleep((until - now).min(slots::MAX_POLL));
    }
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

/// Why a limit's variable among `vars` (`PROB_LIMIT_<KEY>`, `PROB_LIMIT_<KEY>_PER_MINUTE`,
/// whatever the key) is refused, if one is: read before any run, since a run would only find
/// out when its body asks for the limit. The config's limits were checked when the tests were
/// built.
pub(crate) fn setting_problem(vars: impl Iterator<Item = (String, String)>) -> Option<String> {
    let prefix = limit_variable("");
    for (name, text) in vars {
        if name.starts_with(&prefix) && !text.trim().is_empty() {
            if let Err(why) = LIMIT.parse_from(&name, &text) {
                return Some(why);
            }
        }
    }
    None
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
