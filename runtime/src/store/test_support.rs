//! What the store's tests share: a fresh sessions directory, and a run's start line.

use std::fs;
use std::path::PathBuf;

use crate::format::store_lines::{identity_fragment, Line};
use crate::model::tests::{info, record};
use crate::store::log::ProcessFile;
use crate::store::Session;
use crate::types::stats::StatsConfig;
use crate::types::status::Outcome;

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

/// A session with one process that ran `classify::a` twice (a pass and a fail).
pub(crate) fn session_of_two_runs(name: &str) -> (PathBuf, Session) {
    let sessions = temp_sessions(name);
    let session = Session::new(&sessions, "s");
    let process =
        ProcessFile::create(session.clone(), true, None, &StatsConfig::default()).expect("created");
    process.queue_case(&info("classify::a")).expect("queued");
    let identity = identity_fragment("fixture", "evals", "classify::a");
    for (seq, outcome) in [(0, Outcome::Pass), (1, Outcome::Fail)] {
        let run = seq as u32 + 1;
        process.append_start(seq, &identity, run, 1).expect("start");
        let done = record("classify::a", run, outcome, 0.0, vec![]);
        process.append_end(seq, &done).expect("end");
    }
    (sessions, session)
}
