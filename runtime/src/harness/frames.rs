//! `PROB_BACKTRACE=1`: a panic's stack as the user's own frames, formatted when the panic is
//! caught. The backtrace itself is never kept (it pins nothing, but its text would carry every
//! frame of std, tokio and libtest), and nothing but function names and source positions is
//! written: no environment, no locals. (The message they follow is the runner's `message`:
//! redacted and capped.)

use std::sync::OnceLock;

use probtest_settings::BACKTRACE;

use crate::harness::registry;

/// The crates whose frames are left out: the runner's, the standard library's, the async
/// runtimes' and libtest's, which sit on every stack and say nothing about the failure.
const HIDDEN_CRATES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "probtest",
    "probtest_macros",
    "tokio",
    "futures",
    "futures_util",
    "futures_executor",
    "test",
    "backtrace",
    "__rust",
];

/// Places outside the user's code: the toolchain's sources and downloaded crates.
const HIDDEN_PLACES: &[&str] = &["/rustc/", "/.cargo/registry/", "/.cargo/git/", "./csu/"];

/// `PROB_BACKTRACE`, else the config's `backtrace`, else off; read once per process. A bad
/// value is the one-line problem every run errors with.
pub(crate) fn enabled() -> &'static Result<bool, String> {
    static ENABLED: OnceLock<Result<bool, String>> = OnceLock::new();
    ENABLED.get_or_init(|| {
        let env = |name: &str| std::env::var(name).ok();
        // A test binary is one crate: one config, which every bench carries.
        let entries = registry::BENCHES
            .iter()
            .next()
            .map_or(&[][..], |bench| bench.config.entries);
        Ok(BACKTRACE.resolve(&env, entries)?.unwrap_or(false))
    })
}

/// The user's frames of the stack this is called on, one `at <function> (<file:line:col>)`
/// line each, innermost first; `None` when backtraces are off or no frame is the user's.
pub(crate) fn capture() -> Option<String> {
    if *enabled() != Ok(true) {
        return None;
    }
    let text = std::backtrace::Backtrace::force_capture().to_string();
    let frames = user_frames(&text);
    (!frames.is_empty()).then(|| frames.join("\n"))
}

/// The user's frames of a backtrace as std's `Display` writes it: `  3: path::to::f` lines,
/// each followed by an `at file:line:col` line when the position is known.
pub(crate) fn user_frames(backtrace: &str) -> Vec<String> {
    let mut frames = Vec::new();
    let mut lines = backtrace.lines().peekable();
    while let Some(line) = lines.next() {
        let Some((number, symbol)) = line.trim_start().split_once(": ") else {
            continue;
        };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let place = match lines.peek().map(|next| next.trim_start()) {
            Some(next) if next.starts_with("at ") => {
                let place = next["at ".len()..].to_string();
                lines.next();
                Some(place)
            }
            _ => None,
        };
        let Some(place) = place else { continue };
        if HIDDEN_PLACES.iter().any(|hidden| place.contains(hidden)) || hidden_symbol(symbol) {
            continue;
        }
        let place = place.strip_prefix("./").unwrap_or(&place);
        // The bench's body, compiled under a generated name: the user's function, and the
        // last frame that is theirs (what calls it is generated or libtest's).
        if let Some((path, name)) = symbol.split_once("__probtest_body_") {
            frames.push(format!("  at {path}{name} ({place})"));
            break;
        }
        frames.push(format!("  at {symbol} ({place})"));
    }
    frames
}

/// Whether a frame's function belongs to a hidden crate: its path's first segment, after the
/// `<` and `&dyn ` of a trait method's frame.
fn hidden_symbol(symbol: &str) -> bool {
    // A function without a path is the C library's (`start_thread`, `clone3`, `main`).
    if !symbol.contains("::") {
        return true;
    }
    let path = symbol.trim_start_matches('<').trim_start_matches("&dyn ");
    let first = path.split("::").next().unwrap_or(path);
    HIDDEN_CRATES
        .iter()
        .any(|hidden| first == *hidden || first.starts_with("__rust"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BACKTRACE: &str = "   0: std::backtrace_rs::backtrace::libunwind::trace
             at /rustc/5980/library/std/src/../../backtrace/src/backtrace/libunwind.rs:117:9
   1: probtest::harness::runner::install_panic_hook::{{closure}}
             at /home/u/probtest/runtime/src/harness/runner.rs:170:20
   2: evals::answer
             at ./tests/evals.rs:9:5
   3: evals::__probtest_body_bench_triage
             at ./tests/evals.rs:14:13
   4: evals::__probtest_bench_triage::call_0
             at ./tests/evals.rs:12:1
   4: <core::pin::Pin<P> as core::future::future::Future>::poll
             at /rustc/5980/library/core/src/future/future.rs:133:9
   5: tokio::runtime::park::CachedParkThread::block_on
             at /home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.47.1/src/runtime/park.rs:285:60
   6: test::run_test::{{closure}}
             at /home/u/probtest/test.rs:1:1
   7: main
   8: start_thread
             at ./nptl/pthread_create.c:442:8
";

    #[test]
    fn only_the_users_frames_are_kept() {
        assert_eq!(
            user_frames(BACKTRACE),
            [
                "  at evals::answer (tests/evals.rs:9:5)",
                "  at evals::bench_triage (tests/evals.rs:14:13)",
            ]
        );
    }

    #[test]
    fn a_real_backtrace_keeps_this_test_and_nothing_of_std() {
        let text = std::backtrace::Backtrace::force_capture().to_string();
        // Every frame here is probtest's, std's or libtest's: none is a user's.
        assert_eq!(user_frames(&text), Vec::<String>::new(), "{text}");
    }
}
