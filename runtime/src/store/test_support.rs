//! What the store's tests share: a fresh sessions directory, and a run's start line.

use std::fs;
use std::path::PathBuf;

use crate::format::store_lines::Line;

pub(crate) fn temp_sessions(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("probtest-store-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

pub(super) fn start_line<'a>(proc: &'a str, case: &'a str, seq: u64, run: u32) -> Line<'a> {
    Line::Start {
        proc: proc.into(),
        seq,
        package: "fixture".into(),
        module: "evals".into(),
        case: case.into(),
        run,
        attempt: 1,
    }
}
