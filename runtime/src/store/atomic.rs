//! Whole files written so that readers never see half of one: a temporary file beside the
//! target, renamed into place.
//!
//! Renaming replaces whatever the path names, so the path is looked at first
//! ([`resolve_target`]): a symlink is followed and its target replaced, so that the link stays
//! a link; a character device or a FIFO (`/dev/null`, a pipe a reader waits on) is written
//! into, since a rename would put a regular file in its place; a directory, a socket or a block
//! device is refused.
//!
//! Layer: store.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::store::in_file;

/// Where a whole file written to a path goes, once the path's symlinks are followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A regular file, or nothing yet: written beside, then renamed into place.
    File(PathBuf),
    /// A character device or a FIFO: opened and written into, with no temporary file.
    Stream(PathBuf),
}

/// Symlinks followed before a chain is taken for a loop: Linux's own limit.
const MAX_LINKS: usize = 40;

/// What `path` is to a writer of whole files, its symlinks followed (a relative target is
/// relative to its link's directory; a dangling link leads to the file it names). A directory,
/// a socket, a block device or a chain of links that never ends is an error naming `path` and
/// what it is.
pub(crate) fn resolve_target(path: &Path) -> io::Result<Target> {
    let mut current = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let metadata = match fs::symlink_metadata(&current) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Ok(Target::File(current))
            }
            Err(error) => return Err(in_file(path, error)),
        };
        let kind = metadata.file_type();
        if kind.is_symlink() {
            let link = fs::read_link(&current).map_err(|error| in_file(path, error))?;
            // An absolute target replaces the directory in `join`.
            current = match current.parent() {
                Some(dir) => dir.join(link),
                None => link,
            };
            continue;
        }
        if kind.is_file() {
            return Ok(Target::File(current));
        }
        if is_stream(&kind) {
            return Ok(Target::Stream(current));
        }
        let what = kind_name(&kind);
        let message = if current == path {
            format!("{} is {what}, not a file", path.display())
        } else {
            format!(
                "{} is a symlink to {}, {what}, not a file",
                path.display(),
                current.display()
            )
        };
        let error_kind = if kind.is_dir() {
            io::ErrorKind::IsADirectory
        } else {
            io::ErrorKind::InvalidInput
        };
        return Err(io::Error::new(error_kind, message));
    }
    Err(io::Error::other(format!(
        "{} is a chain of more than {MAX_LINKS} symlinks, or a loop of them",
        path.display()
    )))
}

#[cfg(unix)]
fn is_stream(kind: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_char_device() || kind.is_fifo()
}

#[cfg(not(unix))]
fn is_stream(_: &fs::FileType) -> bool {
    false
}

/// What a path that is not a regular file is, for an error message.
pub(crate) fn kind_name(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_fifo() {
            return "a FIFO";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "neither a file nor a device"
    }
}

/// Writes `bytes` as the whole content of `path`: through a temporary file beside it renamed
/// into place for a file (a symlink's target for a symlink), straight into a character device
/// or a FIFO. Errors name `path`; no temporary file outlives a failure.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let written = match resolve_target(path)? {
        Target::File(file) => replace(&file, bytes),
        Target::Stream(stream) => OpenOptions::new()
            .write(true)
            .open(&stream)
            .and_then(|mut open| open.write_all(bytes)),
    };
    written.map_err(|error| in_file(path, error))
}

/// Replaces the regular file (or nothing) at `path` by a temporary file with `bytes`.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    let temp = temp_path(path);
    let written = File::create(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        // On a full disk every failed write would otherwise leave a temporary file behind, and
        // take more of the room that is missing.
        let _ = fs::remove_file(&temp);
    }
    written
}

/// A temporary file's path beside `path`, hidden, distinct per process and per write: two
/// threads replacing one file must not share one.
fn temp_path(path: &Path) -> PathBuf {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.json".into());
    let write = WRITES.fetch_add(1, Ordering::Relaxed);
    path.with_file_name(format!(".{name}.{}.{write}.tmp", std::process::id()))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::*;
    use crate::model::tests::{build, record};
    use crate::types::status::Outcome;

    /// A fresh directory of its own for one test.
    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("probtest-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }

    /// Skips a test the machine does not allow, saying so past libtest's capture; under
    /// `CI=true` the test fails instead, so that CI never passes a test it did not run.
    fn skip(what: &str, why: &str) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{what} is not possible on this CI machine: {why}"
        );
        let _ = writeln!(
            std::io::stderr().lock(),
            "skipped: {what} is not possible here: {why}"
        );
    }

    /// The hidden temporary files left in `dir`.
    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .expect("listable")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn atomic_write_creates_parents_and_leaves_no_temp_file() {
        let dir = temp_dir("parents");
        let path = dir.join("nested/deeper/report.json");
        let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
        crate::store::write_report(&report, &path).expect("written");
        let text = fs::read_to_string(&path).expect("readable");
        assert!(text.ends_with("}\n"));
        assert!(leftovers(path.parent().expect("parent")).is_empty());
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_missing_path_or_a_regular_file_is_replaced() {
        let dir = temp_dir("regular");
        let path = dir.join("report.json");
        assert_eq!(
            resolve_target(&path).expect("missing"),
            Target::File(path.clone())
        );
        write_atomically(&path, b"one").expect("created");
        assert_eq!(
            resolve_target(&path).expect("a file"),
            Target::File(path.clone())
        );
        write_atomically(&path, b"two").expect("replaced");
        assert_eq!(fs::read_to_string(&path).expect("readable"), "two");
        assert!(leftovers(&dir).is_empty());
        let _ = fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_followed_and_stay_links() {
        use std::os::unix::fs::symlink;
        let dir = temp_dir("symlinks");
        fs::create_dir_all(dir.join("real")).expect("a directory");
        let target = dir.join("real/report.json");
        fs::write(&target, "old").expect("a target");
        // A chain: an absolute link to a relative one, resolved against its own directory.
        let relative = dir.join("real/relative.json");
        symlink("report.json", &relative).expect("a relative link");
        let link = dir.join("link.json");
        symlink(&relative, &link).expect("an absolute link");
        assert_eq!(
            resolve_target(&link).expect("resolved"),
            Target::File(target.clone())
        );
        write_atomically(&link, b"new").expect("written through the links");
        assert!(fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink());
        assert!(fs::symlink_metadata(&relative)
            .expect("link")
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).expect("target"), "new");
        assert!(leftovers(&dir).is_empty() && leftovers(&dir.join("real")).is_empty());

        // A dangling link's target is created, in the target's directory.
        let dangling = dir.join("dangling.json");
        symlink("made/by/write.json", &dangling).expect("a dangling link");
        write_atomically(&dangling, b"made").expect("written");
        assert_eq!(
            fs::read_to_string(dir.join("made/by/write.json")).expect("made"),
            "made"
        );
        assert!(fs::symlink_metadata(&dangling)
            .expect("link")
            .file_type()
            .is_symlink());

        // A loop never ends, and says so.
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        symlink(&b, &a).expect("a");
        symlink(&a, &b).expect("b");
        let error = write_atomically(&a, b"x").expect_err("a loop");
        assert_eq!(
            error.to_string(),
            format!(
                "{} is a chain of more than 40 symlinks, or a loop of them",
                a.display()
            )
        );
        let _ = fs::remove_dir_all(dir);
    }

    #[test]
    fn a_directory_is_refused_in_one_line_naming_it() {
        let dir = temp_dir("directory");
        let error = write_atomically(&dir, b"x").expect_err("a directory");
        assert_eq!(
            error.to_string(),
            format!("{} is a directory, not a file", dir.display())
        );
        assert_eq!(error.kind(), io::ErrorKind::IsADirectory);
        assert!(dir.is_dir());
        #[cfg(unix)]
        {
            let link = std::env::temp_dir()
                .join(format!("probtest-atomic-dirlink-{}", std::process::id()));
            let _ = fs::remove_file(&link);
            std::os::unix::fs::symlink(&dir, &link).expect("a link to the directory");
            let error = resolve_target(&link).expect_err("a directory behind a link");
            assert_eq!(
                error.to_string(),
                format!(
                    "{} is a symlink to {}, a directory, not a file",
                    link.display(),
                    dir.display()
                )
            );
            let _ = fs::remove_file(&link);
        }
        assert!(leftovers(&dir).is_empty());
        let _ = fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_socket_is_refused() {
        let dir = temp_dir("socket");
        let path = dir.join("report.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).expect("a socket");
        let error = write_atomically(&path, b"x").expect_err("a socket");
        assert_eq!(
            error.to_string(),
            format!("{} is a socket, not a file", path.display())
        );
        assert!(leftovers(&dir).is_empty());
        let _ = fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_block_device_is_refused() {
        let dir = temp_dir("block");
        let path = dir.join("loop");
        // Major 7 is the loop device; nothing is ever opened.
        let made = Command::new("mknod")
            .arg(&path)
            .args(["b", "7", "200"])
            .status();
        if !made.is_ok_and(|status| status.success()) {
            skip(
                "making a block device with mknod",
                "not permitted (not root?)",
            );
            let _ = fs::remove_dir_all(dir);
            return;
        }
        let error = write_atomically(&path, b"x").expect_err("a block device");
        assert_eq!(
            error.to_string(),
            format!("{} is a block device, not a file", path.display())
        );
        let _ = fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_into() {
        use std::io::Read;
        use std::os::unix::fs::FileTypeExt;
        let dir = temp_dir("fifo");
        let path = dir.join("report.fifo");
        let made = Command::new("mkfifo").arg(&path).status();
        if !made.is_ok_and(|status| status.success()) {
            skip("making a FIFO with mkfifo", "mkfifo failed or is missing");
            let _ = fs::remove_dir_all(dir);
            return;
        }
        assert_eq!(
            resolve_target(&path).expect("a fifo"),
            Target::Stream(path.clone())
        );
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut text = String::new();
                File::open(path)
                    .expect("open")
                    .read_to_string(&mut text)
                    .expect("read");
                text
            })
        };
        let bytes = "x".repeat(200_000);
        write_atomically(&path, bytes.as_bytes()).expect("written");
        assert_eq!(reader.join().expect("reader"), bytes);
        let kind = fs::symlink_metadata(&path)
            .expect("still there")
            .file_type();
        assert!(kind.is_fifo());
        assert!(leftovers(&dir).is_empty());
        let _ = fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_character_device_is_written_into() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        if OpenOptions::new().write(true).open(null).is_err() {
            skip("writing to /dev/null", "it cannot be opened for writing");
            return;
        }
        assert_eq!(
            resolve_target(null).expect("a device"),
            Target::Stream(null.to_path_buf())
        );
        let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
        crate::store::write_report(&report, null).expect("written");
        assert!(fs::symlink_metadata(null)
            .expect("there")
            .file_type()
            .is_char_device());
        assert!(leftovers(Path::new("/dev")).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_leaves_no_temporary_file() {
        let dir = temp_dir("full");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .output();
        if !mounted.as_ref().is_ok_and(|out| out.status.success()) {
            let why = match &mounted {
                Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_string(),
                Err(error) => error.to_string(),
            };
            let _ = fs::remove_dir_all(&dir);
            skip(&format!("mounting a tmpfs on {}", dir.display()), &why);
            return;
        }
        let path = dir.join("report.json");
        let written = write_atomically(&path, &vec![b' '; 1 << 20]);
        let left = leftovers(&dir);
        let _ = Command::new("umount").arg(&dir).status();
        let _ = fs::remove_dir_all(&dir);
        let error = written.expect_err("a megabyte does not fit in 64 KiB");
        assert_eq!(error.kind(), io::ErrorKind::StorageFull, "{error}");
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}: ", path.display())),
            "{error}"
        );
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_failed_rename_leaves_no_temporary_file() {
        let dir = temp_dir("failed");
        // The rename fails: a directory is in the way once the temporary file is written. The
        // target is resolved first, so the directory appears between the two steps here.
        let path = dir.join("report.json");
        fs::create_dir_all(path.join("inside")).expect("a directory in the way");
        let error = replace(&path, b"x").expect_err("cannot rename over a directory");
        assert!(!error.to_string().is_empty());
        assert!(leftovers(&dir).is_empty(), "{:?}", leftovers(&dir));
        let _ = fs::remove_dir_all(dir);
    }
}
