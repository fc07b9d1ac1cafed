//! The doctor's preload library seen from Rust code: the crate's test binary runs itself again
//! (its `probe` test alone) under the very file `library()` writes, as a probe printing what its process sees (`SystemTime::now()` twice 50 ms
//! apart, a `HashSet`'s iteration order, a `RandomState` hash: std's keys come from
//! `getrandom`, the time between two `Instant` reads, connections out and over loopback), and the
//! tests check that the doctor's variables pin those: one seed, one order; another seed, another
//! order; no seed, a fresh order each run; the hash keys alone pinned as when every draw is; the
//! clock starts at the given instant and advances, or stays there when frozen; tick jitter
//! spaces clock reads; timed waits until an instant of a jittered or pinned clock last as long
//! as they were meant to; a blocked network refuses outward connections, keeps loopback, and logs
//! what it refused; a malformed value is named on stderr and changes nothing.

use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::{
    applies_to, library as write_library, ENV_LOG, ENV_NET, ENV_SEED, ENV_SEED_SCOPE, ENV_TICK_MS,
    ENV_TIME, ENV_TIME_FROZEN,
};

/// Every variable of the library: none is inherited by a probe.
const ALL_VARIABLES: [&str; 7] = [
    ENV_SEED,
    ENV_SEED_SCOPE,
    ENV_TIME,
    ENV_TIME_FROZEN,
    ENV_TICK_MS,
    ENV_NET,
    ENV_LOG,
];

/// An address outside loopback (TEST-NET-1, RFC 5737): nothing answers there.
const OUTWARD: &str = "192.0.2.1:9";

/// Set in the probe's process: the `probe` test prints instead of returning at once.
const PROBE: &str = "PROBTEST_PRELOAD_PROBE";

/// Set in the probe's process: it makes timed waits too ([`timed_waits`]).
const PROBE_WAITS: &str = "PROBTEST_PRELOAD_PROBE_WAITS";

/// 2029-12-31T23:59:59.5Z, far from any real clock this runs under.
const INSTANT: &str = "1893455999.5";
const INSTANT_NANOS: u128 = 1_893_455_999_500_000_000;

#[test]
fn probe() {
    if std::env::var_os(PROBE).is_none() {
        return;
    }
    let first = nanos_now();
    std::thread::sleep(Duration::from_millis(50));
    let later = nanos_now();
    let set: HashSet<String> = (0..20).map(|i| format!("item-{i}")).collect();
    let order: Vec<&str> = set.iter().map(String::as_str).collect();
    let hash = RandomState::new().hash_one("probe");
    let start = Instant::now();
    let elapsed = start.elapsed();
    println!("probe-now {first}");
    println!("probe-later {later}");
    println!("probe-order {}", order.join(","));
    println!("probe-hash {hash:016x}");
    println!("probe-elapsed {}", elapsed.as_nanos());
    if std::env::var_os(PROBE_WAITS).is_some() {
        timed_waits();
    }
    // Only where the network is blocked: elsewhere, nothing may answer for a while.
    if std::env::var_os(ENV_NET).is_some() {
        let outward = OUTWARD.parse().expect("an address");
        let outcome = match TcpStream::connect_timeout(&outward, Duration::from_millis(500)) {
            Ok(_) => "connected".to_string(),
            Err(error) => format!("os-error-{}", error.raw_os_error().unwrap_or(-1)),
        };
        println!("probe-outward {outcome}");
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let local = listener.local_addr().expect("its address");
        let outcome = TcpStream::connect(local).map_or_else(|e| e.to_string(), |_| "ok".into());
        println!("probe-loopback {outcome}");
    }
}

/// Timed waits whose deadline is an absolute instant of a clock the library changes, after
/// enough jittered reads to put that clock 100 s ahead of the kernel's: std's
/// `thread::park_timeout` and `Condvar::wait_timeout` (a futex wait until an instant of
/// `CLOCK_MONOTONIC`), and `clock_nanosleep` until an instant of each clock. Each is meant to
/// last 50 ms.
#[allow(unsafe_code)]
fn timed_waits() {
    for _ in 0..400 {
        std::hint::black_box(Instant::now());
    }
    std::thread::park_timeout(Duration::from_millis(50));
    let lock = std::sync::Mutex::new(());
    let guard = lock.lock().expect("a fresh lock");
    let _ = std::sync::Condvar::new().wait_timeout(guard, Duration::from_millis(50));
    for clock in [libc::CLOCK_MONOTONIC, libc::CLOCK_REALTIME] {
        let mut deadline = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a timespec that lives across each call, and no remainder asked for.
        unsafe {
            libc::clock_gettime(clock, &mut deadline);
            deadline.tv_nsec += 50_000_000;
            if deadline.tv_nsec >= 1_000_000_000 {
                deadline.tv_nsec -= 1_000_000_000;
                deadline.tv_sec += 1;
            }
            libc::clock_nanosleep(clock, libc::TIMER_ABSTIME, &deadline, std::ptr::null_mut());
        }
    }
    println!("probe-waited yes");
}

fn nanos_now() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after the epoch")
        .as_nanos()
}

/// What one probe process saw.
#[derive(Debug)]
struct Seen {
    now: u128,
    later: u128,
    order: String,
    hash: String,
    /// Nanoseconds between two reads of `Instant`.
    elapsed: u128,
    /// Lines after `probe-` not parsed above (`outward ...`, `loopback ...`).
    rest: Vec<String>,
    stderr: String,
}

/// Beside the test binary, in the target directory: scratch that `cargo clean` removes.
fn scratch() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    exe.parent().expect("its directory").join("preload-probe")
}

fn library() -> PathBuf {
    write_library(&scratch()).expect("the preload library is written")
}

/// The probe's name as libtest lists it: its module path without the crate's name.
fn probe_name() -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    format!("{module}::probe")
}

/// Runs the probe under the library with `env` (and none of the doctor's other variables).
fn probe_with(env: &[(&str, &str)]) -> Seen {
    probe_with_timeout(env, Duration::from_secs(300))
        .unwrap_or_else(|| panic!("the probe did not end within 300 s under {env:?}"))
}

/// [`probe_with`], killed after `timeout`: `None` then.
fn probe_with_timeout(env: &[(&str, &str)], timeout: Duration) -> Option<Seen> {
    let exe = std::env::current_exe().expect("the test binary");
    assert_eq!(applies_to(&exe), Ok(()));
    let mut command = Command::new(&exe);
    command
        .args(["--exact", &probe_name(), "--nocapture", "--test-threads=1"])
        .env(PROBE, "1")
        .env("LD_PRELOAD", library());
    for name in ALL_VARIABLES {
        command.env_remove(name);
    }
    command
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().expect("the probe runs");
    let started = Instant::now();
    while child.try_wait().expect("the probe is waited for").is_none() {
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let output = child.wait_with_output().expect("the probe's output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the probe failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    // libtest's "test probe ... " shares the first line.
    let field = |name: &str| {
        let marker = format!("probe-{name} ");
        stdout
            .lines()
            .find_map(|line| Some(&line[line.find(&marker)? + marker.len()..]))
            .unwrap_or_else(|| panic!("no {name} in the probe's output:\n{stdout}\n{stderr}"))
            .to_string()
    };
    Some(Seen {
        now: field("now").parse().expect("nanoseconds"),
        later: field("later").parse().expect("nanoseconds"),
        order: field("order"),
        hash: field("hash"),
        elapsed: field("elapsed").parse().expect("nanoseconds"),
        rest: ["outward", "loopback", "waited"]
            .into_iter()
            .filter(|name| stdout.contains(&format!("probe-{name} ")))
            .map(|name| format!("{name} {}", field(name)))
            .collect(),
        stderr,
    })
}

/// A fresh path for the library's log.
fn log_path(name: &str) -> PathBuf {
    let dir = scratch();
    std::fs::create_dir_all(&dir).expect("the scratch directory");
    let path = dir.join(format!("preload-log-{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[test]
fn hash_keys_alone_are_pinned_as_when_every_draw_is() {
    let every = probe_with(&[(ENV_SEED, "5")]);
    let alone = probe_with(&[(ENV_SEED, "5"), (ENV_SEED_SCOPE, "hash")]);
    assert_eq!(every.hash, alone.hash);
    assert_eq!(every.order, alone.order);
}

#[test]
fn the_log_says_which_kinds_of_draw_a_process_made() {
    let log = log_path("draws");
    let log_text = log.to_string_lossy().into_owned();
    probe_with(&[(ENV_SEED, "5"), (ENV_LOG, &log_text)]);
    let lines = std::fs::read_to_string(&log).expect("the log is written");
    // std's HashMap keys, once; the probe draws nothing else from the OS.
    assert_eq!(lines, "entropy hash\n");
}

#[test]
fn tick_jitter_spaces_every_clock_read() {
    let seen = probe_with(&[(ENV_TICK_MS, "250")]);
    assert!(
        seen.elapsed >= 250_000_000,
        "two Instant reads {} ns apart",
        seen.elapsed
    );
    assert!(
        seen.later - seen.now >= 300_000_000,
        "a 50 ms sleep between two jittered reads took {} ns",
        seen.later - seen.now
    );
    let plain = probe_with(&[]);
    assert!(plain.elapsed < 250_000_000, "{} ns", plain.elapsed);
}

#[test]
fn timed_waits_last_as_long_on_every_changed_clock() {
    // Each probe's waits come to about 200 ms; before deadlines were moved onto the kernel's
    // clocks, the jittered ones lasted 100 s each and the pinned wall clock's three years.
    for env in [
        &[(ENV_TICK_MS, "250")][..],
        &[(ENV_TIME, INSTANT), (ENV_TICK_MS, "250")],
        &[(ENV_TIME, INSTANT)],
        &[(ENV_TIME, INSTANT), (ENV_TIME_FROZEN, "1")],
        &[(ENV_TIME, "1623760230.5")],
    ] {
        let env: Vec<(&str, &str)> = env.iter().copied().chain([(PROBE_WAITS, "1")]).collect();
        let started = Instant::now();
        let seen = probe_with_timeout(&env, Duration::from_secs(20));
        let took = started.elapsed();
        assert!(
            seen.as_ref()
                .is_some_and(|seen| seen.rest.contains(&"waited yes".to_string())),
            "the probe's timed waits did not end within 20 s under {env:?}"
        );
        assert!(took < Duration::from_secs(10), "{took:?} under {env:?}");
    }
}

#[test]
fn a_blocked_network_refuses_outward_connections_keeps_loopback_and_logs() {
    let log = log_path("network");
    let log_text = log.to_string_lossy().into_owned();
    let seen = probe_with(&[(ENV_NET, "block"), (ENV_LOG, &log_text)]);
    // ENETUNREACH, as on a machine without a route.
    assert_eq!(
        seen.rest,
        ["outward os-error-101", "loopback ok"],
        "{seen:?}"
    );
    let text = std::fs::read_to_string(&log).expect("the log is written");
    let blocked: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("blocked "))
        .collect();
    assert_eq!(blocked, [format!("blocked {OUTWARD}")], "{text}");
}

#[test]
fn one_seed_gives_one_order_every_run() {
    let first = probe_with(&[(ENV_SEED, "12345")]);
    let second = probe_with(&[(ENV_SEED, "12345")]);
    assert_eq!(first.order, second.order);
    assert_eq!(first.hash, second.hash);
}

#[test]
fn another_seed_gives_another_order() {
    let one = probe_with(&[(ENV_SEED, "1")]);
    let two = probe_with(&[(ENV_SEED, "2")]);
    assert_ne!(one.hash, two.hash);
    // Twenty strings in the same order under other keys: about one chance in 20!.
    assert_ne!(one.order, two.order);
}

#[test]
fn without_a_seed_each_run_draws_fresh_keys() {
    let one = probe_with(&[]);
    let two = probe_with(&[]);
    assert_ne!(one.hash, two.hash, "two runs drew the same 64-bit hash");
    assert!(
        one.stderr.is_empty() && two.stderr.is_empty(),
        "{}",
        one.stderr
    );
}

#[test]
fn the_clock_starts_at_the_instant_and_advances() {
    let seen = probe_with(&[(ENV_TIME, INSTANT)]);
    assert!(
        seen.now.abs_diff(INSTANT_NANOS) < 1_000_000_000,
        "now: {} ns",
        seen.now
    );
    let slept = seen.later - seen.now;
    assert!(
        (50_000_000..10_000_000_000).contains(&slept),
        "a 50 ms sleep took {slept} ns of the shifted clock"
    );
}

#[test]
fn a_frozen_clock_stays_at_the_instant() {
    let seen = probe_with(&[(ENV_TIME, INSTANT), (ENV_TIME_FROZEN, "1")]);
    assert_eq!(seen.now, INSTANT_NANOS);
    assert_eq!(seen.later, INSTANT_NANOS);
}

#[test]
fn a_malformed_value_is_named_and_changes_nothing() {
    let before = nanos_now();
    let seen = probe_with(&[
        (ENV_SEED, "0x2a"),
        (ENV_TIME, "yesterday"),
        (ENV_SEED_SCOPE, "all"),
        (ENV_TICK_MS, "0"),
        (ENV_NET, "off"),
    ]);
    let lines: Vec<&str> = seen.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "probtest-preload: ignoring PROBTEST_DOCTOR_SEED=\"0x2a\": not a decimal u64; \
             entropy is left real",
            "probtest-preload: ignoring PROBTEST_DOCTOR_TIME=\"yesterday\": not unix seconds \
             (digits, optionally .digits); the clock is left real",
            "probtest-preload: ignoring PROBTEST_DOCTOR_SEED_SCOPE=\"all\": not `hash`; every \
             draw follows the seed",
            "probtest-preload: ignoring PROBTEST_DOCTOR_TICK_MS=\"0\": not a whole number of ms \
             from 1 to 60000; no jitter",
            "probtest-preload: ignoring PROBTEST_DOCTOR_NET=\"off\": not `block`; the network \
             is left open",
        ],
        "{}",
        seen.stderr
    );
    assert!(
        seen.now >= before && seen.now - before < 60_000_000_000,
        "the clock is not the real one: {} vs {before}",
        seen.now
    );
    let again = probe_with(&[(ENV_SEED, "0x2a")]);
    assert_ne!(seen.hash, again.hash, "a malformed seed pinned the keys");
}
