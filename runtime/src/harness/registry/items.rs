//! Which case and run a generated test item holds, from its name (as libtest lists it and
//! nextest hands it to the test's process), and back: every item name of a binary.

use crate::harness::registry::{Bench, Case, BENCHES};
use crate::model::CaseInfo;

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

/// A module path without its first segment, the crate's name: `evals::triage` gives `triage`,
/// `evals` gives "". Computed when the static is, so that finding a test's case compares
/// strings and searches none.
pub(super) const fn in_crate(module: &'static str) -> &'static str {
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

impl Bench {
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

/// The names of `case`'s run items, as libtest lists them.
pub(crate) fn run_item_names(case: &Case) -> Vec<String> {
    let bench = case.bench;
    let module = match bench.module_in_crate {
        "" => String::new(),
        inner => format!("{inner}::"),
    };
    (1..=bench.runs)
        .map(|run| format!("{module}{}", bench.item_name(case, run)))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::{item_names_among, locate_among};
    use crate::harness::registry::{Bench, Case};

    /// A bench and its cases as the attribute generates them, in a module of their own: its
    /// function, the module it is written in, its runs, layout, and its cases' item segments.
    macro_rules! bench {
        ($name:ident: $function:literal in $module:literal, $runs:literal runs, $layout:ident,
         [$($case:ident = $item:literal),+]) => {
            mod $name {
                use crate::harness::registry::{Bench, Case, Config, Layout};
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
}
