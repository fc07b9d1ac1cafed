//! The HTML report as a sink: the self-contained page, with the earlier sessions' pass
//! fractions for its history and the baseline the report's settings name. The one place the
//! page's history is gathered, for a test process at exit and for `cargo probtest`.
//!
//! Layer: harness.

use std::path::{Path, PathBuf};

use super::{OutputFile, Sink, SinkError};
use crate::model::Report;

/// The page's file, and the session it shows.
pub struct Html {
    file: OutputFile,
    source: Option<SessionSource>,
    /// The doctor's split of each row it diagnosed, by row id.
    diagnosed: std::collections::BTreeMap<String, String>,
}

/// The stored session a report is of: the page names it and draws the history of the
/// sessions beside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSource {
    dir: PathBuf,
    key: String,
    /// Whether the page shows the session as the store holds it rather than the report given
    /// (a test process's report holds its own runs; the store, every process's so far).
    reload: bool,
}

impl SessionSource {
    /// Session `key` of the sessions directory `dir`, of which the report given is the whole.
    pub fn of(dir: &Path, key: &str) -> SessionSource {
        SessionSource {
            dir: dir.to_path_buf(),
            key: key.to_string(),
            reload: false,
        }
    }

    /// Session `key` of `dir`, read back from the store for the page.
    pub(crate) fn reloaded(dir: &Path, key: &str) -> SessionSource {
        SessionSource {
            reload: true,
            ..SessionSource::of(dir, key)
        }
    }
}

impl Html {
    /// The page of the report at `file`, of the stored session `source` when there is one.
    pub fn new(file: OutputFile, source: Option<SessionSource>) -> Html {
        Html {
            file,
            source,
            diagnosed: std::collections::BTreeMap::new(),
        }
    }

    /// This page, with the doctor's split beside each row it diagnosed (`model`, `harness:
    /// time`), by row id.
    #[cfg(feature = "_cli")]
    pub fn diagnosed(self, diagnosed: std::collections::BTreeMap<String, String>) -> Html {
        Html { diagnosed, ..self }
    }
}

impl Sink for Html {
    fn write(&mut self, report: &Report) -> Result<(), SinkError> {
        let page = page(report, self.source.as_ref(), &self.diagnosed)
            .map_err(|error| self.file.failed("HTML report", &error))?;
        crate::store::write_file(self.file.path(), page.as_bytes())
            .map_err(|error| self.file.failed("HTML report", &error))
    }

    fn summary_line(&self) -> Option<(&'static str, String)> {
        Some(("HTML", self.file.shown().to_string()))
    }
}

#[cfg(feature = "html")]
fn page(
    report: &Report,
    source: Option<&SessionSource>,
    diagnosed: &std::collections::BTreeMap<String, String>,
) -> Result<String, String> {
    use std::borrow::Cow;

    use crate::export::{html, History, HistorySession};
    use crate::store::{self, Session};
    let mut whole = Cow::Borrowed(report);
    let mut sessions = Vec::new();
    if let Some(source) = source {
        let session = Session::new(&source.dir, &source.key);
        if source.reload {
            // A store that cannot be read back still leaves this process's runs for a page.
            if let Ok(data) = session.load() {
                whole = Cow::Owned(data.into_report());
            }
        }
        if source.reload || whole.session.is_none() {
            whole.to_mut().session = Some(session.key().to_string());
        }
        sessions = store::earlier_reports(&source.dir, session.key())
            .iter()
            .map(|(key, report)| HistorySession::of(key, report))
            .collect();
    }
    let history = History {
        sessions,
        baseline: store::baseline_report(&whole.stats_config)
            .map(|baseline| HistorySession::of("baseline", &baseline)),
        diagnosed: diagnosed.clone(),
    };
    Ok(html(&whole, &history))
}

#[cfg(not(feature = "html"))]
fn page(
    _: &Report,
    _: Option<&SessionSource>,
    _: &std::collections::BTreeMap<String, String>,
) -> Result<String, String> {
    Err("this build of probtest leaves out its `html` feature".to_string())
}
