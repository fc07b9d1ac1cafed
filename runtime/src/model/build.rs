//! `Report::build`: the one aggregation of records into rows, totals, verdicts and warnings.
//!
//! It runs in every process that prints a summary, at exit, in a test binary built without
//! optimizations; so it makes few passes over the records, finds their order without a
//! comparison sort (`model::order`), and matches rows to their cases' descriptions by walking
//! both in key order. Grouping is by ordering, not hashing: no hasher keys are drawn (std's
//! draw them from the OS per thread).
//!
//! Layer: model.

use std::cmp::Ordering;
use std::ops::Range;

use crate::model::aggregate::RowSums;
use crate::model::case::CaseInfo;
use crate::model::order::{permute, record_order, RecordOrder};
use crate::model::record::Record;
use crate::model::report::{Report, Row, Totals, SCHEMA_VERSION};
use crate::model::stops::stopping;
use crate::types::stats::StatsConfig;
use crate::types::time::rfc3339_now;

impl Report {
    /// Builds rows and totals from records. `cases` describes the cases the records belong to;
    /// a case without records gets no row, and a record of a case missing from `cases` still
    /// counts, under a row that knows only its id.
    pub fn build(
        cases: impl IntoIterator<Item = CaseInfo>,
        records: Vec<Record>,
        config: &StatsConfig,
    ) -> Report {
        build(cases.into_iter().collect(), records, config).0
    }

    /// [`Report::build`] for records that each carry a value along, returned in the order the
    /// report lists the records.
    pub(crate) fn build_with<T>(
        cases: impl IntoIterator<Item = CaseInfo>,
        records: Vec<(Record, T)>,
        config: &StatsConfig,
    ) -> (Report, Vec<T>) {
        let (records, mut carried): (Vec<Record>, Vec<T>) = records.into_iter().unzip();
        let (report, from) = build(cases.into_iter().collect(), records, config);
        permute(&mut carried, &from);
        (report, carried)
    }
}

/// The report, and where each of its records was among `records`.
fn build(
    cases: Vec<CaseInfo>,
    mut records: Vec<Record>,
    config: &StatsConfig,
) -> (Report, Vec<usize>) {
    let order = record_order(&records);
    let mut rows: Vec<Row> = describe(cases, &records, &order)
        .into_iter()
        .map(Row::new)
        .collect();
    // Counted in the order the records came, as a report kept run by run counts them (a cost's
    // sum depends on its order).
    for (record, &row) in records.iter().zip(&order.case_of) {
        rows[row].add(record);
    }
    // Rows in source order; each row's records after those of the rows before it.
    let by_source = source_order(&rows);
    let mut from = Vec::with_capacity(records.len());
    let mut ranges: Vec<Range<usize>> = Vec::with_capacity(rows.len());
    for &row in &by_source {
        let start = from.len();
        from.extend_from_slice(order.of_case(row));
        ranges.push(start..from.len());
    }
    permute(&mut rows, &by_source);
    permute(&mut records, &from);
    for row in &mut rows {
        row.settle(config);
    }
    // Totals follow the sorted records, so models are listed in the order rows first use them.
    let totals = Totals::of_records(&records);
    crate::model::latency_gate::settle(&mut rows, &records, &ranges, config);
    // The live report folds its rows in with the same step, run by run.
    let sums = RowSums::of_rows(&rows, config);
    let (runs, exit_status, aggregates) = (sums.runs, sums.exit_status(), sums.aggregates(config));
    let mut warnings = sums.warnings;
    warnings.extend(totals.overflow_warnings());
    let report = Report {
        schema: SCHEMA_VERSION,
        tool: "probtest".to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        created: rfc3339_now(),
        session: None,
        runs,
        exit_status,
        stats_config: config.clone(),
        totals,
        aggregates,
        comparisons: Vec::new(),
        baseline: None,
        stopping: stopping(&rows, config),
        warnings,
        binaries_not_run: Vec::new(),
        rows,
        records,
    };
    (report, from)
}

/// Each case of `order` (in key order) with its description: the last of `cases` with its key,
/// else what its records say.
fn describe(mut cases: Vec<CaseInfo>, records: &[Record], order: &RecordOrder) -> Vec<CaseInfo> {
    // A process lists its cases in the order they first ran, mostly key order already, and each
    // once; otherwise sorted, a case described twice keeping its last description.
    let ascending = (1..cases.len()).all(|i| cases[i - 1].key().compare(&cases[i].key()).is_lt());
    if !ascending {
        cases.reverse();
        cases.sort_by(|a, b| a.key().compare(&b.key()));
        cases.dedup_by(|later, first| later.key().same(&first.key()));
    }
    // Both in key order: one walk pairs them, and each description moves to its row.
    let mut described = Vec::with_capacity(order.cases());
    let mut cases = cases.into_iter();
    let mut next = cases.next();
    for case in 0..order.cases() {
        let first = &records[order.of_case(case)[0]];
        let key = first.key();
        // Descriptions of cases with no records are passed over.
        let mut found = None;
        while let Some(info) = next.take() {
            match info.key().compare(&key) {
                Ordering::Less => next = cases.next(),
                Ordering::Equal => {
                    found = Some(info);
                    next = cases.next();
                    break;
                }
                Ordering::Greater => {
                    next = Some(info);
                    break;
                }
            }
        }
        described.push(found.unwrap_or_else(|| CaseInfo::unknown(first)));
    }
    described
}

/// The rows' positions in source order; rows in source order already are checked, not sorted.
/// Rows equal in source order stay in key order.
fn source_order(rows: &[Row]) -> Vec<usize> {
    let mut by_source: Vec<usize> = (0..rows.len()).collect();
    let in_order =
        (1..rows.len()).all(|i| rows[i - 1].info.order_key() <= rows[i].info.order_key());
    if !in_order {
        by_source.sort_by(|&a, &b| rows[a].info.order_key().cmp(&rows[b].info.order_key()));
    }
    by_source
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::model::tests::{info, record};
    use crate::types::status::Outcome;

    /// Records of three cases, two threads' worth out of order, one case undescribed.
    fn records() -> Vec<Record> {
        let mut records = Vec::new();
        for (case, runs) in [("classify::b", 3), ("classify::a", 2), ("other::z", 2)] {
            for run in (1..=runs).rev() {
                let outcome = if run == 2 {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                };
                records.push(record(case, run, outcome, 0.1 * f64::from(run), Vec::new()));
            }
        }
        records
    }

    #[test]
    fn carried_values_follow_their_records() {
        let given = records();
        let paired = given.iter().cloned().zip(0..given.len()).collect();
        let cases = [info("classify::a"), info("classify::b")];
        let (report, carried) = Report::build_with(cases, paired, &StatsConfig::default());
        assert_eq!(carried.len(), given.len());
        for (record, &at) in report.records.iter().zip(&carried) {
            assert_eq!(*record, given[at]);
        }
        let listed: Vec<(&str, u32)> = report
            .records
            .iter()
            .map(|r| (r.case.as_ref(), r.run))
            .collect();
        // Source order: the undescribed case knows no line (0), so it comes first; then runs
        // in order.
        assert_eq!(
            listed,
            [
                ("other::z", 1),
                ("other::z", 2),
                ("classify::a", 1),
                ("classify::a", 2),
                ("classify::b", 1),
                ("classify::b", 2),
                ("classify::b", 3),
            ]
        );
        assert_eq!(report.rows[0].info, CaseInfo::unknown(&given[5]));
    }

    #[test]
    fn descriptions_in_any_order_describe_the_same_rows() {
        let config = StatsConfig::default();
        let (a, b, z) = (info("classify::a"), info("classify::b"), info("other::z"));
        let sorted = Report::build([a.clone(), b.clone(), z.clone()], records(), &config);
        // Out of order, one described twice (the last description wins), and one with no
        // records, whose description is passed over.
        let stale = CaseInfo {
            line: 99,
            ..b.clone()
        };
        let nobody = info("classify::0");
        let shuffled = Report::build(
            [z.clone(), stale, nobody.clone(), b.clone(), a.clone()],
            records(),
            &config,
        );
        assert_eq!(shuffled.rows, sorted.rows);
        assert_eq!(shuffled.records, sorted.records);
        let later = CaseInfo {
            line: 99,
            ..b.clone()
        };
        let last = Report::build([a, b, later, nobody, z], records(), &config);
        assert_eq!(last.rows.iter().map(|r| r.info.line).max(), Some(99));
    }

    #[test]
    fn rows_are_put_in_source_order_when_keys_are_not() {
        // Key order is by row id; source order by line: `zeta` is written first.
        let mut zeta = info("zeta::a");
        zeta.line = 1;
        let records = vec![
            record("alpha::a", 1, Outcome::Pass, 0.0, Vec::new()),
            Record {
                case: Cow::Owned("zeta::a".to_string()),
                ..record("zeta::a", 1, Outcome::Pass, 0.0, Vec::new())
            },
        ];
        let report = Report::build([info("alpha::a"), zeta], records, &StatsConfig::default());
        let rows: Vec<&str> = report.rows.iter().map(|r| r.info.case.as_str()).collect();
        assert_eq!(rows, ["zeta::a", "alpha::a"]);
        assert_eq!(report.records[0].case, "zeta::a");
    }
}
