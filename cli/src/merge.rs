//! `cargo probtest merge`: shard reports (say nextest's `--partition count:1/2` and `2/2`) into
//! one report, its rows recomputed from the records of every shard.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Args;
use probtest::{CaseInfo, CaseKey, Report};

use crate::error::Error;
use crate::outputs::Outputs;
use crate::report::load_json;
use crate::ui::Ui;

/// The arguments of `cargo probtest merge`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct MergeArgs {
    /// The JSON reports to merge, one per shard.
    #[arg(required = true, value_name = "REPORT")]
    pub inputs: Vec<PathBuf>,

    /// Where to write the merged JSON report (parent directories are created).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Exit 0 even when the merged report fails (a gate's verdict, a failed or errored run).
    #[arg(long)]
    pub no_fail: bool,
}

/// Runs `cargo probtest merge`: reads every input, merges, writes the output, prints the
/// merged summary. The exit code is 0, or [`crate::error::EXIT_FAILED`] when the merged report fails (unless
/// `--no-fail`).
pub fn merge_command(args: &MergeArgs, ui: &Ui) -> Result<i32, Error> {
    let mut shards = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        shards.push((path.display().to_string(), load_json(path)?));
    }
    let merged = merge(&shards)?;
    Outputs::json_at(&args.output)
        .with_summary(None, ui)
        .write(&merged)?;
    Ok(crate::report::exit_code(&merged, args.no_fail))
}

/// Merges reports, each given with the name to use for it in errors.
///
/// The cases are those of every input's rows (the first description of a case wins), the
/// records are every input's records, and rows and totals are rebuilt from the records with
/// [`Report::build`], never added up from the inputs' rounded numbers. The same run (package,
/// module, case, run number and attempt) in two inputs is an error naming both.
pub fn merge(shards: &[(String, Report)]) -> Result<Report, Error> {
    let mut cases: Vec<CaseInfo> = Vec::new();
    let mut described: HashMap<CaseKey, usize> = HashMap::new();
    let mut owner: HashMap<(CaseKey, u32, u32), usize> = HashMap::new();
    let mut records = Vec::new();
    for (index, (name, report)) in shards.iter().enumerate() {
        for info in report.cases() {
            let key = info.key().to_owned_key();
            match described.get(&key) {
                // A row of a case its report did not describe knows only the case's id; a
                // real description from another shard replaces it.
                Some(&at) if is_stand_in(&cases[at]) && !is_stand_in(info) => {
                    cases[at] = info.clone();
                }
                Some(_) => {}
                None => {
                    described.insert(key, cases.len());
                    cases.push(info.clone());
                }
            }
        }
        for record in &report.records {
            let key = (record.key().to_owned_key(), record.run, record.attempt);
            match owner.get(&key) {
                Some(&first) if first != index => {
                    let attempt = if record.attempt > 1 {
                        format!(" (attempt {})", record.attempt)
                    } else {
                        String::new()
                    };
                    return Err(Error::new(format!(
                        "{} and {} both hold run {}{attempt} of case {} (package {}, module {}); a run belongs to one shard",
                        shards[first].0, name, record.run, record.case, record.package, record.module
                    )));
                }
                Some(_) => {}
                None => {
                    owner.insert(key, index);
                }
            }
            records.push(record.clone());
        }
    }
    // Every shard of one session was judged with the same settings; the first one's stand.
    let config = shards
        .first()
        .map(|(_, report)| report.stats_config.clone())
        .unwrap_or_default();
    Ok(Report::build(cases, records, &config))
}

/// Whether a row's description is the stand-in [`Report::build`] makes for a record whose case
/// was not described: no function and no source file.
fn is_stand_in(info: &CaseInfo) -> bool {
    info.function.is_empty() && info.file.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use probtest::{OrderedMap, Outcome, Record, Status, TokenUsage};

    fn info(case: &str, line: u32) -> CaseInfo {
        CaseInfo {
            case: case.to_string(),
            package: "evals".into(),
            module: "evals::triage".into(),
            function: "bench_triage".to_string(),
            case_id: case.rsplit("::").next().unwrap_or(case).to_string(),
            file: "tests/evals.rs".to_string(),
            line,
            index: 0,
            runs: 3,
            params: OrderedMap(vec![("text".to_string(), format!("{case:?}"))]),
            gate: None,
            compare: None,
            latency: None,
            parts: Vec::new(),
        }
    }

    fn record(case: &str, run: u32, outcome: Outcome, cost: f64) -> Record {
        Record {
            case: case.to_string().into(),
            package: "evals".into(),
            module: "evals::triage".into(),
            run,
            attempt: 1,
            outcome,
            message: None,
            location: None,
            elapsed: 0.01,
            waited: 0.0,
            waited_for: None,
            replayed: None,
            cost,
            usage: vec![TokenUsage {
                model: "m-small".to_string(),
                input_tokens: 100,
                output_tokens: 7,
                cached_input_tokens: 0,
                cost,
            }],
        }
    }

    fn shard(name: &str, cases: Vec<CaseInfo>, records: Vec<Record>) -> (String, Report) {
        (
            name.to_string(),
            Report::build(cases, records, &probtest::stats::StatsConfig::default()),
        )
    }

    #[test]
    fn rows_are_recomputed_from_every_shards_records() {
        let a = info("triage::a", 10);
        let b = info("triage::b", 20);
        let mut first = shard(
            "shard1.json",
            vec![a.clone(), b.clone()],
            vec![
                record("triage::a", 1, Outcome::Pass, 0.1),
                record("triage::a", 2, Outcome::Fail, 0.1),
                record("triage::b", 1, Outcome::Pass, 0.1),
            ],
        );
        let second = shard(
            "shard2.json",
            vec![a, b],
            vec![
                record("triage::a", 3, Outcome::Pass, 0.1),
                record("triage::b", 2, Outcome::Error, 0.1),
                record("triage::b", 3, Outcome::Pass, 0.1),
            ],
        );
        // Stored numbers that disagree with the records must not leak into the merge.
        first.1.rows[0].passes = 999;
        first.1.rows[0].pass_rate = 12.3;
        first.1.totals.cost = 1000.0;

        let merged = merge(&[first, second]).expect("merged");
        assert_eq!(merged.rows.len(), 2);
        let row_a = &merged.rows[0];
        assert_eq!(row_a.info.case, "triage::a");
        assert_eq!(
            (row_a.passes, row_a.fails, row_a.errors, row_a.total),
            (2, 1, 0, 3)
        );
        assert_eq!(row_a.status, Status::Flaky);
        assert!((row_a.pass_rate - 200.0 / 3.0).abs() < 1e-9);
        let row_b = &merged.rows[1];
        assert_eq!(
            (row_b.passes, row_b.fails, row_b.errors, row_b.total),
            (2, 0, 1, 3)
        );
        assert_eq!(row_b.status, Status::Errored);
        assert_eq!(merged.totals.count, 6);
        assert!((merged.totals.cost - 0.6).abs() < 1e-9);
        assert_eq!(
            merged.totals.usage.get("m-small").map(|u| u.input_tokens),
            Some(600)
        );
        assert_eq!(merged.records.len(), 6);
        assert_eq!(merged.runs, 3);
        // Records come out in row order, then run order.
        let order: Vec<(&str, u32)> = merged
            .records
            .iter()
            .map(|r| (r.case.as_ref(), r.run))
            .collect();
        assert_eq!(
            order,
            [
                ("triage::a", 1),
                ("triage::a", 2),
                ("triage::a", 3),
                ("triage::b", 1),
                ("triage::b", 2),
                ("triage::b", 3)
            ]
        );
    }

    #[test]
    fn cases_without_a_description_in_one_shard_keep_the_others() {
        // A shard whose records' case no process described: its row knows only the id.
        let undescribed = shard(
            "shard1.json",
            vec![],
            vec![record("triage::a", 1, Outcome::Pass, 0.0)],
        );
        assert_eq!(undescribed.1.rows[0].info.function, "");
        let described = shard(
            "shard2.json",
            vec![info("triage::a", 10)],
            vec![record("triage::a", 2, Outcome::Pass, 0.0)],
        );
        let mut rowless = undescribed.clone();
        rowless.1.rows.clear();
        for shards in [
            [undescribed.clone(), described.clone()],
            [described.clone(), undescribed],
            [rowless, described],
        ] {
            let merged = merge(&shards).expect("merged");
            assert_eq!(merged.rows.len(), 1);
            assert_eq!(merged.rows[0].info.line, 10);
            assert_eq!(merged.rows[0].info.function, "bench_triage");
            assert_eq!(merged.rows[0].total, 2);
        }
    }

    #[test]
    fn the_same_run_in_two_shards_names_both_files_and_the_run() {
        let a = info("triage::a", 10);
        let first = shard(
            "out/shard1.json",
            vec![a.clone()],
            vec![
                record("triage::a", 1, Outcome::Pass, 0.0),
                record("triage::a", 2, Outcome::Pass, 0.0),
            ],
        );
        let second = shard(
            "out/shard2.json",
            vec![a],
            vec![record("triage::a", 2, Outcome::Fail, 0.0)],
        );
        let error = merge(&[first, second]).expect_err("duplicate run");
        assert_eq!(
            error.message(),
            "out/shard1.json and out/shard2.json both hold run 2 of case triage::a \
             (package evals, module evals::triage); a run belongs to one shard"
        );
    }

    #[test]
    fn retries_are_distinct_runs_but_duplicated_retries_are_not() {
        let a = info("triage::a", 10);
        let mut retry = record("triage::a", 1, Outcome::Pass, 0.0);
        retry.attempt = 2;
        let first = shard(
            "shard1.json",
            vec![a.clone()],
            vec![record("triage::a", 1, Outcome::Fail, 0.0)],
        );
        let second = shard("shard2.json", vec![a.clone()], vec![retry.clone()]);
        let merged = merge(&[first, second.clone()]).expect("an attempt is its own run");
        assert_eq!(merged.totals.retries, 1);
        assert_eq!(merged.rows[0].total, 1);

        let third = shard("shard3.json", vec![a], vec![retry]);
        let error = merge(&[second, third]).expect_err("duplicate retry");
        assert!(
            error.message().starts_with(
                "shard2.json and shard3.json both hold run 1 (attempt 2) of case triage::a"
            ),
            "{error}"
        );
    }

    #[test]
    fn costs_that_overflow_when_merged_stay_readable() {
        let a = info("triage::a", 10);
        let first = shard(
            "shard1.json",
            vec![a.clone()],
            vec![record("triage::a", 1, Outcome::Pass, 1e308)],
        );
        let second = shard(
            "shard2.json",
            vec![a],
            vec![record("triage::a", 2, Outcome::Pass, 1e308)],
        );
        assert!(first.1.warnings.is_empty());
        let merged = merge(&[first, second]).expect("merged");
        assert_eq!(merged.totals.cost, f64::MAX);
        assert!(
            merged
                .warnings
                .iter()
                .any(|w| w.starts_with("the cost total overflowed")),
            "{:?}",
            merged.warnings
        );
        let text = serde_json::to_string(&merged).expect("written");
        let back = Report::from_json(&text).expect("readable by us");
        assert_eq!(back.totals.cost, f64::MAX);
    }
}
