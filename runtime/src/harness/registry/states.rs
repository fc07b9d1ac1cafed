//! This process's state of each case that has run in it (its counts, its description, its
//! number in the slots), found by the address of the case's static without a lock.
//!
//! Layer: harness.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Mutex, OnceLock};

use super::{case_count, Case};
use crate::model::CaseInfo;

/// What this process knows of a case that has run in it.
#[derive(Default)]
pub(super) struct CaseState {
    /// Set by the case's first run in this process, which describes the case to the store.
    pub(super) seen: AtomicBool,
    /// The case's identity as the store's start lines spell it, escaped once.
    pub(super) identity: OnceLock<String>,
    /// The case's description, built once: a run's start and end both carry it.
    pub(super) info: OnceLock<CaseInfo>,
    /// The case's number in this process's slots (see `store::slots`), once one of its runs
    /// was recorded in a slot.
    pub(super) slot_ref: OnceLock<u32>,
    /// This process's outcomes of the case so far, for judging its gate at its last run.
    pub(super) passes: AtomicU64,
    pub(super) fails: AtomicU64,
    pub(super) errors: AtomicU64,
    /// Runs of the case that `PROB_STOP` skipped in this process.
    pub(super) stopped: AtomicU64,
    /// Run items of the case that have returned in this process, however they ended: the
    /// verdict item waits for those libtest selected.
    pub(super) items_ended: AtomicU64,
}

/// The states of the cases that have run in this process, by the address of their static.
///
/// Every run looks its case's state up, on a thread of its own (libtest starts one per test),
/// so the lookup must be cheap unoptimized: an open-addressing table of write-once cells, sized
/// from the benches the linker listed, without a lock. A case the table has no room for (a
/// binary whose benches the linker could not list) goes to an ordered map under a lock.
pub(super) struct CaseStates {
    cells: Box<[OnceLock<(usize, &'static CaseState)>]>,
    overflow: Mutex<BTreeMap<usize, &'static CaseState>>,
}

pub(super) fn states() -> &'static CaseStates {
    static STATES: OnceLock<CaseStates> = OnceLock::new();
    STATES.get_or_init(|| {
        let cases = case_count();
        let size = (cases * 2).max(16).next_power_of_two();
        CaseStates {
            cells: (0..size).map(|_| OnceLock::new()).collect(),
            overflow: Mutex::new(BTreeMap::new()),
        }
    })
}

impl CaseStates {
    /// The state of the case whose static is at `key`, made at its first use.
    pub(super) fn find(&self, key: usize) -> &'static CaseState {
        let mask = self.cells.len() - 1;
        // Case statics lie side by side: consecutive cases take consecutive cells.
        let mut at = (key / std::mem::size_of::<Case>()) & mask;
        for _ in 0..self.cells.len() {
            let (owner, state) = *self.cells[at].get_or_init(|| (key, Box::leak(Box::default())));
            if owner == key {
                return state;
            }
            at = (at + 1) & mask;
        }
        let mut overflow = self
            .overflow
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        overflow
            .entry(key)
            .or_insert_with(|| Box::leak(Box::default()))
    }
}

#[cfg(test)]
mod tests {
    use super::CaseStates;

    #[test]
    fn each_case_has_one_state_also_past_the_tables_room() {
        let states = CaseStates {
            cells: (0..16).map(|_| std::sync::OnceLock::new()).collect(),
            overflow: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        };
        // More cases than cells, at addresses that collide.
        let keys: Vec<usize> = (0..40).map(|n| 0x1000 + n * 64 * 7).collect();
        let first: Vec<*const super::super::states::CaseState> = keys
            .iter()
            .map(|&key| std::ptr::from_ref(states.find(key)))
            .collect();
        for (index, &key) in keys.iter().enumerate() {
            assert_eq!(
                std::ptr::from_ref(states.find(key)),
                first[index],
                "key {key:#x}"
            );
        }
        let mut distinct = first.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), keys.len());
        assert!(!states.overflow.lock().expect("lock").is_empty());
    }
}
