//! End-to-end: the example crate a new user runs first. One real `cargo test` of
//! `benches-example` (its local model server, HTTP client, tokenizer and all) must exit 0 while
//! showing FLAKY rows, and print and write everything its README promises: the rows, intervals,
//! gates, a Cost line and a Tokens line for the local model, and the JSON report its Cargo.toml
//! names. And the README's own examples: its first output is what `cargo test` prints for the
//! crate it shows (`tests/fixtures/triage.rs`), plain `cargo nextest run` prints none, and its
//! doctor command runs from the repository's root.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::support::{
    self, counts, report_records, report_row, workspace_root, Fixture, Output, Section,
};
use serde_json::Value;

/// Every row the example promises, with its runs, in source order.
const ROWS: &[(&str, u64)] = &[
    ("pi::10_000", 10),
    ("pi::40_000", 10),
    ("distinct_count::1_000", 10),
    ("distinct_count::50_000", 10),
    ("reservoir_mean::100", 10),
    ("reservoir_mean::1_000", 10),
    ("two_choices", 10),
    ("triage::double charge", 5),
    ("triage::late parcel", 5),
    ("triage::locked out", 5),
    ("triage::app crash", 5),
    ("held_out::refund not received", 8),
    ("held_out::charged after cancelling", 8),
    ("held_out::wrong size", 8),
    ("held_out::parcel lost", 8),
    ("held_out::express delivery", 8),
    ("held_out::wrong address", 8),
    ("held_out::reset email", 8),
    ("held_out::locked account", 8),
    ("held_out::change email", 8),
    ("held_out::crash on open", 8),
    ("held_out::checkout button", 8),
    ("held_out::error page", 8),
    ("ambiguous::broken item", 40),
    ("routed::broken item", 30),
    ("contested::never arrived", 30),
    ("flaky_gateway::mangled response", 24),
    ("majority_vote::broken item", 20),
];

/// The local model server's model name.
const MODEL: &str = "triage-nb-1";

fn example() -> Fixture {
    Fixture::existing(workspace_root().join("benches-example"))
}

/// Where the example's `[package.metadata.probtest] json` puts the report.
fn report_path() -> PathBuf {
    workspace_root()
        .join("target")
        .join("probtest")
        .join("benches-example.json")
}

fn output() -> &'static Output {
    static OUTPUT: OnceLock<Output> = OnceLock::new();
    OUTPUT.get_or_init(|| {
        let _ = std::fs::remove_file(report_path());
        example()
            .cargo_test(&[])
            // A developer's real provider must not answer the e2e suite's calls.
            .env("PROBTEST_EXAMPLE_BASE_URL", "")
            .env("PROBTEST_EXAMPLE_API_KEY", "")
            .run()
    })
}

fn section() -> &'static Section {
    static SECTION: OnceLock<Section> = OnceLock::new();
    SECTION.get_or_init(|| output().assert_code(0).section())
}

fn report() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        output().assert_code(0);
        support::read_json(&report_path())
    })
}

/// Whether `text` is a whole number written with thousands separators: `8,480`.
fn has_thousands_separators(text: &str) -> bool {
    let groups: Vec<&str> = text.split(',').collect();
    groups.len() > 1
        && (1..=3).contains(&groups[0].len())
        && groups[1..].iter().all(|group| group.len() == 3)
        && groups
            .iter()
            .all(|group| group.bytes().all(|b| b.is_ascii_digit()))
}

#[test]
fn the_example_passes_while_showing_flaky_rows() {
    let section = section();
    assert_eq!(
        section.case_ids(),
        ROWS.iter().map(|(case, _)| *case).collect::<Vec<_>>(),
        "\n{}",
        section.text
    );
    for (case, runs) in ROWS {
        let fraction = section.row(case)[0];
        assert!(
            fraction.ends_with(&format!("/{runs}")),
            "{case}: {fraction}\n{}",
            section.text
        );
    }
    assert!(
        section
            .rows
            .iter()
            .any(|row| row.iter().any(|column| column.starts_with("FLAKY"))),
        "no FLAKY row{}",
        output()
    );
    // Ungated rows must pass every run, or the exit status would not be 0.
    for case in ["triage::double charge", "pi::10_000", "two_choices"] {
        let row = section.row(case);
        assert!(!row.iter().any(|column| column.contains("FAIL")), "{row:?}");
    }
    assert!(
        section.intervals.iter().all(Option::is_some),
        "every row has an interval\n{}",
        section.text
    );
    assert_eq!(
        section.gates.as_deref(),
        Some("17 passed"),
        "\n{}",
        section.text
    );
}

#[test]
fn the_eval_over_a_data_file_gets_a_function_level_estimate() {
    let section = section();
    // `held_out  N=12 inputs × k=8  99.0%  [96.9%, 100.0%]  ρ=0.00`: 12 rows of
    // `data/held_out.jsonl` are enough inputs for the estimate and its interval.
    let line = section
        .text
        .lines()
        .map(str::trim)
        .find(|line| line.starts_with("held_out ") && line.contains("N=12 inputs × k=8"))
        .unwrap_or_else(|| panic!("no function line for held_out\n{}", section.text));
    let interval = line
        .split_once('[')
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(inside, _)| inside)
        .unwrap_or_else(|| panic!("no interval in {line}"));
    let bounds: Vec<f64> = interval
        .split(',')
        .map(|bound| {
            let bound = bound.trim().trim_end_matches('%');
            bound
                .parse()
                .unwrap_or_else(|_| panic!("{bound} in {line}"))
        })
        .collect();
    assert!(
        bounds.len() == 2 && bounds[0] <= bounds[1] && bounds[1] <= 100.0,
        "{line}"
    );
}

#[test]
fn the_summary_ends_with_cost_and_the_models_tokens() {
    let section = section();
    let cost = section.cost.as_deref().expect("a Cost line");
    let amount: f64 = cost
        .strip_prefix('$')
        .and_then(|amount| amount.parse().ok())
        .unwrap_or_else(|| panic!("Cost line `{cost}` is not a dollar amount"));
    assert!(amount > 0.0, "{cost}");

    let tokens = section.tokens(MODEL);
    let (input, rest) = tokens[0]
        .split_once(" in / ")
        .unwrap_or_else(|| panic!("Tokens line `{}` reads `N in / M out`", tokens[0]));
    assert!(rest.ends_with(" out"), "{}", tokens[0]);
    // Each call's prompt is about 50 tokens and there are 200 of them.
    assert!(
        has_thousands_separators(input),
        "input tokens `{input}` are in the thousands, written with separators\n{}",
        section.text
    );
    assert!(tokens[1].starts_with('$'), "the model's cost: {tokens:?}");
    assert_eq!(
        section.report.as_deref().map(PathBuf::from),
        Some(report_path()),
        "\n{}",
        section.text
    );
}

#[test]
fn the_report_lists_every_row_with_its_runs_and_usage() {
    let report = report();
    assert_eq!(report["exit_status"], 0);
    let cases: Vec<&str> = report["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["case"].as_str().expect("case"))
        .collect();
    assert_eq!(
        cases,
        ROWS.iter().map(|(case, _)| *case).collect::<Vec<_>>()
    );
    for (case, runs) in ROWS {
        let [passes, fails, errors, total] = counts(report_row(report, case));
        assert_eq!(total, *runs, "{case}");
        assert_eq!(passes + fails + errors, total, "{case}");
    }
    let total: u64 = ROWS.iter().map(|(_, runs)| runs).sum();
    assert_eq!(counts(&report["totals"])[3], total);
    let usage = &report["totals"]["usage"][MODEL];
    assert!(usage["input_tokens"].as_u64().expect("input tokens") > 1_000);
    assert!(usage["cost"].as_f64().expect("token cost") > 0.0);
    // The request fee is booked on top of the tokens.
    assert!(report["totals"]["cost"].as_f64() > usage["cost"].as_f64());

    // The gateway's mangled responses are errors that say what went wrong, not wrong answers.
    for record in report_records(report, "flaky_gateway::mangled response") {
        if record["outcome"] == "error" {
            let message = record["error"]
                .as_str()
                .expect("an error has its text in `error`");
            assert_eq!(record["message"], serde_json::Value::Null);
            assert!(message.contains("malformed response"), "{message}");
        }
    }
    // Every other LLM row's records carry the local model's usage.
    for record in report_records(report, "triage::double charge") {
        assert_eq!(record["usage"][0]["model"], MODEL, "{record}");
    }
}

/// The rows of the evals that call the model: what a replay gives back exactly (the randomized
/// algorithms' rows draw afresh each session, and so does `routed::broken item`'s router, whose
/// hash order is the harness bug it keeps on purpose).
const MODEL_ROWS: &[&str] = &[
    "triage::double charge",
    "triage::late parcel",
    "triage::locked out",
    "triage::app crash",
    "ambiguous::broken item",
    "contested::never arrived",
    "flaky_gateway::mangled response",
    "majority_vote::broken item",
];

/// The count of requests the local model server says it received.
fn requests(output: &Output) -> u64 {
    output
        .stderr
        .lines()
        .find_map(|line| {
            line.strip_prefix("local model server: ")?
                .strip_suffix(" requests")
        })
        .unwrap_or_else(|| panic!("the server says nothing of its requests{output}"))
        .parse()
        .expect("a count")
}

#[test]
fn a_replay_makes_no_request_and_reports_what_was_recorded() {
    let cassette = support::shared_target_dir().join("probtest/cache/benches-example");
    if cassette.exists() {
        std::fs::remove_dir_all(&cassette).expect("remove an old cassette");
    }
    let run = |mode: &str, json: &str| {
        let json = support::shared_target_dir().join(json);
        let _ = std::fs::remove_file(&json);
        let output = example()
            .cargo_test(&[])
            .env("PROBTEST_EXAMPLE_BASE_URL", "")
            .env("PROBTEST_EXAMPLE_API_KEY", "")
            .env("PROB_CACHE", mode)
            .env("PROB_JSON", json.to_string_lossy())
            .run();
        output.assert_code(0);
        (requests(&output), support::read_json(&json), output)
    };
    let (recorded_requests, recorded, _) = run("record", "example-record.json");
    // 5 runs of 4 tickets, 8 runs of the data file's 12, 40 + 30 + 30 + 24 runs of one, 20 runs
    // of three votes.
    assert_eq!(recorded_requests, 20 + 96 + 40 + 30 + 30 + 24 + 60);
    let (replayed_requests, replayed, output) = run("replay", "example-replay.json");
    assert_eq!(replayed_requests, 0, "a replay calls nothing{output}");
    // Run times are the replay's own, and so is each row's latency; a row's cost is a float sum
    // whose last digit follows the order its runs ended in, so it is compared to 12 places.
    let without_times = |report: &Value, case: &str| {
        let mut row = report_row(report, case).clone();
        if let Some(row) = row.as_object_mut() {
            row.remove("latency");
            let rounded = |cost: f64| Value::from((cost * 1e12).round() / 1e12);
            if let Some(cost) = row.get("cost").and_then(Value::as_f64) {
                row.insert("cost".into(), rounded(cost));
            }
            for usage in row
                .get_mut("usage")
                .and_then(Value::as_object_mut)
                .into_iter()
                .flat_map(|models| models.values_mut())
            {
                if let Some(cost) = usage.get("cost").and_then(Value::as_f64) {
                    usage["cost"] = rounded(cost);
                }
            }
        }
        row
    };
    for case in MODEL_ROWS {
        assert_eq!(
            without_times(&recorded, case),
            without_times(&replayed, case),
            "{case}"
        );
        for (before, after) in report_records(&recorded, case)
            .iter()
            .zip(report_records(&replayed, case))
        {
            for field in ["outcome", "error", "cost", "usage"] {
                assert_eq!(before[field], after[field], "{case} {field}");
            }
            assert!(after["replayed"].as_f64().is_some(), "{after}");
        }
    }
    assert!(
        output
            .stdout
            .contains("of it from the cassette (260 runs), not spent"),
        "{output}"
    );
}

/// The README's first example: its code block and the output block after it.
fn readme_first_example() -> (String, String) {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let section = readme
        .split_once("## In one minute")
        .map(|(_, rest)| rest)
        .expect("the README's first example");
    let block = |text: &str, fence: &str| -> String {
        text.split_once(fence)
            .and_then(|(_, rest)| rest.split_once("\n```"))
            .map(|(block, _)| block.trim_start_matches('\n').to_string())
            .unwrap_or_else(|| panic!("a {fence} block"))
    };
    let (prose, _) = section.split_once("```text").expect("the example's output");
    (prose.to_string(), block(section, "```text"))
}

#[test]
fn the_readme_s_first_example_is_what_cargo_test_prints() {
    let fixture = Fixture::builder("triage")
        .test("triage", include_str!("../../fixtures/triage.rs"))
        .build();
    fixture.remove("report.json");
    let output = fixture
        .cargo_test(&["--test", "triage"])
        .env("PROB_JSON", "report.json")
        .run();
    output.assert_code(101);
    let rule = output.section().rule;
    // The whole section as printed, its hints included.
    let printed: Vec<&str> = output
        .stdout
        .lines()
        .skip_while(|line| *line != rule)
        .take_while(|line| *line == rule || line.is_empty() || line.starts_with("  "))
        .collect();
    // The README's crate is `triage`; the fixture's package is `pt-triage`.
    let printed = printed.join("\n").replace("-p pt-triage ", "-p triage ");
    let (prose, shown) = readme_first_example();
    assert_eq!(
        shown.trim_end(),
        printed.trim_end(),
        "the README's first example, then what cargo test printed"
    );
    // Under plain nextest no process sees the session's end: none prints the section, and the
    // README must not say it does.
    let output = fixture
        .nextest("run", &["--test", "triage", "--no-fail-fast"])
        .env("PROB_JSON", "report.json")
        .run();
    output.assert_code(100);
    assert!(output.has_no_section(), "{output}");
    let printed_by: &str = prose
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or_default();
    assert!(
        !printed_by.contains("nextest"),
        "the line before the example says nextest prints it: {printed_by}"
    );
}

#[test]
fn the_readme_s_doctor_example_runs_from_the_repository_root() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let command = readme
        .lines()
        .find_map(|line| line.strip_prefix("$ cargo probtest doctor "))
        .expect("the doctor's example command");
    let args: Vec<&str> = command.split_whitespace().collect();
    let output = Fixture::existing(workspace_root())
        .probtest("doctor", &args, &[])
        .run();
    // 0 for a diagnosis, 1 for a test that did not fail, 2 for bad input (a test it cannot
    // find or build).
    assert_ne!(
        output.code,
        Some(2),
        "`cargo probtest doctor {command}`{output}"
    );
    assert!(
        output.stderr.contains("doctor: hash_order_victim in "),
        "it found the test{output}"
    );
    assert!(
        output.stdout.contains("━━━ probtest doctor ━━━"),
        "{output}"
    );
}
