//! Benchmark of the report file a test process writes on a large session (`cargo bench -p
//! probtest --bench export`): the HTML page of a 100,000-record report, and the size of the
//! HTML page of a 1,000-case session. (The Markdown and JUnit XML are `cargo-probtest`'s.)
//!
//! Makes `synthetic_records(10_000, 10)` (10,000 cases of 10 runs, every fifth run failing or
//! erroring), builds the report once (`Report::build` has its own benchmark, `report`), then
//! times each sink `REPS` times and prints the medians, with one machine-readable `result`
//! line. Run without `--bench` (as `cargo test --benches` does), it only smoke-tests the sinks
//! on 1,000 records.

use std::time::{Duration, Instant};

use probtest::export::{html, History};
use probtest::stats::StatsConfig;
use probtest::Report;

/// Measured repetitions of each sink under `cargo bench`.
const REPS: usize = 5;

fn report(cases: usize, runs: u32) -> Report {
    let (infos, records) = probtest::__private::synthetic_records(cases, runs);
    Report::build(infos, records, &StatsConfig::default())
}

/// The median time of `REPS` calls of `sink`, and the length of what it made.
fn time(reps: usize, sink: impl Fn() -> String) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..reps {
        let start = Instant::now();
        let text = std::hint::black_box(sink());
        times.push(start.elapsed());
        bytes = text.len();
    }
    times.sort();
    (times[times.len() / 2], bytes)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (cases, runs, reps) = if full {
        (10_000, 10, REPS)
    } else {
        (100, 10, 1)
    };
    let large = report(cases, runs);
    let history = History::default();
    let (html_time, html_bytes) = time(reps, || html(&large, &history));
    let thousand = report(1_000, 10);
    let (_, page_bytes) = time(1, || html(&thousand, &history));
    let records = large.records.len();
    println!("report files of {records} records ({cases} cases x {runs} runs), median of {reps}:");
    println!(
        "  HTML       {:>8.4} s  ({html_bytes} bytes)",
        html_time.as_secs_f64()
    );
    println!("  the HTML page of 1,000 cases x 10 runs: {page_bytes} bytes");
    println!(
        "result records={records} html={:.4} html_1000_cases_bytes={page_bytes}",
        html_time.as_secs_f64()
    );
}
