//! The environment variables that carry a perturbation into a test process: the preload
//! library's, which it reads at the process's first call it interposes, and the one that keeps a
//! `#[probtest::repro]` attribute from acting again inside the run it starts.

/// A decimal `u64`: every draw of OS entropy comes from one deterministic stream seeded with it,
/// process-wide, advancing with each call.
pub const ENV_SEED: &str = "PROBTEST_DOCTOR_SEED";

/// Unix seconds, decimal, optionally with a fraction (`1893455999.5`): the wall clock reads this
/// at the process's first read, then advances with the monotonic clock.
pub const ENV_TIME: &str = "PROBTEST_DOCTOR_TIME";

/// `1`: the wall clock stays at [`ENV_TIME`] instead of advancing.
pub const ENV_TIME_FROZEN: &str = "PROBTEST_DOCTOR_TIME_FROZEN";

/// `hash`: the seed pins std's hash keys only (the draws made with `GRND_INSECURE`), from the
/// same stream as without it; other draws are real.
pub const ENV_SEED_SCOPE: &str = "PROBTEST_DOCTOR_SEED_SCOPE";

/// Milliseconds: every read of the wall clock or a monotonic clock returns at least this much
/// more than the read before it.
pub const ENV_TICK_MS: &str = "PROBTEST_DOCTOR_TICK_MS";

/// `block`: `connect` and `sendto` to an address outside loopback fail with `ENETUNREACH`.
pub const ENV_NET: &str = "PROBTEST_DOCTOR_NET";

/// A file the library appends what it did to, a line each: `entropy hash` and `entropy other`
/// at the first draw of each kind, `blocked <address>` per refused connection.
pub const ENV_LOG: &str = "PROBTEST_DOCTOR_LOG";

/// `1`: each call that changes the file system by path (opened for writing, created, removed,
/// renamed, made, linked, truncated) and succeeds appends `write <op> <absolute path>` to
/// [`ENV_LOG`]; the calls themselves go through unchanged.
pub const ENV_WRITES: &str = "PROBTEST_DOCTOR_WRITES";

/// `inert`: a `#[probtest::repro]` attribute runs its test as if it were not there. Set in the
/// process the attribute starts for its run, and in every run of the doctor, which diagnoses the
/// test itself.
pub const ENV_REPRO: &str = "PROBTEST_REPRO";

/// The value of [`ENV_REPRO`] that makes the attribute inert.
pub const REPRO_INERT: &str = "inert";
