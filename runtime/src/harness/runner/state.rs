//! The run in progress on each thread: its shared state (usage, cost, the panic that ended it),
//! the thread-local current run that recording calls and the panic hook find, and the panic
//! hook itself.
//!
//! Layer: harness.

use std::any::Any;
use std::cell::{Cell, RefCell};
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

impl RunState {
    /// The state of run `run` of `case`, as it starts.
    pub(super) fn of_run(case: &'static Case, run: u32) -> RunState {
        RunState {
            origin: Some((case, run)),
            ..RunState::default()
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
    static CURRENT: RefCell<Option<Arc<RunState>>> = const { RefCell::new(None) };
    /// Set by probtest's assertion macros just before they panic.
    static ASSERTING: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn current() -> Option<Arc<RunState>> {
    CURRENT
        .try_with(|current| current.borrow().clone())
        .ok()
        .flatten()
}

/// Makes `state` the current run of this thread while `f` runs.
pub(super) fn with_current<T>(state: &Arc<RunState>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Arc<RunState>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            let _ = CURRENT.try_with(|current| *current.borrow_mut() = previous);
        }
    }
    let _ = ASSERTING.try_with(|flag| flag.set(false));
    let previous = CURRENT.with(|current| current.borrow_mut().replace(state.clone()));
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
