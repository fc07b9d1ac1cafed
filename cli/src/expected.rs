//! The runs `cargo probtest run` expects, learned before the runner starts: every test binary
//! the run will execute lists the tests the user's filters select, and the generated items
//! among them are written to the session (`Session::expect_items`). A run of them that never
//! starts (fail-fast, a binary that never ran, a crash before start-up) is then counted as not
//! run, per row and per binary, never hidden.
//!
//! Under `cargo test`: the binaries of `cargo test --no-run --message-format
//! json-render-diagnostics` with the user's cargo arguments, each listed with `--list --format
//! terse` and the user's filters (cargo's `TESTNAME` and the test binaries' own arguments), its
//! ignored tests left out unless the user asked for them. The binary describes its own items
//! (`PROB_ITEMS_OUT`): which name is which case and run. Under nextest: `cargo nextest list
//! --message-format json` with the user's arguments that nextest's list takes, whose filter
//! matches are the expected tests; the binaries describe their items to the session as nextest
//! lists them (`PROB_RECONCILE`).

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cargo_metadata::Message;
use probtest::__cli::store::Session;
use probtest::CaseInfo;
use probtest_settings as table;

use crate::target;

/// What listing the expected runs came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Listing {
    /// The session holds the expected runs of every binary with generated items; under
    /// nextest, the binaries described their items too.
    Listed,
    /// The tests do not build: the build's own exit code, its errors said already.
    BuildFailed(i32),
    /// Nothing to expect: the arguments run no test (`--no-run`), or select them in a way no
    /// listing can know (nextest's `--rerun`).
    NotListed,
}

/// Whether the user's runner arguments choose how failures stop the run: `--fail-fast`,
/// `--no-fail-fast` (and nextest's `--ff`, `--nff`, `--max-fail`), before a `--` that starts
/// the test binaries' own arguments. Otherwise `cargo probtest run` runs every run.
pub fn chooses_fail_fast(args: &[OsString]) -> bool {
    runner_args(args).iter().any(|arg| {
        arg.to_str().is_some_and(|arg| {
            matches!(arg, "--fail-fast" | "--no-fail-fast" | "--ff" | "--nff")
                || arg == "--max-fail"
                || arg.starts_with("--max-fail=")
        })
    })
}

/// The runner's own arguments: those before a first `--`.
fn runner_args(args: &[OsString]) -> &[OsString] {
    let end = args
        .iter()
        .position(|arg| arg == "--")
        .unwrap_or(args.len());
    &args[..end]
}

/// The test binaries' arguments: those after a first `--`.
fn binary_args(args: &[OsString]) -> &[OsString] {
    match args.iter().position(|arg| arg == "--") {
        Some(at) => &args[at + 1..],
        None => &[],
    }
}

/// Writes to `session` the runs the runner will be asked to run with `args`, listing each test
/// binary as `cargo test` (or `cargo nextest run` when `nextest`) would run it. A binary that
/// cannot be listed is said on stderr and expects nothing; the run goes on.
pub fn list(nextest: bool, args: &[OsString], session: &Session) -> Listing {
    let runner = runner_args(args);
    if runner.iter().any(|arg| arg == "--no-run")
        || (nextest
            && runner.iter().any(|arg| {
                arg.to_str()
                    .is_some_and(|arg| arg == "-R" || arg.starts_with("--rerun"))
            }))
    {
        return Listing::NotListed;
    }
    if nextest {
        list_nextest(args, session)
    } else {
        list_cargo_test(args, session)
    }
}

/// Says on stderr why some expected runs are not known.
fn note(problem: &str) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "warning: {problem}; runs that never start are not counted for it"
    );
}

/// A test binary `cargo test --no-run` built.
struct Built {
    path: PathBuf,
    /// nextest's id for it: `<package>` for a library, `<package>::<test>` for a test target,
    /// `<package>::<kind>/<name>` otherwise.
    id: String,
    /// `tests/evals.rs (evals-1a2b3c4d)`: its source, and its executable's name.
    label: String,
    manifest_dir: PathBuf,
}

fn list_cargo_test(args: &[OsString], session: &Session) -> Listing {
    let cargo_args = cargo_test_args(runner_args(args));
    let output = Command::new(target::cargo())
        .args([
            "test",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(&cargo_args)
        // Cargo's progress and errors reach the terminal as they happen, once: the run that
        // follows finds everything built.
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            note(&format!("cannot start cargo test --no-run ({error})"));
            return Listing::NotListed;
        }
    };
    if !output.status.success() {
        return Listing::BuildFailed(crate::run::exit_code(output.status));
    }
    let filter = test_name(&cargo_args);
    let mut test_args: Vec<OsString> = filter.into_iter().collect();
    test_args.extend(listing_args(binary_args(args)));
    let all_ignored = binary_args(args)
        .iter()
        .any(|arg| arg == "--ignored" || arg == "--include-ignored");
    for built in built_binaries(&output.stdout) {
        if let Err(problem) = expect_binary(&built, &test_args, all_ignored, session) {
            note(&format!(
                "cannot list the tests of {}: {problem}",
                built.label
            ));
        }
    }
    Listing::Listed
}

/// The user's `cargo test` arguments for `cargo test --no-run` with probtest's own message
/// format: theirs left out, and `--fail-fast` (which cargo test does not take; `cargo
/// probtest run` reads it).
fn cargo_test_args(args: &[OsString]) -> Vec<OsString> {
    let mut kept = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--message-format") => {
                args.next();
            }
            Some(text) if text.starts_with("--message-format=") => {}
            Some("--fail-fast" | "--no-fail-fast") => {}
            _ => kept.push(arg.clone()),
        }
    }
    kept
}

/// Drops `--fail-fast` from `cargo test`'s arguments: cargo stops at the first failing binary
/// by default, and takes no such flag.
pub fn without_fail_fast(args: &[OsString]) -> Vec<OsString> {
    let runner = runner_args(args).len();
    args.iter()
        .enumerate()
        .filter(|(at, arg)| *at >= runner || *arg != "--fail-fast")
        .map(|(_, arg)| arg.clone())
        .collect()
}

/// `cargo test`'s `TESTNAME`: its first argument that is no option nor an option's value,
/// which cargo passes to every test binary as a filter.
fn test_name(args: &[OsString]) -> Option<OsString> {
    // cargo test's options that take a value, or may (`--test [NAME]`).
    const VALUED: [&str; 19] = [
        "--message-format",
        "--color",
        "--config",
        "-p",
        "--package",
        "--exclude",
        "--bin",
        "--example",
        "--test",
        "--bench",
        "-F",
        "--features",
        "-j",
        "--jobs",
        "--profile",
        "--target",
        "--target-dir",
        "--manifest-path",
        "-Z",
    ];
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        let Some(text) = arg.to_str() else {
            return Some(arg.clone());
        };
        if VALUED.contains(&text) {
            if args.peek().is_some_and(|next| !is_option(next)) {
                args.next();
            }
        } else if !text.starts_with('-') {
            return Some(arg.clone());
        }
    }
    None
}

fn is_option(arg: &OsStr) -> bool {
    arg.to_str().is_some_and(|arg| arg.starts_with('-'))
}

/// The test binaries' arguments that also apply to a listing: their own output format and log
/// file left out, as the listing's is terse and goes to a pipe.
fn listing_args(args: &[OsString]) -> Vec<OsString> {
    let mut kept = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--format" | "--logfile") => {
                args.next();
            }
            Some(text) if text.starts_with("--format=") || text.starts_with("--logfile=") => {}
            Some("-q" | "--quiet" | "--list") => {}
            _ => kept.push(arg.clone()),
        }
    }
    kept
}

/// The test binaries among cargo's JSON messages on `stdout`.
fn built_binaries(stdout: &[u8]) -> Vec<Built> {
    Message::parse_stream(stdout)
        .filter_map(|message| match message {
            Ok(Message::CompilerArtifact(artifact)) if artifact.profile.test => {
                let path = artifact.executable?.into_std_path_buf();
                let package = crate::doctor::cargo::package_name(&artifact.package_id.repr)?;
                let kind = artifact.target.kind.first()?.to_string();
                let name = artifact.target.name;
                let id = match kind.as_str() {
                    "lib" | "rlib" | "proc-macro" | "cdylib" | "dylib" | "staticlib" => {
                        package.clone()
                    }
                    "test" => format!("{package}::{name}"),
                    kind => format!("{package}::{kind}/{name}"),
                };
                let manifest_dir = artifact.manifest_path.parent()?.as_std_path().to_path_buf();
                let source = artifact.target.src_path.into_std_path_buf();
                let source = source.strip_prefix(&manifest_dir).unwrap_or(&source);
                let file = path.file_name()?.to_string_lossy().into_owned();
                Some(Built {
                    label: format!("{} ({file})", source.display()),
                    path,
                    id,
                    manifest_dir,
                })
            }
            _ => None,
        })
        .collect()
}

/// Lists `built` with `args`, and writes the generated items it would run to `session`.
fn expect_binary(
    built: &Built,
    args: &[OsString],
    all_ignored: bool,
    session: &Session,
) -> Result<(), String> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let file = std::env::temp_dir().join(format!(
        "probtest-expected-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    ));
    let listed = listed_names(built, args, Some(&file));
    let described = std::fs::read_to_string(&file);
    let _ = std::fs::remove_file(&file);
    let mut names = listed?;
    // Without its items, the binary has no probtest: nothing of it is expected.
    let Ok(described) = described else {
        return Ok(());
    };
    if !all_ignored {
        let mut ignored_args = args.to_vec();
        ignored_args.push("--ignored".into());
        let ignored: HashSet<String> = listed_names(built, &ignored_args, None)?
            .into_iter()
            .collect();
        names.retain(|name| !ignored.contains(name));
    }
    let described: serde_json::Value =
        serde_json::from_str(&described).map_err(|error| format!("its items: {error}"))?;
    let cases: Vec<CaseInfo> = serde_json::from_value(described["cases"].clone())
        .map_err(|error| format!("its cases: {error}"))?;
    let selected: HashSet<&str> = names.iter().map(String::as_str).collect();
    let items: Vec<(String, u32, u32)> = described["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| {
            let name = item["name"].as_str()?;
            Some((
                name.to_string(),
                u32::try_from(item["case"].as_u64()?).ok()?,
                u32::try_from(item["run"].as_u64()?).ok()?,
            ))
        })
        .filter(|(name, ..)| selected.contains(name.as_str()))
        .collect();
    if items.is_empty() {
        return Ok(());
    }
    let names = items.iter().map(|(name, ..)| name.clone()).collect();
    let written = session
        .append_items(&built.id, cases, items)
        .and_then(|()| session.expect_items(&built.id, &built.label, names));
    written.map_err(|error| format!("{} ({error})", session.dir().display()))
}

/// The names `built` lists with `args`, as libtest's terse listing gives them; with
/// `items_out`, the binary describes its generated items there too (`PROB_ITEMS_OUT`).
fn listed_names(
    built: &Built,
    args: &[OsString],
    items_out: Option<&Path>,
) -> Result<Vec<String>, String> {
    let mut command = Command::new(&built.path);
    command
        .args(args)
        .args(["--list", "--format", "terse"])
        // Where and how cargo runs it.
        .current_dir(&built.manifest_dir)
        .env("CARGO_MANIFEST_DIR", &built.manifest_dir)
        .env(table::SUMMARY.variable, "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    if let Some(path) = items_out {
        command.env(table::ITEMS_OUT.variable, path);
    }
    let output = command
        .output()
        .map_err(|error| format!("cannot start it ({error})"))?;
    if !output.status.success() {
        return Err(format!("listing exited with {}", output.status));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect())
}

fn list_nextest(args: &[OsString], session: &Session) -> Listing {
    let output = Command::new(target::cargo())
        .args(["nextest", "list", "--message-format", "json"])
        .args(nextest_list_args(args))
        // Each binary writes its generated items to the session as nextest lists it.
        .env(table::SESSION.variable, session.key())
        .env(table::RECONCILE.variable, "1")
        .stderr(Stdio::inherit())
        .stdin(Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            note(&format!("cannot start cargo nextest list ({error})"));
            return Listing::NotListed;
        }
    };
    match output.status.code() {
        Some(0) => {}
        // nextest's code for a build that failed; the run would fail the same way.
        Some(101) => return Listing::BuildFailed(101),
        _ => {
            note(&format!(
                "cargo nextest list failed ({}) with these arguments",
                output.status
            ));
            return Listing::NotListed;
        }
    }
    let listed: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(listed) => listed,
        Err(error) => {
            note(&format!(
                "cargo nextest list's output is unreadable ({error})"
            ));
            return Listing::NotListed;
        }
    };
    for (id, suite) in listed["rust-suites"].as_object().into_iter().flatten() {
        let names: Vec<String> = suite["testcases"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, case)| case["filter-match"]["status"] == "matches")
            .map(|(name, _)| name.clone())
            .collect();
        if names.is_empty() {
            continue;
        }
        let file = suite["binary-path"]
            .as_str()
            .and_then(|path| Path::new(path).file_name())
            .map(|file| file.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = format!("{id} ({file})");
        if let Err(error) = session.expect_items(id, &label, names) {
            note(&format!(
                "cannot write {}'s expected runs to {} ({error})",
                id,
                session.dir().display()
            ));
        }
    }
    Listing::Listed
}

/// The user's `cargo nextest run` arguments that `cargo nextest list` takes too: the options of
/// running and reporting left out, with their values.
fn nextest_list_args(args: &[OsString]) -> Vec<OsString> {
    const VALUED: [&str; 16] = [
        "--debugger",
        "--failure-output",
        "--final-status-level",
        "--flaky-result",
        "--max-fail",
        "--max-progress-running",
        "--message-format",
        "--message-format-version",
        "--no-tests",
        "--retries",
        "--status-level",
        "--stress-count",
        "--stress-duration",
        "--success-output",
        "--tracer",
        "--test-threads",
    ];
    const FLAGS: [&str; 10] = [
        "--fail-fast",
        "--ff",
        "--no-fail-fast",
        "--nff",
        "--hide-progress-bar",
        "--no-capture",
        "--nocapture",
        "--no-input-handler",
        "--no-output-indent",
        "--no-run",
    ];
    let runner = runner_args(args).len();
    let mut kept = Vec::new();
    let mut iter = args.iter().enumerate();
    while let Some((at, arg)) = iter.next() {
        if at >= runner {
            kept.push(arg.clone());
            continue;
        }
        let Some(text) = arg.to_str() else {
            kept.push(arg.clone());
            continue;
        };
        let name = text.split_once('=').map_or(text, |(name, _)| name);
        if VALUED.contains(&name) || matches!(name, "-j" | "--jobs") {
            if !text.contains('=') {
                iter.next();
            }
        } else if text.starts_with("-j") && text.len() > 2 && !text.starts_with("--") {
            // `-j4`.
        } else if !FLAGS.contains(&text) {
            kept.push(arg.clone());
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn fail_fast_is_the_users_choice_only_before_the_binaries_arguments() {
        assert!(!chooses_fail_fast(&args(&["-p", "evals"])));
        for chosen in [
            "--fail-fast",
            "--no-fail-fast",
            "--ff",
            "--nff",
            "--max-fail=3",
        ] {
            assert!(chooses_fail_fast(&args(&[chosen])), "{chosen}");
        }
        assert!(chooses_fail_fast(&args(&["--max-fail", "2"])));
        assert!(!chooses_fail_fast(&args(&["--", "--fail-fast"])));
        assert_eq!(
            without_fail_fast(&args(&["--fail-fast", "-p", "x", "--", "--fail-fast"])),
            args(&["-p", "x", "--", "--fail-fast"])
        );
    }

    #[test]
    fn cargo_tests_testname_is_found_past_options_and_their_values() {
        let name = |list: &[&str]| test_name(&args(list)).map(|n| n.into_string().unwrap());
        assert_eq!(
            name(&["--test", "evals", "refund"]).as_deref(),
            Some("refund")
        );
        assert_eq!(name(&["-p", "x", "--release"]), None);
        assert_eq!(name(&["--test", "--lib"]), None);
        assert_eq!(
            name(&["--manifest-path", "a/Cargo.toml", "-j2", "refund"]).as_deref(),
            Some("refund")
        );
        assert_eq!(name(&["--features=x", "refund"]).as_deref(), Some("refund"));
    }

    #[test]
    fn the_listing_keeps_filters_and_drops_output_options() {
        assert_eq!(
            listing_args(&args(&[
                "refund", "--exact", "--format", "json", "-q", "--skip", "x"
            ])),
            args(&["refund", "--exact", "--skip", "x"])
        );
        assert_eq!(
            cargo_test_args(&args(&[
                "--message-format",
                "short",
                "--no-fail-fast",
                "-p",
                "x"
            ])),
            args(&["-p", "x"])
        );
    }

    #[test]
    fn nextests_list_takes_the_filters_but_not_the_runners_options() {
        assert_eq!(
            nextest_list_args(&args(&[
                "--retries",
                "2",
                "-E",
                "test(refund)",
                "--no-fail-fast",
                "-j4",
                "--test-threads=2",
                "--status-level",
                "all",
                "--partition",
                "count:1/2",
                "--",
                "--retries"
            ])),
            args(&[
                "-E",
                "test(refund)",
                "--partition",
                "count:1/2",
                "--",
                "--retries"
            ])
        );
    }
}
