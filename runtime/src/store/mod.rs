//! The session store: every run persisted as it happens, so that a report can cover every
//! process of a session (one `cargo nextest run`, or one `cargo test` with all its test
//! binaries) and a run whose process died is still accounted for.
//!
//! Layout under `<target>/probtest/sessions/<session>/`:
//!
//! - `session.json`: the key and when the session started.
//! - `runs.jsonl`: one JSON line per event, from every process of the session: a process
//!   starting, each case it runs (once), each run's start and end.
//!
//! One shared file, each line written with a single `write` under an exclusive `File::lock`:
//! lines from concurrent processes never interleave, and no process creates a file of its own
//! (under nextest, one file per process would mean one new inode per test, which costs more
//! than the run's own bookkeeping). Each line starts with a newline, so a line torn by a
//! process killed mid-write is cut off by the next line and skipped by the loader, losing
//! nothing else. A start without an end is a run whose process died: it loads as an error,
//! never as a pass and never as missing.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

pub(crate) mod atomic;
pub(crate) mod live;

pub(crate) use crate::format::store_lines::identity_fragment;
use crate::format::store_lines::Line;
pub(crate) use crate::model::record::died_record;
use crate::model::{CaseInfo, Record};
use crate::types::stats::StatsConfig;

/// Sessions kept in the store; older ones are pruned when a new one starts.
pub const KEEP_SESSIONS: usize = 20;

/// The message of a run that started and never reported.
pub use crate::model::record::DIED_MESSAGE;

/// The file name of a session key: anything but letters, digits, `.`, `_` and `-` becomes `_`.
pub fn sanitize_key(key: &str) -> String {
    let mut cleaned = String::with_capacity(key.len());
    // Every nextest process cleans its session key: char by char, without iterator adapters,
    // which cost several calls a character in unoptimized test builds.
    for c in key.chars() {
        let kept = c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-';
        cleaned.push(if kept { c } else { '_' });
    }
    if cleaned.starts_with('.') {
        cleaned = cleaned.trim_start_matches('.').to_string();
    }
    cleaned
}

/// The key of the session this process belongs to.
///
/// `PROB_SESSION` when set; else nextest's `NEXTEST_RUN_ID` (shared by every process of one
/// `cargo nextest run`); else, when cargo started this process, the cargo process's id and
/// start time (shared by every test binary of one `cargo test`, different for the next one);
/// else this process alone.
pub(crate) fn session_key(env: &impl Fn(&str) -> Option<String>) -> String {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if let Some(key) = set("PROB_SESSION") {
        return sanitize_key(&key);
    }
    if let Some(run_id) = set("NEXTEST_RUN_ID") {
        return sanitize_key(&format!("nextest-{run_id}"));
    }
    let pid = std::process::id();
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        if process_name(parent).is_some_and(|name| name.starts_with("cargo")) {
            if let Some(start) = process_start(parent) {
                return format!("cargo-{parent}-{start}");
            }
        }
    }
    match process_start(pid) {
        Some(start) => format!("process-{pid}-{start}"),
        None => format!("process-{pid}-{}", now_nanos()),
    }
}

/// The short name of a process, where the platform tells it.
#[cfg_attr(not(unix), allow(dead_code))]
fn process_name(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|name| name.trim().to_string())
}

/// When a process started, in clock ticks since boot (`/proc/<pid>/stat`, field 22): with the
/// pid, it names one process even after the pid is reused.
fn process_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses; the fields after it are plain.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The target directory a test binary was built in: the nearest ancestor holding cargo's
/// `CACHEDIR.TAG`, else the directory above the profile directory.
pub(crate) fn target_dir_of(executable: &Path) -> Option<PathBuf> {
    tagged_target_dir_of(executable)
        .or_else(|| profile_dir_of(executable)?.parent().map(Path::to_path_buf))
}

/// The nearest ancestor of `executable` holding cargo's `CACHEDIR.TAG`. The directory above
/// the profile directory, where cargo puts the tag, is looked at first: one system call for
/// the usual layout, in every nextest process.
pub(crate) fn tagged_target_dir_of(executable: &Path) -> Option<PathBuf> {
    let tagged = |dir: &Path| dir.join("CACHEDIR.TAG").is_file();
    let usual = profile_dir_of(executable)?.parent();
    if let Some(usual) = usual.filter(|dir| tagged(dir)) {
        return Some(usual.to_path_buf());
    }
    executable
        .ancestors()
        .skip(1)
        .find(|&dir| Some(dir) != usual && tagged(dir))
        .map(Path::to_path_buf)
}

/// The profile directory of a test binary (`target/debug` for `target/debug/deps/t-0123`).
fn profile_dir_of(executable: &Path) -> Option<&Path> {
    let deps = executable.parent()?;
    if deps.file_name()? == "deps" {
        deps.parent()
    } else {
        Some(deps)
    }
}

/// Where the sessions of a target directory live.
pub fn sessions_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("probtest").join("sessions")
}

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

    fn runs_file(&self) -> PathBuf {
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
    pub(crate) fn create(&self) -> io::Result<()> {
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

    /// Reads everything the session's processes recorded.
    pub fn load(&self) -> io::Result<SessionData> {
        let reader = BufReader::new(File::open(self.runs_file())?);
        let mut data = SessionData::default();
        let mut described: HashSet<(String, String, String)> = HashSet::new();
        let mut starts: Vec<Line<'static>> = Vec::new();
        let mut ends: HashMap<(String, u64), Line<'static>> = HashMap::new();
        for line in reader.split(b'\n') {
            let line = line?;
            // Blank separators, and a line torn by a process killed mid-write, do not parse.
            let Ok(event) = serde_json::from_slice::<Line<'static>>(&line) else {
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
                Line::Case { info } => {
                    let (package, module, case) = info.key();
                    let key = (package.to_string(), module.to_string(), case.to_string());
                    if described.insert(key) {
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

/// This process's handle on its session's file, appended to as runs start and end.
pub(crate) struct ProcessFile {
    file: Mutex<Appender>,
    proc_id: String,
    /// Whether to take the file lock for each line: only when other processes of the session
    /// run at the same time, as nextest's do. The processes of a `cargo test` run one after
    /// another, and this process's own threads take turns at `file`'s mutex; O_APPEND also
    /// puts each single write whole at the end of the file on local file systems. The lock
    /// costs two system calls a line, as much as a short test's own bookkeeping.
    lock_lines: bool,
}

/// The session file and the lines waiting to go out with the next one.
struct Appender {
    file: File,
    /// Lines that describe what follows (this process, a case) are sent with the next run's
    /// start, in the same write: one system call and one lock instead of three, under nextest
    /// where every run is a new process that writes all of them.
    queued: Vec<u8>,
}

impl ProcessFile {
    /// Creates the session if needed and announces this process in it, with its first line.
    pub(crate) fn create(
        session: Session,
        per_test: bool,
        report: Option<String>,
        stats: &StatsConfig,
    ) -> io::Result<ProcessFile> {
        // Under nextest every process joins a session that exists already: one system call.
        let file = match OpenOptions::new().append(true).open(session.runs_file()) {
            Ok(file) => file,
            Err(_) => {
                session.create()?;
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(session.runs_file())?
            }
        };
        let process = ProcessFile {
            file: Mutex::new(Appender {
                file,
                queued: Vec::new(),
            }),
            proc_id: format!("{}-{}", std::process::id(), now_nanos()),
            lock_lines: per_test,
        };
        let line = crate::format::store_lines::process_line(
            &process.proc_id,
            per_test,
            report.as_deref(),
            stats,
        )?;
        process.queue_text(&line);
        Ok(process)
    }

    /// This process's id in the session: its pid and when it joined.
    pub(crate) fn proc_id(&self) -> &str {
        &self.proc_id
    }

    /// Appends one line, and any queued before it, with a single write under the session
    /// file's lock.
    #[cfg(test)]
    pub(crate) fn append(&self, line: &Line) -> io::Result<()> {
        self.queue(line)?;
        self.write_line(&[])
    }

    /// Holds a line back until the next [`ProcessFile::append`] or run line, which writes it
    /// first.
    #[cfg(test)]
    pub(crate) fn queue(&self, line: &Line) -> io::Result<()> {
        let text = serde_json::to_string(line).map_err(io::Error::other)?;
        self.queue_text(&text);
        Ok(())
    }

    /// Holds back the line describing a case, written by hand: every nextest process writes one.
    pub(crate) fn queue_case(&self, info: &CaseInfo) -> io::Result<()> {
        self.queue_text(&crate::format::store_lines::case_line(info)?);
        Ok(())
    }

    /// Holds back a line already written as JSON, as [`ProcessFile::queue`] does.
    fn queue_text(&self, line: &str) {
        let queued = &mut self.appender().queued;
        queued.push(b'\n');
        queued.extend_from_slice(line.as_bytes());
    }

    fn appender(&self) -> std::sync::MutexGuard<'_, Appender> {
        self.file
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Appends a run's start line, from the case's escaped `identity` (see
    /// [`identity_fragment`]).
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

    fn write_line(&self, bytes: &[u8]) -> io::Result<()> {
        let mut appender = self.appender();
        let queued = std::mem::take(&mut appender.queued);
        let bytes = if queued.is_empty() {
            Cow::Borrowed(bytes)
        } else {
            Cow::Owned([queued.as_slice(), bytes].concat())
        };
        let file = &appender.file;
        if !self.lock_lines {
            return (&*file).write_all(&bytes);
        }
        file.lock()?;
        let written = (&*file).write_all(&bytes);
        let unlocked = file.unlock();
        written.and(unlocked)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::tests::{info, record};
    use crate::types::status::Outcome;
    use crate::types::usage::TokenUsage;

    pub(crate) fn temp_sessions(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("probtest-store-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    pub(crate) fn start_line<'a>(proc: &'a str, case: &'a str, seq: u64, run: u32) -> Line<'a> {
        Line::Start {
            proc: proc.into(),
            seq,
            package: "fixture".into(),
            module: "evals".into(),
            case: case.into(),
            run,
            attempt: 1,
        }
    }

    #[test]
    fn keys_come_from_the_override_then_nextest() {
        assert_eq!(
            session_key(&env_of(&[
                ("PROB_SESSION", "ci/shard 1"),
                ("NEXTEST_RUN_ID", "x")
            ])),
            "ci_shard_1"
        );
        assert_eq!(
            session_key(&env_of(&[("NEXTEST_RUN_ID", "0b5c-11")])),
            "nextest-0b5c-11"
        );
        let own = session_key(&env_of(&[]));
        assert!(
            own.starts_with("cargo-") || own.starts_with("process-"),
            "{own}"
        );
        // The same process derives the same key every time.
        assert_eq!(own, session_key(&env_of(&[])));
    }

    #[test]
    fn process_start_times_are_read_from_proc() {
        if Path::new("/proc/self/stat").exists() {
            assert!(process_start(std::process::id()).is_some());
        }
    }

    #[test]
    fn target_dir_is_found_from_the_test_binary() {
        let root = temp_sessions("target");
        let deps = root.join("debug").join("deps");
        fs::create_dir_all(&deps).expect("dirs");
        assert_eq!(target_dir_of(&deps.join("evals-0123")), Some(root.clone()));
        assert_eq!(tagged_target_dir_of(&deps.join("evals-0123")), None);
        let cross = root
            .join("x86_64-unknown-linux-gnu")
            .join("debug")
            .join("deps");
        fs::create_dir_all(&cross).expect("dirs");
        fs::write(
            root.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .expect("tag");
        assert_eq!(target_dir_of(&cross.join("evals-0123")), Some(root.clone()));
        assert_eq!(target_dir_of(&deps.join("evals-0123")), Some(root.clone()));
        // The usual place is looked at first; elsewhere, the nearest tag.
        let nested = root.join("debug").join("CACHEDIR.TAG");
        fs::write(&nested, "Signature: 8a477f597d28d172789f06886806bc55").expect("tag");
        assert_eq!(
            tagged_target_dir_of(&deps.join("evals-0123")),
            Some(root.clone())
        );
        let loose = root.join("debug").join("tools").join("bin");
        fs::create_dir_all(&loose).expect("dirs");
        assert_eq!(
            tagged_target_dir_of(&loose.join("evals-0123")),
            Some(root.join("debug"))
        );
        let _ = fs::remove_dir_all(root);
    }

    #[test]
    fn descriptions_go_out_with_the_next_run_in_one_write() {
        let sessions = temp_sessions("queued");
        let session = Session::new(&sessions, "s1");
        let stats = StatsConfig {
            min_rate: Some(0.5),
            ..StatsConfig::default()
        };
        let process = ProcessFile::create(session.clone(), true, Some("r.json".into()), &stats)
            .expect("created");
        process
            .queue(&Line::Case {
                info: Cow::Owned(info("classify::a")),
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
            Some("r.json".into()),
            &StatsConfig::default(),
        )
        .expect("created");
        let id = first.proc_id().to_string();
        first
            .append(&Line::Case {
                info: Cow::Owned(info("classify::a")),
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
        (&first.file.lock().expect("lock").file)
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
