//! End-to-end: `cargo probtest doctor --suite` diagnoses a row once however many of its run
//! items failed, and the rows the report holds as flaky although their items passed, within one
//! budget; prints an overview first, and writes its JSON, its Markdown and the CI job summary.

use crate::support::{self, Fixture};

#[test]
fn the_suite_mode_diagnoses_each_row_once_and_writes_its_markdown() {
    let fixture = Fixture::builder("doctor-suite")
        .test("suite", include_str!("../../../fixtures/doctor_suite.rs"))
        .metadata("json = \"reports/suite.json\"")
        .build();
    // The user's run, on one thread: the victim's two items fail after the polluter, and the
    // gated row fails a run its item hides.
    let ran = fixture
        .cargo_test(&["--test", "suite"])
        .env("RUST_TEST_THREADS", "1")
        .run();
    ran.assert_code(101);
    let report = support::read_json(&fixture.path("reports/suite.json"));
    assert!(
        report["rows"]
            .as_array()
            .is_some_and(|rows| rows.len() == 2),
        "{report:#}"
    );

    let json = fixture.path("out/suite.json");
    let markdown = fixture.path("out/suite.md");
    let step = fixture.path("out/step.md");
    fixture.remove("out");
    std::fs::create_dir_all(fixture.path("out")).expect("out/");
    std::fs::write(&step, "earlier step\n").expect("a job summary so far");
    let output = fixture
        .probtest(
            "doctor",
            &[
                "--suite",
                "--test",
                "suite",
                "--axes",
                "order",
                "--budget",
                "240",
                "--json",
                &json.to_string_lossy(),
                "--markdown",
                &markdown.to_string_lossy(),
            ],
            &[],
        )
        // The suite runs as `cargo test` would: on one thread, the polluter runs first.
        .env("RUST_TEST_THREADS", "1")
        .env("GITHUB_STEP_SUMMARY", step.to_string_lossy())
        .run();
    let doctor = support::read_json(&json);
    let context = format!("{output}\n{doctor:#}");
    output.assert_code(0);
    let diagnoses = doctor["diagnoses"].as_array().expect("diagnoses");
    let rows: Vec<&str> = diagnoses
        .iter()
        .map(|diagnosis| diagnosis["row"].as_str().unwrap_or("(no row)"))
        .collect();
    // One diagnosis per row: the victim's row from the suite run (both its items failed), the
    // gated row from the report; the polluter passed and is not diagnosed.
    assert_eq!(rows, ["victim", "gated"], "{context}");
    assert_eq!(diagnoses[0]["test"], "bench_victim::run1", "{context}");
    assert_eq!(diagnoses[0]["verdict"], "flaky-order", "{context}");
    assert_eq!(diagnoses[0]["culprit"], "a_polluter", "{context}");
    // The gated row, through the run the report saw fail.
    assert_eq!(diagnoses[1]["test"], "bench_gated::run03", "{context}");
    assert_eq!(
        diagnoses[1]["verdict"], "deterministic-failure",
        "{context}"
    );

    // The overview comes first, a line per row, then one box per diagnosis.
    let stdout = &output.stdout;
    assert!(
        stdout.starts_with("━━━ probtest doctor --suite: 2 diagnosed, 1 flaky, in "),
        "{context}"
    );
    let overview_end = stdout
        .find("\n\n")
        .expect("the overview ends with a blank line");
    let overview = &stdout[..overview_end];
    assert!(
        overview.contains(" flaky-order            row victim\n"),
        "{overview}"
    );
    assert!(
        overview.contains(" deterministic-failure  row gated\n"),
        "{overview}"
    );
    assert_eq!(stdout.matches(" DIAGNOSIS ").count(), 2, "{context}");
    assert!(
        stdout.contains(" row victim (through bench_victim::run1)"),
        "{context}"
    );

    // The Markdown: an overview table, a section per row; the job summary gets the same page
    // after what the job's earlier steps wrote.
    let page = std::fs::read_to_string(&markdown).expect("the Markdown");
    assert!(
        page.starts_with("## probtest doctor\n\n2 diagnoses in "),
        "{page}"
    );
    assert!(page.contains("| `victim` | `flaky-order` |"), "{page}");
    assert!(
        page.contains("| `gated` | `deterministic-failure` |"),
        "{page}"
    );
    assert!(page.contains("\n### `victim`: `flaky-order`\n"), "{page}");
    assert!(page.contains("Culprit: `a_polluter`"), "{page}");
    assert!(page.contains("```sh\ncargo probtest repro pd1:"), "{page}");
    let summary = std::fs::read_to_string(&step).expect("the job summary");
    assert_eq!(summary, format!("earlier step\n{page}"));
}
