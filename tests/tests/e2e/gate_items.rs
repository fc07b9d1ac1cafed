//! End-to-end: the verdict item of a gated case (`<case>::verdict`, `PROB_GATE_ITEMS`). Under
//! `cargo test` and under nextest, a failed gate is a failed test of its own, named in libtest's
//! failure list and in nextest's JUnit XML, while the case's failing runs pass as samples; a
//! passing gate's verdict item passes. With `gate_items = false` there is no such item, and the
//! case's last run carries the verdict as before.

use std::sync::OnceLock;

use crate::support::Fixture;

/// The gates fixture, with verdict items (the default) and a nextest profile that writes JUnit.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("gate-items")
            .test("gates", include_str!("../../fixtures/gates.rs"))
            .build();
        let config = fixture.path(".config/nextest.toml");
        std::fs::create_dir_all(config.parent().expect("a parent")).expect("the config dir");
        std::fs::write(
            &config,
            "[profile.verdicts.junit]\npath = \"verdicts-junit.xml\"\n",
        )
        .expect("the nextest config");
        fixture
    })
}

/// The same crate with verdict items turned off in its config.
fn without_items() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("gate-items-off")
            .test("gates", include_str!("../../fixtures/gates.rs"))
            .metadata("gate_items = false")
            .build()
    })
}

#[test]
fn under_cargo_test_a_failed_gate_is_its_verdict_item() {
    let output = fixture()
        .cargo_test(&["--test", "gates", "bench_failing_gate"])
        .run();
    output.assert_code(101);
    // 18 of 20 runs fail: every one a sample that passes its item; the verdict item fails.
    assert_eq!(
        output.failed_tests(),
        ["bench_failing_gate::verdict"],
        "{output}"
    );
    assert!(
        output
            .stdout
            .contains("failing_gate: gate min_rate 0.5 is Fail on 2/20 runs, interval [1%, 32%]"),
        "{output}"
    );
    let passing = fixture()
        .cargo_test(&["--test", "gates", "bench_passing_gate"])
        .run();
    passing.assert_code(0);
    assert!(
        passing
            .stdout
            .contains("test bench_passing_gate::verdict ... ok"),
        "{passing}"
    );
}

#[test]
fn under_nextest_the_verdict_item_judges_the_session_and_junit_names_it() {
    let fixture = fixture();
    fixture.remove("target/nextest/verdicts/verdicts-junit.xml");
    let output = fixture
        .nextest(
            "run",
            &[
                "--profile",
                "verdicts",
                "--no-fail-fast",
                "--test",
                "gates",
                "bench_failing_gate",
                "bench_passing_gate",
            ],
        )
        .run();
    output.assert_code(100);
    // nextest keeps its store in the target directory of the workspace it runs.
    let junit = std::fs::read_to_string(fixture.path("target/nextest/verdicts/verdicts-junit.xml"))
        .unwrap_or_else(|error| panic!("no JUnit XML ({error}){output}"));
    // One failure in the XML: the failing gate's verdict, named; no run item failed.
    let failures: Vec<&str> = junit
        .split("<testcase ")
        .skip(1)
        .filter(|case| case.contains("<failure"))
        .filter_map(|case| case.split("name=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(failures, ["bench_failing_gate::verdict"], "{junit}");
    assert!(
        junit.contains("name=\"bench_passing_gate::verdict\""),
        "{junit}"
    );
    assert!(
        junit.contains("gate min_rate 0.5 is Fail on 2/20 runs"),
        "the verdict's message is in the XML: {junit}"
    );
}

#[test]
fn without_verdict_items_the_last_run_carries_the_verdict() {
    let fixture = without_items();
    let listed = fixture
        .cargo_test(&["--test", "gates", "--", "--list"])
        .run();
    listed.assert_code(0);
    assert!(!listed.stdout.contains("verdict"), "{listed}");
    let output = fixture
        .cargo_test(&["--test", "gates", "bench_failing_gate"])
        .run();
    output.assert_code(101);
    // The run that ends last in the process judges the case and carries the verdict.
    let failed = output.failed_tests();
    assert!(
        failed.len() == 1 && failed[0].starts_with("bench_failing_gate::run"),
        "{output}"
    );
    assert!(
        output
            .stdout
            .contains("failing_gate: gate min_rate 0.5 is Fail on 2/20 runs"),
        "{output}"
    );
}
