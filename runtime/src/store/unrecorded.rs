//! The session's count of runs that were executed and could not be recorded: a small file made
//! with the session (`unrecorded`), updated in place under its lock, so that a process whose
//! disk is full (the very reason its runs were lost) can still say how many it lost and why.
//!
//! Layout: `PTU1`, four zero bytes, the count (u64, little-endian), the reason's length (u16),
//! the reason (UTF-8, the first one given), then zeros up to [`SIZE`] bytes. Rewriting bytes
//! that exist needs no new room on the file systems a target directory lives on.
//!
//! Layer: store.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use crate::store::live::file_io::{read_all, write_at};

const MAGIC: &[u8; 4] = b"PTU1";
/// The file's size: room for a reason of a few hundred bytes.
const SIZE: usize = 512;
const REASON_AT: usize = 18;

fn path(session_dir: &Path) -> PathBuf {
    session_dir.join("unrecorded")
}

/// Makes the file of a new session, zero runs counted.
pub(crate) fn create(session_dir: &Path) -> io::Result<()> {
    let mut bytes = vec![0u8; SIZE];
    bytes[..4].copy_from_slice(MAGIC);
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path(session_dir))?;
    if file.metadata()?.len() < SIZE as u64 {
        write_at(&file, 0, &bytes)?;
    }
    Ok(())
}

/// Adds `runs` to the count; the first reason stays.
pub(crate) fn add(session_dir: &Path, runs: u64, reason: &str) -> io::Result<()> {
    let open = || {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(path(session_dir))
    };
    // A session made before this file existed, or whose file was removed: made now, if there
    // is room.
    let file = match open() {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            create(session_dir)?;
            open()?
        }
        Err(error) => return Err(error),
    };
    file.lock()?;
    let updated = update(&file, runs, reason);
    let unlocked = file.unlock();
    updated.and(unlocked)
}

fn update(file: &File, runs: u64, reason: &str) -> io::Result<()> {
    let bytes = read_all(file)?;
    let (count, old_reason) = decode(&bytes).unwrap_or((0, String::new()));
    let mut written = vec![0u8; SIZE];
    written[..4].copy_from_slice(MAGIC);
    written[8..16].copy_from_slice(&count.saturating_add(runs).to_le_bytes());
    let reason = if old_reason.is_empty() {
        reason
    } else {
        &old_reason
    };
    let mut end = reason.len().min(SIZE - REASON_AT);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    written[16..18].copy_from_slice(&(end as u16).to_le_bytes());
    written[REASON_AT..REASON_AT + end].copy_from_slice(&reason.as_bytes()[..end]);
    write_at(file, 0, &written)
}

fn decode(bytes: &[u8]) -> Option<(u64, String)> {
    if bytes.len() < REASON_AT || &bytes[..4] != MAGIC {
        return None;
    }
    let count = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let len = usize::from(u16::from_le_bytes(bytes[16..18].try_into().ok()?));
    let reason = bytes.get(REASON_AT..REASON_AT + len)?;
    Some((count, String::from_utf8_lossy(reason).into_owned()))
}

/// The count and the first reason, when any run could not be recorded.
pub(crate) fn read(session_dir: &Path) -> io::Result<Option<(u64, String)>> {
    let bytes = match std::fs::read(path(session_dir)) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    Ok(decode(&bytes).filter(|(count, _)| *count > 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::temp_sessions;

    #[test]
    fn counts_add_up_and_the_first_reason_stays() {
        let dir = temp_sessions("unrecorded");
        std::fs::create_dir_all(&dir).expect("dir");
        create(&dir).expect("created");
        assert_eq!(read(&dir).expect("read"), None);
        add(&dir, 2, "runs.jsonl: No space left on device (os error 28)").expect("added");
        add(&dir, 3, "something else").expect("added");
        assert_eq!(
            read(&dir).expect("read"),
            Some((
                5,
                "runs.jsonl: No space left on device (os error 28)".to_string()
            ))
        );
        assert_eq!(std::fs::metadata(path(&dir)).expect("file").len(), 512);
        // A reason too long for the file is cut at a character boundary.
        let other = dir.join("long");
        std::fs::create_dir_all(&other).expect("dir");
        add(&other, 1, &"é".repeat(400)).expect("added");
        let (_, reason) = read(&other).expect("read").expect("counted");
        assert!(reason.len() <= SIZE - REASON_AT && reason.chars().all(|c| c == 'é'));
        let _ = std::fs::remove_dir_all(dir);
    }
}
