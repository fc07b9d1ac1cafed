//! The run in progress on each thread: its shared state (usage, cost, the panic that ended it),
//! the thread-local current run that recording calls and the panic hook find, and the panic
//! hook itself.
//!
//! Layer: harness.

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};

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

/// A run's shared state, made when something first needs it (a recording call, a handle, the
/// panic hook, a timeout's thread): most runs need none, and a state made and dropped at every
/// run costs more than a short run's own bookkeeping in a test binary built without
/// optimizations.
pub(crate) struct RunCell {
    origin: Option<(&'static Case, u32)>,
    state: OnceLock<Arc<RunState>>,
}

impl RunCell {
    /// The cell of run `run` of `case`, as it starts: no state yet.
    pub(super) fn of_run(case: &'static Case, run: u32) -> RunCell {
        RunCell {
            origin: Some((case, run)),
            state: OnceLock::new(),
        }
    }

    /// A cell holding `state`, made already: for another thread of the same run.
    pub(super) fn holding(state: Arc<RunState>) -> RunCell {
        RunCell {
            origin: state.origin,
            state: OnceLock::from(state),
        }
    }

    /// The run's state, made now if nothing made it yet.
    pub(super) fn state(&self) -> &Arc<RunState> {
        self.state.get_or_init(|| {
            Arc::new(RunState {
                origin: self.origin,
                ..RunState::default()
            })
        })
    }

    /// The run's state, if anything made it.
    pub(super) fn made(&self) -> Option<&Arc<RunState>> {
        self.state.get()
    }
}

impl RunState {
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
    /// The run of this thread, while [`with_current`] runs it: a pointer to the cell that
    /// `with_current` borrows. A plain pointer so that a thread (libtest starts one per test)
    /// registers no destructor for it.
    static CURRENT: Cell<*const RunCell> = const { Cell::new(std::ptr::null()) };
    /// Set by probtest's assertion macros just before they panic.
    static ASSERTING: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn current() -> Option<Arc<RunState>> {
    let pointer = CURRENT.try_with(Cell::get).ok()?;
    // SAFETY: a non-null pointer was set by `with_current` from a cell it borrows until it
    // restores the previous value, on this thread: the cell is alive.
    #[allow(unsafe_code)]
    let cell = unsafe { pointer.as_ref() }?;
    Some(cell.state().clone())
}

/// Makes the run of `cell` the current run of this thread while `f` runs.
pub(super) fn with_current<T>(cell: &RunCell, f: impl FnOnce() -> T) -> T {
    struct Restore(*const RunCell);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = CURRENT.try_with(|current| current.set(self.0));
        }
    }
    let _ = ASSERTING.try_with(|flag| flag.set(false));
    let previous = CURRENT.with(|current| current.replace(std::ptr::from_ref(cell)));
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
    fn a_run_that_asks_for_nothing_makes_no_state() {
        let cell = RunCell {
            origin: None,
            state: OnceLock::new(),
        };
        with_current(&cell, || ());
        assert!(cell.made().is_none());
        // Asked for, it is made once, and the handle shares it.
        let handle = with_current(&cell, || current().expect("a run is current"));
        handle.add_cost(1.5).expect("the run is in progress");
        assert!(Arc::ptr_eq(&handle, cell.made().expect("made")));
        assert_eq!(cell.state().lock().cost, 1.5);
        assert!(current().is_none(), "no run is current after it");
    }

    #[test]
    fn a_cell_holding_a_state_shares_it() {
        let state = Arc::new(RunState::default());
        let cell = RunCell::holding(state.clone());
        let seen = with_current(&cell, || current().expect("a run is current"));
        assert!(Arc::ptr_eq(&seen, &state));
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
