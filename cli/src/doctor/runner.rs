//! One diagnostic run: a fresh process of the test binary, running the victim (alone, after
//! some tests, or beside them), perturbed, killed at the timeout; and many such runs at once
//! where the axis allows.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::doctor::axes::Perturbation;
use crate::doctor::cargo::TestBinary;
use crate::doctor::fingerprint::{ending_of, Ending};

/// Which tests a run runs, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The tests run, the victim among them (libtest runs them in name order).
    pub tests: Vec<String>,
    /// `--test-threads`: `None` for libtest's default (one thread per core).
    pub threads: Option<usize>,
    /// What the run changes in the process.
    pub perturbation: Perturbation,
}

impl Plan {
    /// The victim alone, on one thread.
    pub fn alone(victim: &str, perturbation: Perturbation) -> Plan {
        Plan {
            tests: vec![victim.to_string()],
            threads: Some(1),
            perturbation,
        }
    }
}

/// Runs the victim's binary.
pub struct Runner {
    pub binary: TestBinary,
    pub victim: String,
    /// The preload library, where it applies to the binary.
    pub preload: Option<PathBuf>,
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
}

/// The timeout while no run has passed yet.
const FIRST_TIMEOUT: Duration = Duration::from_secs(60);
/// The least timeout once a run has passed.
const LEAST_TIMEOUT: Duration = Duration::from_secs(5);

impl Runner {
    pub fn new(
        binary: TestBinary,
        victim: String,
        preload: Option<PathBuf>,
        timeout: Option<Duration>,
    ) -> Runner {
        let jobs = std::thread::available_parallelism().map_or(2, usize::from);
        Runner {
            binary,
            victim,
            preload,
            timeout_ms: AtomicU64::new(timeout.unwrap_or(FIRST_TIMEOUT).as_millis() as u64),
            fixed_timeout: timeout.is_some(),
            slowest_pass: Mutex::new(Duration::ZERO),
            runs: AtomicU64::new(0),
            jobs,
        }
    }

    /// The timeout now.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed))
    }

    /// Runs made so far.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }

    /// One run of `plan`: how the victim ended.
    pub fn run(&self, plan: &Plan) -> Ending {
        self.runs.fetch_add(1, Ordering::Relaxed);
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
            // A probtest bench among the tests must not write the user's report, nor print a
            // section into the output read here.
            .env_remove("PROB_JSON")
            .env("PROB_SUMMARY", "0")
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for name in [
            "NEXTEST",
            "NEXTEST_TEST_PHASE",
            "NEXTEST_TEST_NAME",
            "RUST_TEST_THREADS",
        ] {
            command.env_remove(name);
        }
        if plan.perturbation.needs_preload() {
            if let Some(library) = &self.preload {
                command.env("LD_PRELOAD", library);
            }
        }
        for (name, value) in plan.perturbation.env() {
            command.env(name, value);
        }
        // A temporary directory of its own: runs going on at once never share files through
        // it, while the tests of one run do.
        let scratch = self.scratch_dir();
        if let Some(dir) = &scratch {
            command.env("TMPDIR", dir);
            if plan.perturbation.fresh_home {
                let home = dir.join("home");
                if std::fs::create_dir_all(&home).is_ok() {
                    command
                        .env("HOME", &home)
                        .env("XDG_CONFIG_HOME", home.join(".config"))
                        .env("XDG_DATA_HOME", home.join(".local/share"))
                        .env("XDG_CACHE_HOME", home.join(".cache"))
                        .env("XDG_STATE_HOME", home.join(".local/state"));
                }
            }
        }
        let started = Instant::now();
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => return Ending::Crash(format!("cannot start the test binary: {error}")),
        };
        let mut stdout = child.stdout.take();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(stdout) = stdout.as_mut() {
                let _ = stdout.read_to_string(&mut text);
            }
            text
        });
        let timeout = self.timeout();
        let mut pause = Duration::from_millis(1);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() >= timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(20));
                }
                Err(_) => break None,
            }
        };
        let stdout = reader.join().unwrap_or_default();
        if let Some(dir) = &scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
        let Some(status) = status else {
            return Ending::Hang;
        };
        #[cfg(unix)]
        let signal = std::os::unix::process::ExitStatusExt::signal(&status);
        #[cfg(not(unix))]
        let signal = None;
        let ending = ending_of(&self.victim, &stdout, status.code(), signal);
        if ending == Ending::Pass {
            self.note_pass(started.elapsed());
        }
        ending
    }

    /// A fresh temporary directory for one run, under the system's.
    fn scratch_dir(&self) -> Option<PathBuf> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "probtest-doctor-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).ok().map(|()| dir)
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
