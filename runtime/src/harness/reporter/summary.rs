//! The terminal summary as a sink: the `probability` section on stdout, colored when stdout
//! wants colors, with a `Report:` line naming the JSON report once it is written, and a line
//! for each other file written (`HTML:`).
//!
//! Layer: harness.

use std::io::Write;

use crate::model::Report;
use crate::render;

/// The summary on stdout.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The report file the `Report:` line names when the reporter writes none itself.
    report_line: Option<String>,
    /// Colors chosen by the caller (`cargo probtest --color`); `None`: as stdout wants them.
    color: Option<bool>,
}

impl Summary {
    /// The summary, with a `Report:` line when the reporter writes the JSON report.
    pub fn new() -> Summary {
        Summary::default()
    }

    #[cfg(feature = "_cli")]
    /// The summary, naming a report file someone else wrote (and checked) on its `Report:`
    /// line, unless the reporter writes one itself.
    pub fn naming(report_line: Option<String>) -> Summary {
        Summary {
            report_line,
            color: None,
        }
    }

    #[cfg(feature = "_cli")]
    /// This summary, colored or not as the caller chose rather than as the environment says.
    pub fn colored(self, color: bool) -> Summary {
        Summary {
            color: Some(color),
            ..self
        }
    }

    /// Prints the summary (nothing when the report has no rows); a closed stdout is not an
    /// error.
    pub(super) fn print(
        &self,
        report: &Report,
        written_json: Option<&str>,
        files: &[(&'static str, String)],
    ) {
        let options = render::Options {
            color: self.color.unwrap_or_else(render::color_enabled),
            report_path: written_json.or(self.report_line.as_deref()),
            files,
        };
        let text = render::summary(report, &options);
        if text.is_empty() {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
}
