//! Shared harness of the end-to-end tests: writes small fixture crates under
//! `<workspace>/target/e2e/`, runs real `cargo test` and `cargo nextest run` on them with a
//! scrubbed environment, and parses what they print and write.

// Each e2e test binary uses a different part of the harness.
#![allow(dead_code)]

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Skips a test that the machine does not allow, with a message past libtest's capture; under
/// `CI=true` the test fails instead, so that CI never passes a test it did not run.
pub fn unavailable(what: &str, why: &str) {
    use std::io::Write;
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{what} is not possible on this CI machine: {why}");
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "skipped: {what} is not possible here: {why}"
    );
}

/// The library every fixture crate shares (`use fixture::run_number`).
const FIXTURE_LIB: &str = include_str!("../../fixtures/lib.rs");

/// Long enough for the first build of probtest and tokio on a slow machine while other tests
/// hold the target directory's lock; short enough that a hung run does not hang the suite.
const TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// The workspace root: the parent of this package.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the e2e package lives inside the workspace")
        .to_path_buf()
}

/// Where fixture crates live.
pub fn e2e_root() -> PathBuf {
    workspace_root().join("target").join("e2e")
}

/// One target directory for every fixture, so that dependencies build once.
pub fn shared_target_dir() -> PathBuf {
    e2e_root().join("target")
}

/// A fixture crate on disk.
#[derive(Clone, Debug)]
pub struct Fixture {
    name: String,
    dir: PathBuf,
}

/// What a fixture crate is made of; [`FixtureBuilder::build`] writes it.
pub struct FixtureBuilder {
    name: String,
    metadata: Option<String>,
    dev_deps: Vec<String>,
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
            files: Vec::new(),
        }
    }

    /// A crate that already exists in `dir` (the workspace's own example, say), to run with the
    /// same scrubbed environment and shared target directory. Nothing is written.
    pub fn existing(name: &str, dir: impl Into<PathBuf>) -> Fixture {
        Fixture {
            name: name.to_string(),
            dir: dir.into(),
        }
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

    /// Writes the crate. Files whose content is unchanged are left alone, so that cargo does
    /// not rebuild a fixture that did not change since the last run of the suite.
    pub fn build(self) -> Fixture {
        let dir = e2e_root().join(&self.name);
        let mut manifest = package_manifest(&format!("pt-{}", self.name));
        manifest.push_str("tokio = { version = \"1\", features = [\"rt\", \"macros\"] }\n");
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
        Fixture {
            name: self.name,
            dir,
        }
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
        Fixture {
            name: name.to_string(),
            dir,
        }
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

/// The `cargo-probtest` binary of this workspace, built once into the shared target directory
/// (not the workspace's own, which the outer cargo holds while the tests run).
pub fn cli_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["build", "-p", "cargo-probtest", "--manifest-path"])
            .arg(workspace_root().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", shared_target_dir())
            .env_remove("RUSTFLAGS")
            .stdin(Stdio::null())
            .output()
            .expect("run cargo build -p cargo-probtest");
        assert!(
            output.status.success(),
            "building cargo-probtest failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        shared_target_dir().join("debug").join("cargo-probtest")
    })
}

/// A command to run on a fixture: cargo, or the `cargo-probtest` binary.
pub struct Run {
    program: Option<PathBuf>,
    subcommand: Vec<String>,
    args: Vec<String>,
    manifest: Option<PathBuf>,
    cwd: PathBuf,
    envs: Vec<(String, String)>,
}

/// Variables of the outer test process that would change what the nested cargo or the fixture's
/// tests do.
const SCRUBBED: &[&str] = &[
    "CI",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUST_TEST_THREADS",
    "RUST_TEST_NOCAPTURE",
    "RUST_TEST_SHUFFLE",
    "RUST_TEST_SHUFFLE_SEED",
    // Set by the outer cargo for the test process it runs, meaningless to another package.
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];

const SCRUBBED_PREFIXES: &[&str] = &[
    "PROB_",
    "NEXTEST_",
    "CARGO_PKG_",
    "CARGO_BIN_EXE_",
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "__CARGO",
];

fn scrubbed(name: &str) -> bool {
    SCRUBBED.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p))
}

impl Run {
    /// Sets a variable for the nested cargo and the tests it runs.
    pub fn env(mut self, name: &str, value: impl AsRef<str>) -> Self {
        self.envs
            .push((name.to_string(), value.as_ref().to_string()));
        self
    }

    /// Runs cargo from `dir` instead of the fixture's root.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = dir.into();
        self
    }

    /// Runs the command to completion.
    pub fn run(self) -> Output {
        // The outer cargo's own binary, so that the nested one is the same toolchain.
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(self.program.clone().map_or(cargo, Into::into));
        command.args(&self.subcommand);
        if let Some(manifest) = &self.manifest {
            command.arg("--manifest-path").arg(manifest);
        }
        command
            .args(&self.args)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars_os() {
            if let Some(name) = name.to_str().filter(|name| scrubbed(name)) {
                command.env_remove(name);
            }
        }
        command
            .env("CARGO_TARGET_DIR", shared_target_dir())
            .env("CARGO_TERM_COLOR", "never")
            .env("CARGO_TERM_PROGRESS_WHEN", "never");
        for (name, value) in &self.envs {
            command.env(name, value);
        }
        let description = format!(
            "{} {} {}{} {} (in {})",
            self.envs
                .iter()
                .map(|(name, value)| format!("{name}={value:?}"))
                .collect::<Vec<_>>()
                .join(" "),
            self.program
                .as_ref()
                .map_or("cargo".to_string(), |p| p.display().to_string()),
            self.subcommand.join(" "),
            self.manifest.as_ref().map_or(String::new(), |m| format!(
                " --manifest-path {}",
                m.display()
            )),
            self.args.join(" "),
            self.cwd.display(),
        );
        let started = Instant::now();
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{description}`: {e}"));
        let stdout = drain(child.stdout.take().expect("piped stdout"));
        let stderr = drain(child.stderr.take().expect("piped stderr"));
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for cargo") {
                break status;
            }
            if started.elapsed() > TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`{description}` ran longer than {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output {
            command: description,
            code: status.code(),
            stdout: stdout.join().expect("stdout reader"),
            stderr: stderr.join().expect("stderr reader"),
            elapsed: started.elapsed(),
        }
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// What a cargo command did. Its `Display` shows everything, for assertion messages.
pub struct Output {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\n--- command: {}\n--- exit code: {:?} after {:.1?}\n--- stdout:\n{}\n--- stderr:\n{}\n---",
            self.command, self.code, self.elapsed, self.stdout, self.stderr
        )
    }
}

impl Output {
    /// The tests libtest reported as failed (`test <name> ... FAILED`), sorted.
    pub fn failed_tests(&self) -> Vec<String> {
        let mut failed: Vec<String> = self
            .stdout
            .lines()
            .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
            .map(str::to_string)
            .collect();
        failed.sort();
        failed
    }

    /// Panics unless the command exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code{self}");
        self
    }

    /// Every `probability` section printed on stdout.
    pub fn sections(&self) -> Vec<Section> {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let mut sections = Vec::new();
        let mut index = 0;
        while index < lines.len() {
            if is_rule(lines[index]) {
                let (section, next) = Section::parse(&lines, index)
                    .unwrap_or_else(|why| panic!("malformed probability section: {why}{self}"));
                sections.push(section);
                index = next;
            } else {
                index += 1;
            }
        }
        sections
    }

    /// The one `probability` section on stdout, checked to come after libtest's result line.
    #[track_caller]
    pub fn section(&self) -> Section {
        let mut sections = self.sections();
        assert_eq!(sections.len(), 1, "expected one probability section{self}");
        let rule = self
            .stdout
            .find(&sections[0].rule)
            .expect("the rule line is on stdout");
        let result = self.stdout.find("test result:");
        assert!(
            result.is_some_and(|result| result < rule),
            "the section must follow libtest's `test result:` line{self}"
        );
        sections.remove(0)
    }

    /// Whether stdout has no `probability` section at all.
    pub fn has_no_section(&self) -> bool {
        !self.stdout.lines().any(is_rule) && !self.stdout.contains("Overall:")
    }
}

/// The section's title line: `=== probability ===`, 80 columns.
fn is_rule(line: &str) -> bool {
    line.starts_with('=') && line.trim_matches('=') == " probability "
}

/// A parsed `probability` section. Lines are split into columns at runs of two or more spaces,
/// so that assertions check content, not alignment (the renderer's unit tests check that).
#[derive(Clone, Debug)]
pub struct Section {
    /// The section as printed.
    pub text: String,
    /// The title line.
    pub rule: String,
    /// One entry per row: case id, fraction, cost (when shown), status (when not a pass).
    pub rows: Vec<Vec<String>>,
    /// Each row's interval cell (`[35%, 93%]`, inner padding folded), when the column is shown
    /// and the row has one.
    pub intervals: Vec<Option<String>>,
    /// The function-level lines between the rows and `Overall:`, as printed.
    pub aggregates: Vec<String>,
    /// The `Gates:` line's text, and the `Warning:` lines, without their labels.
    pub gates: Option<String>,
    pub warnings: Vec<String>,
    /// `Overall: ...` without the leading spaces.
    pub overall: String,
    /// The amount of the `Cost:` line.
    pub cost: Option<String>,
    /// One entry per model: name, token text, cost (when shown).
    pub tokens: Vec<Vec<String>>,
    /// The path of the `Report:` line.
    pub report: Option<String>,
}

fn columns(text: &str) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for part in text
        .trim()
        .split("  ")
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        // An interval cell (`[35%,  93%]`) pads inside its brackets: it is one column.
        match columns.last_mut() {
            Some(open) if open.starts_with('[') && !open.ends_with(']') => {
                open.push(' ');
                open.push_str(part);
            }
            _ => columns.push(part.to_string()),
        }
    }
    columns
}

impl Section {
    fn parse(lines: &[&str], start: usize) -> Result<(Section, usize), String> {
        let rule = lines[start].to_string();
        if rule.len() != 80 {
            return Err(format!("the rule line is {} columns wide", rule.len()));
        }
        let mut index = start + 1;
        let mut rows = Vec::new();
        let mut intervals = Vec::new();
        while index < lines.len() && !lines[index].is_empty() {
            let line = lines[index];
            if !line.starts_with("  ") || line.starts_with("   ") {
                return Err(format!("row line not indented by two spaces: {line:?}"));
            }
            let mut row = columns(line);
            let interval = row
                .iter()
                .position(|column| column.starts_with('['))
                .map(|position| row.remove(position));
            rows.push(row);
            intervals.push(interval);
            index += 1;
        }
        index += 1;
        // Function-level lines, when a function has enough cases: a block of their own.
        let mut aggregates = Vec::new();
        if lines
            .get(index)
            .is_some_and(|line| !line.starts_with("  Overall: "))
        {
            while index < lines.len() && !lines[index].is_empty() {
                aggregates.push(lines[index].to_string());
                index += 1;
            }
            index += 1;
        }
        let overall = lines
            .get(index)
            .and_then(|line| line.strip_prefix("  Overall: "))
            .ok_or("no `Overall:` line after the rows and a blank line")?;
        let overall = format!("Overall: {overall}");
        index += 1;
        let mut cost = None;
        let mut tokens = Vec::new();
        let mut report = None;
        let (mut gates, mut warnings) = (None, Vec::new());
        while let Some(line) = lines.get(index) {
            if let Some(text) = line.strip_prefix("  Gates:   ") {
                gates = Some(text.to_string());
            } else if let Some(text) = line.strip_prefix("  Warning: ") {
                warnings.push(text.to_string());
            } else if let Some(amount) = line.strip_prefix("  Cost:    ") {
                cost = Some(amount.to_string());
            } else if let Some(text) = line.strip_prefix("  Tokens:  ") {
                tokens.push(columns(text));
            } else if !tokens.is_empty() && line.starts_with(&" ".repeat(11)) {
                tokens.push(columns(line));
            } else if let Some(path) = line.strip_prefix("  Report:  ") {
                report = Some(path.to_string());
            } else {
                break;
            }
            index += 1;
        }
        let text = lines[start..index].join("\n");
        Ok((
            Section {
                text,
                rule,
                rows,
                intervals,
                aggregates,
                gates,
                warnings,
                overall,
                cost,
                tokens,
                report,
            },
            index,
        ))
    }

    /// The columns of the row for `case`, without the case id.
    #[track_caller]
    pub fn row(&self, case: &str) -> Vec<&str> {
        let row = self
            .rows
            .iter()
            .find(|row| row[0] == case)
            .unwrap_or_else(|| panic!("no row `{case}` in\n{}", self.text));
        row[1..].iter().map(String::as_str).collect()
    }

    /// The case ids of the rows, in printed order.
    pub fn case_ids(&self) -> Vec<&str> {
        self.rows.iter().map(|row| row[0].as_str()).collect()
    }

    /// The columns of the `Tokens` line for `model`, without the model name.
    #[track_caller]
    pub fn tokens(&self, model: &str) -> Vec<&str> {
        let line = self
            .tokens
            .iter()
            .find(|line| line[0] == model)
            .unwrap_or_else(|| panic!("no Tokens line for `{model}` in\n{}", self.text));
        line[1..].iter().map(String::as_str).collect()
    }
}

/// Reads and parses a JSON file, saying which one on failure.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The report's row for `case`.
#[track_caller]
pub fn report_row<'a>(report: &'a Value, case: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .expect("rows is an array")
        .iter()
        .find(|row| row["case"] == case)
        .unwrap_or_else(|| panic!("no row `{case}` in the report"))
}

/// The report's records of `case`, by run number: checks of their content should not depend on
/// the report's order, which has a test of its own.
pub fn report_records<'a>(report: &'a Value, case: &str) -> Vec<&'a Value> {
    let mut records: Vec<&Value> = report["records"]
        .as_array()
        .expect("records is an array")
        .iter()
        .filter(|record| record["case"] == case)
        .collect();
    records.sort_by_key(|record| record["run"].as_u64());
    records
}

/// `[passes, fails, errors, total]` of a report row or totals object (`count` for totals).
pub fn counts(object: &Value) -> [u64; 4] {
    let total = object.get("total").unwrap_or(&object["count"]);
    [
        object["passes"].as_u64().expect("passes"),
        object["fails"].as_u64().expect("fails"),
        object["errors"].as_u64().expect("errors"),
        total.as_u64().expect("total or count"),
    ]
}

/// Asserts that a JSON number is `expected`, to within rounding of sums of decimal amounts.
#[track_caller]
pub fn assert_amount(value: &Value, expected: f64) {
    let actual = value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number"));
    assert!(
        (actual - expected).abs() < 1e-9,
        "expected {expected}, got {actual}"
    );
}

/// `<file>:<line>:<column>` of `token` on the line of `source` that ends with the comment
/// `// @loc:<marker>`, as a panic location reads: line and column 1-based.
#[track_caller]
pub fn location(file: &str, source: &str, marker: &str, token: &str) -> String {
    let comment = format!("// @loc:{marker}");
    let (index, line) = source
        .lines()
        .enumerate()
        .find(|(_, line)| line.trim_end().ends_with(&comment))
        .unwrap_or_else(|| panic!("no line ending with `{comment}` in {file}"));
    let column = line
        .find(token)
        .unwrap_or_else(|| panic!("no {token} on the {marker} line of {file}"));
    format!("{file}:{}:{}", index + 1, column + 1)
}

/// A Python that has pytest-probability 0.3 (`PROBTEST_PEER_PYTHON`, else `python3`), or `None`
/// with the reason printed, so that a side-by-side test skips; under `CI` the peer must be there.
#[allow(dead_code)]
pub fn peer_python() -> Option<&'static Path> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let python = std::env::var_os("PROBTEST_PEER_PYTHON")
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from);
            let has_peer = std::process::Command::new(&python)
                .args(["-c", "import pytest_probability"])
                .output()
                .is_ok_and(|output| output.status.success());
            if has_peer {
                return Some(python);
            }
            let why = "pytest-probability is not installed (pip install pytest-probability==0.3.0, or point PROBTEST_PEER_PYTHON at a Python that has it)";
            assert!(std::env::var_os("CI").is_none(), "{why}; CI must have it");
            eprintln!("skipping the side-by-side test: {why}");
            None
        })
        .as_deref()
}
