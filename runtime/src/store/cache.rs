//! The cassette of `probtest::cached`: each recorded value with the usage and cost its call
//! recorded, one file per case, run and key under `<target>/probtest/cache/`, so that a replay
//! finds a run's values without a call and a report can be rebuilt from a real earlier run.
//!
//! Layout: `cache/<package>/<module>/<case>/run<N>/<key>.json`, each name cleaned for the file
//! system, holding `{"key", "value", "usage", "cost"}`. One file per value: runs of one case in
//! different nextest processes never write the same file, and a file is written whole
//! (`atomic`), so a replay never reads half a value.
//!
//! Layer: store.

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

/// A name cleaned for the file system, with a short hash of the name as given when cleaning
/// changed it, so that `a b` and `a_b` stay apart.
fn file_name(name: &str) -> String {
    let cleaned = super::sanitize_key(name);
    if cleaned == name && !cleaned.is_empty() {
        return cleaned;
    }
    // FNV-1a: stable across builds and platforms, unlike std's hasher.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{cleaned}-{:08x}", hash as u32)
}

/// The file of one value.
pub(crate) fn entry_path(cache_dir: &Path, place: &Place<'_>, key: &str) -> PathBuf {
    cache_dir
        .join(file_name(place.package))
        .join(file_name(place.module))
        .join(file_name(place.case))
        .join(format!("run{}", place.run))
        .join(format!("{}.json", file_name(key)))
}

/// Stores `entry`, replacing what was recorded under its key before.
pub(crate) fn write(path: &Path, entry: &CacheEntry) -> io::Result<()> {
    let bytes = serde_json::to_vec_pretty(entry).map_err(io::Error::other)?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|error| super::in_file(parent, error))?;
    }
    super::atomic::write_atomically(path, &bytes).map_err(|error| super::in_file(path, error))
}

/// The entry at `path`: `None` when nothing was recorded there under `key`.
pub(crate) fn read(path: &Path, key: &str) -> io::Result<Option<CacheEntry>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(super::in_file(path, error)),
    };
    let entry: CacheEntry = serde_json::from_slice(&bytes)
        .map_err(|error| super::in_file(path, io::Error::new(io::ErrorKind::InvalidData, error)))?;
    Ok((entry.key == key).then_some(entry))
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
        let path = entry_path(&dir, &place, "answer");
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
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
