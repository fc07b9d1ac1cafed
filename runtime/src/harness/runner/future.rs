//! An asynchronous run: the body's future polled with its run current and its panics caught,
//! under the test attribute's own runtime. With a timeout, the item's whole function (the
//! attribute's runtime and the body in it) runs on a thread of its own, as a synchronous body
//! does, so that a body that never yields (`loop {}`, a blocking call) is left behind at its
//! deadline instead of hanging the test; one that yields is dropped there, which cancels it.
//!
//! Layer: harness.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use super::{fail_item, stopped, Active, BenchReturn};
use crate::harness::context::{with_current, RunCell, RunState};
use crate::harness::registry::Case;
use crate::harness::timeout::{self, BodyResult, Deadline};

/// How long past the deadline the test's thread waits for a body that yields to be dropped on
/// its own thread, so that what its drop does (a log line, a closed connection) is done before
/// the item ends, and the process perhaps with it.
const DROP_GRACE: Duration = Duration::from_millis(200);

/// A run whose start the test's thread recorded, for the body's thread to run: its state and
/// its deadline.
struct Handoff {
    case: &'static Case,
    run: u32,
    state: Arc<RunState>,
    started: Instant,
    timeout: Duration,
}

/// The runs handed to a body's thread, until their `run_async` claims them.
static HANDOFFS: Mutex<Vec<Handoff>> = Mutex::new(Vec::new());

/// Whether any run was ever handed off: a run without a timeout reads this, not the lock.
static HANDED_OFF: AtomicBool = AtomicBool::new(false);

fn handoffs() -> std::sync::MutexGuard<'static, Vec<Handoff>> {
    HANDOFFS.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// The run `run` of `case`, when the test's thread handed it to this one.
fn claim(case: &'static Case, run: u32) -> Option<Handoff> {
    if !HANDED_OFF.load(Ordering::Acquire) {
        return None;
    }
    let mut handoffs = handoffs();
    let at = handoffs
        .iter()
        .position(|handoff| std::ptr::eq(handoff.case, case) && handoff.run == run)?;
    Some(handoffs.swap_remove(at))
}

/// Runs the item of run `run` of `case` of an `async` function: `item` is the function with
/// the test attribute's runtime around it (the attribute applied to an inner function), which
/// calls [`run_async`]. Without a timeout it runs here; with one, on a thread of its own.
#[doc(hidden)]
#[track_caller]
pub fn run_async_item(case: &'static Case, run: u32, item: fn()) {
    let Ok(Some(timeout)) = timeout::of(case) else {
        // No timeout, or a bad one that `run_async` makes the run's error.
        return item();
    };
    let settings = crate::harness::settings::get(&case.bench.config);
    let _ended = case.item_end();
    if let Some(failure) = stopped(case, run, settings) {
        return fail_item(failure);
    }
    let active = match Active::start(case, run, settings, &Ok(Some(timeout))) {
        Ok(active) => active,
        Err(message) => panic!("{message}"),
    };
    let (send, receive) = std::sync::mpsc::sync_channel(1);
    handoffs().push(Handoff {
        case,
        run,
        state: active.cell.state().clone(),
        started: active.started,
        timeout,
    });
    HANDED_OFF.store(true, Ordering::Release);
    let on_thread = Box::new(move || -> Option<BodyResult> {
        RESULT.with(|slot| *slot.borrow_mut() = Some(send));
        // A panic out of the attribute's runtime itself (the body's are caught in it).
        match catch_unwind(item) {
            Ok(()) => receive.try_recv().unwrap_or_else(|_| {
                Some(Ok(Err(
                    "the test attribute's runtime never ran the run's body".to_string(),
                )))
            }),
            Err(payload) => Some(Err(payload)),
        }
    });
    let timed = timeout::run_on_thread(active.started, timeout, DROP_GRACE, on_thread, |why| {
        Some(timeout::failed_body(why))
    });
    // A body that never gave its future back left its run's handoff unclaimed.
    handoffs().retain(|handoff| !(std::ptr::eq(handoff.case, case) && handoff.run == run));
    let result = match timed {
        Some(Some(result)) => result,
        // Dropped at the deadline on its thread.
        Some(None) => active.time_out(timeout),
        None => {
            timeout::note_left_behind(case.row_id, run, timeout);
            active.time_out(timeout)
        }
    };
    fail_item(active.finish(result));
}

type ResultSender = std::sync::mpsc::SyncSender<Option<BodyResult>>;

thread_local! {
    /// Where a handed-off run's body sends what it gave, on the body's thread.
    static RESULT: std::cell::RefCell<Option<ResultSender>> = const { std::cell::RefCell::new(None) };
}

/// Runs one asynchronous run of `case` inside the test attribute's runtime.
#[doc(hidden)]
#[track_caller]
pub fn run_async<F, R>(case: &'static Case, run: u32, body: F) -> impl Future<Output = ()>
where
    F: Future<Output = R>,
    R: BenchReturn,
{
    let handoff = claim(case, run);
    let sender = handoff
        .as_ref()
        .and_then(|_| RESULT.with(|slot| slot.borrow_mut().take()));
    let settings = crate::harness::settings::get(&case.bench.config);
    let (skipped, timeout, started) = match handoff {
        Some(_) => (None, Ok(None), None),
        None => {
            let skipped = stopped(case, run, settings);
            let timeout = timeout::of(case);
            let started = skipped
                .is_none()
                .then(|| Active::start(case, run, settings, &timeout));
            (skipped, timeout, started)
        }
    };
    async move {
        let limit = case.bench.limit();
        let body = async move {
            // Blocking while it waits: the attribute's limit is taken before the body starts.
            let _guard = limit.map(crate::harness::limits::limit);
            body.await
        };
        if let Some(handoff) = handoff {
            // The test's thread started the run and records it; this thread runs the body.
            let body = CatchUnwind {
                future: Box::pin(body),
                state: handoff.state.clone(),
            };
            let ended = Deadline::new(body, handoff.started, handoff.timeout).await;
            let result = ended.map(|result| result.map(BenchReturn::into_result));
            if let Some(sender) = sender {
                let _ = sender.send(result);
            }
            return;
        }
        let _ended = case.item_end();
        let active = match started {
            None => return fail_item(skipped.flatten()),
            Some(Ok(active)) => active,
            Some(Err(message)) => panic!("{message}"),
        };
        let body = CatchUnwind {
            future: Box::pin(body),
            state: active.cell.state().clone(),
        };
        let result = match timeout {
            Ok(None) | Err(_) => body.await.map(BenchReturn::into_result),
            Ok(Some(timeout)) => {
                let deadline = Deadline::new(body, active.started, timeout);
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
        match with_current(&RunCell::holding(this.state.clone()), || {
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
