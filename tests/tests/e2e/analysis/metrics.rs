//! Metric aggregates beside pytest-probability's, reports of schema 3 read again, and
//! `PROB_EXPLAIN`'s texts in the JSON report.

use serde_json::Value;

use crate::analysis::{block, by_name, fixture, ours, peer};
use crate::support;

const METRICS: &str = "pass^3,pass@2";

fn float(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {value}"))
}

#[test]
fn metric_aggregates_equal_the_peers() {
    let Some(python) = support::peer_python() else {
        return;
    };
    let (output, report) = ours("reports/metrics.json", &[("PROB_METRIC", METRICS)]);
    let (peer_stdout, theirs) = peer(
        python,
        "metrics.json",
        &[&format!("--prob-metric={METRICS}")],
    );
    let names: Vec<&str> = theirs["aggregates"]
        .as_array()
        .expect("the peer's aggregates[]")
        .iter()
        .map(|a| a["name"].as_str().expect("a name"))
        .collect();
    let ours_names: Vec<&str> = report["aggregates"]
        .as_array()
        .expect("aggregates[]")
        .iter()
        .map(|a| a["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(ours_names, names);
    let (mut with_interval, mut suppressed) = (0, 0);
    for name in &names {
        for metric in ["pass^3", "pass@2"] {
            let what = format!("{name} {metric}");
            let a = &by_name(&report["aggregates"], name)["metrics"][metric];
            let b = &by_name(&theirs["aggregates"], name)["metrics"][metric];
            for field in ["k", "inputs", "left_out", "suppressed", "stopped"] {
                assert_eq!(a[field], b[field], "{what}: {field}\n ours: {a}\npeer: {b}");
            }
            // The same per-case values, the same mean, the same bootstrap draws: equal in fact.
            assert_eq!(
                float(&a["estimate"], &what),
                float(&b["estimate"], &what),
                "{what}"
            );
            if b["ci"].is_null() {
                assert!(a["ci"].is_null() && a["normal_ci"].is_null(), "{what}: {a}");
                suppressed += 1;
                continue;
            }
            with_interval += 1;
            for field in ["method", "level", "low", "high"] {
                assert_eq!(a["ci"][field], b["ci"][field], "{what}: ci.{field}");
            }
            assert_eq!(a["normal_ci"]["method"], "normal");
            for bound in ["low", "high"] {
                let (x, y) = (&a["normal_ci"][bound], &b["normal_ci"][bound]);
                assert!(
                    (float(x, &what) - float(y, &what)).abs() < 1e-12,
                    "{what}: normal_ci.{bound}: {x} vs {y}"
                );
            }
        }
    }
    // qa (24 inputs) and Overall have intervals; single (2 inputs) has none.
    assert!(with_interval >= 4 && suppressed >= 2, "{report}");
    assert_eq!(
        by_name(&report["aggregates"], "single")["metrics"]["pass^3"]["suppressed"],
        "fewer than 10 inputs"
    );
    // The block's function lines and legend are the peer's, character for character, after
    // the per-case lines the peer does not print.
    let (ours_block, peer_block) = (
        block(&output.stdout, "probability: metrics"),
        block(&peer_stdout, "probability: metrics"),
    );
    assert!(
        ours_block.ends_with(&peer_block),
        "\n--- ours:\n{}\n--- peer:\n{}",
        ours_block.join("\n"),
        peer_block.join("\n")
    );
}

#[test]
fn a_schema_3_report_with_bare_metric_means_is_still_read() {
    let (_, mut report) = ours("reports/fresh.json", &[("PROB_METRIC", METRICS)]);
    assert_eq!(report["schema"], 4);
    // Rewritten as schema 3 wrote it: a bare mean per metric, the cases left out apart.
    report["schema"] = 3.into();
    for aggregate in report["aggregates"].as_array_mut().expect("aggregates[]") {
        let metrics = aggregate["metrics"].as_object().expect("metrics").clone();
        let mut means = serde_json::Map::new();
        let mut left_out = serde_json::Map::new();
        for (name, metric) in metrics {
            means.insert(name.clone(), metric["estimate"].clone());
            left_out.insert(name, metric["left_out"].clone());
        }
        aggregate["metrics"] = Value::Object(means);
        aggregate["left_out"] = Value::Object(left_out);
    }
    let old = fixture().path("reports/schema3.json");
    std::fs::write(&old, report.to_string()).expect("written");
    let read = fixture()
        .probtest(
            "report",
            &[
                "--json",
                "reports/schema3.json",
                "--json-out",
                "reports/again.json",
            ],
            &[],
        )
        .env("NO_COLOR", "1")
        .run();
    // The report's rows fail: `report` exits 100 as the session did.
    read.assert_code(100);
    // The metrics block from the report's records, as a fresh run prints it.
    let qa_line = block(&read.stdout, "probability: metrics")
        .into_iter()
        .find(|line| line.starts_with("  qa "))
        .unwrap_or_else(|| panic!("no qa line{read}"));
    assert!(
        qa_line.contains("  pass^3  N=24 inputs   22.9%  ["),
        "{qa_line}\n{read}"
    );
    let again = fixture().read_json("reports/again.json");
    assert_eq!(again["schema"], 4);
    let qa = &by_name(&again["aggregates"], "qa")["metrics"]["pass^3"];
    assert_eq!(
        (qa["k"].as_u64(), qa["inputs"].as_u64()),
        (Some(3), Some(24))
    );
    // merge reads it too.
    let merged = fixture()
        .probtest(
            "merge",
            &["reports/schema3.json", "-o", "reports/merged.json"],
            &[],
        )
        .env("NO_COLOR", "1")
        .run();
    // The same failing rows, merged.
    merged.assert_code(100);
    let merged = fixture().read_json("reports/merged.json");
    assert_eq!(merged["aggregates"][0]["metrics"]["pass^3"]["k"], 3);
}

/// Every `explanation` string of a report, by where it is.
fn explanations(report: &Value) -> Vec<(String, String)> {
    fn walk(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if key == "explanation" {
                        out.push((at.to_string(), inner.as_str().unwrap_or("").to_string()));
                    } else {
                        walk(inner, &format!("{at}.{key}"), out);
                    }
                }
            }
            Value::Array(items) => {
                for (index, inner) in items.iter().enumerate() {
                    walk(inner, &format!("{at}[{index}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(report, "", &mut out);
    out
}

#[test]
fn prob_explain_puts_the_readings_in_the_json_report_and_only_then() {
    let settings = [("PROB_METRIC", "pass^3"), ("PROB_MIN_RATE", "0.1")];
    let (_, plain) = ours("reports/unexplained.json", &settings);
    assert_eq!(explanations(&plain), Vec::new());
    let mut explained_settings = settings.to_vec();
    explained_settings.push(("PROB_EXPLAIN", "1"));
    let (output, report) = ours("reports/explained.json", &explained_settings);
    let text = |value: &Value, what: &str| -> String {
        let text = value["explanation"]
            .as_str()
            .unwrap_or_else(|| panic!("{what} has no explanation: {value}"));
        assert!(!text.is_empty(), "{what}");
        text.to_string()
    };
    let rows = report["rows"].as_array().expect("rows[]");
    let mut gates = 0;
    for row in rows {
        let case = row["case"].as_str().expect("a case");
        let reading = text(row, case);
        assert!(reading.starts_with(&format!("{case}: ")), "{reading}");
        text(&row["latency"], &format!("{case}'s latency"));
        if !row["gate"].is_null() {
            assert!(text(&row["gate"], case).starts_with("Gate min_rate 0.1 on "));
            gates += 1;
        }
    }
    assert!(gates > 0, "PROB_MIN_RATE gates the cases no margin judges");
    for aggregate in report["aggregates"].as_array().expect("aggregates[]") {
        let name = aggregate["name"].as_str().expect("a name");
        text(aggregate, name);
        text(&aggregate["metrics"]["pass^3"], &format!("{name} pass^3"));
    }
    let comparisons = report["comparisons"].as_array().expect("comparisons[]");
    assert!(!comparisons.is_empty());
    for comparison in comparisons {
        text(comparison, "a comparison");
    }
    // The same words as the terminal's explained section, unwrapped.
    let printed = output.stdout.replace("\n    ", " ");
    let qa = by_name(&report["aggregates"], "qa");
    for reading in [text(qa, "qa"), text(&qa["metrics"]["pass^3"], "qa pass^3")] {
        assert!(
            printed.contains(&reading),
            "not printed: {reading}\n{output}"
        );
    }
    assert!(
        printed.contains("qa pass^3: pass^3 is the chance that 3 runs of the same input all pass"),
        "{output}"
    );
}
