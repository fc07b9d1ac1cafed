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
//! `report_state`) and creates none, except a row state for a case seen for the first time. A
//! row is written as its case's fixed prefix and a tail of counts and verdict; a change
//! rewrites the tail alone. When something does not fit (a new row with no
//! free space, a slot that outgrew its padding) or the files disagree (a writer died halfway,
//! the report was deleted), the report is rebuilt from the session store, in source order, with
//! room to grow: the free space doubles, so rebuilds are logarithmic in the session's size.
//!
//! Every change happens under an exclusive lock on `report/lock` in the session directory.
//! Processes of one session can name different report paths (per-package settings); each
//! report covers the whole session, so the lock file lists the paths and every change is made
//! to each, with that path's own index and row states under `report/<hash of the path>/`.

use std::fs::{self, File, OpenOptions};
use std::io;
#[cfg(not(unix))]
use std::io::{Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Mutex;

pub(crate) mod state;

use crate::model::{infeasible, Aggregate, CaseInfo, Record, Report, Row, SCHEMA_VERSION};
use crate::store::atomic::write_atomically;
use crate::store::live::state::{FunctionSums, Index, OpenRun, RowState, Slot, DIRTY};
use crate::store::Session;
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::StatsConfig;
use crate::types::time::rfc3339_now;

/// Extra room in a provisional record's slot for the finished record's message and usage.
const RECORD_SLACK: u64 = 2048;
/// Free space for new rows left by a rebuild, at least: room for some 350 cases, so that a
/// session of ordinary size never rebuilds after its first run (a rebuild reads the whole
/// store while every other process waits). JSON reads the spaces as whitespace.
/// The unit tests use less, to go through rebuilds.
const MIN_ROWS_FREE: u64 = if cfg!(test) { 16 * 1024 } else { 256 * 1024 };
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

/// What a row counted for before a change: whether it failed the session, and its metrics.
struct Counted<'a> {
    fails: bool,
    metrics: &'a OrderedMap<f64>,
}

impl Index {
    /// Accounts for a row changing from `before` (none for a new row) to `after`.
    fn row_changed(&mut self, before: Option<Counted<'_>>, after: &Row, config: &StatsConfig) {
        let fails_before = before.as_ref().is_some_and(|before| before.fails);
        self.failing_rows = (self.failing_rows + u64::from(after.fails_session(config)))
            .saturating_sub(u64::from(fails_before));
        functions_changed(
            &mut self.functions,
            before.map(|before| before.metrics),
            after,
            config,
        );
    }

    fn aggregates(&self, config: &StatsConfig) -> Vec<Aggregate> {
        aggregates_of(&self.functions, config)
    }
}

/// Moves a row's metrics from `before` (none for a new row) to `after` in its function's sums.
fn functions_changed(
    functions: &mut Vec<FunctionSums>,
    before: Option<&OrderedMap<f64>>,
    after: &Row,
    config: &StatsConfig,
) {
    // Without metrics there are no means to keep, and the index stays the same size however
    // many functions the session has.
    if config.metrics.is_empty() {
        return;
    }
    let names: Vec<String> = config.metrics.iter().map(|m| m.name()).collect();
    let position = functions
        .iter()
        .position(|f| f.function == after.info.function && f.module == after.info.module)
        .unwrap_or_else(|| {
            functions.push(FunctionSums {
                function: after.info.function.clone(),
                module: after.info.module.clone(),
                cases: 0,
                sums: vec![0.0; names.len()],
                counts: vec![0; names.len()],
            });
            functions.len() - 1
        });
    let sums = &mut functions[position];
    if before.is_none() {
        sums.cases += 1;
    }
    for (index, name) in names.iter().enumerate() {
        if let Some(value) = before.and_then(|metrics| metrics.get(name)) {
            sums.sums[index] -= value;
            sums.counts[index] -= 1;
        }
        if let Some(value) = after.metrics.get(name) {
            sums.sums[index] += value;
            sums.counts[index] += 1;
        }
    }
}

/// The aggregates the sums give.
fn aggregates_of(functions: &[FunctionSums], config: &StatsConfig) -> Vec<Aggregate> {
    if config.metrics.is_empty() {
        return Vec::new();
    }
    functions
        .iter()
        .map(|sums| {
            let mut aggregate = Aggregate {
                function: sums.function.clone(),
                module: sums.module.clone(),
                metrics: OrderedMap::default(),
                left_out: OrderedMap::default(),
            };
            for (index, metric) in config.metrics.iter().enumerate() {
                let (sum, count) = (sums.sums[index], sums.counts[index]);
                if count > 0 {
                    aggregate
                        .metrics
                        .0
                        .push((metric.name(), sum / count as f64));
                }
                aggregate
                    .left_out
                    .0
                    .push((metric.name(), sums.cases - count));
            }
            aggregate
        })
        .collect()
}

impl RowState {
    /// The row this state and `info` describe, settled under `config`.
    fn take_row(&mut self, info: &CaseInfo) -> Row {
        let mut row = Row::new(info.clone());
        row.passes = self.passes;
        row.fails = self.fails;
        row.errors = self.errors;
        row.total = self.total;
        row.cost = self.cost;
        row.usage = std::mem::take(&mut self.usage);
        row
    }

    /// Takes the counts of `row` back, with what the row counts for in the index.
    fn update(&mut self, row: &Row, config: &StatsConfig) {
        self.passes = row.passes;
        self.fails = row.fails;
        self.errors = row.errors;
        self.total = row.total;
        self.cost = row.cost;
        self.usage = row.usage.clone();
        self.fails_session = row.fails_session(config);
        self.metrics = row.metrics.clone();
    }

    fn counted(&self) -> Counted<'_> {
        Counted {
            fails: self.fails_session,
            metrics: &self.metrics,
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
    key: [String; 3],
    file: File,
}

impl RowHandle {
    fn is(&self, generation: u64, (package, module, case): (&str, &str, &str)) -> bool {
        self.generation == generation
            && self.key[2] == case
            && self.key[1] == module
            && self.key[0] == package
    }
}

/// The report of one session at one path.
pub(crate) struct ReportFile {
    session: Session,
    path: PathBuf,
    /// The statistics settings rows are judged with.
    stats: StatsConfig,
    handles: Mutex<Handles>,
}

/// What a change needs to be made in place, read under the lock before the change is persisted.
struct Prepared {
    index: Index,
    /// The row's state; `None` for a case the report has no row for yet.
    existing: Option<RowState>,
}

/// Whether a change was made in place, or the report must be rebuilt from the store.
enum Incremental {
    Done,
    Rebuild,
}

fn hex_hash(text: &str) -> String {
    // Two FNV-1a hashes with different offsets: 128 bits, so distinct cases get distinct files.
    // One index loop for both: unoptimized, iterator adapters cost several calls a byte.
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let bytes = text.as_bytes();
    let (mut first, mut second) = (0xcbf2_9ce4_8422_2325_u64, 0x6c62_272e_07bb_0142_u64);
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at] as u64;
        first = (first ^ byte).wrapping_mul(PRIME);
        second = (second ^ byte).wrapping_mul(PRIME);
        at += 1;
    }
    format!("{first:016x}{second:016x}")
}

fn row_file_name(key: (&str, &str, &str)) -> String {
    format!(
        "{}.row",
        hex_hash(&format!("{}\0{}\0{}", key.0, key.1, key.2))
    )
}

fn padded(mut text: String, capacity: u64) -> Option<String> {
    /// Copied in bulk: test code runs unoptimized, where building spaces one by one shows.
    const SPACES: &str = match std::str::from_utf8(&[b' '; 1024]) {
        Ok(spaces) => spaces,
        Err(_) => panic!("spaces are UTF-8"),
    };
    let mut missing = usize::try_from(capacity.checked_sub(text.len() as u64)?).ok()?;
    text.reserve(missing);
    while missing > 0 {
        let chunk = missing.min(SPACES.len());
        text.push_str(&SPACES[..chunk]);
        missing -= chunk;
    }
    Some(text)
}

#[cfg(unix)]
fn write_at(file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}

#[cfg(unix)]
fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset)
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    use std::io::Read;
    file.seek(SeekFrom::Start(offset))?;
    file.read(buffer)
}

/// A whole small file, in one system call when it fits the first buffer: a short read of a
/// regular file is its end. The files read here (the lock, an index, a row state) take a few
/// hundred bytes; a larger one takes a read per doubling.
fn read_all(file: &File) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; 1024];
    let mut filled = 0;
    loop {
        let read = read_at(file, &mut bytes[filled..], filled as u64)?;
        filled += read;
        if read == 0 || filled < bytes.len() {
            break;
        }
        bytes.resize(bytes.len() * 2, 0);
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// Bytes written as two hex digits each, back; `None` if they are not.
fn unhex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect()
}

/// A path from the bytes of [`ReportFile::path_bytes`], written by a process of this machine.
#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

fn row_capacity(length: u64) -> u64 {
    length + (length / 2).max(160)
}

impl ReportFile {
    pub(crate) fn new(session: Session, path: PathBuf, stats: StatsConfig) -> ReportFile {
        ReportFile {
            session,
            path,
            stats,
            handles: Mutex::new(Handles::default()),
        }
    }

    /// Where the session's report state lives: the lock, and a directory per report path.
    fn reports_dir(&self) -> PathBuf {
        self.session.dir().join("report")
    }

    /// The state of this report path: its index and row states.
    fn dir(&self) -> PathBuf {
        self.reports_dir()
            .join(hex_hash(&String::from_utf8_lossy(self.path_bytes())))
    }

    /// This path's line in the lock file: its bytes in hex, and the statistics settings its
    /// rows are judged with when they are not the defaults.
    fn registration(&self) -> io::Result<String> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let bytes = self.path_bytes();
        let mut line = String::with_capacity(bytes.len() * 2 + 2);
        for &byte in bytes {
            line.push(char::from(DIGITS[usize::from(byte >> 4)]));
            line.push(char::from(DIGITS[usize::from(byte & 15)]));
        }
        line.push('\t');
        if self.stats != StatsConfig::default() {
            line.push_str(&serde_json::to_string(&self.stats).map_err(io::Error::other)?);
        }
        line.push('\n');
        Ok(line)
    }

    /// The session's other report paths. Processes of one session can name different reports
    /// (per-package settings), and each report covers the whole session, so every change is
    /// made to every path: the lock file lists them, and a path joins the list at its first
    /// change (which builds its report from the store). A list of one path is read and
    /// compared, never parsed.
    fn siblings(&self, handles: &mut Handles, lock: &File) -> io::Result<()> {
        let listed = read_all(lock)?;
        if handles.registered.as_ref() == Some(&listed) {
            return Ok(());
        }
        let own = self.registration()?;
        let own_hex = own.split('\t').next().unwrap_or_default();
        let mut siblings = Vec::new();
        let mut registered = false;
        for line in String::from_utf8_lossy(&listed).lines() {
            let (hex, stats) = line.split_once('\t').unwrap_or((line, ""));
            if hex == own_hex {
                registered = true;
                continue;
            }
            let Some(path) = unhex(hex) else { continue };
            if siblings
                .iter()
                .any(|s: &ReportFile| s.path_bytes() == path.as_slice())
            {
                continue;
            }
            let stats = if stats.is_empty() {
                StatsConfig::default()
            } else {
                serde_json::from_str(stats).unwrap_or_default()
            };
            let path = path_from_bytes(path);
            siblings.push(ReportFile::new(self.session.clone(), path, stats));
        }
        let mut listed = listed;
        if !registered {
            write_at(lock, listed.len() as u64, own.as_bytes())?;
            listed.extend_from_slice(own.as_bytes());
        }
        handles.siblings = siblings;
        handles.registered = Some(listed);
        Ok(())
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
            let mut described_in_store = false;
            // Copied only for other paths: a session usually has one.
            let sibling_text = (!handles.siblings.is_empty()).then(|| record_text.clone());
            let result = self.apply_held(handles, change, record_text, |described| {
                let described_now = persist(described)?;
                described_in_store = described || described_now;
                Ok(described_now)
            });
            // After this path's change, which wrote the store: a sibling that rebuilds reads it.
            for sibling in &handles.siblings {
                let record_text = sibling_text.clone().unwrap_or_default();
                let mut sibling_handles = sibling
                    .handles
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner());
                sibling.apply_held(&mut sibling_handles, change, record_text, |_| {
                    Ok(described_in_store)
                })?;
            }
            result
        })
    }

    /// [`ReportFile::apply`] for this path, with the session's lock held.
    fn apply_held(
        &self,
        handles: &mut Handles,
        change: &Change<'_>,
        record_text: String,
        persist: impl FnOnce(bool) -> io::Result<bool>,
    ) -> io::Result<()> {
        let prepared = self.prepare(handles, change).ok().flatten();
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

    /// The index, when it is clean and describes the report file as it is on disk.
    fn load_index(&self, handles: &mut Handles) -> Option<Index> {
        if handles.index.is_none() {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .open(self.dir().join("index"))
                .ok()?;
            handles.index = Some(file);
        }
        let index = Index::decode(&read_all(handles.index.as_ref()?).ok()?)?;
        if index.path != self.path_bytes() {
            return None;
        }
        let report = match handles.report.take() {
            Some((generation, file)) if generation == index.generation => file,
            _ => OpenOptions::new()
                .read(true)
                .write(true)
                .open(&self.path)
                .ok()?,
        };
        let on_disk = report.metadata().ok()?.len();
        handles.report = Some((index.generation, report));
        (index.file_len == on_disk).then_some(index)
    }

    /// The index and the state of the change's row, read before the change is persisted;
    /// `None` when the report must be rebuilt.
    fn prepare(&self, handles: &mut Handles, change: &Change<'_>) -> io::Result<Option<Prepared>> {
        let Some(index) = self.load_index(handles) else {
            return Ok(None);
        };
        let key = change.info().key();
        let generation = index.generation;
        let row = match handles.row.take() {
            Some(row) if row.is(generation, key) => row,
            _ => {
                let path = self
                    .dir()
                    .join(format!("rows-{generation}"))
                    .join(row_file_name(key));
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(path)?;
                let (package, module, case) = key;
                RowHandle {
                    generation,
                    key: [package.to_string(), module.to_string(), case.to_string()],
                    file,
                }
            }
        };
        let row_file = &handles.row.insert(row).file;
        let row_bytes = read_all(row_file)?;
        let existing = if row_bytes.is_empty() {
            None
        } else {
            match RowState::decode(&row_bytes) {
                Some(state) if state.key() == key => Some(state),
                _ => return Ok(None),
            }
        };
        Ok(Some(Prepared { index, existing }))
    }

    /// Applies `change` in place; `record_text` is the JSON of its record, and `described_now`
    /// whether persisting the change described its case to the store.
    fn incremental(
        &self,
        handles: &mut Handles,
        prepared: Prepared,
        change: &Change<'_>,
        record_text: String,
        described_now: bool,
    ) -> io::Result<Incremental> {
        let Prepared {
            mut index,
            existing,
        } = prepared;
        let (Some(index_file), Some((_, report)), Some(RowHandle { file: row_file, .. })) = (
            handles.index.as_ref(),
            handles.report.as_ref(),
            handles.row.as_ref(),
        ) else {
            return Ok(Incremental::Rebuild);
        };
        let info = change.info();
        // From here on the report may be half-patched until the index is saved clean again.
        write_at(index_file, 0, &[DIRTY])?;
        let is_new = existing.is_none();
        let mut state = match (change, existing) {
            (_, Some(state)) => state,
            (Change::Start { .. }, None) => match self.new_row_slot(&mut index, report, info)? {
                Some(state) => state,
                None => return Ok(Incremental::Rebuild),
            },
            (Change::Finish { .. }, None) => return Ok(Incremental::Rebuild),
        };
        state.described |= described_now;
        let mut row = state.take_row(info);
        match change {
            Change::Start {
                proc_id,
                seq,
                provisional,
                ..
            } => {
                row.add(provisional);
                index.totals.add(provisional);
                index.runs = index.runs.max(info.runs);
                let capacity = record_text.len() as u64 + RECORD_SLACK;
                let slot = self.append_record(&mut index, report, record_text, capacity)?;
                state.open.push(OpenRun {
                    proc: proc_id.to_string(),
                    seq: *seq,
                    slot,
                });
            }
            Change::Finish {
                proc_id,
                seq,
                record,
                ..
            } => {
                let Some(position) = state
                    .open
                    .iter()
                    .position(|open| open.proc == *proc_id && open.seq == *seq)
                else {
                    return Ok(Incremental::Rebuild);
                };
                let open = state.open.swap_remove(position);
                if record.is_retry() {
                    // A retry was counted once, as a retry, when it started; it stays that way.
                } else {
                    row.retract_provisional();
                    index.totals.retract_provisional();
                    row.add(record);
                    index.totals.add(record);
                }
                // The slot holds the provisional record and spaces: the record is padded over
                // the provisional one only, not over the whole slot.
                let provisional_len = open.slot.capacity.saturating_sub(RECORD_SLACK);
                let cover = provisional_len.max(record_text.len() as u64);
                if cover > open.slot.capacity {
                    return Ok(Incremental::Rebuild);
                }
                let Some(text) = padded(record_text, cover) else {
                    return Ok(Incremental::Rebuild);
                };
                write_at(report, open.slot.offset, text.as_bytes())?;
            }
        }
        row.settle(&self.stats);
        if is_new {
            if let Some(warning) = infeasible(info, &self.stats) {
                index.warnings.push(warning);
            }
        }
        index.row_changed((!is_new).then(|| state.counted()), &row, &self.stats);
        let tail = row.tail_json()?;
        let tail_slot = state.tail_slot();
        let Some(tail) = padded(tail, tail_slot.capacity) else {
            return Ok(Incremental::Rebuild);
        };
        let head = crate::format::report::head(
            index.runs,
            i32::from(index.failing_rows > 0),
            &index.totals,
            &index.aggregates(&self.stats),
            &index.warnings,
        )?;
        let Some(head) = padded(head, index.head.capacity) else {
            return Ok(Incremental::Rebuild);
        };
        write_at(report, tail_slot.offset, tail.as_bytes())?;
        write_at(report, index.head.offset, head.as_bytes())?;
        state.update(&row, &self.stats);
        // The files never shrink: what is left of an older, longer content is ignored.
        write_at(row_file, 0, &state.encode()?)?;
        write_at(index_file, 0, &index.encode()?)?;
        Ok(Incremental::Done)
    }

    /// Places a new row, with its case's fixed prefix, in the free space; `None` when there is
    /// no room left.
    fn new_row_slot(
        &self,
        index: &mut Index,
        report: &File,
        info: &CaseInfo,
    ) -> io::Result<Option<RowState>> {
        let prefix = info.row_prefix().map_err(io::Error::other)?;
        let tail = Row::new(info.clone()).tail_json()?;
        let capacity = row_capacity((prefix.len() + tail.len()) as u64);
        let separator = if index.row_count == 0 { "\n" } else { ",\n" };
        let offset = index.rows_free + separator.len() as u64;
        if offset + capacity > index.rows_end {
            return Ok(None);
        }
        write_at(
            report,
            index.rows_free,
            format!("{separator}{prefix}").as_bytes(),
        )?;
        index.rows_free = offset + capacity;
        index.row_count += 1;
        Ok(Some(RowState::new(
            info,
            Slot { offset, capacity },
            prefix.len() as u64,
        )))
    }

    /// Appends a record at the end of the records array and returns its slot.
    fn append_record(
        &self,
        index: &mut Index,
        report: &File,
        text: String,
        capacity: u64,
    ) -> io::Result<Slot> {
        let separator = if index.record_count == 0 { "\n" } else { ",\n" };
        let offset = index.records_end + separator.len() as u64;
        let mut bytes = String::with_capacity(separator.len() + capacity as usize + TAIL.len());
        bytes.push_str(separator);
        bytes.push_str(&text);
        let mut bytes = padded(bytes, separator.len() as u64 + capacity)
            .ok_or_else(|| io::Error::other("a record does not fit its own slot"))?;
        bytes.push_str(TAIL);
        write_at(report, index.records_end, bytes.as_bytes())?;
        index.records_end = offset + capacity;
        index.record_count += 1;
        index.file_len = index.records_end + TAIL.len() as u64;
        Ok(Slot { offset, capacity })
    }

    fn rebuild_locked(&self, handles: &mut Handles) -> io::Result<()> {
        let old: Option<Index> = fs::read(self.dir().join("index"))
            .ok()
            .and_then(|bytes| Index::decode(&bytes));
        let generation = old.as_ref().map_or(1, |index| index.generation + 1);
        let created = old
            .as_ref()
            .filter(|index| index.path == self.path_bytes())
            .map_or_else(rfc3339_now, |index| index.created.clone());
        let data = self.session.load()?;
        let described: std::collections::HashSet<(String, String, String)> = data
            .cases
            .iter()
            .map(|info| {
                let (package, module, case) = info.key();
                (package.to_string(), module.to_string(), case.to_string())
            })
            .collect();
        let paired = data.records.into_iter().zip(data.open).collect();
        let (report, open) = Report::build_with(data.cases, paired, &self.stats);

        let mut text = format!(
            "{{\"schema\":{SCHEMA_VERSION},\"tool\":\"probtest\",\"version\":{},\"created\":{},\"session\":{},\"stats_config\":{},\n",
            crate::format::escape::quoted(env!("CARGO_PKG_VERSION")),
            crate::format::escape::quoted(&created),
            crate::format::escape::quoted(self.session.key()),
            serde_json::to_string(&self.stats).map_err(io::Error::other)?,
        );
        let head = crate::format::report::head(
            report.runs,
            report.exit_status,
            &report.totals,
            &report.aggregates,
            &report.warnings,
        )?;
        let head_slot = Slot {
            offset: text.len() as u64,
            capacity: head.len() as u64 * 2 + 256,
        };
        text.push_str(&padded(head, head_slot.capacity).unwrap_or_default());
        text.push_str(",\n\"rows\":[");
        let rows_start = text.len() as u64;
        let mut states: Vec<RowState> = Vec::with_capacity(report.rows.len());
        for (position, row) in report.rows.iter().enumerate() {
            text.push_str(if position == 0 { "\n" } else { ",\n" });
            let prefix = row.info.row_prefix().map_err(io::Error::other)?;
            let tail = row.tail_json()?;
            let capacity = row_capacity((prefix.len() + tail.len()) as u64);
            let offset = text.len() as u64;
            let prefix_len = prefix.len() as u64;
            text.push_str(&padded(prefix + &tail, capacity).unwrap_or_default());
            let mut state = RowState::new(&row.info, Slot { offset, capacity }, prefix_len);
            state.update(row, &self.stats);
            let (package, module, case) = row.info.key();
            // A row of a case whose description was lost (a torn line) keeps asking for one.
            state.described =
                described.contains(&(package.to_string(), module.to_string(), case.to_string()));
            states.push(state);
        }
        let rows_free = text.len() as u64;
        let free = (rows_free - rows_start).max(MIN_ROWS_FREE);
        text.push_str(&" ".repeat(free as usize));
        let rows_end = text.len() as u64;
        text.push_str("\n],\"records\":[");
        for (position, (record, open)) in report.records.iter().zip(open).enumerate() {
            text.push_str(if position == 0 { "\n" } else { ",\n" });
            let record_text = crate::format::report::record(record)?;
            let offset = text.len() as u64;
            match open {
                Some((proc, seq)) => {
                    let capacity = record_text.len() as u64 + RECORD_SLACK;
                    text.push_str(&padded(record_text, capacity).unwrap_or_default());
                    if let Some(state) = states.iter_mut().find(|state| state.key() == record.key())
                    {
                        state.open.push(OpenRun {
                            proc,
                            seq,
                            slot: Slot { offset, capacity },
                        });
                    }
                }
                None => text.push_str(&record_text),
            }
        }
        let records_end = text.len() as u64;
        text.push_str(TAIL);

        write_atomically(&self.path, text.as_bytes())?;
        let rows_dir = self.dir().join(format!("rows-{generation}"));
        fs::create_dir_all(&rows_dir)?;
        for state in &states {
            fs::write(rows_dir.join(row_file_name(state.key())), state.encode()?)?;
        }
        let index = Index {
            path: self.path_bytes().to_vec(),
            generation,
            file_len: text.len() as u64,
            created,
            head: head_slot,
            rows_free,
            rows_end,
            row_count: report.rows.len() as u64,
            records_end,
            record_count: report.records.len() as u64,
            runs: report.runs,
            failing_rows: report
                .rows
                .iter()
                .filter(|row| row.fails_session(&self.stats))
                .count() as u64,
            functions: function_sums(&report.rows, &self.stats),
            warnings: report.warnings.clone(),
            totals: report.totals,
        };
        fs::write(self.dir().join("index"), index.encode()?)?;
        handles.index = None;
        handles.report = None;
        handles.row = None;
        // Row states of earlier generations describe a file that no longer exists.
        if let Ok(entries) = fs::read_dir(self.dir()) {
            for entry in entries.filter_map(Result::ok) {
                let name = entry.file_name().to_string_lossy().into_owned();
                let stale = name
                    .strip_prefix("rows-")
                    .and_then(|g| g.parse::<u64>().ok())
                    .is_some_and(|g| g != generation);
                if stale {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        Ok(())
    }
}

/// The sums behind each function's aggregates, as a rebuild finds them.
fn function_sums(rows: &[Row], config: &StatsConfig) -> Vec<FunctionSums> {
    let mut functions = Vec::new();
    for row in rows {
        functions_changed(&mut functions, None, row, config);
    }
    functions
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;
    use std::path::Path;

    use crate::format::store_lines::Line;
    use crate::model::record::died_record;
    use crate::model::tests::{info, record};
    use crate::model::Totals;
    use crate::store::tests::{start_line, temp_sessions};
    use crate::store::ProcessFile;
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
        Index::decode(&fs::read(report.dir().join("index")).expect("index")).expect("decodes")
    }

    fn read_report(path: &Path) -> Report {
        let text = fs::read_to_string(path).expect("report exists");
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("report is not valid JSON: {e}\n{text}"))
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
        let mut built_records: Vec<String> =
            built.records.iter().map(|r| format!("{r:?}")).collect();
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
                .map(|a| format!("{} {:.9?} {:?}", a.function, a.metrics, a.left_out))
                .collect();
            means.sort();
            means
        };
        assert_eq!(means(&kept), means(&built));
    }

    #[test]
    fn every_report_path_of_a_session_covers_the_whole_session_without_rebuilding() {
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
        // A run in flight shows in both reports.
        let open = a.start("classify::c", 1);
        for path in [&first, &second] {
            assert_matches_store(&session, path);
            let report = read_report(path);
            assert_eq!(report.records.len(), 13, "{}", path.display());
        }
        assert_eq!(read_report(&second).stats_config.min_rate, Some(0.5));
        assert_eq!(read_report(&first).stats_config.min_rate, None);
        // Built once each, at the path's first change; patched in place since.
        assert_eq!(index_of(&a.report).generation, 1);
        assert_eq!(index_of(&b.report).generation, 1);
        a.finish(open, record("classify::c", 1, Outcome::Pass, 0.0, vec![]));
        assert_matches_store(&session, &second);
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
            Some(crate::store::DIED_MESSAGE)
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
                let outcome = [Outcome::Pass, Outcome::Fail, Outcome::Pass, Outcome::Error]
                    [step as usize % 4];
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
}
