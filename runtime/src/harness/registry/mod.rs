//! What generated code registers: bench functions and their cases (listed by the linker), and
//! the setup and teardown hooks of their modules (registered before `main`). From the list, a
//! test's name leads back to its case and run ([`locate_item`]).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::harness::runner::panic_message;
use crate::model::{CaseInfo, CompareSpec, Part};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::GateSpec;
use crate::types::status::Outcome;

mod items;

use items::in_crate;
pub use items::Layout;
pub(crate) use items::{item_names, locate_item, run_item_names};

/// A `#[probability]` function, as a static in generated code.
///
/// Generated statics hold what the macro knows and no state. A binary has one per function and
/// case, and the loader writes every page of them (their pointers are relocated) in every
/// process, whether or not its cases run: state kept inline made them twice as many pages. What
/// a case gathers while running lives in a `CaseState`, made when the case first runs.
#[doc(hidden)]
pub struct Bench {
    package: &'static str,
    function: &'static str,
    /// The module the function is written in (see [`parent_module`]).
    module: &'static str,
    /// The same without the crate's name, as test names start (see [`in_crate`]).
    module_in_crate: &'static str,
    file: &'static str,
    line: u32,
    runs: u32,
    /// Every case, in the order of their indices.
    cases: &'static [&'static Case],
    /// How the test items are named, to read a test's name back.
    layout: Layout,
    pub(crate) config: Config,
    /// The gate of `#[probability(min_rate = ..)]` or `min_passes`, if any.
    pub(crate) gate: Option<GateSpec>,
    /// `compare = "axis"`, `baseline`, `margin` and `equivalence`, if given.
    compare: Option<CompareArgs>,
    /// `timeout = "30s"`, if given.
    timeout: Option<std::time::Duration>,
    /// Whether each case has a verdict item (`<case>::verdict`) that judges its gate.
    verdict_item: bool,
    /// Whether the function has a margin item (`<function>__margins`) that judges its margins.
    margin_item: bool,
    /// `limit = "key"`: the limit held around every run's body, if given.
    limit: Option<&'static str>,
    /// `latency_quantile` and `max_latency`, if either is given.
    latency: Option<LatencySpec>,
}

/// The comparison keys of the attribute: axis, baseline value, margin, equivalence.
type CompareArgs = (&'static str, Option<&'static str>, Option<f64>, bool);

/// Settings read from the crate's config at compile time, for the runtime.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub(crate) json: Option<&'static str>,
    pub(crate) delay: Option<f64>,
    /// The workspace root, against which a relative `PROB_JSON` resolves.
    pub(crate) root: Option<&'static str>,
    /// The config's statistics keys and their values as text, parsed by the runtime's settings
    /// like the environment variables that override them.
    pub(crate) entries: &'static [(&'static str, &'static str)],
}

impl Config {
    #[doc(hidden)]
    pub const fn new(
        json: Option<&'static str>,
        delay: Option<f64>,
        root: Option<&'static str>,
        entries: &'static [(&'static str, &'static str)],
    ) -> Config {
        Config {
            json,
            delay,
            root,
            entries,
        }
    }
}

/// The module a bench function is written in, from the path of the child module its generated
/// statics live in (named after the function): the last segment dropped. Computed when the
/// static is, so that a run reads a field instead of searching a string.
const fn parent_module(data_module: &'static str) -> &'static str {
    let bytes = data_module.as_bytes();
    let mut at = bytes.len();
    while at >= 2 {
        if bytes[at - 1] == b':' && bytes[at - 2] == b':' {
            return data_module.split_at(at - 2).0;
        }
        at -= 1;
    }
    data_module
}

/// One case of a bench function, as a static in generated code.
#[doc(hidden)]
pub struct Case {
    pub(crate) bench: &'static Bench,
    pub(crate) index: u32,
    /// The case id alone (`refund please-Terse`), as `CaseInfo::case_id`.
    pub(crate) id: &'static str,
    /// The row id (`triage::refund please-Terse`): what the report calls `case`.
    pub(crate) row_id: &'static str,
    /// The segment of its test items' names that names the case (`refund_please_terse`); empty
    /// when the function has no parameters, and so its items no case level.
    pub(crate) item: &'static str,
    pub(crate) params: &'static [(&'static str, &'static str)],
    /// Per group of `params(...)`: its argument names, this case's value id and position.
    parts: &'static [(&'static [&'static str], &'static str, u32)],
}

/// Counts its case's run item as returned when dropped (see [`Case::item_end`]).
pub(crate) struct ItemEnd(&'static Case);

impl Drop for ItemEnd {
    fn drop(&mut self) {
        self.0.state().items_ended.fetch_add(1, Ordering::AcqRel);
    }
}

/// What this process knows of a case that has run in it.
#[derive(Default)]
struct CaseState {
    /// Set by the case's first run in this process, which describes the case to the store.
    seen: AtomicBool,
    /// The case's identity as the store's start lines spell it, escaped once.
    identity: OnceLock<String>,
    /// The case's description, built once: a run's start and end both carry it.
    info: OnceLock<CaseInfo>,
    /// The case's number in this process's slots (see `store::slots`), once one of its runs
    /// was recorded in a slot.
    slot_ref: OnceLock<u32>,
    /// This process's outcomes of the case so far, for judging its gate at its last run.
    passes: AtomicU64,
    fails: AtomicU64,
    errors: AtomicU64,
    /// Runs of the case that `PROB_STOP` skipped in this process.
    stopped: AtomicU64,
    /// Run items of the case that have returned in this process, however they ended: the
    /// verdict item waits for those libtest selected.
    items_ended: AtomicU64,
}

impl Bench {
    #[allow(clippy::too_many_arguments)]
    #[doc(hidden)]
    pub const fn new(
        package: &'static str,
        function: &'static str,
        data_module: &'static str,
        file: &'static str,
        line: u32,
        runs: u32,
        cases: &'static [&'static Case],
        layout: Layout,
        config: Config,
        gate: Option<GateSpec>,
    ) -> Bench {
        let module = parent_module(data_module);
        Bench {
            package,
            function,
            module,
            module_in_crate: in_crate(module),
            file,
            line,
            runs,
            cases,
            layout,
            config,
            gate,
            compare: None,
            timeout: None,
            limit: None,
            verdict_item: false,
            margin_item: false,
            latency: None,
        }
    }

    /// The bench whose comparison's margins a margin item judges (`PROB_GATE_ITEMS`).
    #[doc(hidden)]
    pub const fn with_margin_item(self) -> Bench {
        Bench {
            margin_item: true,
            ..self
        }
    }

    /// Whether a margin item judges the function's margins, so that its runs are only samples.
    pub(crate) fn has_margin_item(&self) -> bool {
        self.margin_item
    }

    /// The bench whose gated cases each have a verdict item (`PROB_GATE_ITEMS`, on by default).
    #[doc(hidden)]
    pub const fn with_verdict_item(self) -> Bench {
        Bench {
            verdict_item: true,
            ..self
        }
    }

    /// Whether a verdict item judges each case's gate, so that its runs are only samples.
    pub(crate) fn has_verdict_item(&self) -> bool {
        self.verdict_item
    }

    /// The bench with the attribute's `timeout`, in nanoseconds.
    #[doc(hidden)]
    pub const fn with_timeout(self, nanos: u64) -> Bench {
        Bench {
            timeout: Some(std::time::Duration::from_nanos(nanos)),
            ..self
        }
    }

    /// The bench with the attribute's `latency_quantile`, `max_latency` (seconds) and, for a
    /// latency gate without a rate gate, `confidence`.
    #[doc(hidden)]
    pub const fn with_latency(
        self,
        quantile: Option<f64>,
        max_latency: Option<f64>,
        level: Option<f64>,
    ) -> Bench {
        Bench {
            latency: Some(LatencySpec {
                quantile,
                max_latency,
                level,
            }),
            ..self
        }
    }

    /// The bench with the attribute's `limit`.
    #[doc(hidden)]
    pub const fn with_limit(self, key: &'static str) -> Bench {
        Bench {
            limit: Some(key),
            ..self
        }
    }

    /// The attribute's `timeout`, if any; `PROB_TIMEOUT` overrides it (`harness::timeout`).
    pub(crate) fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout
    }

    /// The attribute's `limit`, if any.
    pub(crate) fn limit(&self) -> Option<&'static str> {
        self.limit
    }

    /// The bench with the attribute's comparison keys.
    #[doc(hidden)]
    pub const fn with_compare(
        self,
        axis: &'static str,
        baseline: Option<&'static str>,
        margin: Option<f64>,
        equivalence: bool,
    ) -> Bench {
        Bench {
            compare: Some((axis, baseline, margin, equivalence)),
            ..self
        }
    }

    fn compare(&self) -> Option<CompareSpec> {
        self.compare
            .map(|(axis, baseline, margin, equivalence)| CompareSpec {
                axis: axis.to_string(),
                baseline: baseline.map(str::to_string),
                margin,
                equivalence,
            })
    }

    pub(crate) fn package(&self) -> &'static str {
        self.package
    }

    pub(crate) fn function(&self) -> &'static str {
        self.function
    }

    /// The module the function is written in.
    pub(crate) fn module(&self) -> &'static str {
        self.module
    }

    pub(crate) fn file(&self) -> &'static str {
        self.file
    }

    pub(crate) fn line(&self) -> u32 {
        self.line
    }

    pub(crate) fn gate(&self) -> Option<GateSpec> {
        self.gate
    }

    pub(crate) fn runs(&self) -> u32 {
        self.runs
    }

    /// Every case of the function.
    pub(crate) fn cases(&self) -> &'static [&'static Case] {
        self.cases
    }

    /// Whether a margin judges the function's cases (`compare` with `margin`).
    pub(crate) fn has_margin(&self) -> bool {
        self.compare
            .is_some_and(|(_, _, margin, _)| margin.is_some())
    }

    /// Whether a verdict besides the rate gate needs every run of each case, so that
    /// `PROB_STOP` stops none: a margin's, or a latency gate's, whose sample of run times
    /// skipped runs would shrink.
    pub(crate) fn needs_every_run(&self) -> bool {
        self.has_margin() || self.latency.is_some_and(|l| l.max_latency.is_some())
    }

    fn total_runs(&self) -> u64 {
        u64::from(self.runs) * self.cases.len() as u64
    }
}

impl Case {
    #[doc(hidden)]
    pub const fn new(
        bench: &'static Bench,
        index: u32,
        id: &'static str,
        row_id: &'static str,
        item: &'static str,
        params: &'static [(&'static str, &'static str)],
    ) -> Case {
        Case {
            bench,
            index,
            id,
            row_id,
            item,
            params,
            parts: &[],
        }
    }

    /// The case with its value of each group of `params(...)`.
    #[doc(hidden)]
    pub const fn with_parts(
        self,
        parts: &'static [(&'static [&'static str], &'static str, u32)],
    ) -> Case {
        Case { parts, ..self }
    }

    /// This process's state of the case, made at its first use. Kept for the process's life,
    /// so that it can be handed out without holding the table's lock.
    fn state(&'static self) -> &'static CaseState {
        thread_local! {
            /// The state this thread looked up last: a run asks for its case's state several
            /// times, and the table's lock and search cost more than the rest of a short run.
            static LAST: std::cell::Cell<Option<(usize, &'static CaseState)>> =
                const { std::cell::Cell::new(None) };
        }
        let key = std::ptr::from_ref(self) as usize;
        if let Ok(Some((last, state))) = LAST.try_with(std::cell::Cell::get) {
            if last == key {
                return state;
            }
        }
        let state = states().find(key);
        let _ = LAST.try_with(|last| last.set(Some((key, state))));
        state
    }

    /// Counts a finished run of this process; returns the counts so far, and whether this was
    /// the case's last run (all its configured runs finished here).
    pub(crate) fn count(&'static self, outcome: Outcome) -> ([u64; 3], bool) {
        let state = self.state();
        let counter = match outcome {
            Outcome::Pass => &state.passes,
            Outcome::Fail => &state.fails,
            Outcome::Error => &state.errors,
            Outcome::Stopped => &state.stopped,
        };
        counter.fetch_add(1, Ordering::AcqRel);
        let (counts, stopped) = self.tally();
        let done = counts.iter().sum::<u64>() + stopped == u64::from(self.bench.runs());
        (counts, done)
    }

    /// This process's finished runs of the case so far: passes, fails and errors, and the runs
    /// `PROB_STOP` skipped.
    pub(crate) fn tally(&'static self) -> ([u64; 3], u64) {
        let state = self.state();
        let counts = [
            state.passes.load(Ordering::Acquire),
            state.fails.load(Ordering::Acquire),
            state.errors.load(Ordering::Acquire),
        ];
        (counts, state.stopped.load(Ordering::Acquire))
    }

    /// A guard that counts a run item of the case as returned when it drops, whether its run
    /// passed, failed, was stopped, or never began its body.
    pub(crate) fn item_end(&'static self) -> ItemEnd {
        ItemEnd(self)
    }

    /// Run items of the case that have returned in this process.
    pub(crate) fn items_ended(&'static self) -> u64 {
        self.state().items_ended.load(Ordering::Acquire)
    }

    /// This process's counts of the case so far: passes, fails, errors.
    pub(crate) fn counts(&'static self) -> [u64; 3] {
        let state = self.state();
        [
            state.passes.load(Ordering::Acquire),
            state.fails.load(Ordering::Acquire),
            state.errors.load(Ordering::Acquire),
        ]
    }

    /// The bench the case belongs to.
    pub(crate) fn bench(&self) -> &'static Bench {
        self.bench
    }

    /// The identity fields of the case's store lines (see [`crate::store::identity_fragment`]).
    pub(crate) fn identity(&'static self) -> &'static str {
        self.state().identity.get_or_init(|| {
            crate::store::identity_fragment(self.bench.package(), self.bench.module(), self.row_id)
        })
    }

    /// Who the case is, as the store and the report describe it.
    pub(crate) fn info(&'static self) -> &'static CaseInfo {
        self.state().info.get_or_init(|| {
            let bench = self.bench;
            CaseInfo {
                case: self.row_id.to_string(),
                package: bench.package().to_string(),
                module: bench.module().to_string(),
                function: bench.function().to_string(),
                case_id: self.id.to_string(),
                file: bench.file().to_string(),
                line: bench.line(),
                index: self.index,
                runs: bench.runs(),
                gate: bench.gate(),
                compare: bench.compare(),
                latency: bench.latency,
                parts: self
                    .parts
                    .iter()
                    .map(|(names, id, index)| Part {
                        names: names.iter().map(|name| name.to_string()).collect(),
                        id: id.to_string(),
                        index: *index,
                    })
                    .collect(),
                params: OrderedMap(
                    self.params
                        .iter()
                        .map(|(name, value)| (name.to_string(), value.to_string()))
                        .collect(),
                ),
            }
        })
    }

    /// The case's number in this process's slots, set by the session writer.
    pub(crate) fn slot_ref(&'static self) -> &'static OnceLock<u32> {
        &self.state().slot_ref
    }

    /// Whether this is the first call in this process.
    pub(crate) fn first_sighting(&'static self) -> bool {
        !self.state().seen.swap(true, Ordering::Relaxed)
    }
}

/// The states of the cases that have run in this process, by the address of their static.
///
/// Every run looks its case's state up, on a thread of its own (libtest starts one per test),
/// so the lookup must be cheap unoptimized: an open-addressing table of write-once cells, sized
/// from the benches the linker listed, without a lock. A case the table has no room for (a
/// binary whose benches the linker could not list) goes to an ordered map under a lock.
struct CaseStates {
    cells: Box<[OnceLock<(usize, &'static CaseState)>]>,
    overflow: Mutex<BTreeMap<usize, &'static CaseState>>,
}

/// How many cases this binary's benches have: what a session report leaves room for.
pub(crate) fn case_count() -> usize {
    BENCHES.iter().map(|bench| bench.cases.len()).sum()
}

/// How many runs this binary's cases have in all, up to 65,536: what a process may record.
/// Capped, since a filter usually selects a few of them, and `PROB_RUNS` can be large.
pub(crate) fn run_count() -> usize {
    BENCHES
        .iter()
        .map(|bench| bench.cases.len() * bench.runs() as usize)
        .sum::<usize>()
        .min(1 << 16)
}

fn states() -> &'static CaseStates {
    static STATES: OnceLock<CaseStates> = OnceLock::new();
    STATES.get_or_init(|| {
        let cases = case_count();
        let size = (cases * 2).max(16).next_power_of_two();
        CaseStates {
            cells: (0..size).map(|_| OnceLock::new()).collect(),
            overflow: Mutex::new(BTreeMap::new()),
        }
    })
}

impl CaseStates {
    /// The state of the case whose static is at `key`, made at its first use.
    fn find(&self, key: usize) -> &'static CaseState {
        let mask = self.cells.len() - 1;
        // Case statics lie side by side: consecutive cases take consecutive cells.
        let mut at = (key / std::mem::size_of::<Case>()) & mask;
        for _ in 0..self.cells.len() {
            let (owner, state) = *self.cells[at].get_or_init(|| (key, Box::leak(Box::default())));
            if owner == key {
                return state;
            }
            at = (at + 1) & mask;
        }
        let mut overflow = self
            .overflow
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        overflow
            .entry(key)
            .or_insert_with(|| Box::leak(Box::default()))
    }
}

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

/// Every `#[probability]` function of the binary, whether or not it runs.
///
/// Only teardowns need the list (a teardown runs after the last run of its module), yet a
/// constructor per bench would run in every process: under nextest, one process per run, so
/// registering at start-up costs the number of benches in the binary at every run, a session
/// quadratic in its size. The linker assembles this slice instead, and start-up does nothing.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static BENCHES: [&'static Bench];

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
    use super::{in_scope, parent_module, CaseStates};

    #[test]
    fn each_case_has_one_state_also_past_the_tables_room() {
        let states = CaseStates {
            cells: (0..16).map(|_| std::sync::OnceLock::new()).collect(),
            overflow: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        };
        // More cases than cells, at addresses that collide.
        let keys: Vec<usize> = (0..40).map(|n| 0x1000 + n * 64 * 7).collect();
        let first: Vec<*const super::CaseState> = keys
            .iter()
            .map(|&key| std::ptr::from_ref(states.find(key)))
            .collect();
        for (index, &key) in keys.iter().enumerate() {
            assert_eq!(
                std::ptr::from_ref(states.find(key)),
                first[index],
                "key {key:#x}"
            );
        }
        let mut distinct = first.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), keys.len());
        assert!(!states.overflow.lock().expect("lock").is_empty());
    }

    #[test]
    fn the_module_is_the_generated_modules_parent() {
        assert_eq!(parent_module("evals::triage::bench_x"), "evals::triage");
        assert_eq!(parent_module("evals::bench_x"), "evals");
        assert_eq!(parent_module("bench_x"), "bench_x");
        const AT_COMPILE_TIME: &str = parent_module("a::b");
        assert_eq!(AT_COMPILE_TIME, "a");
    }

    #[test]
    fn scopes_follow_path_segments() {
        assert!(in_scope("evals", "evals"));
        assert!(in_scope("evals::triage", "evals"));
        assert!(!in_scope("evals_more", "evals"));
        assert!(!in_scope("evals", "evals::triage"));
    }
}
