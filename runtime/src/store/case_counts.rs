//! What the session store holds of one case, for early stopping (`PROB_STOP`) in a process of
//! one run (nextest's): the case's other runs are other processes', so the decision reads them
//! here. A run still open (in flight, or its process died) is not finished: it counts among the
//! runs that could still change the verdict.
//!
//! Layer: store.

use std::io;

use crate::store::Session;
use crate::types::key::CaseKey;
use crate::types::status::Outcome;

/// The case's finished first attempts in the session: passes, fails and errors, and the runs
/// stopped.
pub(crate) fn tally(session: &Session, key: CaseKey<&str>) -> io::Result<([u64; 3], u64)> {
    let data = session.load()?;
    let mut counts = [0u64; 3];
    let mut stopped = 0;
    for (record, open) in data.records.iter().zip(&data.open) {
        if open.is_some() || record.is_retry() || record.key() != key {
            continue;
        }
        match record.outcome {
            Outcome::Pass => counts[0] += 1,
            Outcome::Fail => counts[1] += 1,
            Outcome::Error => counts[2] += 1,
            Outcome::Stopped => stopped += 1,
        }
    }
    Ok((counts, stopped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::store_lines::identity_fragment;
    use crate::model::tests::{info, record};
    use crate::model::{Report, Row};
    use crate::store::log::ProcessFile;
    use crate::store::test_support::temp_sessions;
    use crate::types::stats::stopping::StopMode;
    use crate::types::stats::{GateSpec, Rule, StatsConfig};

    fn curtailing() -> StatsConfig {
        StatsConfig {
            stop: StopMode::Curtail,
            ..StatsConfig::default()
        }
    }

    /// A session whose case `classify::a` passed 3 runs, the third still in flight, and had 2
    /// stopped; `classify::b` passed one.
    fn session(name: &str) -> Session {
        let session = Session::new(&temp_sessions(name), "s");
        let process =
            ProcessFile::create(session.clone(), true, None, &curtailing()).expect("made");
        let mut gated = info("classify::a");
        gated.gate = Some(GateSpec {
            rule: Rule::MinRate(0.1),
            method: None,
            level: None,
            prior: None,
        });
        process.queue_case(&gated).expect("queued");
        process.queue_case(&info("classify::b")).expect("queued");
        let a = identity_fragment("fixture", "evals", "classify::a");
        let b = identity_fragment("fixture", "evals", "classify::b");
        let runs = [
            (&a, 1, Some(Outcome::Pass)),
            (&a, 2, Some(Outcome::Pass)),
            (&a, 3, None),
            (&a, 4, Some(Outcome::Stopped)),
            (&a, 5, Some(Outcome::Stopped)),
            (&b, 1, Some(Outcome::Pass)),
        ];
        for (seq, (identity, run, outcome)) in runs.into_iter().enumerate() {
            process
                .append_start(seq as u64, identity, run, 1)
                .expect("start");
            if let Some(outcome) = outcome {
                let case = if identity == &a {
                    "classify::a"
                } else {
                    "classify::b"
                };
                let mut done = record(case, run, outcome, 0.5, vec![]);
                if outcome == Outcome::Stopped {
                    done.cost = 0.0;
                    done.message = Some("probability gate: decided after 2/10 runs".into());
                }
                process.append_end(seq as u64, &done).expect("end");
            }
        }
        session
    }

    #[test]
    fn the_tally_counts_finished_runs_and_stops_and_leaves_runs_in_flight_out() {
        let session = session("tally");
        let key = CaseKey::new("fixture", "evals", "classify::a");
        assert_eq!(tally(&session, key).expect("read"), ([2, 0, 0], 2));
        let other = CaseKey::new("fixture", "evals", "classify::b");
        assert_eq!(tally(&session, other).expect("read"), ([1, 0, 0], 0));
    }

    #[test]
    fn stopped_runs_are_kept_apart_in_the_report_and_read_back() {
        let data = session("report").load().expect("loaded");
        let report = Report::build(data.cases, data.records, &curtailing());
        let row: &Row = &report.rows[0];
        // The run in flight loads as an error; the two stopped runs are no sample.
        assert_eq!((row.passes, row.errors, row.total), (2, 1, 3));
        let stop = row.stopped.as_ref().expect("stopped");
        assert_eq!((stop.after, stop.planned, stop.skipped), (3, 5, 2));
        assert_eq!(stop.cost_avoided, Some(1.0 / 3.0 * 2.0));
        assert_eq!(report.totals.count, 4, "stopped runs are in no total");
        let stopping = report.stopping.as_ref().expect("stopping");
        assert_eq!(
            (stopping.cases, stopping.runs_skipped, stopping.runs_planned),
            (1, 2, 6)
        );
        assert!(report.rows[1].stopped.is_none());

        // The fast writer of a row says what serde says.
        let fast = format!(
            "{}{}",
            row.info.row_prefix().expect("prefix"),
            row.tail_json().expect("tail")
        );
        let fast: serde_json::Value = serde_json::from_str(&fast).expect("JSON");
        assert_eq!(fast, serde_json::to_value(row).expect("serde"));
        assert_eq!(fast["stopped"]["verdict"], "undecided");

        // A report with stops reads back whole, and one of before stopping reads too.
        let text = serde_json::to_string(&report).expect("written");
        let back = Report::from_json(&text).expect("read");
        assert_eq!(back.rows[0].stopped, report.rows[0].stopped);
        assert_eq!(back.stopping, report.stopping);
        let records = back
            .records
            .iter()
            .filter(|r| r.outcome == Outcome::Stopped);
        assert_eq!(records.count(), 2);
        let mut older: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        older.as_object_mut().expect("object").remove("stopping");
        let older = Report::from_json(&older.to_string()).expect("an older report reads");
        assert!(older.stopping.is_none());
    }

    /// pytest-probability's report of the e2e fixture under `--prob-stop=sequential`.
    const PEER_SEQUENTIAL: &str = include_str!("../../tests/data/peer_sequential_report.json");

    #[test]
    fn the_peers_sequential_report_reads_with_its_verdicts() {
        let peer: serde_json::Value = serde_json::from_str(PEER_SEQUENTIAL).expect("JSON");
        let report = Report::from_json(PEER_SEQUENTIAL).expect("the peer's report reads");
        for theirs in peer["rows"].as_array().expect("rows") {
            let case = theirs["case"].as_str().expect("case");
            let row = report.rows.iter().find(|row| row.info.case == case);
            let row = row.unwrap_or_else(|| panic!("{case} read"));
            assert_eq!(
                row.total,
                theirs["total"].as_u64().expect("total"),
                "{case}"
            );
            if theirs["gate"].is_null() {
                continue;
            }
            let gate = row.gate.as_ref().expect("gated");
            assert_eq!(
                gate.verdict,
                serde_json::from_value(theirs["gate"]["verdict"].clone()).expect("verdict"),
                "{case}"
            );
            let low = theirs["gate"]["low"].as_f64().expect("low");
            assert!(
                (gate.low - low).abs() < 1e-12,
                "{case}: {} vs {low}",
                gate.low
            );
            if theirs["gate"]["method"] == "sequential" {
                assert_eq!(
                    gate.method,
                    crate::types::stats::Method::Sequential,
                    "{case}"
                );
            }
        }
    }
}
