//! End-to-end: settings that shape the generated items (`PROB_RUNS`, the config's `runs`,
//! `PROB_TRANSPOSE`) rebuild the tests when they change; bad values name the variable; the
//! runtime settings `PROB_DELAY` and the config's `json` take effect. Each test owns its fixture
//! crate, because each one rebuilds it with different settings.

use crate::support::{counts, report_records, report_row, Fixture, Output};

/// Whether cargo compiled the fixture crate itself in this run.
fn rebuilt(output: &Output, package: &str) -> bool {
    output.stderr.contains(&format!("Compiling {package} "))
}

/// The test items `cargo test -- --list` printed.
fn listed(output: &Output) -> Vec<String> {
    output
        .stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

#[test]
fn prob_runs_overrides_the_attribute_and_a_change_rebuilds_the_items() {
    let fixture = Fixture::builder("env")
        .test("runs", include_str!("../../fixtures/runs.rs"))
        .build();
    let run = |runs: &str| {
        fixture.remove("runs.json");
        let output = fixture
            .cargo_test(&["--test", "runs"])
            .env("PROB_RUNS", runs)
            .env("PROB_JSON", "runs.json")
            .run();
        output.assert_code(0);
        output
    };
    let list = |runs: &str| {
        let output = fixture
            .cargo_test(&["--test", "runs", "--", "--list"])
            .env("PROB_RUNS", runs)
            .run();
        output.assert_code(0);
        listed(&output)
    };

    let output = run("2");
    let section = output.section();
    assert_eq!(section.row("attr"), ["2/2"], "{output}");
    assert_eq!(section.row("cases::1"), ["2/2"], "{output}");
    assert_eq!(section.row("cases::2"), ["2/2"], "{output}");
    let report = fixture.read_json("runs.json");
    assert_eq!(counts(report_row(&report, "attr")), [2, 0, 0, 2]);
    assert_eq!(report["runs"], 2);
    assert_eq!(
        list("2"),
        [
            "bench_attr::run1",
            "bench_attr::run2",
            "bench_cases::case_1::run1",
            "bench_cases::case_1::run2",
            "bench_cases::case_2::run1",
            "bench_cases::case_2::run2",
        ]
    );

    // Nothing but the variable changes: cargo must notice it.
    let output = run("3");
    assert!(
        rebuilt(&output, "pt-env"),
        "PROB_RUNS=3 must rebuild{output}"
    );
    let section = output.section();
    assert_eq!(section.row("attr"), ["3/3"], "{output}");
    assert_eq!(section.row("cases::2"), ["3/3"], "{output}");
    assert_eq!(section.overall, "Overall: 9/9 passed (100%)");
    let report = fixture.read_json("runs.json");
    assert_eq!(counts(report_row(&report, "cases::1")), [3, 0, 0, 3]);
    assert_eq!(report["runs"], 3);
    let items = list("3");
    assert_eq!(items.len(), 9, "{items:?}");
    assert!(
        items.iter().any(|item| item == "bench_attr::run3"),
        "{items:?}"
    );
    assert!(
        items.iter().any(|item| item == "bench_cases::case_2::run3"),
        "{items:?}"
    );

    // The same value again is no reason to rebuild.
    let output = run("3");
    assert!(
        !rebuilt(&output, "pt-env"),
        "unchanged settings rebuilt{output}"
    );

    let output = fixture
        .cargo_test(&["--test", "runs"])
        .env("PROB_RUNS", "ten")
        .run();
    output.assert_code(101);
    assert!(
        output
            .stderr
            .contains("PROB_RUNS: expected a whole number of runs, got `ten`"),
        "a bad PROB_RUNS must fail the build naming it and its value{output}"
    );
    assert!(output.has_no_section(), "{output}");
}

#[test]
fn a_bad_prob_delay_makes_every_run_an_error_naming_it() {
    let fixture = Fixture::builder("delay")
        .test("runs", include_str!("../../fixtures/runs.rs"))
        .build();
    fixture.remove("delay.json");
    fixture.remove("delay.log");
    let output = fixture
        .cargo_test(&["--test", "runs"])
        .env("PROB_DELAY", "-1")
        .env("PROB_JSON", "delay.json")
        .env("PT_LOG", fixture.path("delay.log").to_string_lossy())
        .run();
    output.assert_code(101);
    let section = output.section();
    assert_eq!(section.row("attr"), ["0/5", "ERROR"], "{output}");
    assert_eq!(section.row("cases::1"), ["0/1", "ERROR"], "{output}");
    assert_eq!(section.overall, "Overall: 0/7 passed (0%), 7 errored");
    assert!(
        fixture.read_lines("delay.log").is_empty(),
        "no body may run with a bad setting"
    );
    assert!(
        output.stdout.contains("test bench_attr::run1 ... FAILED\n")
            && output
                .stdout
                .contains("PROB_DELAY: expected a number of seconds >= 0, got `-1`"),
        "the test items fail with the message{output}"
    );
    // PROB_JSON is valid, so the report is still written and tells why the runs errored.
    assert!(
        fixture.path("delay.json").is_file(),
        "a bad PROB_DELAY must not stop the report that PROB_JSON asks for{output}"
    );
    let report = fixture.read_json("delay.json");
    let records = report_records(&report, "attr");
    assert_eq!(records.len(), 5);
    for record in records {
        assert_eq!(record["outcome"], "error");
        assert_eq!(
            record["error"],
            "PROB_DELAY: expected a number of seconds >= 0, got `-1`"
        );
    }
}

#[test]
fn editing_the_config_runs_rebuilds_and_a_relative_config_json_is_beside_cargo_toml() {
    let source = include_str!("../../fixtures/config.rs");
    let build = |metadata: &str| {
        Fixture::builder("config")
            .metadata(metadata)
            .test("config", source)
            .build()
    };
    let fixture = build("runs = 2\njson = \"cfg-out/report.json\"");
    fixture.remove("cfg-out");
    let output = fixture
        .cargo_test(&["--test", "config"])
        .current_dir(fixture.path("tests"))
        .run();
    output.assert_code(0);
    let section = output.section();
    assert_eq!(section.row("default"), ["2/2"], "{output}");
    assert_eq!(section.row("attr"), ["3/3"], "the attribute wins{output}");
    assert!(
        section
            .report
            .as_deref()
            .is_some_and(|path| path.ends_with("cfg-out/report.json")),
        "{output}"
    );
    let report = fixture.read_json("cfg-out/report.json");
    assert_eq!(counts(report_row(&report, "default")), [2, 0, 0, 2]);

    let fixture = build("runs = 4\njson = \"cfg-out/report.json\"");
    let output = fixture.cargo_test(&["--test", "config"]).run();
    output.assert_code(0);
    assert!(
        rebuilt(&output, "pt-config"),
        "editing the config must rebuild{output}"
    );
    let section = output.section();
    assert_eq!(section.row("default"), ["4/4"], "{output}");
    assert_eq!(section.row("attr"), ["3/3"], "{output}");
    let report = fixture.read_json("cfg-out/report.json");
    assert_eq!(counts(report_row(&report, "default")), [4, 0, 0, 4]);

    let fixture = build("runs = \"many\"");
    let output = fixture.cargo_test(&["--test", "config"]).run();
    output.assert_code(101);
    assert!(
        output
            .stderr
            .contains("[package.metadata.probtest] runs must be a whole number, got \"many\""),
        "a bad config value must fail the build naming key and value{output}"
    );
}

/// `(function, case, run)` of a logged test item name, in either item layout.
fn identify(item: &str) -> (String, Option<String>, u32) {
    let run = |text: &str| -> u32 {
        text.strip_prefix("run")
            .and_then(|digits| digits.parse().ok())
            .unwrap_or_else(|| panic!("no run number in {item}"))
    };
    if item.contains("__") {
        let parts: Vec<&str> = item.split("__").collect();
        (
            parts[1].to_string(),
            parts.get(2).map(|case| case.to_string()),
            run(parts[0]),
        )
    } else {
        let parts: Vec<&str> = item.split("::").collect();
        let case = (parts.len() == 3).then(|| parts[1].to_string());
        (parts[0].to_string(), case, run(parts[parts.len() - 1]))
    }
}

#[test]
fn transpose_runs_run_major_and_plain_order_is_case_major_in_numeric_run_order() {
    let fixture = Fixture::builder("order")
        .test("order", include_str!("../../fixtures/order.rs"))
        .build();
    let cases = [
        ("bench_a", Some("x")),
        ("bench_a", Some("y")),
        ("bench_b", None),
    ];
    let id = |(function, case): (&str, Option<&str>), run: u32| {
        (function.to_string(), case.map(str::to_string), run)
    };
    let run = |transpose: Option<&str>| {
        fixture.remove("order.log");
        let mut command = fixture
            .cargo_test(&["--test", "order", "--", "--test-threads=1"])
            .env("PT_LOG", fixture.path("order.log").to_string_lossy());
        if let Some(value) = transpose {
            command = command.env("PROB_TRANSPOSE", value);
        }
        command.run()
    };

    let output = run(None);
    output.assert_code(0);
    let order: Vec<_> = fixture
        .read_lines("order.log")
        .iter()
        .map(|item| identify(item))
        .collect();
    let case_major: Vec<_> = cases
        .iter()
        .flat_map(|&case| (1..=12).map(move |run| id(case, run)))
        .collect();
    assert_eq!(
        order, case_major,
        "case-major, runs in numeric order{output}"
    );

    let output = run(Some("1"));
    output.assert_code(0);
    assert!(
        rebuilt(&output, "pt-order"),
        "PROB_TRANSPOSE must rebuild{output}"
    );
    let order: Vec<_> = fixture
        .read_lines("order.log")
        .iter()
        .map(|item| identify(item))
        .collect();
    let run_major: Vec<_> = (1..=12)
        .flat_map(|run| cases.iter().map(move |&case| id(case, run)))
        .collect();
    assert_eq!(
        order, run_major,
        "run-major across the module's cases{output}"
    );
    let section = output.section();
    assert_eq!(
        section.rows,
        [["a::x", "12/12"], ["a::y", "12/12"], ["b", "12/12"]],
        "rows do not depend on the order{output}"
    );

    let output = run(Some("maybe"));
    output.assert_code(101);
    assert!(
        output.stderr.contains("PROB_TRANSPOSE: expected") && output.stderr.contains("`maybe`"),
        "a bad PROB_TRANSPOSE must fail the build naming it and its value{output}"
    );
}
