//! One diagnostic run: a fresh process of the test binary, running the victim (alone, after
//! some tests, or beside them), perturbed, in a directory of its own that holds its session
//! and report, killed with its process group at the timeout or the budget's end; and many such
//! runs at once where the axis allows.
//!
//! `process` starts and reads one process, `cleanup` kills and removes what is left on every
//! way out, `stress` loads and pins CPUs for the scheduling axis.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use probtest_settings as table;

use crate::doctor::axes::{Cpus, Perturbation};
use crate::doctor::cargo::TestBinary;
use crate::doctor::fingerprint::{ending_of, failed_tests, Ending, Outcome};
use crate::doctor::prior::recorded_fingerprint;

mod cleanup;
mod process;
mod stress;

pub use cleanup::{take_signals, Scratch};
use probtest_settings::repro::variables::{ENV_REPRO, REPRO_INERT};
pub use probtest_settings::repro::Plan;
pub use stress::{first_cpu, pin_to_one_cpu};
use stress::{Placement, Stress};

/// Whether `binary` takes libtest's `--logfile` (deprecated, and so perhaps gone one day): tried
/// once on its list, which runs no test.
fn writes_logs(binary: &TestBinary, scratch: &Scratch) -> bool {
    let log = scratch.path().join("probe.log");
    let listed = Command::new(&binary.path)
        .args(["--list", "--format", "terse", "--logfile"])
        .arg(&log)
        .current_dir(&binary.manifest_dir)
        .env(table::SUMMARY.variable, "0")
        .env(table::STORE.variable, scratch.path().join("probe-sessions"))
        .env_remove(table::JSON.variable)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    listed.is_ok_and(|status| status.success())
}

/// The records of `case`'s runs in the report at `path`, in run order; `None` when it holds
/// none.
fn records_of(path: &Path, case: &str) -> Option<Vec<RunRecord>> {
    let text = std::fs::read_to_string(path).ok()?;
    let report: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut records: Vec<RunRecord> = report["records"]
        .as_array()?
        .iter()
        .filter(|record| record["case"].as_str() == Some(case))
        .filter_map(|record| {
            Some(RunRecord {
                run: u32::try_from(record["run"].as_u64()?).ok()?,
                outcome: record["outcome"].as_str()?.to_string(),
                // An errored run's words are its `error`.
                message: record["message"]
                    .as_str()
                    .or(record["error"].as_str())
                    .map(str::to_string),
            })
        })
        .collect();
    records.sort_by_key(|record| record.run);
    (!records.is_empty()).then_some(records)
}

/// A probtest row the victim stands for: its runs are judged by the outcome each one recorded,
/// since a gated case's failing run still passes its test item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The row's case id, as the report names it (`triage::refund`).
    pub case: String,
    /// Each generated item of the row with its run number.
    pub items: Vec<(String, u32)>,
}

/// Runs the victim's binary.
pub struct Runner {
    pub binary: TestBinary,
    pub victim: String,
    /// The preload library, where it applies to the binary.
    pub preload: Option<PathBuf>,
    /// The row the victim is a run item of, if it is one.
    pub row: Option<Row>,
    /// Where every run's files go: its temporary directory, session store and report.
    scratch: Scratch,
    /// Whether the binary writes libtest's log (`--logfile`).
    logs: bool,
    /// When the diagnosis must end: a run under way then is stopped, and is no evidence.
    deadline: Instant,
    /// When a run counts as a hang, in milliseconds; adjusted as runs pass.
    timeout_ms: AtomicU64,
    /// Whether the timeout was given (then it is never adjusted).
    fixed_timeout: bool,
    /// The slowest passing run so far.
    slowest_pass: Mutex<Duration>,
    /// Runs made, for the report.
    runs: AtomicU64,
    /// How many processes run at once.
    jobs: usize,
    /// What the preload library logged in the runs since the last [`Runner::take_events`].
    events: Mutex<BTreeSet<String>>,
    /// Variables every run gets (a replayed cassette's), after the perturbation's.
    env: Vec<(&'static str, std::ffi::OsString)>,
}

/// A run of a row's item as its own record says: how it ended and what it said.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRecord {
    /// The run's number in its row.
    pub run: u32,
    /// `pass`, `fail` or `error`.
    pub outcome: String,
    /// What a failing run said.
    pub message: Option<String>,
}

/// How the preload library's log starts a line about a write.
const WRITE_PREFIX: &str = "write ";

/// The timeout while no run has passed yet.
const FIRST_TIMEOUT: Duration = Duration::from_secs(60);
/// The least timeout once a run has passed.
const LEAST_TIMEOUT: Duration = Duration::from_secs(5);

/// How the runner is set up for one victim.
pub struct Setup {
    pub binary: TestBinary,
    pub victim: String,
    pub preload: Option<PathBuf>,
    pub row: Option<Row>,
    /// `--timeout`, when given.
    pub timeout: Option<Duration>,
    /// When the diagnosis must end.
    pub deadline: Instant,
}

impl Runner {
    /// A runner with a scratch directory of its own.
    pub fn new(setup: Setup) -> std::io::Result<Runner> {
        let jobs = std::thread::available_parallelism().map_or(2, usize::from);
        let scratch = Scratch::new()?;
        let logs = writes_logs(&setup.binary, &scratch);
        Ok(Runner {
            binary: setup.binary,
            victim: setup.victim,
            preload: setup.preload,
            row: setup.row,
            scratch,
            logs,
            deadline: setup.deadline,
            timeout_ms: AtomicU64::new(setup.timeout.unwrap_or(FIRST_TIMEOUT).as_millis() as u64),
            fixed_timeout: setup.timeout.is_some(),
            slowest_pass: Mutex::new(Duration::ZERO),
            runs: AtomicU64::new(0),
            jobs,
            events: Mutex::new(BTreeSet::new()),
            env: Vec::new(),
        })
    }

    /// Whether the runs replay recorded answers (`PROB_CACHE=replay`): no model is called.
    pub fn replaying(&self) -> bool {
        self.env
            .iter()
            .any(|(name, value)| *name == table::CACHE.variable && value == "replay")
    }

    /// Gives every run from now on `env` too (none: the runs' own environment).
    pub fn set_env(&mut self, env: Vec<(&'static str, std::ffi::OsString)>) {
        self.env = env;
    }

    /// The distinct lines the preload library logged since the last call (`entropy hash`,
    /// `blocked 192.0.2.7:443`, ...).
    pub fn take_events(&self) -> BTreeSet<String> {
        std::mem::take(
            &mut *self
                .events
                .lock()
                .unwrap_or_else(|poison| poison.into_inner()),
        )
    }

    /// The timeout now.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    /// Runs made so far.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    /// Whether the diagnosis's time is up.
    pub fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// One run of `plan`: how the victim ended. A run the deadline stopped, or one that never
    /// started, is [`Ending::NotRun`]: no evidence either way.
    pub fn run(&self, plan: &Plan) -> Ending {
        self.run_once(&self.victim, plan, None).0
    }

    /// One run of `plan`, judged as the run of `victim`: how it ended and, for a row's item,
    /// what its record said.
    pub fn run_item(&self, victim: &str, plan: &Plan) -> (Ending, Option<String>) {
        let (ending, said, _) = self.run_once(victim, plan, None);
        (ending, said)
    }

    /// One run of the victim alone, unperturbed, under `library` logging what the process
    /// changes in the file system: how it ended, and the log's `write <op> <path>` lines.
    pub fn run_watching_writes(&self, library: &Path) -> (Ending, Vec<String>) {
        let (ending, _, writes) = self.run_once(
            &self.victim,
            &Plan::alone(&self.victim, Perturbation::none()),
            Some(library),
        );
        (ending, writes)
    }

    /// Where every run's files go: each run's `TMPDIR` is a directory in it.
    pub fn scratch_dir(&self) -> &Path {
        self.scratch.path()
    }

    /// One run of `plan`, judged as the run of `victim`, watched for writes under `watch` when
    /// given: how it ended, what a row's item's record said, and the writes logged.
    fn run_once(
        &self,
        victim: &str,
        plan: &Plan,
        watch: Option<&Path>,
    ) -> (Ending, Option<String>, Vec<String>) {
        if self.out_of_time() {
            return (Ending::NotRun, None, Vec::new());
        }
        self.runs.fetch_add(1, Ordering::Relaxed);
        let dir = match self.scratch.run_dir() {
            Ok(dir) => dir,
            Err(error) => {
                return (
                    Ending::Crash(format!("cannot make the run's directory: {error}")),
                    None,
                    Vec::new(),
                )
            }
        };
        let mut command = self.command(plan, &dir);
        if let Some(library) = watch {
            command
                .env("LD_PRELOAD", library)
                .env(crate::doctor::preload::ENV_LOG, dir.join("preload.log"))
                .env(crate::doctor::preload::ENV_WRITES, "1");
        }
        let stress = plan.perturbation.stress.then(|| {
            Stress::start(match plan.perturbation.cpus {
                Some(Cpus::One) => first_cpu().map_or(Placement::Anywhere(1), Placement::On),
                _ => Placement::Anywhere(self.jobs),
            })
        });
        let finished = process::run(&mut command, self.timeout(), self.deadline);
        drop(stress);
        let ending = match finished {
            Ok(finished) => self.ending(victim, plan, &dir, &finished),
            Err(error) => (
                Ending::Crash(format!("cannot start the test binary: {error}")),
                None,
            ),
        };
        let writes = match watch {
            Some(_) => std::fs::read_to_string(dir.join("preload.log"))
                .unwrap_or_default()
                .lines()
                .filter(|line| line.starts_with(WRITE_PREFIX))
                .map(str::to_string)
                .collect(),
            None => Vec::new(),
        };
        let _ = std::fs::remove_dir_all(&dir);
        (ending.0, ending.1, writes)
    }

    /// One run of every item of the row in one process, as `cargo test` runs them: each run's
    /// record, in run order, or why there are none.
    pub fn run_row(&self) -> Result<Vec<RunRecord>, String> {
        let row = self
            .row
            .as_ref()
            .ok_or_else(|| format!("{} is not a probtest row's item", self.victim))?;
        let dir = self
            .scratch
            .run_dir()
            .map_err(|error| format!("cannot make the run's directory: {error}"))?;
        self.runs.fetch_add(1, Ordering::Relaxed);
        let plan = Plan {
            tests: row.items.iter().map(|(name, _)| name.clone()).collect(),
            threads: None,
            perturbation: Perturbation::none(),
        };
        let mut command = self.command(&plan, &dir);
        let finished = process::run(&mut command, self.timeout(), self.deadline)
            .map_err(|error| format!("cannot run the test binary: {error}"))?;
        if finished.stopped.is_some() {
            return Err(format!(
                "its run did not end within {:.0} s",
                finished.took.as_secs_f64()
            ));
        }
        let records = records_of(&dir.join("report.json"), &row.case);
        let _ = std::fs::remove_dir_all(&dir);
        records.ok_or_else(|| format!("its run of the row {} recorded no run", row.case))
    }

    /// One run of the whole binary, as `cargo test` runs it: the tests that failed, or why
    /// the run could not say.
    pub fn failures_of_suite(&self) -> Result<Vec<String>, String> {
        let dir = self
            .scratch
            .run_dir()
            .map_err(|error| format!("cannot make the run's directory: {error}"))?;
        let plan = Plan {
            tests: Vec::new(),
            threads: None,
            perturbation: Perturbation::none(),
        };
        let mut command = self.command(&plan, &dir);
        let finished = process::run(&mut command, self.timeout(), self.deadline)
            .map_err(|error| format!("cannot run the test binary: {error}"))?;
        if finished.stopped.is_some() {
            return Err(format!(
                "its run did not end within {:.0} s",
                finished.took.as_secs_f64()
            ));
        }
        let log = self
            .logs
            .then(|| std::fs::read_to_string(dir.join("libtest.log")).unwrap_or_default());
        let stdout = String::from_utf8_lossy(&finished.stdout);
        let failed = failed_tests(log.as_deref(), &stdout);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(failed)
    }

    /// The command of one run of `plan`, its files in `dir`.
    fn command(&self, plan: &Plan, dir: &Path) -> Command {
        let mut command = self.test_command(plan, dir);
        if self.logs {
            command.arg("--logfile").arg(dir.join("libtest.log"));
        }
        if plan.perturbation.cpus == Some(Cpus::One) {
            pin_to_one_cpu(&mut command);
        }
        command
    }

    /// The run of `plan` as a user would make it by hand, its files in `dir`: the doctor's
    /// command without its log, with the tests' output shown. Its CPUs are left as they are
    /// (a caller pins them, with `taskset` or on the debugger); whether its environment is
    /// cleared first is `plan.perturbation.scrubbed_env`.
    pub fn user_command(&self, plan: &Plan, dir: &Path) -> Command {
        let mut command = self.test_command(plan, dir);
        command.arg("--nocapture");
        command
    }

    /// What every run of `plan` is given.
    fn test_command(&self, plan: &Plan, dir: &Path) -> Command {
        let mut command = Command::new(&self.binary.path);
        if plan.perturbation.scrubbed_env {
            let kept: Vec<(String, std::ffi::OsString)> = crate::doctor::axes::KEPT_VARIABLES
                .iter()
                .filter_map(|name| Some((name.to_string(), std::env::var_os(name)?)))
                .collect();
            command.env_clear().envs(kept);
        }
        command.arg("--exact").args(&plan.tests);
        if let Some(threads) = plan.threads {
            command.arg(format!("--test-threads={threads}"));
        }
        command
            .current_dir(&self.binary.manifest_dir)
            .env("CARGO_MANIFEST_DIR", &self.binary.manifest_dir)
            .env("CARGO_PKG_NAME", &self.binary.package)
            // A probtest bench among the tests writes its session and report here, never the
            // user's; nor does it print a section into the output read here.
            .env(table::JSON.variable, dir.join("report.json"))
            .env(table::STORE.variable, dir.join("sessions"))
            .env(table::SUMMARY.variable, "0")
            .env("RUST_BACKTRACE", "0")
            // A `#[probtest::repro]` on the test stays out of the way: the doctor diagnoses the
            // test itself.
            .env(ENV_REPRO, REPRO_INERT)
            .env("TMPDIR", dir);
        for name in [
            "NEXTEST",
            "NEXTEST_TEST_PHASE",
            "NEXTEST_TEST_NAME",
            "NEXTEST_RUN_ID",
            "RUST_TEST_THREADS",
            table::HTML.variable,
            table::SESSION.variable,
            table::BASELINE.variable,
            table::ITEMS_OUT.variable,
        ] {
            command.env_remove(name);
        }
        let preloaded = plan.perturbation.needs_preload() && self.preload.is_some();
        if let (true, Some(library)) = (preloaded, &self.preload) {
            command
                .env("LD_PRELOAD", library)
                .env(crate::doctor::preload::ENV_LOG, dir.join("preload.log"));
        }
        for (name, value) in plan.perturbation.env() {
            command.env(name, value);
        }
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let home = dir.join("home");
        if !plan.perturbation.fresh_home || std::fs::create_dir_all(&home).is_ok() {
            command.envs(plan.perturbation.home_env(&home));
        }
        command
    }

    /// How the victim ended in a finished run whose files are in `dir`.
    fn ending(
        &self,
        victim: &str,
        plan: &Plan,
        dir: &Path,
        finished: &process::Finished,
    ) -> (Ending, Option<String>) {
        if let Ok(text) = std::fs::read_to_string(dir.join("preload.log")) {
            self.events
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .extend(
                    text.lines()
                        .filter(|line| !line.starts_with(WRITE_PREFIX))
                        .map(str::to_string),
                );
        }
        let Some(status) = finished.status else {
            let ending = match finished.stopped {
                Some(process::Stop::Budget) => Ending::NotRun,
                _ => Ending::Hang,
            };
            return (ending, None);
        };
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        let log = self
            .logs
            .then(|| std::fs::read_to_string(dir.join("libtest.log")).unwrap_or_default());
        let stdout = String::from_utf8_lossy(&finished.stdout);
        let outcome = Outcome {
            log: log.as_deref(),
            stdout: &stdout,
            code: status.code(),
            signal,
            alone: plan.tests.len() == 1,
        };
        let mut ending = ending_of(victim, &outcome);
        let mut message = None;
        if let Some((recorded, said)) = self.recorded(victim, dir) {
            // The run's own record says how it went; libtest's line only says whether the item
            // passed, which a gated case's failing run does.
            if ending != Ending::Hang && !matches!(ending, Ending::Crash(_)) {
                ending = recorded;
                message = said;
            }
        }
        if ending == Ending::Pass {
            self.note_pass(finished.took);
        }
        (ending, message)
    }

    /// The outcome `victim`'s run recorded in the run's report, for a probtest row, with its
    /// message.
    fn recorded(&self, victim: &str, dir: &Path) -> Option<(Ending, Option<String>)> {
        let row = self.row.as_ref()?;
        let run = row
            .items
            .iter()
            .find(|(name, _)| name == victim)
            .map(|(_, run)| *run)?;
        let record = records_of(&dir.join("report.json"), &row.case)?
            .into_iter()
            .find(|record| record.run == run)?;
        let ending = match record.outcome.as_str() {
            "pass" => Ending::Pass,
            outcome @ ("fail" | "error") => {
                Ending::Fail(recorded_fingerprint(outcome, record.message.as_deref()))
            }
            _ => Ending::NotRun,
        };
        Some((ending, record.message))
    }

    /// How many CPUs the runs may use.
    pub fn cpus(&self) -> usize {
        self.jobs
    }

    /// `count` runs of `plan`; at once, up to a process per core, unless `serial`.
    pub fn run_many(&self, plan: &Plan, count: usize, serial: bool) -> Vec<Ending> {
        let jobs = if serial {
            1
        } else {
            self.jobs.min(count).max(1)
        };
        let next = AtomicU64::new(0);
        let endings = Mutex::new(Vec::with_capacity(count));
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(|| {
                    while (next.fetch_add(1, Ordering::Relaxed) as usize) < count {
                        let ending = self.run(plan);
                        endings
                            .lock()
                            .unwrap_or_else(|poison| poison.into_inner())
                            .push(ending);
                    }
                });
            }
        });
        endings
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// `count_a` runs of `a` and `count_b` runs of `b`, taking turns: what drifts while they
    /// run (the wall clock, the machine's load) falls on both alike, so that a difference
    /// between them is the plans', not the moment's.
    pub fn run_interleaved(
        &self,
        (a, count_a): (&Plan, usize),
        (b, count_b): (&Plan, usize),
        serial: bool,
    ) -> (Vec<Ending>, Vec<Ending>) {
        let mut order = Vec::with_capacity(count_a + count_b);
        for index in 0..count_a.max(count_b) {
            if index < count_a {
                order.push(true);
            }
            if index < count_b {
                order.push(false);
            }
        }
        let jobs = if serial {
            1
        } else {
            self.jobs.min(order.len()).max(1)
        };
        let next = AtomicU64::new(0);
        let endings = Mutex::new(Vec::with_capacity(order.len()));
        std::thread::scope(|scope| {
            for _ in 0..jobs {
                scope.spawn(|| loop {
                    let index = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(&is_a) = order.get(index) else {
                        break;
                    };
                    let ending = self.run(if is_a { a } else { b });
                    endings
                        .lock()
                        .unwrap_or_else(|poison| poison.into_inner())
                        .push((is_a, ending));
                });
            }
        });
        let endings = endings
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        let (mut of_a, mut of_b) = (Vec::new(), Vec::new());
        for (is_a, ending) in endings {
            if is_a {
                of_a.push(ending);
            } else {
                of_b.push(ending);
            }
        }
        (of_a, of_b)
    }

    /// After a passing run: the timeout becomes ten times the slowest passing run, at least
    /// five seconds.
    fn note_pass(&self, took: Duration) {
        if self.fixed_timeout {
            return;
        }
        let mut slowest = self
            .slowest_pass
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        *slowest = (*slowest).max(took);
        let timeout = (*slowest * 10).max(LEAST_TIMEOUT);
        self.timeout_ms
            .store(timeout.as_millis() as u64, Ordering::Relaxed);
    }
}
