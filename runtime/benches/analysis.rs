//! Benchmark of the end-of-session analysis on a large session (`cargo bench -p probtest --bench
//! analysis`): 1,000 cases of 100 runs (100,000 records) of one function whose `model` argument
//! takes two values, compared arm against arm (`compare = "model"`, 500 paired inputs), with
//! 5,000 bootstrap resamples; then its text.
//!
//! Times `Report::build` (rows and totals), `Report::analyze` (the function-level estimate, ρ,
//! the paired bootstrap and the sign-flip test) and the summary with its analysis sections,
//! each the median of `REPS` repetitions on fresh records. Run without `--bench` (as `cargo
//! test --benches` does), it only smoke-tests the steps on 20 cases.

use std::time::{Duration, Instant};

use probtest::stats::StatsConfig;
use probtest::{CompareSpec, Part};

/// Measured repetitions under `cargo bench`.
const REPS: usize = 5;

/// `cases` cases of `runs` runs: inputs `text` crossed with two models, the second model
/// passing a little less often.
fn session(cases: usize, runs: u32) -> (Vec<probtest::CaseInfo>, Vec<probtest::Record>) {
    let (mut infos, mut records) = probtest::__private::synthetic_records(cases, runs);
    for (index, info) in infos.iter_mut().enumerate() {
        let (input, model) = (index / 2, index % 2);
        info.module = "evals".into();
        info.function = "bench_triage".into();
        info.case = format!("triage::ticket {input}-m{model}");
        info.compare = Some(CompareSpec {
            axis: "model".into(),
            baseline: None,
            margin: None,
            equivalence: false,
        });
        info.parts = vec![
            Part {
                names: vec!["text".into()],
                id: format!("ticket {input}"),
                index: input as u32,
            },
            Part {
                names: vec!["model".into()],
                id: format!("m{model}"),
                index: model as u32,
            },
        ];
        info.params = probtest::OrderedMap(vec![
            ("text".into(), format!("\"ticket {input}\"")),
            ("model".into(), format!("m{model}")),
        ]);
    }
    for record in &mut records {
        let index = (record
            .case
            .trim_start_matches("triage::ticket ")
            .split('-')
            .next()
            .and_then(|number| number.parse::<usize>().ok()))
        .expect("a synthetic case number");
        let (input, model) = (index / 2, index % 2);
        record.module = "evals".into();
        record.case = format!("triage::ticket {input}-m{model}").into();
    }
    (infos, records)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let full = std::env::args().any(|arg| arg == "--bench");
    let (cases, runs, reps) = if full {
        (1_000, 100, REPS)
    } else {
        (20, 10, 1)
    };
    let config = StatsConfig {
        resamples: 5_000,
        ..StatsConfig::default()
    };
    let mut build = Vec::new();
    let mut analyze = Vec::new();
    let mut render = Vec::new();
    let mut comparisons = 0;
    for _ in 0..reps {
        let (infos, records) = session(cases, runs);
        let start = Instant::now();
        let mut report = probtest::Report::build(infos, records, &config);
        build.push(start.elapsed());
        let start = Instant::now();
        report.analyze();
        analyze.push(start.elapsed());
        comparisons = report.comparisons.len();
        assert!(!report.aggregates.is_empty(), "a function-level estimate");
        let start = Instant::now();
        let text = probtest::summary(&report, &probtest::RenderOptions::default());
        render.push(start.elapsed());
        std::hint::black_box(text);
    }
    assert!(comparisons > 0, "the arms were compared");
    let (build, analyze, render) = (median(build), median(analyze), median(render));
    println!(
        "analysis of {} records ({cases} cases x {runs} runs, {comparisons} comparison(s), 5000 resamples): build {:.3} s, analyze {:.3} s, summary {:.3} s, total {:.3} s",
        cases * runs as usize,
        build.as_secs_f64(),
        analyze.as_secs_f64(),
        render.as_secs_f64(),
        (build + analyze + render).as_secs_f64(),
    );
}
