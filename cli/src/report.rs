//! `cargo probtest report`: the summary of a recorded session (the latest, or a named one) or of
//! a JSON report, optionally written out as JSON, Markdown, JUnit XML or HTML.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use probtest::__cli::store::{self, Session};
use probtest::__cli::{OutputFile, SessionSource};
use probtest::analysis::Baseline;
use probtest::Report;

use crate::error::{Error, EXIT_FAILED};
use crate::outputs::Outputs;
use crate::target::{self, CargoOptions};
use crate::ui::Ui;

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

    /// Also write the report as Markdown to FILE, for CI pages: the cases that are not clean
    /// passes first, then every case in a collapsed table, totals, cost and tokens.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// Also write the report as JUnit XML to FILE: a testsuite per function, a testcase per
    /// case and per gate.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,

    /// Also write the report as one self-contained HTML page to FILE: a bar, interval and
    /// history per case, sortable and filterable, with each case's failing runs.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// The target directory whose sessions to read [default: CARGO_TARGET_DIR, else cargo's
    /// target directory of the current workspace].
    #[arg(long, value_name = "DIR", conflicts_with = "json")]
    pub target_dir: Option<PathBuf>,

    /// The workspace whose target directory holds the sessions (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH", conflicts_with = "json")]
    pub manifest_path: Option<PathBuf>,

    /// Compare with this earlier report: a baseline saved with `cargo probtest baseline save
    /// NAME`, or a JSON file (as PROB_BASELINE takes it).
    #[arg(long, value_name = "NAME|FILE")]
    pub baseline: Option<String>,

    /// Exit 0 even when the report fails (a gate's verdict, a failed or errored run).
    #[arg(long)]
    pub no_fail: bool,

    /// Instead of one session's summary, each case's pass fraction over the last N sessions the
    /// store keeps (10 without N), oldest first, and whether the latest differs from the one
    /// before (Newcombe's interval, Fisher's exact p).
    #[arg(
        long,
        value_name = "N",
        num_args = 0..=1,
        default_missing_value = "10",
        value_parser = clap::value_parser!(u32).range(1..),
        conflicts_with_all = ["json", "session", "json_out", "markdown", "junit", "html", "baseline"]
    )]
    pub history: Option<u32>,
}

/// Runs `cargo probtest report`: 0, or [`EXIT_FAILED`] when the report fails (unless
/// `--no-fail`).
pub fn report(args: &ReportArgs, ui: &Ui) -> Result<i32, Error> {
    if let Some(count) = args.history {
        return history(args, count as usize, ui);
    }
    let options = CargoOptions {
        target_dir: args.target_dir.clone(),
        for_metadata: target::manifest_args(args.manifest_path.as_deref()),
    };
    // The sessions directory and key of a session read from the store, for the HTML report's
    // history.
    let mut sessions_dir = None;
    let mut report = match &args.json {
        Some(path) => {
            let stored = load_json(path)?;
            let mut report = rebuild(&stored);
            // What the report's writer knew fails it too: a baseline it could not read, runs
            // it could not record.
            report.exit_status = report.exit_status.max(stored.exit_status);
            report
        }
        None => {
            let sessions = store::sessions_dir(&target::target_dir(&options)?);
            let session = find_session(&sessions, args.session.as_deref())?;
            ui.detail(&format!(
                "session {} in {}",
                session.key(),
                sessions.display()
            ));
            let (report, _) = load_session(&session)?;
            sessions_dir = Some((sessions, session.key().to_string()));
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
    if let Some(value) = &args.baseline {
        compare_with(&mut report, value, || target::target_dir(&options).ok())?;
    }
    let source = sessions_dir
        .as_ref()
        .map(|(dir, key)| SessionSource::of(dir, key));
    let target = target::target_dir(&options).ok();
    let diagnosed = diagnosed(args.json.as_deref(), target.as_deref());
    Outputs {
        diagnosed,
        ..outputs(args, source, ui)
    }
    .write(&report)?;
    Ok(exit_code(&report, args.no_fail))
}

/// The exit code of a report that `report` or `merge` printed: [`EXIT_FAILED`] when it fails,
/// unless `no_fail`; else 0.
pub fn exit_code(report: &Report, no_fail: bool) -> i32 {
    if report.exit_status != 0 && !no_fail {
        EXIT_FAILED
    } else {
        0
    }
}

/// Compares `report` with the baseline `value` names (`--baseline`): a saved baseline's name
/// (in the target directory `target` finds) or a file. The comparison and its verdicts replace
/// any the report had.
fn compare_with(
    report: &mut Report,
    value: &str,
    target: impl FnOnce() -> Option<PathBuf>,
) -> Result<(), Error> {
    let path = store::baseline_path(value, None, target);
    let shown = path.display().to_string();
    let earlier = match std::fs::read_to_string(&path) {
        Ok(text) => Report::from_json(&text)
            .map_err(|problem| Error::about(format!("--baseline {value}: {shown}"), problem))?,
        Err(error) => {
            let saved = path.parent().filter(|_| {
                store::is_baseline_name(value) && error.kind() == std::io::ErrorKind::NotFound
            });
            return Err(match saved {
                Some(dir) => Error::new(store::unknown_baseline(
                    &format!("--baseline {value}"),
                    value,
                    dir,
                )),
                None => Error::about(
                    format!("--baseline {value}"),
                    format!("cannot read {shown} ({error})"),
                ),
            });
        }
    };
    let had_baseline = report.stats_config.baseline.is_some();
    let before = report.exit_status;
    report.stats_config.baseline = Some(shown.clone());
    report.analyze_with(Some(&Baseline::of(&shown, &earlier)));
    if !had_baseline {
        // A failure the analysis does not see (runs that could not be recorded) stands.
        report.exit_status = report.exit_status.max(before);
    }
    Ok(())
}

/// The doctor's split of each row it diagnosed, read from its files beside the report:
/// beside `json` when a report file is rendered, else beside the reports the target
/// directory's `probtest/` holds (where a package's report goes by default). A file that does
/// not read is said in one line, and its splits are left out.
fn diagnosed(json: Option<&Path>, target: Option<&Path>) -> crate::export::Diagnosed {
    let files: Vec<PathBuf> = match (json, target) {
        (Some(json), _) => vec![probtest::__cli::doctor_file_of(json)],
        (None, Some(target)) => std::fs::read_dir(target.join("probtest"))
            .map(|entries| {
                let mut files: Vec<PathBuf> = entries
                    .flatten()
                    .map(|entry| entry.path())
                    .filter(|path| {
                        path.file_name()
                            .and_then(|name| name.to_str())
                            .is_some_and(|name| name.ends_with(".doctor.json"))
                    })
                    .collect();
                files.sort();
                files
            })
            .unwrap_or_default(),
        (None, None) => Vec::new(),
    };
    let mut diagnosed = crate::export::Diagnosed::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        match probtest::__cli::doctor_tags(&text) {
            Ok(tags) => diagnosed.extend(tags),
            Err(problem) => {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "probtest: {}: {problem}; the doctor's splits in it are not shown",
                    file.display()
                );
            }
        }
    }
    diagnosed
}

/// The outputs `cargo probtest report`'s flags ask for, and the summary.
fn outputs(args: &ReportArgs, source: Option<SessionSource>, ui: &Ui) -> Outputs {
    let flag = |path: &Option<PathBuf>| path.as_deref().map(OutputFile::flag);
    Outputs {
        json: flag(&args.json_out),
        markdown: flag(&args.markdown),
        junit: flag(&args.junit),
        html: flag(&args.html).map(|file| (file, source)),
        ..Outputs::default()
    }
    .with_summary(None, ui)
}

/// `cargo probtest report --history N`: the last `count` sessions' history, printed.
fn history(args: &ReportArgs, count: usize, ui: &Ui) -> Result<i32, Error> {
    let options = CargoOptions {
        target_dir: args.target_dir.clone(),
        for_metadata: target::manifest_args(args.manifest_path.as_deref()),
    };
    let sessions = store::sessions_dir(&target::target_dir(&options)?);
    let listed = Session::list(&sessions)
        .map_err(|error| Error::about(sessions.display(), format!("cannot list ({error})")))?;
    if listed.is_empty() {
        return Err(Error::about(
            sessions.display(),
            "holds no session; run the tests first",
        ));
    }
    let mut reports = Vec::new();
    let mut stderr = std::io::stderr().lock();
    // Listed newest first: the last `count` that read, then oldest first.
    for session in listed {
        if reports.len() == count {
            break;
        }
        match load_session(&session) {
            Ok((report, _)) => reports.push((session.key().to_string(), report)),
            Err(error) => {
                let _ = writeln!(
                    stderr,
                    "probtest: session {} is left out: {error}",
                    session.key()
                );
            }
        }
    }
    reports.reverse();
    let history = probtest::trend::History::build(&reports);
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(probtest::trend::render(&history, ui.color).as_bytes());
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
    // Function-level estimates and comparisons come from the records too; the comparison with
    // an earlier report needs that report, so the stored one is kept.
    rebuilt.analyze();
    rebuilt.baseline.clone_from(&report.baseline);
    rebuilt
}

/// The session `id` under `sessions`, or the latest one without an id.
pub fn find_session(sessions: &Path, id: Option<&str>) -> Result<Session, Error> {
    match id {
        Some(id) => {
            // `Session::new` would clean such an id to "" and name the sessions directory.
            if store::sanitize_key(id).is_empty() {
                return Err(Error::new(format!(
                    "--session {id:?}: not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"
                )));
            }
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
    let named = data.report.clone();
    // What the store could not account for (unreadable bytes, unrecorded runs) is among the
    // report's warnings.
    Ok((data.into_finished_report(), named))
}

/// Writes a report as JSON (through a symlink to its target, straight into a device or a
/// FIFO), with an error naming the file.
pub fn write_json(report: &Report, path: &Path) -> Result<(), Error> {
    Outputs::json_at(path).write(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("probtest-cli-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        dir
    }

    #[test]
    fn a_session_id_that_cleans_to_nothing_is_one_line_naming_it() {
        let sessions = temp_dir("sessions");
        // A sessions directory that a session of key "" would be: it must not be read as one.
        std::fs::write(sessions.join("runs.jsonl"), "").expect("a stray file");
        for id in ["..", ".", "..."] {
            let error = find_session(&sessions, Some(id)).expect_err("refused");
            assert_eq!(
                error.message(),
                format!(
                    "--session {id:?}: not a usable session key: it cleans to an empty name; use letters, digits, '.', '_' and '-'"
                )
            );
        }
        let error = find_session(&sessions, Some("a/../b")).expect_err("no such session");
        assert!(
            error
                .message()
                .starts_with("session a/../b: no such session in"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(sessions);
    }

    #[test]
    fn a_report_cannot_be_written_over_a_directory() {
        let dir = temp_dir("json-out");
        let report = Report::build(Vec::new(), Vec::new(), &Default::default());
        let error = write_json(&report, &dir).expect_err("a directory");
        assert_eq!(
            error.message(),
            format!(
                "cannot write the report: {} is a directory, not a file",
                dir.display()
            )
        );
        assert!(dir.is_dir());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[cfg(unix)]
    #[test]
    fn a_report_is_written_through_a_symlink() {
        let dir = temp_dir("json-link");
        let target = dir.join("target.json");
        std::fs::write(&target, "old").expect("a target");
        let link = dir.join("link.json");
        std::os::unix::fs::symlink("target.json", &link).expect("a link");
        let report = Report::build(Vec::new(), Vec::new(), &Default::default());
        write_json(&report, &link).expect("written");
        assert!(std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink());
        let text = std::fs::read_to_string(&target).expect("the target");
        Report::from_json(&text).expect("the report");
        let _ = std::fs::remove_dir_all(dir);
    }
}
