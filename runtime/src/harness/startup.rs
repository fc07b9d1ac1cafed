//! What a test process does before `main`: under cargo-nextest, where each test is a process
//! of its own that knows its test's name from `NEXTEST_TEST_NAME`, the run it holds is written
//! to the session store at start-up rather than when its body begins. A process killed between
//! start-up and the body (by a timeout, an OOM killer, a signal) is then an error in the
//! session, never missing. Elsewhere (libtest's many tests per process), start-up reads the
//! settings and does nothing else. Every process with benches checks its runtime settings here
//! and, when one is refused, says so in one line and exits before any test runs or is listed.
//! With `PROB_ITEMS_OUT` set (by `cargo probtest doctor` and `plan`), it writes the binary's
//! generated items to that file instead, a refused setting among them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::harness::recorder::{self, Started};
use crate::harness::registry::{self, Case, Config};

/// The run this process started before `main`, until its item's body claims it.
struct Early {
    case: &'static Case,
    run: u32,
    started: Started,
}

static EARLY: Mutex<Option<Early>> = Mutex::new(None);

/// Whether start-up started a run: every run asks, and under `cargo test` the answer is always
/// no, read without taking the lock.
static STARTED_EARLY: AtomicBool = AtomicBool::new(false);

ctor::declarative::ctor! {
    #[ctor(unsafe)]
    fn probtest_start_up() {
        start_up();
    }
}

/// Starts the run this process holds, when it is a nextest process of one generated item;
/// lists the binary's items to the session, when nextest lists the binary for a session that
/// will be reconciled.
fn start_up() {
    if let Some(path) = std::env::var_os(probtest_settings::ITEMS_OUT.variable) {
        // A listing for `cargo probtest plan` or the doctor, which carries a bad setting's
        // problem in its file and reports it there.
        write_items(std::path::Path::new(&path));
    } else {
        refuse_bad_settings();
    }
    let name = match std::env::var("NEXTEST_TEST_PHASE").as_deref() {
        Ok("run") => std::env::var("NEXTEST_TEST_NAME"),
        Ok("list") => {
            list_items();
            return;
        }
        _ => return,
    };
    let Ok(name) = name else { return };
    let Some((case, run)) = registry::locate_item(&name) else {
        return;
    };
    let settings = crate::harness::settings::get(&case.bench.config);
    let started = recorder::started(case, run, settings);
    *EARLY.lock().unwrap_or_else(|poison| poison.into_inner()) = Some(Early { case, run, started });
    STARTED_EARLY.store(true, Ordering::Release);
}

/// Ends the process with one line on stderr when a runtime setting is refused, before any
/// test runs (or is listed, under nextest, whose list then fails with the line): a bad value
/// would make every run an error for a reason none of them has. A binary without benches
/// reads no setting.
fn refuse_bad_settings() {
    let Some(bench) = registry::BENCHES.first() else {
        return;
    };
    if let Some(problem) = bad_setting(&bench.config) {
        use std::io::Write;
        let _ = writeln!(std::io::stderr().lock(), "probtest: {problem}");
        std::process::exit(BAD_SETTING_EXIT);
    }
}

/// The exit status of a process that refused a setting: a usage error, as for a bad flag.
const BAD_SETTING_EXIT: i32 = 2;

/// The first refused runtime setting of this process, as one line naming its variable (or its
/// config key) and its value.
fn bad_setting(config: &'static Config) -> Option<String> {
    if let Some(problem) = &crate::harness::settings::get(config).problem {
        return Some(problem.clone());
    }
    let refused = crate::harness::timeout::setting_problem(config)
        .or_else(|| {
            crate::harness::frames::enabled()
                .as_ref()
                .err()
                .map(String::as_str)
        })
        .or_else(crate::harness::cache::setting_problem);
    if let Some(problem) = refused {
        return Some(problem.to_string());
    }
    let vars = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)));
    crate::harness::limits::setting_problem(vars)
}

/// The start of run `run` of `case`, when start-up made it.
pub(crate) fn take(case: &'static Case, run: u32) -> Option<Started> {
    if !STARTED_EARLY.load(Ordering::Acquire) {
        return None;
    }
    let mut early = EARLY.lock().unwrap_or_else(|poison| poison.into_inner());
    match early.take() {
        Some(found) if std::ptr::eq(found.case, case) && found.run == run => Some(found.started),
        other => {
            *early = other;
            None
        }
    }
}

/// Writes this binary's generated items to the session (see `Session::reconcile`), when
/// `cargo probtest run --nextest` asks for it (`PROB_RECONCILE`). nextest lists each binary
/// twice, the second time for its ignored tests; the items are written at the first.
fn list_items() {
    let env = |name: &str| std::env::var(name).ok();
    if probtest_settings::RECONCILE.from_env(&env) != Ok(Some(true))
        || std::env::args_os().any(|arg| arg == "--ignored")
    {
        return;
    }
    let Ok(binary) = std::env::var("NEXTEST_BINARY_ID") else {
        return;
    };
    let (cases, items) = registry::item_names();
    if items.is_empty() {
        return;
    }
    let listed = recorder::session_of_process().and_then(|session| {
        session
            .append_items(&binary, cases, items)
            .map_err(|error| error.to_string())
    });
    if let Err(problem) = listed {
        use std::io::Write;
        // stderr: nextest reads the listing from stdout.
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: could not list {binary}'s items to the session ({problem}); a test process that dies before start-up will be missing from the summary"
        );
    }
}

/// Writes this binary's generated items to `path` as JSON, `{"items": [{"name", "row", "run",
/// "case"}], "cases": [..], "stats_config": {..}, "report": ".."}` (`PROB_ITEMS_OUT`; `case`
/// is an index into `cases`): for `cargo probtest run`, which counts the runs it expects;
/// `cargo probtest doctor`, which diagnoses a report's row through one of its run items; and
/// `cargo probtest plan`, which plans the cases under the statistics settings this process
/// resolves. A write that fails says so on stderr; the listing goes on.
fn write_items(path: &std::path::Path) {
    let (cases, items) = registry::item_names();
    let items: Vec<serde_json::Value> = items
        .into_iter()
        .filter_map(|(name, case, run)| {
            let row = &cases.get(case as usize)?.case;
            Some(serde_json::json!({"name": name, "row": row, "run": run, "case": case}))
        })
        .collect();
    let settings = registry::BENCHES
        .first()
        .map(|bench| crate::harness::settings::get(&bench.config));
    let text = serde_json::json!({
        "items": items,
        "cases": cases,
        "stats_config": settings.map(|settings| &settings.stats),
        // Where this process's runs would write their report (`PROB_JSON`, else the config's).
        "report": settings
            .and_then(|settings| settings.json.as_ref())
            .map(|path| path.resolved.to_string_lossy()),
        // A bad setting, as every run of the process would error with it.
        "problem": settings.and_then(|settings| settings.problem.as_deref()),
    })
    .to_string();
    if let Err(error) = std::fs::write(path, text) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: could not write the items to {} (PROB_ITEMS_OUT): {error}",
            path.display()
        );
    }
}
