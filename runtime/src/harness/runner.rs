//! Executes one run: setup, spacing, the body under `catch_unwind`, classification, and the
//! record. Every generated test item is a single call into [`run`] or [`run_async`], so this is
//! the hot path.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Once};
use std::task::{Context, Poll};
use std::time::Instant;

use crate::harness::recorder::{self, Ending};
use crate::harness::recording::RecordError;
use crate::harness::registry::{self, Case};
use crate::harness::settings;
use crate::types::stats::ErrorPolicy;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

/// What a bench function may return: `()` or `Result<(), E: Debug>`.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "a `#[probability]`, `#[probtest::setup]` or `#[probtest::teardown]` function must return `()` or `Result<(), E>` with `E: Debug`, not `{Self}`",
    label = "this return type is not supported"
)]
pub trait BenchReturn {
    /// `Err` holds the error's `Debug` text.
    fn into_result(self) -> Result<(), String>;
}

impl BenchReturn for () {
    fn into_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: std::fmt::Debug> BenchReturn for Result<(), E> {
    fn into_result(self) -> Result<(), String> {
        self.map_err(|error| format!("{error:?}"))
    }
}

/// The state of one run in progress, shared with handles given to spawned threads.
#[derive(Default)]
pub(crate) struct RunState {
    data: Mutex<RunData>,
    /// What the run waited for limits (`harness::limits`); apart from `data`, which the panic
    /// hook locks, since a timeout's watcher reads it while the body runs.
    pub(crate) waits: Mutex<crate::harness::limits::Waits>,
    /// The run's case and number, for the cassette (`harness::cache`).
    pub(crate) origin: Option<(&'static Case, u32)>,
}

#[derive(Default)]
struct RunData {
    finished: bool,
    usage: Vec<TokenUsage>,
    cost: f64,
    /// The cost replayed from the cassette (`harness::cache`), part of `cost` and `usage`'s;
    /// `Some` once anything was replayed.
    replayed: Option<f64>,
    panic: Option<PanicNote>,
}

/// What the panic hook saw of the panic that ended a run.
struct PanicNote {
    message: String,
    location: Option<String>,
    assertion: bool,
    /// The user's frames, with `PROB_BACKTRACE` (`harness::frames`).
    frames: Option<String>,
}

impl RunState {
    fn lock(&self) -> MutexGuard<'_, RunData> {
        self.data
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    pub(crate) fn add_usage(&self, usage: TokenUsage) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        crate::harness::cache::note_usage(&usage);
        data.usage.push(usage);
        Ok(())
    }

    /// Adds usage and cost replayed from the cassette, noted as replayed.
    pub(crate) fn add_replayed(
        &self,
        usage: Vec<TokenUsage>,
        cost: f64,
    ) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        let replayed = usage.iter().fold(cost, |sum, entry| sum + entry.cost);
        data.usage.extend(usage);
        data.cost = crate::types::sum::saturating_add(data.cost, cost);
        let total = data.replayed.unwrap_or(0.0);
        data.replayed = Some(crate::types::sum::saturating_add(total, replayed));
        Ok(())
    }

    pub(crate) fn add_cost(&self, amount: f64) -> Result<(), RecordError> {
        let mut data = self.lock();
        if data.finished {
            return Err(RecordError::RunFinished);
        }
        crate::harness::cache::note_cost(amount);
        data.cost = crate::types::sum::saturating_add(data.cost, amount);
        Ok(())
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<RunState>>> = const { RefCell::new(None) };
    /// Set by probtest's assertion macros just before they panic.
    static ASSERTING: Cell<bool> = const { Cell::new(false) };
}

pub(crate) fn current() -> Option<Arc<RunState>> {
    CURRENT
        .try_with(|current| current.borrow().clone())
        .ok()
        .flatten()
}

/// Makes `state` the current run of this thread while `f` runs.
fn with_current<T>(state: &Arc<RunState>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Arc<RunState>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            let _ = CURRENT.try_with(|current| *current.borrow_mut() = previous);
        }
    }
    let _ = ASSERTING.try_with(|flag| flag.set(false));
    let previous = CURRENT.with(|current| current.borrow_mut().replace(state.clone()));
    let _restore = Restore(previous);
    f()
}

/// Marks the panic about to happen on this thread as a failed assertion.
pub(crate) fn mark_assertion() {
    let _ = ASSERTING.try_with(|flag| flag.set(true));
}

/// Installs the panic hook that notes each run's panic message and location, then defers to
/// the hook that was there before (so libtest still prints the panic as usual).
fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let assertion = ASSERTING
                .try_with(|flag| flag.replace(false))
                .unwrap_or(false);
            if let Some(state) = current() {
                let message = panic_message(info.payload());
                let location = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let frames = crate::harness::frames::capture();
                state.lock().panic = Some(PanicNote {
                    assertion: assertion || is_std_assertion(&message),
                    message,
                    location,
                    frames,
                });
            }
            previous(info);
        }));
    });
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "the panic payload is not a string".to_string()
    }
}

/// Whether a panic message is one of std's assertion messages (raised from a helper function,
/// outside the bench body's own assertion macros), or pretty_assertions'.
fn is_std_assertion(message: &str) -> bool {
    message.starts_with("assertion failed: ") || message.starts_with("assertion `left ")
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// A run that has started: registered as in flight, its setup done, its start spaced.
struct Active {
    case: &'static Case,
    run: u32,
    ticket: u64,
    state: Arc<RunState>,
    started: Instant,
    /// Why the run cannot be recorded, once that is known: its item fails with it.
    problem: std::cell::RefCell<Option<String>>,
}

/// Why a run ended without passing, once recorded: how to make the test item fail too.
enum Failure {
    Panic(Box<dyn Any + Send>),
    Message(String),
}

impl Active {
    /// The run's start, recorded.
    fn begin(case: &'static Case, run: u32) -> Active {
        // Under nextest the process's run was started before `main` (see `startup`).
        let started = crate::harness::startup::take(case, run)
            .unwrap_or_else(|| recorder::started(case, run));
        let state = Arc::new(RunState {
            origin: Some((case, run)),
            ..RunState::default()
        });
        Active {
            case,
            run,
            ticket: started.ticket,
            state,
            started: Instant::now(),
            problem: std::cell::RefCell::new(started.problem),
        }
    }

    /// A run `PROB_STOP` skips (`harness::stopping`): started and recorded as stopped, with no
    /// setup, spacing or body, then judged as any run of its case.
    fn skip(case: &'static Case, run: u32, note: String) -> Option<Failure> {
        let active = Active::begin(case, run);
        active.record(Outcome::Stopped, Some(note), None);
        active.judge(Outcome::Stopped, None)
    }

    fn start(case: &'static Case, run: u32) -> Result<Active, String> {
        install_panic_hook();
        let active = Active::begin(case, run);
        let settings = settings::get(&case.bench.config);
        let timeout_problem = crate::harness::timeout::of(case).err().or_else(|| {
            crate::harness::frames::enabled()
                .as_ref()
                .err()
                .map(String::as_str)
        });
        let ready = match settings.problem.as_deref().or(timeout_problem) {
            Some(problem) => Err(problem.to_string()),
            None => {
                registry::ensure_setup(case.bench).map(|()| recorder::space_start(settings.delay))
            }
        };
        match ready {
            Ok(()) => Ok(Active {
                started: Instant::now(),
                ..active
            }),
            Err(message) => {
                active.record(Outcome::Error, Some(message.clone()), None);
                let problem = active.problem.take();
                Err(problem.map_or(message.clone(), |problem| format!("{message}\n{problem}")))
            }
        }
    }

    /// Classifies the body's result, records it, and says how the test item must end.
    fn finish(self, result: Result<Result<(), String>, Box<dyn Any + Send>>) -> Option<Failure> {
        let (outcome, failure) = self.classify(result);
        self.judge(outcome, failure)
    }

    /// How the test item of a run recorded as `outcome` must end.
    fn judge(self, outcome: Outcome, failure: Option<Failure>) -> Option<Failure> {
        if let Some(problem) = self.problem.take() {
            // A run the session does not hold fails its item, whatever its outcome, so that
            // libtest and nextest show why; a failing run's own panic stays the item's failure,
            // with this beside it in the captured output.
            return Some(match failure {
                None => Failure::Message(problem),
                Some(failure) => {
                    eprintln!("{problem}");
                    failure
                }
            });
        }
        let settings = settings::get(&self.case.bench.config);
        let gate = crate::types::stats::stopping::judged_gate(
            crate::model::effective_gate(self.case.bench.gate(), &settings.stats),
            self.case.bench.needs_every_run(),
            &settings.stats,
        );
        let (counts, last_run) = self.case.count(outcome);
        let Some(gate) = gate else {
            if self.case.bench.has_margin()
                || crate::harness::margins::baseline_judges(self.case, settings)
            {
                return self.judge_margin(outcome, failure, settings, last_run);
            }
            return failure;
        };
        if self.case.bench.has_verdict_item() {
            // The case's verdict item judges it: every run is a sample. An error still fails
            // its item unless errors are left out of the sample.
            return match outcome {
                Outcome::Error if settings.stats.errors == ErrorPolicy::Count => failure,
                _ => None,
            };
        }
        // In a gated case a run is a sample, not a verdict. Where nothing will judge the
        // verdict (a plain nextest run, one process per test), failing runs keep failing.
        let judged_here = !settings.per_test && !settings.defer_verdicts;
        let failure = match outcome {
            Outcome::Pass | Outcome::Stopped => None,
            Outcome::Fail if judged_here || settings.defer_verdicts => None,
            Outcome::Fail => failure,
            Outcome::Error if settings.stats.errors == ErrorPolicy::Exclude => None,
            Outcome::Error => failure,
        };
        if !(judged_here && last_run) {
            return failure;
        }
        // The case's last run in this process judges the case, and fails when the verdict does.
        let [passes, fails, errors] = counts;
        let verdict = gate.judge(&settings.stats, passes, fails, errors);
        if failure.is_none() && verdict.fails(settings.stats.undecided) {
            return Some(Failure::Message(crate::harness::verdict::message(
                self.case.row_id,
                &verdict,
            )));
        }
        failure
    }

    /// As a gated case's run, for a case whose function's margin judges it: a failed run is a
    /// sample, and the function's last run in this process judges the margin.
    fn judge_margin(
        &self,
        outcome: Outcome,
        failure: Option<Failure>,
        settings: &crate::harness::settings::Settings,
        last_run: bool,
    ) -> Option<Failure> {
        if self.case.bench.has_margin_item() {
            // The function's margin item judges the margins: every run is a sample.
            return match outcome {
                Outcome::Error if settings.stats.errors == ErrorPolicy::Count => failure,
                _ => None,
            };
        }
        let judged_here = !settings.per_test && !settings.defer_verdicts;
        let failure = match outcome {
            Outcome::Fail if judged_here || settings.defer_verdicts => None,
            Outcome::Error if settings.stats.errors == ErrorPolicy::Exclude => None,
            _ => failure,
        };
        if failure.is_some() || !(judged_here && last_run) {
            return failure;
        }
        crate::harness::margins::judge(self.case, settings).map(Failure::Message)
    }

    /// Records the body's result and says how the test item would end on its own.
    fn classify(
        &self,
        result: Result<Result<(), String>, Box<dyn Any + Send>>,
    ) -> (Outcome, Option<Failure>) {
        match result {
            Ok(Ok(())) => {
                self.record(Outcome::Pass, None, None);
                (Outcome::Pass, None)
            }
            Ok(Err(error)) => {
                let message = format!("the bench returned an error: {error}");
                self.record(Outcome::Error, Some(first_line(&message)), None);
                (Outcome::Error, Some(Failure::Message(message)))
            }
            Err(payload) => {
                let note = self.state.lock().panic.take();
                let (outcome, message, location) = match note {
                    Some(note) => (
                        if note.assertion {
                            Outcome::Fail
                        } else {
                            Outcome::Error
                        },
                        // Only the first line of the payload is kept: later lines may hold
                        // anything the program printed into it, secrets included.
                        match note.frames {
                            Some(frames) => format!("{}\n{frames}", first_line(&note.message)),
                            None => first_line(&note.message),
                        },
                        note.location,
                    ),
                    // Another panic hook replaced ours: classify from the payload alone.
                    None => {
                        let message = panic_message(payload.as_ref());
                        let outcome = if is_std_assertion(&message) {
                            Outcome::Fail
                        } else {
                            Outcome::Error
                        };
                        (outcome, first_line(&message), None)
                    }
                };
                self.record(outcome, Some(message), location);
                (outcome, Some(Failure::Panic(payload)))
            }
        }
    }

    fn record(&self, outcome: Outcome, message: Option<String>, location: Option<String>) {
        let (usage, cost, replayed) = {
            let mut data = self.state.lock();
            data.finished = true;
            (std::mem::take(&mut data.usage), data.cost, data.replayed)
        };
        let (waited, waited_for) = {
            let waits = self.state.waits.lock().unwrap_or_else(|p| p.into_inner());
            // Most runs take no limit: nothing to add up.
            if waits.since.is_none() && waits.by_key.is_empty() {
                (std::time::Duration::ZERO, None)
            } else {
                (
                    waits.total(Instant::now()),
                    waits.longest().map(str::to_string),
                )
            }
        };
        let problem = recorder::finished(
            self.ticket,
            self.case,
            self.run,
            Ending {
                outcome,
                message,
                location,
                elapsed: self.started.elapsed().saturating_sub(waited),
                cost,
                usage,
                waited,
                waited_for,
                replayed,
            },
        );
        if let Some(problem) = problem {
            self.problem.borrow_mut().get_or_insert(problem);
        }
        registry::run_finished(self.case.bench);
    }
}

/// How the item of a run ends when `PROB_STOP` has decided its case; `None` to run it. Off by
/// default, when it costs one comparison.
#[inline]
fn stopped(case: &'static Case, run: u32) -> Option<Option<Failure>> {
    let settings = settings::get(&case.bench.config);
    if settings.stats.stop.is_off() {
        return None;
    }
    let note = crate::harness::stopping::decision(case, settings)?;
    Some(Active::skip(case, run, note))
}

#[track_caller]
fn fail_item(failure: Option<Failure>) {
    match failure {
        None => {}
        Some(Failure::Panic(payload)) => resume_unwind(payload),
        Some(Failure::Message(message)) => panic!("{message}"),
    }
}

/// Runs one synchronous run of `case`. Generated test items call this and nothing else.
#[doc(hidden)]
#[track_caller]
pub fn run<R: BenchReturn + 'static>(case: &'static Case, run: u32, body: fn() -> R) {
    let _ended = case.item_end();
    if let Some(failure) = stopped(case, run) {
        return fail_item(failure);
    }
    let active = match Active::start(case, run) {
        Ok(active) => active,
        Err(message) => panic!("{message}"),
    };
    let limit = case.bench.limit();
    let result = match crate::harness::timeout::of(case) {
        Ok(None) | Err(_) if limit.is_none() => {
            with_current(&active.state, || catch_unwind(|| body().into_result()))
        }
        Ok(None) | Err(_) => with_current(&active.state, || catch_unwind(|| limited(limit, body))),
        Ok(Some(timeout)) => {
            let state = active.state.clone();
            let on_thread =
                Box::new(move || with_current(&state, || catch_unwind(|| limited(limit, body))));
            let timed = crate::harness::timeout::run_on_thread(
                &active.state,
                active.started,
                timeout,
                on_thread,
            );
            match timed {
                Some(result) => result,
                None => {
                    crate::harness::timeout::note_left_behind(case.row_id, run, timeout);
                    active.time_out(timeout)
                }
            }
        }
    };
    fail_item(active.finish(result));
}

/// The body, with the attribute's limit (`limit = "key"`) held around it.
fn limited<R: BenchReturn>(limit: Option<&'static str>, body: fn() -> R) -> Result<(), String> {
    let _guard = limit.map(crate::harness::limits::limit);
    body().into_result()
}

impl Active {
    /// The result of a run that exceeded its timeout: an error with its message, as if the body
    /// had panicked with it, so that gates judge it as any other error.
    fn time_out(
        &self,
        timeout: std::time::Duration,
    ) -> Result<Result<(), String>, Box<dyn Any + Send>> {
        let message = crate::harness::timeout::message(timeout);
        self.state.lock().panic = Some(PanicNote {
            message: message.clone(),
            location: None,
            assertion: false,
            frames: None,
        });
        Err(Box::new(message))
    }
}

/// Runs one asynchronous run of `case` inside the test attribute's runtime.
#[doc(hidden)]
#[track_caller]
pub fn run_async<F, R>(case: &'static Case, run: u32, body: F) -> impl Future<Output = ()>
where
    F: Future<Output = R>,
    R: BenchReturn,
{
    let skipped = stopped(case, run);
    let started = skipped.is_none().then(|| Active::start(case, run));
    async move {
        let _ended = case.item_end();
        let active = match started {
            None => return fail_item(skipped.flatten()),
            Some(Ok(active)) => active,
            Some(Err(message)) => panic!("{message}"),
        };
        let limit = case.bench.limit();
        let body = async move {
            // Blocking while it waits: the attribute's limit is taken before the body starts.
            let _guard = limit.map(crate::harness::limits::limit);
            body.await
        };
        let body = CatchUnwind {
            future: Box::pin(body),
            state: active.state.clone(),
        };
        let result = match crate::harness::timeout::of(case) {
            Ok(None) | Err(_) => body.await.map(BenchReturn::into_result),
            Ok(Some(timeout)) => {
                let deadline = crate::harness::timeout::Deadline::new(
                    body,
                    active.state.clone(),
                    active.started,
                    timeout,
                );
                match deadline.await {
                    Some(result) => result.map(BenchReturn::into_result),
                    None => active.time_out(timeout),
                }
            }
        };
        fail_item(active.finish(result));
    }
}

/// Polls a future with the run current on whichever thread polls it, catching panics.
struct CatchUnwind<F> {
    future: Pin<Box<F>>,
    state: Arc<RunState>,
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let future = &mut this.future;
        match with_current(&this.state, || {
            catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)))
        }) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

// `F` is only ever accessed through the pinned box.
impl<F> Unpin for CatchUnwind<F> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_assertion_messages_are_recognised() {
        assert!(is_std_assertion("assertion failed: x > 1"));
        assert!(is_std_assertion(
            "assertion `left == right` failed\n  left: 1\n right: 2"
        ));
        assert!(is_std_assertion("assertion `left != right` failed: custom"));
        assert!(!is_std_assertion(
            "called `Option::unwrap()` on a `None` value"
        ));
        assert!(!is_std_assertion("index out of bounds"));
    }

    #[test]
    fn bench_returns_convert() {
        assert_eq!(().into_result(), Ok(()));
        assert_eq!(Ok::<(), String>(()).into_result(), Ok(()));
        assert_eq!(
            Err::<(), _>("boom").into_result(),
            Err("\"boom\"".to_string())
        );
    }
}
