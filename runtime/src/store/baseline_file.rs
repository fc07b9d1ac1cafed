//! The earlier report `PROB_BASELINE` names, read once per process (ours or
//! pytest-probability's), and the analysis of a session's report with it.
//!
//! Layer: store.

use std::sync::Mutex;

use crate::model::analysis::Baseline;
use crate::model::Report;
use crate::types::stats::StatsConfig;

/// The baseline `config` names, if any; an error names the setting, the file and the problem.
pub(crate) fn load(config: &StatsConfig) -> Result<Option<Baseline>, String> {
    let Some(path) = &config.baseline else {
        return Ok(None);
    };
    // Every report a process builds (each fold at exit, each margin judged) reads the same file.
    static LOADED: Mutex<Option<(String, Result<Baseline, String>)>> = Mutex::new(None);
    let mut loaded = LOADED.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some((known, result)) = loaded.as_ref().filter(|(known, _)| known == path) {
        debug_assert_eq!(known, path);
        return result.clone().map(Some);
    }
    let variable = probtest_settings::BASELINE.variable;
    let result = std::fs::read_to_string(path)
        .map_err(|error| format!("{variable}: cannot read {path}: {error}"))
        .and_then(|text| {
            Report::from_json(&text).map_err(|why| format!("{variable}: {path}: {why}"))
        })
        .map(|report| Baseline::of(path, &report));
    *loaded = Some((path.clone(), result.clone()));
    result.map(Some)
}

/// Analyses `report` against the baseline its settings name. A baseline that cannot be read
/// is a warning, and fails the session: a regression gate that cannot look is no pass.
pub(crate) fn analyze(report: &mut Report) {
    match load(&report.stats_config) {
        Ok(baseline) => report.analyze_with(baseline.as_ref()),
        Err(why) => {
            report.analyze();
            report.warnings.push(why);
            report.exit_status = 1;
        }
    }
}
