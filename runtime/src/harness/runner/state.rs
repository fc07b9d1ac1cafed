//! The run in progress on each thread: its shared state (usage, cost, the panic that ended it),
//! the thread-local current run that recording calls and the panic hook find, and the panic
//! hook itself.
//!
//! Layer: harness.

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard, Once};

use crate::harness::recording::RecordError;
use crate::harness::registry::Case;
use crate::types::usage::TokenUsage;

/// The state of one run in progress, shared with handles given to spawned threads.
#[derive(Default)]
pub(crate) struct RunState {
    data: Mutex<RunData>,
    /// What the run waited for limits (`harness::limits`); apart from `data`, which the panic
    /// hook locks, since a timeout's watcher reads it while the body runs.
    pub(crate) waits: Mutex<crate::harness::limits::Waits>,
    /// The run's case and number, for the cassette (`harness::cache`).
    pub(crate) origin: Option<(&'static Case, u32)>,
}

#[derive(Default)]
pub(super) struct RunData {
    pub(super) finished: bool,
    pub(super) usage: Vec<TokenUsage>,
    pub(super) cost: f64,
    /// The cost replayed from the cassette (`harness::cache`), part of `cost` and `usage`'s;
    /// `Some` once anything was replayed.
    pub(super) replayed: Option<f64>,
    pub(super) panic: Option<PanicNote>,
}

/// What the panic hook saw of the panic that ended a run.
pub(super) struct PanicNote {
    pub(super) message: String,
    pub(super) location: Option<String>,
    pub(super) assertion: bool,
    /// The user's frames, with `PROB_BACKTRACE` (`harness::frames`).
    pub(super) frames: Option<String>,
}

/// States of finished runs that nothing holds any more, for later runs to take up. libtest
/// starts a thread per test, so a state allocated and freed by each run costs the thread the
/// allocator's set-up and the state's drop glue, several microseconds in a test binary built
/// without optimizations; a spare state costs a lock.
static SPARE: Mutex<Vec<Arc<RunState>>> = Mutex::new(Vec::new());

/// At most this many spare states are kept: one per test thread is enough.
const SPARE_LIMIT: usize = 64;

impl RunState {
    /// The state of run `run` of `case`, as it starts: a spare one when there is one.
    pub(super) fn of_run(case: &'static Case, run: u32) -> Arc<RunState> {
        let spare = SPARE
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .pop();
        if let Some(mut state) = spare {
            if let Some(fresh) = Arc::get_mut(&mut state) {
                fresh.origin = Some((case, run));
                return state;
            }
        }
        Arc::new(RunState {
            origin: Some((case, run)),
            ..RunState::default()
        })
    }

    /// Keeps the state of a finished run for a later one, unless anything else still holds it
    /// (a handle the run gave out, a timed-out body's thread), whose records must keep
    /// failing with [`RecordError::RunFinished`].
    pub(super) fn recycle(mut state: Arc<RunState>) {
        let Some(owned) = Arc::get_mut(&mut state) else {
            return;
        };
        // Field by field (a new field fails to compile here until it is reset), keeping the
        // vectors' room: assigning a fresh value would run the drop glue that keeping the state
        // avoids.
        let RunState {
            data,
            waits,
            origin,
        } = owned;
        let RunData {
            finished,
            usage,
            cost,
            replayed,
            panic,
        } = data.get_mut().unwrap_or_else(|poison| poison.into_inner());
        *finished = false;
        usage.clear();
        *cost = 0.0;
        *replayed = None;
        if panic.is_some() {
            *panic = None;
        }
        let crate::harness::limits::Waits { since, by_key } =
            waits.get_mut().unwrap_or_else(|poison| poison.into_inner());
        *since = None;
        by_key.clear();
        *origin = None;
        let mut spare = SPARE.lock().unwrap_or_else(|poison| poison.into_inner());
        if spare.len() < SPARE_LIMIT {
            spare.push(state);
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, RunData> {
        self.data
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    pub(crate) fn add_usage(&self, usage: TokenUsage) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        crate::harness::cache::note_usage(&usage);
        data.usage.push(usage);
        Ok(())
    }

    /// Adds usage and cost replayed from the cassette, noted as replayed.
    pub(crate) fn add_replayed(
        &self,
        usage: Vec<TokenUsage>,
        cost: f64,
    ) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        let replayed = usage.iter().fold(cost, |sum, entry| sum + entry.cost);
        data.usage.extend(usage);
        data.cost = crate::types::sum::saturating_add(data.cost, cost);
        let total = data.replayed.unwrap_or(0.0);
        data.replayed = Some(crate::types::sum::saturating_add(total, replayed));
        Ok(())
    }

    pub(crate) fn add_cost(&self, amount: f64) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        crate::harness::cache::note_cost(amount);
        data.cost = crate::types::sum::saturating_add(data.cost, amount);
        Ok(())
    }
}

thread_local! {
    /// The run of this thread, while [`with_current`] runs it: a pointer into the `Arc` that
    /// `with_current` borrows. A plain pointer rather than an `Arc` so that a thread (libtest
    /// starts one per test) registers no destructor for it and sets it without counting.
    static CURRENT: Cell<*const RunState> = const { Cell::new(std::ptr::null()) };
    /// Set by probtest's assertion macros just before they panic.
    static ASSERTING: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn current() -> Option<Arc<RunState>> {
    let pointer = CURRENT.try_with(Cell::get).ok()?;
    if pointer.is_null() {
        return None;
    }
    // SAFETY: a non-null pointer was set by `with_current` from an `Arc` it borrows until it
    // restores the previous value, so the allocation is alive with a strong count of at least
    // one; counting one more makes the `Arc` built here an owner of its own.
    #[allow(unsafe_code)]
    unsafe {
        Arc::increment_strong_count(pointer);
        Some(Arc::from_raw(pointer))
    }
}

/// Makes `state` the current run of this thread while `f` runs.
pub(super) fn with_current<T>(state: &Arc<RunState>, f: impl FnOnce() -> T) -> T {
    struct Restore(*const RunState);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = CURRENT.try_with(|current| current.set(self.0));
        }
    }
    let _ = ASSERTING.try_with(|flag| flag.set(false));
    let previous = CURRENT.with(|current| current.replace(Arc::as_ptr(state)));
    let _restore = Restore(previous);
    f()
}

/// Marks the panic about to happen on this thread as a failed assertion.
pub(crate) fn mark_assertion() {
    let _ = ASSERTING.try_with(|flag| flag.set(true));
}

/// Installs the panic hook that notes each run's panic message and location, then defers to
/// the hook that was there before (so libtest still prints the panic as usual).
pub(super) fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let assertion = ASSERTING
                .try_with(|flag| flag.replace(false))
                .unwrap_or(false);
            if let Some(state) = current() {
                let message = panic_message(info.payload());
                let location = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let frames = crate::harness::frames::capture();
                state.lock().panic = Some(PanicNote {
                    assertion: assertion || is_std_assertion(&message),
                    message,
                    location,
                    frames,
                });
            }
            previous(info);
        }));
    });
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "the panic payload is not a string".to_string()
    }
}

/// Whether a panic message is one of std's assertion messages (raised from a helper function,
/// outside the bench body's own assertion macros), or pretty_assertions'.
pub(super) fn is_std_assertion(message: &str) -> bool {
    message.starts_with("assertion failed: ") || message.starts_with("assertion `left ")
}

pub(super) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_run_held_elsewhere_keeps_refusing_records() {
        // A handle the run gave out outlives it: its state is not taken up by a later run.
        let state = Arc::new(RunState::default());
        state.add_cost(1.0).expect("the run is in progress");
        state.lock().finished = true;
        let handle = state.clone();
        RunState::recycle(state);
        assert!(matches!(
            handle.add_cost(1.0),
            Err(RecordError::RunFinished)
        ));
        assert_eq!(handle.lock().cost, 1.0);
    }

    #[test]
    fn a_recycled_state_starts_empty() {
        let state = Arc::new(RunState::default());
        state
            .add_usage(TokenUsage {
                model: "m".into(),
                input_tokens: 1,
                output_tokens: 2,
                cached_input_tokens: 0,
                cost: 0.5,
            })
            .expect("the run is in progress");
        {
            let mut data = state.lock();
            data.finished = true;
            data.cost = 2.0;
            data.replayed = Some(1.0);
            data.panic = Some(PanicNote {
                message: "boom".into(),
                location: None,
                assertion: false,
                frames: None,
            });
        }
        state
            .waits
            .lock()
            .expect("waits")
            .by_key
            .push(("key".into(), std::time::Duration::from_secs(1)));
        RunState::recycle(state);
        // Whatever spare a concurrent test left, every spare must be clean.
        let spares: Vec<Arc<RunState>> = std::mem::take(&mut *SPARE.lock().expect("spares"));
        assert!(!spares.is_empty());
        for spare in &spares {
            let data = spare.lock();
            assert!(!data.finished && data.usage.is_empty() && data.cost == 0.0);
            assert!(data.replayed.is_none() && data.panic.is_none());
            let waits = spare.waits.lock().expect("waits");
            assert!(waits.since.is_none() && waits.by_key.is_empty());
            assert!(spare.origin.is_none());
        }
    }

    #[test]
    fn std_assertion_messages_are_recognised() {
        assert!(is_std_assertion("assertion failed: x > 1"));
        assert!(is_std_assertion(
            "assertion `left == right` failed\n  left: 1\n right: 2"
        ));
        assert!(is_std_assertion("assertion `left != right` failed: custom"));
        assert!(!is_std_assertion(
            "called `Option::unwrap()` on a `None` value"
        ));
        assert!(!is_std_assertion("index out of bounds"));
    }
}
