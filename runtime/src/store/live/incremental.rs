//! Applying a change to the report in place: the index and the row state read under the lock,
//! the row's tail, the head and the run's record patched in their slots, and the running
//! totals and function sums kept in step with the rows.
//!
//! Layer: store.

use std::fs::{File, OpenOptions};
use std::io;

use crate::model::aggregate::Counted;
use crate::model::{CaseInfo, Row};
use crate::store::live::file_io::{padded, read_all, row_file_name, row_slot, write_at};
use crate::store::live::state::{Index, OpenRun, RowState, Slot, DIRTY};
use crate::store::live::{Change, Handles, ReportFile, RowHandle, RECORD_SLACK, TAIL};
use crate::types::stats::StatsConfig;

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
    pub(super) fn update(&mut self, row: &Row, config: &StatsConfig) {
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

/// What a change needs to be made in place, read under the lock before the change is persisted.
pub(super) struct Prepared {
    index: Index,
    /// The row's state; `None` for a case the report has no row for yet.
    pub(super) existing: Option<RowState>,
}

/// Whether a change was made in place, or the report must be rebuilt from the store.
pub(super) enum Incremental {
    Done,
    Rebuild,
}

impl ReportFile {
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
        let index = Index::decode(&read_all(handles.index.as_ref()?).ok()?, false)?;
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
    pub(super) fn prepare(&self, handles: &mut Handles, change: &Change<'_>) -> Option<Prepared> {
        // A stopped run changes the session's `stopping` and its row's `stopped`, which the
        // running sums do not keep: with PROB_STOP set the report is rebuilt at each change.
        if !self.stats.stop.is_off() {
            return None;
        }
        // A latency quantile needs every run time of its case, which the running sums do not
        // keep either: a case whose attribute sets one, or every case under PROB_LATENCY=1,
        // rebuilds the report at each of its changes.
        if self.stats.latency || change.info().latency.is_some() {
            return None;
        }
        let index = self.load_index(handles)?;
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
                    .open(path)
                    .ok()?;
                RowHandle {
                    generation,
                    key: key.to_owned_key(),
                    file,
                }
            }
        };
        let row_file = &handles.row.insert(row).file;
        let row_bytes = read_all(row_file).ok()?;
        let existing = if row_bytes.is_empty() {
            None
        } else {
            // A row state of another case (its name's hash collided) is not misread.
            Some(RowState::decode(&row_bytes).filter(|state| state.key() == key)?)
        };
        Some(Prepared { index, existing })
    }

    /// Applies `change` in place; `record_text` is the JSON of its record, and `described_now`
    /// whether persisting the change described its case to the store.
    pub(super) fn incremental(
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
                let last = open.slot.offset + open.slot.capacity == index.records_end;
                if cover > open.slot.capacity && !last {
                    return Ok(Incremental::Rebuild);
                }
                if last {
                    // The last record: its slot's room for a longer record is given back, so
                    // that a session whose runs end in the order they start leaves no spaces
                    // but the few after the end, which the next record's slot takes. The file
                    // keeps its length (spaces after the report are whitespace): truncating it
                    // costs a run more than the bytes saved.
                    let end = open.slot.offset + record_text.len() as u64;
                    let mut text = record_text;
                    text.push_str(TAIL);
                    let to_end = (index.file_len - open.slot.offset).max(text.len() as u64);
                    let Some(text) = padded(text, to_end) else {
                        return Ok(Incremental::Rebuild);
                    };
                    write_at(report, open.slot.offset, text.as_bytes())?;
                    index.records_end = end;
                    index.file_len = open.slot.offset + to_end;
                } else {
                    let Some(text) = padded(record_text, cover) else {
                        return Ok(Incremental::Rebuild);
                    };
                    write_at(report, open.slot.offset, text.as_bytes())?;
                }
            }
        }
        row.settle(&self.stats);
        index
            .sums
            .row_changed((!is_new).then(|| state.counted()), &row, &self.stats);
        let tail = row.tail_json()?;
        let tail_slot = state.tail;
        let Some(tail) = padded(tail, tail_slot.capacity) else {
            return Ok(Incremental::Rebuild);
        };
        let head = crate::format::report::head(
            index.sums.runs,
            index
                .sums
                .exit_status()
                .max(i32::from(index.unrecorded > 0)),
            &index.totals,
            &index.sums.aggregates(&self.stats),
            None,
            "",
            &index.sums.warnings,
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
        let prefix = info.row_prefix()?;
        let tail = Row::new(info.clone()).tail_json()?;
        let separator = if index.row_count == 0 { "\n" } else { ",\n" };
        let offset = index.rows_free + separator.len() as u64;
        let (capacity, tail) = row_slot(offset, prefix.len(), tail.len());
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
        Ok(Some(RowState::new(info, tail)))
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
        // A file whose last record gave back its room is longer than its content: spaces.
        index.file_len = index.file_len.max(index.records_end + TAIL.len() as u64);
        Ok(Slot { offset, capacity })
    }
}
