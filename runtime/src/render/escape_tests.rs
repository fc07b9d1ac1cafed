//! What a test wrote (case ids, warnings, model names) reaches the terminal with its control
//! characters and bidirectional marks escaped, in every section of the summary that shows it,
//! and the columns still line up.

use crate::model::tests::{info, record};
use crate::model::Report;
use crate::render::{summary, Options};
use crate::types::stats::{GateSpec, Rule, StatsConfig};
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

const EVIL: &str = "triage::evil\u{1b}[2J\u{202e}txt";
const SHOWN: &str = "triage::evil\\u{1b}[2J\\u{202e}txt";

fn report(explain: bool) -> Report {
    let usage = TokenUsage {
        model: "m\u{1b}]0;title\u{7}".into(),
        input_tokens: 10,
        output_tokens: 2,
        cached_input_tokens: 0,
        cost: 0.25,
    };
    let mut records = vec![record(EVIL, 1, Outcome::Pass, 0.0, vec![usage])];
    for run in 2..=4 {
        records.push(record(EVIL, run, Outcome::Fail, 0.0, Vec::new()));
    }
    for run in 1..=4 {
        records.push(record("triage::plain", run, Outcome::Pass, 0.0, Vec::new()));
    }
    let mut infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    for info in &mut infos {
        info.gate = Some(GateSpec {
            rule: Rule::MinRate(0.9),
            method: None,
            level: None,
            prior: None,
        });
    }
    let config = StatsConfig {
        explain,
        ..StatsConfig::default()
    };
    let mut report = Report::build(infos, records, &config);
    report.warnings.push(format!("{EVIL}: \u{9b}31m"));
    report
}

#[test]
fn ids_warnings_and_models_are_shown_escaped_in_the_summary() {
    for explain in [false, true] {
        let text = summary(&report(explain), &Options::default());
        for raw in ['\u{1b}', '\u{202e}', '\u{9b}', '\u{7}'] {
            assert!(!text.contains(raw), "{raw:?} in\n{text}");
        }
        // The row, the gates block, and the explanation when asked for.
        let rows = text.matches(&format!("  {SHOWN}  ")).count();
        assert!(rows >= 2, "{rows} lines show the id:\n{text}");
        assert!(
            text.contains(&format!("Warning: {SHOWN}: \\u{{9b}}31m")),
            "{text}"
        );
        assert!(
            text.contains("Tokens:  m\\u{1b}]0;title\\u{7}  10 in / 2 out"),
            "{text}"
        );
        if explain {
            assert!(
                text.contains(&format!("{SHOWN}: 1 of 4 runs passed")),
                "{text}"
            );
        }
        // The plain id is padded to the escaped one's width.
        let plain = text
            .lines()
            .find(|line| line.starts_with("  triage::plain "))
            .expect("the plain row");
        let evil = text
            .lines()
            .find(|line| line.starts_with(&format!("  {SHOWN} ")))
            .expect("the escaped row");
        assert_eq!(plain.find("4/4"), evil.find("1/4"), "\n{plain}\n{evil}");
    }
}

#[test]
fn the_doctor_hint_quotes_the_id_as_a_shell_reads_it_back() {
    let text = summary(&report(false), &Options::default());
    assert!(
        text.contains("cargo probtest doctor -p fixture $'triage::evil\\u001b[2J\\u202etxt'"),
        "{text}"
    );
}
