//! Rebuilding the report from the session store, in source order, with room to grow: what
//! happens when a change cannot be made in place, or the report and its files disagree.
//!
//! Layer: store.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::time::Duration;

use crate::format::report::{push_record, record_of, records_capacity, records_text, Identities};
use crate::model::aggregate::RowSums;
use crate::model::{Record, Report};
use crate::store::atomic::write_atomically;
use crate::store::live::file_io::{padded, row_file_name, row_slot};
use crate::store::live::state::{Index, OpenRun, RowState, Slot};
use crate::store::live::{Handles, ReportFile, RECORD_SLACK, TAIL};
use crate::store::session_dir::{note_store, SessionData};
use crate::types::key::CaseKey;
use crate::types::time::rfc3339_now;

/// What writing a rebuilt report takes besides the report.
struct Rebuilt {
    /// Each record's process and ticket, for a run still in flight.
    open: Vec<Option<(String, u64)>>,
    /// The cases the store describes (a row of any other keeps asking for a description), when
    /// the report is left patchable (else none).
    described: BTreeSet<CaseKey>,
    unrecorded: u64,
    patchable: Patchable,
}

/// Free space for new rows left by a rebuild, at least: room for a few cases (see
/// `ReportFile::room_for_rows`). JSON reads the spaces as whitespace.
const MIN_ROWS_FREE: u64 = 2 * 1024;

impl ReportFile {
    /// [`ReportFile::rebuild`], with the session's lock held, patchable in place after.
    pub(super) fn rebuild_locked(&self, handles: &mut Handles) -> io::Result<()> {
        let data = self.session.load()?;
        self.rebuild_locked_keeping(handles, data, Patchable::Yes).1
    }

    /// Rebuilds the report from `data`, everything the session recorded, with the session's
    /// lock held; gives back the report built from `data` whether or not the file took it: a
    /// process's summary shows it either way.
    pub(super) fn rebuild_locked_keeping(
        &self,
        handles: &mut Handles,
        data: SessionData,
        patchable: Patchable,
    ) -> (Report, io::Result<()>) {
        let described = match patchable {
            Patchable::Yes => data.cases.iter().map(|c| c.key().to_owned_key()).collect(),
            Patchable::No | Patchable::Final => BTreeSet::new(),
        };
        let unrecorded = data.unrecorded;
        let paired = data.records.into_iter().zip(data.open).collect();
        let (mut report, open) = Report::build_with(data.cases, paired, &self.stats);
        if patchable == Patchable::Final {
            // Every result is in, and nothing will patch the head after it.
            crate::store::baseline_file::analyze(&mut report);
        }
        note_store(&mut report, data.warnings, data.unrecorded);

        let written = self.write_rebuilt(
            handles,
            &report,
            Rebuilt {
                open,
                described,
                unrecorded,
                patchable,
            },
        );
        (report, written)
    }

    /// Writes the report `rebuild_locked_keeping` built, with what patching it needs.
    fn write_rebuilt(
        &self,
        handles: &mut Handles,
        report: &Report,
        rebuilt: Rebuilt,
    ) -> io::Result<()> {
        let patchable = rebuilt.patchable;
        // Only a report patched after is left room to grow and the state that patching reads;
        // a process that would patch another rebuilds it first.
        let patched = patchable == Patchable::Yes && !self.stream;
        // What a rebuild carries over, written before any change: a change that stopped halfway
        // leaves it readable.
        let old = fs::read(self.dir().join("index"))
            .ok()
            .and_then(|bytes| Index::decode(&bytes, true));
        let generation = old.as_ref().map_or(1, |index| index.generation + 1);
        let created = old.map_or_else(rfc3339_now, |index| index.created);
        let mut text = crate::format::report::header(&created, self.session.key(), &self.stats)?;
        // A final report is analysed: it carries the analysis' explanations too.
        let explained = (patchable == Patchable::Final)
            .then(|| crate::render::explained::explanations(report))
            .flatten();
        let head = crate::format::report::head(
            report.runs,
            report.exit_status,
            &report.totals,
            &report.aggregates,
            explained.as_ref(),
            &crate::format::report::analysis(
                report,
                patchable == Patchable::Final,
                explained.as_ref(),
            )?,
            &report.warnings,
        )?;
        let head_slot = Slot {
            offset: text.len() as u64,
            capacity: if patched {
                head.len() as u64 * 2 + 256
            } else {
                head.len() as u64
            },
        };
        text.push_str(&padded(head, head_slot.capacity).unwrap_or_default());
        text.push_str(",\n\"rows\":[");
        let rows_start = text.len() as u64;
        let mut states: Vec<RowState> = Vec::new();
        for (position, row) in report.rows.iter().enumerate() {
            text.push_str(if position == 0 { "\n" } else { ",\n" });
            let prefix = row.info.row_prefix()?;
            let texts = explained.as_ref().and_then(|e| e.rows.get(position));
            let tail = row.tail_json_explained(texts)?;
            if !patched {
                text.push_str(&prefix);
                text.push_str(&tail);
            } else {
                let (capacity, tail_slot) = row_slot(text.len() as u64, prefix.len(), tail.len());
                text.push_str(&padded(prefix + &tail, capacity).unwrap_or_default());
                let mut state = RowState::new(&row.info, tail_slot);
                state.update(row, &self.stats);
                // A row of a case whose description was lost (a torn line) keeps asking for one.
                state.described = rebuilt.described.contains(&row.info.key().to_owned_key());
                states.push(state);
            }
        }
        let rows_free = text.len() as u64;
        if patched {
            let free = self.room_for_rows(rows_free - rows_start, report.rows.len());
            text.push_str(&" ".repeat(free as usize));
        }
        let rows_end = text.len() as u64;
        text.push_str("\n],\"records\":[");
        if !patched || rebuilt.open.iter().all(Option::is_none) {
            // No record is patched later: none needs its place noted.
            text.push_str(&closed_records_text(&report.records)?);
        } else {
            text.reserve(records_capacity(report.records.len()));
            let mut identities = Identities::default();
            for (position, (record, open)) in report.records.iter().zip(rebuilt.open).enumerate() {
                text.push_str(if position == 0 { "\n" } else { ",\n" });
                let fields = identities.of(record);
                let offset = text.len() as u64;
                match open {
                    Some((proc, seq)) => {
                        let record_text = record_of(fields, record)?;
                        let capacity = record_text.len() as u64 + RECORD_SLACK;
                        text.push_str(&padded(record_text, capacity).unwrap_or_default());
                        if let Some(state) =
                            states.iter_mut().find(|state| state.key() == record.key())
                        {
                            state.open.push(OpenRun {
                                proc,
                                seq,
                                slot: Slot { offset, capacity },
                            });
                        }
                    }
                    None => push_record(&mut text, fields, record)?,
                }
            }
        }
        let records_end = text.len() as u64;
        text.push_str(TAIL);

        self.write_whole(text.as_bytes())?;
        fs::create_dir_all(self.dir())?;
        let index = if patched {
            let rows_dir = self.dir().join(format!("rows-{generation}"));
            fs::create_dir_all(&rows_dir)?;
            for state in &states {
                fs::write(rows_dir.join(row_file_name(state.key())), state.encode()?)?;
            }
            Index {
                generation,
                file_len: text.len() as u64,
                created,
                head: head_slot,
                rows_free,
                rows_end,
                row_count: report.rows.len() as u64,
                records_end,
                record_count: report.records.len() as u64,
                totals: report.totals.clone(),
                sums: RowSums {
                    // The report's warnings, the store's among them, stay in the patched head.
                    warnings: report.warnings.clone(),
                    ..RowSums::of_rows(&report.rows, &self.stats)
                },
                unrecorded: rebuilt.unrecorded,
            }
        } else {
            // What the next rebuild carries over, in an index that describes no file: a process
            // that would patch the report rebuilds it first.
            Index {
                generation,
                file_len: u64::MAX,
                created,
                ..Index::default()
            }
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

/// Records from this many on are formatted on two threads.
const PARALLEL_RECORDS: usize = 1_000;

/// The text of `records`, none of them open, one per line: formatting them is most of what
/// writing a large report costs in a test binary built without optimizations, and at exit the
/// process's other threads are done, so the second half is formatted on a thread of its own.
fn closed_records_text(records: &[Record]) -> io::Result<String> {
    if records.len() < PARALLEL_RECORDS {
        return records_text(records, true);
    }
    let (first, second) = records.split_at(records.len() / 2);
    std::thread::scope(|scope| {
        let later = std::thread::Builder::new()
            .name("probtest-records".into())
            .spawn_scoped(scope, || records_text(second, false));
        let earlier = records_text(first, true)?;
        let later = match later {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("formatting the records panicked")))?,
            Err(_) => records_text(second, false)?,
        };
        Ok(earlier + &later)
    })
}

/// How long after a report could not be written for want of room no process tries again: each
/// try writes the whole report, and under nextest every process would.
const FULL_BACKOFF: Duration = Duration::from_secs(10);

impl ReportFile {
    /// Writes the whole report; on a full disk, notes the failure so that the session's
    /// processes do not each try again for [`FULL_BACKOFF`], and fail at once instead.
    fn write_whole(&self, bytes: &[u8]) -> io::Result<()> {
        let marker = self.dir().join("full");
        if let Ok(modified) = fs::metadata(&marker).and_then(|meta| meta.modified()) {
            let age = modified.elapsed().unwrap_or_default();
            if age < FULL_BACKOFF {
                let why = fs::read_to_string(&marker).unwrap_or_default();
                return Err(io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!(
                        "{}: not written, no room a moment ago ({}); retried after {} s",
                        self.path.display(),
                        why.trim(),
                        FULL_BACKOFF.as_secs()
                    ),
                ));
            }
        }
        match write_atomically(&self.path, bytes) {
            Ok(()) => {
                let _ = fs::remove_file(&marker);
                Ok(())
            }
            Err(error) => {
                let error = crate::store::in_file(&self.path, error);
                if error.kind() == io::ErrorKind::StorageFull {
                    // On the disk of the session's state, which may have room.
                    let _ = fs::create_dir_all(self.dir())
                        .and_then(|()| fs::write(&marker, error.to_string()));
                }
                Err(error)
            }
        }
    }

    /// Free space for new rows, after `rows` rows taking `used` bytes: as much as they take (so
    /// that it doubles when it runs out, and rebuilds stay logarithmic in the number of cases),
    /// room for the cases this process knows of that have no row yet, and a few rows at least.
    fn room_for_rows(&self, used: u64, rows: usize) -> u64 {
        let per_row = if rows == 0 { 512 } else { used / rows as u64 };
        let missing = ((self.expected_rows)() as u64).saturating_sub(rows as u64);
        used.max(missing * per_row).max(MIN_ROWS_FREE)
    }
}

/// Whether a rebuild leaves what patching the report in place needs: a row state file per row.
/// A process of one run (nextest's) patches the report it rebuilt; a process of many folds its
/// runs in batches and never patches, and writing a file per row at every folding would cost
/// more than the folding's reading and writing of the report itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Patchable {
    Yes,
    No,
    /// Not patched, and the process's last fold: the report gets the session's analysis.
    Final,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::record;
    use crate::types::status::Outcome;

    #[test]
    fn records_formatted_on_two_threads_read_as_on_one() {
        let records: Vec<Record> = (0..PARALLEL_RECORDS as u32 + 7)
            .map(|run| {
                let case = if run % 3 == 0 {
                    "triage::a"
                } else {
                    "triage::b"
                };
                let outcome = if run % 5 == 0 {
                    Outcome::Fail
                } else {
                    Outcome::Pass
                };
                record(case, run + 1, outcome, f64::from(run) / 7.0, Vec::new())
            })
            .collect();
        let parallel = closed_records_text(&records).expect("formatted");
        assert_eq!(parallel, records_text(&records, true).expect("formatted"));
        let array: serde_json::Value =
            serde_json::from_str(&format!("[{parallel}]")).expect("a JSON array");
        assert_eq!(array.as_array().map(Vec::len), Some(records.len()));
    }
}
