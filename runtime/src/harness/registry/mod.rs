//! What generated code registers: bench functions and their cases (listed by the linker), and
//! the setup and teardown hooks of their modules (registered before `main`). From the list, a
//! test's name leads back to its case and run ([`locate_item`]).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use crate::model::{CaseInfo, CompareSpec, Part};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::GateSpec;
use crate::types::status::Outcome;

mod hooks;
mod items;
mod states;

pub(crate) use hooks::{
    ensure_setup, has_setups, has_teardowns, run_finished, run_remaining_teardowns,
};
pub use hooks::{register_hook, Hook};
use items::in_crate;
pub use items::Layout;
pub(crate) use items::{item_names, locate_item, run_item_names};
use states::CaseState;

/// A `#[probability]` function, as a static in generated code.
///
/// Generated statics hold what the macro knows and no state. A binary has one per function and
/// case, and the loader writes every page of them (their pointers are relocated) in every
/// process, whether or not its cases run: state kept inline made them twice as many pages. What
/// a case gathers while running lives in a `CaseState`, made when the case first runs, which
/// the case's static points to.
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
    /// Whether its runs take the runner's quick path, once known: 0 unknown, 1 yes, 2 no.
    quick: AtomicU8,
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
    /// This process's state of the case, once it ran: reached in one step, since every run
    /// asks for it several times, on a thread of its own (libtest starts one per test).
    state: OnceLock<&'static CaseState>,
}

/// Counts its case's run item as returned when dropped (see [`Case::item_end`]).
pub(crate) struct ItemEnd(&'static Case);

impl Drop for ItemEnd {
    fn drop(&mut self) {
        // Only a verdict or margin item waits for the count: the others' runs skip writing a
        // word that every run of the case would write.
        let bench = self.0.bench;
        if bench.has_verdict_item() || bench.has_margin_item() {
            self.0.state().items_ended.fetch_add(1, Ordering::AcqRel);
        }
    }
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
            quick: AtomicU8::new(0),
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

    /// Whether the runs of the function take the runner's quick path, once known.
    pub(crate) fn quick(&self) -> Option<bool> {
        match self.quick.load(Ordering::Relaxed) {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        }
    }

    /// Notes whether the runs of the function take the runner's quick path.
    pub(crate) fn set_quick(&self, quick: bool) {
        self.quick
            .store(if quick { 1 } else { 2 }, Ordering::Relaxed);
    }

    /// The attribute's latency settings, if any.
    pub(crate) fn latency(&self) -> Option<LatencySpec> {
        self.latency
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
            state: OnceLock::new(),
        }
    }

    /// The case with its value of each group of `params(...)`.
    #[doc(hidden)]
    pub const fn with_parts(
        mut self,
        parts: &'static [(&'static [&'static str], &'static str, u32)],
    ) -> Case {
        self.parts = parts;
        self
    }

    /// This process's state of the case, made at its first use and kept for the process's
    /// life.
    fn state(&'static self) -> &'static CaseState {
        // `get` first: every run asks twice, and `get_or_init` is several calls deeper in a
        // test binary built without optimizations.
        match self.state.get() {
            Some(state) => state,
            None => self
                .state
                .get_or_init(|| Box::leak(Box::new(CaseState::default()))),
        }
    }

    /// Counts a finished run of this process; returns the counts so far, and whether this was
    /// the case's last run (all its configured runs finished here).
    pub(crate) fn count(&'static self, outcome: Outcome) -> ([u64; 3], bool) {
        self.note(outcome);
        let (counts, stopped) = self.tally();
        let done = counts.iter().sum::<u64>() + stopped == u64::from(self.bench.runs());
        (counts, done)
    }

    /// Counts a finished run of this process.
    pub(crate) fn note(&'static self, outcome: Outcome) {
        let state = self.state();
        let counter = match outcome {
            Outcome::Pass => &state.passes,
            Outcome::Fail => &state.fails,
            Outcome::Error => &state.errors,
            Outcome::Stopped => &state.stopped,
        };
        counter.fetch_add(1, Ordering::AcqRel);
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

    /// Run items of the case that have returned in this process: counted for a bench with a
    /// verdict or margin item, which waits for them.
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

    /// Whether this call puts the case on the process's list of its cases: the first does.
    pub(crate) fn newly_listed(&'static self) -> bool {
        let listed = &self.state().listed;
        !listed.load(Ordering::Relaxed) && !listed.swap(true, Ordering::Relaxed)
    }

    /// Whether this is the first call in this process.
    pub(crate) fn first_sighting(&'static self) -> bool {
        // Read before it is written: after the first run, no run writes the case's word.
        let seen = &self.state().seen;
        !seen.load(Ordering::Relaxed) && !seen.swap(true, Ordering::Relaxed)
    }
}

/// Every case of the binary's benches, whether or not it runs.
pub(crate) fn cases() -> impl Iterator<Item = &'static Case> {
    BENCHES.iter().flat_map(|bench| bench.cases.iter().copied())
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

/// Every `#[probability]` function of the binary, whether or not it runs.
///
/// Only teardowns need the list (a teardown runs after the last run of its module), yet a
/// constructor per bench would run in every process: under nextest, one process per run, so
/// registering at start-up costs the number of benches in the binary at every run, a session
/// quadratic in its size. The linker assembles this slice instead, and start-up does nothing.
#[doc(hidden)]
#[linkme::distributed_slice]
pub static BENCHES: [&'static Bench];

#[cfg(test)]
mod tests {
    use super::parent_module;

    #[test]
    fn the_module_is_the_generated_modules_parent() {
        assert_eq!(parent_module("evals::triage::bench_x"), "evals::triage");
        assert_eq!(parent_module("evals::bench_x"), "evals");
        assert_eq!(parent_module("bench_x"), "bench_x");
        const AT_COMPILE_TIME: &str = parent_module("a::b");
        assert_eq!(AT_COMPILE_TIME, "a");
    }
}
