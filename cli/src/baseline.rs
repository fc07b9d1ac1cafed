//! `cargo probtest baseline`: named baselines, as criterion keeps them. `save NAME` keeps a
//! session's report as `<target>/probtest/baselines/NAME.json`, which `PROB_BASELINE=NAME` and
//! `report --baseline NAME` compare with; `list` and `remove` manage them.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use probtest::__cli::store;
use probtest::Report;

use crate::error::Error;
use crate::report::{find_session, load_json, load_session, rebuild, write_json};
use crate::target::{self, CargoOptions};
use crate::ui::Ui;

/// The arguments of `cargo probtest baseline`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct BaselineArgs {
    /// What to do with the baselines.
    #[command(subcommand)]
    pub action: Action,
}

/// What `cargo probtest baseline` does.
#[derive(Subcommand, Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Save the latest session's report (or another session's, or a JSON report) as NAME.
    #[command(after_help = "Examples:\n  \
        cargo probtest baseline save main\n  \
        PROB_BASELINE=main cargo test\n  \
        cargo probtest report --baseline main")]
    Save(SaveArgs),
    /// List the saved baselines: name, when the report was made, its runs.
    List(Place),
    /// Remove a saved baseline.
    Remove(RemoveArgs),
}

/// Which target directory's baselines.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// The target directory [default: CARGO_TARGET_DIR, else cargo's target directory of the
    /// current workspace].
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// The workspace whose target directory it is (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
}

/// The arguments of `cargo probtest baseline save`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct SaveArgs {
    /// The baseline's name: letters, digits, '.', '_' and '-'.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Save this session instead of the latest one.
    #[arg(long, value_name = "ID", conflicts_with = "json")]
    pub session: Option<String>,

    /// Save this JSON report (a merged one, say) instead of a session.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Where the baselines are.
    #[command(flatten)]
    pub place: Place,
}

/// The arguments of `cargo probtest baseline remove`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct RemoveArgs {
    /// The baseline to remove.
    #[arg(value_name = "NAME")]
    pub name: String,

    /// Where the baselines are.
    #[command(flatten)]
    pub place: Place,
}

impl Place {
    fn target(&self) -> Result<PathBuf, Error> {
        target::target_dir(&CargoOptions {
            target_dir: self.target_dir.clone(),
            for_metadata: target::manifest_args(self.manifest_path.as_deref()),
        })
    }
}

/// Runs `cargo probtest baseline`: 0 when done.
pub fn baseline(args: &BaselineArgs, ui: &Ui) -> Result<i32, Error> {
    match &args.action {
        Action::Save(save) => self::save(save, ui),
        Action::List(place) => list(place),
        Action::Remove(remove) => self::remove(remove, ui),
    }
}

/// A name `PROB_BASELINE` reads as a name, or an error saying what one is.
fn checked(name: &str) -> Result<&str, Error> {
    if store::is_baseline_name(name) {
        Ok(name)
    } else {
        Err(Error::new(format!(
            "baseline name {name:?}: use letters, digits, '.', '_' and '-' (not `.` or `..`, no `.json` suffix)"
        )))
    }
}

fn save(args: &SaveArgs, ui: &Ui) -> Result<i32, Error> {
    let name = checked(&args.name)?;
    let target = args.place.target()?;
    let (report, from): (Report, String) = match &args.json {
        Some(path) => (rebuild(&load_json(path)?), path.display().to_string()),
        None => {
            let session = find_session(&store::sessions_dir(&target), args.session.as_deref())?;
            let (report, _) = load_session(&session)?;
            (report, format!("session {}", session.key()))
        }
    };
    if report.records.is_empty() {
        return Err(Error::about(from, "holds no runs: nothing to save"));
    }
    let path = store::baselines_dir(&target).join(format!("{name}.json"));
    write_json(&report, &path)?;
    if !ui.quiet {
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: saved {from} ({} runs) as baseline {name} ({}); compare with PROB_BASELINE={name} or `cargo probtest report --baseline {name}`",
            report.records.len(),
            path.display()
        );
    }
    Ok(0)
}

fn list(place: &Place) -> Result<i32, Error> {
    let dir = store::baselines_dir(&place.target()?);
    let names = store::saved_baselines(&dir);
    if names.is_empty() {
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: no baseline is saved in {}",
            dir.display()
        );
        return Ok(0);
    }
    let mut stdout = std::io::stdout().lock();
    for name in names {
        let path = dir.join(format!("{name}.json"));
        let line = match load_json(&path) {
            Ok(report) => format!(
                "{name}\t{}\t{} runs\t{}",
                Some(report.created.as_str())
                    .filter(|created| !created.is_empty())
                    .unwrap_or("-"),
                report.records.len(),
                report.session.as_deref().unwrap_or("-")
            ),
            Err(error) => format!("{name}\tunreadable: {error}"),
        };
        let _ = writeln!(stdout, "{line}");
    }
    Ok(0)
}

fn remove(args: &RemoveArgs, ui: &Ui) -> Result<i32, Error> {
    let name = checked(&args.name)?;
    let dir = store::baselines_dir(&args.place.target()?);
    let path = dir.join(format!("{name}.json"));
    match std::fs::remove_file(&path) {
        Ok(()) => {
            if !ui.quiet {
                let _ = writeln!(
                    std::io::stderr().lock(),
                    "probtest: removed baseline {name} ({})",
                    path.display()
                );
            }
            Ok(0)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(Error::new(
            store::unknown_baseline("baseline remove", name, &dir),
        )),
        Err(error) => Err(Error::about(
            path.display(),
            format!("cannot remove ({error})"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_name_is_checked_before_anything_is_written() {
        assert_eq!(checked("main"), Ok("main"));
        for bad in ["../x", "a/b", "x.json", "..", ""] {
            let error = checked(bad).expect_err("refused");
            assert!(
                error.message().starts_with("baseline name "),
                "{bad}: {error}"
            );
        }
    }
}
