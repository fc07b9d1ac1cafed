//! The session store: every run persisted as it happens, so that a report can cover every
//! process of a session (one `cargo nextest run`, or one `cargo test` with all its test
//! binaries) and a run whose process died is still accounted for.
//!
//! Layout under `<target>/probtest/sessions/<session>/`:
//!
//! - `session.json`: the key and when the session started.
//! - `runs.jsonl`: one JSON line per event, from every process of the session: a process
//!   starting, each case it runs (once), each run's start and end.
//!
//! One shared file, each line written with a single `write` under an exclusive `File::lock`:
//! lines from concurrent processes never interleave, and no process creates a file of its own
//! (under nextest, one file per process would mean one new inode per test, which costs more
//! than the run's own bookkeeping). Each line starts with a newline, so a line torn by a
//! process killed mid-write is cut off by the next line and skipped by the loader, losing
//! nothing else. A start without an end is a run whose process died: it loads as an error,
//! never as a pass and never as missing.
//!
//! The code: [`Session`] is a session's directory (`session_dir`), whose key comes from `key`
//! and whose place from `target`; a process appends its lines through `log`; `live` keeps the
//! session's JSON report current run by run; `atomic` writes whole files.
//!
//! Layer: store. May import `crate::types`, `crate::model` and `crate::format`, and `render`
//! only for the text a report carries (`explained`); never `harness`.

use std::path::{Path, PathBuf};

pub(crate) mod atomic;
pub(crate) mod baseline;
pub(crate) mod cache;
mod history;
mod key;
pub(crate) mod limits;
pub(crate) mod live;
mod log;
mod reconcile;
mod report_file;
mod session_dir;
mod sessions;
pub(crate) mod slots;
pub(crate) mod stopping;
mod target;
#[cfg(test)]
mod test_support;
mod unrecorded;
pub(crate) mod writer;

pub(crate) use crate::format::store_lines::identity_fragment;
pub use history::{baseline_report, earlier_reports};
pub use key::sanitize_key;
pub(crate) use key::session_key;
pub use reconcile::{Executed, DIED_BEFORE_SEEN, NOT_RECORDED};
pub(crate) use session_dir::unrecorded_warning;
pub use session_dir::{Session, SessionData, KEEP_SESSIONS};
pub(crate) use sessions::finish_pruning;
pub(crate) use target::{tagged_target_dir_of, target_dir_of};

/// The message of a run that started and never reported.
pub use crate::model::record::DIED_MESSAGE;

/// Where the sessions of a target directory live: `PROB_STORE` when it is set (a relative path
/// is taken from the working directory), else `<target>/probtest/sessions`. A store of its own
/// keeps a tool's scratch runs (the flaky-test doctor's) out of the user's sessions and their
/// pruning.
pub fn sessions_dir(target_dir: &Path) -> PathBuf {
    match std::env::var_os(probtest_settings::STORE.variable) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => target_dir.join("probtest").join("sessions"),
    }
}

/// `error`, prefixed with the file it happened in, unless it names one already.
pub(crate) fn in_file(path: &Path, error: std::io::Error) -> std::io::Error {
    let shown = path.display().to_string();
    if error.to_string().contains(&shown) {
        return error;
    }
    std::io::Error::new(error.kind(), format!("{shown}: {error}"))
}

/// Writes `bytes` as the whole of `path`, as the JSON report is written: parent directories
/// created, a temporary file renamed into place (readers never see half a file), through a
/// symlink to its target, straight into a character device or a FIFO. A directory, a socket
/// or a block device at `path` is an error naming it. The Markdown, JUnit and HTML files go
/// through it.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    atomic::write_atomically(path, bytes)
}
