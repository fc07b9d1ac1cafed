//! The lock slots of a limit, shared by every process of a session: at most `concurrency`
//! holders of a key at once, and starts at most `per_minute` a minute.
//!
//! A slot is a file `<session>/limits/<key>.<slot>.lock` held under an exclusive `flock`
//! (`File::try_lock`). The kernel releases the lock when its process dies, however it dies, so a
//! killed holder never keeps its slot. The per-minute limit is a reservation of the next free
//! start instant, kept in `<key>.rate` and read and advanced under that file's lock: starts
//! are spread `60 / per_minute` seconds apart instead of bursting at the start of each minute,
//! which is what providers' own limiters punish.
//!
//! Layer: store.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a waiter sleeps between looks at the slots, at most. Short enough that a freed
/// slot is taken within a few milliseconds; each look is one `flock` per slot.
pub(crate) const MAX_POLL: Duration = Duration::from_millis(20);

/// A held slot of a limit: dropping it (or the process dying) frees the slot.
#[derive(Debug)]
pub(crate) struct SlotLock {
    _file: File,
}

/// The directory of a session's limit files.
pub(crate) fn limits_dir(session_dir: &Path) -> PathBuf {
    session_dir.join("limits")
}

fn slot_path(dir: &Path, key: &str, slot: u32) -> PathBuf {
    dir.join(format!("{key}.{slot}.lock"))
}

fn open_lock_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|error| super::in_file(path, error))
}

/// Takes one of the `concurrency` slots of `key`, waiting as long as every slot is held and
/// `give_up` says no; `None` when it said yes first. `key` must already be sanitized for a
/// file name.
pub(crate) fn acquire_slot(
    dir: &Path,
    key: &str,
    concurrency: u32,
    give_up: &dyn Fn() -> bool,
) -> io::Result<Option<SlotLock>> {
    std::fs::create_dir_all(dir).map_err(|error| super::in_file(dir, error))?;
    let concurrency = concurrency.max(1);
    // Start at a slot of our own, so that waiters do not all queue on slot 0's file.
    let first = std::process::id() % concurrency;
    let mut pause = Duration::from_millis(1);
    loop {
        for offset in 0..concurrency {
            let slot = (first + offset) % concurrency;
            let path = slot_path(dir, key, slot);
            let file = open_lock_file(&path)?;
            match file.try_lock() {
                Ok(()) => return Ok(Some(SlotLock { _file: file })),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(error)) => return Err(super::in_file(&path, error)),
            }
        }
        if give_up() {
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Reserves the next start of `key` under a limit of `per_minute` starts a minute, and says
/// how long to wait for it (zero when the start is free now).
pub(crate) fn reserve_start(dir: &Path, key: &str, per_minute: u32) -> io::Result<Duration> {
    std::fs::create_dir_all(dir).map_err(|error| super::in_file(dir, error))?;
    let spacing = Duration::from_secs(60) / per_minute.max(1);
    let path = dir.join(format!("{key}.rate"));
    let mut file = open_lock_file(&path)?;
    file.lock().map_err(|error| super::in_file(&path, error))?;
    let now = micros_since_epoch(SystemTime::now());
    let mut text = String::new();
    file.read_to_string(&mut text)
        .map_err(|error| super::in_file(&path, error))?;
    // A torn or foreign value reads as "free now": at worst one start comes early.
    let next_free = text.trim().parse::<u64>().unwrap_or(0);
    let start = next_free.max(now);
    let following = start.saturating_add(spacing.as_micros() as u64);
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.set_len(0))
        .and_then(|()| file.write_all(following.to_string().as_bytes()))
        .map_err(|error| super::in_file(&path, error))?;
    // The lock goes with the file.
    Ok(Duration::from_micros(start - now))
}

fn micros_since_epoch(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_micros() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("probtest-limits-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn no_more_than_the_concurrency_hold_slots_at_once() {
        let dir = temp_dir("concurrency");
        let held = Arc::new(AtomicU32::new(0));
        let most = Arc::new(AtomicU32::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (dir, held, most) = (dir.clone(), held.clone(), most.clone());
                std::thread::spawn(move || {
                    let _slot = acquire_slot(&dir, "api", 2, &|| false)
                        .expect("slot")
                        .expect("no giving up");
                    let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(30));
                    held.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("join");
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("list")
            .map(|entry| entry.expect("entry").file_name())
            .collect();
        files.sort();
        assert_eq!(files, ["api.0.lock", "api.1.lock"]);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn a_waiter_gives_up_when_told_and_takes_no_slot() {
        let dir = temp_dir("give-up");
        let held = acquire_slot(&dir, "api", 1, &|| false).expect("slot");
        assert!(held.is_some());
        let asked = AtomicU32::new(0);
        let waited = acquire_slot(&dir, "api", 1, &|| {
            asked.fetch_add(1, Ordering::SeqCst) >= 2
        })
        .expect("no error");
        assert!(waited.is_none(), "a waiter told to give up takes nothing");
        assert_eq!(asked.load(Ordering::SeqCst), 3);
        drop(held);
        let free = acquire_slot(&dir, "api", 1, &|| true).expect("no error");
        assert!(
            free.is_some(),
            "a free slot is taken before giving up is asked"
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn starts_are_reserved_a_spacing_apart() {
        let dir = temp_dir("rate");
        let waits: Vec<Duration> = (0..4)
            .map(|_| reserve_start(&dir, "api", 600).expect("reserve"))
            .collect();
        // 600 a minute: one start each 100 ms, the first at once.
        assert!(waits[0] < Duration::from_millis(5), "{waits:?}");
        for (index, wait) in waits.iter().enumerate().skip(1) {
            let expected = Duration::from_millis(100 * index as u64);
            assert!(
                *wait <= expected && expected - *wait < Duration::from_millis(50),
                "{waits:?}"
            );
        }
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
