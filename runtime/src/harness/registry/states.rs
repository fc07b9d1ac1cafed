//! This process's state of each case that has run in it: its counts, its description, its
//! number in the slots.
//!
//! Layer: harness.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::OnceLock;

use crate::model::CaseInfo;

/// What this process knows of a case that has run in it.
#[derive(Default)]
pub(super) struct CaseState {
    /// Set by the case's first run in this process, which describes the case to the store.
    pub(super) seen: AtomicBool,
    /// Set once the case is on the process's list of its cases (the recorder's), whether by
    /// its first run or by the process describing every case as it joins the store.
    pub(super) listed: AtomicBool,
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
