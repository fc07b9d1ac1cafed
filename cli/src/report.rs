//! `cargo probtest report`: the summary of a recorded session (the latest, or a named one) or of
//! a JSON report, optionally written out as JSON.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use probtest::store::{self, Session};
use probtest::{RenderOptions, Report};

use crate::error::Error;
use crate::target::{self, CargoOptions};

/// The arguments of `cargo probtest report`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct ReportArgs {
    /// Render the session with this id instead of the latest one (the directory name under
    /// `<target>/probtest/sessions/`).
    #[arg(long, value_name = "ID", conflicts_with = "json")]
    pub session: Option<String>,

    /// Render this JSON report (written with PROB_JSON, or by `merge`) instead of a session.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Also write the report as JSON to FILE (parent directories are created).
    #[arg(long, value_name = "FILE")]
    pub json_out: Option<PathBuf>,

    /// The target directory whose sessions to read [default: CARGO_TARGET_DIR, else cargo's
    /// target directory of the current workspace].
    #[arg(long, value_name = "DIR", conflicts_with = "json")]
    pub target_dir: Option<PathBuf>,
}

/// Runs `cargo probtest report`; the exit code on success is 0.
pub fn report(args: &ReportArgs) -> Result<i32, Error> {
    let report = match &args.json {
        Some(path) => rebuild(&load_json(path)?),
        None => {
            let options = CargoOptions {
                target_dir: args.target_dir.clone(),
                ..CargoOptions::default()
            };
            let sessions = store::sessions_dir(&target::target_dir(&options)?);
            let session = find_session(&sessions, args.session.as_deref())?;
            let (report, _) = load_session(&session)?;
            if report.records.is_empty() {
                let mut stderr = std::io::stderr().lock();
                let _ = writeln!(
                    stderr,
                    "probtest: session {} recorded no runs",
                    session.key()
                );
            }
            report
        }
    };
    let written = match &args.json_out {
        Some(path) => {
            write_json(&report, path)?;
            Some(path.display().to_string())
        }
        None => None,
    };
    print_summary(&report, written.as_deref());
    Ok(0)
}

/// Reads a JSON report, with an error naming the file when it is missing, unreadable, not a
/// probtest report or of a newer schema.
pub fn load_json(path: &Path) -> Result<Report, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| Error::about(path.display(), format!("cannot read ({error})")))?;
    Report::from_json(&text).map_err(|problem| Error::about(path.display(), problem))
}

/// The report rebuilt from its records: rows and totals are recomputed, never taken from the
/// stored (rounded) numbers.
pub fn rebuild(report: &Report) -> Report {
    let mut rebuilt = Report::build(
        report.cases().cloned(),
        report.records.clone(),
        &report.stats_config,
    );
    rebuilt.session.clone_from(&report.session);
    rebuilt
}

/// The session `id` under `sessions`, or the latest one without an id.
pub fn find_session(sessions: &Path, id: Option<&str>) -> Result<Session, Error> {
    match id {
        Some(id) => {
            let session = Session::new(sessions, id);
            if session.exists() {
                return Ok(session);
            }
            let known: Vec<String> = Session::list(sessions)
                .unwrap_or_default()
                .iter()
                .take(5)
                .map(|session| session.key().to_string())
                .collect();
            let hint = if known.is_empty() {
                String::new()
            } else {
                format!("; the latest are: {}", known.join(", "))
            };
            Err(Error::about(
                format!("session {id}"),
                format!("no such session in {}{hint}", sessions.display()),
            ))
        }
        None => Session::latest(sessions)
            .map_err(|error| {
                Error::about(sessions.display(), format!("cannot list sessions ({error})"))
            })?
            .ok_or_else(|| {
                Error::new(format!(
                    "no probtest session in {} (run the tests first: cargo test, cargo nextest run or cargo probtest run)",
                    sessions.display()
                ))
            }),
    }
}

/// The report of everything a session's processes recorded, and the report file they kept.
pub fn load_session(session: &Session) -> Result<(Report, Option<String>), Error> {
    let data = session.load().map_err(|error| {
        Error::about(
            format!("session {}", session.key()),
            format!("cannot read {} ({error})", session.dir().display()),
        )
    })?;
    Ok((
        Report::build(data.cases, data.records, &data.stats),
        data.report,
    ))
}

/// Writes a report as JSON, with an error naming the file.
pub fn write_json(report: &Report, path: &Path) -> Result<(), Error> {
    report
        .write_atomically(path)
        .map_err(|error| Error::about(path.display(), format!("cannot write ({error})")))
}

/// Prints the `probability` summary to stdout (nothing when the report has no rows), colored
/// when stdout wants colors, with a `Report:` line when `report_path` is given. A closed stdout
/// is not an error.
pub fn print_summary(report: &Report, report_path: Option<&str>) {
    let options = RenderOptions {
        color: probtest::color_enabled(),
        report_path,
    };
    let text = probtest::summary(report, &options);
    if text.is_empty() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
