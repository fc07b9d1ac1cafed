//! Benchmark of the exit path on a large session: build, render and write a 100,000-record report (`cargo bench -p probtest --bench report`).
//!
//! Makes `synthetic_records(10_000, 10)` (10,000 cases of 10 runs), then times three steps
//! separately: `Report::build` (rows, totals, ordering), `summary` (the terminal text) and
//! `write_report` (pretty JSON to a temporary file). Each step is measured `REPS` times on
//! fresh records and the median is printed, followed by one machine-readable `result` line that
//! `scripts/bench.sh` parses. Record generation is not timed. Run without `--bench` (as
//! `cargo test --benches` does), it only smoke-tests the steps on 1,000 records.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Measured repetitions of each step under `cargo bench`.
const REPS: usize = 5;

/// Timings of one repetition, plus the sizes of what was produced.
struct Sample {
    build: Duration,
    render: Duration,
    json: Duration,
    summary_bytes: usize,
    json_bytes: u64,
}

fn sample(cases: usize, runs: u32, dir: &std::path::Path) -> Sample {
    let (infos, records) = probtest::__private::synthetic_records(cases, runs);
    assert_eq!(records.len(), cases * runs as usize);

    let start = Instant::now();
    let report = std::hint::black_box(probtest::Report::build(
        infos,
        records,
        &probtest::stats::StatsConfig::default(),
    ));
    let build = start.elapsed();

    let start = Instant::now();
    let text = probtest::summary(&report, &probtest::RenderOptions::default());
    let render = start.elapsed();
    let summary_bytes = std::hint::black_box(text).len();

    let path = dir.join("report.json");
    let start = Instant::now();
    probtest::__private::write_report(&report, &path).expect("report written");
    let json = start.elapsed();
    let json_bytes = std::fs::metadata(&path).expect("report exists").len();
    std::fs::remove_file(&path).expect("report removed");

    Sample {
        build,
        render,
        json,
        summary_bytes,
        json_bytes,
    }
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not.
    let full = std::env::args().any(|arg| arg == "--bench");
    let (cases, runs, reps) = if full {
        (10_000, 10, REPS)
    } else {
        (100, 10, 1)
    };

    let dir: PathBuf =
        std::env::temp_dir().join(format!("probtest-bench-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir created");
    let samples: Vec<Sample> = (0..reps).map(|_| sample(cases, runs, &dir)).collect();
    let _ = std::fs::remove_dir_all(&dir);

    let records = cases * runs as usize;
    let build = median(samples.iter().map(|s| s.build).collect());
    let render = median(samples.iter().map(|s| s.render).collect());
    let json = median(samples.iter().map(|s| s.json).collect());
    let last = samples.last().expect("at least one sample");
    println!("report of {records} records ({cases} cases x {runs} runs), median of {reps}:");
    println!("  Report::build     {:>9.4} s", build.as_secs_f64());
    println!(
        "  summary (render)  {:>9.4} s  ({} bytes of text)",
        render.as_secs_f64(),
        last.summary_bytes
    );
    println!(
        "  JSON (write)      {:>9.4} s  ({} bytes)",
        json.as_secs_f64(),
        last.json_bytes
    );
    println!(
        "result records={records} build={:.4} render={:.4} json={:.4}",
        build.as_secs_f64(),
        render.as_secs_f64(),
        json.as_secs_f64()
    );
}
