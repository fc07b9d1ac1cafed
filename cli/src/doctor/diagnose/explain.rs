//! What a provoked axis means, in words: the verdict, its headline and the plain explanation
//! of a value that failed every verifying run.

use crate::doctor::axes::{self, Axis, Cpus, Perturbation, KEPT_VARIABLES};

/// A value of an axis that failed every verifying run, and what was seen on the way.
pub(super) struct Found<'a> {
    pub axis: Axis,
    pub perturbation: &'a Perturbation,
    /// The provocation's label.
    pub label: &'a str,
    /// The counterfactual's value.
    pub benign: &'a Perturbation,
    /// The baseline's runs and failures.
    pub baseline: (u64, u64),
    /// The verification's runs and failures.
    pub verify: (u64, u64),
    /// The destinations the blocked network refused, `address:port`.
    pub blocked: Vec<String>,
    /// For entropy: whether hash iteration order alone explains it.
    pub hash_order: Option<String>,
    /// The probtest row the victim is a run of, if it is one.
    pub row: Option<&'a str>,
}

/// The verdict, the headline and the explanation of `found`.
pub(super) fn verdict(found: &Found) -> (&'static str, String, String) {
    let (base_runs, base_failed) = found.baseline;
    let (runs, failed) = found.verify;
    let benign = axes::describe(found.benign);
    let opening = format!(
        "Failed {base_failed}/{base_runs} isolated baseline runs; fails {failed}/{runs} with"
    );
    match found.axis {
        Axis::Entropy if found.row.is_some() => (
            "flaky-entropy",
            "depends on the OS's randomness: the sampler's own".into(),
            format!(
                "{opening} every draw from the OS pinned to seed {} and passes with {benign}. {} The row {} is a probtest row judged by its rate: if what it calls samples its answer from OS-seeded randomness (a model at a temperature, a randomized algorithm), this is the sampler's intended randomness, which the row's pass rate and gate measure, not a bug around it. The seed makes one failing answer reproducible, to debug it; to keep the harness's own flakes apart from the model's, wrap the model call in probtest::cached.",
                found.perturbation.seed.unwrap_or_default(),
                found.hash_order.as_deref().unwrap_or_default(),
                found.row.unwrap_or_default(),
            ),
        ),
        Axis::Entropy => (
            "flaky-entropy",
            "depends on the OS's randomness (hash order, random seeds)".into(),
            format!(
                "{opening} every draw from the OS pinned to seed {} and passes with {benign}. The outcome depends on what the process draws from the OS: std's HashMap and HashSet iteration order (their keys come from getrandom), rand's OS-seeded generators, random ids. {} If the test iterates a HashMap or HashSet, sort, or use a BTreeMap; seed a generator it owns.",
                found.perturbation.seed.unwrap_or_default(),
                found.hash_order.as_deref().unwrap_or_default(),
            ),
        ),
        Axis::Time if found.perturbation.tick_ms.is_some() => (
            "flaky-time",
            "assumes it runs fast".into(),
            format!(
                "{opening} {} and passes with {benign}. It measures elapsed time (Instant or SystemTime: a TTL, a timeout, a deadline, a rate) and expects little of it to pass; a loaded CI machine pauses a test that long now and then. Give the deadline room, or inject the clock.",
                found.label.trim_start_matches("tick jitter: "),
            ),
        ),
        Axis::Time if axes::in_far_zone(found.perturbation) => (
            "flaky-time",
            "depends on the time zone at a day's boundary".into(),
            format!(
                "{opening} the clock started at {} under TZ={}, and passes at the same instant under TZ=UTC: the zone is what matters. Near a UTC day's boundary, the local date in a zone far from UTC is another day, so code that takes a date in UTC and another in local time (Utc::now() beside Local::now(), a timestamp stamped in one and checked in the other) disagrees with itself there: on a machine in such a zone, for hours of every day. Take both dates in one zone.",
                found.perturbation.clock.map(|clock| axes::utc(clock.at)).unwrap_or_default(),
                found.perturbation.tz.as_deref().unwrap_or_default(),
            ),
        ),
        Axis::Time => (
            "flaky-time",
            "depends on the wall clock".into(),
            format!(
                "{opening} the clock started at {} and passes with the {benign}. The outcome depends on when it runs: a boundary of a second, minute, day, month or year, a daylight-saving change, or an assumption about the time of day.",
                found.perturbation.clock.map(|clock| axes::utc(clock.at)).unwrap_or_default(),
            ),
        ),
        Axis::Scheduling => {
            let (headline, how) = match (found.perturbation.cpus, found.perturbation.stress) {
                (Some(Cpus::One), _) => (
                    "depends on getting the CPU when it wants it",
                    "on one core shared with busy threads: it assumes its threads run promptly (a sleep standing in for waiting on another thread, a deadline), or they interleave badly when preempted",
                ),
                (_, true) => (
                    "races between its own threads",
                    "on every core, each shared with busy threads: its threads run at once and are preempted at any instruction",
                ),
                _ => (
                    "races between its own threads",
                    "whenever its threads run at once on several cores",
                ),
            };
            (
                "flaky-scheduling",
                headline.into(),
                format!(
                    "{opening} its process scheduled {how}; passes with {benign}. The outcome depends on how its threads are scheduled: a data race (a read-modify-write that is not one atomic operation, a check-then-act), an ordering assumed between threads, or a timing that holds only on an idle machine. Make the shared update atomic or lock it; model-check lock-free code with loom."
                ),
            )
        }
        Axis::Network => {
            let reached = match found.blocked.as_slice() {
                [] => String::new(),
                [one] => format!(" It tried to reach {one}."),
                [first, rest @ ..] => format!(
                    " It tried to reach {first} and {} other address{}.",
                    rest.len(),
                    if rest.len() == 1 { "" } else { "es" }
                ),
            };
            (
                "flaky-network",
                "depends on the live network".into(),
                format!(
                    "{opening} outbound connections blocked (loopback open) and passes with the network open.{reached} The failure under the block is the refused connection's own (perturbation-induced, not a wrong result of the test), but an outage, a DNS failure or a rate limit on CI does the same: the test is hostage to a live network call. Stub the call, or serve it from loopback."
                ),
            )
        }
        Axis::Fs => (
            "flaky-fs",
            "depends on files in the user's home directory".into(),
            format!(
                "{opening} a fresh, empty HOME and passes with the user's own. The test reads something from the home directory (configuration, credentials, a cache, leftovers of an earlier run) that a clean machine, a CI runner or another developer does not have."
            ),
        ),
        Axis::Env if found.perturbation.xdg_dirs => (
            "flaky-env",
            "depends on the XDG variables of the environment it inherits".into(),
            format!(
                "{opening} XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME and XDG_STATE_HOME set to their defaults under HOME, and passes with them as they were. Many desktops set them and CI runners do not (or the other way round): the test assumes one of the two. Make it set, or clear, what it reads."
            ),
        ),
        Axis::Env | Axis::Order | Axis::Parallel => (
            "flaky-env",
            "depends on the environment it inherits".into(),
            format!(
                "{opening} the environment scrubbed to {} and passes with the one it was given. The test reads an environment variable (a token, a locale, a path, a switch) that a clean CI runner or another developer's shell does not set.",
                KEPT_VARIABLES.join(", ")
            ),
        ),
    }
}
