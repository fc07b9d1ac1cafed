//! Load and placement for the scheduling axis: busy threads beside a run, as on a loaded CI
//! machine, and a process or thread pinned to one CPU.

use std::process::Command;
use std::sync::atomic::Ordering;

/// Busy threads per CPU of a stressed run: the victim's threads get about a seventeenth of a
/// CPU, as on a CI machine running many jobs at once, and wait many time slices whenever they
/// yield or wake.
const BUSY_PER_CPU: usize = 16;

/// Where a stressed run's busy threads run.
#[derive(Clone, Copy)]
pub enum Placement {
    /// On this CPU, the one the run is pinned to.
    On(usize),
    /// Anywhere, for this many CPUs.
    Anywhere(usize),
}

/// Busy threads for as long as it lives: the load of a shared CI machine, beside a run whose
/// threads must now wait their turn and are preempted at any instruction.
pub struct Stress {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Stress {
    pub fn start(placement: Placement) -> Stress {
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
pub fn pin_to_one_cpu(command: &mut Command) {
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
pub fn pin_to_one_cpu(_command: &mut Command) {}
