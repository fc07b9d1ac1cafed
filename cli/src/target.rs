//! Finding cargo and the target directory whose `probtest/sessions/` the test processes record
//! into, the way cargo itself decides it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use cargo_metadata::camino::Utf8PathBuf;
use cargo_metadata::{Metadata, MetadataCommand};
use clap::Args;

use crate::error::Error;

/// The cargo to run: `CARGO` when cargo started this subcommand (so that `cargo +nightly
/// probtest` stays on nightly), else `cargo` from `PATH`.
pub fn cargo() -> OsString {
    std::env::var_os("CARGO")
        .filter(|cargo| !cargo.is_empty())
        .unwrap_or_else(|| OsString::from("cargo"))
}

/// Cargo's options for the workspace and its packages, taken by the subcommands that build
/// (`run`), as `cargo test` takes them, without a `--`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct PackageArgs {
    /// Path to the workspace's or package's Cargo.toml (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// The packages to test (cargo's `-p`), any number.
    #[arg(short = 'p', long = "package", value_name = "SPEC")]
    pub packages: Vec<String>,
}

impl PackageArgs {
    /// The same options for cargo.
    pub fn cargo_args(&self) -> Vec<OsString> {
        let mut args = manifest_args(self.manifest_path.as_deref());
        for package in &self.packages {
            args.push("-p".into());
            args.push(package.into());
        }
        args
    }
}

/// `--manifest-path PATH` for cargo, when a path is given.
pub fn manifest_args(path: Option<&Path>) -> Vec<OsString> {
    match path {
        Some(path) => vec!["--manifest-path".into(), path.into()],
        None => Vec::new(),
    }
}

/// What cargo would say of the manifest it looks for: `--manifest-path`'s file, else a
/// `Cargo.toml` in the working directory or above it. An error when there is none, before cargo
/// runs and fails in words about building.
pub fn check_manifest(path: Option<&Path>) -> Result<(), Error> {
    if let Some(path) = path {
        return if path.is_file() {
            Ok(())
        } else {
            Err(Error::about(
                format!("--manifest-path {}", path.display()),
                "no such file",
            ))
        };
    }
    let cwd = std::env::current_dir()
        .map_err(|error| Error::new(format!("cannot read the working directory ({error})")))?;
    if cwd.ancestors().any(|dir| dir.join("Cargo.toml").is_file()) {
        return Ok(());
    }
    Err(Error::new(format!(
        "no Cargo.toml in {} or any parent directory: run it inside the crate, or give --manifest-path",
        cwd.display()
    )))
}

/// Cargo's own options found in the arguments of a `cargo test` or `cargo nextest run`, before
/// a `--` that starts the test binaries' arguments.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CargoOptions {
    /// The last `--target-dir DIR` (or `--target-dir=DIR`).
    pub target_dir: Option<PathBuf>,
    /// Options that change which workspace and configuration `cargo metadata` sees:
    /// `--manifest-path`, `--config`, `-Z`, each with its value.
    pub for_metadata: Vec<OsString>,
}

impl CargoOptions {
    /// Picks cargo's options out of a runner's arguments.
    pub fn scan(args: &[OsString]) -> CargoOptions {
        let mut options = CargoOptions::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let Some(text) = arg.to_str() else { continue };
            if text == "--" {
                break;
            }
            if text == "--target-dir" {
                if let Some(value) = args.next() {
                    options.target_dir = Some(PathBuf::from(value));
                }
            } else if let Some(value) = text.strip_prefix("--target-dir=") {
                options.target_dir = Some(PathBuf::from(value));
            } else if matches!(text, "--manifest-path" | "--config" | "-Z") {
                if let Some(value) = args.next() {
                    options.for_metadata.push(arg.clone());
                    options.for_metadata.push(value.clone());
                }
            } else if ["--manifest-path=", "--config=", "-Z"]
                .iter()
                .any(|prefix| text.starts_with(prefix))
            {
                options.for_metadata.push(arg.clone());
            }
        }
        options
    }
}

/// The target directory: `--target-dir` among the options, else `CARGO_TARGET_DIR`, else what
/// `cargo metadata` reports (which applies `build.target-dir` from cargo's configuration).
pub fn target_dir(options: &CargoOptions) -> Result<PathBuf, Error> {
    if let Some(dir) = &options.target_dir {
        return Ok(absolute(dir));
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty()) {
        return Ok(absolute(Path::new(&dir)));
    }
    metadata_target_dir(&options.for_metadata)
}

/// A relative directory is relative to the working directory, as cargo takes it.
fn absolute(dir: &Path) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

fn metadata_target_dir(extra: &[OsString]) -> Result<PathBuf, Error> {
    metadata_path(extra, "the target directory", |metadata| {
        &metadata.target_directory
    })
}

/// The workspace root (the package's root outside a workspace), as `cargo metadata` reports it
/// for the workspace the options name: where a relative `PROB_JSON` or `PROB_HTML` lands, as
/// the test processes resolve them.
pub fn workspace_root(options: &CargoOptions) -> Result<PathBuf, Error> {
    metadata_path(&options.for_metadata, "the workspace root", |metadata| {
        &metadata.workspace_root
    })
}

/// The path `pick` takes from what `cargo metadata` reports; the error says it was looking for
/// `what`.
fn metadata_path(
    extra: &[OsString],
    what: &str,
    pick: fn(&Metadata) -> &Utf8PathBuf,
) -> Result<PathBuf, Error> {
    let cargo = cargo();
    let output = MetadataCommand::new()
        .cargo_path(&cargo)
        .no_deps()
        .cargo_command()
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| Error::about(display(&cargo), format!("cannot start ({error})")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = stderr
            .lines()
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .map(|line| line.trim_start_matches("error: ").to_string())
            .unwrap_or_else(|| format!("exited with {}", output.status));
        return Err(Error::new(format!(
            "cannot find {what}: cargo metadata failed ({reason})"
        )));
    }
    // cargo_metadata's `exec` would keep all of stderr in its error: the command is run here
    // so that the error names cargo's last line, and its stdout parsed by cargo_metadata.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json = stdout
        .lines()
        .find(|line| line.starts_with('{'))
        .unwrap_or_default();
    let metadata = MetadataCommand::parse(json).map_err(|error| {
        Error::new(format!(
            "cannot find {what}: cargo metadata printed no JSON ({error})"
        ))
    })?;
    Ok(pick(&metadata).clone().into_std_path_buf())
}

/// An `OsStr` for a message.
pub fn display(text: &OsStr) -> String {
    text.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn target_dir_and_metadata_options_are_found_before_the_separator() {
        let options = CargoOptions::scan(&args(&[
            "--test",
            "evals",
            "--target-dir",
            "first",
            "--manifest-path",
            "crate/Cargo.toml",
            "--target-dir=second",
            "--config=build.jobs=1",
            "--",
            "--target-dir",
            "for-the-test-binary",
        ]));
        assert_eq!(options.target_dir, Some(PathBuf::from("second")));
        assert_eq!(
            options.for_metadata,
            args(&[
                "--manifest-path",
                "crate/Cargo.toml",
                "--config=build.jobs=1"
            ])
        );
        assert_eq!(CargoOptions::scan(&args(&["--", "--target-dir", "x"])), {
            CargoOptions::default()
        });
    }

    #[test]
    fn package_options_become_cargos_and_a_manifest_path_is_seen_by_metadata() {
        let options = PackageArgs {
            manifest_path: Some(PathBuf::from("crate/Cargo.toml")),
            packages: vec!["a".into(), "b".into()],
        };
        let cargo = options.cargo_args();
        assert_eq!(
            cargo,
            args(&["--manifest-path", "crate/Cargo.toml", "-p", "a", "-p", "b"])
        );
        assert_eq!(
            CargoOptions::scan(&cargo).for_metadata,
            args(&["--manifest-path", "crate/Cargo.toml"])
        );
        assert!(PackageArgs::default().cargo_args().is_empty());
    }

    #[test]
    fn a_manifest_path_that_is_not_there_is_one_line_naming_it() {
        let error = check_manifest(Some(Path::new("/nonexistent/Cargo.toml"))).expect_err("none");
        assert_eq!(
            error.message(),
            "--manifest-path /nonexistent/Cargo.toml: no such file"
        );
        // This package's tests run in its directory, below the workspace's Cargo.toml.
        assert!(check_manifest(None).is_ok());
    }

    #[test]
    fn an_explicit_target_dir_is_made_absolute() {
        let options = CargoOptions {
            target_dir: Some(PathBuf::from("some/target")),
            ..CargoOptions::default()
        };
        let dir = target_dir(&options).expect("found");
        assert!(dir.is_absolute(), "{}", dir.display());
        assert!(dir.ends_with("some/target"));
    }
}
