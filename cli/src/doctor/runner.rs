//! One diagnostic run: a fresh process of the test binary, running the victim (alone, after
//! some tests, or beside them), perturbed, killed at the timeout; and many such runs at once
//! where the axis allows.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::doctor::axes::{Cpus, Perturbation};
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
    /// Whether the run must have the machine to itself: tests that run beside each other (which
    /// would meet another run's through the files and ports they share), or a run whose
    /// scheduling is the point.
    pub fn exclusive(&self) -> bool {
        self.tests.len() > 1 || self.perturbation.schedules()
    }

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
    /// What the preload library logged in the runs since the last [`Runner::take_events`].
    events: Mutex<BTreeSet<String>>,
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
            events: Mutex::new(BTreeSet::new()),
        }
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
        let preloaded = plan.perturbation.needs_preload() && self.preload.is_some();
        if let (true, Some(library)) = (preloaded, &self.preload) {
            command.env("LD_PRELOAD", library);
        }
        for (name, value) in plan.perturbation.env() {
            command.env(name, value);
        }
        if plan.perturbation.cpus == Some(Cpus::One) {
            pin_to_one_cpu(&mut command);
        }
        // A temporary directory of its own: runs going on at once never share files through
        // it, while the tests of one run do.
        let scratch = self.scratch_dir();
        let log = scratch
            .as_ref()
            .filter(|_| preloaded)
            .map(|dir| dir.join("probtest-doctor.log"));
        if let Some(log) = &log {
            command.env(crate::doctor::preload::ENV_LOG, log);
        }
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
        let stress = plan.perturbation.stress.then(|| {
            Stress::start(match plan.perturbation.cpus {
                Some(Cpus::One) => first_cpu().map_or(Placement::Anywhere(1), Placement::On),
                _ => Placement::Anywhere(self.jobs),
            })
        });
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
        drop(stress);
        let stdout = reader.join().unwrap_or_default();
        if let Some(text) = log.and_then(|log| std::fs::read_to_string(log).ok()) {
            self.events
                .lock()
                .unwrap_or_else(|poison| poison.into_inner())
                .extend(text.lines().map(str::to_string));
        }
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

    /// How many CPUs the runs may use.
    pub fn cpus(&self) -> usize {
        self.jobs
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

/// Busy threads per CPU of a stressed run: the victim's threads get about a seventeenth of a
/// CPU, as on a CI machine running many jobs at once, and wait many time slices whenever they
/// yield or wake.
const BUSY_PER_CPU: usize = 16;

/// Where a stressed run's busy threads run.
#[derive(Clone, Copy)]
enum Placement {
    /// On this CPU, the one the run is pinned to.
    On(usize),
    /// Anywhere, for this many CPUs.
    Anywhere(usize),
}

/// Busy threads for as long as it lives: the load of a shared CI machine, beside a run whose
/// threads must now wait their turn and are preempted at any instruction.
struct Stress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Stress {
    fn start(placement: Placement) -> Stress {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (count, cpu) = match placement {
            Placement::On(cpu) => (BUSY_PER_CPU, Some(cpu)),
            Placement::Anywhere(cpus) => (BUSY_PER_CPU * cpus.max(1), None),
        };
        let threads = (0..count)
            .filter_map(|_| {
                let stop = stop.clone();
                std::thread::Builder::new()
                    .name("doctor-stress".into())
                    .spawn(move || {
                        if let Some(cpu) = cpu {
                            pin_this_thread(cpu);
                        }
                        let mut spin = 0u64;
                        while !stop.load(Ordering::Relaxed) {
                            spin = std::hint::black_box(spin.wrapping_mul(6364136223846793005) + 1);
                        }
                    })
                    .ok()
            })
            .collect();
        Stress { stop, threads }
    }
}

impl Drop for Stress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Moves the calling thread onto `cpu` alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pin_this_thread(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; pid 0 is the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_this_thread(_cpu: usize) {}

/// The first CPU this process may run on.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn first_cpu() -> Option<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and sched_getaffinity writes at most its
    // size into it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return None;
        }
        (0..libc::CPU_SETSIZE as usize).find(|cpu| libc::CPU_ISSET(*cpu, &set))
    }
}

#[cfg(not(target_os = "linux"))]
pub fn first_cpu() -> Option<usize> {
    None
}

/// Has `command`'s process start on [`first_cpu`] alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn pin_to_one_cpu(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let Some(cpu) = first_cpu() else {
        return;
    };
    // SAFETY: between fork and exec the closure only calls sched_setaffinity, a system call
    // (async-signal-safe), on a set built before the fork.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        command.pre_exec(move || {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn pin_to_one_cpu(_command: &mut Command) {}
