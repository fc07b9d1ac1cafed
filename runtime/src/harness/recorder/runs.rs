//! This process's runs read back, as the store would give them: the records and runs in flight
//! its memory holds, and the runs only its slots hold, whose records are built here.
//!
//! Layer: harness.

use std::borrow::Cow;

use std::sync::atomic::Ordering;

use super::{epoch, process, InFlight, Process, NEXT_TICKET};
use crate::harness::registry::Case;
use crate::harness::settings::Settings;
use crate::model::record::died_record;
use crate::model::{CaseInfo, Record};
use crate::store::writer::SessionWriter;
use crate::store::{self, SessionData};

/// What this process recorded, as the store would give it back: its cases, its finished runs,
/// and its runs in flight as errors that the report keeps a place for.
pub(super) fn in_memory(writer: &SessionWriter, settings: &Settings) -> SessionData {
    let process = process();
    let cases = process
        .cases
        .iter()
        .map(|case| case.info().clone())
        .collect();
    let runs = process_runs(
        &process,
        process.records.clone(),
        Some(writer),
        settings.attempt,
    );
    let unrecorded = (process.unrecorded, process.unrecorded_reason.clone());
    drop(process);
    let open = runs
        .tickets
        .iter()
        .zip(&runs.in_flight)
        .map(|(&ticket, &in_flight)| in_flight.then(|| (writer.proc_id().to_string(), ticket)))
        .collect();
    as_session(settings, cases, runs.records, open, unrecorded)
}

/// The runs of this process, as its readers take them: side by side, each run's record, its
/// ticket, and whether it is still in flight (a run in flight reads as an error: see
/// `died_record`). Kept as columns, so that each record is moved once: a process has thousands,
/// and an unoptimized test binary copies a record with a call at every move.
#[derive(Default)]
pub(super) struct OwnRuns {
    pub(super) records: Vec<Record>,
    pub(super) tickets: Vec<u64>,
    pub(super) in_flight: Vec<bool>,
}

impl OwnRuns {
    fn with_capacity(runs: usize) -> OwnRuns {
        OwnRuns {
            records: Vec::with_capacity(runs),
            tickets: Vec::with_capacity(runs),
            in_flight: Vec::with_capacity(runs),
        }
    }

    fn push(&mut self, ticket: u64, record: Record, in_flight: bool) {
        self.records.push(record);
        self.tickets.push(ticket);
        self.in_flight.push(in_flight);
    }
}

/// This process's runs: `records` (taken from, or copied out of, the process's), its runs in
/// flight, and those only its slots hold, whose records are built here.
pub(super) fn process_runs(
    process: &Process,
    records: Vec<(u64, Record)>,
    writer: Option<&SessionWriter>,
    attempt: u32,
) -> OwnRuns {
    let issued = NEXT_TICKET.load(Ordering::Acquire);
    let slots = writer
        .map(|writer| writer.own_slots(issued))
        .unwrap_or_default();
    let mut runs = OwnRuns::with_capacity(records.len() + process.in_flight.len() + slots.len());
    // A run in a slot with a record here (its end held text) is taken from the record. By
    // ticket: slots no run started (a ticket left unused) are not among `slots`.
    let tickets = slots.last().map_or(0, |(slot, _)| slot.seq as usize + 1);
    let mut recorded = vec![false; tickets];
    for (ticket, record) in records {
        if let Some(seen) = recorded.get_mut(ticket as usize) {
            *seen = true;
        }
        runs.push(ticket, record, false);
    }
    for flight in &process.in_flight {
        let mut record = flight.died(attempt);
        record.elapsed = flight.started.elapsed().as_secs_f64();
        runs.push(flight.ticket, record, true);
    }
    if slots.is_empty() {
        return runs;
    }
    // The cases by their number in the slots: every case is in `cases` before its first slot.
    let mut by_ref: Vec<Option<&'static Case>> = Vec::new();
    for &case in &process.cases {
        if let Some(&case_ref) = case.slot_ref().get() {
            let at = case_ref as usize;
            if by_ref.len() <= at {
                by_ref.resize(at + 1, None);
            }
            by_ref[at] = Some(case);
        }
    }
    let now = epoch().elapsed().as_secs_f64();
    for (slot, started_at) in slots {
        let taken = recorded.get(slot.seq as usize).copied().unwrap_or(false);
        let case = by_ref.get(slot.case_ref as usize).copied().flatten();
        let (false, Some(case)) = (taken, case) else {
            continue;
        };
        let bench = case.bench;
        let (package, module, row) = (bench.package(), bench.module(), case.row_id);
        match slot.ended {
            Some((outcome, elapsed, cost)) => runs.push(
                slot.seq,
                Record {
                    case: Cow::Borrowed(row),
                    package: Cow::Borrowed(package),
                    module: Cow::Borrowed(module),
                    run: slot.run,
                    attempt: slot.attempt,
                    outcome,
                    elapsed,
                    cost,
                    ..Record::default()
                },
                false,
            ),
            None => {
                let (package, module, row) = (
                    Cow::Borrowed(package),
                    Cow::Borrowed(module),
                    Cow::Borrowed(row),
                );
                let mut died = died_record(package, module, row, slot.run, slot.attempt);
                died.elapsed = (now - started_at).max(0.0);
                runs.push(slot.seq, died, true);
            }
        }
    }
    runs
}

/// What a process alone in its session holds, as the store would give it back.
pub(super) fn as_session(
    settings: &Settings,
    cases: Vec<CaseInfo>,
    records: Vec<Record>,
    open: Vec<Option<(String, u64)>>,
    (unrecorded, reason): (u64, Option<String>),
) -> SessionData {
    let warnings = reason
        .filter(|_| unrecorded > 0)
        .map(|reason| store::unrecorded_warning(unrecorded, &reason))
        .into_iter()
        .collect();
    SessionData {
        cases,
        records,
        open,
        per_test: settings.per_test,
        report: settings.json.as_ref().map(|path| path.display.clone()),
        stats: settings.stats.clone(),
        unrecorded,
        report_path: settings.json.as_ref().map(|path| path.resolved.clone()),
        reconciled: 0,
        items: Default::default(),
        expected: Vec::new(),
        warnings,
    }
}

impl InFlight {
    /// The record of this run as an error: its process is exiting, or the run is not over.
    fn died(&self, attempt: u32) -> Record {
        let bench = self.case.bench;
        died_record(
            Cow::Borrowed(bench.package()),
            Cow::Borrowed(bench.module()),
            Cow::Borrowed(self.case.row_id),
            self.run,
            attempt,
        )
    }
}
