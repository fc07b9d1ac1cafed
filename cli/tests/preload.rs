//! The doctor's preload library seen from Rust code: this test binary runs itself again, under
//! the library, as a probe printing what its process sees (`SystemTime::now()` twice 50 ms
//! apart, a `HashSet`'s iteration order, a `RandomState` hash: std's keys come from
//! `getrandom`), and the tests check that the doctor's variables pin those: one seed, one order;
//! another seed, another order; no seed, a fresh order each run; the clock starts at the given
//! instant and advances, or stays there when frozen; a malformed value is named on stderr and
//! changes nothing.

#![cfg(probtest_preload)]

// The module itself, so that the probe runs under the very file `library()` writes and is
// accepted by `applies_to`; its unit tests come along and run here too.
#[allow(dead_code)]
#[path = "../src/doctor/preload.rs"]
mod preload;

use std::collections::hash_map::RandomState;
use std::collections::HashSet;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use preload::{ENV_SEED, ENV_TIME, ENV_TIME_FROZEN};

/// Set in the probe's process: the `probe` test prints instead of returning at once.
const PROBE: &str = "PROBTEST_PRELOAD_PROBE";

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
    println!("probe-now {first}");
    println!("probe-later {later}");
    println!("probe-order {}", order.join(","));
    println!("probe-hash {hash:016x}");
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
    stderr: String,
}

fn library() -> PathBuf {
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("preload");
    preload::library(&target_dir).expect("the preload library is written")
}

/// Runs the probe under the library with `env` (and none of the doctor's other variables).
fn probe_with(env: &[(&str, &str)]) -> Seen {
    let exe = std::env::current_exe().expect("the test binary");
    assert_eq!(preload::applies_to(&exe), Ok(()));
    let mut command = Command::new(&exe);
    command
        .args(["--exact", "probe", "--nocapture", "--test-threads=1"])
        .env(PROBE, "1")
        .env("LD_PRELOAD", library());
    for name in [ENV_SEED, ENV_TIME, ENV_TIME_FROZEN] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let output = command.output().expect("the probe runs");
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
    Seen {
        now: field("now").parse().expect("nanoseconds"),
        later: field("later").parse().expect("nanoseconds"),
        order: field("order"),
        hash: field("hash"),
        stderr,
    }
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
    let seen = probe_with(&[(ENV_SEED, "0x2a"), (ENV_TIME, "yesterday")]);
    let lines: Vec<&str> = seen.stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "probtest-preload: ignoring PROBTEST_DOCTOR_SEED=\"0x2a\": not a decimal u64; \
             entropy is left real",
            "probtest-preload: ignoring PROBTEST_DOCTOR_TIME=\"yesterday\": not unix seconds \
             (digits, optionally .digits); the clock is left real",
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
