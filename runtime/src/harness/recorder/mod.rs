//! This process's recorder: each run's start and end go to the session store as they happen,
//! and into memory for the summary this process prints at exit. The session report, when one
//! is asked for, is patched run by run in a process that holds one run (nextest's), and folded
//! in batches in a process that runs many (libtest's), at most once a second and at exit.
//!
//! Layer: harness.

use std::borrow::Cow;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::harness::registry::{self, Case};
use crate::harness::settings::Settings;
use crate::model::{CaseInfo, Record};
use crate::store::writer::{RunEvent, RunFinished, RunStarted, SessionWriter, WriteError};
use crate::store::{self, Session};
use crate::types::ordered_map::OrderedMap;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;
use crate::types::usage::UsageTotals;

mod exit;
mod runs;
mod up_front;

use runs::{as_session, in_memory};

struct InFlight {
    ticket: u64,
    case: &'static Case,
    run: u32,
    started: Instant,
    /// Whether the run is counted as unrecorded already (its start could not be stored).
    unrecorded: bool,
}

/// What this process recorded. A run whose start went to a slot (`store::slots`) is there alone
/// while it runs, and when it ends with nothing a slot cannot hold: it costs neither this lock
/// nor a record, and is read back from the slot (see [`process_runs`]). Every other run is in
/// flight here, then a record here, under its ticket.
struct Process {
    /// Runs in flight that are not in a slot.
    in_flight: Vec<InFlight>,
    /// Records by ticket: of runs not in a slot, and of runs in a slot whose end held text.
    records: Vec<(u64, Record)>,
    /// Cases this process ran, in first-run order; each is described to the store once.
    cases: Vec<&'static Case>,
    /// Runs whose start or end the store could not take, and the first reason.
    unrecorded: u64,
    unrecorded_reason: Option<String>,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    in_flight: Vec::new(),
    records: Vec::new(),
    cases: Vec::new(),
    unrecorded: 0,
    unrecorded_reason: None,
});

/// The next run's ticket: its number in this process, and its slot.
static NEXT_TICKET: AtomicU64 = AtomicU64::new(0);

/// When this process's first run started: what slots count their runs' starts from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    // `get` first, as `settings::get` does: every run asks.
    match EPOCH.get() {
        Some(epoch) => *epoch,
        None => *EPOCH.get_or_init(Instant::now),
    }
}

/// Separate from [`PROCESS`] so that a run waiting out the delay does not block others from
/// recording.
static SPACING: Mutex<Option<Instant>> = Mutex::new(None);

fn process() -> MutexGuard<'static, Process> {
    PROCESS.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// The session store, as this process holds it.
// One per process, in a static: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Store {
    /// Joined: runs are recorded.
    Open(SessionWriter),
    /// The store exists for this binary and cannot be written (a full disk, no permission):
    /// every run fails its item, saying why, and counts as unrecorded.
    Broken(String),
    /// This binary is not in a cargo target directory: there is no store to join, and the
    /// summary and report cover this process alone, as written at exit.
    Absent,
}

static WRITER: OnceLock<Store> = OnceLock::new();

fn store(settings: &Settings) -> &'static Store {
    WRITER.get_or_init(|| {
        if store::sanitize_key(&settings.session_key).is_empty() {
            // A refused session key: the settings' problem fails every run and says why; no
            // session may be made of it (it would be the sessions folder itself).
            return Store::Absent;
        }
        let target = match target_dir() {
            Ok(target) => target,
            Err(error) => {
                eprintln!(
                    "probtest: cannot record this session ({error}); the summary and report cover this process only"
                );
                return Store::Absent;
            }
        };
        match open_writer(&target, settings) {
            Ok(writer) => {
                up_front::describe_cases(&writer);
                Store::Open(writer)
            }
            Err(error) => Store::Broken(error.to_string()),
        }
    })
}

/// The writer, once the store was joined.
fn joined() -> Option<&'static SessionWriter> {
    match WRITER.get() {
        Some(Store::Open(writer)) => Some(writer),
        _ => None,
    }
}

/// The target directory this test binary was built in.
pub(crate) fn target_dir() -> io::Result<std::path::PathBuf> {
    // cargo and nextest start test binaries by their absolute path, so argv[0] names the binary
    // without a system call; `current_exe` reads /proc/self/exe, some 20 µs in every nextest
    // process. A name that leads to no cargo target directory falls back to it.
    let named = std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .filter(|path| path.is_absolute());
    if let Some(target) = named.and_then(|path| store::tagged_target_dir_of(&path)) {
        return Ok(target);
    }
    let executable = std::env::current_exe()?;
    store::target_dir_of(&executable)
        .ok_or_else(|| io::Error::other("the test binary is not in a cargo target directory"))
}

/// The session this process belongs to, from the environment alone: for start-up, before any
/// bench's settings are read.
pub(crate) fn session_of_process() -> Result<Session, String> {
    let key = store::session_key(&|name: &str| std::env::var(name).ok())?;
    let target = target_dir().map_err(|error| error.to_string())?;
    Ok(Session::new(&store::sessions_dir(&target), &key))
}

fn open_writer(target: &std::path::Path, settings: &Settings) -> io::Result<SessionWriter> {
    let session = Session::new(&store::sessions_dir(target), &settings.session_key);
    let dir = session.dir().to_path_buf();
    let report = settings
        .json
        .as_ref()
        .map(|path| (path.display.clone(), path.resolved.clone()));
    SessionWriter::open(
        session,
        settings.per_test,
        report,
        &settings.stats,
        registry::case_count,
    )
    .map_err(|error| store::in_file(&dir, error))
}

/// Reports a failed write once, then keeps quiet: a broken store must not fail the tests.
fn warn_once(what: &str, error: &io::Error) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| eprintln!("probtest: could not {what}: {error}"));
}

/// A run's start, as noted.
pub(crate) struct Started {
    /// What [`finished`] takes.
    pub(crate) ticket: u64,
    /// Why the run cannot be recorded, when its start could not be: its item must fail.
    pub(crate) problem: Option<String>,
    /// Whether its start is in a slot: then an end with nothing but its outcome, time and cost
    /// goes to [`ended_in_slot`].
    pub(crate) in_slot: bool,
}

/// Notes a run as started.
pub(crate) fn started(case: &'static Case, run: u32, settings: &'static Settings) -> Started {
    // At the first run: a process that runs nothing has nothing to do at exit, and its start-up
    // runs no probtest code at all.
    static EXIT_HOOK: std::sync::Once = std::sync::Once::new();
    EXIT_HOOK.call_once(exit::register_exit_hook);
    let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    let started_at = epoch().elapsed().as_secs_f64();
    let first_of_case = case.first_sighting();
    if first_of_case && case.newly_listed() {
        process().cases.push(case);
    }
    let writer = match store(settings) {
        Store::Open(writer) => writer,
        Store::Broken(reason) => {
            in_flight(ticket, case, run);
            let problem = unrecorded(ticket, case, run, reason, None);
            return Started {
                ticket,
                problem: Some(problem),
                in_slot: false,
            };
        }
        Store::Absent => {
            in_flight(ticket, case, run);
            return Started {
                ticket,
                problem: None,
                in_slot: false,
            };
        }
    };
    let in_slot = writer.in_slot(ticket);
    if !in_slot {
        in_flight(ticket, case, run);
    }
    let slot_ref = case.slot_ref();
    // Built only when needed: this runs for every run.
    let needs_info = first_of_case || writer.wants_descriptions() || slot_ref.get().is_none();
    let info = needs_info.then(|| case.info());
    if let (true, Some(info)) = (first_of_case, info) {
        warn_if_infeasible(info, settings);
    }
    let event = RunEvent::Started(RunStarted {
        seq: ticket,
        identity: (!in_slot).then(|| case.identity()),
        run,
        attempt: settings.attempt,
        info,
        first_in_process: first_of_case,
        slot_ref,
        started_at,
    });
    let result = writer.consume(&event);
    if in_slot && result.is_err() {
        // The slot did not take the start: the run is kept in flight here, as one whose start
        // the store does not have.
        in_flight(ticket, case, run);
    }
    let problem = written(writer, (ticket, case, run), (false, false), result);
    Started {
        ticket,
        in_slot: in_slot && problem.is_none(),
        problem,
    }
}

/// Notes a run as started in its slot alone, in a process that records its runs in slots: the
/// start of a run on the runner's quick path. A case's first run here describes the case and
/// numbers it first. `None` when the store is not joined (the process's first run opens it),
/// the case could not be described, or the run has no slot that takes it; the run then starts
/// through [`started`] (a ticket taken here and left unused is a slot that no run started,
/// which readers pass over).
pub(crate) fn started_in_slot(
    case: &'static Case,
    run: u32,
    settings: &'static Settings,
) -> Option<u64> {
    let writer = joined()?;
    let slot_ref = case.slot_ref();
    if slot_ref.get().is_none() {
        if !writer.in_slot(NEXT_TICKET.load(Ordering::Relaxed)) {
            return None;
        }
        if case.first_sighting() && case.newly_listed() {
            process().cases.push(case);
        }
        // A description the log did not take is tried again, and its error reported, by the
        // run's start through `started`.
        writer.number_in_slots(case.info(), slot_ref).ok()?;
    }
    let ticket = NEXT_TICKET.fetch_add(1, Ordering::Relaxed);
    if !writer.in_slot(ticket) {
        return None;
    }
    let event = RunEvent::Started(RunStarted {
        seq: ticket,
        identity: None,
        run,
        attempt: settings.attempt,
        info: None,
        first_in_process: false,
        slot_ref,
        started_at: epoch().elapsed().as_secs_f64(),
    });
    writer.consume(&event).ok()?;
    Some(ticket)
}

/// Keeps run `ticket` in flight in this process's memory: a run whose start is not in a slot.
fn in_flight(ticket: u64, case: &'static Case, run: u32) {
    process().in_flight.push(InFlight {
        ticket,
        case,
        run,
        started: Instant::now(),
        unrecorded: false,
    });
}

/// What became of an event: `None` when it was written, else the item's failure message. A run
/// whose start the store could not take is counted as unrecorded, once; a run whose start it
/// has and whose end it could not take reads as an error (a run that never finished), and is
/// not counted twice.
fn written(
    writer: &SessionWriter,
    (ticket, case, run): (u64, &'static Case, u32),
    (ended, in_slot): (bool, bool),
    result: Result<(), WriteError>,
) -> Option<String> {
    let start_recorded = || {
        in_slot
            || process()
                .in_flight
                .iter()
                .any(|flight| flight.ticket == ticket && !flight.unrecorded)
    };
    match result {
        Ok(()) => None,
        Err(WriteError::Store(error)) if ended && start_recorded() => Some(format!(
            "probtest: run {run} of {} could not be recorded in the session store: {error}; the store has its start, and it counts as an error",
            case.row_id
        )),
        Err(WriteError::Store(error)) => Some(unrecorded(
            ticket,
            case,
            run,
            &error.to_string(),
            Some(writer),
        )),
        Err(WriteError::Report(error)) => Some(format!(
            "probtest: run {run} of {} is recorded, but the session report could not be updated: {error}",
            case.row_id
        )),
    }
}

/// Counts run `ticket` as unrecorded for `reason` (in this process, and in the session's store
/// when `writer` can still reach it), unless it is already; returns its item's failure message.
fn unrecorded(
    ticket: u64,
    case: &'static Case,
    run: u32,
    reason: &str,
    writer: Option<&SessionWriter>,
) -> String {
    let newly = {
        let mut process = process();
        let flight = process.in_flight.iter_mut().find(|f| f.ticket == ticket);
        let newly = flight.is_none_or(|flight| !std::mem::replace(&mut flight.unrecorded, true));
        if newly {
            process.unrecorded += 1;
            process
                .unrecorded_reason
                .get_or_insert_with(|| reason.to_string());
        }
        newly
    };
    if let (true, Some(writer)) = (newly, writer) {
        // On the disk that just failed, this may fail too: the item's failure still says it.
        let _ = writer.note_unrecorded(1, reason);
    }
    format!(
        "probtest: run {run} of {} could not be recorded in the session store: {reason}",
        case.row_id
    )
}

/// Says, before the case's runs are spent, that its gate (rate or latency) cannot pass with
/// them.
fn warn_if_infeasible(info: &CaseInfo, settings: &Settings) {
    // A case with no gate, the most common, cannot be infeasible: not worth the checks.
    let gated = info.gate.is_some() || settings.stats.min_rate.is_some();
    if !gated
        && info
            .latency
            .is_none_or(|latency| latency.max_latency.is_none())
    {
        return;
    }
    let rate = crate::model::infeasible(info, &settings.stats);
    let latency = crate::model::latency_gate::infeasible(info, &settings.stats);
    for warning in rate.into_iter().chain(latency) {
        use std::io::Write;
        // Past libtest's capture: the warning matters most when the runs pass.
        let _ = writeln!(std::io::stderr().lock(), "probtest: warning: {warning}");
    }
}

/// Records the end of the run `ticket`, as `ending` says (its identity is filled in here);
/// returns why its item must fail when the end could not be recorded.
pub(crate) fn finished(
    ticket: u64,
    case: &'static Case,
    run: u32,
    settings: &'static Settings,
    in_slot: bool,
    ending: Record,
) -> Option<String> {
    let record = to_record(case, run, settings.attempt, ending);
    let (writer, mut problem) = match store(settings) {
        Store::Open(writer) => (Some(writer), None),
        Store::Broken(reason) => (None, Some(unrecorded(ticket, case, run, reason, None))),
        Store::Absent => (None, None),
    };
    if let Some(writer) = writer {
        let event = RunEvent::Finished(RunFinished {
            seq: ticket,
            info: writer.wants_descriptions().then(|| case.info()),
            record: &record,
        });
        let result = writer.consume(&event);
        problem = written(writer, (ticket, case, run), (true, in_slot), result);
    }
    {
        let mut process = process();
        if !in_slot {
            if let Some(position) = process.in_flight.iter().position(|f| f.ticket == ticket) {
                process.in_flight.swap_remove(position);
            }
            if process.records.capacity() == 0 && !settings.per_test {
                // Room for every run of the binary's cases at once: a growing vector of
                // records would copy them all each time it doubles. (A nextest process holds
                // one run; runs in slots keep no record here.)
                process.records.reserve(registry::run_count());
            }
        }
        process.records.push((ticket, record));
    }
    if let Some(writer) = writer {
        fold_if_due(writer, settings);
    }
    problem
}

/// Records the end of run `ticket`, whose start is in a slot, when it ended with nothing but
/// its outcome, time and cost: in its slot alone, with no record built and no lock taken.
/// Returns whether it did; when it did not, [`finished`] records the run.
pub(crate) fn ended_in_slot(
    ticket: u64,
    outcome: Outcome,
    elapsed: Duration,
    cost: f64,
    settings: &'static Settings,
) -> bool {
    let Some(writer) = joined() else {
        return false;
    };
    let record = Record {
        outcome,
        elapsed: elapsed.as_secs_f64(),
        cost,
        ..Record::default()
    };
    let event = RunEvent::Ended(RunFinished {
        seq: ticket,
        info: None,
        record: &record,
    });
    if writer.consume(&event).is_err() {
        return false;
    }
    fold_if_due(writer, settings);
    true
}

/// Folds this process's runs into the session report when a batch is due.
fn fold_if_due(writer: &SessionWriter, settings: &Settings) {
    if let Err(error) = writer.fold_if_due(|| in_memory(writer, settings)) {
        warn_once("update the session report", &error);
    }
}

/// Waits until `delay` has passed since the previous run of this process started; the first
/// run never waits.
pub(crate) fn space_start(delay: Duration) {
    if delay.is_zero() {
        return;
    }
    let mut last = SPACING.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(previous) = *last {
        let ready = previous + delay;
        let now = Instant::now();
        if ready > now {
            std::thread::sleep(ready - now);
        }
    }
    *last = Some(Instant::now());
}

/// At most this many characters of a message are kept in a record: a backstop past the
/// runner's own cap of a failure's message (4 KiB and 40 lines), which leaves room for the
/// frames `PROB_BACKTRACE` adds after it.
const MESSAGE_LIMIT: usize = 8192;

/// `ending` as the record of run `run` of `case`: its identity filled in, its usage one entry
/// per model, its message cut to [`MESSAGE_LIMIT`], and its usage's cost added to its own.
fn to_record(case: &'static Case, run: u32, attempt: u32, ending: Record) -> Record {
    let bench = case.bench;
    // One entry per model keeps a record's size bounded however many calls a run makes.
    let usage: Vec<TokenUsage> = if ending.usage.len() <= 1 {
        ending.usage
    } else {
        let mut per_model: OrderedMap<UsageTotals> = OrderedMap::default();
        for usage in &ending.usage {
            per_model.entry(&usage.model).add(usage);
        }
        per_model
            .0
            .into_iter()
            .map(|(model, totals)| TokenUsage {
                model,
                input_tokens: totals.input_tokens,
                output_tokens: totals.output_tokens,
                cached_input_tokens: totals.cached_input_tokens,
                cost: totals.cost,
            })
            .collect()
    };
    Record {
        case: Cow::Borrowed(case.row_id),
        package: Cow::Borrowed(bench.package()),
        module: Cow::Borrowed(bench.module()),
        run,
        attempt,
        outcome: ending.outcome,
        message: ending.message.map(|message| {
            if message.chars().count() > MESSAGE_LIMIT {
                let mut cut: String = message.chars().take(MESSAGE_LIMIT).collect();
                cut.push('…');
                cut
            } else {
                message
            }
        }),
        location: ending.location,
        elapsed: ending.elapsed,
        cost: usage.iter().fold(ending.cost, |total, usage| {
            crate::types::sum::saturating_add(total, usage.cost)
        }),
        usage,
        waited: ending.waited,
        waited_for: ending.waited_for,
        replayed: ending.replayed,
    }
}
