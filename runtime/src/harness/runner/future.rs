//! An asynchronous run: the body's future polled with its run current and its panics caught,
//! under the test attribute's own runtime.
//!
//! Layer: harness.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use super::{fail_item, stopped, Active, BenchReturn};
use crate::harness::context::{with_current, RunCell, RunState};
use crate::harness::registry::Case;

/// Runs one asynchronous run of `case` inside the test attribute's runtime.
#[doc(hidden)]
#[track_caller]
pub fn run_async<F, R>(case: &'static Case, run: u32, body: F) -> impl Future<Output = ()>
where
    F: Future<Output = R>,
    R: BenchReturn,
{
    let settings = crate::harness::settings::get(&case.bench.config);
    let skipped = stopped(case, run, settings);
    let timeout = crate::harness::timeout::of(case);
    let started = skipped
        .is_none()
        .then(|| Active::start(case, run, settings, &timeout));
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
            state: active.cell.state().clone(),
        };
        let result = match timeout {
            Ok(None) | Err(_) => body.await.map(BenchReturn::into_result),
            Ok(Some(timeout)) => {
                let deadline = crate::harness::timeout::Deadline::new(
                    body,
                    active.cell.state().clone(),
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
