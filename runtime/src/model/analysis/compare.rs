//! Comparisons of one argument's values: in every function that has the argument (its
//! attribute's `compare`, else `PROB_COMPARE`), each value (arm) against the baseline arm,
//! paired by the other arguments' values. One paired input gives Newcombe's interval and
//! Fisher's exact p; many give a paired cluster bootstrap of the mean difference and a
//! sign-flip p. The same pairing serves the comparison with an earlier report (`baseline`).
//!
//! Layer: model.

use crate::model::analysis::estimates::{by_function, Bounds};
use crate::model::case::CompareSpec;
use crate::model::report::Row;
use crate::types::stats::paired::{
    adjust_pvalues, exact_difference, fisher_exact, newcombe, sign_flip, Adjustment,
};
use crate::types::stats::resample::{bootstrap_interval, fmean, fsum};
use crate::types::stats::{StatsConfig, Verdict};

/// Passes and runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counts {
    /// Runs that passed.
    pub passes: u64,
    /// All runs.
    pub total: u64,
}

/// One input that ran in both arms: its difference (arm − baseline pass fraction), with
/// Newcombe's interval and Fisher's exact p (the two arms' runs are independent samples).
#[derive(Clone, Debug, PartialEq)]
pub struct PairedInput {
    /// The input: the other arguments' value ids, joined with `-`.
    pub input: String,
    /// The baseline arm's counts.
    pub baseline: Counts,
    /// The compared arm's counts.
    pub arm: Counts,
    /// Arm minus baseline pass fraction.
    pub difference: f64,
    /// Newcombe's interval on the difference.
    pub ci: Bounds,
    /// Fisher's exact two-sided p.
    pub p: f64,
    /// `fisher`.
    pub p_method: String,
}

/// One arm against the baseline over the inputs both ran; pytest-probability's fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The function's short name.
    pub function: String,
    /// The compared argument; none for a comparison with an earlier report.
    pub axis: Option<String>,
    /// The baseline arm (`baseline` against an earlier report).
    pub baseline: String,
    /// The compared arm (`current` against an earlier report).
    pub arm: String,
    /// Inputs in both arms.
    pub pairs: u64,
    /// Inputs in one arm only, left out.
    pub unpaired: Vec<String>,
    /// The mean of the per-input differences; none without pairs.
    pub difference: Option<f64>,
    /// Newcombe's (one input) or the paired bootstrap's (at least `min_inputs`) interval.
    pub ci: Option<Bounds>,
    /// Fisher's (one input) or the sign-flip test's p.
    pub p: Option<f64>,
    /// `fisher` or `sign-flip`.
    pub p_method: Option<String>,
    /// Whether `p` is exact (a Monte Carlo sign-flip p is not).
    pub exact: Option<bool>,
    /// `p` adjusted over the session's comparisons (`PROB_ADJUST`).
    pub p_adjusted: Option<f64>,
    /// The adjustment.
    pub adjustment: Adjustment,
    /// The number of comparisons adjusted together.
    pub family: u64,
    /// Unadjusted p-values among several comparisons.
    pub exploratory: bool,
    /// The margin that makes it a gate, if any.
    pub margin: Option<f64>,
    /// Whether the margin asks for equivalence.
    pub equivalence: bool,
    /// The margin's verdict: read off the interval alone.
    pub verdict: Option<Verdict>,
    /// Why there is no interval, when there is none.
    pub suppressed: Option<String>,
    /// Bootstrap resamples.
    pub resamples: u64,
    /// The seed of the bootstrap and of a Monte Carlo sign-flip test.
    pub seed: u64,
    /// Cost per run, arm over baseline, when both recorded cost.
    pub cost_ratio: Option<f64>,
    /// Every paired input, sorted by input.
    pub inputs: Vec<PairedInput>,
    /// Cases stopped early (probtest never stops a case early: always 0).
    pub stopped: u64,
}

impl Comparison {
    /// The p-value to print: adjusted, when there is an adjustment.
    pub fn shown_p(&self) -> Option<f64> {
        if self.adjustment == Adjustment::None {
            self.p
        } else {
            self.p_adjusted
        }
    }
}

/// One input's counts in both arms.
pub(crate) struct Pair {
    pub(crate) input: String,
    pub(crate) baseline: (u64, u64),
    pub(crate) arm: (u64, u64),
}

/// The margin's verdict on an interval on arm − baseline: non-inferiority (PASS when the
/// whole interval lies above −margin) or equivalence (PASS inside ±margin, FAIL wholly
/// outside). No interval is UNDECIDED.
pub fn margin_verdict(interval: Option<(f64, f64)>, margin: f64, equivalence: bool) -> Verdict {
    let Some((low, high)) = interval else {
        return Verdict::Undecided;
    };
    if equivalence {
        if -margin < low && high < margin {
            Verdict::Pass
        } else if high < -margin || low > margin {
            Verdict::Fail
        } else {
            Verdict::Undecided
        }
    } else if low > -margin {
        Verdict::Pass
    } else if high < -margin {
        Verdict::Fail
    } else {
        Verdict::Undecided
    }
}

/// The comparison of `arm` with `baseline` over `pairs`, at `config`'s level, resamples, seed
/// and `min_inputs`; everything comes from the counts.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compare_pairs(
    function: &str,
    axis: Option<&str>,
    baseline: &str,
    arm: &str,
    margin: Option<(f64, bool)>,
    mut pairs: Vec<Pair>,
    unpaired: Vec<String>,
    cost_ratio: Option<f64>,
    config: &StatsConfig,
) -> Comparison {
    let level = config.interval.level;
    pairs.sort_by(|a, b| a.input.cmp(&b.input));
    let inputs: Vec<PairedInput> = pairs
        .iter()
        .map(|pair| {
            let ((xb, nb), (xa, na)) = (pair.baseline, pair.arm);
            PairedInput {
                input: pair.input.clone(),
                baseline: Counts {
                    passes: xb,
                    total: nb,
                },
                arm: Counts {
                    passes: xa,
                    total: na,
                },
                difference: xa as f64 / na as f64 - xb as f64 / nb as f64,
                ci: Bounds::new("newcombe", level, newcombe(xa, na, xb, nb, level)),
                p: fisher_exact(xa, na, xb, nb),
                p_method: "fisher".to_string(),
            }
        })
        .collect();
    let mut unpaired = unpaired;
    unpaired.sort();
    let verdict_of = |interval: Option<(f64, f64)>| {
        margin.map(|(margin, equivalence)| margin_verdict(interval, margin, equivalence))
    };
    let mut out = Comparison {
        function: function.to_string(),
        axis: axis.map(str::to_string),
        baseline: baseline.to_string(),
        arm: arm.to_string(),
        pairs: inputs.len() as u64,
        unpaired,
        difference: None,
        ci: None,
        p: None,
        p_method: None,
        exact: None,
        p_adjusted: None,
        adjustment: Adjustment::None,
        family: 1,
        exploratory: false,
        margin: margin.map(|(m, _)| m),
        equivalence: margin.is_some_and(|(_, e)| e),
        verdict: verdict_of(None),
        suppressed: None,
        resamples: config.resamples,
        seed: config.seed,
        cost_ratio,
        inputs,
        stopped: 0,
    };
    match out.inputs.len() {
        0 => out.suppressed = Some("no paired inputs".to_string()),
        1 => {
            let only = &out.inputs[0];
            out.difference = Some(only.difference);
            out.ci = Some(only.ci.clone());
            out.p = Some(only.p);
            out.p_method = Some("fisher".to_string());
            out.exact = Some(true);
            out.verdict = verdict_of(Some((only.ci.low, only.ci.high)));
        }
        n => {
            let differences: Vec<f64> = out.inputs.iter().map(|i| i.difference).collect();
            let exact: Vec<(i128, i128)> = pairs
                .iter()
                .map(|pair| exact_difference(pair.baseline, pair.arm))
                .collect();
            let (p, is_exact) = sign_flip(&exact, config.resamples.max(1), config.seed);
            out.difference = fmean(&differences);
            out.p = Some(p);
            out.p_method = Some("sign-flip".to_string());
            out.exact = Some(is_exact);
            if (n as u64) < config.min_inputs {
                out.suppressed = Some(format!("fewer than {} paired inputs", config.min_inputs));
            } else {
                let fractions: Vec<(f64, f64)> = out
                    .inputs
                    .iter()
                    .map(|i| {
                        (
                            i.baseline.passes as f64 / i.baseline.total as f64,
                            i.arm.passes as f64 / i.arm.total as f64,
                        )
                    })
                    .collect();
                // A pair's difference is drawn whole, as pytest-probability draws it.
                let differences: Vec<f64> =
                    fractions.iter().map(|(base, arm)| arm - base).collect();
                let ci =
                    bootstrap_interval(&differences, config.resamples.max(1), config.seed, level);
                out.ci = ci.map(|bounds| Bounds::new("bootstrap", level, bounds));
                out.verdict = verdict_of(ci);
            }
        }
    }
    out
}

/// `comparisons` with their p-values adjusted by `method` over every one that has a p-value:
/// the session's family.
pub(crate) fn adjust(comparisons: &mut [Comparison], method: Adjustment) {
    let family: Vec<usize> = (0..comparisons.len())
        .filter(|&i| comparisons[i].p.is_some())
        .collect();
    let ps: Vec<f64> = family.iter().filter_map(|&i| comparisons[i].p).collect();
    let adjusted = adjust_pvalues(&ps, method);
    for comparison in comparisons.iter_mut() {
        comparison.adjustment = method;
        comparison.family = family.len() as u64;
        comparison.exploratory = method == Adjustment::None && family.len() > 1;
        comparison.p_adjusted = None;
    }
    for (&i, p) in family.iter().zip(adjusted) {
        comparisons[i].p_adjusted = Some(p);
    }
}

/// Cost per run, arm over baseline; none unless both recorded cost.
pub(crate) fn cost_ratio(base: &[&Row], arm: &[&Row]) -> Option<f64> {
    let cost = |rows: &[&Row]| fsum(rows.iter().map(|r| r.cost));
    let runs = |rows: &[&Row]| rows.iter().map(|r| r.total).sum::<u64>() as f64;
    let (base_cost, arm_cost) = (cost(base), cost(arm));
    if !(base_cost > 0.0 && arm_cost > 0.0) {
        return None;
    }
    Some((arm_cost / runs(arm)) / (base_cost / runs(base)))
}

/// A row's place in its function's comparison: the axis, its arm, the arm's position and its
/// input, or none when the function does not compare on `axis`.
fn place<'a>(row: &'a Row, axis: &str) -> Option<(&'a str, u32, String)> {
    let parts = &row.info.parts;
    let at = parts
        .iter()
        .position(|p| p.names.iter().any(|n| n == axis))?;
    let input: Vec<&str> = parts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, p)| p.id.as_str())
        .collect();
    Some((&parts[at].id, parts[at].index, input.join("-")))
}

/// Every comparison among `rows`: per compared function (by short name), each arm (in the
/// order of its values) against its baseline, paired by input, adjusted as one family.
pub(crate) fn comparisons(rows: &[Row], config: &StatsConfig) -> Vec<Comparison> {
    let mut out = Vec::new();
    // Nothing compares: no function to group the rows by (an empty family needs no adjusting).
    if config.compare.is_none() && rows.iter().all(|row| row.info.compare.is_none()) {
        return out;
    }
    for (name, mut group) in by_function(rows) {
        group.retain(|r| r.total > 0);
        let Some(spec) = group
            .iter()
            .find_map(|r| r.info.compare.clone())
            .or_else(|| {
                config.compare.as_ref().map(|axis| CompareSpec {
                    axis: axis.clone(),
                    baseline: None,
                    margin: None,
                    equivalence: false,
                })
            })
        else {
            continue;
        };
        let placed: Vec<(&Row, (&str, u32, String))> = group
            .iter()
            .filter_map(|r| Some((*r, place(r, &spec.axis)?)))
            .collect();
        let mut arms: Vec<(u32, &str)> = placed.iter().map(|(_, (a, i, _))| (*i, *a)).collect();
        arms.sort_unstable();
        arms.dedup();
        if arms.len() < 2 {
            continue;
        }
        let baseline = spec
            .baseline
            .clone()
            .unwrap_or_else(|| arms[0].1.to_string());
        let margin = spec.margin.map(|m| (m, spec.equivalence));
        let mut inputs: Vec<&str> = placed
            .iter()
            .map(|(_, (_, _, input))| input.as_str())
            .collect();
        inputs.sort_unstable();
        inputs.dedup();
        // Cases sharing an input and an arm (duplicate ids) are pooled.
        let cell = |input: &str, arm: &str| -> Vec<&Row> {
            placed
                .iter()
                .filter(|(_, (a, _, i))| *a == arm && i == input)
                .map(|(r, _)| *r)
                .collect()
        };
        let counts = |rows: &[&Row]| {
            (
                rows.iter().map(|r| r.passes).sum::<u64>(),
                rows.iter().map(|r| r.total).sum::<u64>(),
            )
        };
        for &(_, arm) in &arms {
            if arm == baseline {
                continue;
            }
            let (mut pairs, mut unpaired) = (Vec::new(), Vec::new());
            let (mut base_rows, mut arm_rows) = (Vec::new(), Vec::new());
            for input in &inputs {
                let (b, a) = (cell(input, &baseline), cell(input, arm));
                if !b.is_empty() && !a.is_empty() {
                    pairs.push(Pair {
                        input: (*input).to_string(),
                        baseline: counts(&b),
                        arm: counts(&a),
                    });
                    base_rows.extend(b);
                    arm_rows.extend(a);
                } else if !b.is_empty() || !a.is_empty() {
                    unpaired.push((*input).to_string());
                }
            }
            out.push(compare_pairs(
                name,
                Some(&spec.axis),
                &baseline,
                arm,
                margin,
                pairs,
                unpaired,
                cost_ratio(&base_rows, &arm_rows),
                config,
            ));
        }
    }
    adjust(&mut out, config.adjust);
    out
}
