//! The session report's bookkeeping files, the index and one state file per row, in a compact
//! binary layout.
//!
//! Both are read and rewritten at every run's start and end; under nextest that is twice per
//! process. Tests run in unoptimized builds, where encoding these through a generic serializer
//! took longer than the test itself, so the numbers go in as fixed-width little-endian fields
//! and only the parts that are rarely set (token usage, metric sums, warnings) as JSON, and only
//! when present.
//!
//! A file is `[flag][magic][payload length][payload]`. The flag byte is `C` when the index
//! describes the report as it is on disk, `D` while a change is being made; the magic names
//! the layout, so a file from another version is rebuilt, never misread.

use std::io;

use serde::{Deserialize, Serialize};

use crate::model::aggregate::RowSums;
use crate::model::{CaseInfo, Totals};
use crate::types::key::CaseKey;
use crate::types::ordered_map::OrderedMap;
use crate::types::usage::UsageTotals;

const INDEX_MAGIC: &[u8; 4] = b"PTI4";
const ROW_MAGIC: &[u8; 4] = b"PTR3";
/// The flag of a file whose content is complete and matches the report.
pub(crate) const CLEAN: u8 = b'C';
/// The flag written before a change touches the report.
pub(crate) const DIRTY: u8 = b'D';

/// A region of the report file that can be rewritten in place.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Slot {
    pub(crate) offset: u64,
    pub(crate) capacity: u64,
}

/// Where everything is in the report file, and the running totals. The report path it
/// describes names its directory (see `file_io::hex_hash`).
#[derive(Debug, Default)]
pub(crate) struct Index {
    pub(crate) generation: u64,
    pub(crate) file_len: u64,
    pub(crate) created: String,
    pub(crate) head: Slot,
    pub(crate) rows_free: u64,
    pub(crate) rows_end: u64,
    pub(crate) row_count: u64,
    pub(crate) records_end: u64,
    pub(crate) record_count: u64,
    pub(crate) totals: Totals,
    /// What the rows add up to, kept by the step `Report::build` takes for each row.
    pub(crate) sums: RowSums,
    /// Runs the session could not record (see `store::unrecorded`), which fail it too.
    pub(crate) unrecorded: u64,
}

/// A row's place in the report and its counts: everything about a row that is not its case's
/// description, which the process making a change already has.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RowState {
    /// The case's key, to tell a hash collision from the right file.
    pub(crate) package: String,
    pub(crate) module: String,
    pub(crate) case: String,
    /// The slot of the row's tail, after its case's fixed prefix (see `CaseInfo::row_prefix`):
    /// the tail is all of a row that changes.
    pub(crate) tail: Slot,
    pub(crate) passes: u64,
    pub(crate) fails: u64,
    pub(crate) errors: u64,
    pub(crate) total: u64,
    pub(crate) cost: f64,
    pub(crate) usage: OrderedMap<UsageTotals>,
    /// What the row counts for in the index, to take back when it changes: whether it fails
    /// the session, and its metrics.
    pub(crate) fails_session: bool,
    pub(crate) metrics: OrderedMap<f64>,
    /// Whether the session store describes the case, so that processes running it need not.
    pub(crate) described: bool,
    /// Runs in flight: their provisional records' slots.
    pub(crate) open: Vec<OpenRun>,
}

/// A provisional record waiting for its run to finish.
#[derive(Debug, PartialEq)]
pub(crate) struct OpenRun {
    pub(crate) proc: String,
    pub(crate) seq: u64,
    pub(crate) slot: Slot,
}

impl RowState {
    /// The state of a row of `info` with no runs, its tail at `tail`, not yet known to be
    /// described.
    pub(crate) fn new(info: &CaseInfo, tail: Slot) -> RowState {
        RowState {
            package: info.package.clone(),
            module: info.module.clone(),
            case: info.case.clone(),
            tail,
            ..RowState::default()
        }
    }

    pub(crate) fn key(&self) -> CaseKey<&str> {
        CaseKey::new(&self.package, &self.module, &self.case)
    }
}

/// Appends fixed-width fields and length-prefixed byte strings.
struct Encoder(Vec<u8>);

impl Encoder {
    fn new(magic: &[u8; 4]) -> Encoder {
        let mut bytes = Vec::with_capacity(256);
        bytes.push(CLEAN);
        bytes.extend_from_slice(magic);
        // The payload's length, filled in by `finish`.
        bytes.extend_from_slice(&[0; 4]);
        Encoder(bytes)
    }

    fn u64(&mut self, value: u64) -> &mut Encoder {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }

    fn f64(&mut self, value: f64) -> &mut Encoder {
        self.u64(value.to_bits())
    }

    fn bytes(&mut self, value: &[u8]) -> &mut Encoder {
        self.u64(value.len() as u64);
        self.0.extend_from_slice(value);
        self
    }

    fn slot(&mut self, slot: Slot) -> &mut Encoder {
        self.u64(slot.offset).u64(slot.capacity)
    }

    /// A value that is usually empty, as JSON only when it is not.
    fn json<T: Serialize>(&mut self, value: &T, empty: bool) -> io::Result<&mut Encoder> {
        if empty {
            return Ok(self.bytes(b""));
        }
        let json = serde_json::to_vec(value).map_err(io::Error::other)?;
        Ok(self.bytes(&json))
    }

    fn finish(mut self) -> Vec<u8> {
        let length = (self.0.len() - 9) as u32;
        self.0[5..9].copy_from_slice(&length.to_le_bytes());
        self.0
    }
}

/// Reads what [`Encoder`] wrote; every read is `None` past the end.
struct Decoder<'a>(&'a [u8]);

impl<'a> Decoder<'a> {
    /// The payload of a file with `magic`, clean unless `dirty_too`, ignoring anything after
    /// it (a file is rewritten in place and never shrinks).
    fn open(file: &'a [u8], magic: &[u8; 4], dirty_too: bool) -> Option<Decoder<'a>> {
        let (&flag, rest) = file.split_first()?;
        if (flag != CLEAN && !dirty_too) || rest.get(..4)? != magic {
            return None;
        }
        let length = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
        Some(Decoder(rest.get(8..8 + length)?))
    }

    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_first_chunk::<8>()?;
        self.0 = rest;
        Some(u64::from_le_bytes(*head))
    }

    fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let length = usize::try_from(self.u64()?).ok()?;
        let (head, rest) = (self.0.get(..length)?, self.0.get(length..)?);
        self.0 = rest;
        Some(head)
    }

    fn string(&mut self) -> Option<String> {
        self.bytes()
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .map(str::to_string)
    }

    fn slot(&mut self) -> Option<Slot> {
        Some(Slot {
            offset: self.u64()?,
            capacity: self.u64()?,
        })
    }

    /// A value [`Encoder::json`] wrote: the default when it was empty.
    fn json<T: Default + for<'de> Deserialize<'de>>(&mut self) -> Option<T> {
        let bytes = self.bytes()?;
        if bytes.is_empty() {
            return Some(T::default());
        }
        serde_json::from_slice(bytes).ok()
    }
}

impl Index {
    pub(crate) fn encode(&self) -> io::Result<Vec<u8>> {
        let totals = &self.totals;
        let mut encoder = Encoder::new(INDEX_MAGIC);
        encoder
            .u64(self.generation)
            .u64(self.file_len)
            .bytes(self.created.as_bytes())
            .slot(self.head)
            .u64(self.rows_free)
            .u64(self.rows_end)
            .u64(self.row_count)
            .u64(self.records_end)
            .u64(self.record_count)
            .u64(u64::from(self.sums.runs))
            .u64(totals.passes)
            .u64(totals.fails)
            .u64(totals.errors)
            .u64(totals.count)
            .f64(totals.pass_rate)
            .f64(totals.cost)
            .u64(totals.retries)
            .u64(self.sums.failing_rows)
            .u64(self.unrecorded)
            .json(&totals.usage, totals.usage.is_empty())?
            .json(&self.sums.functions, self.sums.functions.is_empty())?
            .json(&self.sums.warnings, self.sums.warnings.is_empty())?;
        Ok(encoder.finish())
    }

    /// The index in `file`, when it is of this layout and clean, or `dirty_too`: what a
    /// rebuild carries over from it, its generation and creation time, is written before any
    /// change, so that an index a change left halfway still gives it.
    pub(crate) fn decode(file: &[u8], dirty_too: bool) -> Option<Index> {
        let mut d = Decoder::open(file, INDEX_MAGIC, dirty_too)?;
        let mut index = Index {
            generation: d.u64()?,
            file_len: d.u64()?,
            created: d.string()?,
            head: d.slot()?,
            rows_free: d.u64()?,
            rows_end: d.u64()?,
            row_count: d.u64()?,
            records_end: d.u64()?,
            record_count: d.u64()?,
            ..Index::default()
        };
        index.sums.runs = u32::try_from(d.u64()?).ok()?;
        index.totals = Totals {
            passes: d.u64()?,
            fails: d.u64()?,
            errors: d.u64()?,
            count: d.u64()?,
            pass_rate: d.f64()?,
            cost: d.f64()?,
            retries: d.u64()?,
            usage: OrderedMap::default(),
            not_run: 0,
        };
        index.sums.failing_rows = d.u64()?;
        index.unrecorded = d.u64()?;
        index.totals.usage = d.json()?;
        index.sums.functions = d.json()?;
        index.sums.warnings = d.json()?;
        Some(index)
    }
}

impl RowState {
    pub(crate) fn encode(&self) -> io::Result<Vec<u8>> {
        let mut encoder = Encoder::new(ROW_MAGIC);
        encoder
            .bytes(self.package.as_bytes())
            .bytes(self.module.as_bytes())
            .bytes(self.case.as_bytes())
            .slot(self.tail)
            .u64(self.passes)
            .u64(self.fails)
            .u64(self.errors)
            .u64(self.total)
            .f64(self.cost)
            .json(&self.usage, self.usage.is_empty())?
            .u64(u64::from(self.fails_session))
            .json(&self.metrics, self.metrics.is_empty())?
            .u64(u64::from(self.described))
            .u64(self.open.len() as u64);
        for open in &self.open {
            encoder
                .bytes(open.proc.as_bytes())
                .u64(open.seq)
                .slot(open.slot);
        }
        Ok(encoder.finish())
    }

    /// The row state in `file`, when it is clean and of this layout.
    pub(crate) fn decode(file: &[u8]) -> Option<RowState> {
        let mut d = Decoder::open(file, ROW_MAGIC, false)?;
        let mut state = RowState {
            package: d.string()?,
            module: d.string()?,
            case: d.string()?,
            tail: d.slot()?,
            passes: d.u64()?,
            fails: d.u64()?,
            errors: d.u64()?,
            total: d.u64()?,
            cost: d.f64()?,
            usage: d.json()?,
            fails_session: d.u64()? != 0,
            metrics: d.json()?,
            described: d.u64()? != 0,
            open: Vec::new(),
        };
        let open = d.u64()?;
        for _ in 0..open {
            state.open.push(OpenRun {
                proc: d.string()?,
                seq: d.u64()?,
                slot: d.slot()?,
            });
        }
        Some(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::aggregate::FunctionSums;

    fn usage() -> OrderedMap<UsageTotals> {
        OrderedMap(vec![(
            "model \"x\"".to_string(),
            UsageTotals {
                input_tokens: 3,
                output_tokens: 4,
                cached_input_tokens: 1,
                cost: 0.125,
            },
        )])
    }

    #[test]
    fn an_index_reads_back_as_written() {
        let index = Index {
            generation: 3,
            file_len: 9000,
            created: "2026-11-29T12:00:00Z".into(),
            head: Slot {
                offset: 10,
                capacity: 500,
            },
            rows_free: 700,
            rows_end: 800,
            row_count: 2,
            records_end: 8990,
            record_count: 17,
            totals: Totals {
                passes: 12,
                fails: 3,
                errors: 2,
                count: 17,
                pass_rate: 100.0 * 12.0 / 17.0,
                cost: 0.3,
                usage: usage(),
                retries: 1,
                not_run: 0,
            },
            sums: RowSums {
                runs: 10,
                failing_rows: 1,
                functions: vec![FunctionSums {
                    function: "f".into(),
                    module: "m".into(),
                    cases: 2,
                    sums: vec![1.5],
                    counts: vec![2],
                }],
                warnings: vec!["a warning".into()],
            },
            unrecorded: 2,
        };
        let bytes = index.encode().expect("encodes");
        let back = Index::decode(&bytes, false).expect("decodes");
        assert_eq!(back.encode().expect("encodes"), bytes);
        assert_eq!(back.totals, index.totals);
        assert_eq!(back.sums, index.sums);
        // Trailing bytes of an older, longer content are ignored.
        let mut longer = bytes.clone();
        longer.extend_from_slice(b"     stale");
        assert!(Index::decode(&longer, false).is_some());
        // A change that stopped halfway leaves it dirty: only a rebuild reads it then.
        longer[0] = DIRTY;
        assert!(Index::decode(&longer, false).is_none());
        assert_eq!(
            Index::decode(&longer, true).map(|index| index.generation),
            Some(3)
        );
    }

    #[test]
    fn a_row_state_reads_back_as_written() {
        let state = RowState {
            package: "pkg".into(),
            module: "tests::evals".into(),
            case: "f::a".into(),
            tail: Slot {
                offset: 280,
                capacity: 220,
            },
            passes: 4,
            fails: 1,
            errors: 0,
            total: 5,
            cost: 0.5,
            usage: usage(),
            fails_session: true,
            metrics: OrderedMap(vec![("pass^2".into(), 0.5)]),
            described: true,
            open: vec![OpenRun {
                proc: "12-34".into(),
                seq: 7,
                slot: Slot {
                    offset: 5000,
                    capacity: 2300,
                },
            }],
        };
        let bytes = state.encode().expect("encodes");
        assert_eq!(RowState::decode(&bytes), Some(state));
    }

    #[test]
    fn dirty_truncated_or_foreign_files_do_not_decode() {
        let bytes = RowState::default().encode().expect("encodes");
        let mut dirty = bytes.clone();
        dirty[0] = DIRTY;
        assert_eq!(RowState::decode(&dirty), None);
        assert_eq!(RowState::decode(&bytes[..bytes.len() - 1]), None);
        assert!(
            Index::decode(&bytes, true).is_none(),
            "a row state is not an index"
        );
        assert!(Index::decode(b"C{\"path\":\"x\"}", true).is_none());
        assert!(Index::decode(b"", true).is_none());
    }
}
