//! Positioned reads and writes of the report and its bookkeeping files, the padding that keeps
//! a slot's size when its content changes, and the names and sizes of row slots and files.
//!
//! Layer: store.

use crate::store::live::state::Slot;
use crate::types::key::CaseKey;
use std::fs::File;
use std::io;
#[cfg(not(unix))]
use std::io::{Seek, SeekFrom};

/// A name for `bytes` that any file system takes: 32 hex digits.
pub(super) fn hex_hash(bytes: &[u8]) -> String {
    // Two FNV-1a hashes with different offsets: 128 bits, so distinct paths and cases get
    // distinct files. One index loop for both: unoptimized, iterator adapters cost several
    // calls a byte.
    const PRIME: u64 = 0x0000_0100_0000_01b3;
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

/// The name of a case's row state file, in its generation's `rows-<generation>/`.
pub(super) fn row_file_name(key: CaseKey<&str>) -> String {
    format!(
        "{}.row",
        hex_hash(format!("{}\0{}\0{}", key.package, key.module, key.case).as_bytes())
    )
}

/// `text` padded with spaces to `capacity` bytes; `None` when it is longer.
pub(super) fn padded(mut text: String, capacity: u64) -> Option<String> {
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

/// Writes `bytes` at `offset` of `file`.
#[cfg(unix)]
pub(crate) fn write_at(file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

#[cfg(not(unix))]
pub(crate) fn write_at(mut file: &File, offset: u64, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(bytes)
}

/// Reads into `buffer` from `offset` of `file`.
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
pub(crate) fn read_all(file: &File) -> io::Result<Vec<u8>> {
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

/// The room of a row at `offset` whose case's prefix and tail take `prefix` and `tail` bytes
/// (room to grow by half, and by 160 bytes at least), and the slot of its tail, all of the row
/// that changes.
pub(super) fn row_slot(offset: u64, prefix: usize, tail: usize) -> (u64, Slot) {
    let length = (prefix + tail) as u64;
    let capacity = length + (length / 2).max(160);
    let tail = Slot {
        offset: offset + prefix as u64,
        capacity: capacity - prefix as u64,
    };
    (capacity, tail)
}
