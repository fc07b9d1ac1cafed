//! This process's appender of store lines: one shared `runs.jsonl` per session, each line
//! written whole with a single `write`, the lines that describe what follows (this process, a
//! case) sent with the next run's start.
//!
//! Layer: store.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

#[cfg(test)]
use crate::format::store_lines::Line;
use crate::model::{CaseInfo, Record};
use crate::store::key::now_nanos;
use crate::store::session_dir::Session;
use crate::store::sessions::Pruning;
use crate::types::stats::StatsConfig;

/// This process's handle on its session's file, appended to as runs start and end.
pub(crate) struct ProcessFile {
    file: File,
    session: Session,
    /// Lines that describe what follows (this process, a case) are sent with the next run's
    /// start, in the same write: one system call and one lock instead of three, under nextest
    /// where every run is a new process that writes all of them.
    queued: Mutex<Vec<u8>>,
    /// Bytes this process has written to the session file: when the file holds no more, the
    /// session is this process's alone.
    written: AtomicU64,
    proc_id: String,
    /// Whether to take the file lock for each line: only when other processes of the session
    /// run at the same time, as nextest's do. The processes of a `cargo test` run one after
    /// another, and O_APPEND puts each single write whole at the end of the file on local file
    /// systems, so this process's threads write without waiting for each other (the loader
    /// needs no order between lines). The lock costs two system calls a line, as much as a
    /// short test's own bookkeeping.
    lock_lines: bool,
}

impl ProcessFile {
    /// Creates the session if needed and announces this process in it, with its first line.
    pub(crate) fn create(
        session: Session,
        per_test: bool,
        report: Option<(String, String)>,
        stats: &StatsConfig,
    ) -> io::Result<ProcessFile> {
        // Under nextest every process joins a session that exists already: one system call.
        let file = match OpenOptions::new().append(true).open(session.runs_file()) {
            Ok(file) => file,
            Err(_) => {
                // A process of many runs prunes old sessions while it runs, and its exit waits
                // for that; a process of one run (nextest's) prunes them at once.
                session.create_with(if per_test {
                    Pruning::Now
                } else {
                    Pruning::Later
                })?;
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(session.runs_file())?
            }
        };
        let process = ProcessFile {
            file,
            session,
            queued: Mutex::new(Vec::new()),
            written: AtomicU64::new(0),
            // Digits and `-` only: the run lines write it without escaping.
            proc_id: format!("{}-{}", std::process::id(), now_nanos()),
            lock_lines: per_test,
        };
        let line = crate::format::store_lines::process_line(
            &process.proc_id,
            per_test,
            report
                .as_ref()
                .map(|(named, path)| (named.as_str(), path.as_str())),
            stats,
        )?;
        process.queue_text(&line);
        Ok(process)
    }

    /// The directory of the session this process writes to.
    pub(crate) fn session_dir(&self) -> &std::path::Path {
        self.session.dir()
    }

    /// The session this process writes to.
    pub(crate) fn session(&self) -> &Session {
        &self.session
    }

    /// This process's id in the session: its pid and when it joined.
    pub(crate) fn proc_id(&self) -> &str {
        &self.proc_id
    }

    /// Appends one line, and any queued before it, with a single write under the session
    /// file's lock.
    #[cfg(test)]
    pub(super) fn append(&self, line: &Line) -> io::Result<()> {
        self.queue(line)?;
        self.write_line(&[])
    }

    /// Holds a line back until the next [`ProcessFile::append`] or run line, which writes it
    /// first.
    #[cfg(test)]
    pub(super) fn queue(&self, line: &Line) -> io::Result<()> {
        let text = serde_json::to_string(line).map_err(io::Error::other)?;
        self.queue_text(&text);
        Ok(())
    }

    /// Holds back the line describing a case, written by hand: every nextest process writes one.
    pub(crate) fn queue_case(&self, info: &CaseInfo) -> io::Result<()> {
        self.queue_text(&crate::format::store_lines::case_line(info, None)?);
        Ok(())
    }

    /// Writes the lines describing cases that this process's slots call by their refs, in one
    /// write with any lines held back: before the cases' first slots, so that a slot never
    /// names a case the log does not describe.
    pub(crate) fn append_slot_cases(&self, cases: &[(&CaseInfo, u32)]) -> io::Result<()> {
        let mut text = String::new();
        for &(info, case_ref) in cases {
            let line =
                crate::format::store_lines::case_line(info, Some((&self.proc_id, case_ref)))?;
            text.push('\n');
            text.push_str(&line);
        }
        self.write_line(text.as_bytes())
    }

    /// Holds back a line already written as JSON, as [`ProcessFile::queue`] does.
    fn queue_text(&self, line: &str) {
        let mut queued = self.queued();
        queued.push(b'\n');
        queued.extend_from_slice(line.as_bytes());
    }

    fn queued(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.queued
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Appends a run's start line, from the case's escaped `identity` (see
    /// [`identity_fragment`](crate::store::identity_fragment)).
    pub(crate) fn append_start(
        &self,
        seq: u64,
        identity: &str,
        run: u32,
        attempt: u32,
    ) -> io::Result<()> {
        let line =
            crate::format::store_lines::start_line(&self.proc_id, seq, identity, run, attempt);
        self.write_line(line.as_bytes())
    }

    /// Appends a run's end line.
    pub(crate) fn append_end(&self, seq: u64, record: &Record) -> io::Result<()> {
        let line = crate::format::store_lines::end_line(&self.proc_id, seq, record)?;
        self.write_line(line.as_bytes())
    }

    /// Whether every line of the session file is this process's: then this process holds the
    /// whole session in memory, and a report can be built without reading the file back.
    pub(crate) fn is_whole_session(&self) -> bool {
        self.file
            .metadata()
            .is_ok_and(|meta| meta.len() == self.written.load(Ordering::Acquire))
    }

    fn write_line(&self, bytes: &[u8]) -> io::Result<()> {
        // Taken, then written with the lock released: a thread writing does not hold up the
        // others.
        let queued = std::mem::take(&mut *self.queued());
        let bytes = if queued.is_empty() {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned([queued.as_slice(), bytes].concat())
        };
        let file = &self.file;
        let written = if self.lock_lines {
            file.lock()?;
            let written = (&*file).write_all(&bytes);
            let unlocked = file.unlock();
            written.and(unlocked)
        } else {
            (&*file).write_all(&bytes)
        };
        if written.is_ok() {
            self.written.fetch_add(bytes.len() as u64, Ordering::AcqRel);
        }
        written
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::model::record::DIED_MESSAGE;
    use crate::model::tests::{info, record};
    use crate::store::identity_fragment;
    use crate::store::test_support::{start_line, temp_sessions};
    use crate::types::status::Outcome;
    use crate::types::usage::TokenUsage;

    #[test]
    fn descriptions_go_out_with_the_next_run_in_one_write() {
        let sessions = temp_sessions("queued");
        let session = Session::new(&sessions, "s1");
        let stats = StatsConfig {
            min_rate: Some(0.5),
            ..StatsConfig::default()
        };
        let process = ProcessFile::create(
            session.clone(),
            true,
            Some(("r.json".into(), "/reports/r.json".into())),
            &stats,
        )
        .expect("created");
        process
            .queue(&Line::Case {
                info: Cow::Owned(info("classify::a")),
                proc: None,
                case_ref: None,
            })
            .expect("queued");
        let written = || fs::read_to_string(session.runs_file()).expect("runs file");
        assert_eq!(written(), "", "nothing is written before a run");
        let identity = identity_fragment("fixture", "evals", "classify::a");
        process.append_start(0, &identity, 1, 1).expect("written");
        let kinds: Vec<String> = written()
            .lines()
            .filter(|line| !line.is_empty())
            .map(|line| line.split('"').nth(3).unwrap_or_default().to_string())
            .collect();
        assert_eq!(kinds, ["process", "case", "start"]);
        let data = session.load().expect("loads");
        assert_eq!(
            data.stats, stats,
            "settings other than the defaults are kept"
        );
        assert_eq!((data.cases.len(), data.records.len()), (1, 1));
        assert!(data.per_test);
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn unfinished_and_torn_runs_load_as_errors() {
        let sessions = temp_sessions("load");
        let session = Session::new(&sessions, "s1");
        let first = ProcessFile::create(
            session.clone(),
            false,
            Some(("r.json".into(), "/reports/r.json".into())),
            &StatsConfig::default(),
        )
        .expect("created");
        let id = first.proc_id().to_string();
        first
            .append(&Line::Case {
                info: Cow::Owned(info("classify::a")),
                proc: None,
                case_ref: None,
            })
            .expect("written");
        first
            .append(&start_line(&id, "classify::a", 0, 1))
            .expect("written");
        let pass = record("classify::a", 1, Outcome::Pass, 0.0, vec![]);
        first.append_end(0, &pass).expect("written");
        first
            .append(&start_line(&id, "classify::a", 1, 2))
            .expect("written");
        // The process dies while writing the end of run 2...
        (&first.file)
            .write_all(b"\n{\"t\":\"end\",\"proc\":\"x\",\"seq\":1,\"rec")
            .expect("written");
        // ...and another process of the session goes on writing after the torn line.
        let second = ProcessFile::create(session.clone(), false, None, &StatsConfig::default())
            .expect("created");
        let other = second.proc_id().to_string();
        second
            .append(&start_line(&other, "classify::a", 0, 3))
            .expect("written");
        let fail = record("classify::a", 3, Outcome::Fail, 0.0, vec![]);
        second.append_end(0, &fail).expect("written");

        let data = session.load().expect("loads");
        assert_eq!(data.report.as_deref(), Some("r.json"));
        assert_eq!(data.cases.len(), 1);
        let outcomes: Vec<(u32, Outcome)> =
            data.records.iter().map(|r| (r.run, r.outcome)).collect();
        assert_eq!(
            outcomes,
            [(1, Outcome::Pass), (2, Outcome::Error), (3, Outcome::Fail)]
        );
        assert_eq!(data.records[1].message.as_deref(), Some(DIED_MESSAGE));
        assert_eq!(data.open[1], Some((id, 1)));
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn hand_formatted_lines_read_back_as_the_records_they_came_from() {
        let sessions = temp_sessions("lines");
        let session = Session::new(&sessions, "s");
        let process = ProcessFile::create(session.clone(), false, None, &StatsConfig::default())
            .expect("created");
        let case = "classify::a \"quoted\" \\ case";
        let identity = identity_fragment("fixture", "evals", case);
        let usage = TokenUsage {
            model: "m".into(),
            input_tokens: 3,
            cost: 0.25,
            ..Default::default()
        };
        let mut failing = record(case, 2, Outcome::Fail, 0.75, vec![usage]);
        failing.message = Some("assertion `left == right` failed: \"x\"\n".into());
        failing.location = Some("tests/evals.rs:10:5".into());
        failing.elapsed = 1.5e-7;
        let passing = record(case, 3, Outcome::Pass, 0.0, vec![]);
        for (seq, written) in [(0, &failing), (1, &passing)] {
            process
                .append_start(seq, &identity, written.run, 1)
                .expect("written");
            process.append_end(seq, written).expect("written");
        }
        let data = session.load().expect("loads");
        assert_eq!(data.records, [failing, passing]);
        let _ = fs::remove_dir_all(sessions);
    }
}
