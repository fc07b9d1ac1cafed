//! The one owner of a report's outputs. A [`Reporter`] is built once, from a test process's
//! settings (`Reporter::from_settings`, at exit) or from `cargo probtest`'s flags, and writes
//! every output of one [`Report`]: the JSON report first (the summary's `Report:` line names it
//! once it is written), then every other file, then the terminal summary. Each sink is a module
//! of its own; a new one is that module plus one line where the reporter is built
//! (`from_settings` here for a test process, `cargo probtest`'s `outputs` for the CLI).
//!
//! Layer: harness.

mod html;
mod json;
mod summary;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::harness::settings::{ReportPath, Settings};
use crate::model::Report;

pub use html::{Html, SessionSource};
pub use json::Json;
pub use summary::Summary;

/// One output of a report: a file, a job summary, anything that takes a whole [`Report`].
pub trait Sink {
    /// Writes the report, or says in one line, naming the file, why it could not.
    fn write(&mut self, report: &Report) -> Result<(), SinkError>;

    /// The line the summary names the written output on, as a label and the file
    /// (`("HTML", "report.html")`), printed after its `Report:` line; `None` for none.
    fn summary_line(&self) -> Option<(&'static str, String)> {
        None
    }
}

/// Why a sink could not write its output: one line that names the file (and the setting that
/// named it, if one did).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkError(String);

impl SinkError {
    #[cfg(feature = "_cli")]
    /// An error of its own words.
    pub fn new(message: impl Into<String>) -> SinkError {
        SinkError(message.into())
    }

    #[cfg(feature = "_cli")]
    /// The message, one line.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a sink writes, and how its errors name it: by the setting that named it
/// (`PROB_HTML=report.html`), or by the path a flag gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputFile {
    path: PathBuf,
    shown: String,
    setting: Option<String>,
}

impl OutputFile {
    #[cfg(feature = "_cli")]
    /// A file a flag named, shown as given.
    pub fn flag(path: &Path) -> OutputFile {
        OutputFile {
            path: path.to_path_buf(),
            shown: path.display().to_string(),
            setting: None,
        }
    }

    #[cfg(feature = "_cli")]
    /// A file the setting `name` names: its value resolved with [`OutputFile::resolve`], the
    /// value as the user gave it in errors (`name=value`) and in the summary.
    pub fn setting(name: &str, value: &str, root: Option<&Path>) -> OutputFile {
        OutputFile {
            path: OutputFile::resolve(value, root),
            shown: value.to_string(),
            setting: Some(format!("{name}={value}")),
        }
    }

    /// The one rule of a relative report path (`PROB_JSON`, `PROB_HTML`): relative to the
    /// workspace root (the package's root outside a workspace), so that every package's test
    /// processes, which cargo test and nextest start in their own package's directory, and
    /// `cargo probtest` agree on the file. Without a root, as given.
    pub fn resolve(value: &str, root: Option<&Path>) -> PathBuf {
        match root {
            Some(root) => root.join(value),
            None => PathBuf::from(value),
        }
    }

    /// The file a test process's settings name.
    pub(crate) fn of_settings(name: &str, path: &ReportPath) -> OutputFile {
        OutputFile {
            path: path.resolved.clone(),
            shown: path.display.clone(),
            setting: Some(format!("{name}={}", path.display)),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file as the user named it, for the summary's lines.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The error of a sink that could not write `what` (`HTML report`) here.
    pub fn failed(&self, what: &str, error: &dyn fmt::Display) -> SinkError {
        let text = error.to_string();
        match &self.setting {
            Some(setting) => SinkError(format!("{setting}: cannot write the {what} ({text})")),
            // The store's errors name the path already, and say what it is when it is refused.
            None if text.contains(&self.shown) => {
                SinkError(format!("cannot write the {what}: {text}"))
            }
            None => SinkError(format!("{}: cannot write the {what} ({text})", self.shown)),
        }
    }
}

/// Every output of one report, in the order they are written: the JSON report, the other
/// files, the summary (which names the files that were written).
#[derive(Default)]
pub struct Reporter {
    json: Option<Json>,
    files: Vec<Box<dyn Sink>>,
    summary: Option<Summary>,
}

impl Reporter {
    /// A reporter with no output yet.
    pub fn new() -> Reporter {
        Reporter::default()
    }

    /// The outputs of a test process at exit, from its settings: `PROB_JSON` (or what the
    /// session store already wrote there, `json_written`), `PROB_HTML` (the session as the
    /// store holds it when this process recorded into it, `joined`), and the summary unless
    /// `PROB_SUMMARY=0`.
    pub(crate) fn from_settings(
        settings: &Settings,
        joined: bool,
        json_written: Option<std::io::Result<()>>,
    ) -> Reporter {
        let mut reporter = Reporter::new();
        if let Some(path) = &settings.json {
            // The error names the file already; the setting may be the config's `json`.
            let file = OutputFile {
                setting: None,
                ..OutputFile::of_settings(probtest_settings::JSON.variable, path)
            };
            reporter = reporter.json(match json_written {
                Some(written) => Json::written(file, written),
                None => Json::new(file),
            });
        }
        if let Some(path) = &settings.html {
            let source = joined
                .then(|| crate::harness::recorder::target_dir().ok())
                .flatten()
                .map(|target| {
                    SessionSource::reloaded(
                        &crate::store::sessions_dir(&target),
                        &settings.session_key,
                    )
                });
            reporter = reporter.sink(Html::new(
                OutputFile::of_settings(probtest_settings::HTML.variable, path),
                source,
            ));
        }
        if settings.summary {
            reporter = reporter.summary(Summary::new());
        }
        reporter
    }

    /// Writes the JSON report; the summary's `Report:` line names it once it is written.
    pub fn json(mut self, json: Json) -> Reporter {
        self.json = Some(json);
        self
    }

    /// Writes one more file (after the JSON report, before the summary).
    pub fn sink(mut self, sink: impl Sink + 'static) -> Reporter {
        self.files.push(Box::new(sink));
        self
    }

    /// Prints the summary last.
    pub fn summary(mut self, summary: Summary) -> Reporter {
        self.summary = Some(summary);
        self
    }

    /// Writes every output of `report`; what could not be written, one error each, in order.
    pub fn write(self, report: &Report) -> Vec<SinkError> {
        let Reporter {
            json,
            files,
            summary,
        } = self;
        let mut errors = Vec::new();
        let mut written_json = None;
        if let Some(mut json) = json {
            match json.write(report) {
                Ok(()) => written_json = Some(json.shown().to_string()),
                Err(error) => errors.push(error),
            }
        }
        let mut written = Vec::new();
        for mut sink in files {
            match sink.write(report) {
                Ok(()) => written.extend(sink.summary_line()),
                Err(error) => errors.push(error),
            }
        }
        if let Some(summary) = summary {
            summary.print(report, written_json.as_deref(), &written);
        }
        errors
    }
}
