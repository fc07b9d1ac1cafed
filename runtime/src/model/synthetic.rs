//! Sessions shaped like real ones, for benchmarks of report building and rendering.
//!
//! Layer: model.

use crate::model::case::CaseInfo;
use crate::model::record::Record;
use crate::types::ordered_map::OrderedMap;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

/// `cases` cases of `runs` runs each, with mixed outcomes, cost and usage on every run.
pub(crate) fn synthetic_records(cases: usize, runs: u32) -> (Vec<CaseInfo>, Vec<Record>) {
    let mut infos = Vec::with_capacity(cases);
    let mut records = Vec::with_capacity(cases * runs as usize);
    for case in 0..cases {
        let info = CaseInfo {
            case: format!("triage::ticket {case}-Terse"),
            package: "evals".to_string(),
            function: "bench_triage".to_string(),
            module: format!("evals::suite{}", case % 7),
            file: "tests/evals.rs".to_string(),
            line: 10 + (case % 50) as u32,
            case_id: format!("ticket {case}-Terse"),
            index: case as u32,
            runs,
            params: OrderedMap(vec![("text".to_string(), format!("\"ticket {case}\""))]),
            gate: None,
            compare: None,
            latency: None,
            parts: Vec::new(),
        };
        for run in 1..=runs {
            let outcome = match (case as u32 + run) % 10 {
                0 => Outcome::Fail,
                7 => Outcome::Error,
                _ => Outcome::Pass,
            };
            let usage = TokenUsage {
                model: ["m-small", "m-large"][case % 2].to_string(),
                input_tokens: 1_200,
                output_tokens: 80,
                cached_input_tokens: 640,
                cost: 0.0002,
            };
            records.push(Record {
                case: info.case.clone().into(),
                package: info.package.clone().into(),
                module: info.module.clone().into(),
                run,
                attempt: 1,
                outcome,
                message: (outcome != Outcome::Pass)
                    .then(|| "assertion `left == right` failed".to_string()),
                location: (outcome != Outcome::Pass).then(|| "tests/evals.rs:42:5".to_string()),
                elapsed: 0.012,
                waited: 0.0,
                waited_for: None,
                replayed: None,
                cost: 0.0002,
                usage: vec![usage],
            });
        }
        infos.push(info);
    }
    (infos, records)
}
