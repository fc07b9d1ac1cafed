//! The verdict item of a gated case (`<case>::verdict`, `PROB_GATE_ITEMS`): a test item of its
//! own that passes or fails with the case's gate, so that libtest's failure list, nextest's
//! JUnit and rerun-failed tools name a failed gate, while the case's runs stay samples. Under
//! `cargo test` it judges this process's runs of the case, once those still executing have
//! ended; under nextest (a process per item) it judges the session store, once the runs other
//! processes have started there have ended.

use std::thread;
use std::time::{Duration, Instant};

use crate::harness::registry::{run_item_names, Bench, Case};
use crate::harness::settings::{self, Settings};
use crate::harness::{recorder, timeout};
use crate::model::effective_gate;
use crate::model::Row;
use crate::render::{bar_text, bound_percent};
use crate::types::stats::{GateResult, Undecided, Verdict};

/// How long a verdict waits for runs still executing when the case has no timeout of its own:
/// a provider call can take minutes, and a verdict judged without it would be wrong.
const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// How often the waiting verdict looks again.
const POLL: Duration = Duration::from_millis(50);

/// How long the session store must stay still, with no run of the case executing, before a
/// verdict under nextest judges fewer runs than the case has.
const QUIET: Duration = Duration::from_secs(2);

/// The body of `case`'s verdict item: returns when the gate passes (or the case has none),
/// panics with the verdict when it fails.
pub fn verdict(case: &'static Case) {
    let settings = settings::get(&case.bench.config);
    if let Some(problem) = &settings.problem {
        panic!("{problem}");
    }
    // Under PROB_STOP=sequential a stoppable rate gate is judged by its confidence sequence.
    let gate = crate::types::stats::stopping::judged_gate(
        effective_gate(case.bench.gate(), &settings.stats),
        case.bench.needs_every_run(),
        &settings.stats,
    );
    // A latency gate (`max_latency`) is judged after the rate gate, from the run times.
    let latency_gated = case.info().latency.is_some_and(|l| l.max_latency.is_some());
    let Some(gate) = gate else {
        if latency_gated {
            judge_latency(case, settings);
        }
        return;
    };
    let [passes, fails, errors] = if settings.per_test {
        match from_session(case, settings) {
            Ok(counts) => counts,
            Err(problem) => panic!("{}: the verdict cannot be judged: {problem}", case.row_id),
        }
    } else {
        wait_for_runs_here(case, settings);
        case.counts()
    };
    let result = gate.judge(&settings.stats, passes, fails, errors);
    if result.fails(settings.stats.undecided) {
        panic!("{}", message(case.row_id, &result));
    }
    if latency_gated {
        judge_latency(case, settings);
    }
}

/// Judges `case`'s latency gate on the run times in the session store, once its runs are in
/// (under `cargo test` too: the times are in the store, not in the case's counters).
fn judge_latency(case: &'static Case, settings: &Settings) {
    if !settings.per_test {
        wait_for_runs_here(case, settings);
    }
    let row = match session_row(case) {
        Ok(row) => row,
        Err(problem) => panic!("{}: the verdict cannot be judged: {problem}", case.row_id),
    };
    let Some(latency) = row.and_then(|row| row.latency) else {
        return;
    };
    let fails = match latency.verdict {
        Some(Verdict::Fail) => true,
        Some(Verdict::Undecided) => settings.stats.undecided == Undecided::Fail,
        _ => false,
    };
    if fails {
        let ci = latency.ci.as_ref();
        let bound = |value: Option<f64>| value.map_or("—".to_string(), |v| format!("{v:.6}s"));
        panic!(
            "{}: latency gate max_latency={}s ({}) is {:?} on {} runs, interval [{}, {}]",
            case.row_id,
            latency.max_latency.unwrap_or_default(),
            latency.label(),
            latency.verdict.unwrap_or(Verdict::Undecided),
            latency.total,
            bound(ci.and_then(|ci| ci.low)),
            bound(ci.and_then(|ci| ci.high)),
        );
    }
}

/// `triage::refund: gate min_rate 0.9 is Fail on 7/10 runs, interval [35%, 93%]`.
pub(crate) fn message(row_id: &str, result: &GateResult) -> String {
    format!(
        "{row_id}: gate {} is {:?} on {}/{} runs, interval [{}, {}]",
        bar_text(result.rule),
        result.verdict,
        result.passes,
        result.sample,
        bound_percent(result.low),
        bound_percent(result.high),
    )
}

/// How long to wait for runs of `case` still executing: its timeout and some, else ten minutes.
fn wait_limit(case: &'static Case) -> Duration {
    match timeout::of(case) {
        Ok(Some(timeout)) => timeout + Duration::from_secs(30),
        _ => DEFAULT_WAIT,
    }
}

/// Waits until every run item of `case` that libtest's filters select has returned in this
/// process: a thread spawned for a run may not have begun when the verdict's does, and a run
/// still executing has not ended.
fn wait_for_runs_here(case: &'static Case, settings: &Settings) {
    wait_for_all_here(&[case], settings);
}

/// [`wait_for_runs_here`] for every case of `cases`.
fn wait_for_all_here(cases: &[&'static Case], settings: &Settings) {
    let _ = settings;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = Filter::of(&args);
    let expected: u64 = cases
        .iter()
        .map(|case| {
            run_item_names(case)
                .iter()
                .filter(|name| filter.selects(name))
                .count() as u64
        })
        .sum();
    let Some(first) = cases.first() else {
        return;
    };
    let deadline = Instant::now() + wait_limit(first);
    let ended = || cases.iter().map(|case| case.items_ended()).sum::<u64>();
    while ended() < expected && Instant::now() < deadline {
        thread::sleep(POLL);
    }
}

/// Which tests libtest runs, from its command line: the names that contain a filter (equal one,
/// with `--exact`), or every name without filters, less those `--skip` names.
#[derive(Debug, Default, PartialEq)]
struct Filter {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
}

impl Filter {
    fn of(args: &[String]) -> Filter {
        // libtest's options that take a value, which is no filter.
        const VALUED: [&str; 7] = [
            "--skip",
            "--test-threads",
            "--format",
            "--color",
            "--logfile",
            "-Z",
            "--shuffle-seed",
        ];
        let mut filter = Filter::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            if arg == "--exact" {
                filter.exact = true;
            } else if arg == "--skip" {
                filter.skips.extend(args.next().cloned());
            } else if let Some(skip) = arg.strip_prefix("--skip=") {
                filter.skips.push(skip.to_string());
            } else if VALUED.contains(&arg.as_str()) {
                args.next();
            } else if !arg.starts_with('-') {
                filter.filters.push(arg.clone());
            }
        }
        filter
    }

    fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }
}

/// The case's passes, fails and errors in the session store, once its runs are in: all of
/// them, or as many as came while the store stayed still for [`QUIET`] with none executing (a
/// filter may have left some out, and a run nextest has just spawned writes its start a moment
/// later). A run still open when the wait runs out counts as the error the store makes of it.
fn from_session(case: &'static Case, settings: &Settings) -> Result<[u64; 3], String> {
    let _ = settings;
    Ok(session_row(case)?.map_or([0, 0, 0], |row| [row.passes, row.fails, row.errors]))
}

/// The case's row in the session store, once its runs are in (as [`from_session`] waits).
fn session_row(case: &'static Case) -> Result<Option<Row>, String> {
    Ok(session_rows(&[case])?.into_iter().next())
}

/// The rows of `cases` in the session store, once their runs are in (as [`from_session`]
/// waits), in the order of `cases`; a case without a row is left out.
fn session_rows(cases: &[&'static Case]) -> Result<Vec<Row>, String> {
    let session = recorder::session_of_process()?;
    let keys: Vec<_> = cases.iter().map(|case| case.info().key()).collect();
    let runs: u64 = cases.iter().map(|case| u64::from(case.bench.runs())).sum();
    let Some(first) = cases.first() else {
        return Ok(Vec::new());
    };
    let deadline = Instant::now() + wait_limit(first);
    let mut last = (usize::MAX, usize::MAX);
    let mut still_since = Instant::now();
    loop {
        let data = session
            .load()
            .map_err(|error| format!("cannot read the session store ({error})"))?;
        let mine = data
            .records
            .iter()
            .filter(|record| keys.contains(&record.key()))
            .count();
        let open = data
            .records
            .iter()
            .zip(&data.open)
            .filter(|(record, open)| open.is_some() && keys.contains(&record.key()))
            .count();
        if (mine, open) != last {
            last = (mine, open);
            still_since = Instant::now();
        }
        let settled = open == 0 && (mine as u64 >= runs || still_since.elapsed() >= QUIET);
        if settled || Instant::now() >= deadline {
            let mut rows = data.into_report().rows;
            rows.retain(|row| keys.contains(&row.info.key()));
            rows.sort_by_key(|row| keys.iter().position(|key| *key == row.info.key()));
            return Ok(rows);
        }
        thread::sleep(POLL);
    }
}

/// The body of a function's margin item (`<function>__margins`, for `margin =` in its
/// attribute): returns when every margin of its comparison passes, panics with those that do
/// not. It judges once the function's runs are in, from this process's counts under `cargo
/// test` and from the session store under nextest.
pub fn margin_verdict(bench: &'static Bench) {
    let settings = settings::get(&bench.config);
    if let Some(problem) = &settings.problem {
        panic!("{problem}");
    }
    let cases: Vec<&'static Case> = bench.cases().to_vec();
    let rows = if settings.per_test {
        match session_rows(&cases) {
            Ok(rows) => rows,
            Err(problem) => panic!(
                "{}: the margin cannot be judged: {problem}",
                bench.function()
            ),
        }
    } else {
        wait_for_all_here(&cases, settings);
        crate::harness::margins::rows_from_counts(bench)
    };
    if let Some(failing) = crate::harness::margins::failing(&rows, settings) {
        panic!("{failing}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(args: &[&str]) -> Filter {
        Filter::of(&args.iter().map(|arg| arg.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_filter_reads_libtests_command_line() {
        let all = filter(&["--test-threads", "2", "--nocapture"]);
        assert!(all.selects("bench_x::run01"));
        let some = filter(&["bench_x", "--skip", "run02", "--format=terse"]);
        assert!(some.selects("bench_x::run01"));
        assert!(!some.selects("bench_x::run02"));
        assert!(!some.selects("bench_y::run01"));
        let exact = filter(&["--exact", "bench_x::run01", "--test-threads=1"]);
        assert!(exact.selects("bench_x::run01"));
        assert!(!exact.selects("bench_x::run011"));
        assert_eq!(
            filter(&["--skip=run03", "--color", "never"]),
            Filter {
                filters: Vec::new(),
                skips: vec!["run03".into()],
                exact: false,
            }
        );
    }
}
