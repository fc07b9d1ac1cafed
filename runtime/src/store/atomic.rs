//! Whole files written so that readers never see half of one: a temporary file beside the
//! target, renamed into place.
//!
//! Layer: store.

use std::fs;
use std::io;
use std::path::Path;

use crate::model::Report;

/// Writes `bytes` to a temporary file beside `path`, then renames it into place.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report.json".into());
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    fs::write(&temp, bytes)?;
    fs::rename(&temp, path).inspect_err(|_| {
        let _ = fs::remove_file(&temp);
    })
}

impl Report {
    /// Writes the report as pretty JSON: parent directories created, a temporary file renamed
    /// into place so that readers never see half a report.
    pub fn write_atomically(&self, path: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        write_atomically(path, text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use crate::model::tests::{build, record};
    use crate::types::status::Outcome;

    #[test]
    fn atomic_write_creates_parents_and_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("probtest-model-{}", std::process::id()));
        let path = dir.join("nested/deeper/report.json");
        let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
        report.write_atomically(&path).expect("written");
        let text = std::fs::read_to_string(&path).expect("readable");
        assert!(text.ends_with("}\n"));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("listable")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
