//! The session's JSON report, kept complete after every run of every process, at a cost per
//! run that does not grow with the session.
//!
//! Rebuilding the report at each run would make a session quadratic (4,000 nextest processes
//! would each rewrite everything before them). Instead the file is laid out in slots that can
//! be patched in place:
//!
//! ```text
//! {"schema":1,...,"session":"...",
//! "runs":10,"exit_status":1,"totals":{...}      <- head slot, padded with spaces
//! ,"rows":[
//! {row}     ,                                  <- one slot per case, padded
//! {row}
//!                                              <- free space for new rows
//! ],"records":[
//! {record},
//! {record}                                     <- appended; a run in flight has a padded slot
//! ]}
//! ```
//!
//! JSON allows whitespace between tokens, so a padded slot is still valid JSON. A run's start
//! appends a provisional record (an error: "the test process died before the run finished")
//! and counts it; its end patches that record and the counts. A run whose process is killed
//! therefore stays in the report as an error, with no process left to write it.
//!
//! Each change reads and rewrites two small binary files in place (the index, with offsets and
//! totals, and the touched row's state, with its counts and the slots of its runs in flight; see
//! `state`) and creates none, except a row state for a case seen for the first time. A row is
//! written as its case's fixed prefix and a tail of counts and verdict; a change rewrites the
//! tail alone. When something does not fit (a new row with no free space, a slot that outgrew
//! its padding) or the files disagree (a writer died halfway, the report was deleted), the
//! report is rebuilt from the session store, in source order, with room to grow: the free space
//! doubles, so rebuilds are logarithmic in the session's size.
//!
//! The two files are what keeps a run's cost flat. Measured in the unoptimized test build (one
//! process per run, as under nextest), a run's start and end patched in place take about 0.2 ms
//! at 1,000 runs and at 4,000 alike; one rebuild from the log takes about 50 ms at 1,000 runs
//! and 250 ms at 4,000, and a run makes two changes, against nextest's own 6 to 7 ms of CPU
//! time per test.
//!
//! Every change happens under an exclusive lock on `report/lock` in the session directory.
//! Processes of one session can name different report paths (per-package settings); each
//! report covers the whole session, so the lock file lists the paths and every change is made
//! to each, with that path's own index and row states under `report/<hash of the path>/`.
//!
//! The report is a [`ReportFile`]; a change ([`Change`]) goes through [`ReportFile::apply`],
//! under the lock, to every report path of the session (`siblings`), in place when it fits
//! (`incremental`) and by a rebuild from the store otherwise (`rebuild`). The files' layout is
//! in `state`, the byte-level reads and writes in `file_io`; every file it keeps in the session
//! directory is listed in `store`'s documentation. The counts, verdicts and sums it keeps
//! running are the model's own steps (`Row::add`, `Row::settle`, `Totals::add`,
//! `RowSums::row_changed`), the ones `Report::build` takes.
//!
//! Layer: store.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) mod file_io;
mod incremental;
mod rebuild;
mod siblings;
pub(crate) mod state;
#[cfg(test)]
mod tests;

use crate::model::{CaseInfo, Record, Report};
use crate::store::atomic::{resolve_target, Target};
use crate::store::live::file_io::hex_hash;
use crate::store::live::incremental::Incremental;
use crate::store::live::rebuild::Patchable;
use crate::store::session_dir::SessionData;
use crate::store::Session;
use crate::types::key::CaseKey;
use crate::types::stats::StatsConfig;

/// Extra room in a provisional record's slot for the finished record's message and usage.
const RECORD_SLACK: u64 = 2048;
/// What closes the records array and the report.
const TAIL: &str = "\n]}\n";

/// A change to the report. Both kinds carry the case's description: the process making the
/// change has it, so the row state on disk need not.
pub(crate) enum Change<'a> {
    /// A run started: count it as an error until it finishes.
    Start {
        proc_id: &'a str,
        seq: u64,
        info: &'a CaseInfo,
        provisional: &'a Record,
    },
    /// The run `seq` of process `proc_id` finished with `record`.
    Finish {
        proc_id: &'a str,
        seq: u64,
        info: &'a CaseInfo,
        record: &'a Record,
    },
}

impl Change<'_> {
    fn info(&self) -> &CaseInfo {
        match self {
            Change::Start { info, .. } | Change::Finish { info, .. } => info,
        }
    }
}

/// Files this process keeps open between changes.
#[derive(Default)]
struct Handles {
    lock: Option<File>,
    index: Option<File>,
    /// The report file of a generation: a rebuild renames a new file into place.
    report: Option<(u64, File)>,
    /// The last row state touched: a run's end comes back to its start's row.
    row: Option<RowHandle>,
    /// The session's other report paths, as last read from the lock file.
    siblings: Vec<ReportFile>,
    /// The lock file's content when `siblings` was read from it, once read.
    registered: Option<Vec<u8>>,
}

/// An open row state file, with what names it, so that its name is worked out once.
struct RowHandle {
    generation: u64,
    key: CaseKey,
    file: File,
}

impl RowHandle {
    fn is(&self, generation: u64, key: CaseKey<&str>) -> bool {
        self.generation == generation && self.key.borrowed() == key
    }
}

/// The report of one session at one path.
pub(crate) struct ReportFile {
    session: Session,
    /// The report's path, its symlinks followed: patched and renamed at the file itself.
    path: PathBuf,
    /// The state of this report path, its index and row states: `report/<hash of the path>`.
    dir: PathBuf,
    /// Whether the path is a character device or a FIFO (`/dev/null`, a pipe): such a report
    /// cannot be patched in place, and is written whole when a run finishes and at exit.
    stream: bool,
    /// The statistics settings rows are judged with.
    stats: StatsConfig,
    /// How many rows the report should have room for: the cases this process knows of (its
    /// test binary's), so that a session of one binary never rebuilds for want of room. Asked
    /// at a rebuild only: counting them costs more than a run's patch.
    expected_rows: fn() -> usize,
    handles: Mutex<Handles>,
}

impl ReportFile {
    pub(crate) fn new(session: Session, path: PathBuf, stats: StatsConfig) -> ReportFile {
        // A path that is refused (a directory) is kept as given: writing it says why.
        let (path, stream) = match resolve_target(&path) {
            Ok(Target::File(target)) => (target, false),
            Ok(Target::Stream(target)) => (target, true),
            Err(_) => (path, false),
        };
        let dir = session
            .dir()
            .join("report")
            .join(hex_hash(path.as_os_str().as_encoded_bytes()));
        ReportFile {
            session,
            path,
            dir,
            stream,
            stats,
            expected_rows: || 0,
            handles: Mutex::new(Handles::default()),
        }
    }

    /// The report, with room for as many rows as `rows` says when it is rebuilt.
    pub(crate) fn with_room_for(mut self, rows: fn() -> usize) -> ReportFile {
        self.expected_rows = rows;
        self
    }

    /// Whether the report is a character device or a FIFO, written whole, never patched.
    pub(crate) fn is_stream(&self) -> bool {
        self.stream
    }

    /// Where the session's report state lives: the lock, and a directory per report path.
    fn reports_dir(&self) -> PathBuf {
        self.session.dir().join("report")
    }

    /// The state of this report path: its index and row states.
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_bytes(&self) -> &[u8] {
        self.path.as_os_str().as_encoded_bytes()
    }

    /// Runs `persist` (which writes the change to the session store) and then applies `change`,
    /// both under the session's report lock, rebuilding from the store when the change cannot
    /// be made in place. Persisting under the lock matters: a rebuild by another process must
    /// never see a store line whose change has not reached the report yet, or the change would
    /// be counted twice.
    ///
    /// `persist` is told whether the store already describes the change's case (its row says
    /// so), so that a process need not describe it again: under nextest every run is a new
    /// process. It returns whether it described the case; only then does the row say so,
    /// since the thread that makes a row need not be the one that describes its case.
    pub(crate) fn apply(
        &self,
        change: &Change<'_>,
        persist: impl FnOnce(bool) -> io::Result<bool>,
    ) -> io::Result<()> {
        // Written before taking the lock: other processes wait for it.
        let record_text = crate::format::report::record(match change {
            Change::Start { provisional, .. } => provisional,
            Change::Finish { record, .. } => record,
        })?;
        self.locked(|handles, lock| {
            self.siblings(handles, lock)?;
            let result = self.apply_held(handles, change, record_text, persist);
            // Another path's report is written only by the processes whose settings name it:
            // it is marked stale, and the next of them rebuilds it from the store.
            for sibling in &handles.siblings {
                sibling.mark_stale();
            }
            result
        })
    }

    /// Marks this path's index as not describing its report, so that the next change to it
    /// rebuilds it from the store. Written only inside the session's directory.
    fn mark_stale(&self) {
        if let Ok(index) = OpenOptions::new()
            .write(true)
            .open(self.dir().join("index"))
        {
            let _ = file_io::write_at(&index, 0, &[state::DIRTY]);
        }
    }

    /// [`ReportFile::apply`] for this path, with the session's lock held.
    fn apply_held(
        &self,
        handles: &mut Handles,
        change: &Change<'_>,
        record_text: String,
        persist: impl FnOnce(bool) -> io::Result<bool>,
    ) -> io::Result<()> {
        if self.stream {
            persist(false)?;
            return match change {
                Change::Start { .. } => Ok(()),
                Change::Finish { .. } => self.rebuild_locked(handles),
            };
        }
        let prepared = self.prepare(handles, change);
        let described = prepared
            .as_ref()
            .and_then(|prepared| prepared.existing.as_ref())
            .is_some_and(|state| state.described);
        let described_now = persist(described)?;
        let Some(prepared) = prepared else {
            return self.rebuild_locked(handles);
        };
        match self.incremental(handles, prepared, change, record_text, described_now) {
            Ok(Incremental::Done) => Ok(()),
            Ok(Incremental::Rebuild) | Err(_) => self.rebuild_locked(handles),
        }
    }

    /// Rebuilds the report from the store, in source order.
    pub(crate) fn rebuild(&self) -> io::Result<()> {
        self.locked(|handles, _| self.rebuild_locked(handles))
    }

    /// Rebuilds the report, in source order, from what `whole` gives, asked with the session's
    /// lock held: everything the session recorded, when the caller holds all of it (then the
    /// store is not read); else from the store. For a process that folds its runs in batches:
    /// the report is left without what patching it in place needs (see `Patchable`).
    /// The `last` fold of a process adds the session's analysis. Gives back the report built
    /// from what `whole` gave (the caller's own runs are the session's) whether or not the file
    /// took it: a process's summary shows it either way.
    pub(crate) fn rebuild_keeping(
        &self,
        whole: impl FnOnce() -> Option<SessionData>,
        last: bool,
    ) -> (Option<Report>, io::Result<()>) {
        let rebuilt = self.locked(|handles, _| {
            let patchable = if last {
                Patchable::Final
            } else {
                Patchable::No
            };
            Ok(match whole() {
                Some(data) => {
                    let (report, written) = self.rebuild_locked_keeping(handles, data, patchable);
                    (Some(report), written)
                }
                None => {
                    let data = self.session.load()?;
                    (
                        None,
                        self.rebuild_locked_keeping(handles, data, patchable).1,
                    )
                }
            })
        });
        rebuilt.unwrap_or_else(|error| (None, Err(error)))
    }

    fn locked<T>(&self, work: impl FnOnce(&mut Handles, &File) -> io::Result<T>) -> io::Result<T> {
        let mut handles = self
            .handles
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        if handles.lock.is_none() {
            let open = || {
                OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .read(true)
                    .write(true)
                    .open(self.reports_dir().join("lock"))
            };
            let lock = match open() {
                Ok(lock) => lock,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    fs::create_dir_all(self.reports_dir())?;
                    open()?
                }
                Err(error) => return Err(error),
            };
            handles.lock = Some(lock);
        }
        let lock = handles
            .lock
            .take()
            .ok_or_else(|| io::Error::other("no lock file"))?;
        lock.lock()?;
        let result = work(&mut handles, &lock);
        let _ = lock.unlock();
        handles.lock = Some(lock);
        result
    }
}
