//! A process's runs as fixed-size slots of a memory-mapped file, `procs/<proc>.slots` in the
//! session directory: how a process that runs many runs (libtest's) records each start and
//! end without a system call or any text to format.
//!
//! A run's start writes its slot (its case, run number and attempt) and marks it started; its
//! end writes the outcome, time and cost and marks it finished. The marks are written last,
//! with release ordering, so a slot marked finished has every field. The pages belong to the
//! file, so the kernel keeps them when the process dies: a slot marked started and never
//! finished is a run whose process died, an error when the session is read, never a pass and
//! never missing. A run's text (its message, location and usage) is not in a slot: such a run
//! also writes its end line to the session's log, which the reader prefers.
//!
//! Layout, little-endian: a 64-byte header (`PTS1`, then at 8 the number of slots given disk
//! space, past every slot in use: raised a chunk at a time, not at each run, whose threads
//! would all write the one word), then [`SLOT`]-byte slots, slot `n` for the process's run `n`:
//!
//! ```text
//! 0  case ref (u32)   the case's `ref` in this process's case lines
//! 4  run (u32)        8  attempt (u32)
//! 12 outcome (u8)     0 pass, 1 fail, 2 error, 3 stopped
//! 15 mark (u8)        0 empty, 1 started, 2 finished
//! 16 elapsed (f64)    24 cost (f64)
//! ```
//!
//! While a run is started and not finished, its elapsed field holds when it started (seconds
//! since its process's first run), for that process's own account of a run that never finishes;
//! readers take nothing from a started slot's numbers.
//!
//! The file is sparse: [`CAPACITY`] slots of address space, disk only for the pages written.
//! A process with more runs records the rest as log lines.
//!
//! Layer: store.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;

use memmap2::{MmapOptions, MmapRaw};

use crate::types::status::Outcome;

/// Bytes per slot.
pub(crate) const SLOT: usize = 32;
/// Bytes of the header.
const HEADER: usize = 64;
/// Slots a file has room for: 512 Ki runs in 16 MiB of address space.
pub(crate) const CAPACITY: u64 = 512 * 1024;
/// Bytes of the file, all mapped.
const MAPPED: usize = HEADER + CAPACITY as usize * SLOT;
const MAGIC: &[u8; 4] = b"PTS1";
/// Slots given disk space at a time, ahead of their use (32 KiB).
const CHUNK: u64 = 1024;
const STARTED: u8 = 1;
const FINISHED: u8 = 2;

/// The directory of a session's slot files.
pub(crate) fn procs_dir(session_dir: &Path) -> PathBuf {
    session_dir.join("procs")
}

/// This process's slot file, mapped.
///
/// A page of a sparse file is given disk space when it is first written; written through a
/// mapping on a full disk, the process gets SIGBUS and dies. So slots are given their space
/// ahead, a chunk at a time, by writing zeros through the file, where a full disk is an error
/// that a run can report.
pub(crate) struct SlotFile {
    map: MmapRaw,
    file: File,
    path: PathBuf,
    /// Slots that have their disk space.
    allocated: AtomicU64,
    growing: Mutex<()>,
}

impl SlotFile {
    /// Creates `procs/<proc>.slots` in the session directory and maps it.
    pub(crate) fn create(session_dir: &Path, proc: &str) -> io::Result<SlotFile> {
        let dir = procs_dir(session_dir);
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{proc}.slots"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let len = MAPPED;
        let mut first = vec![0u8; HEADER + CHUNK as usize * SLOT];
        first[..MAGIC.len()].copy_from_slice(MAGIC);
        first[8..16].copy_from_slice(&CHUNK.to_le_bytes());
        let mapped = write_at(&file, 0, &first)
            .and_then(|()| file.set_len(len as u64))
            .and_then(|()| MmapOptions::new().len(len).map_raw(&file));
        match mapped {
            Ok(map) => Ok(SlotFile {
                map,
                file,
                path,
                allocated: AtomicU64::new(CHUNK),
                growing: Mutex::new(()),
            }),
            Err(error) => {
                // A file system that cannot map it, or no room: the process writes log lines
                // instead, and leaves no slot file behind for readers to stumble on.
                let _ = fs::remove_file(&path);
                Err(error)
            }
        }
    }

    /// Gives slot `seq` its disk space, and the rest of its chunk.
    fn reserve(&self, seq: u64) -> io::Result<()> {
        if seq < self.allocated.load(Ordering::Acquire) {
            return Ok(());
        }
        let _growing = self
            .growing
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let have = self.allocated.load(Ordering::Acquire);
        if seq < have {
            return Ok(());
        }
        let want = ((seq / CHUNK + 1) * CHUNK).min(CAPACITY);
        // Slots past `have` are unused: no run writes them through the mapping meanwhile.
        let zeros = vec![0u8; ((want - have) as usize) * SLOT];
        write_at(&self.file, (HEADER + have as usize * SLOT) as u64, &zeros)?;
        self.allocated.store(want, Ordering::Release);
        // Readers read this far: every slot a run may start from now on.
        self.in_use().store(want, Ordering::Release);
        Ok(())
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether slot `seq` exists.
    pub(crate) fn has_room(&self, seq: u64) -> bool {
        seq < CAPACITY
    }

    /// The first byte of slot `seq` in the mapping.
    fn slot(&self, seq: u64) -> *mut u8 {
        let offset = HEADER + seq as usize * SLOT;
        // The mapping is `MAPPED` bytes long (see `create`); the constant, not `self.map.len()`,
        // which is two calls deep in a test binary built without optimizations.
        assert!(offset + SLOT <= MAPPED, "a slot inside the map");
        // SAFETY: the slot lies inside the mapping (checked above).
        #[allow(unsafe_code)]
        unsafe {
            self.map.as_mut_ptr().add(offset)
        }
    }

    /// The header's count of slots in use, as an atomic.
    fn in_use(&self) -> &AtomicU64 {
        // SAFETY: offset 8 of the page-aligned mapping is inside it and 8-byte aligned;
        // `AtomicU64` has the layout of `u64`, and the field is only ever accessed atomically.
        #[allow(unsafe_code)]
        unsafe {
            &*self.map.as_mut_ptr().add(8).cast::<AtomicU64>()
        }
    }

    /// Records the start of run `seq` of the case `case_ref`, `started_at` seconds after its
    /// process's first run; an error when its slot cannot be given disk space.
    pub(crate) fn start(
        &self,
        seq: u64,
        case_ref: u32,
        run: u32,
        attempt: u32,
        started_at: f64,
    ) -> io::Result<()> {
        self.reserve(seq)?;
        let slot = self.slot(seq);
        // SAFETY: `slot` is the first byte of a whole slot inside the mapping, which lives as
        // long as `self`; this process created the file and no one truncates it. A slot's bytes
        // are written by the one run that owns it, before its mark is released, so no two
        // threads write the same bytes at once; readers in other processes read the file. The
        // mark (byte 15) is only ever accessed atomically, and `AtomicU8` has the layout of
        // `u8`. The mapping is page-aligned and a slot 32 bytes, so every field is aligned.
        // Writes are spelled as plain stores, no helpers: this runs at every run, in test
        // binaries built without optimizations.
        #[allow(unsafe_code)]
        unsafe {
            *slot.cast::<u32>() = case_ref.to_le();
            *slot.add(4).cast::<u32>() = run.to_le();
            *slot.add(8).cast::<u32>() = attempt.to_le();
            *slot.add(16).cast::<u64>() = started_at.to_bits().to_le();
            (*slot.add(15).cast::<AtomicU8>()).store(STARTED, Ordering::Release);
        }
        Ok(())
    }

    /// Records the end of run `seq`.
    pub(crate) fn finish(&self, seq: u64, outcome: Outcome, elapsed: f64, cost: f64) {
        let slot = self.slot(seq);
        // SAFETY: as in `start`.
        #[allow(unsafe_code)]
        unsafe {
            *slot.add(12) = outcome_byte(outcome);
            *slot.add(16).cast::<u64>() = elapsed.to_bits().to_le();
            *slot.add(24).cast::<u64>() = cost.to_bits().to_le();
            (*slot.add(15).cast::<AtomicU8>()).store(FINISHED, Ordering::Release);
        }
    }
}

impl SlotFile {
    /// This process's slots of its first `issued` runs, read back from its own mapping: each
    /// with the number in its elapsed field, which for a run not finished is when it started
    /// (see [`SlotFile::start`]).
    pub(crate) fn read_own(&self, issued: u64) -> Vec<(ReadSlot, f64)> {
        let in_use = self
            .in_use()
            .load(Ordering::Acquire)
            .min(issued)
            .min(CAPACITY);
        let mut slots = Vec::with_capacity(in_use as usize);
        if in_use == 0 {
            return slots;
        }
        // Every slot read lies inside the mapping: checked once, for the last.
        let first = self.slot(0);
        let _ = self.slot(in_use - 1);
        let mut seq = 0;
        while seq < in_use {
            // SAFETY: as in `start`; slot `seq` is inside the mapping (checked above). The mark
            // is read first, with acquire ordering: a slot marked finished has every field its
            // run wrote before releasing the mark. A run finishing meanwhile changes only
            // fields that a slot read as started ignores. Read as plain loads, no helpers: a
            // process reads back every run, in a test binary built without optimizations.
            #[allow(unsafe_code)]
            let (mark, case_ref, run, attempt, outcome, elapsed, cost) = unsafe {
                let slot = first.add(seq as usize * SLOT);
                (
                    (*slot.add(15).cast::<AtomicU8>()).load(Ordering::Acquire),
                    *slot.cast::<u32>(),
                    *slot.add(4).cast::<u32>(),
                    *slot.add(8).cast::<u32>(),
                    *slot.add(12),
                    *slot.add(16).cast::<u64>(),
                    *slot.add(24).cast::<u64>(),
                )
            };
            let elapsed = f64::from_bits(u64::from_le(elapsed));
            let ended = match (mark, outcome) {
                (FINISHED, _) => Some((
                    outcome_of(outcome),
                    elapsed,
                    f64::from_bits(u64::from_le(cost)),
                )),
                (STARTED, _) => None,
                // Not started yet when the count was raised, or never: no run.
                _ => {
                    seq += 1;
                    continue;
                }
            };
            slots.push((
                ReadSlot {
                    seq,
                    case_ref: u32::from_le(case_ref),
                    run: u32::from_le(run),
                    attempt: u32::from_le(attempt),
                    ended,
                },
                elapsed,
            ));
            seq += 1;
        }
        slots
    }
}

/// Writes `bytes` at `offset` of `file`.
#[cfg(unix)]
fn write_at(file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}

/// A finished slot's outcome byte read back: anything unknown is an error.
fn outcome_of(byte: u8) -> Outcome {
    match byte {
        0 => Outcome::Pass,
        1 => Outcome::Fail,
        3 => Outcome::Stopped,
        _ => Outcome::Error,
    }
}

fn outcome_byte(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Stopped => 3,
    }
}

/// A slot as read back.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ReadSlot {
    pub(crate) seq: u64,
    pub(crate) case_ref: u32,
    pub(crate) run: u32,
    pub(crate) attempt: u32,
    /// How the run ended, with its time and cost; `None` for a run that never finished.
    pub(crate) ended: Option<(Outcome, f64, f64)>,
}

/// A slot's bytes, as read back: `None` for a slot no run has started.
fn decode(seq: u64, slot: &[u8]) -> Option<ReadSlot> {
    let word = |at: usize| u32::from_le_bytes([slot[at], slot[at + 1], slot[at + 2], slot[at + 3]]);
    let float = |at: usize| {
        let mut bits = [0u8; 8];
        bits.copy_from_slice(&slot[at..at + 8]);
        f64::from_bits(u64::from_le_bytes(bits))
    };
    fields(
        seq,
        slot[15],
        [word(0), word(4), word(8)],
        slot[12],
        [float(16), float(24)],
    )
}

/// A slot from its fields: its mark, case ref, run and attempt, outcome, and numbers (elapsed
/// and cost); `None` for a slot no run has started.
fn fields(
    seq: u64,
    mark: u8,
    [case_ref, run, attempt]: [u32; 3],
    outcome: u8,
    [elapsed, cost]: [f64; 2],
) -> Option<ReadSlot> {
    let ended = match mark {
        FINISHED => Some((outcome_of(outcome), elapsed, cost)),
        STARTED => None,
        // Not started yet when the count was raised, or never: no run.
        _ => return None,
    };
    Some(ReadSlot {
        seq,
        case_ref,
        run,
        attempt,
        ended,
    })
}

/// The slots in use of a slot file, read without mapping it.
pub(crate) fn read(path: &Path) -> io::Result<Vec<ReadSlot>> {
    use std::io::Read;
    let mut file = File::open(path)?;
    let mut header = [0u8; HEADER];
    if file.metadata()?.len() < HEADER as u64 {
        // Created, and the process gone before it was sized: no run was recorded in it.
        return Ok(Vec::new());
    }
    file.read_exact(&mut header)?;
    if &header[..4] != MAGIC {
        return Err(io::Error::other(
            "not a probtest slot file (no PTS1 header)",
        ));
    }
    let in_use = u64::from_le_bytes(header[8..16].try_into().unwrap_or_default()).min(CAPACITY);
    let mut bytes = vec![0u8; in_use as usize * SLOT];
    file.read_exact(&mut bytes)?;
    let slots = bytes
        .chunks_exact(SLOT)
        .enumerate()
        .filter_map(|(seq, slot)| decode(seq as u64, slot))
        .collect();
    Ok(slots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::temp_sessions;

    #[test]
    fn slots_read_back_as_written_and_an_unfinished_run_reads_as_started() {
        let dir = temp_sessions("slots");
        let slots = SlotFile::create(&dir, "12-34").expect("created");
        slots.start(0, 3, 1, 1, 0.0).expect("started");
        slots.finish(0, Outcome::Fail, 0.25, 0.5);
        slots.start(1, 3, 2, 1, 4.5).expect("started");
        slots.start(2, 7, 1, 2, 0.0).expect("started");
        slots.finish(2, Outcome::Pass, 1e-7, 0.0);
        let read = read(slots.path()).expect("read");
        // The process reads the same from its mapping, with the unfinished run's start.
        let own = slots.read_own(3);
        assert_eq!(
            own.iter().map(|(slot, _)| slot.clone()).collect::<Vec<_>>(),
            read
        );
        assert_eq!(
            own.iter().map(|(_, number)| *number).collect::<Vec<_>>(),
            [0.25, 4.5, 1e-7]
        );
        assert_eq!(
            read,
            [
                ReadSlot {
                    seq: 0,
                    case_ref: 3,
                    run: 1,
                    attempt: 1,
                    ended: Some((Outcome::Fail, 0.25, 0.5)),
                },
                ReadSlot {
                    seq: 1,
                    case_ref: 3,
                    run: 2,
                    attempt: 1,
                    ended: None,
                },
                ReadSlot {
                    seq: 2,
                    case_ref: 7,
                    run: 1,
                    attempt: 2,
                    ended: Some((Outcome::Pass, 1e-7, 0.0)),
                },
            ]
        );
        // Sparse: only the pages written take room.
        let meta = fs::metadata(slots.path()).expect("metadata");
        assert_eq!(meta.len(), (HEADER + CAPACITY as usize * SLOT) as u64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            assert!(
                meta.blocks() * 512 < 1024 * 1024,
                "{} blocks",
                meta.blocks()
            );
        }
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_cut_short_before_any_run_holds_no_runs() {
        let dir = temp_sessions("slots-short");
        fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("1-2.slots");
        fs::write(&path, b"").expect("written");
        assert_eq!(read(&path).expect("read"), []);
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_file_that_is_not_a_slot_file_is_refused() {
        let dir = temp_sessions("slots-foreign");
        fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("x.slots");
        fs::write(&path, vec![7u8; 128]).expect("written");
        assert!(read(&path).is_err());
        let _ = fs::remove_dir_all(dir);
    }
}
