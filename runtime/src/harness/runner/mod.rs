//! Executes one run: setup, spacing, the body under `catch_unwind`, classification, and the
//! record. Every generated test item is a single call into [`run`] or [`run_async`], so this is
//! the hot path.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind};
use std::time::Instant;

use crate::harness::context::{panic_message, with_current, PanicNote, RunCell, Spent};
use crate::harness::recorder;
use crate::harness::registry::{self, Case};
use crate::harness::settings::{self, Settings};
use crate::model::Record;
use crate::types::stats::ErrorPolicy;
use crate::types::status::Outcome;

mod future;
mod message;
mod panic;
mod quick;

pub use future::{run_async, run_async_item};
use message::kept;
use panic::{install_panic_hook, is_std_assertion};

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

/// A run that has started: registered as in flight, its setup done, its start spaced.
struct Active {
    case: &'static Case,
    run: u32,
    ticket: u64,
    /// Whether the run's start is in a slot (see `recorder::ended_in_slot`).
    in_slot: bool,
    /// The settings of the case's bench, looked up once for the whole run.
    settings: &'static Settings,
    cell: RunCell,
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
    fn begin(case: &'static Case, run: u32, settings: &'static Settings) -> Active {
        // Under nextest the process's run was started before `main` (see `startup`).
        let started = match crate::harness::startup::take(case, run) {
            Some(started) => started,
            None => recorder::started(case, run, settings),
        };
        let cell = RunCell::of_run(case, run);
        Active {
            case,
            run,
            ticket: started.ticket,
            in_slot: started.in_slot,
            settings,
            cell,
            started: Instant::now(),
            problem: std::cell::RefCell::new(started.problem),
        }
    }

    /// A run `PROB_STOP` skips (`harness::stop_check`): started and recorded as stopped, with no
    /// setup, spacing or body, then judged as any run of its case.
    fn skip(
        case: &'static Case,
        run: u32,
        settings: &'static Settings,
        note: String,
    ) -> Option<Failure> {
        let active = Active::begin(case, run, settings);
        active.record(Outcome::Stopped, Some(note), None);
        active.judge(Outcome::Stopped, None)
    }

    /// `timeout` is the case's, as `timeout::of` gives it.
    fn start(
        case: &'static Case,
        run: u32,
        settings: &'static Settings,
        timeout: &Result<Option<std::time::Duration>, &'static str>,
    ) -> Result<Active, String> {
        install_panic_hook();
        let active = Active::begin(case, run, settings);
        let problem = match (
            &settings.problem,
            timeout,
            crate::harness::frames::enabled(),
        ) {
            (Some(problem), _, _) => Some(problem.as_str()),
            (None, Err(problem), _) => Some(*problem),
            (None, Ok(_), Err(problem)) => Some(problem.as_str()),
            (None, Ok(_), Ok(_)) => None,
        };
        let ready = match problem {
            Some(problem) => Err(problem.to_string()),
            None => match registry::ensure_setup(case.bench) {
                Ok(()) => {
                    recorder::space_start(settings.delay);
                    Ok(())
                }
                Err(message) => Err(message),
            },
        };
        match ready {
            Ok(()) => Ok(Active {
                started: Instant::now(),
                ..active
            }),
            Err(message) => {
                active.record(Outcome::Error, Some(kept(&message)), None);
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
    fn judge(&self, outcome: Outcome, failure: Option<Failure>) -> Option<Failure> {
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
        let settings = self.settings;
        // Most cases have no gate of their own or from the settings: nothing to work out.
        let gated = self.case.bench.gate().is_some() || settings.stats.min_rate.is_some();
        let gate = gated
            .then(|| {
                crate::types::stats::stopping::judged_gate(
                    crate::model::effective_gate(self.case.bench.gate(), &settings.stats),
                    self.case.bench.needs_every_run(),
                    &settings.stats,
                )
            })
            .flatten();
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
                self.record(Outcome::Error, Some(kept(&message)), None);
                (Outcome::Error, Some(Failure::Message(message)))
            }
            Err(payload) => {
                let note = self.cell.made().and_then(|state| state.take_panic());
                let (outcome, message, location) = match note {
                    Some(note) => (
                        if note.assertion {
                            Outcome::Fail
                        } else {
                            Outcome::Error
                        },
                        // Every line, redacted and capped (`message`): later lines may hold
                        // anything the program put into it, secrets included.
                        match note.frames {
                            Some(frames) => format!("{}\n{frames}", kept(&note.message)),
                            None => kept(&note.message),
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
                        (outcome, kept(&message), None)
                    }
                };
                self.record(outcome, Some(message), location);
                (outcome, Some(Failure::Panic(payload)))
            }
        }
    }

    fn record(&self, outcome: Outcome, message: Option<String>, location: Option<String>) {
        // A run that asked for nothing made no state, and has nothing in one.
        let Spent {
            usage,
            cost,
            replayed,
            waited,
            waited_for,
        } = match self.cell.made() {
            None => Spent::NOTHING,
            Some(state) => state.finish(),
        };
        let elapsed = self.started.elapsed().saturating_sub(waited);
        // Most runs end with nothing but an outcome, a time and a cost: their slot takes them.
        let bare = message.is_none()
            && location.is_none()
            && usage.is_empty()
            && waited.is_zero()
            && replayed.is_none();
        if self.in_slot
            && bare
            && recorder::ended_in_slot(self.ticket, outcome, elapsed, cost, self.settings)
        {
            registry::run_finished(self.case.bench);
            return;
        }
        let problem = recorder::finished(
            self.ticket,
            self.case,
            self.run,
            self.settings,
            self.in_slot,
            Record {
                outcome,
                message,
                location,
                elapsed: elapsed.as_secs_f64(),
                cost,
                usage,
                waited: waited.as_secs_f64(),
                waited_for,
                replayed,
                ..Record::default()
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
fn stopped(case: &'static Case, run: u32, settings: &'static Settings) -> Option<Option<Failure>> {
    if settings.stats.stop.is_off() {
        return None;
    }
    let note = crate::harness::stop_check::decision(case, settings)?;
    Some(Active::skip(case, run, settings, note))
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
    let settings = settings::get(&case.bench.config);
    if quick::eligible(case.bench, settings) {
        if let Some(ticket) = recorder::started_in_slot(case, run, settings) {
            return quick::run(case, run, settings, ticket, body);
        }
    }
    let _ended = case.item_end();
    if let Some(failure) = stopped(case, run, settings) {
        return fail_item(failure);
    }
    let timeout = crate::harness::timeout::of(case);
    let active = match Active::start(case, run, settings, &timeout) {
        Ok(active) => active,
        Err(message) => panic!("{message}"),
    };
    let limit = case.bench.limit();
    let result = match timeout {
        Ok(None) | Err(_) if limit.is_none() => {
            with_current(&active.cell, || catch_unwind(|| body().into_result()))
        }
        Ok(None) | Err(_) => with_current(&active.cell, || catch_unwind(|| limited(limit, body))),
        Ok(Some(timeout)) => {
            let state = active.cell.state().clone();
            let on_thread = Box::new(move || {
                with_current(&RunCell::holding(state), || {
                    catch_unwind(|| limited(limit, body))
                })
            });
            let timed = crate::harness::timeout::run_on_thread(
                active.started,
                timeout,
                std::time::Duration::ZERO,
                on_thread,
                crate::harness::timeout::failed_body,
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
    /// had panicked with it, so that gates judge it as any other error. The run is abandoned:
    /// the limits' slots its body holds are freed, and a wait for one ends.
    fn time_out(
        &self,
        timeout: std::time::Duration,
    ) -> Result<Result<(), String>, Box<dyn Any + Send>> {
        let state = self.cell.state();
        let waiting_for = state.waiting_for();
        state.abandon();
        let message = crate::harness::timeout::message(timeout, waiting_for.as_deref());
        self.cell.state().note_panic(PanicNote {
            message: message.clone(),
            location: None,
            assertion: false,
            frames: None,
        });
        Err(Box::new(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
