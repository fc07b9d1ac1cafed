//! The one place `cargo probtest` builds its reporter: every output a command writes, whether
//! a flag (`report --markdown FILE`), a setting (`PROB_HTML`, `PROB_JSON`) or the CI's
//! environment (`GITHUB_STEP_SUMMARY`) asked for it, becomes a sink of the runtime's
//! [`Reporter`] here. A new output is its sink's module (`crate::export`), a field of
//! [`Outputs`] and a line in [`Outputs::reporter`].

use std::path::{Path, PathBuf};

use probtest::__cli::{Html, Json, OutputFile, Reporter, SessionSource, Sink, SinkError, Summary};
use probtest::Report;
use probtest_settings as table;

use crate::error::Error;
use crate::export::{Junit, Markdown, StepSummary};
use crate::target::{self, CargoOptions};
use crate::ui::Ui;

/// What one command writes of a report, in the reporter's order: the JSON report, the other
/// files, the summary.
#[derive(Default)]
pub struct Outputs {
    /// The JSON report.
    pub json: Option<OutputFile>,
    /// The Markdown report (`report --markdown`).
    pub markdown: Option<OutputFile>,
    /// The JUnit XML report (`report --junit`).
    pub junit: Option<OutputFile>,
    /// The HTML page, with the sessions its history block reads.
    pub html: Option<(OutputFile, Option<SessionSource>)>,
    /// The job summary a CI names (`GITHUB_STEP_SUMMARY`).
    pub step_summary: Option<PathBuf>,
    /// Files a setting names that cannot be written at all: each error is said where the file
    /// would have been written.
    pub unwritable: Vec<SinkError>,
    /// The terminal summary, with the report its `Report:` line names (`Some(None)`: none).
    pub summary: Option<Option<String>>,
    /// Whether the summary is colored; `None`: as stdout wants it.
    pub color: Option<bool>,
    /// The doctor's split of each row it diagnosed, for the Markdown and HTML reports.
    pub diagnosed: crate::export::Diagnosed,
}

impl Outputs {
    /// The files the environment asks of a session's end that its test processes could not
    /// write whole: the job summary `GITHUB_STEP_SUMMARY` names, and the page `PROB_HTML` names
    /// (with the session's history from `source`), since the test processes of a nextest run
    /// hold one run each and write none, and those of `cargo test` each wrote the session as
    /// they last saw it.
    pub fn of_environment(options: &CargoOptions, source: SessionSource) -> Outputs {
        let mut outputs = Outputs {
            step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|path| !path.is_empty())
                .map(PathBuf::from),
            ..Outputs::default()
        };
        match setting_file(table::HTML.variable, options) {
            Some(Ok(file)) => outputs.html = Some((file, Some(source))),
            Some(Err(error)) => outputs.unwritable.push(error),
            None => {}
        }
        outputs
    }

    /// The JSON report alone, at a path a flag gave.
    pub fn json_at(path: &Path) -> Outputs {
        Outputs {
            json: Some(OutputFile::flag(path)),
            ..Outputs::default()
        }
    }

    /// These outputs and the terminal summary, its `Report:` line naming `report_line`,
    /// colored as `ui` decided; no summary under `-q`.
    pub fn with_summary(self, report_line: Option<String>, ui: &Ui) -> Outputs {
        Outputs {
            summary: (!ui.quiet).then_some(report_line),
            color: Some(ui.color),
            ..self
        }
    }

    /// The reporter that writes these outputs: one sink each.
    pub fn reporter(self) -> Reporter {
        let Outputs {
            json,
            markdown,
            junit,
            html,
            step_summary,
            unwritable,
            summary,
            color,
            diagnosed,
        } = self;
        let mut reporter = Reporter::new();
        if let Some(file) = json {
            reporter = reporter.json(Json::new(file));
        }
        for error in unwritable {
            reporter = reporter.sink(Unwritable(error));
        }
        if let Some(path) = step_summary {
            reporter = reporter.sink(StepSummary(path));
        }
        if let Some(file) = markdown {
            reporter = reporter.sink(Markdown(file, diagnosed.clone()));
        }
        if let Some(file) = junit {
            reporter = reporter.sink(Junit(file));
        }
        if let Some((file, source)) = html {
            reporter = reporter.sink(Html::new(file, source).diagnosed(diagnosed));
        }
        if let Some(report_line) = summary {
            let summary = Summary::naming(report_line);
            reporter = reporter.summary(match color {
                Some(color) => summary.colored(color),
                None => summary,
            });
        }
        reporter
    }

    /// Writes every output of `report`; the first that could not be written is the error, the
    /// others are said on stderr before it.
    pub fn write(self, report: &Report) -> Result<(), Error> {
        let mut errors = self.reporter().write(report).into_iter();
        let Some(first) = errors.next() else {
            return Ok(());
        };
        let mut stderr = std::io::stderr().lock();
        for error in errors {
            use std::io::Write;
            let _ = writeln!(stderr, "error: {error}");
        }
        Err(Error::new(first))
    }
}

/// A file a setting names that cannot be written at all: its error, said where the file would
/// have been written.
struct Unwritable(SinkError);

impl Sink for Unwritable {
    fn write(&mut self, _: &Report) -> Result<(), SinkError> {
        Err(self.0.clone())
    }
}

/// The file the setting `name` (`PROB_JSON`, `PROB_HTML`) names, when it is set: relative to
/// the workspace root, as the test processes resolve it (`OutputFile::resolve`, the one rule);
/// an error when that root cannot be found.
pub fn setting_file(name: &str, options: &CargoOptions) -> Option<Result<OutputFile, SinkError>> {
    let value = std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())?;
    let root = if Path::new(&value).is_absolute() {
        None
    } else {
        match target::workspace_root(options) {
            Ok(root) => Some(root),
            Err(error) => return Some(Err(SinkError::new(format!("{name}={value}: {error}")))),
        }
    };
    Some(Ok(OutputFile::setting(name, &value, root.as_deref())))
}
