//! One test process of a diagnostic run: started as the leader of a process group of its own,
//! its stdout read while it runs and kept in bounded form, and killed with everything it
//! started at its deadline. Once the test process has exited, what it wrote is taken and the
//! run is over: a child it left behind that keeps the pipe open (a `sleep`, a daemon) never
//! holds the doctor up.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::doctor::runner::cleanup::Group;

/// How much of a run's stdout is kept: its last bytes, where libtest puts the failures and its
/// closing line. A test that prints more loses its beginning, never the run.
pub const KEPT_OUTPUT: usize = 1 << 20;

/// Why a run was stopped before it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Past the run's timeout: a hang.
    Timeout,
    /// Past the diagnosis's budget: not evidence either way.
    Budget,
}

/// How a test process ended.
pub struct Finished {
    /// Its exit status; `None` when it was stopped.
    pub status: Option<ExitStatus>,
    /// Why it was stopped, if it was.
    pub stopped: Option<Stop>,
    /// The last [`KEPT_OUTPUT`] bytes of its stdout.
    pub stdout: Vec<u8>,
    /// How long it ran.
    pub took: Duration,
}

/// Starts `command` (its stdin, stdout and stderr are set here) and waits for it, killing its
/// process group at `timeout` or at `deadline`, whichever comes first.
pub fn run(
    command: &mut Command,
    timeout: Duration,
    deadline: Instant,
) -> std::io::Result<Finished> {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let started = Instant::now();
    let (mut child, group) = Group::spawn(command)?;
    let mut reader = child.stdout.take().map(Tail::new);
    let stop_at = (started + timeout).min(deadline);
    let (status, stopped) = loop {
        if let Some(tail) = reader.as_mut() {
            // Waits for output at most a few milliseconds, so that an exit is seen soon.
            tail.wait_and_read(Duration::from_millis(5));
        } else {
            std::thread::sleep(Duration::from_millis(2));
        }
        match child.try_wait() {
            Ok(Some(status)) => break (Some(status), None),
            Ok(None) if Instant::now() >= stop_at => {
                group.kill();
                let _ = child.wait();
                let why = if stop_at < started + timeout {
                    Stop::Budget
                } else {
                    Stop::Timeout
                };
                break (None, Some(why));
            }
            Ok(None) => {}
            Err(_) => {
                group.kill();
                let _ = child.wait();
                break (None, Some(Stop::Timeout));
            }
        }
    };
    // The test process is gone: what it wrote is in the pipe now. What it started and left in
    // its group goes with it.
    group.kill();
    let stdout = match reader {
        Some(mut tail) => {
            tail.drain();
            tail.into_bytes()
        }
        None => Vec::new(),
    };
    Ok(Finished {
        status,
        stopped,
        stdout,
        took: started.elapsed(),
    })
}

/// A pipe read without blocking, keeping its last [`KEPT_OUTPUT`] bytes.
struct Tail {
    pipe: std::process::ChildStdout,
    kept: Vec<u8>,
    closed: bool,
}

impl Tail {
    fn new(pipe: std::process::ChildStdout) -> Tail {
        set_nonblocking(&pipe);
        Tail {
            pipe,
            kept: Vec::new(),
            closed: false,
        }
    }

    /// Waits until the pipe has something, or `wait` passes, then reads what is there.
    fn wait_and_read(&mut self, wait: Duration) {
        if self.closed {
            std::thread::sleep(wait);
            return;
        }
        poll_readable(&self.pipe, wait);
        self.drain();
    }

    /// Reads what the pipe holds now, without waiting for more.
    fn drain(&mut self) {
        let mut buffer = [0u8; 64 * 1024];
        while !self.closed {
            match self.pipe.read(&mut buffer) {
                Ok(0) => self.closed = true,
                Ok(read) => self.keep(&buffer[..read]),
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                // `WouldBlock`: nothing more now. Anything else ends the reading, not the run.
                Err(error) => {
                    if error.kind() != std::io::ErrorKind::WouldBlock {
                        self.closed = true;
                    }
                    break;
                }
            }
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        self.kept.extend_from_slice(bytes);
        // Trimmed in halves, so that a test printing in small pieces costs a copy per half
        // buffer, not per piece.
        if self.kept.len() > 2 * KEPT_OUTPUT {
            let cut = self.kept.len() - KEPT_OUTPUT;
            self.kept.drain(..cut);
        }
    }

    fn into_bytes(mut self) -> Vec<u8> {
        if self.kept.len() > KEPT_OUTPUT {
            let cut = self.kept.len() - KEPT_OUTPUT;
            self.kept.drain(..cut);
        }
        self.kept
    }
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn set_nonblocking(pipe: &std::process::ChildStdout) {
    use std::os::fd::AsRawFd;
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a descriptor this process owns, with integer arguments.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

#[cfg(not(unix))]
fn set_nonblocking(_pipe: &std::process::ChildStdout) {}

#[cfg(unix)]
#[allow(unsafe_code)]
fn poll_readable(pipe: &std::process::ChildStdout, wait: Duration) {
    use std::os::fd::AsRawFd;
    let mut polled = libc::pollfd {
        fd: pipe.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one pollfd that lives across the call.
    unsafe {
        libc::poll(&mut polled, 1, millis);
    }
}

#[cfg(not(unix))]
fn poll_readable(_pipe: &std::process::ChildStdout, wait: Duration) {
    std::thread::sleep(wait);
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    #[test]
    fn a_child_that_keeps_the_pipe_open_does_not_hold_the_run() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30 & echo done"]);
        let started = Instant::now();
        let finished = run(&mut command, Duration::from_secs(20), far()).expect("sh runs");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(finished.status.is_some_and(|status| status.success()));
        assert_eq!(finished.stdout, b"done\n");
    }

    #[test]
    fn the_timeout_kills_the_whole_group() {
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 30; echo never"]);
        let finished = run(&mut command, Duration::from_millis(200), far()).expect("sh runs");
        assert_eq!(finished.stopped, Some(Stop::Timeout));
        assert!(finished.took < Duration::from_secs(5));
        let finished = run(
            Command::new("sleep").arg("30"),
            Duration::from_secs(30),
            Instant::now() + Duration::from_millis(100),
        )
        .expect("sleep runs");
        assert_eq!(finished.stopped, Some(Stop::Budget));
    }

    #[test]
    fn output_is_kept_in_bounded_form_and_bytes_as_they_are() {
        let mut command = Command::new("sh");
        command.args(["-c", "head -c 3000000 /dev/zero; printf '\\377tail\\n'"]);
        let finished = run(&mut command, Duration::from_secs(20), far()).expect("sh runs");
        assert_eq!(finished.stdout.len(), KEPT_OUTPUT);
        assert!(finished.stdout.ends_with(b"\xfftail\n"));
    }
}
