//! This process's recorder: each run's start and end go to the session store as they happen,
//! and into memory for the summary this process prints at exit. The session report, when one
//! is asked for, is patched run by run in a process that holds one run (nextest's), and folded
//! in batches in a process that runs many (libtest's), at most every few hundred milliseconds
//! and at exit.
//!
//! Layer: harness.

use std::borrow::Cow;
use std::io;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::harness::registry::{self, Case};
use crate::harness::settings::{self, Settings};
use crate::model::record::died_record;
use crate::model::{CaseInfo, Record, Report};
use crate::render;
use crate::store::writer::{RunEvent, RunFinished, RunStarted, SessionWriter};
use crate::store::{self, Session, SessionData};
use crate::types::ordered_map::OrderedMap;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;
use crate::types::usage::UsageTotals;

/// How a run ended, as the runner reports it.
pub(crate) struct Ending {
    pub(crate) outcome: Outcome,
    pub(crate) message: Option<String>,
    pub(crate) location: Option<String>,
    pub(crate) elapsed: Duration,
    pub(crate) cost: f64,
    pub(crate) usage: Vec<TokenUsage>,
}

struct InFlight {
    ticket: u64,
    case: &'static Case,
    run: u32,
    started: Instant,
}

struct Process {
    next_ticket: u64,
    in_flight: Vec<InFlight>,
    records: Vec<Record>,
    /// Cases this process ran, in first-run order; each is described to the store once.
    cases: Vec<&'static Case>,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    next_ticket: 0,
    in_flight: Vec::new(),
    records: Vec::new(),
    cases: Vec::new(),
});

/// Separate from [`PROCESS`] so that a run waiting out the delay does not block others from
/// recording.
static SPACING: Mutex<Option<Instant>> = Mutex::new(None);

fn process() -> MutexGuard<'static, Process> {
    PROCESS.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// The session's writers as this process holds them; `None` when the store could not be
/// created (the summary and report then cover this process alone, as written at exit).
static WRITER: OnceLock<Option<SessionWriter>> = OnceLock::new();

fn writer(settings: &Settings) -> Option<&'static SessionWriter> {
    WRITER
        .get_or_init(|| match open_writer(settings) {
            Ok(writer) => Some(writer),
            Err(error) => {
                eprintln!(
                    "probtest: cannot record this session ({error}); the summary and report cover this process only"
                );
                None
            }
        })
        .as_ref()
}

/// The target directory this test binary was built in.
fn target_dir() -> io::Result<std::path::PathBuf> {
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

fn open_writer(settings: &Settings) -> io::Result<SessionWriter> {
    let target = target_dir()?;
    let session = Session::new(&store::sessions_dir(&target), &settings.session_key);
    let report = settings
        .json
        .as_ref()
        .map(|path| (path.display.clone(), path.resolved.clone()));
    SessionWriter::open(session, settings.per_test, report, &settings.stats)
}

/// Reports a failed write once, then keeps quiet: a broken store must not fail the tests.
fn warn_once(what: &str, error: &io::Error) {
    static WARNED: std::sync::Once = std::sync::Once::new();
    WARNED.call_once(|| eprintln!("probtest: could not {what}: {error}"));
}

/// Notes a run as started; returns the ticket that [`finished`] takes.
pub(crate) fn started(case: &'static Case, run: u32) -> u64 {
    // At the first run: a process that runs nothing has nothing to do at exit, and its start-up
    // runs no probtest code at all.
    static EXIT_HOOK: std::sync::Once = std::sync::Once::new();
    EXIT_HOOK.call_once(register_exit_hook);
    let settings = settings::get(&case.bench.config);
    let (ticket, first_of_case) = {
        let mut process = process();
        let ticket = process.next_ticket;
        process.next_ticket += 1;
        process.in_flight.push(InFlight {
            ticket,
            case,
            run,
            started: Instant::now(),
        });
        let first = case.first_sighting();
        if first {
            process.cases.push(case);
        }
        (ticket, first)
    };
    if let Some(writer) = writer(settings) {
        let slot_ref = case.slot_ref();
        // Built only when needed: this runs for every run.
        let needs_info = first_of_case || writer.wants_descriptions() || slot_ref.get().is_none();
        let info = needs_info.then(|| case.info());
        if let (true, Some(info)) = (first_of_case, info) {
            warn_if_infeasible(info, settings);
        }
        let event = RunEvent::Started(RunStarted {
            seq: ticket,
            identity: writer.writes_line_for(ticket).then(|| case.identity()),
            run,
            attempt: settings.attempt,
            info,
            first_in_process: first_of_case,
            slot_ref,
        });
        if let Err(error) = writer.consume(&event) {
            warn_once("write to the session store", &error);
        }
    }
    ticket
}

/// Says, before the case's runs are spent, that its gate cannot pass with them.
fn warn_if_infeasible(info: &CaseInfo, settings: &Settings) {
    if let Some(warning) = crate::model::infeasible(info, &settings.stats) {
        use std::io::Write;
        // Past libtest's capture: the warning matters most when the runs pass.
        let _ = writeln!(std::io::stderr().lock(), "probtest: warning: {warning}");
    }
}

/// Records the end of the run `ticket`.
pub(crate) fn finished(ticket: u64, case: &'static Case, run: u32, ending: Ending) {
    let settings = settings::get(&case.bench.config);
    let record = to_record(case, run, settings.attempt, ending);
    let writer = writer(settings);
    if let Some(writer) = writer {
        let event = RunEvent::Finished(RunFinished {
            seq: ticket,
            info: writer.wants_descriptions().then(|| case.info()),
            record: &record,
        });
        if let Err(error) = writer.consume(&event) {
            warn_once("write to the session store", &error);
        }
    }
    {
        let mut process = process();
        if let Some(position) = process.in_flight.iter().position(|f| f.ticket == ticket) {
            process.in_flight.swap_remove(position);
        }
        process.records.push(record);
    }
    if let Some(writer) = writer {
        if let Err(error) = writer.fold_if_due(|| in_memory(writer, settings)) {
            warn_once("update the session report", &error);
        }
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

/// At most this many characters of a message are kept in a record.
const MESSAGE_LIMIT: usize = 1000;

fn to_record(case: &'static Case, run: u32, attempt: u32, ending: Ending) -> Record {
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
        elapsed: ending.elapsed.as_secs_f64(),
        cost: ending.cost + usage.iter().map(|u| u.cost).sum::<f64>(),
        usage,
    }
}

/// What this process recorded, as the store would give it back: its cases, its finished runs,
/// and its runs in flight as errors that the report keeps a place for.
fn in_memory(writer: &SessionWriter, settings: &Settings) -> SessionData {
    let process = process();
    let cases = process
        .cases
        .iter()
        .map(|case| case.info().clone())
        .collect();
    let mut records = process.records.clone();
    let mut open = vec![None; records.len()];
    for flight in &process.in_flight {
        records.push(flight.died(settings.attempt));
        open.push(Some((writer.proc_id().to_string(), flight.ticket)));
    }
    as_session(settings, cases, records, open)
}

/// What a process alone in its session holds, as the store would give it back.
fn as_session(
    settings: &Settings,
    cases: Vec<CaseInfo>,
    records: Vec<Record>,
    open: Vec<Option<(String, u64)>>,
) -> SessionData {
    SessionData {
        cases,
        records,
        open,
        per_test: settings.per_test,
        report: settings.json.as_ref().map(|path| path.display.clone()),
        stats: settings.stats.clone(),
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

/// Takes everything this process recorded, turning runs still in flight into errors, with the
/// descriptions of the cases they belong to.
fn take_records() -> (Vec<CaseInfo>, Vec<Record>) {
    let mut process = process();
    let in_flight = std::mem::take(&mut process.in_flight);
    let mut records = std::mem::take(&mut process.records);
    let cases = std::mem::take(&mut process.cases);
    drop(process);
    let attempt = settings::peek().map_or(1, |s| s.attempt);
    for flight in in_flight {
        let mut died = flight.died(attempt);
        died.elapsed = flight.started.elapsed().as_secs_f64();
        records.push(died);
    }
    (
        cases.into_iter().map(|case| case.info().clone()).collect(),
        records,
    )
}

fn register_exit_hook() {
    // SAFETY: `on_exit` only touches probtest's own statics and runs its work on a fresh
    // thread, so it does not depend on the exiting thread's thread-locals.
    #[allow(unsafe_code)]
    unsafe {
        dtor::at_binary_exit(on_exit);
    }
}

extern "C" fn on_exit() {
    if !exit_work_pending() {
        return;
    }
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

/// Whether anything is left to do at exit. A nextest process whose run went to the store (and
/// to the session report) has nothing left, and exits as fast as a plain test.
fn exit_work_pending() -> bool {
    let Some(settings) = settings::peek() else {
        return registry::has_teardowns();
    };
    let recorded = WRITER.get().is_some_and(Option::is_some);
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
    let writer = WRITER.get().and_then(Option::as_ref);
    if settings.per_test && writer.is_some() {
        // One nextest process holds one run: its section would say nothing the session's
        // summary (`cargo probtest run --nextest`) does not, and its run is already stored.
        return;
    }
    let (cases, records) = take_records();
    if records.is_empty() || (!settings.summary && settings.json.is_none()) {
        return;
    }
    // This process's last runs folded into the session report: from what this process
    // holds when the session is its alone (its runs in flight are errors now, with no place to
    // keep: nothing will finish them).
    let folded = writer.filter(|writer| writer.keeps_report()).map(|writer| {
        writer.fold(|| {
            let open = vec![None; records.len()];
            as_session(settings, cases.clone(), records.clone(), open)
        })
    });
    let report = Report::build(cases, records, &settings.stats);
    let mut report_line = None;
    if let Some(path) = &settings.json {
        let written = match folded {
            Some(folded) => folded,
            None => report.write_atomically(&path.resolved),
        };
        match written {
            Ok(()) => report_line = Some(path.display.clone()),
            Err(error) => eprintln!(
                "probtest: could not write the report to {}: {error}",
                path.resolved.display()
            ),
        }
    }
    if !settings.summary {
        return;
    }
    let options = render::Options {
        color: render::color_enabled(),
        report_path: report_line.as_deref(),
    };
    let text = render::summary(&report, &options);
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
