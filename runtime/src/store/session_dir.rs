//! One session's directory in the store: creating it (and then pruning old sessions), listing
//! the sessions, and loading everything the session's processes recorded.
//!
//! Layer: store.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::format::store_lines::Line;
use crate::model::record::died_record;
use crate::model::{CaseInfo, Record};
use crate::store::key::{now_nanos, sanitize_key};
use crate::store::slots;
use crate::types::key::CaseKey;
use crate::types::stats::StatsConfig;

/// Sessions kept in the store; older ones are pruned when a new one starts.
pub const KEEP_SESSIONS: usize = 20;

#[derive(Debug, Serialize, Deserialize)]
struct SessionFile {
    key: String,
    /// Nanoseconds since the Unix epoch; orders sessions for pruning and for "latest".
    started: u128,
}

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
    pub(super) fn runs_file(&self) -> PathBuf {
        self.dir.join("runs.jsonl")
    }

    /// The most recently started session under `sessions_dir`.
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
            if let Some(parent) = self.dir.parent() {
                prune(parent, KEEP_SESSIONS, &self.key)?;
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
                    // Its case line was lost (torn): the run cannot be attributed.
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
                            outcome,
                            message: None,
                            location: None,
                            elapsed,
                            cost,
                            usage: Cow::Owned(Vec::new()),
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
        for line in reader.split(b'\n') {
            let line = line?;
            // Blank separators, and a line torn by a process killed mid-write, do not parse.
            let Some(event) = Line::parse(&line) else {
                continue;
            };
            match event {
                Line::Process {
                    per_test,
                    report,
                    stats,
                    ..
                } => {
                    data.per_test |= per_test;
                    data.stats = stats.into_owned();
                    if let Some(report) = report {
                        data.report = Some(report.into_owned());
                    }
                }
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
        self.load_slots(&slot_cases, &mut starts, &mut ends)?;
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
                Some(Line::End {
                    outcome,
                    message,
                    location,
                    elapsed,
                    cost,
                    usage,
                    ..
                }) => {
                    data.records.push(Record {
                        case,
                        package,
                        module,
                        run,
                        attempt,
                        outcome,
                        message: message.map(Cow::into_owned),
                        location: location.map(Cow::into_owned),
                        elapsed,
                        cost,
                        usage: usage.into_owned(),
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
        Ok(data)
    }
}

fn list_sessions(sessions_dir: &Path) -> io::Result<Vec<(u128, Session)>> {
    let entries = match fs::read_dir(sessions_dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut sessions = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let started = fs::read(dir.join("session.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<SessionFile>(&bytes).ok())
            .map(|file| file.started)
            .or_else(|| {
                let modified = entry.metadata().ok()?.modified().ok()?;
                Some(modified.duration_since(UNIX_EPOCH).ok()?.as_nanos())
            })
            .unwrap_or(0);
        let key = entry.file_name().to_string_lossy().into_owned();
        sessions.push((started, Session { key, dir }));
    }
    Ok(sessions)
}

/// Removes all but the newest `keep` sessions, never `current`.
fn prune(sessions_dir: &Path, keep: usize, current: &str) -> io::Result<()> {
    let mut sessions = list_sessions(sessions_dir)?;
    sessions.sort_by_key(|(started, _)| std::cmp::Reverse(*started));
    for (_, session) in sessions.into_iter().skip(keep) {
        if session.key != current {
            // Another process may be pruning the same session at the same time.
            let _ = fs::remove_dir_all(&session.dir);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::temp_sessions;

    #[test]
    fn old_sessions_are_pruned_but_never_the_current_one() {
        let sessions = temp_sessions("prune");
        for index in 0..(KEEP_SESSIONS + 3) {
            Session::new(&sessions, &format!("s{index:02}"))
                .create()
                .expect("created");
        }
        let left = list_sessions(&sessions).expect("listed");
        assert_eq!(left.len(), KEEP_SESSIONS);
        let latest = Session::latest(&sessions).expect("listed").expect("some");
        assert_eq!(latest.key(), format!("s{:02}", KEEP_SESSIONS + 2));
        assert!(!sessions.join("s00").exists());
        // The current session survives even when it is the oldest.
        prune(&sessions, 1, "s05").expect("pruned");
        assert!(sessions.join("s05").exists());
        assert!(sessions.join(format!("s{:02}", KEEP_SESSIONS + 2)).exists());
        assert!(!sessions.join(format!("s{:02}", KEEP_SESSIONS + 1)).exists());
        let _ = fs::remove_dir_all(sessions);
    }
}
