//! The preload library, built from `preload/probtest_preload.c` by this crate's build script and
//! embedded here, written out as a file on first use. Test binaries that run a repro under it
//! and `cargo-probtest`'s doctor take it from here: one library, one way to write it.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The library's bytes; `None` where it is not built (not Linux with glibc, or without the
/// `preload` feature).
#[cfg(probtest_preload)]
pub const LIBRARY: Option<&[u8]> = Some(include_bytes!(concat!(
    env!("OUT_DIR"),
    "/probtest_preload.so"
)));

/// The library's bytes; `None` where it is not built (not Linux with glibc, or without the
/// `preload` feature).
#[cfg(not(probtest_preload))]
pub const LIBRARY: Option<&[u8]> = None;

/// Why there is no library, in one line.
pub const ABSENT: &str = if cfg!(all(target_os = "linux", target_env = "gnu")) {
    "probtest was built without its `preload` feature, which builds the preload library"
} else {
    "the preload library is built only for Linux with glibc"
};

/// The library as a file in `dir`, written there on first use.
///
/// Its name holds a hash of its bytes, so a newer build never loads an older build's file, and
/// concurrent processes sharing the directory agree on one path. A file already there with the
/// right size is reused; otherwise the bytes go to a temporary file renamed into place, so that
/// no process ever preloads a half-written library.
pub fn library_in(dir: &Path) -> io::Result<PathBuf> {
    let bytes = LIBRARY.ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, ABSENT))?;
    let name = format!("probtest-preload-{:016x}.so", fnv1a(bytes));
    let path = dir.join(&name);
    if fs::metadata(&path).is_ok_and(|meta| meta.is_file() && meta.len() == bytes.len() as u64) {
        return Ok(path);
    }
    fs::create_dir_all(dir).map_err(|error| in_file(dir, error))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    let temp = dir.join(format!(".{name}.{}-{nanos}.tmp", std::process::id()));
    let written = File::create_new(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, &path));
    if let Err(error) = written {
        let _ = fs::remove_file(&temp);
        return Err(in_file(&path, error));
    }
    Ok(path)
}

fn in_file(path: &Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// FNV-1a, 64 bits: stable across Rust releases, unlike std's hasher, so a file name written by
/// one build means the same bytes to every other.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_its_published_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[cfg(not(probtest_preload))]
    #[test]
    fn without_the_library_nothing_is_written() {
        let error = library_in(&std::env::temp_dir()).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
    }
}
