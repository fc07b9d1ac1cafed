//! End-to-end: `cargo probtest doctor` on a probtest row as the user meets it. The row is gated,
//! so its failing runs pass their test items: the doctor must judge each run by the outcome it
//! recorded, start from the user's report (its rate sizes the baseline), name the sampler's
//! randomness, and leave the user's report, HTML page and sessions byte for byte as they were.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{self, Fixture};

/// Every file under `dir` with its bytes; empty when `dir` does not exist.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                files.insert(path.display().to_string(), bytes);
            }
        }
    }
    files
}

#[test]
fn a_gated_row_is_diagnosed_from_its_recorded_outcomes_and_the_users_files_are_untouched() {
    if !cfg!(target_os = "linux") {
        support::unavailable(
            "the doctor's entropy axis",
            "its preload library needs Linux",
        );
        return;
    }
    let fixture = Fixture::builder("doctor-rows")
        .test(
            "sampler",
            include_str!("../../../fixtures/doctor_rows/sampler.rs"),
        )
        .metadata("json = \"reports/evals.json\"")
        .dev_dep("rand = \"0.9\"")
        .build();
    let store = fixture.path("store");
    let store_text = store.to_string_lossy().into_owned();
    // The user's run: the report where the config puts it, an HTML page, and sessions in a
    // store of the user's own.
    let ran = fixture
        .cargo_test(&["--test", "sampler"])
        .env("PROB_HTML", "reports/evals.html")
        .env("PROB_STORE", &store_text)
        .run();
    ran.assert_code(0);
    let report_path = fixture.path("reports/evals.json");
    let html_path = fixture.path("reports/evals.html");
    let report = std::fs::read(&report_path).expect("the user's report");
    let html = std::fs::read(&html_path).expect("the user's HTML page");
    let sessions = snapshot(&store);
    assert!(
        !sessions.is_empty(),
        "the user's run made a session in {store_text}"
    );

    let json_path = fixture.path("out/doctor.json");
    let json_text = json_path.to_string_lossy().into_owned();
    let output = fixture
        .probtest(
            "doctor",
            &["sampler", "--test", "sampler", "--json", &json_text],
            &[],
        )
        .env("PROB_HTML", "reports/evals.html")
        .env("PROB_STORE", &store_text)
        .run();
    let diagnosis = support::read_json(&json_path);
    let context = format!("{output}\n{diagnosis:#}");
    output.assert_code(0);
    assert_eq!(diagnosis["verdict"], "flaky-entropy", "{context}");
    assert_eq!(diagnosis["claim"], "observed", "{context}");
    assert!(
        diagnosis["explanation"]
            .as_str()
            .is_some_and(|text| text.contains("the sampler's intended randomness")),
        "{context}"
    );
    // The doctor's unperturbed runs alone saw the failures the items hid (in the baseline, or,
    // when it passed by chance, in the runs alone the race search takes), and the baseline was
    // sized from the report's rate.
    assert!(
        diagnosis["stats"]["baseline_failed"].as_u64() > Some(0),
        "{context}"
    );
    let baseline = &diagnosis["evidence"][0];
    assert!(
        baseline["note"]
            .as_str()
            .is_some_and(|note| note.starts_with("sized from the report's")),
        "{context}"
    );
    assert!(
        diagnosis["repro"]["failed"] == diagnosis["repro"]["runs"],
        "{context}"
    );

    // The repro fails as diagnosed.
    let command = diagnosis["repro"]["command"]
        .as_str()
        .expect("a repro command");
    let blob = command.rsplit(' ').next().expect("a blob");
    let repro = fixture.probtest("repro", &[blob], &[]).run();
    repro.assert_code(101);

    // The user's files, byte for byte.
    assert!(
        std::fs::read(&report_path).ok() == Some(report),
        "the report changed"
    );
    assert!(
        std::fs::read(&html_path).ok() == Some(html),
        "the HTML page changed"
    );
    assert!(snapshot(&store) == sessions, "the sessions changed");
}
