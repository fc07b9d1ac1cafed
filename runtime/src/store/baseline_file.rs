//! The earlier report `PROB_BASELINE` names, read once per process (ours or
//! pytest-probability's), and the analysis of a session's report with it. The value is a file,
//! or the name of a baseline `cargo probtest baseline save` kept under
//! `<target>/probtest/baselines/`.
//!
//! Layer: store.

use std::path::{Path, PathBuf};
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
        .map_err(|error| match saved_name(Path::new(path)) {
            Some((dir, name)) if error.kind() == std::io::ErrorKind::NotFound => {
                unknown_baseline(variable, &name, &dir)
            }
            _ => format!("{variable}: cannot read {path}: {error}"),
        })
        .and_then(|text| {
            Report::from_json(&text).map_err(|why| format!("{variable}: {path}: {why}"))
        })
        .map(|report| Baseline::of(path, &report));
    *loaded = Some((path.clone(), result.clone()));
    result.map(Some)
}

/// Where the saved baselines of a target directory live: `<target>/probtest/baselines/`, one
/// `<NAME>.json` each.
pub fn baselines_dir(target: &Path) -> PathBuf {
    target.join("probtest").join("baselines")
}

/// Whether `value` reads as a saved baseline's name rather than a path: letters, digits, `.`,
/// `_` and `-` only, not `.` or `..`, and no `.json` suffix (a report file's name).
pub fn is_baseline_name(value: &str) -> bool {
    !value.is_empty()
        && value != "."
        && value != ".."
        && !value.ends_with(".json")
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The report a `PROB_BASELINE` value names: the file `value` (relative to `root` when one is
/// given and it is relative) when there is one; else, for a name, the saved baseline
/// `<target>/probtest/baselines/<value>.json` of the target directory `target` finds; else
/// the file, which is then missing.
pub fn baseline_path(
    value: &str,
    root: Option<&Path>,
    target: impl FnOnce() -> Option<PathBuf>,
) -> PathBuf {
    let path = Path::new(value);
    let file = match root {
        Some(root) if path.is_relative() => root.join(path),
        _ => path.to_path_buf(),
    };
    if file.is_file() || !is_baseline_name(value) {
        return file;
    }
    match target() {
        Some(target) => baselines_dir(&target).join(format!("{value}.json")),
        None => file,
    }
}

/// The names of the baselines saved in `dir`, sorted; none when it cannot be read.
pub fn saved_baselines(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let name = name.strip_suffix(".json")?;
            is_baseline_name(name).then(|| name.to_string())
        })
        .collect();
    names.sort();
    names
}

/// The error of a saved baseline `name` that `dir` does not hold, listing those it does.
pub fn unknown_baseline(subject: &str, name: &str, dir: &Path) -> String {
    let saved = saved_baselines(dir);
    let known = if saved.is_empty() {
        "none is saved there".to_string()
    } else {
        format!("saved: {}", saved.join(", "))
    };
    format!(
        "{subject}: no saved baseline {name} in {} ({known}; `cargo probtest baseline save {name}` saves the latest session)",
        dir.display()
    )
}

/// The directory and name of a saved baseline's path (`.../probtest/baselines/<NAME>.json`).
fn saved_name(path: &Path) -> Option<(PathBuf, String)> {
    let dir = path.parent()?;
    let name = path.file_name()?.to_str()?.strip_suffix(".json")?;
    let inside = dir.file_name()? == "baselines" && dir.parent()?.file_name()? == "probtest";
    (inside && is_baseline_name(name)).then(|| (dir.to_path_buf(), name.to_string()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_letters_digits_dots_dashes_and_underscores_without_a_json_suffix() {
        for name in ["main", "v1.2", "before_fix", "release-3"] {
            assert!(is_baseline_name(name), "{name}");
        }
        for value in ["", ".", "..", "a/b", "old.json", "with space", "ü"] {
            assert!(!is_baseline_name(value), "{value}");
        }
    }

    #[test]
    fn a_file_wins_over_a_name_and_a_name_is_under_the_target_directory() {
        let dir = std::env::temp_dir().join(format!("probtest-baselines-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let target = dir.join("target");
        let found = || Some(target.clone());
        let saved = baselines_dir(&target).join("main.json");
        assert_eq!(baseline_path("main", Some(&dir), found), saved);
        std::fs::write(dir.join("main"), "{}").expect("a file named main");
        assert_eq!(baseline_path("main", Some(&dir), found), dir.join("main"));
        // A path is a path, found or not.
        assert_eq!(
            baseline_path("old.json", Some(&dir), found),
            dir.join("old.json")
        );
        assert_eq!(baseline_path("a/b", None, found), PathBuf::from("a/b"));
        assert_eq!(
            saved_name(&saved),
            Some((baselines_dir(&target), "main".into()))
        );
        assert_eq!(saved_name(&dir.join("main.json")), None);

        std::fs::create_dir_all(baselines_dir(&target)).expect("the baselines");
        std::fs::write(baselines_dir(&target).join("b.json"), "{}").expect("b");
        std::fs::write(baselines_dir(&target).join("a.json"), "{}").expect("a");
        std::fs::write(baselines_dir(&target).join("notes.txt"), "").expect("another file");
        assert_eq!(saved_baselines(&baselines_dir(&target)), ["a", "b"]);
        let error = unknown_baseline("PROB_BASELINE", "main", &baselines_dir(&target));
        assert!(
            error.starts_with("PROB_BASELINE: no saved baseline main in ")
                && error.contains("(saved: a, b;"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
