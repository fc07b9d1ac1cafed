//! The test binaries the doctor runs: built once with `cargo test --no-run`, whose JSON
//! messages (read with `cargo_metadata`) name each binary and its package, then listed
//! (`--list`) to find the test.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::{Artifact, Message};
use probtest_settings as table;

use crate::error::Error;
use crate::target::{self, CargoOptions};
use crate::ui::Ui;

/// Which test targets to build, as `cargo test` selects them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// `-p PKG`, any number.
    pub packages: Vec<String>,
    /// `--test TARGET`.
    pub test_target: Option<String>,
    /// `--lib`.
    pub lib: bool,
    /// More `cargo test` arguments (features, profile).
    pub extra: Vec<OsString>,
    /// `--manifest-path PATH`.
    pub manifest_path: Option<PathBuf>,
}

impl Selection {
    /// The arguments that select the same targets for `cargo test`.
    pub fn cargo_args(&self) -> Vec<OsString> {
        let mut args = target::manifest_args(self.manifest_path.as_deref());
        for package in &self.packages {
            args.push("-p".into());
            args.push(package.into());
        }
        if let Some(test) = &self.test_target {
            args.push("--test".into());
            args.push(test.into());
        }
        if self.lib {
            args.push("--lib".into());
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// A test binary cargo built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestBinary {
    /// The executable.
    pub path: PathBuf,
    /// Its package's name.
    pub package: String,
    /// Its target's name (`evals` for `tests/evals.rs`).
    pub target: String,
    /// Its target's kind as cargo names it: `test`, `lib`, `bin`, ...
    pub kind: String,
    /// The package's directory: where cargo runs the binary, and `CARGO_MANIFEST_DIR`.
    pub manifest_dir: PathBuf,
    /// The target directory cargo built it in, as cargo decides it for the build's options.
    pub target_dir: PathBuf,
}

impl TestBinary {
    /// The `cargo test` arguments that select this binary alone.
    pub fn select_args(&self) -> Vec<String> {
        let mut args = vec!["-p".to_string(), self.package.clone()];
        match self.kind.as_str() {
            "lib" | "rlib" | "proc-macro" | "cdylib" | "dylib" | "staticlib" => {
                args.push("--lib".into())
            }
            kind => {
                args.push(format!("--{kind}"));
                args.push(self.target.clone());
            }
        }
        args
    }

    /// The names of the binary's tests, in the order libtest runs them (by name), ignored ones
    /// left out.
    pub fn tests(&self) -> Result<Vec<String>, Error> {
        let output = Command::new(&self.path)
            .args(["--list", "--format", "terse"])
            .current_dir(&self.manifest_dir)
            .env(table::SUMMARY.variable, "0")
            .stderr(Stdio::null())
            .output()
            .map_err(|error| {
                Error::about(self.path.display(), format!("cannot list tests ({error})"))
            })?;
        let mut names: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| line.strip_suffix(": test"))
            .map(str::to_string)
            .collect();
        names.sort();
        Ok(names)
    }
}

/// Builds the selected test targets and returns their binaries; with no manifest to build
/// from, an error that says so.
pub fn build(selection: &Selection, ui: &Ui) -> Result<Vec<TestBinary>, Error> {
    target::check_manifest(selection.manifest_path.as_deref())?;
    let cargo = target::cargo();
    let mut command = Command::new(&cargo);
    ui.pass_on(&mut command);
    let output = command
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(ui.cargo_flags(false))
        .args(selection.cargo_args())
        // Cargo's progress and errors go to the user's terminal as they happen: building a
        // workspace can take minutes, and a silent wait reads as a hang.
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| Error::about("cargo test --no-run", format!("cannot start ({error})")))?;
    if !output.status.success() {
        return Err(Error::new(
            "cargo test --no-run failed: the tests do not build (see above)",
        ));
    }
    let target_dir = target::target_dir(&CargoOptions::scan(&selection.cargo_args()))?;
    let binaries: Vec<TestBinary> = Message::parse_stream(output.stdout.as_slice())
        .filter_map(|message| match message {
            Ok(Message::CompilerArtifact(artifact)) => test_binary(artifact, &target_dir),
            _ => None,
        })
        .collect();
    if binaries.is_empty() {
        return Err(Error::new(
            "cargo test --no-run built no test binary for this selection",
        ));
    }
    Ok(binaries)
}

/// The test binary of a `compiler-artifact` message, if it is one: built with the test profile,
/// with an executable.
fn test_binary(artifact: Artifact, target_dir: &Path) -> Option<TestBinary> {
    if !artifact.profile.test {
        return None;
    }
    Some(TestBinary {
        path: artifact.executable?.into_std_path_buf(),
        package: package_name(&artifact.package_id.repr)?,
        target: artifact.target.name,
        kind: artifact.target.kind.first()?.to_string(),
        manifest_dir: artifact.manifest_path.parent()?.as_std_path().to_path_buf(),
        target_dir: target_dir.to_path_buf(),
    })
}

/// A package's name from cargo's package id: `path+file:///w/evals#pt-evals@0.1.0`,
/// `path+file:///w/evals#0.1.0` (the name is the directory's), or the older
/// `pt-evals 0.1.0 (path+file:///w/evals)`.
pub(crate) fn package_name(id: &str) -> Option<String> {
    if let Some((name, _)) = id.split_once(' ') {
        return Some(name.to_string());
    }
    let (url, fragment) = id.rsplit_once('#')?;
    match fragment.split_once('@') {
        Some((name, _)) => Some(name.to_string()),
        None => Some(url.rsplit('/').next()?.to_string()),
    }
}

impl TestBinary {
    /// What the binary lists of itself at start-up (`PROB_ITEMS_OUT`) while libtest lists its
    /// tests, so that none runs: its generated `items`, its `cases`, the `stats_config` it
    /// resolves and a bad setting's `problem`. `Null` for a binary without probtest.
    pub fn listing(&self) -> Result<serde_json::Value, Error> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let file = std::env::temp_dir().join(format!(
            "probtest-items-{}-{}-{}.json",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            self.target
        ));
        let listed = Command::new(&self.path)
            .args(["--list", "--format", "terse"])
            .current_dir(&self.manifest_dir)
            .env("CARGO_MANIFEST_DIR", &self.manifest_dir)
            .env(table::ITEMS_OUT.variable, &file)
            .env(table::SUMMARY.variable, "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|error| {
                Error::about(self.path.display(), format!("cannot list tests ({error})"))
            })?;
        let text = std::fs::read_to_string(&file).ok();
        let _ = std::fs::remove_file(&file);
        if !listed.success() {
            return Err(Error::about(
                self.path.display(),
                format!("listing its tests failed ({listed})"),
            ));
        }
        Ok(text
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default())
    }

    /// The generated items of this binary's report row `row`, each with its run, in run
    /// order, as the binary itself lists them; empty for a binary without probtest or without
    /// that row.
    pub fn row_items(&self, row: &str) -> Vec<(String, u32)> {
        items_of_row(&self.listing().unwrap_or_default(), row)
    }

    /// The probtest row whose run item `item` is, with every item of that row, from one listing;
    /// `None` for a plain test.
    pub fn row_of(&self, item: &str) -> Option<crate::doctor::runner::Row> {
        let value = self.listing().ok()?;
        let case = value["items"]
            .as_array()?
            .iter()
            .find(|listed| listed["name"].as_str() == Some(item))?["row"]
            .as_str()?
            .to_string();
        let items = items_of_row(&value, &case);
        Some(crate::doctor::runner::Row { case, items })
    }
}

/// The items a binary's listing gives for row `row`, each with its run, in run order.
fn items_of_row(listing: &serde_json::Value, row: &str) -> Vec<(String, u32)> {
    let mut items: Vec<(String, u32)> = listing["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["row"].as_str() == Some(row))
        .filter_map(|item| {
            Some((
                item["name"].as_str()?.to_string(),
                u32::try_from(item["run"].as_u64()?).ok()?,
            ))
        })
        .collect();
    items.sort_by_key(|(_, run)| *run);
    items
}

/// The one test named `name` among `binaries`: its binary and its list of siblings. `name` may
/// also be a report row's id (`classify::refund`), whose run items are its tests: the first
/// run's item stands for the row. An error lists up to ten candidates when no test or more than
/// one has that name.
pub fn find_test_or_row(
    binaries: &[TestBinary],
    name: &str,
) -> Result<(TestBinary, Vec<String>, String), Error> {
    let direct = find(binaries, name);
    let Err(not_found) = direct else {
        return direct.map(|(binary, tests)| (binary, tests, name.to_string()));
    };
    if !not_found.message().starts_with("no test named") {
        return Err(not_found);
    }
    let rows: Vec<(&TestBinary, Vec<(String, u32)>)> = binaries
        .iter()
        .map(|binary| (binary, binary.row_items(name)))
        .filter(|(_, items)| !items.is_empty())
        .collect();
    match rows.as_slice() {
        [(binary, items)] => {
            let (binary, item) = ((*binary).clone(), items[0].0.clone());
            let tests = binary.tests()?;
            Ok((binary, tests, item))
        }
        [] => Err(not_found),
        _ => Err(Error::new(format!(
            "`{name}` names a row in {} targets; choose one with --test or --lib",
            rows.len()
        ))),
    }
}

/// The one test named `name` among `binaries`: its binary and its list of siblings. An error
/// lists up to ten candidates when no test or more than one has that name.
pub fn find(binaries: &[TestBinary], name: &str) -> Result<(TestBinary, Vec<String>), Error> {
    let mut found = Vec::new();
    let mut all = Vec::new();
    for binary in binaries {
        let tests = binary.tests()?;
        if tests.iter().any(|test| test == name) {
            found.push((binary.clone(), tests.clone()));
        }
        all.extend(tests.into_iter().map(|test| (binary.target.clone(), test)));
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => {
            let wanted = name.rsplit("::").next().unwrap_or(name);
            let mut candidates: Vec<String> = all
                .iter()
                .filter(|(_, test)| test.contains(wanted))
                .map(|(_, test)| test.clone())
                .collect();
            if candidates.is_empty() {
                candidates = all.iter().map(|(_, test)| test.clone()).collect();
            }
            candidates.truncate(10);
            Err(Error::new(format!(
                "no test named `{name}` in the selected targets{}",
                if candidates.is_empty() {
                    String::new()
                } else {
                    format!("; candidates: {}", candidates.join(", "))
                }
            )))
        }
        _ => Err(Error::new(format!(
            "`{name}` names a test in {} targets ({}); choose one with --test or --lib",
            found.len(),
            found
                .iter()
                .map(|(binary, _)| binary.target.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_come_from_every_id_format() {
        for (id, name) in [
            ("path+file:///w/evals#pt-evals@0.1.0", "pt-evals"),
            ("path+file:///w/pt-evals#0.1.0", "pt-evals"),
            ("pt-evals 0.1.0 (path+file:///w/evals)", "pt-evals"),
            (
                "registry+https://github.com/rust-lang/crates.io-index#serde@1.0.0",
                "serde",
            ),
        ] {
            assert_eq!(package_name(id).as_deref(), Some(name), "{id}");
        }
    }

    #[test]
    fn test_artifacts_are_read_from_cargo_messages() {
        let line = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/fx#pt-fx@0.0.0","manifest_path":"/w/fx/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"order","src_path":"/w/fx/tests/order.rs","edition":"2021","doc":false,"test":true,"doctest":false},"profile":{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":true},"features":[],"filenames":["/t/debug/deps/order-1"],"executable":"/t/debug/deps/order-1","fresh":false}"#;
        let artifact = |line: &str| {
            let target_dir = Path::new("/t");
            Message::parse_stream(line.as_bytes()).find_map(|message| {
                match message.expect("a message") {
                    Message::CompilerArtifact(artifact) => test_binary(artifact, target_dir),
                    _ => None,
                }
            })
        };
        let binary = artifact(line).expect("a test binary");
        assert_eq!(binary.package, "pt-fx");
        assert_eq!(binary.select_args(), ["-p", "pt-fx", "--test", "order"]);
        assert_eq!(binary.manifest_dir, PathBuf::from("/w/fx"));
        let lib = line.replace(r#"["test"]"#, r#"["lib"]"#);
        assert_eq!(
            artifact(&lib).expect("a lib").select_args(),
            ["-p", "pt-fx", "--lib"]
        );
        let build = line.replace(r#""test":true}"#, r#""test":false}"#);
        assert_eq!(artifact(&build), None);
    }
}
