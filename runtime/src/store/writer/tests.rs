//! The session writer's tests: events through the log, the slots and the live report.

use std::fs;
use std::path::Path;

use super::*;
use crate::format::store_lines::identity_fragment;
use crate::model::tests::{info, record};
use crate::model::Report;
use crate::store::test_support::temp_sessions;
use crate::types::status::Outcome;

/// What a process holding the whole session would give: the store's own reading.
fn from_store(session: &Session) -> impl FnOnce() -> SessionData + '_ {
    || session.load().expect("the store")
}

fn report_at(path: &Path) -> Option<Report> {
    let text = fs::read_to_string(path).ok()?;
    Some(Report::from_json(&text).expect("a report"))
}

/// Runs `case` once through `writer`: its start, then its end with `outcome`. `slot_ref` is
/// the case's number in the writer's slots, one per case and process.
fn run(
    writer: &SessionWriter,
    (seq, slot_ref): (u64, &OnceLock<u32>),
    case: &str,
    outcome: Outcome,
    first: bool,
) {
    let info = info(case);
    let identity = identity_fragment(&info.package, &info.module, &info.case);
    let described = first || writer.wants_descriptions();
    writer
        .consume(&RunEvent::Started(RunStarted {
            seq,
            identity: Some(&identity),
            run: seq as u32 + 1,
            attempt: 1,
            info: Some(&info).filter(|_| described || slot_ref.get().is_none()),
            first_in_process: first,
            slot_ref,
            started_at: 0.0,
        }))
        .expect("started");
    let record = record(case, seq as u32 + 1, outcome, 0.0, vec![]);
    writer
        .consume(&RunEvent::Finished(RunFinished {
            seq,
            info: writer.wants_descriptions().then_some(&info),
            record: &record,
        }))
        .expect("finished");
}

#[test]
fn a_process_of_one_run_patches_the_report_at_each_event() {
    let sessions = temp_sessions("writer-per-run");
    let path = sessions.join("report.json");
    let session = Session::new(&sessions, "s");
    let writer = SessionWriter::open(
        session,
        true,
        Some(("report.json".into(), path.clone())),
        &StatsConfig::default(),
        || 1,
    )
    .expect("opened");
    assert!(writer.wants_descriptions());
    run(
        &writer,
        (0, &OnceLock::new()),
        "classify::a",
        Outcome::Fail,
        true,
    );
    let report = report_at(&path).expect("written at the first event");
    assert_eq!((report.totals.fails, report.records.len()), (1, 1));
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_process_of_many_runs_folds_them_in_batches() {
    let sessions = temp_sessions("writer-batches");
    let path = sessions.join("report.json");
    let session = Session::new(&sessions, "s");
    let writer = SessionWriter::open(
        session.clone(),
        false,
        Some(("report.json".into(), path.clone())),
        &StatsConfig::default(),
        || 1,
    )
    .expect("opened");
    assert!(!writer.wants_descriptions());
    let slot_ref = OnceLock::new();
    run(&writer, (0, &slot_ref), "classify::a", Outcome::Pass, true);
    assert!(report_at(&path).is_none(), "events alone write no report");
    writer.fold_if_due(from_store(&session)).expect("folded");
    assert_eq!(
        report_at(&path).expect("the first folding").records.len(),
        1
    );
    // Right after a folding the next one is not due: the runs are in the store only...
    run(&writer, (1, &slot_ref), "classify::a", Outcome::Fail, false);
    writer.fold_if_due(from_store(&session)).expect("not due");
    assert_eq!(report_at(&path).expect("report").records.len(), 1);
    assert_eq!(session.load().expect("the store").records.len(), 2);
    // ...until the next folding, or the one at exit.
    writer.fold(from_store(&session)).expect("folded");
    let report = report_at(&path).expect("report");
    assert_eq!((report.totals.passes, report.totals.fails), (1, 1));
    assert_eq!(report.session.as_deref(), Some("s"));
    // The case was described once, by its first run in the process.
    let log = fs::read_to_string(session.dir().join("runs.jsonl")).expect("the log");
    assert_eq!(log.matches("\"t\":\"case\"").count(), 1, "{log}");
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_process_alone_in_its_session_folds_from_memory_and_otherwise_from_the_store() {
    let sessions = temp_sessions("writer-memory");
    let path = sessions.join("report.json");
    let session = Session::new(&sessions, "s");
    let open = || {
        SessionWriter::open(
            session.clone(),
            false,
            Some(("report.json".into(), path.clone())),
            &StatsConfig::default(),
            || 1,
        )
        .expect("opened")
    };
    let first = open();
    run(
        &first,
        (0, &OnceLock::new()),
        "classify::a",
        Outcome::Pass,
        true,
    );
    let asked = std::cell::Cell::new(false);
    first
        .fold(|| {
            asked.set(true);
            session.load().expect("the store")
        })
        .expect("folded");
    assert!(
        asked.get(),
        "alone in the session, the process's own runs are the session"
    );
    let second = open();
    run(
        &second,
        (0, &OnceLock::new()),
        "classify::b",
        Outcome::Fail,
        true,
    );
    let asked = std::cell::Cell::new(false);
    first
        .fold(|| {
            asked.set(true);
            SessionData::default()
        })
        .expect("folded");
    assert!(
        !asked.get(),
        "another process wrote to the session: the store is read"
    );
    let report = report_at(&path).expect("report");
    let cases: Vec<&str> = report
        .rows
        .iter()
        .map(|row| row.info.case.as_str())
        .collect();
    assert_eq!(cases, ["classify::a", "classify::b"]);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_one_run_process_after_a_folding_rebuilds_before_patching() {
    let sessions = temp_sessions("writer-mixed");
    let path = sessions.join("report.json");
    let session = Session::new(&sessions, "s");
    let open = |per_test: bool| {
        SessionWriter::open(
            session.clone(),
            per_test,
            Some(("report.json".into(), path.clone())),
            &StatsConfig::default(),
            || 1,
        )
        .expect("opened")
    };
    let many = open(false);
    let slot_ref = OnceLock::new();
    for seq in 0..3 {
        run(
            &many,
            (seq, &slot_ref),
            "classify::a",
            Outcome::Pass,
            seq == 0,
        );
    }
    many.fold(from_store(&session)).expect("folded");
    // A folding leaves no row states: this process must not patch the report blindly.
    let one = open(true);
    run(
        &one,
        (0, &OnceLock::new()),
        "classify::a",
        Outcome::Fail,
        true,
    );
    let report = report_at(&path).expect("report");
    assert_eq!((report.totals.passes, report.totals.fails), (3, 1));
    assert_eq!(report.records.len(), 4);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_process_of_many_runs_records_them_in_slots_and_their_texts_in_the_log() {
    let sessions = temp_sessions("writer-slots");
    let session = Session::new(&sessions, "s");
    let writer = SessionWriter::open(session.clone(), false, None, &StatsConfig::default(), || 1)
        .expect("opened");
    let slot_ref = OnceLock::new();
    run(&writer, (0, &slot_ref), "classify::a", Outcome::Pass, true);
    run(&writer, (1, &slot_ref), "classify::a", Outcome::Fail, false);
    // A run that started and whose process died.
    let info = info("classify::a");
    let identity = identity_fragment(&info.package, &info.module, &info.case);
    writer
        .consume(&RunEvent::Started(RunStarted {
            seq: 2,
            identity: Some(&identity),
            run: 3,
            attempt: 1,
            info: None,
            first_in_process: false,
            slot_ref: &slot_ref,
            started_at: 0.0,
        }))
        .expect("started");
    let log = fs::read_to_string(session.dir().join("runs.jsonl")).expect("the log");
    assert_eq!(
        log.matches("\"t\":\"start\"").count(),
        0,
        "starts are in slots: {log}"
    );
    assert_eq!(
        log.matches("\"t\":\"end\"").count(),
        1,
        "the failure's text: {log}"
    );
    let data = session.load().expect("the store");
    let runs: Vec<(u32, Outcome, Option<&str>)> = data
        .records
        .iter()
        .map(|r| (r.run, r.outcome, r.message.as_deref()))
        .collect();
    assert_eq!(
        runs,
        [
            (1, Outcome::Pass, None),
            (2, Outcome::Fail, Some("Fail in run 2")),
            (3, Outcome::Error, Some(crate::model::record::DIED_MESSAGE)),
        ]
    );
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_bare_end_goes_to_its_slot_alone_and_only_a_slot_takes_it() {
    let sessions = temp_sessions("writer-ended");
    let session = Session::new(&sessions, "s");
    let writer = SessionWriter::open(session.clone(), false, None, &StatsConfig::default(), || 1)
        .expect("opened");
    let info = info("classify::a");
    let slot_ref = OnceLock::new();
    assert!(writer.in_slot(0));
    writer
        .consume(&RunEvent::Started(RunStarted {
            seq: 0,
            identity: None,
            run: 1,
            attempt: 1,
            info: Some(&info),
            first_in_process: true,
            slot_ref: &slot_ref,
            started_at: 0.0,
        }))
        .expect("started");
    writer
        .consume(&RunEvent::Ended(RunFinished {
            seq: 0,
            info: None,
            record: &Record {
                outcome: Outcome::Pass,
                elapsed: 0.125,
                cost: 0.5,
                ..Record::default()
            },
        }))
        .expect("ended");
    let log = fs::read_to_string(session.dir().join("runs.jsonl")).expect("the log");
    assert!(!log.contains("\"t\":\"end\""), "no end line: {log}");
    let own = writer.own_slots(1);
    assert_eq!(own.len(), 1);
    assert_eq!(own[0].0.ended, Some((Outcome::Pass, 0.125, 0.5)));
    let data = session.load().expect("the store");
    assert_eq!(data.records.len(), 1);
    assert_eq!(
        (
            data.records[0].outcome,
            data.records[0].elapsed,
            data.records[0].cost
        ),
        (Outcome::Pass, 0.125, 0.5)
    );

    // A process of one run (nextest's) has no slots: its ends are lines, and a bare end is
    // refused as a store error rather than lost.
    let lines =
        SessionWriter::open(session, true, None, &StatsConfig::default(), || 1).expect("opened");
    assert!(!lines.in_slot(0));
    let refused = lines.consume(&RunEvent::Ended(RunFinished {
        seq: 0,
        info: None,
        record: &Record {
            outcome: Outcome::Pass,
            elapsed: 0.0,
            cost: 0.0,
            ..Record::default()
        },
    }));
    assert!(matches!(refused, Err(WriteError::Store(_))));
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn cases_numbered_up_front_are_described_in_one_write_and_their_slots_read_back() {
    let sessions = temp_sessions("writer-up-front");
    let session = Session::new(&sessions, "s");
    let writer = SessionWriter::open(session.clone(), false, None, &StatsConfig::default(), || 3)
        .expect("opened");
    let infos = [info("classify::a"), info("classify::b"), info("other::c")];
    let refs = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    // One case numbered already, by its first run: it keeps its number and its one line.
    writer
        .number_in_slots(&infos[1], &refs[1])
        .expect("numbered");
    let before = fs::metadata(session.dir().join("runs.jsonl"))
        .expect("the log")
        .len();
    let cases: Vec<(&CaseInfo, &OnceLock<u32>)> = infos.iter().zip(&refs).collect();
    writer
        .number_all_in_slots(&cases)
        .expect("numbered up front");
    assert_eq!(
        refs.each_ref().map(|r| r.get().copied()),
        [Some(1), Some(0), Some(2)]
    );
    let log = fs::read_to_string(session.dir().join("runs.jsonl")).expect("the log");
    let added = &log[before as usize..];
    assert_eq!(added.matches("classify::a").count(), 1, "{added}");
    assert_eq!(added.matches("other::c").count(), 1, "{added}");
    assert!(!added.contains("classify::b"), "described once: {added}");
    // Runs of every case in slots, the first run of each included, with no description.
    for (seq, (info, slot_ref)) in cases.iter().enumerate() {
        writer
            .consume(&RunEvent::Started(RunStarted {
                seq: seq as u64,
                identity: None,
                run: 1,
                attempt: 1,
                info: None,
                first_in_process: true,
                slot_ref,
                started_at: 0.0,
            }))
            .expect("started");
        let outcome = if info.case == "other::c" {
            Outcome::Fail
        } else {
            Outcome::Pass
        };
        writer
            .consume(&RunEvent::Ended(RunFinished {
                seq: seq as u64,
                info: None,
                record: &Record {
                    outcome,
                    elapsed: 0.5,
                    cost: 0.0,
                    ..Record::default()
                },
            }))
            .expect("ended");
    }
    let data = session.load().expect("the store");
    let mut read: Vec<(String, Outcome)> = data
        .records
        .iter()
        .map(|r| (r.case.to_string(), r.outcome))
        .collect();
    read.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        read,
        [
            ("classify::a".to_string(), Outcome::Pass),
            ("classify::b".to_string(), Outcome::Pass),
            ("other::c".to_string(), Outcome::Fail),
        ]
    );
    let _ = fs::remove_dir_all(sessions);
}
