//! The machine's CPUs, which every test of the suite shares in one process: each command a test
//! runs holds a share of them, and a test whose diagnosis compares timings (a race that a busy
//! machine hides, one core against many) takes them alone, so that no other test's cargo runs
//! meanwhile.

use std::cell::Cell;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

thread_local! {
    /// Whether this thread holds the machine alone: its own commands then take no share, which
    /// would wait for itself.
    static ALONE: Cell<bool> = const { Cell::new(false) };
}

/// The machine to one test until dropped: the commands of every other test wait for it.
pub struct Alone {
    _machine: RwLockWriteGuard<'static, ()>,
}

impl Drop for Alone {
    fn drop(&mut self) {
        ALONE.set(false);
    }
}

/// Waits until no other test's command runs, then holds the machine alone until the result is
/// dropped. Build a fixture before: another test may be building it, with a share.
pub fn alone() -> Alone {
    let machine = MACHINE.write().unwrap_or_else(|poison| poison.into_inner());
    ALONE.set(true);
    Alone { _machine: machine }
}

/// A share of the machine for one command, held until dropped; none when this thread holds it
/// alone.
pub fn share() -> Option<RwLockReadGuard<'static, ()>> {
    (!ALONE.get()).then(|| MACHINE.read().unwrap_or_else(|poison| poison.into_inner()))
}
