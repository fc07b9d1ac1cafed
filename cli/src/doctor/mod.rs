//! `cargo probtest doctor`: why a test is flaky, and a command that makes it fail every time.
//! `cargo probtest repro`: that command.
//!
//! The doctor builds the tests once, then runs the test's binary directly, one fresh process
//! per diagnostic run, under perturbations of one axis of nondeterminism at a time: the wall
//! clock and the OS's entropy (through a preload library), the tests that run before the victim
//! in its process, and the tests that run beside it. The loop (`diagnose`) keeps every gate of
//! the contract: control sweep, provocation, verification n/n with its exact lower bound,
//! counterfactual, and a significance test against the baseline.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;

use crate::error::Error;
use crate::ui::Ui;

mod axes;
pub(crate) mod cargo;
mod debugger;
mod diagnose;
mod findings;
mod fingerprint;
mod gates;
pub mod preload;
mod prior;
mod repro;
mod runner;
mod side_effects;
mod split;
mod suite;

use axes::{Axis, Cpus};
use cargo::{Selection, TestBinary};
pub use debugger::Debugger;
use diagnose::{Diagnosis, Settings};
use findings::json::DiagnosisJson;
use fingerprint::Ending;
use repro::Repro;
use runner::{Plan, Runner};

/// The arguments of `cargo probtest doctor`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct DoctorArgs {
    /// The test, as libtest prints its name (`billing::invoice_ids_stable`), or a report
    /// row's id.
    #[arg(value_name = "TEST", required_unless_present = "suite")]
    pub test: Option<String>,

    /// Run the suite once, as `cargo test` would (`RUST_TEST_THREADS` is honoured), and
    /// diagnose each test that failed, and each row the report holds as FLAKY, FAIL, ERRORED
    /// or ERROR: a row once, whatever number of its run items failed. The diagnoses share
    /// `--budget`; an overview comes first.
    #[arg(long, conflicts_with = "test")]
    pub suite: bool,

    /// The package of the test (cargo test's `-p`).
    #[arg(short = 'p', long = "package", value_name = "PKG")]
    pub packages: Vec<String>,

    /// Path to the workspace's or package's Cargo.toml (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// The integration test target that holds the test (cargo test's `--test`).
    #[arg(long = "test", value_name = "TARGET", conflicts_with = "lib")]
    pub target: Option<String>,

    /// The test is in the library's unit tests.
    #[arg(long)]
    pub lib: bool,

    /// Runs of the baseline and of the verification.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub runs: u32,

    /// Seconds after which the doctor stops with what it has (`incomplete`).
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub budget: u64,

    /// Seconds after which a run counts as a hang [default: 10 times the slowest passing run,
    /// at least 5 s; 60 s until a run passes].
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    pub timeout: Option<Duration>,

    /// The axes to vary, comma-separated [default: entropy,time,scheduling,network,order,
    /// parallel,fs,env].
    #[arg(long, value_delimiter = ',', value_name = "AXES")]
    pub axes: Vec<String>,

    /// The report whose record of a probtest row sizes the baseline [default: where the row's
    /// runs write it: `PROB_JSON`, else the config's `json`].
    #[arg(long, value_name = "PATH")]
    pub report: Option<PathBuf>,

    /// Also write the diagnosis as JSON (`probtest-doctor`, version 1) to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,

    /// Also write the diagnoses as Markdown to PATH: an overview, then a section per test or
    /// row with its verdict, reason and repro. With `GITHUB_STEP_SUMMARY` set, the same
    /// Markdown is appended to the job's summary page too.
    #[arg(long, value_name = "PATH")]
    pub markdown: Option<PathBuf>,

    /// Diagnose a test even when it changes files outside its temporary directory (in its
    /// package, the home directory): the doctor runs it once watching for such writes before it
    /// repeats it, and without this flag stops there, listing them. With it, every run makes
    /// them again, and the diagnosis warns so.
    #[arg(long)]
    pub allow_side_effects: bool,

    /// More `cargo test` arguments (features, profile), after `--`.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// The arguments of `cargo probtest repro`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
pub struct ReproArgs {
    /// The blob the doctor printed (`pd1:...`).
    #[arg(value_name = "REPRO")]
    pub blob: String,

    /// Path to the workspace's or package's Cargo.toml (cargo's `--manifest-path`); the blob
    /// names the package.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// Print the run as one shell line instead (its directory, environment, preload library,
    /// binary and libtest arguments), to paste under `strace` or a debugger of your own.
    #[arg(long, conflicts_with = "debugger")]
    pub print: bool,

    /// Run it under a debugger: `rust-gdb`, `rust-lldb` or `rr record`; the preload library is
    /// given to the test process alone.
    #[arg(long, value_enum, value_name = "DEBUGGER")]
    pub debugger: Option<Debugger>,

    /// More arguments for the debugger, after `--`, before the test's (`-batch -ex run`).
    #[arg(last = true, value_name = "ARGS", requires = "debugger")]
    pub debugger_args: Vec<OsString>,
}

/// A positive number of seconds, for `--timeout`.
fn seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a number of seconds, got `{text}`"))?;
    if !(seconds.is_finite() && seconds > 0.0 && seconds < 1e9) {
        return Err(format!("expected seconds above 0, got `{text}`"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The preload library for `binary`, or why the axes that need it are not varied.
fn preload_for(binary: &TestBinary) -> Result<PathBuf, String> {
    preload::applies_to(&binary.path)?;
    preload::library(&binary.target_dir)
        .map_err(|error| format!("cannot write the preload library: {error}"))
}

/// Whether `-q` silences the doctor's progress, set once before it starts.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub(crate) fn progress(text: &str) {
    if QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let _ = writeln!(std::io::stderr().lock(), "doctor: {text}");
}

/// Runs `cargo probtest doctor`: 0 when a diagnosis was made (with `--suite`: for every test
/// that failed), 1 when the test is not flaky or nothing could be attributed.
pub fn doctor(args: &DoctorArgs, ui: &Ui) -> Result<i32, Error> {
    QUIET.store(ui.quiet, std::sync::atomic::Ordering::Relaxed);
    runner::take_signals();
    let axes = if args.axes.is_empty() {
        Axis::ALL.to_vec()
    } else {
        args.axes
            .iter()
            .map(|name| Axis::parse(name).map_err(|problem| Error::about("--axes", problem)))
            .collect::<Result<Vec<_>, _>>()?
    };
    let settings = Settings {
        runs: args.runs as usize,
        axes,
        budget: Duration::from_secs(args.budget),
        prior: None,
    };
    let selection = Selection {
        packages: args.packages.clone(),
        test_target: args.target.clone(),
        lib: args.lib,
        extra: args.args.clone(),
        manifest_path: args.manifest_path.clone(),
    };
    let started = Instant::now();
    let deadline = started + settings.budget;
    let binaries = cargo::build(&selection, ui)?;
    // Each row's diagnosis is saved beside the report it came from, for the report's tags.
    let mut beside: Vec<(Option<PathBuf>, usize)> = Vec::new();
    let diagnoses: Vec<(Diagnosis, DiagnosisJson)> = match &args.test {
        Some(test) => {
            let (binary, tests, victim) = cargo::find_test_or_row(&binaries, test)?;
            if victim != *test {
                progress(&format!(
                    "row {test} is diagnosed through its run item {victim}"
                ));
            }
            let row = binary.row_of(&victim);
            let settings = Settings {
                prior: prior_for(&binary, row.as_ref(), args.report.as_deref()),
                ..settings
            };
            let (diagnosis, json, text) =
                diagnose_one(&binary, &tests, (&victim, row), &settings, args)?;
            print(&text);
            beside.push((prior::report_path(&binary, args.report.as_deref()), 0));
            vec![(diagnosis, json)]
        }
        None => {
            let targets = suite::targets(&binaries, settings.budget, args.report.as_deref())?;
            let count = targets.len();
            let mut texts = Vec::new();
            let mut diagnoses = Vec::new();
            for (index, target) in targets.into_iter().enumerate() {
                progress(&format!(
                    "{} of {count}: {} ({})",
                    index + 1,
                    target.row.as_ref().map_or(&target.victim, |row| &row.case),
                    target.reason
                ));
                let settings = Settings {
                    budget: suite::share(deadline, count - index),
                    prior: prior_for(&target.binary, target.row.as_ref(), args.report.as_deref()),
                    runs: settings.runs,
                    axes: settings.axes.clone(),
                };
                beside.push((
                    prior::report_path(&target.binary, args.report.as_deref()),
                    index,
                ));
                let (diagnosis, json, text) = diagnose_one(
                    &target.binary,
                    &target.tests,
                    (&target.victim, target.row),
                    &settings,
                    args,
                )?;
                texts.push(text);
                diagnoses.push((diagnosis, json));
            }
            let jsons: Vec<DiagnosisJson> =
                diagnoses.iter().map(|(_, json)| json.clone()).collect();
            print(&suite::overview(&jsons, started.elapsed().as_secs_f64()));
            for text in texts {
                print(&text);
            }
            diagnoses
        }
    };
    let jsons: Vec<DiagnosisJson> = diagnoses.iter().map(|(_, json)| json.clone()).collect();
    for (report, index) in beside {
        if let (Some(report), Some(json)) = (report, jsons.get(index)) {
            split::save_beside(&report, json);
        }
    }
    if let Some(path) = &args.json {
        let text = match (&args.test, jsons.as_slice()) {
            (Some(_), [one]) => findings::json::write(one),
            _ => findings::json::write(&findings::json::SuiteJson {
                format: findings::json::FORMAT.to_string(),
                version: findings::json::VERSION,
                diagnoses: jsons.clone(),
            }),
        };
        write_file(path, &text)?;
    }
    let page = findings::markdown::render(&jsons, started.elapsed().as_secs_f64());
    if let Some(path) = &args.markdown {
        write_file(path, &page)?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty()) {
        append_file(Path::new(&summary), &page).map_err(|error| {
            Error::about(
                format!("GITHUB_STEP_SUMMARY={}", Path::new(&summary).display()),
                format!("cannot append the doctor's Markdown ({error})"),
            )
        })?;
    }
    let made = !diagnoses.is_empty() && diagnoses.iter().all(|(diagnosis, _)| diagnosis.made());
    Ok(if made { 0 } else { 1 })
}

/// The row's record in the user's report, which sizes the baseline, said as it is found.
fn prior_for(
    binary: &TestBinary,
    row: Option<&runner::Row>,
    report: Option<&Path>,
) -> Option<diagnose::Prior> {
    let row = row?;
    let path = prior::report_path(binary, report)?;
    let prior = prior::prior_of(row, &path)?;
    progress(&format!(
        "{}: {} of {} runs failed in {}",
        row.case, prior.failed, prior.runs, prior.report
    ));
    Some(prior)
}

fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Diagnoses `victim` of `binary` (whose tests are `tests`): the diagnosis, its JSON and its
/// text; or the error that stops the doctor before it repeats a test with side effects.
fn diagnose_one(
    binary: &TestBinary,
    tests: &[String],
    (victim, row): (&str, Option<runner::Row>),
    settings: &Settings,
    args: &DoctorArgs,
) -> Result<(Diagnosis, DiagnosisJson, String), Error> {
    let started = Instant::now();
    let mut warnings = Vec::new();
    // Needed whatever the axes: the look for side effects runs under it.
    let library = preload_for(binary);
    let preload = if settings.axes.iter().any(|axis| axis.needs_preload()) {
        match &library {
            Ok(library) => Some(library.clone()),
            Err(why) => {
                warnings.push(format!(
                    "the clock, entropy and network axes are skipped: {why}"
                ));
                None
            }
        }
    } else {
        None
    };
    progress(&format!(
        "{victim} in {} ({} tests in the binary)",
        binary.path.display(),
        tests.len()
    ));
    let row_case = row.as_ref().map(|row| row.case.clone());
    let setup = runner::Setup {
        binary: binary.clone(),
        victim: victim.to_string(),
        preload,
        row,
        timeout: args.timeout,
        deadline: started + settings.budget,
    };
    let mut runner = match Runner::new(setup) {
        Ok(runner) => runner,
        Err(error) => {
            let diagnosis = Diagnosis::cannot_run(format!(
                "cannot make the doctor's scratch directory under {}: {error}",
                std::env::temp_dir().display()
            ));
            let findings = findings::Findings {
                test: victim,
                row: row_case.as_deref(),
                diagnosis: &diagnosis,
                rustc: None,
                runs: 0,
                seconds: started.elapsed().as_secs_f64(),
                command: None,
                plain: None,
                attribute: None,
                split: None,
            };
            let (json, text) = (findings.to_json(), findings.text());
            return Ok((diagnosis, json, text));
        }
    };
    if library.is_ok() {
        progress("one run watching for writes outside its temporary directory");
    }
    let watched = side_effects::check(
        &runner,
        library.as_deref().map_err(String::as_str),
        &binary.target_dir,
        args.allow_side_effects,
    )?;
    warnings.extend(watched);
    let (diagnosis, split) = split::diagnose(&mut runner, settings, tests, warnings);
    // A row's harness is diagnosed through the run item whose answers it replays.
    let victim = runner.victim.as_str();
    let (mut command, mut plain, mut attribute) = commands(binary, victim, &diagnosis);
    if let Some(split) = split
        .as_ref()
        .filter(|split| split.harness_verdict.is_some())
    {
        // The repro replays the answers the doctor recorded: no model call. An attribute cannot
        // point the test at that cassette.
        let prefix = split::replay_prefix(split);
        command = command.map(|command| format!("{prefix}{command}"));
        plain = plain.map(|plain| format!("{prefix}{plain}"));
        attribute = None;
    }
    let findings = findings::Findings {
        test: victim,
        row: row_case.as_deref(),
        diagnosis: &diagnosis,
        rustc: rustc_version(),
        runs: runner.runs(),
        seconds: started.elapsed().as_secs_f64(),
        command,
        plain,
        attribute,
        split: split.as_ref(),
    };
    let (json, text) = (findings.to_json(), findings.text());
    Ok((diagnosis, json, text))
}

/// Writes `text` as the whole of `path`, its directory made.
fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        std::fs::create_dir_all(parent)
            .map_err(|error| Error::about(parent.display(), format!("cannot create ({error})")))?;
    }
    std::fs::write(path, text)
        .map_err(|error| Error::about(path.display(), format!("cannot write ({error})")))
}

/// Appends `text` to `path`, as a CI's job summary is written to.
fn append_file(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?
        .write_all(text.as_bytes())
}

/// The repro command of a diagnosis, a plain `cargo test` one where the failure needs no
/// preload library, and the `#[probtest::repro]` line where an attribute can carry the repro.
fn commands(
    binary: &TestBinary,
    test: &str,
    diagnosis: &Diagnosis,
) -> (Option<String>, Option<String>, Option<String>) {
    let Some(reproduction) = &diagnosis.reproduction else {
        return (None, None, None);
    };
    let select = binary.select_args();
    // A plan a blob cannot carry (a `TZ` this machine has no zone file for, say) would make a
    // command that `repro` refuses: none is printed, the plain one may still be.
    let repro = repro::for_binary(binary, test, reproduction.axis, reproduction.plan.clone())
        .ok()
        .map(|repro| Repro {
            attempts: reproduction.attempts,
            ..repro
        });
    let command = repro
        .as_ref()
        .map(|repro| format!("cargo probtest repro {}", repro.encode()));
    let attribute = repro
        .filter(|repro| repro.carried_by_attribute().is_ok())
        .map(|repro| format!("#[probtest::repro(\"{}\")]", repro.encode()));
    // A preload library, or a home directory of its own, is not something `cargo test` can
    // be given without changing cargo's own run too.
    let perturbation = &reproduction.plan.perturbation;
    // One core is `taskset`'s job; busy threads beside the run are the doctor's.
    let pin = match perturbation.cpus {
        Some(Cpus::One) => runner::first_cpu().map(|cpu| format!("taskset -c {cpu} ")),
        _ => Some(String::new()),
    };
    // A stress repro runs until a failure, which one `cargo test` does not.
    let plain = (!perturbation.needs_preload()
        && reproduction.attempts.is_none()
        && !perturbation.fresh_home
        && !perturbation.scrubbed_env
        && !perturbation.xdg_dirs
        && !perturbation.stress)
        .then_some(pin)
        .flatten()
        .map(|pin| {
            let mut line = format!(
                "{pin}cargo test {} -- --exact {}",
                select.join(" "),
                reproduction.plan.tests.join(" ")
            );
            if let Some(threads) = reproduction.plan.threads {
                line.push_str(&format!(" --test-threads={threads}"));
            }
            line
        });
    (command, plain, attribute)
}

fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // `rustc 1.95.0 (59807616e 2026-04-14)`: the version is enough.
    text.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
        .into()
}

/// Runs `cargo probtest repro`: 101 when the test failed as diagnosed (reproduced), 1 with
/// `DID NOT REPRODUCE` when it passed.
pub fn repro(args: &ReproArgs, ui: &Ui) -> Result<i32, Error> {
    runner::take_signals();
    // Everything in the blob is checked before cargo runs: it is pasted from elsewhere.
    let repro = Repro::decode(&args.blob).map_err(|problem| Error::about("repro", problem))?;
    // Before the build: a missing debugger is no reason to wait for one.
    if let Some(debugger) = args.debugger {
        debugger
            .check()
            .map_err(|problem| Error::about("--debugger", problem))?;
    }
    let selection = Selection {
        manifest_path: args.manifest_path.clone(),
        ..repro::selection(&repro)
    };
    let binaries = cargo::build(&selection, ui).map_err(|error| Error::about("repro", error))?;
    let (binary, tests) = cargo::find(&binaries, &repro.test)
        .map_err(|error| Error::about("repro", format!("the blob's test is not there: {error}")))?;
    if let Some(missing) = repro.plan.tests.iter().find(|name| !tests.contains(name)) {
        return Err(Error::about(
            "repro",
            format!("the blob's run needs test `{missing}`, which its binary does not have"),
        ));
    }
    let preload = if repro.plan.perturbation.needs_preload() {
        Some(preload_for(&binary).map_err(|why| {
            Error::about(
                "repro",
                format!("this repro needs the preload library: {why}"),
            )
        })?)
    } else {
        None
    };
    let setup = runner::Setup {
        row: binary.row_of(&repro.test),
        binary,
        victim: repro.test.clone(),
        preload,
        timeout: None,
        deadline: Instant::now() + Duration::from_secs(24 * 3600),
    };
    let runner = Runner::new(setup).map_err(|error| {
        Error::about(
            std::env::temp_dir().display(),
            format!("cannot make the doctor's scratch directory ({error})"),
        )
    })?;
    if args.print || args.debugger.is_some() {
        let debugger = args
            .debugger
            .map(|debugger| (debugger, args.debugger_args.as_slice()));
        return debugger::by_hand(&repro, &runner, debugger);
    }
    // A stress repro (a race) runs until the first failure, up to its bound.
    let attempts = repro.attempts.unwrap_or(1);
    let mut made = 0;
    let mut ending = Ending::NotRun;
    while made < attempts {
        made += 1;
        ending = runner.run(&repro.plan);
        if ending.failed() {
            break;
        }
    }
    let shown = describe_run(&repro.plan);
    let tries = if attempts > 1 {
        format!(", run {made} of up to {attempts}")
    } else {
        String::new()
    };
    let mut stdout = std::io::stdout().lock();
    match ending {
        Ending::Pass | Ending::NotRun => {
            let _ = writeln!(
                stdout,
                "DID NOT REPRODUCE: {} passed ({shown}{tries})",
                repro.test
            );
            Ok(1)
        }
        failure => {
            let _ = writeln!(
                stdout,
                "REPRODUCED: {} failed ({shown}{tries}): {}",
                repro.test,
                failure.fingerprint().unwrap_or("failed")
            );
            Ok(101)
        }
    }
}

/// A run as a sentence: what it perturbs, and which tests run with the victim.
fn describe_run(plan: &Plan) -> String {
    let mut parts = vec![axes::describe(&plan.perturbation)];
    if plan.tests.len() > 1 {
        parts.push(format!(
            "with {} on {} thread(s)",
            plan.tests.join(", "),
            plan.threads
                .map_or("default".to_string(), |threads| threads.to_string())
        ));
    }
    parts.join("; ")
}
