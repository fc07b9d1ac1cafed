//! The event interface between the runner and the session's writers: a run's start and its
//! finish are [`RunEvent`]s, and a [`SessionWriter`] hands each, in order, to the writers of
//! the session (the store's log, then the live report). The harness knows events, not files.
//!
//! In a process that holds one run (nextest's), an event goes to the log and to the live
//! report under the session report's lock, so that no process rebuilding the report sees a log
//! line whose change has not reached the report (it would count the run twice). In a process
//! that runs many (libtest's), an event is a log line alone, and the live report is folded from
//! the log in batches ([`SessionWriter::fold_if_due`]) and at exit ([`SessionWriter::fold`]).
//! A later writer (a live JUnit file, a progress stream) is one more step of
//! [`SessionWriter::consume`], after the log has the event.
//!
//! Layer: store.

use std::borrow::Cow;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use crate::model::record::died_record;
use crate::model::{CaseInfo, Record, Report};
use crate::store::live::{Change, ReportFile};
use crate::store::log::ProcessFile;
use crate::store::session_dir::{Session, SessionData};
use crate::store::slots::{self, ReadSlot, SlotFile};
use crate::types::stats::StatsConfig;

/// A run is about to execute.
pub(crate) struct RunStarted<'a> {
    /// This process's number for the run.
    pub(crate) seq: u64,
    /// The case's identity fields as the log's start lines spell them, escaped once per case
    /// (see `store_lines::identity_fragment`): given when the run is not
    /// [`SessionWriter::in_slot`].
    pub(crate) identity: Option<&'a str>,
    /// 1-based run number.
    pub(crate) run: u32,
    /// nextest's attempt: 1, or more for a retry.
    pub(crate) attempt: u32,
    /// The case's description: given at the case's first run in this process, and at every
    /// run when [`SessionWriter::wants_descriptions`] says so.
    pub(crate) info: Option<&'a CaseInfo>,
    /// Whether this is the case's first run in this process, which describes the case to the
    /// log unless the session has already.
    pub(crate) first_in_process: bool,
    /// The case's number in this process's slots, set by the writer at the case's first run
    /// recorded in a slot; `info` is given while it is unset.
    pub(crate) slot_ref: &'a OnceLock<u32>,
    /// When the run started, in seconds since the process's first run: what a slot holds of a
    /// run that has not finished (see `store::slots`).
    pub(crate) started_at: f64,
}

/// A run finished with `record`.
pub(crate) struct RunFinished<'a> {
    /// The number its start had.
    pub(crate) seq: u64,
    /// The case's description, when [`SessionWriter::wants_descriptions`].
    pub(crate) info: Option<&'a CaseInfo>,
    /// How it ended.
    pub(crate) record: &'a Record,
}

/// Why an event could not be handed on.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// The session store could not take it: the run is not recorded.
    Store(io::Error),
    /// The store has it, the session report could not be updated.
    Report(io::Error),
}

/// What happens to a run, as the writers of the session see it.
pub(crate) enum RunEvent<'a> {
    /// A run is about to execute: from here on, it is never missing.
    Started(RunStarted<'a>),
    /// A run finished.
    Finished(RunFinished<'a>),
    /// A run recorded in a slot finished with nothing a slot cannot hold (no message, location,
    /// usage, wait or replay: most runs that pass): written to its slot alone, and kept in no
    /// process's memory. Its record names no case; the slot does.
    Ended(RunFinished<'a>),
}

/// The least time between two foldings of a process's runs into the session report, so that a
/// watcher sees progress while the runs pay nothing for the report. A folding rewrites the
/// whole report: a second keeps a test binary that runs for a few hundred milliseconds (as
/// most do) from folding a second time, for a report that its exit writes anyway.
const FOLD_EVERY: Duration = Duration::from_secs(1);

/// When the process last folded its runs into the report, and what that took.
struct Folding {
    last: Option<Instant>,
    took: Duration,
}

/// The session's writers, as one process holds them.
pub(crate) struct SessionWriter {
    log: ProcessFile,
    /// Where a process of many runs records them (`None` for a process of one run, or when
    /// the file cannot be mapped: then every run is a log line).
    slots: Option<SlotFile>,
    /// The number the next case recorded in a slot gets.
    next_slot_ref: AtomicU32,
    /// Held while a case is numbered, so that it is described once.
    numbering: Mutex<()>,
    report: Option<ReportFile>,
    /// Whether the report is patched at every event (one run per process) or folded in batches.
    per_run: bool,
    /// Whether [`SessionWriter::fold_if_due`] folds: a report kept in batches, in a file. Worked
    /// out once, since every run of a process of many asks.
    folds: bool,
    folding: Mutex<Folding>,
}

impl SessionWriter {
    /// Joins `session`: creates it if needed, and announces this process in its log. `report`
    /// is the session report as the user named it and as it resolves.
    pub(crate) fn open(
        session: Session,
        per_test: bool,
        report: Option<(String, PathBuf)>,
        stats: &StatsConfig,
        cases: fn() -> usize,
    ) -> io::Result<SessionWriter> {
        let named = report
            .as_ref()
            .map(|(named, path)| (named.clone(), path.to_string_lossy().into_owned()));
        let log = ProcessFile::create(session.clone(), per_test, named, stats)?;
        let slots = if per_test {
            None
        } else {
            SlotFile::create(session.dir(), log.proc_id()).ok()
        };
        let report = report
            .map(|(_, path)| ReportFile::new(session, path, stats.clone()).with_room_for(cases));
        Ok(SessionWriter {
            log,
            slots,
            next_slot_ref: AtomicU32::new(0),
            numbering: Mutex::new(()),
            per_run: per_test && report.is_some(),
            // A stream (`/dev/null`, a pipe) gets the report once, at exit.
            folds: !per_test && report.as_ref().is_some_and(|report| !report.is_stream()),
            report,
            folding: Mutex::new(Folding {
                last: None,
                took: Duration::ZERO,
            }),
        })
    }

    /// Whether events must carry their case's description at every run (the live report
    /// patches the case's row), not only at the case's first run in the process.
    pub(crate) fn wants_descriptions(&self) -> bool {
        self.per_run
    }

    /// Whether a session report is kept.
    pub(crate) fn keeps_report(&self) -> bool {
        self.report.is_some()
    }

    /// Whether run `seq` is recorded in a slot, so that its end may be a [`RunEvent::Ended`].
    pub(crate) fn in_slot(&self, seq: u64) -> bool {
        self.slot_of(seq).is_some()
    }

    /// This process's runs recorded in slots, of its first `issued`, read back (see
    /// [`SlotFile::read_own`]).
    pub(crate) fn own_slots(&self, issued: u64) -> Vec<(ReadSlot, f64)> {
        self.slots
            .as_ref()
            .map(|slots| slots.read_own(issued))
            .unwrap_or_default()
    }

    /// The slot file, when run `seq` is recorded in it.
    fn slot_of(&self, seq: u64) -> Option<&SlotFile> {
        // A match, not `Option`'s combinators: every run asks, in test binaries built without
        // optimizations, where each combinator and its closure is a call.
        match &self.slots {
            Some(slots) if slots.has_room(seq) => Some(slots),
            _ => None,
        }
    }

    /// Hands `event` to the session's writers, in order. An error names the file that could
    /// not be written.
    pub(crate) fn consume(&self, event: &RunEvent<'_>) -> Result<(), WriteError> {
        let seq = match event {
            RunEvent::Started(started) => started.seq,
            RunEvent::Finished(finished) => finished.seq,
            RunEvent::Ended(ended) => ended.seq,
        };
        match self.slot_of(seq) {
            Some(slots) => match self.consume_in_slot(slots, event) {
                Ok(()) => Ok(()),
                Err(error) => Err(WriteError::Store(error)),
            },
            None => self.consume_as_lines(event),
        }
    }

    /// Counts `runs` this process executed and could not record, with why, where the session's
    /// readers find them: see `store::unrecorded`.
    pub(crate) fn note_unrecorded(&self, runs: u64, reason: &str) -> io::Result<()> {
        self.log.session().note_unrecorded(runs, reason)?;
        if let Some(report) = self.report.as_ref().filter(|_| self.per_run) {
            // The live report's head does not know of them: rebuilt, it does.
            report.rebuild()?;
        }
        Ok(())
    }

    /// [`SessionWriter::consume`] for a run recorded in a slot.
    fn consume_in_slot(&self, slots: &SlotFile, event: &RunEvent<'_>) -> io::Result<()> {
        match event {
            RunEvent::Started(started) => {
                let case_ref = match started.slot_ref.get() {
                    Some(case_ref) => *case_ref,
                    None => self.number_case(started)?,
                };
                let start = slots.start(
                    started.seq,
                    case_ref,
                    started.run,
                    started.attempt,
                    started.started_at,
                );
                if let Err(error) = start {
                    return Err(crate::store::in_file(slots.path(), error));
                }
            }
            RunEvent::Finished(finished) => {
                let record = finished.record;
                // The slot holds no text: a run with some writes its end line too, which the
                // reader prefers to the slot.
                if record.message.is_some()
                    || record.location.is_some()
                    || !record.usage.is_empty()
                    || record.waited != 0.0
                    || record.replayed.is_some()
                {
                    self.log
                        .append_end(finished.seq, record)
                        .map_err(|error| self.in_log(error))?;
                }
                slots.finish(finished.seq, record.outcome, record.elapsed, record.cost);
            }
            RunEvent::Ended(ended) => {
                let record = ended.record;
                slots.finish(ended.seq, record.outcome, record.elapsed, record.cost);
            }
        }
        Ok(())
    }

    /// An error of the session's log, naming it.
    fn in_log(&self, error: io::Error) -> io::Error {
        crate::store::in_file(&self.log.session().runs_file(), error)
    }

    /// [`SessionWriter::consume`] for a run recorded as log lines (and patched into the live
    /// report, in a process of one run).
    fn consume_as_lines(&self, event: &RunEvent<'_>) -> Result<(), WriteError> {
        // The store's error, kept apart from the report's: both come out of `apply`.
        let store_error = std::cell::Cell::new(None);
        let result = self.consume_as_lines_noting(event, &store_error);
        match (store_error.into_inner(), result) {
            (Some(error), _) => Err(WriteError::Store(error)),
            (None, Ok(())) => Ok(()),
            (None, Err(error)) => Err(WriteError::Report(error)),
        }
    }

    /// [`SessionWriter::consume_as_lines`], with the store's error put in `store_error`.
    fn consume_as_lines_noting(
        &self,
        event: &RunEvent<'_>,
        store_error: &std::cell::Cell<Option<io::Error>>,
    ) -> io::Result<()> {
        let report = self.report.as_ref().filter(|_| self.per_run);
        let noted = |error: io::Error| {
            let error = self.in_log(error);
            let text = error.to_string();
            store_error.set(Some(error));
            io::Error::other(text)
        };
        match event {
            RunEvent::Started(started) => {
                // `described`: the report says the session's log describes the case already.
                // Returns whether this line described it.
                let log_line = |described: bool| {
                    let describe = started.first_in_process && !described;
                    if let (true, Some(info)) = (describe, started.info) {
                        self.log.queue_case(info).map_err(noted)?;
                    }
                    let identity = started.identity.ok_or_else(|| {
                        noted(io::Error::other(
                            "a run's start line comes without its case's identity",
                        ))
                    })?;
                    self.log
                        .append_start(started.seq, identity, started.run, started.attempt)
                        .map_err(noted)?;
                    Ok(describe)
                };
                match (report, started.info) {
                    (Some(report), Some(info)) => {
                        let provisional = died_record(
                            Cow::Owned(info.package.clone()),
                            Cow::Owned(info.module.clone()),
                            Cow::Owned(info.case.clone()),
                            started.run,
                            started.attempt,
                        );
                        let change = Change::Start {
                            proc_id: self.log.proc_id(),
                            seq: started.seq,
                            info,
                            provisional: &provisional,
                        };
                        report.apply(&change, log_line)
                    }
                    _ => log_line(false).map(drop),
                }
            }
            RunEvent::Finished(finished) => {
                let log_line = |_described: bool| {
                    self.log
                        .append_end(finished.seq, finished.record)
                        .map(|()| false)
                        .map_err(noted)
                };
                match (report, finished.info) {
                    (Some(report), Some(info)) => {
                        let change = Change::Finish {
                            proc_id: self.log.proc_id(),
                            seq: finished.seq,
                            info,
                            record: finished.record,
                        };
                        report.apply(&change, log_line)
                    }
                    _ => log_line(false).map(drop),
                }
            }
            // The log has no line for an end without its record: only a slot holds it.
            RunEvent::Ended(_) => Err(noted(io::Error::other(
                "a run's end without its record comes for a run not recorded in a slot",
            ))),
        }
    }

    /// Numbers the case of `started` for the slots, describing it to the log first.
    fn number_case(&self, started: &RunStarted<'_>) -> io::Result<u32> {
        let info = started.info.ok_or_else(|| {
            io::Error::other("a case's first run in the slots comes without its description")
        })?;
        self.number_in_slots(info, started.slot_ref)
    }

    /// The case's number in this process's slots: at its first run, given the next number once
    /// its description is in the log. A description the log did not take leaves the case
    /// unnumbered, and its next run tries again: no slot names a case the log does not describe.
    pub(crate) fn number_in_slots(
        &self,
        info: &CaseInfo,
        slot_ref: &OnceLock<u32>,
    ) -> io::Result<u32> {
        if let Some(&case_ref) = slot_ref.get() {
            return Ok(case_ref);
        }
        self.number_all_in_slots(&[(info, slot_ref)])?;
        slot_ref
            .get()
            .copied()
            .ok_or_else(|| io::Error::other("a case numbered in the slots has no number"))
    }

    /// Numbers every case of `cases` not numbered yet, all described to the log in one write
    /// first: what a process that will run every case of its binary does as it joins, so that
    /// no case's first run describes it on its own, with its other runs waiting. A write the
    /// log did not take leaves them unnumbered, for their first runs to describe.
    pub(crate) fn number_all_in_slots(
        &self,
        cases: &[(&CaseInfo, &OnceLock<u32>)],
    ) -> io::Result<()> {
        let _numbering = self
            .numbering
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let unnumbered: Vec<&(&CaseInfo, &OnceLock<u32>)> = cases
            .iter()
            .filter(|(_, slot_ref)| slot_ref.get().is_none())
            .collect();
        let count = u32::try_from(unnumbered.len())
            .map_err(|_| io::Error::other("more cases than a process numbers"))?;
        let first = self.next_slot_ref.fetch_add(count, Ordering::Relaxed);
        let numbered: Vec<(&CaseInfo, u32)> = (first..)
            .zip(&unnumbered)
            .map(|(case_ref, (info, _))| (*info, case_ref))
            .collect();
        if numbered.is_empty() {
            return Ok(());
        }
        self.log.append_slot_cases(&numbered)?;
        for ((_, slot_ref), (_, case_ref)) in unnumbered.iter().zip(&numbered) {
            let _ = slot_ref.set(*case_ref);
        }
        Ok(())
    }

    /// Whether this process records its runs in slots.
    pub(crate) fn has_slots(&self) -> bool {
        self.slots.is_some()
    }

    /// Whether this process wrote everything the session holds: every line of the log, and
    /// the only slot file.
    fn alone_in_session(&self) -> bool {
        if !self.log.is_whole_session() {
            return false;
        }
        let Ok(entries) = std::fs::read_dir(slots::procs_dir(self.log.session_dir())) else {
            return self.slots.is_none();
        };
        let own = self.slots.as_ref().map(|slots| slots.path().to_path_buf());
        entries
            .filter_map(Result::ok)
            .all(|entry| Some(entry.path()) == own)
    }

    /// In a process that runs many runs: folds them into the session report when the last
    /// folding is long enough ago. That is at the first finished run, then at most once a
    /// second, and never more often than ten times what a folding takes, so that folding a large
    /// session costs its runs at most a tenth of their time. A run whose process dies before
    /// the next folding is in the log, and an error in the report that the session's next
    /// process (or `cargo probtest report`) writes.
    ///
    /// `memory` gives what this process holds of the session; it is used instead of reading
    /// the store back when the store holds nothing else (one test binary alone in its session).
    pub(crate) fn fold_if_due(&self, memory: impl FnOnce() -> SessionData) -> io::Result<()> {
        if !self.folds {
            return Ok(());
        }
        let mut folding = match self.folding.try_lock() {
            Ok(folding) => folding,
            // Another thread is folding: this run is in the log already, and in its folding
            // or the next one.
            Err(TryLockError::WouldBlock) => return Ok(()),
            Err(TryLockError::Poisoned(poison)) => poison.into_inner(),
        };
        let due = folding
            .last
            .is_none_or(|last| last.elapsed() >= FOLD_EVERY.max(folding.took * 10));
        if !due {
            return Ok(());
        }
        let began = Instant::now();
        let folded = self.fold_as(memory, false);
        folding.took = began.elapsed();
        folding.last = Some(Instant::now());
        folded.map(drop)
    }

    /// [`SessionWriter::fold_keeping`], with the report only when the file took it.
    #[cfg(test)]
    pub(crate) fn fold(&self, memory: impl FnOnce() -> SessionData) -> io::Result<Option<Report>> {
        let (report, written) = self.fold_keeping(memory);
        written.map(|()| report)
    }

    /// Rebuilds the session report, in source order, as the process's last fold (at exit). From
    /// `memory`, what this process holds of the session, when the log holds nothing else; else
    /// from the log. The log is looked at under the report's lock, so that a process folding
    /// after this one sees every line this one did not. Gives back the report built from
    /// `memory` (when it was) whether or not the report file took it, so that the summary shows
    /// it and `memory` need not be kept for a summary of its own.
    pub(crate) fn fold_keeping(
        &self,
        memory: impl FnOnce() -> SessionData,
    ) -> (Option<Report>, io::Result<()>) {
        match &self.report {
            Some(report) => report.rebuild_keeping(|| self.alone_in_session().then(memory), true),
            None => (None, Ok(())),
        }
    }

    /// A fold in a batch (`last` false) or the process's last, which adds the analysis. Gives
    /// back the report when it was built from `memory`, so that the process's summary, which
    /// would build the same report, takes it instead.
    fn fold_as(
        &self,
        memory: impl FnOnce() -> SessionData,
        last: bool,
    ) -> io::Result<Option<Report>> {
        match &self.report {
            Some(report) => {
                let (built, written) =
                    report.rebuild_keeping(|| self.alone_in_session().then(memory), last);
                written.map(|()| built)
            }
            None => Ok(None),
        }
    }

    /// This process's id in the session's log.
    pub(crate) fn proc_id(&self) -> &str {
        self.log.proc_id()
    }
}

#[cfg(test)]
mod tests;
