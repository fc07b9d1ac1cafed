//! The sessions folder: listing its sessions, and pruning the old ones when a session is made.
//!
//! Layer: store.

use std::fs;
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::format::store_files::SessionFile;
use crate::store::session_dir::{Session, KEEP_SESSIONS};

pub(super) fn list_sessions(sessions_dir: &Path) -> io::Result<Vec<(u128, Session)>> {
    let entries = match fs::read_dir(sessions_dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let mut sessions = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(PRUNED_PREFIX)
        {
            continue;
        }
        let dir = entry.path();
        // A folder is a session when a process made it one: anything else under the sessions
        // root (a stray folder, a file) is not listed, and never pruned.
        let is_session = dir.join("session.json").is_file() || dir.join("runs.jsonl").is_file();
        if !dir.is_dir() || !is_session {
            continue;
        }
        let started = fs::read(dir.join("session.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<SessionFile>(&bytes).ok())
            .map(|file| file.started)
            .or_else(|| {
                let modified = entry.metadata().ok()?.modified().ok()?;
                Some(modified.duration_since(UNIX_EPOCH).ok()?.as_nanos())
            })
            .unwrap_or(0);
        let key = entry.file_name().to_string_lossy().into_owned();
        sessions.push((started, Session::listed(key, dir)));
    }
    Ok(sessions)
}

/// Removes what an earlier pruning left half removed under `sessions_dir`, and counts the other
/// folders there, which may be sessions, without reading them.
fn sweep_and_count(sessions_dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(sessions_dir) else {
        return 0;
    };
    let mut count = 0;
    for entry in entries.filter_map(Result::ok) {
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(PRUNED_PREFIX)
        {
            // A removal another process has in progress may end either way: both ignore what
            // the other removed.
            let _ = fs::remove_dir_all(entry.path());
        } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            count += 1;
        }
    }
    count
}

/// When the process that creates a session prunes the old ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pruning {
    /// Before the session's first run.
    Now,
    /// On a thread of its own, while the runs go on, and done by the time the process exits
    /// (see [`finish_pruning`]): for a process of many runs, whose exit waits for it. Removing
    /// a folder of earlier sessions takes longer than a thousand short runs' bookkeeping.
    Later,
}

/// The pruning this process left running on a thread of its own.
static PRUNING: std::sync::Mutex<Option<std::thread::JoinHandle<()>>> = std::sync::Mutex::new(None);

/// Names a pruned session's folder takes while it is removed, so that a removal cut short (its
/// process killed) leaves no half session for readers to list; the next pruning ends it.
const PRUNED_PREFIX: &str = ".pruned-";

pub(super) fn prune_later(sessions_dir: &Path, current: &str) {
    let (dir, key) = (sessions_dir.to_path_buf(), current.to_string());
    let spawned = std::thread::Builder::new()
        .name("probtest-prune".into())
        .spawn(move || {
            // Housekeeping: a session folder left for the next pruning costs nothing now.
            let _ = prune(&dir, KEEP_SESSIONS, &key);
        });
    match spawned {
        Ok(handle) => {
            let mut pruning = PRUNING.lock().unwrap_or_else(|poison| poison.into_inner());
            *pruning = Some(handle);
        }
        Err(_) => {
            let _ = prune(sessions_dir, KEEP_SESSIONS, current);
        }
    }
}

/// Waits for the pruning this process left running, if any: at its exit.
pub(crate) fn finish_pruning() {
    let handle = PRUNING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
        .take();
    if let Some(handle) = handle {
        let _ = handle.join();
    }
}

/// Removes all but the newest `keep` sessions, never `current`, and what an earlier pruning
/// left half removed.
pub(super) fn prune(sessions_dir: &Path, keep: usize, current: &str) -> io::Result<()> {
    // Listing the sessions reads when each started: it is done once there are a quarter more
    // than `keep`, which it prunes back to `keep`, so that most new sessions only count folders.
    if sweep_and_count(sessions_dir) <= keep + keep / 4 {
        return Ok(());
    }
    let mut sessions = list_sessions(sessions_dir)?;
    sessions.sort_by_key(|(started, _)| std::cmp::Reverse(*started));
    for (_, session) in sessions.into_iter().skip(keep) {
        if session.key() != current && !in_use(&session) {
            // Renamed first, then removed: another process may be pruning the same session at
            // the same time, and then one rename fails and the other removes it.
            let pruned = sessions_dir.join(format!(
                "{PRUNED_PREFIX}{}-{}",
                session.key(),
                std::process::id()
            ));
            if fs::rename(session.dir(), &pruned).is_ok() {
                let _ = fs::remove_dir_all(&pruned);
            }
        }
    }
    // What another process's pruning left half removed goes too.
    sweep_and_count(sessions_dir);
    Ok(())
}

/// How recently a session's log must have changed for the session to count as running.
const IN_USE_WITHIN: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether another process is still recording into `session`: its log changed lately. A long
/// session (a nextest run of thousands of tests) started before the newest `keep` may still be
/// running, and removing it would lose the runs recorded so far.
fn in_use(session: &Session) -> bool {
    fs::metadata(session.runs_file())
        .and_then(|meta| meta.modified())
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .is_some_and(|age| age < IN_USE_WITHIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::test_support::temp_sessions;

    #[test]
    fn a_session_still_recording_is_never_pruned() {
        let sessions = temp_sessions("prune-in-use");
        let most = KEEP_SESSIONS + KEEP_SESSIONS / 4;
        for index in 0..=most {
            let session = Session::new(&sessions, &format!("s{index:02}"));
            session.create().expect("created");
            if index == 0 {
                // The oldest is still recording while the others start.
                fs::write(session.runs_file(), "\n").expect("a log line");
            }
        }
        assert!(sessions.join("s00").exists());
        prune(&sessions, 1, "none").expect("pruned");
        assert!(sessions.join("s00").exists());
        assert!(!sessions.join("s01").exists());
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn only_session_folders_are_listed() {
        let sessions = temp_sessions("listing");
        Session::new(&sessions, "real").create().expect("created");
        fs::create_dir_all(sessions.join("report")).expect("a stray folder");
        fs::write(sessions.join("runs.jsonl"), "").expect("a stray file");
        let keys: Vec<String> = Session::list(&sessions)
            .expect("listed")
            .iter()
            .map(|s| s.key().to_string())
            .collect();
        assert_eq!(keys, ["real"]);
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn pruning_later_ends_by_exit_and_a_removal_cut_short_is_finished() {
        let sessions = temp_sessions("prune-later");
        let most = KEEP_SESSIONS + KEEP_SESSIONS / 4;
        for index in 0..most {
            Session::new(&sessions, &format!("s{index:02}"))
                .create()
                .expect("created");
        }
        // A pruned session whose removal was cut short: never listed, removed next time.
        let cut_short = sessions.join(format!("{PRUNED_PREFIX}old-1"));
        fs::create_dir_all(&cut_short).expect("made");
        fs::write(cut_short.join("runs.jsonl"), "").expect("written");
        assert_eq!(list_sessions(&sessions).expect("listed").len(), most);
        Session::new(&sessions, "new")
            .create_with(Pruning::Later)
            .expect("created");
        finish_pruning();
        assert_eq!(
            list_sessions(&sessions).expect("listed").len(),
            KEEP_SESSIONS
        );
        assert!(!sessions.join("s00").exists());
        assert!(sessions.join("new").exists());
        assert!(!cut_short.exists());
        let _ = fs::remove_dir_all(sessions);
    }

    #[test]
    fn old_sessions_are_pruned_but_never_the_current_one() {
        let sessions = temp_sessions("prune");
        let most = KEEP_SESSIONS + KEEP_SESSIONS / 4;
        for index in 0..most {
            Session::new(&sessions, &format!("s{index:02}"))
                .create()
                .expect("created");
        }
        // Up to a quarter more than are kept stay until the next session.
        assert_eq!(list_sessions(&sessions).expect("listed").len(), most);
        Session::new(&sessions, &format!("s{most:02}"))
            .create()
            .expect("created");
        let left = list_sessions(&sessions).expect("listed");
        assert_eq!(left.len(), KEEP_SESSIONS);
        let latest = Session::latest(&sessions).expect("listed").expect("some");
        assert_eq!(latest.key(), format!("s{most:02}"));
        let oldest_kept = most + 1 - KEEP_SESSIONS;
        assert!(!sessions.join(format!("s{:02}", oldest_kept - 1)).exists());
        // The current session survives even when it is the oldest.
        let current = format!("s{oldest_kept:02}");
        prune(&sessions, 1, &current).expect("pruned");
        assert!(sessions.join(&current).exists());
        assert!(sessions.join(format!("s{most:02}")).exists());
        assert!(!sessions.join(format!("s{:02}", most - 1)).exists());
        let _ = fs::remove_dir_all(sessions);
    }
}
