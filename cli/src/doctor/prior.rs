//! The evidence the user has before the doctor runs: a probtest row's record in the user's
//! report (its runs, which of them failed and how), which sizes the baseline and tells the
//! failure the user saw from one the doctor provokes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::doctor::cargo::TestBinary;
use crate::doctor::diagnose::Prior;
use crate::doctor::fingerprint::normalize;
use crate::doctor::runner::Row;

/// The report the row's runs were written to: `report` when given, else where the binary's own
/// runs write it (`PROB_JSON`, else `[package.metadata.probtest] json`).
pub fn report_path(binary: &TestBinary, report: Option<&Path>) -> Option<PathBuf> {
    if let Some(report) = report {
        return Some(report.to_path_buf());
    }
    let listing = binary.listing().ok()?;
    listing["report"].as_str().map(PathBuf::from)
}

/// The row's record in the report at `path`; `None` when the report is missing or holds no run
/// of the row.
pub fn prior_of(row: &Row, path: &Path) -> Option<Prior> {
    let text = std::fs::read_to_string(path).ok()?;
    let report: serde_json::Value = serde_json::from_str(&text).ok()?;
    let records: Vec<&serde_json::Value> = report["records"]
        .as_array()?
        .iter()
        .filter(|record| record["case"].as_str() == Some(row.case.as_str()))
        .collect();
    if records.is_empty() {
        return None;
    }
    let mut prior = Prior {
        report: path.display().to_string(),
        runs: 0,
        failed: 0,
        failing_runs: Vec::new(),
        fingerprints: BTreeSet::new(),
    };
    for record in records {
        let outcome = record["outcome"].as_str().unwrap_or_default();
        if !matches!(outcome, "pass" | "fail" | "error") {
            continue;
        }
        prior.runs += 1;
        if outcome == "pass" {
            continue;
        }
        prior.failed += 1;
        prior.failing_runs.extend(record["run"].as_u64());
        prior
            .fingerprints
            .insert(recorded_fingerprint(outcome, record["message"].as_str()));
    }
    Some(prior)
}

/// The fingerprint of a recorded failure, as the doctor's own runs of a row read theirs: the
/// outcome and the message's first line, normalized.
pub fn recorded_fingerprint(outcome: &str, message: Option<&str>) -> String {
    let first = message
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default();
    let kind = if outcome == "error" {
        "errored"
    } else {
        "failed"
    };
    format!("{kind}: {}", normalize(first))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rows_record_gives_its_rate_runs_and_fingerprints() {
        let dir = std::env::temp_dir().join(format!("probtest-prior-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join("report.json");
        let report = serde_json::json!({"records": [
            {"case": "triage::refund", "run": 1, "outcome": "pass"},
            {"case": "triage::refund", "run": 2, "outcome": "fail", "message": "assertion `left == right` failed\n  left: \"shipping\""},
            {"case": "triage::refund", "run": 3, "outcome": "error", "message": "timed out after 30 s"},
            {"case": "triage::other", "run": 1, "outcome": "fail", "message": "x"},
            {"case": "triage::refund", "run": 4, "outcome": "stopped"},
        ]});
        std::fs::write(&path, report.to_string()).expect("the report");
        let row = Row {
            case: "triage::refund".into(),
            items: Vec::new(),
        };
        let prior = prior_of(&row, &path).expect("the row's record");
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!((prior.runs, prior.failed), (3, 2));
        assert_eq!(prior.failing_runs, [2, 3]);
        assert!(prior
            .fingerprints
            .contains("failed: assertion `left == right` failed"));
        assert!(prior.fingerprints.contains("errored: timed out after N s"));
    }
}
