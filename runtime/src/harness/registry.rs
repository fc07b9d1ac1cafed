//! What generated code registers: bench functions and their cases (listed by the linker), and
//! the setup and teardown hooks of their modules (registered before `main`). From the list, a
//! test's name leads back to its case and run ([`locate_item`]).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::harness::runner::panic_message;
use crate::model::CaseInfo;
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::GateSpec;
use crate::types::status::Outcome;

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
}

/// How the test items of a bench function are named and nested, as its attribute generated
/// them: the item of a case's run is found from the function's module, then as below
/// (`runN` padded to [`probtest_settings::run_digits`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One case of one run: the item is the function (`bench_x`).
    Single,
    /// One case, several runs: `bench_x::run<N>`.
    Runs,
    /// Parametrized cases of one run: `bench_x::<case item>`.
    Cases,
    /// Parametrized cases of several runs: `bench_x::<case item>::run<N>`.
    CaseRuns,
    /// Run-major order (`PROB_TRANSPOSE`), several runs: `run<NNNN>__bench_x__<case item>`, or
    /// `run<NNNN>__bench_x` without parameters, in the function's own module.
    Transposed,
}

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

/// A module path without its first segment, the crate's name: `evals::triage` gives `triage`,
/// `evals` gives "". Computed when the static is, so that finding a test's case compares
/// strings and searches none.
const fn in_crate(module: &'static str) -> &'static str {
    let bytes = module.as_bytes();
    let mut at = 0;
    while at + 1 < bytes.len() {
        if bytes[at] == b':' && bytes[at + 1] == b':' {
            return module.split_at(at + 2).1;
        }
        at += 1;
    }
    ""
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
        }
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

    fn total_runs(&self) -> u64 {
        u64::from(self.runs) * self.cases.len() as u64
    }

    /// The case and run of this function's test item `test_name` (see [`locate_item`]).
    fn locate(&self, test_name: &str) -> Option<(&'static Case, u32)> {
        let item = in_module(test_name, self.module_in_crate)?;
        let function = self.function;
        let (case_item, run) = match self.layout {
            Layout::Single => (item == function).then_some(("", None))?,
            Layout::Runs => (
                "",
                Some(item.strip_prefix(function)?.strip_prefix("::run")?),
            ),
            Layout::Cases => (item.strip_prefix(function)?.strip_prefix("::")?, None),
            Layout::CaseRuns => {
                let rest = item.strip_prefix(function)?.strip_prefix("::")?;
                let (case_item, run) = rest.split_once("::")?;
                (case_item, Some(run.strip_prefix("run")?))
            }
            Layout::Transposed => {
                let (run, rest) = item
                    .strip_prefix("run")?
                    .split_at_checked(probtest_settings::run_digits(self.runs, true))?;
                let rest = rest.strip_prefix("__")?.strip_prefix(function)?;
                let case_item = if rest.is_empty() {
                    rest
                } else {
                    rest.strip_prefix("__")?
                };
                (case_item, Some(run))
            }
        };
        let run = match run {
            Some(digits) => self.run_number(digits)?,
            None => 1,
        };
        // An empty segment only ever names the case of a function without parameters; a
        // parametrized function has none, as no case's item is empty.
        let case = self.cases.iter().find(|case| case.item == case_item)?;
        Some((case, run))
    }

    /// The run that `digits` number, if they are exactly as wide as this function's item names
    /// write them: `run1` is no item of a function of 10 runs, whose first is `run01`.
    fn run_number(&self, digits: &str) -> Option<u32> {
        let leading = self.layout == Layout::Transposed;
        if digits.len() != probtest_settings::run_digits(self.runs, leading)
            || !digits.bytes().all(|byte| byte.is_ascii_digit())
        {
            return None;
        }
        digits
            .parse()
            .ok()
            .filter(|run| (1..=self.runs).contains(run))
    }
}

/// The rest of `test_name` after the module path `module_in_crate` (see [`in_crate`]): module
/// `evals::triage` holds `triage::bench_x`, module `evals` holds `bench_x`.
fn in_module<'a>(test_name: &'a str, module_in_crate: &str) -> Option<&'a str> {
    if module_in_crate.is_empty() {
        return Some(test_name);
    }
    test_name.strip_prefix(module_in_crate)?.strip_prefix("::")
}

/// The case and the 1-based run of the generated test item named `test_name`, or `None` for
/// any other test.
///
/// `test_name` is the item's path inside its test binary, without the crate's name, as libtest
/// lists it and cargo-nextest hands it to the test's process in `NEXTEST_TEST_NAME`:
/// `triage::bench_x::refund::run03`, or `classify::refund::run03` for a function at the root
/// of an integration test. A process can thus know which run it holds before `main`. Cheap
/// enough for once per process: a scan of the listed benches with prefix checks, allocating
/// nothing.
pub(crate) fn locate_item(test_name: &str) -> Option<(&'static Case, u32)> {
    locate_among(&BENCHES, test_name)
}

/// Every generated item of this binary: the cases of its benches, and for each item its name
/// (as [`locate_item`] takes it), the index of its case and its run. For nextest's listing of
/// the binary, so that a test process that dies before start-up can still be told apart from
/// a test that is not probtest's.
pub(crate) fn item_names() -> (Vec<CaseInfo>, Vec<(String, u32, u32)>) {
    item_names_among(&BENCHES)
}

/// [`item_names`] over `benches`.
fn item_names_among(benches: &[&'static Bench]) -> (Vec<CaseInfo>, Vec<(String, u32, u32)>) {
    let mut cases = Vec::new();
    let mut items = Vec::new();
    for bench in benches {
        let module = match bench.module_in_crate {
            "" => String::new(),
            inner => format!("{inner}::"),
        };
        for case in bench.cases {
            let index = cases.len() as u32;
            cases.push(case.info().clone());
            for run in 1..=bench.runs {
                items.push((
                    format!("{module}{}", bench.item_name(case, run)),
                    index,
                    run,
                ));
            }
        }
    }
    (cases, items)
}

impl Bench {
    /// The name of the item of `case`'s run `run`, inside the function's module: what
    /// [`Bench::locate`] reads.
    fn item_name(&self, case: &Case, run: u32) -> String {
        let function = self.function;
        let digits = |leading: bool| {
            format!(
                "{run:0width$}",
                width = probtest_settings::run_digits(self.runs, leading)
            )
        };
        match self.layout {
            Layout::Single => function.to_string(),
            Layout::Runs => format!("{function}::run{}", digits(false)),
            Layout::Cases => format!("{function}::{}", case.item),
            Layout::CaseRuns => format!("{function}::{}::run{}", case.item, digits(false)),
            Layout::Transposed if case.item.is_empty() => {
                format!("run{}__{function}", digits(true))
            }
            Layout::Transposed => format!("run{}__{function}__{}", digits(true), case.item),
        }
    }
}

/// [`locate_item`] over `benches`.
fn locate_among(benches: &[&'static Bench], test_name: &str) -> Option<(&'static Case, u32)> {
    benches.iter().find_map(|bench| bench.locate(test_name))
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
        }
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
        };
        counter.fetch_add(1, Ordering::AcqRel);
        let counts = [
            state.passes.load(Ordering::Acquire),
            state.fails.load(Ordering::Acquire),
            state.errors.load(Ordering::Acquire),
        ];
        let done = counts.iter().sum::<u64>() == u64::from(self.bench.runs());
        (counts, done)
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
    use super::{in_scope, item_names_among, locate_among, parent_module, Bench, Case, CaseStates};

    /// A bench and its cases as the attribute generates them, in a module of their own: its
    /// function, the module it is written in, its runs, layout, and its cases' item segments.
    macro_rules! bench {
        ($name:ident: $function:literal in $module:literal, $runs:literal runs, $layout:ident,
         [$($case:ident = $item:literal),+]) => {
            mod $name {
                use super::super::{Bench, Case, Config, Layout};
                pub(super) static BENCH: Bench = Bench::new(
                    "evals",
                    $function,
                    concat!($module, "::__probtest_", $function),
                    file!(),
                    line!(),
                    $runs,
                    &CASES,
                    Layout::$layout,
                    Config::new(None, None, None, &[]),
                    None,
                );
                static CASES: [&Case; [$($item),+].len()] = [$(&$case),+];
                $(pub(super) static $case: Case = Case::new(&BENCH, 0, $item, $item, $item, &[]);)+
            }
        };
    }

    bench!(once: "bench_once" in "evals::triage", 1 runs, Single, [ONLY = ""]);
    bench!(repeat: "bench_repeat" in "evals::triage", 10 runs, Runs, [ONLY = ""]);
    bench!(cases: "bench_cases" in "evals", 1 runs, Cases, [REFUND = "refund", RUN3 = "run3"]);
    bench!(grid: "bench_grid" in "evals::triage::deep", 3 runs, CaseRuns,
        [REFUND = "refund", RUN2 = "run2"]);
    bench!(major: "bench_major" in "evals::triage", 12 runs, Transposed,
        [REFUND = "refund", WHERE = "where_is_it"]);
    bench!(plain_major: "bench_plain" in "evals", 2 runs, Transposed, [ONLY = ""]);

    const BENCHES: [&Bench; 6] = [
        &once::BENCH,
        &repeat::BENCH,
        &cases::BENCH,
        &grid::BENCH,
        &major::BENCH,
        &plain_major::BENCH,
    ];

    fn locate(test_name: &str) -> Option<(&'static Case, u32)> {
        locate_among(&BENCHES, test_name)
    }

    #[test]
    fn every_listed_item_name_leads_back_to_its_case_and_run() {
        let (cases, items) = item_names_among(&BENCHES);
        let runs: u32 = BENCHES
            .iter()
            .map(|bench| bench.runs * bench.cases.len() as u32)
            .sum();
        assert_eq!(items.len(), runs as usize);
        for (name, case, run) in &items {
            let (found, found_run) = locate(name).unwrap_or_else(|| panic!("{name}: not found"));
            assert_eq!(found.info().key(), cases[*case as usize].key(), "{name}");
            assert_eq!(found_run, *run, "{name}");
        }
        assert!(items
            .iter()
            .any(|(name, ..)| name == "triage::bench_repeat::run07"));
        assert!(items
            .iter()
            .any(|(name, ..)| name == "triage::run0012__bench_major__where_is_it"));
    }

    #[test]
    fn a_generated_items_name_leads_to_its_case_and_run() {
        for (name, case, run) in [
            ("triage::bench_once", &once::ONLY, 1),
            ("triage::bench_repeat::run01", &repeat::ONLY, 1),
            ("triage::bench_repeat::run10", &repeat::ONLY, 10),
            ("bench_cases::refund", &cases::REFUND, 1),
            // A case whose item reads like a run segment is a case all the same.
            ("bench_cases::run3", &cases::RUN3, 1),
            ("triage::deep::bench_grid::refund::run3", &grid::REFUND, 3),
            ("triage::deep::bench_grid::run2::run1", &grid::RUN2, 1),
            ("triage::run0001__bench_major__refund", &major::REFUND, 1),
            (
                "triage::run0012__bench_major__where_is_it",
                &major::WHERE,
                12,
            ),
            ("run0002__bench_plain", &plain_major::ONLY, 2),
        ] {
            let (found, found_run) = locate(name).unwrap_or_else(|| panic!("{name}: not found"));
            assert!(std::ptr::eq(found, case), "{name}: found {}", found.item);
            assert_eq!(found_run, run, "{name}");
        }
    }

    #[test]
    fn any_other_name_leads_nowhere() {
        for name in [
            "",
            // Tests of the same modules that probtest did not generate.
            "triage::helper_parses",
            "triage::bench_once_more",
            "triage::bench_oncex",
            "bench_cases::refund::helper",
            // The right item in the wrong module, or with the crate's name left in.
            "bench_once",
            "other::bench_once",
            "evals::triage::bench_once",
            "deep::bench_grid::refund::run3",
            // A function's module alone, or a case without its run.
            "triage::bench_repeat",
            "triage::deep::bench_grid::refund",
            "triage::deep::bench_grid::run2",
            "bench_cases::run3::run1",
            "bench_cases::",
            // Runs padded otherwise than the items are, or past the last.
            "triage::bench_repeat::run1",
            "triage::bench_repeat::run010",
            "triage::bench_repeat::run00",
            "triage::bench_repeat::run11",
            "triage::bench_repeat::run+1",
            "triage::deep::bench_grid::refund::run4",
            "triage::deep::bench_grid::refund::run0",
            "triage::run01__bench_major__refund",
            "triage::run0013__bench_major__refund",
            "triage::run00001__bench_major__refund",
            // Cases that are not there, or a case level where there is none.
            "bench_cases::other",
            "triage::run0001__bench_major",
            "triage::run0001__bench_major__",
            "triage::run0001__bench_major__refund_2",
            "run0002__bench_plain__x",
            "run0003__bench_plain",
            "run0002__bench_plainer",
        ] {
            assert!(locate(name).is_none(), "{name}");
        }
    }

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
