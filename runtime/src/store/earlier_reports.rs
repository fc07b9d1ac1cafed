//! The reports of a target directory's earlier sessions, for the HTML report's history: each
//! case's pass fraction over the sessions the store still holds, and the baseline's.
//!
//! Layer: store.

use std::path::Path;

use crate::model::Report;
use crate::store::Session;
use crate::types::stats::StatsConfig;

/// The reports of the sessions under `sessions_dir` other than `current`, oldest first, each
/// with its key. A session that cannot be read is left out: the history is a view of what the
/// store holds, not a check of it (`cargo probtest report --session` reads one and says why).
pub fn earlier_reports(sessions_dir: &Path, current: &str) -> Vec<(String, Report)> {
    let Ok(mut sessions) = Session::list(sessions_dir) else {
        return Vec::new();
    };
    // Listed newest first.
    sessions.reverse();
    sessions
        .into_iter()
        .filter(|session| session.key() != current && session.exists())
        .filter_map(|session| {
            let data = session.load().ok()?;
            Some((session.key().to_string(), data.into_report()))
        })
        .collect()
}

/// The report the session is compared with, when its settings name one (`PROB_BASELINE`,
/// resolved) and it reads; for the HTML report's dashed baseline line.
pub fn baseline_report(config: &StatsConfig) -> Option<Report> {
    let text = std::fs::read_to_string(config.baseline.as_deref()?).ok()?;
    Report::from_json(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_come_oldest_first_without_the_current_one() {
        let dir = std::env::temp_dir().join(format!("probtest-history-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for key in ["first", "second", "third"] {
            let session = Session::new(&dir, key);
            session.create().expect("a session");
            std::fs::write(session.runs_file(), "").expect("its log");
            // Sessions are ordered by their start, in nanoseconds.
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let keys: Vec<String> = earlier_reports(&dir, "third")
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        assert_eq!(keys, ["first", "second"]);
        assert!(earlier_reports(&dir.join("missing"), "x").is_empty());
        let mut config = StatsConfig::default();
        assert!(baseline_report(&config).is_none());
        let baseline = dir.join("baseline.json");
        let report = crate::model::tests::build(vec![crate::model::tests::record(
            "a::b",
            1,
            crate::types::status::Outcome::Pass,
            0.0,
            vec![],
        )]);
        crate::store::write_report(&report, &baseline).expect("written");
        config.baseline = Some(baseline.to_string_lossy().into_owned());
        let read = baseline_report(&config).expect("the baseline");
        assert_eq!(read.rows[0].info.case, "a::b");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
