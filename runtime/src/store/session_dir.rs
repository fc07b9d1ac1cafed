//! One session's directory in the store: creating it (and then pruning old sessions), listing
//! the sessions, and loading everything the session's processes recorded.
//!
//! Layer: store.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::format::store_files::SessionFile;
use crate::format::store_lines::Line;
use crate::model::record::died_record;
#[cfg(feature = "_cli")]
use crate::model::ExpectedBinary;
use crate::model::{CaseInfo, Record, Report};
use crate::store::key::{now_nanos, sanitize_key};
use crate::store::sessions::{list_sessions, prune, prune_later, Pruning};
use crate::store::slots;
use crate::store::unrecorded;
use crate::types::count::thousands;
use crate::types::key::CaseKey;
use crate::types::stats::StatsConfig;

/// Sessions kept in the store; older ones are pruned when a new one starts and there are a
/// quarter more than this.
pub const KEEP_SESSIONS: usize = 20;

/// One session's directory in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    key: String,
    dir: PathBuf,
}

/// Everything a session's processes recorded, as the report needs it.
#[derive(Clone, Debug, Default)]
pub struct SessionData {
    /// Every case some process described.
    pub cases: Vec<CaseInfo>,
    /// Every run: finished ones as recorded, started-and-never-finished ones as errors.
    pub records: Vec<Record>,
    /// For each record, the process file and sequence number of an unfinished run, so that a
    /// report writer can find it again once it finishes.
    pub(crate) open: Vec<Option<(String, u64)>>,
    /// Whether any process of the session ran one test per process.
    pub per_test: bool,
    /// The session report the processes kept (`PROB_JSON` or the config's `json`), as named.
    pub report: Option<String>,
    /// The statistics settings the processes judged with (the last process's).
    pub stats: StatsConfig,
    /// Runs that processes of the session executed but could not write to the store (a full
    /// disk): they are in no record, and the report must say so.
    pub unrecorded: u64,
    /// The report's path as the processes resolved it (the last one's), to check it exists.
    pub report_path: Option<PathBuf>,
    /// Errors `Session::reconcile` added for tests that left no record: the report the
    /// processes kept does not hold them.
    // Read by `cargo probtest run --nextest` alone.
    #[cfg_attr(not(feature = "_cli"), allow(dead_code))]
    pub reconciled: u64,
    /// The generated items of the session's test binaries, by `<binary id>$<test name>`, as
    /// nextest listed them: what case and run each holds (see `Session::reconcile`).
    pub(crate) items: HashMap<String, (CaseInfo, u32)>,
    /// The tests each test binary's runner was to run, as `cargo probtest run` listed them:
    /// the binary's id, its label, and the tests' names.
    pub(crate) expected: Vec<(String, String, Vec<String>)>,
    /// What the store could not account for, one line each: runs that could not be recorded,
    /// bytes that could not be read. The report carries them as warnings.
    pub warnings: Vec<String>,
}

impl Session {
    /// The session `key` under `sessions_dir`, whether or not it exists yet.
    pub fn new(sessions_dir: &Path, key: &str) -> Session {
        let key = sanitize_key(key);
        Session {
            dir: sessions_dir.join(&key),
            key,
        }
    }

    /// The session in folder `dir`, named `key` as listed.
    pub(super) fn listed(key: String, dir: PathBuf) -> Session {
        Session { key, dir }
    }

    /// The session's key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The session's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether any process recorded into this session.
    pub fn exists(&self) -> bool {
        self.runs_file().is_file()
    }

    /// The session's store lines, from every process: `runs.jsonl`.
    pub(crate) fn runs_file(&self) -> PathBuf {
        self.dir.join("runs.jsonl")
    }

    /// Counts `runs` that a process of this session executed and could not record, with the
    /// first reason given. Written in place into a file made with the session, so that it
    /// works on the full disk that lost the runs.
    pub(crate) fn note_unrecorded(&self, runs: u64, reason: &str) -> io::Result<()> {
        unrecorded::add(&self.dir, runs, reason)
    }

    /// The most recently started session under `sessions_dir`.
    #[cfg(any(test, feature = "_cli"))]
    pub fn latest(sessions_dir: &Path) -> io::Result<Option<Session>> {
        Ok(Session::list(sessions_dir)?.into_iter().next())
    }

    /// Every session under `sessions_dir`, the most recently started first.
    pub fn list(sessions_dir: &Path) -> io::Result<Vec<Session>> {
        let mut sessions = list_sessions(sessions_dir)?;
        sessions.sort_by_key(|(started, _)| std::cmp::Reverse(*started));
        Ok(sessions.into_iter().map(|(_, session)| session).collect())
    }

    /// Creates the session's directories; the process that creates the session also prunes
    /// old ones, keeping [`KEEP_SESSIONS`].
    pub(super) fn create(&self) -> io::Result<()> {
        self.create_with(Pruning::Now)
    }

    /// [`Session::create`], pruning old sessions `pruning`.
    pub(super) fn create_with(&self, pruning: Pruning) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let marker = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.dir.join("session.json"));
        if let Ok(mut marker) = marker {
            let file = SessionFile {
                key: self.key.clone(),
                started: now_nanos(),
            };
            marker.write_all(&serde_json::to_vec(&file).map_err(io::Error::other)?)?;
            // Made now, while there is room: a process that later cannot write to a full
            // disk still counts its lost runs here, in place, without new space.
            unrecorded::create(&self.dir)?;
            if let Some(parent) = self.dir.parent() {
                match pruning {
                    Pruning::Now => prune(parent, KEEP_SESSIONS, &self.key)?,
                    Pruning::Later => prune_later(parent, &self.key),
                }
            }
        }
        Ok(())
    }

    /// The runs of the processes that recorded them in slots (see `store::slots`), as the
    /// start and end lines they stand for. An end line in the log (a run with a message or
    /// usage) is kept over its slot's.
    fn load_slots(
        &self,
        slot_cases: &HashMap<(String, u32), CaseKey>,
        starts: &mut Vec<Line<'static>>,
        ends: &mut HashMap<(String, u64), Line<'static>>,
        unreadable: &mut Unreadable,
    ) -> io::Result<()> {
        let entries = match fs::read_dir(slots::procs_dir(&self.dir)) {
            Ok(entries) => entries,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(error),
        };
        for entry in entries {
            let path = entry?.path();
            let Some(proc) = path
                .file_name()
                .and_then(|name| name.to_str())
                .and_then(|name| name.strip_suffix(".slots"))
            else {
                continue;
            };
            let read = slots::read(&path).map_err(|error| {
                io::Error::new(error.kind(), format!("{}: {error}", path.display()))
            })?;
            for slot in read {
                let Some(key) = slot_cases.get(&(proc.to_string(), slot.case_ref)) else {
                    // Its case line was lost (torn): the run cannot be attributed, and the
                    // report says so.
                    unreadable.unattributed += 1;
                    continue;
                };
                starts.push(Line::Start {
                    proc: Cow::Owned(proc.to_string()),
                    seq: slot.seq,
                    package: Cow::Owned(key.package.clone()),
                    module: Cow::Owned(key.module.clone()),
                    case: Cow::Owned(key.case.clone()),
                    run: slot.run,
                    attempt: slot.attempt,
                });
                if let Some((outcome, elapsed, cost)) = slot.ended {
                    ends.entry((proc.to_string(), slot.seq))
                        .or_insert(Line::End {
                            proc: Cow::Owned(proc.to_string()),
                            seq: slot.seq,
                            record: Record {
                                outcome,
                                elapsed,
                                cost,
                                ..Record::default()
                            },
                        });
                }
            }
        }
        Ok(())
    }

    /// Reads everything the session's processes recorded.
    pub fn load(&self) -> io::Result<SessionData> {
        let reader = BufReader::new(File::open(self.runs_file())?);
        let mut data = SessionData::default();
        let mut described: BTreeSet<CaseKey> = BTreeSet::new();
        let mut starts: Vec<Line<'static>> = Vec::new();
        // The cases of the processes that record runs in slots, by process and number.
        let mut slot_cases: HashMap<(String, u32), CaseKey> = HashMap::new();
        let mut ends: HashMap<(String, u64), Line<'static>> = HashMap::new();
        let mut unreadable = Unreadable::default();
        for line in reader.split(b'\n') {
            let line = line?;
            // A line torn by a process killed mid-write, or bytes that are no line at all, do
            // not parse: they are skipped and counted, never silently.
            let Some(event) = Line::parse(&line) else {
                unreadable.skip(&line);
                continue;
            };
            match event {
                Line::Process {
                    per_test,
                    report,
                    report_path,
                    stats,
                    ..
                } => {
                    data.per_test |= per_test;
                    data.stats = stats.into_owned();
                    if let Some(report) = report {
                        data.report = Some(report.into_owned());
                    }
                    if let Some(path) = report_path {
                        data.report_path = Some(PathBuf::from(path.into_owned()));
                    }
                }
                Line::Items {
                    binary,
                    cases,
                    items,
                } => {
                    for (name, case, run) in items {
                        if let Some(info) = cases.get(case as usize) {
                            data.items
                                .insert(format!("{binary}${name}"), (info.clone(), run));
                        }
                    }
                }
                Line::Expected {
                    binary,
                    label,
                    names,
                } => data
                    .expected
                    .push((binary.into_owned(), label.into_owned(), names)),
                Line::Case {
                    info,
                    proc,
                    case_ref,
                } => {
                    if let (Some(proc), Some(case_ref)) = (proc, case_ref) {
                        slot_cases.insert((proc.into_owned(), case_ref), info.key().to_owned_key());
                    }
                    if described.insert(info.key().to_owned_key()) {
                        data.cases.push(info.into_owned());
                    }
                }
                start @ Line::Start { .. } => starts.push(start),
                end @ Line::End { .. } => {
                    if let Line::End { proc, seq, .. } = &end {
                        ends.insert((proc.to_string(), *seq), end);
                    }
                }
            }
        }
        self.load_slots(&slot_cases, &mut starts, &mut ends, &mut unreadable)?;
        for start in starts {
            let Line::Start {
                proc,
                seq,
                package,
                module,
                case,
                run,
                attempt,
            } = start
            else {
                continue;
            };
            let proc = proc.into_owned();
            match ends.remove(&(proc.clone(), seq)) {
                Some(Line::End { record, .. }) => {
                    data.records.push(Record {
                        case,
                        package,
                        module,
                        run,
                        attempt,
                        ..record
                    });
                    data.open.push(None);
                }
                _ => {
                    data.records
                        .push(died_record(package, module, case, run, attempt));
                    data.open.push(Some((proc, seq)));
                }
            }
        }
        // Ends left over have no start: their runs' starts were in unreadable bytes.
        unreadable.orphan_ends = ends.len() as u64;
        data.warnings.extend(unreadable.warning());
        if let Some((runs, reason)) = unrecorded::read(&self.dir)? {
            data.unrecorded = runs;
            data.warnings.push(unrecorded_warning(runs, &reason));
        }
        Ok(data)
    }
}

impl SessionData {
    /// The session's report: its rows, totals, verdicts and analysis, and what the store could
    /// not account for among its warnings.
    pub fn into_report(self) -> Report {
        let mut report = Report::build(self.cases, self.records, &self.stats);
        crate::store::baseline_file::analyze(&mut report);
        note_store(&mut report, self.warnings, self.unrecorded);
        report
    }

    /// The report of a session whose runner has finished (`cargo probtest run`, `cargo
    /// probtest report`): [`SessionData::into_report`], with the runs the runner was to run
    /// (as `cargo probtest run` listed them) that never started counted as not run, per row
    /// and per binary. A test process's own report leaves them out: other processes of its
    /// session may not have started yet.
    #[cfg(feature = "_cli")]
    pub fn into_finished_report(self) -> Report {
        let expected = self.expected_binaries();
        let mut report = self.into_report();
        report.count_not_run(&expected);
        report
    }

    /// Each listed binary's expected tests that are generated items, with their case and run.
    #[cfg(feature = "_cli")]
    fn expected_binaries(&self) -> Vec<ExpectedBinary> {
        self.expected
            .iter()
            .map(|(binary, label, names)| ExpectedBinary {
                binary: binary.clone(),
                label: label.clone(),
                runs: names
                    .iter()
                    .filter_map(|name| self.items.get(&format!("{binary}${name}")))
                    .cloned()
                    .collect(),
            })
            .collect()
    }
}

/// Adds to `report` what the store could not account for: its `warnings`, and a failing exit
/// status when runs could not be recorded (their outcomes are unknown).
pub(crate) fn note_store(report: &mut Report, warnings: Vec<String>, unrecorded: u64) {
    for warning in warnings {
        if !report.warnings.contains(&warning) {
            report.warnings.push(warning);
        }
    }
    if unrecorded > 0 {
        report.exit_status = report.exit_status.max(1);
    }
}

/// The warning of `runs` runs that could not be recorded, for `reason`.
pub(crate) fn unrecorded_warning(runs: u64, reason: &str) -> String {
    let noun = if runs == 1 { "run" } else { "runs" };
    format!(
        "{} {noun} could not be recorded in the session store ({reason})",
        thousands(runs)
    )
}

/// What the loader could not read: bytes that are no store line, and what they may have held.
#[derive(Default)]
struct Unreadable {
    bytes: u64,
    /// Run starts seen inside unreadable bytes.
    starts: u64,
    /// Ends whose start is nowhere: it was in unreadable bytes.
    orphan_ends: u64,
    /// Runs in slots whose case's description is unreadable.
    unattributed: u64,
}

impl Unreadable {
    /// Counts a line that does not parse; blank separators are no loss.
    fn skip(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.bytes += line.len() as u64;
        let marker = b"\"t\":\"start\"";
        self.starts += line
            .windows(marker.len())
            .filter(|window| *window == marker)
            .count() as u64;
    }

    /// One line for the report, when anything was skipped: "store: 4,096 unreadable bytes
    /// skipped; 17 runs may be missing".
    fn warning(&self) -> Option<String> {
        let missing = self.starts.max(self.orphan_ends) + self.unattributed;
        if self.bytes == 0 && missing == 0 {
            return None;
        }
        let mut text = format!(
            "store: {} unreadable {} skipped",
            thousands(self.bytes),
            if self.bytes == 1 { "byte" } else { "bytes" }
        );
        if missing > 0 {
            let noun = if missing == 1 { "run" } else { "runs" };
            text.push_str(&format!("; {} {noun} may be missing", thousands(missing)));
        }
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::session_of_two_runs;

    #[test]
    fn unreadable_bytes_are_counted_with_the_runs_they_may_have_held() {
        let (sessions, session) = session_of_two_runs("unreadable");
        let log = session.runs_file();
        let text = fs::read_to_string(&log).expect("log");
        assert!(session.load().expect("loads").warnings.is_empty());
        // Garbage glued to the front of run 1's start line: the line is lost, its end is an
        // orphan, and the warning says a run may be missing.
        let damaged = text.replacen(
            "\n{\"t\":\"start\"",
            "\n\u{1}\u{2}garbage{\"t\":\"start\"",
            1,
        );
        fs::write(&log, &damaged).expect("written");
        let data = session.load().expect("loads");
        assert_eq!(data.records.len(), 1);
        let start_len = text
            .split('\n')
            .find(|line| line.contains("\"t\":\"start\""))
            .expect("a start line")
            .len();
        assert_eq!(
            data.warnings,
            [format!(
                "store: {} unreadable bytes skipped; 1 run may be missing",
                start_len + 9
            )]
        );
        let report = data.into_report();
        assert!(report.warnings.iter().any(|w| w.starts_with("store: ")));
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn unrecorded_runs_fail_the_session_with_a_warning() {
        let (sessions, session) = session_of_two_runs("unrecorded-load");
        session
            .note_unrecorded(3, "runs.jsonl: No space left on device (os error 28)")
            .expect("noted");
        let data = session.load().expect("loads");
        assert_eq!(data.unrecorded, 3);
        let report = data.into_report();
        assert_eq!(report.exit_status, 1);
        assert!(report.warnings.contains(
            &"3 runs could not be recorded in the session store (runs.jsonl: No space left on device (os error 28))".to_string()
        ));
        let _ = fs::remove_dir_all(sessions);
    }
}
