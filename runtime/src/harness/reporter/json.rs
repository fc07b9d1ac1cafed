//! The JSON report as a sink: written whole and atomically, or taken as written when the
//! session store's fold already wrote it.
//!
//! Layer: harness.

use std::io;

use super::{OutputFile, Sink, SinkError};
use crate::model::Report;

/// The JSON report's file.
pub struct Json {
    file: OutputFile,
    /// What the store's fold did with the file, when it wrote it: nothing is left to write.
    written: Option<io::Result<()>>,
}

impl Json {
    /// Writes the report to `file`.
    pub fn new(file: OutputFile) -> Json {
        Json {
            file,
            written: None,
        }
    }

    /// The report the session store already wrote to `file` (or failed to).
    pub(crate) fn written(file: OutputFile, written: io::Result<()>) -> Json {
        Json {
            file,
            written: Some(written),
        }
    }

    /// The file as the summary's `Report:` line names it.
    pub(crate) fn shown(&self) -> &str {
        self.file.shown()
    }
}

impl Sink for Json {
    fn write(&mut self, report: &Report) -> Result<(), SinkError> {
        let path = self.file.path();
        let written = match self.written.take() {
            Some(written) => written,
            None => crate::store::write_report(report, path),
        };
        written.map_err(|error| self.file.failed("report", &error))
    }
}
