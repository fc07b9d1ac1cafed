//! The run context: what is current on a thread while a run executes. Its shared state (the
//! usage and cost recorded, what it waited for limits, the panic that ended it), the
//! thread-local current run that recording calls and the panic hook find, and the flag
//! probtest's assertion macros set before they panic.
//!
//! A leaf of the harness: the features that act on a run (`recording`, `limits`, `cache`,
//! `timeout`, `frames`) and the `runner` that executes it build on it, and it imports none of
//! them (`runtime/tests/layers.rs` holds this). From the rest of the harness it takes only the
//! case a run belongs to (`registry::Case`).
//!
//! Layer: harness.

use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::harness::registry::Case;
use crate::types::usage::TokenUsage;

pub(crate) mod capture;
mod held;
mod waits;

use held::Held;
pub(crate) use held::Release;
use waits::Waits;

/// The state of one run in progress, shared with handles given to spawned threads.
#[derive(Default)]
pub(crate) struct RunState {
    data: Mutex<RunData>,
    /// What the run waited for limits; apart from `data`, which the panic hook locks, since a
    /// timeout's watcher reads it while the body runs.
    waits: Mutex<Waits>,
    /// What the run holds (its limits' slots), released when the run is abandoned.
    held: Mutex<Held>,
    /// The run's case and number.
    origin: Option<(&'static Case, u32)>,
}

#[derive(Default)]
struct RunData {
    finished: bool,
    usage: Vec<TokenUsage>,
    cost: f64,
    /// The cost replayed from the cassette, part of `cost` and `usage`'s; `Some` once anything
    /// was replayed.
    replayed: Option<f64>,
    panic: Option<PanicNote>,
}

/// What the panic hook saw of the panic that ended a run.
pub(crate) struct PanicNote {
    pub(crate) message: String,
    pub(crate) location: Option<String>,
    pub(crate) assertion: bool,
    /// The user's frames, with `PROB_BACKTRACE`.
    pub(crate) frames: Option<String>,
}

/// What a finished run spent and waited, taken from its state as it ends.
pub(crate) struct Spent {
    pub(crate) usage: Vec<TokenUsage>,
    pub(crate) cost: f64,
    /// The cost replayed from the cassette, if anything was replayed.
    pub(crate) replayed: Option<f64>,
    /// Everything the run waited for limits.
    pub(crate) waited: Duration,
    /// The limit it waited for longest.
    pub(crate) waited_for: Option<String>,
}

impl Spent {
    /// A run that made no state: a constant, so that such a run calls nothing to build it.
    pub(crate) const NOTHING: Spent = Spent {
        usage: Vec::new(),
        cost: 0.0,
        replayed: None,
        waited: Duration::ZERO,
        waited_for: None,
    };
}

/// Why something could not be added to a run: it has finished and been recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RunFinished;

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
    pub(crate) fn of_run(case: &'static Case, run: u32) -> RunCell {
        RunCell {
            origin: Some((case, run)),
            state: OnceLock::new(),
        }
    }

    /// A cell holding `state`, made already: for another thread of the same run.
    pub(crate) fn holding(state: Arc<RunState>) -> RunCell {
        RunCell {
            origin: state.origin,
            state: OnceLock::from(state),
        }
    }

    /// The run's state, made now if nothing made it yet.
    pub(crate) fn state(&self) -> &Arc<RunState> {
        self.state.get_or_init(|| {
            Arc::new(RunState {
                origin: self.origin,
                ..RunState::default()
            })
        })
    }

    /// The run's state, if anything made it.
    pub(crate) fn made(&self) -> Option<&Arc<RunState>> {
        self.state.get()
    }
}

impl RunState {
    fn lock(&self) -> MutexGuard<'_, RunData> {
        self.data
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    fn lock_waits(&self) -> MutexGuard<'_, Waits> {
        self.waits.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The run's case and number; `None` for a state made outside a run (tests).
    pub(crate) fn origin(&self) -> Option<(&'static Case, u32)> {
        self.origin
    }

    pub(crate) fn add_usage(&self, usage: TokenUsage) -> Result<(), RunFinished> {
        let mut data = self.lock();
        if data.finished {
            return Err(RunFinished);
        }
        capture::note_usage(&usage);
        data.usage.push(usage);
        Ok(())
    }

    /// Adds usage and cost replayed from the cassette, noted as replayed.
    pub(crate) fn add_replayed(
        &self,
        usage: Vec<TokenUsage>,
        cost: f64,
    ) -> Result<(), RunFinished> {
        let mut data = self.lock();
        if data.finished {
            return Err(RunFinished);
        }
        let replayed = usage.iter().fold(cost, |sum, entry| sum + entry.cost);
        data.usage.extend(usage);
        data.cost = crate::types::sum::saturating_add(data.cost, cost);
        let total = data.replayed.unwrap_or(0.0);
        data.replayed = Some(crate::types::sum::saturating_add(total, replayed));
        Ok(())
    }

    pub(crate) fn add_cost(&self, amount: f64) -> Result<(), RunFinished> {
        let mut data = self.lock();
        if data.finished {
            return Err(RunFinished);
        }
        capture::note_cost(amount);
        data.cost = crate::types::sum::saturating_add(data.cost, amount);
        Ok(())
    }

    /// Notes that the run started waiting for the limit `key` at `at`: a run that times out
    /// while it waits says what it waited for.
    pub(crate) fn begin_wait(&self, at: Instant, key: &str) {
        let mut waits = self.lock_waits();
        waits.since = Some(at);
        waits.waiting_for = Some(key.to_string());
    }

    /// The limit the run is waiting for, while it waits.
    pub(crate) fn waiting_for(&self) -> Option<String> {
        self.lock_waits().waiting_for.clone()
    }

    fn lock_held(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `item` to be released if the run is abandoned; `false`, with `item` released,
    /// when it already was (the body's thread took it after its run's timeout).
    pub(crate) fn hold(&self, item: std::sync::Arc<dyn Release>) -> bool {
        let mut held = self.lock_held();
        if held.abandoned {
            drop(held);
            item.release();
            return false;
        }
        // What was released by its owner goes: a run that takes a limit in a loop keeps one.
        held.items
            .retain(|kept| std::sync::Arc::strong_count(kept) > 1);
        held.items.push(item);
        true
    }

    /// Abandons the run, at its timeout: releases all it holds, and whatever it takes later.
    pub(crate) fn abandon(&self) {
        let items = {
            let mut held = self.lock_held();
            held.abandoned = true;
            std::mem::take(&mut held.items)
        };
        for item in items {
            item.release();
        }
    }

    /// Whether the run was abandoned: what still runs of it must stop waiting.
    pub(crate) fn abandoned(&self) -> bool {
        self.lock_held().abandoned
    }

    /// Notes that the run waited `waited` for `key`, ending the wait in progress.
    pub(crate) fn end_wait(&self, key: &str, waited: Duration) {
        self.lock_waits().add(key, waited);
    }

    /// Keeps what the panic hook (or a timeout) saw of the panic that ends the run.
    pub(crate) fn note_panic(&self, note: PanicNote) {
        self.lock().panic = Some(note);
    }

    /// What was noted of the panic that ended the run, if anything was.
    pub(crate) fn take_panic(&self) -> Option<PanicNote> {
        self.lock().panic.take()
    }

    /// Marks the run finished (later recording calls fail) and takes what it spent and waited.
    pub(crate) fn finish(&self) -> Spent {
        let (usage, cost, replayed) = {
            let mut data = self.lock();
            data.finished = true;
            (std::mem::take(&mut data.usage), data.cost, data.replayed)
        };
        let mut waits = self.lock_waits();
        // A run that ends while it waits (at its timeout) waited for that limit until now.
        waits.end_ongoing(Instant::now());
        // Most runs take no limit: nothing to add up.
        let (waited, waited_for) = if waits.since.is_none() && waits.by_key.is_empty() {
            (Duration::ZERO, None)
        } else {
            (
                waits.total(Instant::now()),
                waits.longest().map(str::to_string),
            )
        };
        Spent {
            usage,
            cost,
            replayed,
            waited,
            waited_for,
        }
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

/// The state of the run current on this thread, made now if nothing made it yet.
pub(crate) fn current() -> Option<Arc<RunState>> {
    let pointer = CURRENT.try_with(Cell::get).ok()?;
    // SAFETY: a non-null pointer was set by `with_current` from a cell it borrows until it
    // restores the previous value, on this thread: the cell is alive.
    #[allow(unsafe_code)]
    let cell = unsafe { pointer.as_ref() }?;
    Some(cell.state().clone())
}

/// Makes the run of `cell` the current run of this thread while `f` runs.
pub(crate) fn with_current<T>(cell: &RunCell, f: impl FnOnce() -> T) -> T {
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

/// Whether the panic under way on this thread was marked a failed assertion; clears the mark.
pub(crate) fn take_assertion() -> bool {
    ASSERTING
        .try_with(|flag| flag.replace(false))
        .unwrap_or(false)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoning_a_run_releases_what_it_holds_and_whatever_it_takes_later() {
        struct Counted(std::sync::atomic::AtomicU32);
        impl Release for Counted {
            fn release(&self) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let released = |item: &Arc<Counted>| item.0.load(std::sync::atomic::Ordering::SeqCst);
        let state = RunState::default();
        let (held, later) = (Arc::new(Counted(0.into())), Arc::new(Counted(0.into())));
        assert!(state.hold(held.clone()));
        assert!(!state.abandoned());
        state.abandon();
        assert!(state.abandoned());
        assert_eq!(released(&held), 1, "held at the timeout: released then");
        assert!(!state.hold(later.clone()), "taken after it: refused");
        assert_eq!(released(&later), 1, "and released at once");
        state.abandon();
        assert_eq!(released(&held), 1, "released once");
    }

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
}
