//! `probtest::cached`: record a call's value (and the usage and cost it recorded) into the
//! cassette, or replay it without the call. `PROB_CACHE=record|replay|off` (config `cache`),
//! `off` by default. Re-running a suite to check a report format or a statistics change, or
//! running provider evals offline in CI, then costs nothing: replayed cost is shown apart, as
//! money that was not spent.

use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;
use serde::Serialize;

// What `cached` does: the value of `PROB_CACHE`, as the table reads it.
use probtest_settings::{Cache as Mode, CACHE};

use crate::harness::accounting::{check_amount, RecordError, RunHandle};
use crate::harness::context::{self, capture::capturing, RunState};
use crate::harness::{recorder, registry};
use crate::store::cache::{self as cassette, CacheEntry, Place};

/// `PROB_CACHE`, else the config's `cache`, else off; read once per process.
fn mode() -> &'static Result<Mode, String> {
    static MODE: OnceLock<Result<Mode, String>> = OnceLock::new();
    MODE.get_or_init(|| {
        let env = |name: &str| std::env::var(name).ok();
        // A test binary is one crate: one config, which every bench carries.
        let entries = registry::BENCHES
            .iter()
            .next()
            .map_or(&[][..], |bench| bench.config.entries);
        Ok(CACHE.resolve(&env, entries)?.unwrap_or(Mode::Off))
    })
}

/// Why `PROB_CACHE` (or the config's `cache`) is refused, if it is.
pub(crate) fn setting_problem() -> Option<&'static str> {
    mode().as_ref().err().map(String::as_str)
}

/// The value of `call`, recorded or replayed as `PROB_CACHE` says.
///
/// - `off` (the default): calls `call`.
/// - `record`: calls `call` and stores its value, with the usage and cost the call recorded
///   on this thread ([`record_usage`](crate::record_usage()), [`record_cost`](crate::record_cost);
///   calls of one run made at once on several threads keep theirs apart), under
///   `target/probtest/cache/` (or `PROB_CACHE_DIR`), keyed by the run's case, its run number and `key`.
/// - `replay`: returns the stored value without calling, and records the stored usage and cost
///   again, marked as replayed in the report (replayed cost is shown apart from money spent).
///
/// ```no_run
/// # #[derive(serde::Serialize, serde::Deserialize)] struct Answer { label: String }
/// # fn ask_the_model(_: &str) -> Answer { Answer { label: String::new() } }
/// #[probtest::probability(runs = 10)]
/// fn bench_triage() {
///     let answer = probtest::cached("answer", || ask_the_model("refund please"));
///     assert_eq!(answer.label, "refund");
/// }
/// ```
///
/// # Panics
///
/// When replaying a key that was not recorded for this run (an error of the run, naming the
/// key); when recording or replaying outside a `#[probability]` run; when `PROB_CACHE` is not
/// one of its values; when the key (or the run's case id) is too long for a file name (its
/// length and the limit); when the cassette cannot be read or written, its entry is not a
/// regular file (a FIFO, a symlink to a device), or it holds a negative cost, which
/// `record_cost` would refuse (naming the file).
#[track_caller]
pub fn cached<T, F>(key: &str, call: F) -> T
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> T,
{
    cached_in(context::current(), key, call)
}

impl RunHandle {
    /// [`cached`] for this handle's run, from a thread or task the run spawned.
    ///
    /// # Panics
    ///
    /// As [`cached`] does.
    #[track_caller]
    pub fn cached<T, F>(&self, key: &str, call: F) -> T
    where
        T: Serialize + DeserializeOwned,
        F: FnOnce() -> T,
    {
        cached_in(Some(self.state().clone()), key, call)
    }
}

#[track_caller]
fn cached_in<T, F>(state: Option<Arc<RunState>>, key: &str, call: F) -> T
where
    T: Serialize + DeserializeOwned,
    F: FnOnce() -> T,
{
    let mode = match mode() {
        Ok(mode) => *mode,
        Err(why) => panic!("{why}"),
    };
    if mode == Mode::Off {
        return call();
    }
    let Some(state) = state else {
        panic!("probtest::cached(\"{key}\"): PROB_CACHE is set, and this is called outside a #[probability] run");
    };
    let Some((case, run)) = state.origin() else {
        panic!("probtest::cached(\"{key}\"): the run's case is unknown");
    };
    let dir = match cassette_dir() {
        Ok(dir) => dir,
        Err(error) => panic!("probtest::cached(\"{key}\"): {error}"),
    };
    let place = Place {
        package: case.bench.package(),
        module: case.bench.module(),
        case: case.row_id,
        run,
    };
    let path = match cassette::entry_path(&dir, &place, key) {
        Ok(path) => path,
        Err(too_long) => panic!("probtest::cached(\"{}\"): {too_long}", shown_key(key)),
    };
    match mode {
        Mode::Off => call(),
        Mode::Record => {
            let (value, (usage, cost)) = capturing(call);
            let stored = serde_json::to_value(&value).unwrap_or_else(|error| {
                panic!("probtest::cached(\"{key}\"): the value cannot be stored: {error}")
            });
            let entry = CacheEntry {
                key: key.to_string(),
                value: stored,
                usage,
                cost,
            };
            if let Err(error) = cassette::write(&path, &entry) {
                panic!("probtest::cached(\"{key}\"): {error}");
            }
            value
        }
        Mode::Replay => {
            let entry = match cassette::read(&path, key) {
                Ok(Some(entry)) => entry,
                Ok(None) => panic!(
                    "probtest::cached: nothing recorded under the key `{key}` for {} run {run}: no {} (PROB_CACHE=replay; record it with PROB_CACHE=record)",
                    case.row_id,
                    path.display()
                ),
                Err(error) => panic!("probtest::cached(\"{key}\"): {error}"),
            };
            // A file edited by hand may hold what `record_cost` and `record_usage` refuse.
            let costs = std::iter::once(("record_cost", entry.cost))
                .chain(entry.usage.iter().map(|usage| ("record_usage", usage.cost)));
            for (what, amount) in costs {
                if let Err(refused) = check_amount(what, amount) {
                    panic!("probtest::cached(\"{key}\"): {}: {refused}", path.display());
                }
            }
            let value = serde_json::from_value(entry.value).unwrap_or_else(|error| {
                panic!(
                    "probtest::cached(\"{key}\"): the recorded value in {} does not read as this type: {error}",
                    path.display()
                )
            });
            if let Err(finished) = state.add_replayed(entry.usage, entry.cost) {
                panic!(
                    "probtest::cached(\"{key}\"): {}",
                    RecordError::from(finished)
                );
            }
            value
        }
    }
}

/// The cassette's directory: `PROB_CACHE_DIR` when set and not empty, else
/// `<target>/probtest/cache`.
fn cassette_dir() -> std::io::Result<std::path::PathBuf> {
    match std::env::var_os(probtest_settings::CACHE_DIR.variable) {
        Some(dir) if !dir.is_empty() => Ok(dir.into()),
        _ => recorder::target_dir().map(|target| cassette::cache_dir(&target)),
    }
}

/// A key as a message shows it: whole, unless it is too long to read in one line.
fn shown_key(key: &str) -> String {
    const SHOWN: usize = 40;
    if key.chars().count() <= SHOWN {
        return key.to_string();
    }
    let start: String = key.chars().take(SHOWN).collect();
    format!("{start}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_mode(source: &str, text: &str) -> Result<Mode, String> {
        CACHE.parse_from(source, text)
    }

    #[test]
    fn modes_read_and_a_bad_one_names_its_source() {
        assert_eq!(parse_mode("PROB_CACHE", "Replay"), Ok(Mode::Replay));
        assert_eq!(parse_mode("PROB_CACHE", "record"), Ok(Mode::Record));
        assert_eq!(parse_mode("PROB_CACHE", "off"), Ok(Mode::Off));
        assert_eq!(
            parse_mode("PROB_CACHE", "tape"),
            Err("PROB_CACHE: expected record, replay or off, got `tape`".to_string())
        );
    }
}
