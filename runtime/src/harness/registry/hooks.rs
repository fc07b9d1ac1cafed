//! Module setups and teardowns (`#[probtest::setup]`, `#[probtest::teardown]`): registered at
//! start-up, a setup run before its scope's first run, a teardown after its scope's last.
//!
//! Layer: harness.

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::{Bench, BENCHES};
use crate::harness::context::panic_message;

/// Whether a hook runs before or after its module's runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HookKind {
    Setup,
    Teardown,
}

/// A `#[probtest::setup]` or `#[probtest::teardown]` function.
#[doc(hidden)]
pub struct Hook {
    kind: HookKind,
    module: &'static str,
    name: &'static str,
    function: fn() -> Result<(), String>,
}

impl Hook {
    #[doc(hidden)]
    pub fn setup(
        module: &'static str,
        name: &'static str,
        function: fn() -> Result<(), String>,
    ) -> Hook {
        Hook {
            kind: HookKind::Setup,
            module,
            name,
            function,
        }
    }

    #[doc(hidden)]
    pub fn teardown(
        module: &'static str,
        name: &'static str,
        function: fn() -> Result<(), String>,
    ) -> Hook {
        Hook {
            kind: HookKind::Teardown,
            module,
            name,
            function,
        }
    }

    fn call(&self) -> Result<(), String> {
        match catch_unwind(AssertUnwindSafe(self.function)) {
            Ok(result) => result,
            Err(payload) => Err(panic_message(payload.as_ref())),
        }
    }
}

struct HookEntry {
    hook: Hook,
    /// Setup: its result once run. Teardown: `Some(Ok(()))` once run.
    done: Option<Result<(), String>>,
    /// Teardown only: runs finished in its scope so far.
    finished_runs: u64,
    /// Teardown only: the runs its scope holds in this binary, counted at its first finished run.
    scope_runs: Option<u64>,
}

#[derive(Default)]
struct Registry {
    hooks: Vec<HookEntry>,
    /// The result of each bench's module setups, by the bench's address, from its first run.
    setups: BTreeMap<usize, Result<(), String>>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    hooks: Vec::new(),
    setups: BTreeMap::new(),
});
/// Set once any teardown is registered, so that runs without teardowns skip the bookkeeping.
static HAS_TEARDOWNS: AtomicBool = AtomicBool::new(false);
/// Set once any setup is registered, so that runs without setups skip the registry's lock.
static HAS_SETUPS: AtomicBool = AtomicBool::new(false);

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// Whether `module` is `scope` or inside it.
fn in_scope(module: &str, scope: &str) -> bool {
    module == scope
        || module
            .strip_prefix(scope)
            .is_some_and(|rest| rest.starts_with("::"))
}

#[doc(hidden)]
pub fn register_hook(hook: Hook) {
    match hook.kind {
        HookKind::Teardown => HAS_TEARDOWNS.store(true, Ordering::Relaxed),
        HookKind::Setup => HAS_SETUPS.store(true, Ordering::Relaxed),
    }
    registry().hooks.push(HookEntry {
        hook,
        done: None,
        finished_runs: 0,
        scope_runs: None,
    });
}

/// Runs the setups that cover `bench`'s module (outermost first), once each per process.
/// The first failure is the result for every run of the module.
pub(crate) fn ensure_setup(bench: &'static Bench) -> Result<(), String> {
    // Hooks register before `main`, so none can appear after the first run asks.
    if !HAS_SETUPS.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut registry = registry();
    let key = std::ptr::from_ref(bench) as usize;
    if let Some(result) = registry.setups.get(&key) {
        return result.clone();
    }
    let result = run_setups(&mut registry, bench);
    registry.setups.insert(key, result.clone());
    result
}

/// Runs the setups in scope of `bench` that have not run yet, outermost first.
fn run_setups(registry: &mut Registry, bench: &'static Bench) -> Result<(), String> {
    let mut setups: Vec<usize> = (0..registry.hooks.len())
        .filter(|&i| {
            let hook = &registry.hooks[i].hook;
            hook.kind == HookKind::Setup && in_scope(bench.module(), hook.module)
        })
        .collect();
    setups.sort_by_key(|&i| registry.hooks[i].hook.module.len());
    for index in setups {
        let entry = &mut registry.hooks[index];
        if entry.done.is_none() {
            entry.done = Some(entry.hook.call());
        }
        if let Some(Err(message)) = &entry.done {
            return Err(format!("setup `{}` failed: {message}", entry.hook.name));
        }
    }
    Ok(())
}

/// Counts a finished run, and runs a teardown whose scope has now finished every run.
pub(crate) fn run_finished(bench: &'static Bench) {
    if !HAS_TEARDOWNS.load(Ordering::Relaxed) {
        return;
    }
    let mut registry = registry();
    for entry in registry.hooks.iter_mut() {
        if entry.hook.kind != HookKind::Teardown
            || entry.done.is_some()
            || !in_scope(bench.module(), entry.hook.module)
        {
            continue;
        }
        entry.finished_runs += 1;
        let scope = entry.hook.module;
        let expected = *entry.scope_runs.get_or_insert_with(|| {
            BENCHES
                .iter()
                .filter(|b| in_scope(b.module(), scope))
                .map(|b| b.total_runs())
                .sum()
        });
        if entry.finished_runs >= expected {
            entry.done = Some(Ok(()));
            run_teardown(&entry.hook);
        }
    }
}

/// At exit: runs the teardowns whose scope had at least one run but did not finish them all
/// (a filtered run, or one test per process under nextest).
pub(crate) fn run_remaining_teardowns() {
    if !HAS_TEARDOWNS.load(Ordering::Relaxed) {
        return;
    }
    let mut registry = registry();
    for entry in registry.hooks.iter_mut() {
        if entry.hook.kind == HookKind::Teardown && entry.done.is_none() && entry.finished_runs > 0
        {
            entry.done = Some(Ok(()));
            run_teardown(&entry.hook);
        }
    }
}

/// Whether any teardown is registered.
pub(crate) fn has_teardowns() -> bool {
    HAS_TEARDOWNS.load(Ordering::Relaxed)
}

/// Whether any module setup is registered.
pub(crate) fn has_setups() -> bool {
    HAS_SETUPS.load(Ordering::Relaxed)
}

fn run_teardown(hook: &Hook) {
    if let Err(message) = hook.call() {
        // Straight to the process's stderr: a teardown often runs inside the last test of its
        // module, whose captured output libtest drops when that test passed.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: teardown `{}` of `{}` failed: {message}",
            hook.name,
            hook.module
        );
    }
}

#[cfg(test)]
mod tests {
    use super::in_scope;

    #[test]
    fn scopes_follow_path_segments() {
        assert!(in_scope("evals", "evals"));
        assert!(in_scope("evals::triage", "evals"));
        assert!(!in_scope("evals_more", "evals"));
        assert!(!in_scope("evals", "evals::triage"));
    }
}
