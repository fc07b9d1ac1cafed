//! The report's `explanation` strings as the fast writers place them (row tails, the head's
//! aggregates, the analysis' fields) against the serde views of the whole report, and those
//! views against serde's report without them.

use crate::format::explained::explained_row;
use crate::format::report::{analysis, head, row_tail, whole as report_file};
use crate::model::explanations::{AggregateExplanations, Explanations, RowExplanations};
use crate::model::tests::{info, record};
use crate::model::Report;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::{GateSpec, Metric, Rule, StatsConfig};
use crate::types::status::Outcome;

/// A gated case, a latency-gated case and a plain one, analysed with two metrics.
fn report() -> Report {
    let mut records = Vec::new();
    for (case, passes) in [("qa::gated", 7), ("qa::timed", 10), ("other::plain", 9)] {
        for run in 1..=10 {
            let outcome = if run <= passes {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record(case, run, outcome, 0.0, vec![]));
        }
    }
    let mut infos: Vec<_> = ["qa::gated", "qa::timed", "other::plain"]
        .iter()
        .map(|case| info(case))
        .collect();
    infos[0].gate = Some(GateSpec {
        rule: Rule::MinRate(0.5),
        method: None,
        level: None,
        prior: None,
    });
    infos[1].latency = Some(LatencySpec {
        max_latency: Some(0.5),
        ..Default::default()
    });
    let config = StatsConfig {
        metrics: vec![Metric::PassAll(3), Metric::PassAny(2)],
        explain: true,
        ..StatsConfig::default()
    };
    let mut report = Report::build(infos, records, &config);
    report.analyze();
    report
}

/// Texts that need escaping, one per place.
fn texts(report: &Report) -> Explanations {
    let odd = |what: &str| format!("{what}: \"quoted\", a \\ and\na new line ✓");
    Explanations {
        rows: report
            .rows
            .iter()
            .map(|row| RowExplanations {
                row: odd(&row.info.case),
                gate: row.gate.as_ref().map(|_| odd("gate")),
                latency: row.latency.as_ref().map(|_| odd("latency")),
            })
            .collect(),
        aggregates: report
            .aggregates
            .iter()
            .map(|a| AggregateExplanations {
                aggregate: Some(odd(&a.name)),
                metrics: a
                    .metrics
                    .0
                    .iter()
                    .map(|(name, _)| (name.clone(), odd(name)))
                    .collect(),
            })
            .collect(),
        ..Explanations::default()
    }
}

#[test]
fn the_fast_writers_place_each_explanation_where_the_whole_report_has_it() {
    let report = report();
    let texts = texts(&report);
    let written = report_file(&report, Some(&texts)).expect("written");
    let whole: serde_json::Value = serde_json::from_str(&written).expect("JSON");
    for (index, row) in report.rows.iter().enumerate() {
        let ours = row.info.row_prefix().expect("prefix")
            + &row_tail(row, Some(&texts.rows[index])).expect("tail");
        let ours: serde_json::Value = serde_json::from_str(&ours).expect("a row is JSON");
        assert_eq!(ours, whole["rows"][index]);
        let view = serde_json::to_value(explained_row(row, Some(&texts.rows[index])));
        assert_eq!(ours, view.expect("serde writes it"));
        assert_eq!(ours["explanation"], texts.rows[index].row.as_str());
    }
    let row = |case: &str| {
        let at = report.rows.iter().position(|r| r.info.case == case);
        &whole["rows"][at.expect("a row")]
    };
    assert!(row("qa::gated")["gate"]["explanation"].is_string());
    assert!(row("qa::timed")["latency"]["explanation"].is_string());
    assert!(row("other::plain")["gate"].is_null());
    let rest = analysis(&report, true, Some(&texts)).expect("analysis");
    let head = head(
        report.runs,
        report.exit_status,
        &report.totals,
        &report.aggregates,
        Some(&texts),
        &rest,
        &report.warnings,
    )
    .expect("head");
    let head: serde_json::Value = serde_json::from_str(&format!("{{{head}}}")).expect("JSON");
    for field in ["aggregates", "comparisons", "baseline"] {
        assert_eq!(head[field], whole[field], "{field}");
    }
    let metric = &whole["aggregates"][0]["metrics"]["pass^3"];
    assert_eq!(
        metric["explanation"],
        "pass^3: \"quoted\", a \\ and\na new line ✓"
    );
    assert_eq!(metric["k"], 3);
    // The metrics keep their order (pass^3 first, as configured), and the report reads back as
    // it does without the texts.
    let at = |needle: &str| written.find(needle).expect("written");
    assert!(at("\"pass^3\": {") < at("\"pass@2\": {"));
    let plain = report_file(&report, None).expect("written");
    assert_eq!(Report::from_json(&written), Report::from_json(&plain));
}

#[test]
fn without_texts_the_views_write_what_serde_writes() {
    let report = report();
    let plain = report_file(&report, None).expect("written");
    assert_eq!(
        plain,
        serde_json::to_string_pretty(&report).expect("serde writes it") + "\n"
    );
    // Byte for byte: the views have every field of the model, in its order.
    assert_eq!(
        report_file(&report, Some(&Explanations::default())).expect("written"),
        plain
    );
    for row in &report.rows {
        let tail = row_tail(row, None).expect("tail");
        assert!(!tail.contains("explanation"), "{tail}");
    }
}
