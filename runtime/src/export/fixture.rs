//! One report with every kind of row, for the HTML page's tests: every status, a gate of each
//! verdict, cost and tokens, and ids that need escaping (`cargo-probtest`'s Markdown and JUnit
//! tests build the same report).

use crate::model::tests::{info, record};
use crate::model::{CaseInfo, Record, Report};
use crate::types::stats::{GateSpec, Rule, StatsConfig};
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

fn runs(case: &str, outcomes: &[(Outcome, usize)], cost: f64) -> Vec<Record> {
    let mut records = Vec::new();
    for &(outcome, count) in outcomes {
        for _ in 0..count {
            let run = records.len() as u32 + 1;
            let usage = (cost > 0.0).then(|| TokenUsage {
                model: "m-small".into(),
                input_tokens: 1_200,
                output_tokens: 40,
                cached_input_tokens: 0,
                cost,
            });
            let mut record = record(case, run, outcome, cost, usage.into_iter().collect());
            if outcome != Outcome::Pass {
                record.location = Some(format!("tests/evals.rs:{}:9", 40 + run));
            }
            records.push(record);
        }
    }
    records
}

/// The message of an `assert_eq!` that got a wrong answer.
pub(crate) const WRONG_ANSWER: &str =
    "assertion `left == right` failed: the label\n  left: \"shipping\"\n right: \"refund\"";

/// Every status, a gate of each verdict, cost and tokens, ids that need escaping, and a case
/// whose runs all failed the same way.
pub(crate) fn fixture() -> Report {
    use Outcome::{Error, Fail, Pass};
    let mut records = runs("triage::refund please-Terse", &[(Pass, 10)], 0.0002);
    records.extend(runs(
        "triage::refund please-chatty",
        &[(Pass, 7), (Fail, 3)],
        0.0002,
    ));
    records.extend(runs(
        "triage::where is it-Terse",
        &[(Pass, 7), (Error, 3)],
        0.0002,
    ));
    records.extend(runs("triage::a|b <c>", &[(Fail, 10)], 0.0));
    // Ten runs that gave the same wrong answer: one group, its message whole.
    for record in records.iter_mut().filter(|r| r.case == "triage::a|b <c>") {
        record.message = Some(WRONG_ANSWER.to_string());
        record.location = Some("tests/evals.rs:30:9".to_string());
    }
    records.extend(runs("classify::broken", &[(Error, 4)], 0.0));
    records.extend(runs("classify::gated", &[(Pass, 9), (Fail, 1)], 0.0));
    records.extend(runs("classify::low", &[(Pass, 2), (Fail, 8)], 0.0));
    let gate = |bar| GateSpec {
        rule: Rule::MinRate(bar),
        method: None,
        level: None,
        prior: None,
    };
    let infos: Vec<CaseInfo> = records
        .iter()
        .map(|r| {
            let mut info = info(&r.case);
            match &*r.case {
                "classify::gated" => info.gate = Some(gate(0.5)),
                "classify::low" => info.gate = Some(gate(0.7)),
                _ => {}
            }
            info
        })
        .collect();
    let mut report = Report::build(infos, records, &StatsConfig::default());
    report.created = "2026-01-02T03:04:05Z".to_string();
    report.session = Some("run-1-2".to_string());
    report
}
