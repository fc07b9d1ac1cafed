//! The runs of this process: runs in flight, finished records, start spacing, and the exit hook
//! that prints the summary and writes the report.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::model::{CaseInfo, OrderedMap, Record, Report};
use crate::registry::{self, Case};
use crate::render;
use crate::settings;
use crate::status::Outcome;
use crate::usage::TokenUsage;

/// A finished run, as collected in memory.
pub(crate) struct RunRecord {
    pub(crate) case: &'static Case,
    pub(crate) run: u32,
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
    records: Vec<RunRecord>,
}

static PROCESS: Mutex<Process> = Mutex::new(Process {
    next_ticket: 0,
    in_flight: Vec::new(),
    records: Vec::new(),
});

/// Separate from [`PROCESS`] so that a run waiting out the delay does not block others from
/// recording.
static SPACING: Mutex<Option<Instant>> = Mutex::new(None);

fn process() -> MutexGuard<'static, Process> {
    PROCESS.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Notes a run as started; returns the ticket that [`finished`] takes.
pub(crate) fn started(case: &'static Case, run: u32) -> u64 {
    let mut process = process();
    let ticket = process.next_ticket;
    process.next_ticket += 1;
    process.in_flight.push(InFlight {
        ticket,
        case,
        run,
        started: Instant::now(),
    });
    ticket
}

/// Replaces the in-flight entry `ticket` with its record.
pub(crate) fn finished(ticket: u64, record: RunRecord) {
    let mut process = process();
    if let Some(position) = process.in_flight.iter().position(|f| f.ticket == ticket) {
        process.in_flight.swap_remove(position);
    }
    process.records.push(record);
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

/// The message of a run that started and never reported.
pub(crate) const DIED_MESSAGE: &str = "the test process died before the run finished";

/// Takes everything this process recorded, turning runs still in flight into errors, with the
/// descriptions of the cases they belong to.
fn take_records() -> (Vec<CaseInfo>, Vec<Record>) {
    let mut process = process();
    let in_flight = std::mem::take(&mut process.in_flight);
    let finished = std::mem::take(&mut process.records);
    drop(process);
    let died = in_flight.into_iter().map(|flight| RunRecord {
        case: flight.case,
        run: flight.run,
        outcome: Outcome::Error,
        message: Some(DIED_MESSAGE.to_string()),
        location: None,
        elapsed: flight.started.elapsed(),
        cost: 0.0,
        usage: Vec::new(),
    });
    let mut cases: Vec<&'static Case> = Vec::new();
    let records = finished
        .into_iter()
        .chain(died)
        .map(|record| {
            if !cases.iter().any(|known| std::ptr::eq(*known, record.case)) {
                cases.push(record.case);
            }
            to_record(record)
        })
        .collect();
    (cases.into_iter().map(case_info).collect(), records)
}

fn case_info(case: &'static Case) -> CaseInfo {
    let bench = case.bench;
    CaseInfo {
        case: case.row.to_string(),
        package: bench.package().to_string(),
        module: bench.module().to_string(),
        function: bench.function().to_string(),
        case_id: case.id.to_string(),
        file: bench.file().to_string(),
        line: bench.line(),
        index: case.index,
        runs: bench.runs(),
        params: OrderedMap(
            case.params
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
        ),
    }
}

fn to_record(record: RunRecord) -> Record {
    let bench = record.case.bench;
    Record {
        case: record.case.row.to_string(),
        package: bench.package().to_string(),
        module: bench.module().to_string(),
        run: record.run,
        attempt: 1,
        outcome: record.outcome,
        message: record.message,
        location: record.location,
        elapsed: record.elapsed.as_secs_f64(),
        cost: record.cost + record.usage.iter().map(|u| u.cost).sum::<f64>(),
        usage: record.usage,
    }
}

pub(crate) fn register_exit_hook() {
    // SAFETY: `on_exit` only touches probtest's own statics and runs its work on a fresh
    // thread, so it does not depend on the exiting thread's thread-locals.
    #[allow(unsafe_code)]
    unsafe {
        dtor::at_binary_exit(on_exit);
    }
}

extern "C" fn on_exit() {
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

/// Runs the remaining teardowns, then prints the summary and writes the report when at least
/// one run executed in this process.
fn finish_process() {
    registry::run_remaining_teardowns();
    let (cases, records) = take_records();
    if records.is_empty() {
        return;
    }
    let report = Report::build(cases, records);
    let mut report_line = None;
    if let Some(Ok(settings)) = settings::peek() {
        if let Some(path) = &settings.json {
            match report.write_atomically(&path.resolved) {
                Ok(()) => report_line = Some(path.display.clone()),
                Err(error) => eprintln!(
                    "probtest: could not write the report to {}: {error}",
                    path.resolved.display()
                ),
            }
        }
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
