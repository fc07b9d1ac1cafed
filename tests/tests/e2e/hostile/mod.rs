//! Hostile paths, stores and processes (`paths`, `store`, `process`), and what they share: one
//! fixture crate of small benches, a tmpfs mounted for the length of a test, a session key per
//! test, and a session's summary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{shared_target_dir, Fixture, Output};

mod paths;
mod process;
mod store;

/// Two clean runs: a report of one row.
pub const STEADY: &str = r#"//! Fixture: two clean runs.

use probtest::probability;

/// Two clean runs.
#[probability(runs = 2)]
fn bench_steady() {}
"#;

/// Runs whose records outgrow a small disk, even without the report's free space.
pub const BIG: &str = r#"//! Fixture: runs whose records together take some 100 KB.

use probtest::{probability, record_usage, TokenUsage};

/// Each run names a model of a thousand characters.
#[probability(runs = 80)]
fn bench_big() {
    record_usage(&TokenUsage {
        model: "m".repeat(1000),
        input_tokens: 1,
        ..Default::default()
    });
}
"#;

/// Two runs whose costs add up past the largest number.
pub const COSTLY: &str = r#"//! Fixture: two runs that cost 1e308 each.

use probtest::{probability, record_cost};

/// Each run costs 1e308; together, more than a float holds.
#[probability(runs = 2)]
fn bench_costly() {
    record_cost(1e308);
}
"#;

/// One run, which never waits for a delay.
pub const ONCE: &str = r#"//! Fixture: a single run.

use probtest::probability;

/// One clean run.
#[probability]
fn bench_once() {}
"#;

pub fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("hostile")
            .test("steady", STEADY)
            .test("big", BIG)
            .test("costly", COSTLY)
            .test("once", ONCE)
            .test("quick", QUICK)
            .test("slow", SLOW)
            .test("few", FEW)
            .build()
    })
}

/// A tmpfs mounted for the length of a test, unmounted when dropped.
pub struct Mounted(PathBuf);

impl Mounted {
    /// A tmpfs of `size` at `dir`; why not, when the machine does not allow it.
    pub fn tmpfs(dir: &Path, size: &str) -> Result<Mounted, String> {
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|error| format!("cannot run mount: {error}"))?;
        if output.status.success() {
            Ok(Mounted(dir.to_path_buf()))
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Quick runs: enough lines to fill a small disk.
pub const QUICK: &str = r#"//! Fixture: many quick runs.

use probtest::probability;

/// Three hundred clean runs.
#[probability(runs = 300)]
fn bench_quick() {}
"#;

/// Runs long enough to be killed while they run.
pub const SLOW: &str = r#"//! Fixture: runs of 40 ms each.

use probtest::probability;

/// Each run sleeps 40 ms, then passes.
#[probability(runs = 120)]
fn bench_slow() {
    std::thread::sleep(std::time::Duration::from_millis(40));
}

/// Not probtest's: never counted by it.
#[test]
fn plain_test() {}
"#;

/// A few runs.
pub const FEW: &str = r#"//! Fixture: seventeen clean runs.

use probtest::probability;

/// Seventeen clean runs.
#[probability(runs = 17)]
fn bench_few() {}
"#;

/// A session key of this test alone.
pub fn key(name: &str) -> String {
    format!("hostile-{name}-{}", std::process::id())
}

/// The directory of session `key` of the fixtures' shared target directory.
pub fn session_dir(key: &str) -> PathBuf {
    shared_target_dir()
        .join("probtest")
        .join("sessions")
        .join(key)
}

/// `cargo probtest report` of session `key` of the fixtures' shared target directory, with
/// `extra` arguments.
pub fn session_report(key: &str, extra: &[&str]) -> Output {
    let target = shared_target_dir().to_string_lossy().into_owned();
    let mut args = vec!["--session", key, "--target-dir", &target];
    args.extend_from_slice(extra);
    fixture().probtest("report", &args, &[]).run()
}

/// The overall counts of a summary: `Overall: 23/40 passed ...` gives (23, 40).
#[track_caller]
pub fn overall(output: &Output) -> (u64, u64) {
    let line = output
        .stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("Overall: "))
        .unwrap_or_else(|| panic!("no Overall line\n{output}"));
    let counts = line.split_whitespace().next().expect("counts");
    let (passed, total) = counts.split_once('/').expect("passed/total");
    (
        passed.parse().expect("a number"),
        total.parse().expect("a number"),
    )
}
