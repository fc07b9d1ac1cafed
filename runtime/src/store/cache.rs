//! The cassette of `probtest::cached`: each recorded value with the usage and cost its call
//! recorded, one file per case, run and key under `<target>/probtest/cache/`, so that a replay
//! finds a run's values without a call and a report can be rebuilt from a real earlier run.
//!
//! Layout: `cache/<package>/<module>/<case>/run<N>/<key>.json`, each name cleaned for the file
//! system, holding `{"key", "value", "usage", "cost"}`. One file per value: runs of one case in
//! different nextest processes never write the same file, and a file is written whole
//! (`atomic`), so a replay never reads half a value. A name the file system would refuse (with
//! room for the temporary file a write goes through) is refused first, saying which name it is,
//! its length and the limit; an entry that is not a regular file (a FIFO, a symlink to a device)
//! is refused before it is opened.
//!
//! Layer: store.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

pub(crate) use crate::format::store_files::CacheEntry;

/// Which run of which case a value belongs to.
pub(crate) struct Place<'a> {
    pub(crate) package: &'a str,
    pub(crate) module: &'a str,
    pub(crate) case: &'a str,
    pub(crate) run: u32,
}

/// The directory of the cassette in a target directory.
pub(crate) fn cache_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("probtest").join("cache")
}

/// The longest name of a directory entry on the file systems a target directory lives on
/// (ext4, XFS, Btrfs, tmpfs, APFS and NTFS all stop at 255).
const NAME_MAX: usize = 255;

/// What the whole-file writer adds to a file's name for its temporary file beside it (`.`
/// before, `.<pid>.<count>.tmp` after), with room for a pid of 10 digits and a count of 20: a
/// key's name must leave it, or the write fails on the temporary file's name.
const TEMP_ROOM: usize = 1 + 1 + 10 + 1 + 20 + 4;

/// What a key's file name ends with.
const EXTENSION: &str = ".json";

/// What [`file_name`] adds to a name that cleaning changed: `-` and 8 hex digits.
const HASH_ROOM: usize = 9;

/// A name that is too long for a file name once cleaned: the key, or the case id, module path
/// or package name of the run it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TooLong {
    /// What the name is: `key`, `case id`, `module path`, `package name`.
    what: &'static str,
    /// Its length in characters (each character is one of the cleaned name).
    chars: usize,
    /// The most characters a name of its kind may have.
    limit: usize,
    /// Whether cleaning changed it, which adds a hash to its name and takes room.
    hashed: bool,
}

impl fmt::Display for TooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let TooLong {
            what,
            chars,
            limit,
            hashed,
        } = self;
        write!(
            f,
            "the {what} is too long for a file name: {chars} characters, at most {limit}"
        )?;
        if *hashed {
            write!(
                f,
                " for a {what} with characters other than ASCII letters, digits, `.`, `_` and `-`"
            )?;
        }
        Ok(())
    }
}

/// A name cleaned for the file system, with a short hash of the name as given when cleaning
/// changed it, so that `a b` and `a_b` stay apart; refused when the file system would refuse
/// it, with `room` taken from its `NAME_MAX` bytes by what the name gets around it.
fn file_name(what: &'static str, name: &str, room: usize) -> Result<String, TooLong> {
    let cleaned = super::sanitize_key(name);
    let hashed = cleaned != name || cleaned.is_empty();
    let named = if hashed {
        // FNV-1a: stable across builds and platforms, unlike std's hasher.
        let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        });
        format!("{cleaned}-{:08x}", hash as u32)
    } else {
        cleaned
    };
    // Cleaned names are ASCII: their bytes are their characters.
    if named.len() + room > NAME_MAX {
        return Err(TooLong {
            what,
            chars: name.chars().count(),
            limit: NAME_MAX - room - if hashed { HASH_ROOM } else { 0 },
            hashed,
        });
    }
    Ok(named)
}

/// The file of one value; an error when a name is too long for the file system to take.
pub(crate) fn entry_path(
    cache_dir: &Path,
    place: &Place<'_>,
    key: &str,
) -> Result<PathBuf, TooLong> {
    Ok(cache_dir
        .join(file_name("package name", place.package, 0)?)
        .join(file_name("module path", place.module, 0)?)
        .join(file_name("case id", place.case, 0)?)
        .join(format!("run{}", place.run))
        .join(format!(
            "{}{EXTENSION}",
            file_name("key", key, EXTENSION.len() + TEMP_ROOM)?
        )))
}

/// Stores `entry`, replacing what was recorded under its key before.
pub(crate) fn write(path: &Path, entry: &CacheEntry) -> io::Result<()> {
    let bytes = serde_json::to_vec_pretty(entry).map_err(io::Error::other)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| super::in_file(parent, error))?;
    }
    super::atomic::write_atomically(path, &bytes).map_err(|error| super::in_file(path, error))
}

/// The entry at `path`: `None` when nothing was recorded there under `key`. Anything but a
/// regular file there (or at the end of its symlinks) is refused before it is opened: a FIFO
/// would block the read, a device like `/dev/zero` never end it.
pub(crate) fn read(path: &Path, key: &str) -> io::Result<Option<CacheEntry>> {
    match std::fs::metadata(path) {
        Ok(metadata) if metadata.is_file() => {}
        Ok(metadata) => return Err(not_a_file(path, &metadata)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(super::in_file(path, error)),
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(super::in_file(path, error)),
    };
    let entry: CacheEntry = serde_json::from_slice(&bytes)
        .map_err(|error| super::in_file(path, io::Error::new(io::ErrorKind::InvalidData, error)))?;
    Ok((entry.key == key).then_some(entry))
}

/// The one-line refusal of a cassette entry that is not a regular file: what it is, and what
/// its symlink leads to when it is one.
fn not_a_file(path: &Path, metadata: &std::fs::Metadata) -> io::Error {
    let what = super::atomic::kind_name(&metadata.file_type());
    let linked = std::fs::symlink_metadata(path).is_ok_and(|link| link.file_type().is_symlink());
    let message = match std::fs::canonicalize(path) {
        Ok(target) if linked => format!(
            "{} is a symlink to {}, {what}, not a recorded value",
            path.display(),
            target.display()
        ),
        _ => format!("{} is {what}, not a recorded value", path.display()),
    };
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::usage::TokenUsage;

    #[test]
    fn values_are_read_back_under_their_key_only() {
        let dir = std::env::temp_dir().join(format!("probtest-cache-{}", std::process::id()));
        let place = Place {
            package: "evals",
            module: "evals::triage",
            case: "triage::refund please",
            run: 3,
        };
        let path = entry_path(&dir, &place, "answer").expect("a short key");
        assert!(path.ends_with("run3/answer.json"), "{}", path.display());
        assert_eq!(read(&path, "answer").expect("read"), None);
        let entry = CacheEntry {
            key: "answer".to_string(),
            value: serde_json::json!({"label": "refund"}),
            usage: vec![TokenUsage {
                model: "m".to_string(),
                input_tokens: 12,
                cost: 0.5,
                ..TokenUsage::default()
            }],
            cost: 0.25,
        };
        write(&path, &entry).expect("write");
        assert_eq!(read(&path, "answer").expect("read"), Some(entry));
        assert_eq!(read(&path, "other").expect("read"), None);
        // Names that clean alike stay apart.
        assert_ne!(
            entry_path(&dir, &place, "a b"),
            entry_path(&dir, &place, "a_b")
        );
        // The longest key whose temporary file's name still fits, and one more character.
        let longest = "k".repeat(213);
        assert!(entry_path(&dir, &place, &longest).is_ok());
        let error = entry_path(&dir, &place, &format!("{longest}k")).expect_err("too long");
        assert_eq!(
            error.to_string(),
            "the key is too long for a file name: 214 characters, at most 213"
        );
        let error = entry_path(&dir, &place, &"é".repeat(205)).expect_err("too long");
        assert_eq!(
            error.to_string(),
            "the key is too long for a file name: 205 characters, at most 204 for a key with \
             characters other than ASCII letters, digits, `.`, `_` and `-`"
        );
        assert!(entry_path(&dir, &place, &"é".repeat(204)).is_ok());
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_that_is_not_a_regular_file_is_refused_unopened() {
        let dir = std::env::temp_dir().join(format!("probtest-cache-kinds-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory");
        let zero = dir.join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("a symlink");
        let error = read(&zero, "answer").expect_err("a device");
        assert_eq!(
            error.to_string(),
            format!(
                "{} is a symlink to /dev/zero, a character device, not a recorded value",
                zero.display()
            )
        );
        let fifo = dir.join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|status| status.success()) {
            // Opening it would wait for a writer that never comes.
            let error = read(&fifo, "answer").expect_err("a FIFO");
            assert_eq!(
                error.to_string(),
                format!("{} is a FIFO, not a recorded value", fifo.display())
            );
        }
        // A dangling link is nothing recorded, as a missing file is.
        let dangling = dir.join("dangling.json");
        std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).expect("a symlink");
        assert_eq!(read(&dangling, "answer").expect("read"), None);
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
