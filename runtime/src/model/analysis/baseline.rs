//! This session against an earlier report (`PROB_BASELINE`), probtest's or
//! pytest-probability's: cases paired by id, every function compared, current − baseline,
//! through the same paired comparison as an argument's values; with `PROB_MARGIN` a function
//! whose pass rate may have dropped by more than the margin fails the session.
//!
//! Layer: model.

use crate::model::analysis::compare::{adjust, compare_pairs, Comparison, Pair};
use crate::model::analysis::estimates::function_of;
use crate::model::report::{Report, Row};
use crate::types::stats::resample::fsum;
use crate::types::stats::StatsConfig;

/// The earlier report, reduced to what the comparison needs: each case's counts and cost,
/// rows sharing a case id pooled, rows with no runs left out.
#[derive(Clone, Debug, PartialEq)]
pub struct Baseline {
    /// The path it was read from, as given.
    pub path: String,
    /// When it was made, if it says.
    pub created: Option<String>,
    /// Per case id: passes, runs and cost.
    pub cases: Vec<(String, u64, u64, f64)>,
}

impl Baseline {
    /// The baseline of `report`, read from `path`.
    pub fn of(path: &str, report: &Report) -> Baseline {
        let mut cases: Vec<(String, u64, u64, f64)> = Vec::new();
        for row in report.rows.iter().filter(|row| row.total > 0) {
            match cases.iter_mut().find(|(case, ..)| *case == row.info.case) {
                Some(case) => {
                    case.1 += row.passes;
                    case.2 += row.total;
                    case.3 += row.cost;
                }
                None => cases.push((row.info.case.clone(), row.passes, row.total, row.cost)),
            }
        }
        cases.sort_by(|a, b| a.0.cmp(&b.0));
        Baseline {
            path: path.to_string(),
            created: Some(report.created.clone()).filter(|c| !c.is_empty()),
            cases,
        }
    }

    fn get(&self, case: &str) -> Option<&(String, u64, u64, f64)> {
        self.cases
            .binary_search_by(|entry| entry.0.as_str().cmp(case))
            .ok()
            .map(|at| &self.cases[at])
    }

    /// Whether a margin, rather than each run, judges `case`: there is a margin and the case is
    /// in the baseline.
    pub fn judges(&self, case: &str, config: &StatsConfig) -> bool {
        config.margin.is_some() && self.get(case).is_some()
    }
}

/// This session against the baseline: one comparison per function with a case in both
/// reports, and the cases found in only one of them; pytest-probability's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct BaselineResult {
    /// The baseline report's path, as given.
    pub path: String,
    /// When the baseline report was made.
    pub created: Option<String>,
    /// `PROB_MARGIN`, the drop that fails a function; none: report only.
    pub margin: Option<f64>,
    /// Cases in both reports.
    pub paired: u64,
    /// Cases only in this session.
    pub only_current: Vec<String>,
    /// Cases only in the baseline.
    pub only_baseline: Vec<String>,
    /// Per function, current − baseline.
    pub comparisons: Vec<Comparison>,
}

/// The case id after its function: the input a pair is keyed by (empty for an unparametrized
/// function).
fn variant(case: &str) -> &str {
    case.split_once("::").map_or("", |(_, rest)| rest)
}

/// Pairs `rows` with the baseline's by case id and compares each function.
pub(crate) fn compare_with_baseline(
    rows: &[Row],
    baseline: &Baseline,
    config: &StatsConfig,
) -> BaselineResult {
    let current: Vec<&Row> = rows.iter().filter(|r| r.total > 0).collect();
    let find = |case: &str| current.iter().find(|r| r.info.case == case).copied();
    let mut functions: Vec<&str> = current
        .iter()
        .map(|r| function_of(&r.info.case))
        .chain(baseline.cases.iter().map(|c| function_of(&c.0)))
        .collect();
    functions.sort_unstable();
    functions.dedup();
    let mut comparisons = Vec::new();
    for function in functions {
        let mut ids: Vec<&str> = current
            .iter()
            .map(|r| r.info.case.as_str())
            .chain(baseline.cases.iter().map(|c| c.0.as_str()))
            .filter(|case| function_of(case) == function)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let paired: Vec<&str> = ids
            .iter()
            .copied()
            .filter(|case| find(case).is_some() && baseline.get(case).is_some())
            .collect();
        if paired.is_empty() {
            continue;
        }
        let pairs = paired
            .iter()
            .map(|case| {
                let (_, passes, total, _) = baseline.get(case).expect("paired");
                let now = find(case).expect("paired");
                Pair {
                    input: variant(case).to_string(),
                    baseline: (*passes, *total),
                    arm: (now.passes, now.total),
                }
            })
            .collect();
        let unpaired = ids
            .iter()
            .filter(|case| !paired.contains(case))
            .map(|case| variant(case).to_string())
            .collect();
        // Cost per run, this session over the baseline, when both recorded cost.
        let now: Vec<&Row> = paired.iter().filter_map(|case| find(case)).collect();
        let base_cost = fsum(paired.iter().filter_map(|c| baseline.get(c)).map(|c| c.3));
        let base_runs: u64 = paired
            .iter()
            .filter_map(|c| baseline.get(c))
            .map(|c| c.2)
            .sum();
        let now_cost = fsum(now.iter().map(|r| r.cost));
        let now_runs: u64 = now.iter().map(|r| r.total).sum();
        let ratio = (base_cost > 0.0 && now_cost > 0.0)
            .then(|| (now_cost / now_runs as f64) / (base_cost / base_runs as f64));
        comparisons.push(compare_pairs(
            function,
            None,
            "baseline",
            "current",
            config.margin.map(|m| (m, false)),
            pairs,
            unpaired,
            ratio,
            config,
        ));
    }
    adjust(&mut comparisons, config.adjust);
    let only_current = current
        .iter()
        .map(|r| r.info.case.clone())
        .filter(|case| baseline.get(case).is_none())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let only_baseline = baseline
        .cases
        .iter()
        .map(|c| c.0.clone())
        .filter(|case| find(case).is_none())
        .collect();
    BaselineResult {
        path: baseline.path.clone(),
        created: baseline.created.clone(),
        margin: config.margin,
        paired: comparisons.iter().map(|c| c.pairs).sum(),
        only_current,
        only_baseline,
        comparisons,
    }
}
