//! A comparison's margin judged where the function's runs ran: under `cargo test` a process
//! runs every case of a function, and the last of their runs judges the margin from this
//! process's counts, failing its item when the verdict fails, as a gated case's last run does.
//! The same for the baseline's margin (`PROB_BASELINE` with `PROB_MARGIN`), for the cases the
//! baseline holds.
//!
//! Layer: harness.

use crate::harness::registry::{Bench, Case};
use crate::harness::settings::Settings;
use crate::model::analysis::{baseline, compare, verdict_fails, Comparison};
use crate::model::Row;
use crate::types::stats::percent_text;

/// The message of a margin whose verdict fails, when `case`'s run just finished was the last
/// run of its function in this process; none otherwise.
pub(crate) fn judge(case: &'static Case, settings: &Settings) -> Option<String> {
    let bench = case.bench();
    let runs = u64::from(bench.runs());
    let done = bench
        .cases()
        .iter()
        .all(|case| case.counts().iter().sum::<u64>() >= runs);
    if !done {
        return None;
    }
    failing(&rows_from_counts(bench), settings)
}

/// The rows of `bench`'s cases from this process's counts.
pub(crate) fn rows_from_counts(bench: &'static Bench) -> Vec<Row> {
    bench
        .cases()
        .iter()
        .map(|case| {
            let [passes, fails, errors] = case.counts();
            let mut row = Row::new(case.info().clone());
            (row.passes, row.fails, row.errors, row.total) =
                (passes, fails, errors, passes + fails + errors);
            row
        })
        .collect()
}

/// The margins of `rows`' comparisons (and of the baseline's, with `PROB_MARGIN`) whose
/// verdicts fail, one line each; `None` when none does.
pub(crate) fn failing(rows: &[Row], settings: &Settings) -> Option<String> {
    let mut judged = compare::comparisons(rows, &settings.stats);
    if let Ok(Some(earlier)) = crate::store::baseline_file::load(&settings.stats) {
        if settings.stats.margin.is_some() {
            let result = baseline::compare_with_baseline(rows, &earlier, &settings.stats);
            judged.extend(result.comparisons);
        }
    }
    let failing: Vec<String> = judged
        .into_iter()
        .filter(|c| c.verdict.is_some_and(|v| verdict_fails(v, &settings.stats)))
        .map(|c| describe(&c))
        .collect();
    (!failing.is_empty()).then(|| failing.join("\n"))
}

/// Whether the earlier report's margin judges `case` (it holds the case, and there is a margin).
pub(crate) fn baseline_judges(case: &'static Case, settings: &Settings) -> bool {
    settings.stats.margin.is_some()
        && crate::store::baseline_file::load(&settings.stats)
            .ok()
            .flatten()
            .is_some_and(|b| b.judges(&case.info().case, &settings.stats))
}

fn describe(c: &Comparison) -> String {
    let interval = c.ci.as_ref().map_or("no interval".to_string(), |ci| {
        format!(
            "{}% interval [{:+.1}, {:+.1}] pp",
            percent_text(ci.level),
            ci.low * 100.0,
            ci.high * 100.0
        )
    });
    let name = match &c.axis {
        Some(axis) => format!("{}[{axis}]", c.function),
        None => c.function.clone(),
    };
    format!(
        "{name}: {} − {} is {:?} against a margin of {} pp ({interval})",
        c.arm,
        c.baseline,
        c.verdict.expect("judged"),
        c.margin.unwrap_or(0.0) * 100.0,
    )
}
