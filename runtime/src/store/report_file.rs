//! The JSON report file, written whole: its explanation texts come from `render`, its bytes
//! from `format`, and `atomic` puts them on disk. One of the two places where the store may
//! use `render` (the live report's rebuild is the other): text a report carries.
//!
//! Layer: store.

use std::io;
use std::path::Path;

use crate::model::Report;

/// Writes `report` as pretty JSON: parent directories created, a temporary file renamed into
/// place so that readers never see half a report; through a symlink to its target; straight
/// into a character device or a FIFO. A directory, a socket or a block device at `path` is an
/// error naming it. With `PROB_EXPLAIN` on, rows, gates, aggregates, metrics and comparisons
/// carry their `explanation`.
pub fn write_report(report: &Report, path: &Path) -> io::Result<()> {
    let explanations = crate::render::explained::explanations(report);
    let text = crate::format::report::whole(report, explanations.as_ref())?;
    crate::store::atomic::write_atomically(path, text.as_bytes())
}
