//! Running a command on a fixture: cargo (`test`, `nextest`) or the `cargo-probtest` binary of
//! this workspace, in a scrubbed environment, with a timeout, its output captured.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{shared_target_dir, workspace_root, Output};

/// Long enough for the first build of probtest and tokio on a slow machine while other tests
/// hold the target directory's lock; short enough that a hung run does not hang the suite.
pub(super) const TIMEOUT: Duration = Duration::from_secs(20 * 60);

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
    pub(super) program: Option<PathBuf>,
    pub(super) subcommand: Vec<String>,
    pub(super) args: Vec<String>,
    pub(super) manifest: Option<PathBuf>,
    pub(super) cwd: PathBuf,
    pub(super) envs: Vec<(String, String)>,
    /// How long it may run; [`TIMEOUT`] when `None`.
    pub(super) timeout: Option<Duration>,
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

    /// Bounds the command: past `bound`, it and every process it started (cargo's test
    /// binaries among them) are killed, and the test fails saying so. For a command that must
    /// not hang, so that a regression fails instead of hanging the suite.
    pub fn within(mut self, bound: Duration) -> Self {
        self.timeout = Some(bound);
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
        // Taken before the clock starts: waiting for a test that has the machine alone is not
        // the command's time.
        let _machine = super::machine::share();
        let bound = self.timeout.unwrap_or(TIMEOUT);
        // A group of its own, so that a command killed past its bound takes the test binaries
        // it started with it: they hold the output pipes open.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
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
            if started.elapsed() > bound {
                let group = format!("-{}", child.id());
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                let _ = child.kill();
                let _ = child.wait();
                panic!("`{description}` ran longer than {bound:?}");
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
