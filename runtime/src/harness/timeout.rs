//! The per-run timeout: `timeout = "30s"` in the attribute, `PROB_TIMEOUT`, the config's
//! `timeout`. A run that exceeds it is an error recorded at the deadline. A synchronous body runs
//! on a thread of its own while the test's thread watches the clock; past the deadline the test
//! item fails and the thread is left behind (Rust cannot stop a thread), said once per process.
//! An `async` body runs on a thread of its own too, under the test attribute's runtime, and is
//! dropped at the deadline when it yields (which cancels it), left behind when it never does.
//! A run left behind is abandoned: the limits' slots it holds are freed, and a wait for one
//! ends. Time spent waiting for a limit (`probtest::limit`) counts toward the timeout: a run
//! queued behind a hung holder ends at its deadline, saying which limit it waited for.
//!
//! None of this runs without a timeout: the runner asks [`of`] (two loads of resolved statics)
//! and calls the body as before.

use std::any::Any;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use probtest_settings::{format_duration, TIMEOUT};

use crate::harness::registry::{Case, Config};

/// What the body of a run gave: its result, or the panic that ended it.
pub(crate) type BodyResult = Result<Result<(), String>, Box<dyn Any + Send>>;

/// The message of a run that exceeded its timeout, `waiting_for` a limit when it did.
pub(crate) fn message(timeout: Duration, waiting_for: Option<&str>) -> String {
    let timeout = format_duration(timeout);
    match waiting_for {
        Some(key) => format!("the run exceeded its timeout of {timeout} waiting for limit `{key}`"),
        None => format!("the run exceeded its timeout of {timeout}"),
    }
}

/// `PROB_TIMEOUT`, read once per process.
fn from_environment() -> &'static Result<Option<Duration>, String> {
    static ENV: OnceLock<Result<Option<Duration>, String>> = OnceLock::new();
    ENV.get_or_init(|| parse_setting(TIMEOUT.variable, std::env::var(TIMEOUT.variable).ok()))
}

/// The config's `timeout`, read once per process (a test binary is one crate: one config).
fn from_config(config: &Config) -> &'static Result<Option<Duration>, String> {
    static CONFIG: OnceLock<Result<Option<Duration>, String>> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let text = config
            .entries
            .iter()
            .find(|(key, _)| Some(*key) == TIMEOUT.key)
            .map(|(_, value)| value.to_string());
        parse_setting("config `timeout`", text)
    })
}

fn parse_setting(source: &str, text: Option<String>) -> Result<Option<Duration>, String> {
    match text.filter(|text| !text.trim().is_empty()) {
        None => Ok(None),
        Some(text) => TIMEOUT.parse_from(source, &text).map(Some),
    }
}

/// The timeout of `case`'s runs: `PROB_TIMEOUT`, else the attribute's, else the config's; or
/// the one-line problem with the setting, which makes every run an error.
pub(crate) fn of(case: &'static Case) -> Result<Option<Duration>, &'static str> {
    match from_environment() {
        Ok(None) => {}
        Ok(Some(timeout)) => return Ok(Some(*timeout)),
        Err(why) => return Err(why),
    }
    if let Some(timeout) = case.bench.timeout() {
        return Ok(Some(timeout));
    }
    from_config(&case.bench.config)
        .as_ref()
        .map(|timeout| *timeout)
        .map_err(String::as_str)
}

/// Why the timeout's setting (`PROB_TIMEOUT`, the config's `timeout`) is refused, if it is.
pub(crate) fn setting_problem(config: &Config) -> Option<&'static str> {
    match (from_environment(), from_config(config)) {
        (Err(why), _) | (Ok(_), Err(why)) => Some(why),
        (Ok(_), Ok(_)) => None,
    }
}

/// When the run is due: its start plus the timeout. What it waits for limits counts: a run
/// queued behind a hung holder must end too.
fn due(started: Instant, timeout: Duration) -> Instant {
    started + timeout
}

/// Runs `body` on a thread of its own (named as this one, which libtest names after the test)
/// and waits for it until the deadline, plus `grace`. `None`: the run exceeded its timeout,
/// and its thread is left running. `failed` makes the result of a thread that could not start
/// or died without one.
pub(crate) fn run_on_thread<T: Send + 'static>(
    started: Instant,
    timeout: Duration,
    grace: Duration,
    body: Box<dyn FnOnce() -> T + Send>,
    failed: fn(String) -> T,
) -> Option<T> {
    let (send, receive) = mpsc::sync_channel(1);
    let name = std::thread::current().name().map(str::to_string);
    let mut builder = std::thread::Builder::new();
    if let Some(name) = name {
        builder = builder.name(name);
    }
    let spawned = builder.spawn(move || {
        let _ = send.send(body());
    });
    if let Err(error) = spawned {
        return Some(failed(format!(
            "could not start a thread to time the run: {error}"
        )));
    }
    let due = due(started, timeout) + grace;
    let now = Instant::now();
    match receive.recv_timeout(due.saturating_duration_since(now)) {
        Ok(result) => Some(result),
        Err(mpsc::RecvTimeoutError::Timeout) => None,
        // The thread died without sending, which catch_unwind rules out but for an abort.
        Err(mpsc::RecvTimeoutError::Disconnected) => Some(failed(
            "the run's thread ended without a result".to_string(),
        )),
    }
}

/// How a body's thread that failed to give a result reads: an error of the run.
pub(crate) fn failed_body(message: String) -> BodyResult {
    Ok(Err(message))
}

/// Says once per process that a timed-out run's thread is still running: more threads left
/// behind mean more of the same, and the report names each run.
pub(crate) fn note_left_behind(row: &str, run: u32, timeout: Duration) {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        // Past libtest's capture: the item's own failure says what happened to the run.
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: {row} run {run} exceeded its timeout of {}; its thread is left running (later ones are not mentioned)",
            format_duration(timeout)
        );
    });
}

/// A future that ends at its run's deadline if its body has not ended first; dropping it
/// drops (cancels) the body.
pub(crate) struct Deadline<F> {
    future: Pin<Box<F>>,
    started: Instant,
    timeout: Duration,
    timer: Option<Arc<Timer>>,
}

impl<F> Deadline<F> {
    pub(crate) fn new(future: F, started: Instant, timeout: Duration) -> Self {
        Deadline {
            future: Box::pin(future),
            started,
            timeout,
            timer: None,
        }
    }
}

/// The thread that wakes a [`Deadline`] at its due time, whatever runtime polls it.
struct Timer {
    waker: Mutex<Option<Waker>>,
    done: AtomicBool,
    thread: Thread,
}

impl<F: Future> Future for Deadline<F> {
    /// `None`: the deadline passed first.
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(output) = this.future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        if Instant::now() >= due(this.started, this.timeout) {
            return Poll::Ready(None);
        }
        match &this.timer {
            Some(timer) => {
                *timer.waker.lock().unwrap_or_else(|p| p.into_inner()) = Some(cx.waker().clone());
            }
            None => this.timer = start_timer(this.started, this.timeout, cx.waker()),
        }
        Poll::Pending
    }
}

fn start_timer(started: Instant, timeout: Duration, waker: &Waker) -> Option<Arc<Timer>> {
    let (send, receive) = mpsc::sync_channel(1);
    let waker = Mutex::new(Some(waker.clone()));
    let spawned = std::thread::Builder::new()
        .name("probtest-deadline".to_string())
        .spawn(move || {
            let timer = Arc::new(Timer {
                waker,
                done: AtomicBool::new(false),
                thread: std::thread::current(),
            });
            let _ = send.send(timer.clone());
            while !timer.done.load(Ordering::Acquire) {
                let now = Instant::now();
                let due = due(started, timeout);
                if now >= due {
                    if let Some(waker) =
                        timer.waker.lock().unwrap_or_else(|p| p.into_inner()).take()
                    {
                        waker.wake();
                    }
                    return;
                }
                std::thread::park_timeout(due - now);
            }
        });
    spawned.ok()?;
    receive.recv().ok()
}

impl<F> Drop for Deadline<F> {
    fn drop(&mut self) {
        if let Some(timer) = &self.timer {
            timer.done.store(true, Ordering::Release);
            timer.thread.unpark();
        }
    }
}

// `F` is only ever accessed through the pinned box.
impl<F> Unpin for Deadline<F> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::context::RunState;

    #[test]
    fn the_message_names_the_timeout_as_written() {
        assert_eq!(
            message(Duration::from_secs(30), None),
            "the run exceeded its timeout of 30s"
        );
        assert_eq!(
            message(Duration::from_millis(250), Some("solo")),
            "the run exceeded its timeout of 250ms waiting for limit `solo`"
        );
    }

    #[test]
    fn a_bad_setting_names_where_it_came_from() {
        assert_eq!(
            parse_setting("PROB_TIMEOUT", Some("soon".to_string())),
            Err(
                "PROB_TIMEOUT: expected a duration such as `30s` or `1m30s`, got `soon`"
                    .to_string()
            )
        );
        assert_eq!(
            parse_setting("PROB_TIMEOUT", Some(" ".to_string())),
            Ok(None)
        );
        assert_eq!(
            parse_setting("config `timeout`", Some("2m".to_string())),
            Ok(Some(Duration::from_secs(120)))
        );
    }

    #[test]
    fn a_slow_body_is_abandoned_at_the_deadline_and_a_fast_one_is_not() {
        let started = Instant::now();
        let result = run_on_thread(
            started,
            Duration::from_millis(50),
            Duration::ZERO,
            Box::new(|| -> BodyResult {
                std::thread::sleep(Duration::from_secs(5));
                Ok(Ok(()))
            }),
            failed_body,
        );
        assert!(result.is_none());
        let elapsed = started.elapsed();
        assert!(
            elapsed >= Duration::from_millis(50) && elapsed < Duration::from_secs(2),
            "{elapsed:?}"
        );
        let result = run_on_thread(
            Instant::now(),
            Duration::from_secs(5),
            Duration::ZERO,
            Box::new(|| -> BodyResult { Ok(Err("no".to_string())) }),
            failed_body,
        );
        assert!(matches!(result, Some(Ok(Err(message))) if message == "no"));
    }

    #[test]
    fn time_spent_waiting_for_a_limit_counts_toward_the_deadline() {
        let state = Arc::new(RunState::default());
        let started = Instant::now();
        // The run waits for a limit from its start, for longer than its timeout.
        state.begin_wait(started, "api");
        let waiting = state.clone();
        let result = run_on_thread(
            started,
            Duration::from_millis(100),
            Duration::ZERO,
            Box::new(move || -> BodyResult {
                std::thread::sleep(Duration::from_secs(5));
                waiting.end_wait("api", Duration::from_secs(5));
                Ok(Ok(()))
            }),
            failed_body,
        );
        assert!(
            result.is_none(),
            "a run that waits past its timeout times out"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
        assert_eq!(state.waiting_for().as_deref(), Some("api"));
    }

    #[test]
    fn an_async_body_is_dropped_at_the_deadline() {
        struct Dropped(Arc<AtomicBool>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = Dropped(dropped.clone());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let started = Instant::now();
        let output = runtime.block_on(Deadline::new(
            async move {
                let _flag = flag;
                tokio::time::sleep(Duration::from_secs(5)).await;
            },
            started,
            Duration::from_millis(50),
        ));
        assert!(output.is_none());
        assert!(dropped.load(Ordering::SeqCst));
        assert!(started.elapsed() < Duration::from_secs(2));
        let output = runtime.block_on(Deadline::new(
            async { 7 },
            Instant::now(),
            Duration::from_secs(5),
        ));
        assert_eq!(output, Some(7));
    }
}
