//! The end of a process: the remaining teardowns, then its last fold into the session report
//! and its outputs (the reporter's: JSON, HTML, summary), on a thread of its own after `main`
//! returns.
//!
//! Layer: harness.

use super::runs::process_runs;
use super::{as_session, joined, process};
use std::io::Write;

use crate::harness::registry;
use crate::harness::reporter::Reporter;
use crate::harness::settings;
use crate::model::{CaseInfo, Record};
use crate::store::{self, SessionData};

/// A process's runs as the session report's fold takes them: none still open.
fn own_runs(whole: SessionData) -> SessionData {
    SessionData {
        open: vec![None; whole.records.len()],
        ..whole
    }
}

/// Takes everything this process recorded, turning runs still in flight into errors, with the
/// descriptions of the cases they belong to.
fn take_records() -> (Vec<CaseInfo>, Vec<Record>, (u64, Option<String>)) {
    let mut process = process();
    let records = std::mem::take(&mut process.records);
    let attempt = settings::peek().map_or(1, |s| s.attempt);
    let runs = process_runs(&process, records, joined(), attempt);
    process.in_flight.clear();
    let cases = std::mem::take(&mut process.cases);
    let unrecorded = (process.unrecorded, process.unrecorded_reason.clone());
    drop(process);
    (
        cases.into_iter().map(|case| case.info().clone()).collect(),
        runs.records,
        unrecorded,
    )
}

pub(super) fn register_exit_hook() {
    // SAFETY: `on_exit` only touches probtest's own statics and runs its work on a fresh
    // thread, so it does not depend on the exiting thread's thread-locals.
    #[allow(unsafe_code)]
    unsafe {
        dtor::at_binary_exit(on_exit);
    }
}

extern "C" fn on_exit() {
    if exit_work_pending() {
        // The exiting thread's thread-locals may already be gone; a new thread has its own.
        match std::thread::Builder::new()
            .name("probtest-exit".into())
            .spawn(finish_process)
        {
            Ok(handle) => {
                let _ = handle.join();
            }
            Err(_) => finish_process(),
        }
    }
    // The old sessions' pruning that began with the session: the process leaves the sessions
    // folder pruned.
    store::finish_pruning();
}

/// Whether anything is left to do at exit. A nextest process whose run went to the store (and
/// to the session report) has nothing left, and exits as fast as a plain test.
fn exit_work_pending() -> bool {
    let Some(settings) = settings::peek() else {
        return registry::has_teardowns();
    };
    let recorded = joined().is_some();
    registry::has_teardowns() || !(settings.per_test && recorded)
}

/// Runs the remaining teardowns, then prints this process's summary when at least one run
/// executed in it. The session report is already complete; a process running many tests puts
/// it back in source order, and only when the store is unavailable is a report of this process
/// written here instead.
fn finish_process() {
    registry::run_remaining_teardowns();
    let Some(settings) = settings::peek() else {
        return;
    };
    let writer = joined();
    if settings.per_test && writer.is_some() {
        // One nextest process holds one run: its section would say nothing the session's
        // summary (`cargo probtest run --nextest`) does not, and its run is already stored.
        return;
    }
    let (cases, records, unrecorded) = take_records();
    let files = settings.json.is_some() || settings.html.is_some();
    if records.is_empty() || (!settings.summary && !files) {
        return;
    }
    // This process's last runs folded into the session report: from what this process
    // holds when the session is its alone (its runs in flight are errors now, with no place to
    // keep: nothing will finish them).
    let mut whole = Some(as_session(settings, cases, records, Vec::new(), unrecorded));
    // A fold from this process's own runs takes them, and builds the report its summary shows
    // (whether or not the file took it); else (other processes in the session, or no fold)
    // the summary's report is built from them here.
    let (folded, built) = match writer.filter(|writer| writer.keeps_report()) {
        Some(writer) => {
            let (built, written) =
                writer.fold_keeping(|| own_runs(whole.take().unwrap_or_default()));
            (Some(written), built)
        }
        None => (None, None),
    };
    let Some(report) = built.or_else(|| whole.map(SessionData::into_report)) else {
        // A fold that took the runs gave back their report: nothing is left unshown.
        return;
    };
    // Never freed: the process is exiting, and freeing a report's thousands of strings would
    // be the last work it waits for (a tenth of the exit's, in a test binary built without
    // optimizations).
    let report = std::mem::ManuallyDrop::new(report);
    let reporter = Reporter::from_settings(settings, writer.is_some(), folded);
    let errors = reporter.write(&report);
    let mut stderr = std::io::stderr().lock();
    for error in errors {
        let _ = writeln!(stderr, "probtest: {error}");
    }
}
