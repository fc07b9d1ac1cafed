//! The fast writers read back as the same JSON values that serde writes.

use crate::format::escape::quoted;
use crate::format::report::{self, head, row_tail, totals};
use crate::format::store_lines::{case_line, process_line};
use crate::model::tests::record as sample_record;
use crate::model::tests::{build, info, record};
use crate::model::{CaseInfo, Record, Totals};
use crate::model::{Report, SCHEMA_VERSION};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::{GateSpec, Method, Metric, Rule, StatsConfig};
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

fn usage(model: &str) -> TokenUsage {
    TokenUsage {
        model: model.into(),
        input_tokens: 1200,
        output_tokens: 34,
        cached_input_tokens: 5,
        cost: 0.000_012_5,
    }
}

/// Two JSON texts hold the same value.
fn assert_same_json(ours: &str, serde: &str) {
    let parse = |text: &str| {
        serde_json::from_str::<serde_json::Value>(text)
            .unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
    };
    assert_eq!(parse(ours), parse(serde), "\n ours: {ours}\nserde: {serde}");
}

/// Records with every field set and unset, odd strings and awkward numbers.
fn records() -> Vec<Record> {
    let mut records = vec![
        sample_record("classify::plain", 1, Outcome::Pass, 0.0, vec![]),
        sample_record("classify::b", 2, Outcome::Fail, 1e-7, vec![usage("m")]),
        sample_record(
            "classify::\"quoted\" \\ tab\t é ✓",
            3,
            Outcome::Error,
            12345.678,
            vec![usage("gpt \"4\""), usage("other")],
        ),
    ];
    records[1].message = Some("assertion `left == right` failed\n  left: 1".into());
    records[1].location = Some("tests/evals.rs:10:5".into());
    records[1].elapsed = 1.5e-9;
    records[2].attempt = 2;
    records[2].elapsed = 3.0;
    records[0].elapsed = 0.1 + 0.2;
    records[0].cost = 1e21;
    // Waited for a limit; replayed from the cassette.
    records[2].waited = 41.5;
    records[2].waited_for = Some("open \"ai\"".into());
    records[1].replayed = Some(1e-7);
    records
}

#[test]
fn waits_and_replays_round_trip_and_older_records_read_without_them() {
    for record in records() {
        let text = report::record(&record).expect("written");
        let back: Record = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, record);
    }
    let older = r#"{"case":"c","run":1,"outcome":"pass","elapsed":0.5,"cost":null}"#;
    let record: Record = serde_json::from_str(older).expect("reads");
    assert_eq!(
        (record.waited, record.waited_for, record.replayed),
        (0.0, None, None)
    );
    let plain = report::record(&records()[0]).expect("written");
    assert!(
        !plain.contains("waited") && !plain.contains("replayed"),
        "{plain}"
    );
}

#[test]
fn records_read_as_serde_writes_them() {
    for record in records() {
        let expected = serde_json::to_string(&record).expect("serde writes it");
        assert_same_json(&report::record(&record).expect("written"), &expected);
    }
}

#[test]
fn row_tails_and_totals_read_as_serde_writes_them() {
    for method in [Method::Exact, Method::Wilson, Method::Bayes] {
        let mut stats = StatsConfig {
            min_rate: Some(0.5),
            metrics: vec![Metric::PassAll(2), Metric::PassAny(2)],
            ..StatsConfig::default()
        };
        stats.interval.method = method;
        let records = records();
        let mut infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
        infos[0].gate = Some(GateSpec {
            rule: Rule::MinPasses(1),
            method: None,
            level: None,
            prior: None,
        });
        // A latency gate: the row's latency has a verdict and a limit.
        infos[1].latency = Some(crate::types::stats::latency::LatencySpec {
            max_latency: Some(0.5),
            ..Default::default()
        });
        let mut report = Report::build(infos, records, &stats);
        assert!(report
            .rows
            .iter()
            .any(|row| row.latency.as_ref().is_some_and(|l| l.verdict.is_some())));
        // Runs that never started, on a row and in the totals.
        report.rows[0].not_run = 3;
        report.totals.not_run = 3;
        for row in &report.rows {
            let whole = serde_json::to_string(row).expect("serde writes it");
            let parts =
                row.info.row_prefix().expect("prefix") + &row_tail(row, None).expect("tail");
            assert_same_json(&parts, &whole);
        }
        let expected = serde_json::to_string(&report.totals).expect("serde writes it");
        assert_same_json(&totals(&report.totals).expect("written"), &expected);
    }
    let empty = Totals {
        usage: OrderedMap::default(),
        ..Totals::default()
    };
    assert_same_json(
        &totals(&empty).expect("written"),
        &serde_json::to_string(&empty).expect("serde writes it"),
    );
}

#[test]
fn the_head_holds_the_reports_changing_fields() {
    let stats = StatsConfig {
        metrics: vec![Metric::PassAll(2)],
        ..StatsConfig::default()
    };
    let records = records();
    let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
    let mut report = Report::build(infos, records, &stats);
    report.warnings = vec!["a \"quoted\" warning".into()];
    assert!(!report.aggregates.is_empty());
    for (aggregates, warnings) in [
        (&report.aggregates[..], &report.warnings[..]),
        (&[][..], &[][..]),
    ] {
        let head = head(10, 1, &report.totals, aggregates, None, "", warnings).expect("written");
        let expected = serde_json::json!({
            "runs": 10,
            "exit_status": 1,
            "totals": report.totals,
            "aggregates": aggregates,
            "warnings": warnings,
        });
        assert_same_json(&format!("{{{head}}}"), &expected.to_string());
    }
}

#[test]
fn strings_are_escaped_as_serde_escapes_them() {
    let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
    for text in [
        "",
        "plain",
        "é ✓ \u{2028}",
        "\"\\\"",
        "\u{7f}\u{0}x",
        &every_ascii,
    ] {
        assert_eq!(
            quoted(text),
            serde_json::to_string(text).expect("serde writes it")
        );
    }
}

#[test]
fn process_lines_read_as_serde_writes_them() {
    use crate::format::store_lines::Line;
    use std::borrow::Cow;
    let judging = StatsConfig {
        min_rate: Some(0.8),
        ..StatsConfig::default()
    };
    for stats in [StatsConfig::default(), judging] {
        for report in [
            None,
            Some(("out/report \"1\".json", "/ws/out/report \"1\".json")),
        ] {
            for per_test in [true, false] {
                let ours = process_line("123-456", per_test, report, &stats).expect("written");
                let line = Line::Process {
                    proc: Cow::Borrowed("123-456"),
                    per_test,
                    report: report.map(|(named, _)| Cow::Borrowed(named)),
                    report_path: report.map(|(_, path)| Cow::Borrowed(path)),
                    stats: Cow::Borrowed(&stats),
                };
                let expected = serde_json::to_string(&line).expect("serde writes it");
                assert_same_json(&ours, &expected);
            }
        }
    }
}

#[test]
fn case_lines_read_as_serde_writes_them() {
    use crate::format::store_lines::Line;
    use std::borrow::Cow;
    let plain = info("classify::plain");
    let mut odd = info("classify::\"odd\" ✓");
    odd.params = OrderedMap(vec![
        ("prompt".into(), "\"say \\\"hi\\\"\"\n".into()),
        ("n".into(), "3".into()),
    ]);
    odd.gate = Some(GateSpec {
        rule: Rule::MinRate(0.8),
        method: Some(Method::Wilson),
        level: Some(0.9),
        prior: None,
    });
    for info in [plain, odd] {
        for slot_ref in [None, Some(("123-456", 7))] {
            let ours = case_line(&info, slot_ref).expect("written");
            let expected = serde_json::to_string(&Line::Case {
                info: Cow::Borrowed(&info),
                proc: slot_ref.map(|(proc, _)| Cow::Borrowed(proc)),
                case_ref: slot_ref.map(|(_, case_ref)| case_ref),
            })
            .expect("serde writes it");
            assert_same_json(&ours, &expected);
        }
    }
}

#[test]
fn numbers_json_cannot_hold_are_null() {
    let mut record = sample_record("classify::a", 1, Outcome::Pass, f64::NAN, vec![]);
    record.elapsed = f64::INFINITY;
    assert_same_json(
        &report::record(&record).expect("written"),
        &serde_json::to_string(&record).expect("serde writes it"),
    );
}

#[test]
fn a_row_is_its_case_prefix_followed_by_its_tail() {
    use crate::types::stats::Metric;
    let usage = TokenUsage {
        model: "gpt \"mini\"".into(),
        input_tokens: 12,
        cost: 0.25,
        ..Default::default()
    };
    let mut records = vec![
        record("classify::\"quoted\" é", 1, Outcome::Pass, 0.5, vec![usage]),
        record("classify::\"quoted\" é", 2, Outcome::Fail, 0.0, vec![]),
    ];
    records.push(record("plain", 1, Outcome::Error, 0.0, vec![]));
    let stats = StatsConfig {
        min_rate: Some(0.5),
        metrics: vec![Metric::PassAll(2)],
        ..StatsConfig::default()
    };
    let mut infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
    for info in infos.iter_mut().filter(|info| info.case != "plain") {
        info.gate = Some(GateSpec {
            rule: Rule::MinPasses(1),
            method: None,
            level: Some(0.9),
            prior: None,
        });
    }
    let report = Report::build(infos, records, &stats);
    assert!(report.rows.iter().any(|row| row.info.gate.is_some()));
    for row in &report.rows {
        let whole: serde_json::Value = serde_json::to_value(row).expect("row serializes");
        let parts = row.info.row_prefix().expect("prefix") + &row.tail_json().expect("tail");
        let parts: serde_json::Value = serde_json::from_str(&parts).expect("parts are JSON");
        assert_eq!(parts, whole);
    }
}

#[test]
fn only_probtest_reports_of_a_known_schema_are_read() {
    let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
    let text = serde_json::to_string(&report).expect("serializes");
    assert_eq!(Report::from_json(&text), Ok(report));
    let newer = text.replacen(&format!("\"schema\":{SCHEMA_VERSION}"), "\"schema\":99", 1);
    assert_eq!(
        Report::from_json(&newer).unwrap_err(),
        format!(
            "written by a newer probtest (report schema 99; this version reads up to {SCHEMA_VERSION})"
        )
    );
    assert!(Report::from_json("{\"rows\": []}")
        .unwrap_err()
        .starts_with("not a probtest report"));
    assert!(Report::from_json("[1, 2")
        .unwrap_err()
        .starts_with("not valid JSON"));
    let partial = r#"{"tool": "probtest", "schema": 1}"#;
    assert!(Report::from_json(partial)
        .unwrap_err()
        .starts_with("not a complete probtest report"));
}

#[test]
fn json_round_trips_and_keeps_the_peer_field_names() {
    let usage = TokenUsage {
        model: "m-small".into(),
        input_tokens: 5,
        cost: 0.25,
        ..Default::default()
    };
    let report = build(vec![record(
        "classify::a",
        1,
        Outcome::Pass,
        0.25,
        vec![usage],
    )]);
    let json = serde_json::to_value(&report).expect("serializes");
    for key in [
        "schema",
        "created",
        "runs",
        "exit_status",
        "totals",
        "rows",
        "records",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    for key in [
        "case",
        "passes",
        "fails",
        "errors",
        "total",
        "pass_rate",
        "status",
        "cost",
        "usage",
        "params",
    ] {
        assert!(json["rows"][0].get(key).is_some(), "missing rows[].{key}");
    }
    assert_eq!(json["totals"]["usage"]["m-small"]["input_tokens"], 5);
    assert_eq!(json["rows"][0]["params"]["text"], "\"a\"");
    let back: Report = serde_json::from_value(json).expect("deserializes");
    assert_eq!(back, report);
}

#[test]
fn records_split_failure_and_error_texts_and_write_no_cost_as_null() {
    let mut failed = sample_record("classify::a", 1, Outcome::Fail, 0.0, vec![]);
    failed.message = Some("wrong label".into());
    let mut errored = sample_record("classify::a", 2, Outcome::Error, 0.25, vec![]);
    errored.message = Some("ValueError: boom".into());
    for (record, message, error, cost) in [
        (&failed, "\"wrong label\"", "null", "null"),
        (&errored, "null", "\"ValueError: boom\"", "0.25"),
    ] {
        for text in [
            report::record(record).expect("written"),
            serde_json::to_string(record).expect("serde writes it"),
        ] {
            let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(value["message"].to_string(), message, "{text}");
            assert_eq!(value["error"].to_string(), error, "{text}");
            assert_eq!(value["cost"].to_string(), cost, "{text}");
            let back: Record = serde_json::from_str(&text).expect("reads back");
            assert_eq!(&back, record);
        }
    }
}

#[test]
fn reports_of_schema_1_still_read() {
    let mut report = build(vec![
        record("classify::a", 1, Outcome::Error, 0.0, vec![]),
        record("classify::a", 2, Outcome::Pass, 0.0, vec![]),
    ]);
    report.rows[0].gate = Some(
        GateSpec {
            rule: Rule::MinPasses(2),
            method: None,
            level: None,
            prior: None,
        }
        .judge(&report.stats_config, 1, 0, 1),
    );
    let mut value = serde_json::to_value(&report).expect("serializes");
    // Schema 1 spelled verdicts in upper case, kept an error's text in `message`, and wrote
    // every cost as a number.
    value["schema"] = 1.into();
    value["rows"][0]["gate"]["verdict"] = "FAIL".into();
    let first = &mut value["records"][0];
    first["message"] = first["error"].take();
    first.as_object_mut().expect("object").remove("error");
    first["cost"] = 0.0.into();
    let old = Report::from_json(&value.to_string()).expect("schema 1 reads");
    assert_eq!(old.records, report.records);
    assert_eq!(old.rows[0].gate, report.rows[0].gate);
}

#[test]
fn pytest_probability_reports_read_with_its_numbers() {
    let text = include_str!("../../tests/data/peer_report.json");
    let peer: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let ours = Report::from_json(text).expect("the peer's report reads");
    assert_eq!(ours.tool, "pytest-probability");
    assert_eq!(ours.created, peer["created"].as_str().expect("created"));
    let peer_rows = peer["rows"].as_array().expect("rows");
    assert_eq!(ours.rows.len(), peer_rows.len());
    for theirs in peer_rows {
        let case = theirs["case"].as_str().expect("case");
        let row = ours
            .rows
            .iter()
            .find(|row| row.info.case == case)
            .unwrap_or_else(|| panic!("no row {case}"));
        let counts = [row.passes, row.fails, row.errors, row.total];
        let expected = ["passes", "fails", "errors", "total"].map(|k| theirs[k].as_u64().expect(k));
        assert_eq!(counts, expected, "{case}");
        assert_eq!(
            row.status.name(),
            theirs["status"].as_str().expect("status")
        );
        let ci = row.ci.expect("an interval");
        assert!(
            (ci.low - theirs["ci"]["low"].as_f64().expect("low")).abs() < 1e-12,
            "{case}"
        );
        assert!(
            (ci.high - theirs["ci"]["high"].as_f64().expect("high")).abs() < 1e-12,
            "{case}"
        );
        assert!(
            (row.cost - theirs["cost"].as_f64().expect("cost")).abs() < 1e-12,
            "{case}"
        );
        match (&row.gate, theirs["gate"]["verdict"].as_str()) {
            (Some(gate), Some(verdict)) => {
                let written = serde_json::to_value(gate.verdict).expect("verdict");
                assert_eq!(written, verdict, "{case}");
            }
            (None, None) => {}
            (gate, verdict) => panic!("{case}: ours {gate:?}, theirs {verdict:?}"),
        }
    }
    assert_eq!(
        i64::from(ours.exit_status),
        peer["exit_status"].as_i64().expect("exit")
    );
    assert_eq!(
        ours.totals.count,
        peer["totals"]["count"].as_u64().expect("count")
    );
    assert_eq!(
        ours.records.len(),
        peer["records"].as_array().expect("records").len()
    );
}

#[test]
fn run_lines_read_by_hand_as_serde_reads_them() {
    use crate::format::store_lines::{end_line, identity_fragment, start_line, Line};
    let mut records = records();
    records[0].message = Some("plain words".into());
    records[0].location = Some("tests/evals.rs:3:9".into());
    records[1].elapsed = f64::NAN;
    // Escaped text, usage and waits: every field an end line may have.
    let mut full = records[0].clone();
    full.case = "tab\tquote\"slash\\ é \u{1}".into();
    full.message = Some("line one\nline \"two\" \u{1f600} \u{7}".into());
    full.location = Some("C:\\src\\evals.rs:3:9".into());
    full.usage = vec![
        crate::types::usage::TokenUsage {
            model: "m\"1".into(),
            input_tokens: 10,
            output_tokens: 2,
            cached_input_tokens: 1,
            cost: 0.25,
        },
        crate::types::usage::TokenUsage {
            model: "m2".into(),
            cost: 1e-7,
            ..Default::default()
        },
    ];
    full.waited = 1.5;
    full.waited_for = Some("api \"x\"".into());
    full.replayed = Some(0.125);
    records.push(full);
    for record in &records {
        let identity = identity_fragment(&record.package, &record.module, &record.case);
        let start = start_line("123-456", 7, &identity, record.run, record.attempt);
        let end = end_line("123-456", 7, record).expect("written");
        for text in [start, end] {
            let bytes = text.trim_start_matches('\n').as_bytes();
            let ours = Line::parse(bytes);
            let serde = serde_json::from_slice::<Line<'static>>(bytes).ok();
            assert!(ours.is_some(), "read by hand: {text}");
            assert_eq!(format!("{ours:?}"), format!("{serde:?}"), "{text}");
            // A line cut short by a killed process is no line at all.
            let torn = &bytes[..bytes.len() - 3];
            assert!(
                Line::parse(torn).is_none(),
                "{}",
                String::from_utf8_lossy(torn)
            );
        }
    }
}

#[test]
fn totals_that_overflowed_are_written_readable_and_warned_of() {
    let records = vec![
        record("classify::a", 1, Outcome::Pass, 1e308, vec![]),
        record("classify::a", 2, Outcome::Pass, 1e308, vec![]),
        // Amounts that overflowed within one run.
        record("classify::a", 3, Outcome::Pass, f64::INFINITY, vec![]),
    ];
    let report = build(records);
    assert_eq!(report.warnings.len(), 1);
    let text = serde_json::to_string(&report).expect("serde writes it");
    assert!(!text.contains("\"cost\":null"), "{text}");
    let back = Report::from_json(&text).expect("read back");
    assert_eq!(back.totals.cost, f64::MAX);
    assert_eq!(back.records[2].cost, f64::MAX);
    assert_eq!(back.warnings, report.warnings);
    // The record as every run writes it, and as the store keeps it.
    let fast = report::record(&report.records[2]).expect("written");
    assert!(fast.contains("\"cost\":1.7976931348623157e308"), "{fast}");
    let line = crate::format::store_lines::end_line("1-2", 7, &report.records[2]).expect("line");
    let parsed = crate::format::store_lines::Line::parse(line.trim_start().as_bytes());
    assert!(
        matches!(parsed, Some(crate::format::store_lines::Line::End { record, .. }) if record.cost == f64::MAX),
        "{line}"
    );
    // A head kept in place, whose own warnings lack the overflow, still says it once.
    for kept in [&[][..], &report.warnings[..]] {
        let head = head(3, 0, &report.totals, &[], None, "", kept).expect("written");
        let value: serde_json::Value = serde_json::from_str(&format!("{{{head}}}")).expect("JSON");
        assert_eq!(
            value["warnings"],
            serde_json::json!(report.warnings),
            "{head}"
        );
    }
}

/// pytest-probability 0.3.0's report of `tests/data/bench_latency.py`: every row's latency,
/// rebuilt from its records, is the peer's to the bit (coverage to 1e-12).
#[test]
fn pytest_probability_latencies_read_with_its_numbers() {
    let text = include_str!("../../tests/data/peer_latency.json");
    let peer: serde_json::Value = serde_json::from_str(text).expect("JSON");
    let ours = Report::from_json(text).expect("the peer's report reads");
    for theirs in peer["rows"].as_array().expect("rows") {
        let case = theirs["case"].as_str().expect("case");
        let row = ours
            .rows
            .iter()
            .find(|row| row.info.case == case)
            .expect("a row");
        let latency = serde_json::to_value(row.latency.as_ref().expect("a latency")).expect("JSON");
        let expected = &theirs["latency"];
        for field in [
            "quantile",
            "total",
            "excluded",
            "estimate",
            "min_runs",
            "max_latency",
            "verdict",
        ] {
            assert_eq!(latency[field], expected[field], "{case}: {field}");
        }
        for field in ["method", "level", "low", "high", "ranks"] {
            assert_eq!(
                latency["ci"][field], expected["ci"][field],
                "{case}: ci.{field}"
            );
        }
        let coverage =
            |value: &serde_json::Value| value["ci"]["coverage"].as_f64().expect("coverage");
        assert!(
            (coverage(&latency) - coverage(expected)).abs() < 1e-12,
            "{case}"
        );
    }
}

#[test]
fn identities_are_escaped_again_when_the_case_changes() {
    let records = [
        record("a::\"1\"", 1, Outcome::Pass, 0.0, vec![]),
        record("a::\"1\"", 2, Outcome::Pass, 0.0, vec![]),
        record("b", 1, Outcome::Pass, 0.0, vec![]),
        record("a::\"1\"", 3, Outcome::Pass, 0.0, vec![]),
    ];
    let mut identities = report::Identities::default();
    for record in &records {
        assert_eq!(identities.of(record), report::record_identity(record));
    }
}
