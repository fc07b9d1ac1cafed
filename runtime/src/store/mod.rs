//! The session store: every run persisted as it happens, so that a report can cover every
//! process of a session (one `cargo nextest run`, or one `cargo test` with all its test
//! binaries) and a run whose process died is still accounted for.
//!
//! # A session directory
//!
//! Every file of `<sessions>/<session>/` ([`sessions_dir`]: `PROB_STORE`, else
//! `<target>/probtest/sessions`), with who writes it, who reads it, its format and how long it
//! lives. A session directory is transient: it lives until pruning removes it (the process that
//! creates a session keeps the newest `KEEP_SESSIONS`; see `sessions`). A binary file starts
//! with a magic naming its layout, so that a file of another layout is rebuilt or ignored,
//! never misread.
//!
//! | File | Written by | Read by | Format | Lives |
//! |---|---|---|---|---|
//! | `session.json` | the first process of the session (`Session::create`), once | listing and pruning sessions (when it started), `Session::latest` | JSON `{"key","started"}` (nanoseconds since the epoch) | the session |
//! | `runs.jsonl` | every process (`log`): a line per process, per case it describes, per run's start and end; `cargo probtest run --nextest` through each test binary (`Session::append_items`): what nextest will run; `cargo probtest run`, before running (`Session::expect_items`): the tests each binary's runner is to run | `Session::load` (`format::store_lines`) for every report, early stopping's tally (`case_counts`) | JSON lines tagged `"t"`: `process`, `case`, `items`, `expected`, `start`, `end`; each line begins with a newline, written in one `write` under an exclusive `File::lock` | the session |
//! | `unrecorded` | made with `session.json`; a process that could not record runs adds to it in place (`unrecorded`) | `Session::load` (a warning and a failing exit status) | 512 bytes: `PTU1`, the count, the first reason | the session |
//! | `procs/<proc>.slots` | a process of many runs (libtest's), through a memory map (`slots`) | `Session::load`; the process itself at exit (`SlotFile::read_own`); whether a process is alone in its session | 64-byte header (`PTS1`), then 32-byte slots, one per run | the session |
//! | `limits/<key>.<n>.lock` | processes holding slot `n` of a `concurrency` limit (`limits`) | the same: `flock`, no content | empty | the session |
//! | `limits/<key>.rate` | processes starting a run of a `per_minute` limit, under its `flock` | the same | the next free start, microseconds since the epoch, as text | the session |
//! | `report/lock` | each process keeping the session's JSON report (`live`) appends its report path at its first change | the same, at every change (the session's other report paths) | a line per path: its bytes in hex, a tab, its statistics settings as JSON when not the defaults; the file's `flock` orders every change to the report | the session |
//! | `report/<hash of path>/index` | `live`: rewritten in place at every change, whole at a rebuild (by a rebuild that leaves the report unpatched, a process's fold: its generation and creation time alone) | `live`, at every change | binary (`PTI4`, `live::state`): the report file's slots, the running totals and `model::aggregate::RowSums` | until the next rebuild rewrites it |
//! | `report/<hash of path>/rows-<generation>/<hash of case>.row` | `live`: made at a case's first run or at a rebuild of a report that is patched (one run per process), rewritten in place | `live`, at each run of the case | binary (`PTR3`, `live::state`): the slot of the row's tail, its counts and runs in flight | until the next generation's rebuild removes them |
//! | `report/<hash of path>/full` | `live`, when writing the whole report found the disk full | `live`, before writing the whole report again | the error's text; its age is a 10 s back-off | until a whole report is written |
//!
//! Not in a session directory: the cassette of `probtest::cached` (`cache`, under
//! `<target>/probtest/cache/`, shared by sessions), the baselines `cargo probtest baseline
//! save` keeps (`<target>/probtest/baselines/<NAME>.json`, reports a `PROB_BASELINE` name
//! refers to; `baseline_file`), and `.pruned-<session>-<pid>` beside the
//! sessions (a session being removed by `sessions`).
//!
//! The report itself (`PROB_JSON`) is wherever its setting says, written by `live`.
//!
//! # The log
//!
//! One shared file, each line written with a single `write` under an exclusive `File::lock`:
//! lines from concurrent processes never interleave, and a process of one run (nextest's)
//! creates no file of its own (one file per process would mean one new inode per test, which
//! costs more than the run's own bookkeeping). Each line starts with a newline, so a line torn
//! by a process killed mid-write is cut off by the next line and skipped by the loader, losing
//! nothing else. A start without an end is a run whose process died: it loads as an error,
//! never as a pass and never as missing.
//!
//! The code: [`Session`] is a session's directory (`session_dir`), whose key comes from `key`
//! and whose place from `target`; a process appends its lines through `log` and its slots
//! through `slots`, both handed to it by `writer`; `live` keeps the session's JSON report
//! current run by run; `atomic` writes whole files.
//!
//! Layer: store. May import `crate::types`, `crate::model` and `crate::format`, and `render`
//! only in `report_file` and `live/rebuild`, for the explanation texts a report carries (see
//! ARCHITECTURE.md); never `harness`.

use std::path::{Path, PathBuf};

pub(crate) mod atomic;
pub(crate) mod baseline_file;
pub(crate) mod cache;
pub(crate) mod case_counts;
mod earlier_reports;
mod key;
pub(crate) mod limits;
mod listed_items;
pub(crate) mod live;
mod log;
// Reconciling a session with what nextest ran is `cargo probtest run --nextest`'s alone.
#[cfg(feature = "_cli")]
mod reconcile;
mod report_file;
mod session_dir;
mod sessions;
pub(crate) mod slots;
mod target;
#[cfg(test)]
mod test_support;
mod unrecorded;
pub(crate) mod writer;

pub(crate) use crate::format::store_lines::identity_fragment;
pub(crate) use baseline_file::baseline_path;
pub(crate) use earlier_reports::{baseline_report, earlier_reports};
pub use key::sanitize_key;
pub(crate) use key::session_key;
#[cfg(feature = "_cli")]
pub use reconcile::Executed;
pub use report_file::write_report;
pub(crate) use session_dir::unrecorded_warning;
pub use session_dir::{Session, SessionData};
pub(crate) use sessions::finish_pruning;
pub(crate) use target::{tagged_target_dir_of, target_dir_of};

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
