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
use crate::store::live::{Change, ReportFile};
use crate::store::{self, ProcessFile, Session};
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

/// Where this process's runs are persisted; `None` when the store could not be created (the
/// summary and report then cover this process alone, as written at exit).
struct Recorder {
    file: ProcessFile,
    report: Option<ReportFile>,
}

static RECORDER: OnceLock<Option<Recorder>> = OnceLock::new();

fn recorder(settings: &Settings) -> Option<&'static Recorder> {
    RECORDER
        .get_or_init(|| match open_recorder(settings) {
            Ok(recorder) => Some(recorder),
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

fn open_recorder(settings: &Settings) -> io::Result<Recorder> {
    let target = target_dir()?;
    let session = Session::new(&store::sessions_dir(&target), &settings.session);
    let report_path = settings.json.as_ref().map(|path| path.display.clone());
    let file = ProcessFile::create(
        session.clone(),
        settings.per_test,
        report_path,
        &settings.stats,
    )?;
    let report = settings
        .json
        .as_ref()
        .map(|path| ReportFile::new(session, path.resolved.clone(), settings.stats.clone()));
    Ok(Recorder { file, report })
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
    if let Some(recorder) = recorder(settings) {
        let bench = case.bench;
        // Only a process that holds one run (nextest's) patches the session report run by run;
        // a process that runs many folds its runs into it in batches (`fold_into_report`).
        let live_report = recorder.report.as_ref().filter(|_| settings.per_test);
        // Built only when needed: this runs for every run.
        let info = (first_of_case || live_report.is_some()).then(|| case.info());
        if let (true, Some(info)) = (first_of_case, &info) {
            warn_if_infeasible(info, settings);
        }
        // `described`: the session report says another process already described the case.
        // Returns whether it described the case.
        let persist = |described: bool| {
            let describe = first_of_case && !described;
            if let (true, Some(info)) = (describe, &info) {
                recorder.file.queue_case(info)?;
            }
            recorder
                .file
                .append_start(ticket, case.identity(), run, settings.attempt)?;
            Ok(describe)
        };
        match (live_report, &info) {
            (Some(report), Some(info)) => {
                let provisional = died_record(
                    Cow::Borrowed(bench.package()),
                    Cow::Borrowed(bench.module()),
                    Cow::Borrowed(case.row),
                    run,
                    settings.attempt,
                );
                let change = Change::Start {
                    proc_id: recorder.file.proc_id(),
                    seq: ticket,
                    info,
                    provisional: &provisional,
                };
                if let Err(error) = report.apply(&change, persist) {
                    warn_once("update the session report", &error);
                }
            }
            _ => {
                if let Err(error) = persist(false) {
                    warn_once("write to the session store", &error);
                }
            }
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
    let recorder = recorder(settings);
    if let Some(recorder) = recorder {
        let persist = |_described: bool| recorder.file.append_end(ticket, &record).map(|()| false);
        match recorder.report.as_ref().filter(|_| settings.per_test) {
            Some(report) => {
                let change = Change::Finish {
                    proc_id: recorder.file.proc_id(),
                    seq: ticket,
                    info: case.info(),
                    record: &record,
                };
                if let Err(error) = report.apply(&change, persist) {
                    warn_once("update the session report", &error);
                }
            }
            None => {
                if let Err(error) = persist(false) {
                    warn_once("write to the session store", &error);
                }
            }
        }
    }
    {
        let mut process = process();
        if let Some(position) = process.in_flight.iter().position(|f| f.ticket == ticket) {
            process.in_flight.swap_remove(position);
        }
        process.records.push(record);
    }
    if let Some(report) = recorder.and_then(|recorder| recorder.report.as_ref()) {
        if !settings.per_test {
            fold_into_report(report);
        }
    }
}

/// The least time between two foldings of this process's runs into the session report, so
/// that a watcher sees progress while the runs cost no report work of their own.
const FOLD_EVERY: Duration = Duration::from_millis(300);

/// When this process last folded its runs into the session report, and what that took.
struct Folding {
    last: Option<Instant>,
    took: Duration,
}

static FOLDING: Mutex<Folding> = Mutex::new(Folding {
    last: None,
    took: Duration::ZERO,
});

/// Rebuilds the session report from the store when the last folding is long enough ago: at
/// the first finished run, then at most every [`FOLD_EVERY`], and never more often than ten
/// times what a folding takes, so that folding a large session costs its runs at most a tenth
/// of their time. The store has every run as it starts and ends, so a run whose process dies
/// before the next folding is an error in the report that the next process (or `cargo probtest
/// report`) writes. At exit the process folds once more.
fn fold_into_report(report: &ReportFile) {
    let mut folding = match FOLDING.try_lock() {
        Ok(folding) => folding,
        // Another thread is folding: this run is in the store already, and in its folding or
        // the next one.
        Err(std::sync::TryLockError::WouldBlock) => return,
        Err(std::sync::TryLockError::Poisoned(poison)) => poison.into_inner(),
    };
    let due = folding
        .last
        .is_none_or(|last| last.elapsed() >= FOLD_EVERY.max(folding.took * 10));
    if !due {
        return;
    }
    let began = Instant::now();
    if let Err(error) = report.rebuild() {
        warn_once("update the session report", &error);
    }
    folding.took = began.elapsed();
    folding.last = Some(Instant::now());
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
        case: Cow::Borrowed(case.row),
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

/// Takes everything this process recorded, turning runs still in flight into errors, with the
/// descriptions of the cases they belong to.
fn take_records() -> (Vec<CaseInfo>, Vec<Record>) {
    let mut process = process();
    let in_flight = std::mem::take(&mut process.in_flight);
    let mut records = std::mem::take(&mut process.records);
    let cases = std::mem::take(&mut process.cases);
    drop(process);
    for flight in in_flight {
        let attempt = settings::peek().map_or(1, |s| s.attempt);
        let bench = flight.case.bench;
        let mut died = died_record(
            Cow::Borrowed(bench.package()),
            Cow::Borrowed(bench.module()),
            Cow::Borrowed(flight.case.row),
            flight.run,
            attempt,
        );
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
    let recorded = RECORDER.get().is_some_and(Option::is_some);
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
    let recorder = RECORDER.get().and_then(Option::as_ref);
    if settings.per_test && recorder.is_some() {
        // One nextest process holds one run: its section would say nothing the session's
        // summary (`cargo probtest run --nextest`) does not, and its run is already stored.
        return;
    }
    let (cases, records) = take_records();
    if records.is_empty() || (!settings.summary && settings.json.is_none()) {
        return;
    }
    let report = Report::build(cases, records, &settings.stats);
    let mut report_line = None;
    if let Some(path) = &settings.json {
        let written = match recorder_report(recorder) {
            // Kept current run by run, in the order runs happened; put back in source order
            // now that this process has finished its share of the session.
            Some(session_report) => session_report.rebuild(),
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

fn recorder_report(recorder: Option<&Recorder>) -> Option<&ReportFile> {
    recorder.and_then(|recorder| recorder.report.as_ref())
}
