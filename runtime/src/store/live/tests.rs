//! The live report's tests: processes (threads with their own handles) start and finish runs
//! through the session store and the report, and the report kept in place must say what a
//! rebuild from the store says.

use std::borrow::Cow;
use std::fs;
use std::path::Path;

use crate::format::store_lines::Line;
use crate::model::record::died_record;
use crate::model::tests::{info, record};
use crate::model::{Record, Report, Totals};
use crate::store::live::state::Index;
use crate::store::live::{Change, ReportFile};
use crate::store::log::ProcessFile;
use crate::store::test_support::{start_line, temp_sessions};
use crate::store::Session;
use crate::types::stats::StatsConfig;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

struct Harness {
    process: ProcessFile,
    report: ReportFile,
    next_seq: u64,
}

impl Harness {
    fn new(session: &Session, path: &Path) -> Harness {
        Harness::judging(session, path, StatsConfig::default())
    }

    fn judging(session: &Session, path: &Path, stats: StatsConfig) -> Harness {
        Harness {
            process: ProcessFile::create(session.clone(), true, None, &stats)
                .expect("process file"),
            report: ReportFile::new(session.clone(), path.to_path_buf(), stats),
            next_seq: 0,
        }
    }

    fn start(&mut self, case: &str, run: u32) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let info = info(case);
        let provisional = died_record(
            "fixture".into(),
            "evals".into(),
            case.to_string().into(),
            run,
            1,
        );
        let process = &self.process;
        self.report
            .apply(
                &Change::Start {
                    proc_id: process.proc_id(),
                    seq,
                    info: &info,
                    provisional: &provisional,
                },
                |described| {
                    if !described {
                        process.append(&Line::Case {
                            info: Cow::Borrowed(&info),
                            proc: None,
                            case_ref: None,
                        })?;
                    }
                    process.append(&start_line(process.proc_id(), case, seq, run))?;
                    Ok(!described)
                },
            )
            .expect("applied");
        seq
    }

    fn finish(&mut self, seq: u64, record: Record) {
        let process = &self.process;
        let info = info(&record.case);
        self.report
            .apply(
                &Change::Finish {
                    proc_id: process.proc_id(),
                    seq,
                    info: &info,
                    record: &record,
                },
                |_| process.append_end(seq, &record).map(|()| false),
            )
            .expect("applied");
    }
}

fn index_of(report: &ReportFile) -> Index {
    Index::decode(&fs::read(report.dir().join("index")).expect("index"), false).expect("decodes")
}

fn read_report(path: &Path) -> Report {
    let text = fs::read_to_string(path).expect("report exists");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("report is not valid JSON: {e}\n{text}"))
}

/// The incrementally kept report says what a rebuild from the store says.
fn assert_matches_store(session: &Session, path: &Path) {
    let kept = read_report(path);
    let data = session.load().expect("loads");
    let built = Report::build(data.cases, data.records, &kept.stats_config);
    assert!(
        built.rows.iter().all(|row| !row.info.function.is_empty()),
        "the store describes every case"
    );
    let counts = |report: &Report| {
        let mut rows: Vec<(String, u64, u64, u64, u64, String)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.info.case.clone(),
                    r.passes,
                    r.fails,
                    r.errors,
                    r.total,
                    format!("{:?}", r.status),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(counts(&kept), counts(&built));
    let totals = |t: &Totals| (t.passes, t.fails, t.errors, t.count, t.retries);
    assert_eq!(totals(&kept.totals), totals(&built.totals));
    assert!((kept.totals.cost - built.totals.cost).abs() < 1e-9);
    assert_eq!(kept.exit_status, built.exit_status);
    assert_eq!(kept.records.len(), built.records.len());
    let mut kept_records: Vec<String> = kept.records.iter().map(|r| format!("{r:?}")).collect();
    let mut built_records: Vec<String> = built.records.iter().map(|r| format!("{r:?}")).collect();
    kept_records.sort();
    built_records.sort();
    assert_eq!(kept_records, built_records);
    // What derives from the counts: intervals, verdicts, metrics and their means.
    let judged = |report: &Report| {
        let mut rows: Vec<(String, String, String, String)> = report
            .rows
            .iter()
            .map(|r| {
                (
                    r.info.case.clone(),
                    format!("{:.12?}", r.ci.map(|ci| (ci.low, ci.high))),
                    format!("{:?}", r.gate.map(|g| (g.verdict, g.passes, g.sample))),
                    format!("{:.12?}", r.metrics),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(judged(&kept), judged(&built));
    assert_eq!(kept.warnings.len(), built.warnings.len());
    let means = |report: &Report| {
        let mut means: Vec<String> = report
            .aggregates
            .iter()
            .map(|a| format!("{} {:.9?}", a.function, a.metrics))
            .collect();
        means.sort();
        means
    };
    assert_eq!(means(&kept), means(&built));
}

#[test]
fn a_report_is_written_only_by_the_processes_that_name_it_and_covers_the_session() {
    let sessions = temp_sessions("two-paths");
    let session = Session::new(&sessions, "s1");
    let first = sessions.join("first.json");
    let second = sessions.join("second.json");
    let mut a = Harness::new(&session, &first);
    let judging = StatsConfig {
        min_rate: Some(0.5),
        ..StatsConfig::default()
    };
    let mut b = Harness::judging(&session, &second, judging);
    for round in 0..6u32 {
        for (harness, case) in [(&mut a, "classify::a"), (&mut b, "classify::b")] {
            let seq = harness.start(case, round + 1);
            let outcome = if round % 3 == 0 {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            harness.finish(seq, record(case, round + 1, outcome, 0.0, vec![]));
        }
    }
    // Each report holds the whole session as of its own processes' last change.
    assert_matches_store(&session, &second);
    assert_eq!(read_report(&second).records.len(), 12);
    assert_eq!(read_report(&first).records.len(), 11);
    assert_eq!(read_report(&second).stats_config.min_rate, Some(0.5));
    assert_eq!(read_report(&first).stats_config.min_rate, None);
    // A change by the other path's process marked it stale: its next change rebuilds it from
    // the store, with everything.
    let open = a.start("classify::c", 1);
    assert_matches_store(&session, &first);
    assert_eq!(read_report(&first).records.len(), 13);
    a.finish(open, record("classify::c", 1, Outcome::Pass, 0.0, vec![]));
    assert_matches_store(&session, &first);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_path_listed_in_the_lock_file_by_no_process_is_never_written() {
    let sessions = temp_sessions("foreign-path");
    let session = Session::new(&sessions, "s1");
    let report = sessions.join("report.json");
    let foreign = sessions.join("nobody-configured.json");
    let mut a = Harness::new(&session, &report);
    let seq = a.start("classify::a", 1);
    a.finish(seq, record("classify::a", 1, Outcome::Pass, 0.0, vec![]));
    // A path appended to the lock file, as a damaged or tampered state file would list it.
    let hex: String = foreign
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let lock = session.dir().join("report").join("lock");
    let mut listed = fs::read(&lock).expect("the lock file lists the report");
    listed.extend_from_slice(format!("{hex}\t\n").as_bytes());
    fs::write(&lock, listed).expect("written");
    for run in 2..5 {
        let seq = a.start("classify::a", run);
        a.finish(seq, record("classify::a", run, Outcome::Pass, 0.0, vec![]));
    }
    assert!(
        !foreign.exists(),
        "only the paths of the settings are written"
    );
    assert_eq!(read_report(&report).records.len(), 4);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn runs_in_flight_are_errors_until_they_finish() {
    let sessions = temp_sessions("inflight");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("out").join("report.json");
    let mut process = Harness::new(&session, &path);
    let first = process.start("classify::a", 1);
    let report = read_report(&path);
    assert_eq!((report.totals.errors, report.exit_status), (1, 1));
    assert_eq!(
        report.records[0].message.as_deref(),
        Some(crate::model::record::DIED_MESSAGE)
    );
    let usage = TokenUsage {
        model: "m".into(),
        input_tokens: 7,
        cost: 0.5,
        ..Default::default()
    };
    process.finish(
        first,
        record("classify::a", 1, Outcome::Pass, 0.5, vec![usage]),
    );
    let report = read_report(&path);
    assert_eq!(
        (
            report.totals.passes,
            report.totals.errors,
            report.exit_status
        ),
        (1, 0, 0)
    );
    assert_eq!(
        report.totals.usage.get("m").map(|u| u.input_tokens),
        Some(7)
    );
    assert_eq!(report.rows[0].status, crate::types::status::Status::Pass);
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn many_processes_many_cases_stay_consistent_through_rebuilds() {
    let sessions = temp_sessions("many");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let mut processes: Vec<Harness> = (0..4).map(|_| Harness::new(&session, &path)).collect();
    // Enough cases to exhaust the rows' free space more than once.
    let mut pending: Vec<(usize, u64, String, u32)> = Vec::new();
    for step in 0..600u32 {
        let which = (step as usize * 7) % processes.len();
        let case = format!(
            "classify::case {} with a long enough id to fill space quickly",
            step / 3
        );
        let seq = processes[which].start(&case, step % 3 + 1);
        pending.push((which, seq, case, step % 3 + 1));
        if step % 2 == 1 {
            let (which, seq, case, run) = pending.remove(0);
            let outcome =
                [Outcome::Pass, Outcome::Fail, Outcome::Pass, Outcome::Error][step as usize % 4];
            processes[which].finish(seq, record(&case, run, outcome, 0.001, vec![]));
        }
    }
    // Half the runs are still in flight: they read as errors, as a killed process would.
    assert_matches_store(&session, &path);
    for (which, seq, case, run) in pending.drain(..) {
        processes[which].finish(seq, record(&case, run, Outcome::Pass, 0.0, vec![]));
    }
    assert_matches_store(&session, &path);
    let index = index_of(&processes[0].report);
    assert!(
        index.generation > 1,
        "free space was exhausted at least once"
    );
    assert!(
        index.generation < 12,
        "rebuilds stay logarithmic: {}",
        index.generation
    );
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn verdicts_metrics_and_means_stay_current_run_by_run() {
    use crate::types::stats::Metric;
    let sessions = temp_sessions("judged");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let stats = StatsConfig {
        min_rate: Some(0.5),
        metrics: vec![Metric::PassAll(2), Metric::PassAny(3)],
        ..StatsConfig::default()
    };
    let mut processes: Vec<Harness> = (0..3)
        .map(|_| Harness::judging(&session, &path, stats.clone()))
        .collect();
    for step in 0..240u32 {
        let which = step as usize % processes.len();
        let case = format!("{}::case {}", ["a", "b", "c"][step as usize % 3], step % 11);
        let run = step / 11 + 1;
        let seq = processes[which].start(&case, run);
        let outcome =
            [Outcome::Pass, Outcome::Pass, Outcome::Fail, Outcome::Error][step as usize % 4];
        processes[which].finish(seq, record(&case, run, outcome, 0.0, vec![]));
        if step % 60 == 59 {
            assert_matches_store(&session, &path);
        }
    }
    let report = read_report(&path);
    assert!(report.rows.iter().all(|row| row.gate.is_some()));
    assert!(!report.aggregates.is_empty());
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn concurrent_processes_never_count_a_run_twice() {
    let sessions = temp_sessions("concurrent");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    // Threads with their own files and handles contend for the lock as processes do;
    // the first change of each rebuilds while the others wait with their lines ready.
    let workers: Vec<_> = (0..4)
        .map(|worker| {
            let (session, path) = (session.clone(), path.clone());
            std::thread::spawn(move || {
                let mut process = Harness::new(&session, &path);
                for run in 1..=40 {
                    let case = format!("classify::w{worker} case {}", run % 7);
                    let seq = process.start(&case, run);
                    let outcome = if run % 5 == 0 {
                        Outcome::Fail
                    } else {
                        Outcome::Pass
                    };
                    process.finish(seq, record(&case, run, outcome, 0.0, vec![]));
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().expect("worker finished");
    }
    assert_eq!(read_report(&path).records.len(), 160);
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_case_is_described_to_the_store_once_per_session() {
    let sessions = temp_sessions("described");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    // One process per run, as under nextest.
    for run in 1..=5 {
        let mut process = Harness::new(&session, &path);
        let seq = process.start("classify::a", run);
        process.finish(seq, record("classify::a", run, Outcome::Pass, 0.0, vec![]));
    }
    let lines = fs::read_to_string(session.dir().join("runs.jsonl")).expect("store");
    assert_eq!(lines.matches("\"t\":\"case\"").count(), 1, "{lines}");
    assert_eq!(read_report(&path).rows[0].total, 5);
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_row_made_by_a_thread_that_did_not_describe_its_case_still_gets_described() {
    let sessions = temp_sessions("race");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let process = ProcessFile::create(session.clone(), false, None, &StatsConfig::default())
        .expect("process file");
    // Another case first, so that the race below happens in a report that exists.
    let mut other = Harness::new(&session, &path);
    let seq = other.start("classify::b", 1);
    other.finish(seq, record("classify::b", 1, Outcome::Pass, 0.0, vec![]));
    let report = ReportFile::new(session.clone(), path.clone(), StatsConfig::default());
    let info = info("classify::a");
    let start = |seq: u64, first_sighting: bool| {
        let provisional = died_record(
            "fixture".into(),
            "evals".into(),
            "classify::a".into(),
            seq as u32 + 1,
            1,
        );
        let change = Change::Start {
            proc_id: process.proc_id(),
            seq,
            info: &info,
            provisional: &provisional,
        };
        report
            .apply(&change, |described| {
                // Only the thread that saw the case first describes it, as in the runtime.
                let describe = first_sighting && !described;
                if describe {
                    process.append(&Line::Case {
                        info: Cow::Borrowed(&info),
                        proc: None,
                        case_ref: None,
                    })?;
                }
                process.append(&start_line(
                    process.proc_id(),
                    "classify::a",
                    seq,
                    seq as u32 + 1,
                ))?;
                Ok(describe)
            })
            .expect("applied");
    };
    // The second run's thread takes the lock first and makes the row...
    start(1, false);
    // ...so the first run's thread must still be asked to describe the case.
    start(0, true);
    let lines = fs::read_to_string(session.dir().join("runs.jsonl")).expect("store");
    assert_eq!(lines.matches("\"t\":\"case\"").count(), 2, "{lines}");
    report.rebuild().expect("rebuilt");
    assert!(read_report(&path)
        .rows
        .iter()
        .all(|row| row.info.function == "bench_classify"));
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_damaged_report_is_rebuilt_from_the_store() {
    let sessions = temp_sessions("damaged");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let mut process = Harness::new(&session, &path);
    let seq = process.start("classify::a", 1);
    fs::write(&path, "truncated").expect("damaged");
    process.finish(seq, record("classify::a", 1, Outcome::Fail, 0.0, vec![]));
    assert_eq!(read_report(&path).totals.fails, 1);
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn retries_are_recorded_but_not_counted() {
    let sessions = temp_sessions("retry");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let mut process = Harness::new(&session, &path);
    let seq = process.start("classify::a", 1);
    process.finish(seq, record("classify::a", 1, Outcome::Fail, 0.0, vec![]));
    let seq = process.next_seq;
    process.next_seq += 1;
    let info = info("classify::a");
    let mut retry = died_record("fixture".into(), "evals".into(), "classify::a".into(), 1, 2);
    let file = &process.process;
    process
        .report
        .apply(
            &Change::Start {
                proc_id: file.proc_id(),
                seq,
                info: &info,
                provisional: &retry,
            },
            |_| {
                file.append(&Line::Start {
                    proc: file.proc_id().into(),
                    seq,
                    package: "fixture".into(),
                    module: "evals".into(),
                    case: "classify::a".into(),
                    run: 1,
                    attempt: 2,
                })?;
                Ok(false)
            },
        )
        .expect("applied");
    retry.outcome = Outcome::Pass;
    retry.message = None;
    process.finish(seq, retry);
    let report = read_report(&path);
    assert_eq!(
        (
            report.totals.fails,
            report.totals.passes,
            report.totals.retries
        ),
        (1, 0, 1)
    );
    assert_eq!(report.records.len(), 2);
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_report_that_found_no_room_is_not_rewritten_by_every_process_at_once() {
    let sessions = temp_sessions("full-backoff");
    let session = Session::new(&sessions, "s1");
    let path = sessions.join("report.json");
    let mut harness = Harness::new(&session, &path);
    let seq = harness.start("classify::a", 1);
    harness.finish(seq, record("classify::a", 1, Outcome::Pass, 0.0, vec![]));
    // What a process that found the report's disk full leaves for the others.
    let marker = harness.report.dir().join("full");
    fs::write(
        &marker,
        "report.json: No space left on device (os error 28)",
    )
    .expect("marker");
    fs::remove_file(&path).expect("the report gone");
    let error = harness.report.rebuild().expect_err("not retried at once");
    assert_eq!(error.kind(), std::io::ErrorKind::StorageFull);
    assert!(
        error.to_string().contains("no room a moment ago"),
        "{error}"
    );
    assert!(!path.exists(), "no write was tried");
    // Once the pause is over, the next process tries again, and a success clears the marker.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(&marker)
        .and_then(|file| file.set_modified(old))
        .expect("an old marker");
    harness.report.rebuild().expect("retried");
    assert!(path.exists() && !marker.exists());
    let _ = fs::remove_dir_all(sessions);
}

#[test]
fn a_report_left_unpatched_has_no_room_to_grow() {
    let sessions = temp_sessions("unpatched");
    let session = Session::new(&sessions, "s");
    let path = sessions.join("report.json");
    let mut process = Harness::new(&session, &path);
    let seq = process.start("classify::a", 1);
    process.finish(seq, record("classify::a", 1, Outcome::Pass, 0.0, vec![]));
    // A run in flight, as another process's would be at a fold.
    process.start("classify::b", 1);
    let padded = fs::read_to_string(&path).expect("the report");
    assert!(padded.contains(&" ".repeat(64)), "patched in place: room");
    // A process's folds leave the report to be rebuilt before it is patched: no room in it.
    for last in [false, true] {
        let (_, written) = process.report.rebuild_keeping(|| None, last);
        written.expect("rebuilt");
        let text = fs::read_to_string(&path).expect("the report");
        assert!(!text.contains(&" ".repeat(64)), "{text}");
        if !last {
            // The last fold adds the session's analysis, which a build from the store has not.
            assert_matches_store(&session, &path);
        }
        assert_eq!(index_of(&process.report).file_len, u64::MAX);
    }
    // The next change rebuilds it, patchable again.
    process.start("classify::c", 1);
    assert!(fs::read_to_string(&path)
        .expect("the report")
        .contains(&" ".repeat(64)));
    assert_matches_store(&session, &path);
    let _ = fs::remove_dir_all(sessions);
}
