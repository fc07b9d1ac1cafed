//! Fixture crates: one package, or a workspace of packages, written under `target/e2e/` so
//! that an unchanged fixture is not rebuilt, with the workspace's lockfile.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{cli_binary, e2e_root, read_json, workspace_root, Run};

/// The library every fixture crate shares (`use fixture::run_number`).
const FIXTURE_LIB: &str = include_str!("../../../fixtures/lib.rs");

/// A fixture crate on disk.
#[derive(Clone, Debug)]
pub struct Fixture {
    dir: PathBuf,
}

/// What a fixture crate is made of; [`FixtureBuilder::build`] writes it.
pub struct FixtureBuilder {
    name: String,
    metadata: Option<String>,
    dev_deps: Vec<String>,
    /// tokio's features beyond `rt` and `macros`, which every fixture has.
    tokio_features: Vec<String>,
    files: Vec<(String, String)>,
}

impl Fixture {
    /// Starts a fixture crate named `pt-<name>` in `target/e2e/<name>/`. Names must be distinct
    /// across the suite: they share a target directory.
    pub fn builder(name: &str) -> FixtureBuilder {
        FixtureBuilder {
            name: name.to_string(),
            metadata: None,
            dev_deps: Vec::new(),
            tokio_features: Vec::new(),
            files: Vec::new(),
        }
    }

    /// A crate that already exists in `dir` (the workspace's own example, say), to run with the
    /// same scrubbed environment and shared target directory. Nothing is written.
    pub fn existing(dir: impl Into<PathBuf>) -> Fixture {
        Fixture { dir: dir.into() }
    }

    /// The crate's root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A path inside the crate.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.join(relative)
    }

    /// `cargo test --manifest-path <fixture> <args>`.
    pub fn cargo_test(&self, args: &[&str]) -> Run {
        self.run(&["test"], args)
    }

    /// `cargo nextest <subcommand> --manifest-path <fixture> <args>`.
    pub fn nextest(&self, subcommand: &str, args: &[&str]) -> Run {
        self.run(&["nextest", subcommand], args)
    }

    /// `cargo probtest <subcommand> <args>`, through the `cargo-probtest` binary built from
    /// this workspace; `runner_args` go after `--`, where the fixture's manifest is named.
    pub fn probtest(&self, subcommand: &str, args: &[&str], runner_args: &[&str]) -> Run {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        if subcommand == "run" {
            all.push("--".into());
            all.push("--manifest-path".into());
            all.push(self.dir.join("Cargo.toml").to_string_lossy().into_owned());
            all.extend(runner_args.iter().map(|s| s.to_string()));
        }
        Run {
            program: Some(cli_binary().to_path_buf()),
            subcommand: vec!["probtest".into(), subcommand.into()],
            args: all,
            manifest: None,
            cwd: self.dir.clone(),
            envs: Vec::new(),
            timeout: None,
        }
    }

    /// `cargo probtest <args>` as given, in the crate's directory: nothing names the manifest.
    pub fn cargo_probtest(&self, args: &[&str]) -> Run {
        Run {
            program: Some(cli_binary().to_path_buf()),
            subcommand: vec!["probtest".into()],
            args: args.iter().map(|s| s.to_string()).collect(),
            manifest: None,
            cwd: self.dir.clone(),
            envs: Vec::new(),
            timeout: None,
        }
    }

    fn run(&self, subcommand: &[&str], args: &[&str]) -> Run {
        Run {
            program: None,
            subcommand: subcommand.iter().map(|s| s.to_string()).collect(),
            args: args.iter().map(|s| s.to_string()).collect(),
            manifest: Some(self.dir.join("Cargo.toml")),
            cwd: self.dir.clone(),
            envs: Vec::new(),
            timeout: None,
        }
    }

    /// Removes a file or directory of the crate left by an earlier run, if any.
    pub fn remove(&self, relative: &str) {
        let path = self.path(relative);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).expect("remove an old fixture directory");
        } else if path.exists() {
            std::fs::remove_file(&path).expect("remove an old fixture file");
        }
    }

    /// Reads a JSON file of the crate.
    pub fn read_json(&self, relative: &str) -> Value {
        read_json(&self.path(relative))
    }

    /// Reads the lines of a log file the fixture's benches wrote (empty when missing).
    pub fn read_lines(&self, relative: &str) -> Vec<String> {
        std::fs::read_to_string(self.path(relative))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl FixtureBuilder {
    /// Adds `tests/<name>.rs`.
    pub fn test(mut self, name: &str, source: &str) -> Self {
        self.files
            .push((format!("tests/{name}.rs"), source.to_string()));
        self
    }

    /// Adds any other file, at `path` inside the crate (a data file, say).
    pub fn file(mut self, path: &str, content: &str) -> Self {
        self.files.push((path.to_string(), content.to_string()));
        self
    }

    /// Sets the body of `[package.metadata.probtest]`.
    pub fn metadata(mut self, toml: &str) -> Self {
        self.metadata = Some(toml.to_string());
        self
    }

    /// Adds a `[dev-dependencies]` line.
    pub fn dev_dep(mut self, line: &str) -> Self {
        self.dev_deps.push(line.to_string());
        self
    }

    /// Adds tokio's `features` (`time`, `rt-multi-thread`) to the `rt` and `macros` every
    /// fixture's tokio has.
    pub fn tokio_features(mut self, features: &[&str]) -> Self {
        self.tokio_features
            .extend(features.iter().map(|feature| feature.to_string()));
        self
    }

    /// Writes the crate. Files whose content is unchanged are left alone, so that cargo does
    /// not rebuild a fixture that did not change since the last run of the suite.
    pub fn build(self) -> Fixture {
        let dir = e2e_root().join(&self.name);
        let mut manifest = package_manifest(&format!("pt-{}", self.name));
        let features: Vec<String> = ["rt", "macros"]
            .into_iter()
            .map(str::to_string)
            .chain(self.tokio_features.iter().cloned())
            .map(|feature| format!("{feature:?}"))
            .collect();
        manifest.push_str(&format!(
            "tokio = {{ version = \"1\", features = [{}] }}\n",
            features.join(", ")
        ));
        for line in &self.dev_deps {
            manifest.push_str(line);
            manifest.push('\n');
        }
        manifest.push_str(
            "\n# Not a member of the probtest workspace that contains this directory.\n[workspace]\n",
        );
        if let Some(metadata) = &self.metadata {
            manifest.push_str("\n[package.metadata.probtest]\n");
            manifest.push_str(metadata);
            manifest.push('\n');
        }
        write_if_changed(&dir.join("Cargo.toml"), &manifest);
        write_if_changed(&dir.join("src/lib.rs"), FIXTURE_LIB);
        for (path, source) in &self.files {
            write_if_changed(&dir.join(path), source);
        }
        copy_lockfile(&dir);
        Fixture { dir }
    }
}

impl Fixture {
    /// A workspace of fixture packages in `target/e2e/<name>/`: one `pt-<name>-<member>` per
    /// `(member, metadata, source)`, with `metadata` as its `[package.metadata.probtest]` and
    /// `source` as its `tests/evals.rs`. Commands run on the workspace's root manifest.
    pub fn workspace(name: &str, members: &[(&str, &str, &str)]) -> Fixture {
        let dir = e2e_root().join(name);
        let names: Vec<String> = members
            .iter()
            .map(|(member, ..)| format!("{member:?}"))
            .collect();
        write_if_changed(
            &dir.join("Cargo.toml"),
            &format!(
                "# Not a member of the probtest workspace that contains this directory.\n\
                 [workspace]\nmembers = [{}]\nresolver = \"2\"\n",
                names.join(", ")
            ),
        );
        for (member, metadata, source) in members {
            let mut manifest = package_manifest(&format!("pt-{name}-{member}"));
            manifest.push_str("\n[package.metadata.probtest]\n");
            manifest.push_str(metadata);
            manifest.push('\n');
            let member_dir = dir.join(member);
            write_if_changed(&member_dir.join("Cargo.toml"), &manifest);
            write_if_changed(&member_dir.join("src/lib.rs"), FIXTURE_LIB);
            write_if_changed(&member_dir.join("tests/evals.rs"), source);
        }
        copy_lockfile(&dir);
        Fixture { dir }
    }
}

/// A fixture package's manifest up to its dev-dependencies, probtest the first of them; the
/// caller appends further dev-dependencies and sections.
fn package_manifest(package: &str) -> String {
    format!(
        r#"[package]
name = "{package}"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
name = "fixture"
path = "src/lib.rs"
doctest = false

[dev-dependencies]
probtest = {{ path = {runtime:?} }}
"#,
        runtime = workspace_root().join("runtime").to_string_lossy(),
    )
}

/// The workspace's lockfile pins the same versions and lets cargo resolve offline.
fn copy_lockfile(dir: &Path) {
    let lock = dir.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(workspace_root().join("Cargo.lock"), &lock)
            .expect("copy the workspace's Cargo.lock into the fixture");
    }
}

fn write_if_changed(path: &Path, content: &str) {
    if std::fs::read_to_string(path).is_ok_and(|old| old == content) {
        return;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create a fixture directory");
    }
    std::fs::write(path, content).expect("write a fixture file");
}
