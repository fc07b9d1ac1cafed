//! What the doctor leaves behind, on every way out: the process groups of its runs killed and
//! its scratch directory removed when it ends, and also when Ctrl-C, `SIGTERM` or `SIGHUP` ends
//! it. The signals are taken by one thread that waits for them, so that cleaning up never
//! happens inside a signal handler.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};

/// The process groups of the runs under way; `None` once the doctor is ending, when no run
/// may start.
static GROUPS: Mutex<Option<Vec<i32>>> = Mutex::new(Some(Vec::new()));
/// The scratch directories to remove at the end.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poison| poison.into_inner())
}

/// A run's process group, registered while it lives: a signal that ends the doctor kills it.
pub struct Group(i32);

impl Group {
    /// Starts `command`, which must lead a process group of its own, and registers its group;
    /// refused once the doctor is ending. Starting and registering under one lock, so that a
    /// signal's clean-up either sees the group or stops it from starting.
    pub fn spawn(
        command: &mut std::process::Command,
    ) -> std::io::Result<(std::process::Child, Group)> {
        let mut groups = lock(&GROUPS);
        let Some(groups) = groups.as_mut() else {
            return Err(std::io::Error::other("the doctor is ending"));
        };
        let child = command.spawn()?;
        let pgid = child.id() as i32;
        groups.push(pgid);
        Ok((child, Group(pgid)))
    }

    /// Kills every process of the group: the test process and whatever it started that kept
    /// the group (a child that prints, a `sleep` left running).
    pub fn kill(&self) {
        kill_group(self.0);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(groups) = lock(&GROUPS).as_mut() {
            groups.retain(|pgid| *pgid != self.0);
        }
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn kill_group(pgid: i32) {
    if pgid > 1 {
        // SAFETY: kill takes plain integers; a negative pid names the process group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

#[cfg(not(unix))]
fn kill_group(_pgid: i32) {}

/// The doctor's scratch directory, under the system's temporary directory: every run's own
/// directory, session store and report are inside it. Removed when dropped, and by the signal
/// thread.
pub struct Scratch {
    dir: PathBuf,
    next: AtomicU64,
}

impl Scratch {
    /// A new, empty scratch directory.
    pub fn new() -> std::io::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("probtest-doctor-{}-{nanos:09}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        lock(&DIRS).push(dir.clone());
        Ok(Scratch {
            dir,
            next: AtomicU64::new(0),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// A fresh directory for one run, inside the scratch directory (never made anew once the
    /// scratch directory is gone).
    pub fn run_dir(&self) -> std::io::Result<PathBuf> {
        if lock(&GROUPS).is_none() {
            return Err(std::io::Error::other("the doctor is ending"));
        }
        let dir = self
            .dir
            .join(format!("run-{}", self.next.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir)?;
        Ok(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        lock(&DIRS).retain(|dir| *dir != self.dir);
    }
}

/// Takes Ctrl-C, `SIGTERM` and `SIGHUP` for the doctor from now on: each kills the runs under
/// way, removes the scratch directories, and ends the process with 128 + the signal's number.
/// Call it before the doctor starts any thread: the threads started later inherit the blocked
/// signals, so that only the waiting thread receives them (child processes get a clean mask
/// from std).
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn take_signals() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the set is initialized by sigemptyset before use; pthread_sigmask and sigwait
        // take pointers to it that live as long as the calls.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                libc::sigaddset(&mut set, signal);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return;
            }
            let spawned = std::thread::Builder::new()
                .name("doctor-signals".into())
                .spawn(move || {
                    let mut signal = 0;
                    if libc::sigwait(&set, &mut signal) == 0 {
                        clean_up();
                        use std::io::Write;
                        let _ = writeln!(
                            std::io::stderr().lock(),
                            "doctor: stopped by signal {signal}; its runs were killed and its scratch files removed"
                        );
                        std::process::exit(128 + signal);
                    }
                });
            if spawned.is_err() {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            }
        }
    });
}

#[cfg(not(unix))]
pub fn take_signals() {}

/// Kills every registered process group, lets no other start, and removes every registered
/// directory.
fn clean_up() {
    for pgid in lock(&GROUPS).take().unwrap_or_default() {
        kill_group(pgid);
    }
    // A run's thread may still be writing its last file into a directory as it goes: a few
    // tries, so that the removal wins.
    for dir in lock(&DIRS).iter() {
        for _ in 0..10 {
            if std::fs::remove_dir_all(dir).is_ok() || !dir.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
