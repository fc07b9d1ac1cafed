//! End-to-end: settings that shape the generated items (`PROB_RUNS`, the config's `runs`,
//! `PROB_TRANSPOSE`) rebuild the tests when they change; bad values name the variable, a bad
//! runtime setting in one line before any run; the config's `json` takes effect. Each test owns its fixture
//! crate, because each one rebuilds it with different settings.

use crate::support::{counts, report_row, Fixture, Output};

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

/// The lines of `text` that hold `needle`.
fn lines_with<'a>(text: &'a str, needle: &str) -> Vec<&'a str> {
    text.lines().filter(|line| line.contains(needle)).collect()
}

/// Checks that a bad setting stopped the test process before anything ran: its one line said
/// once, no backtrace, no test item run, no body, no report.
fn check_stopped_before_any_run(output: &Output, line: &str, fixture: &Fixture) {
    assert_eq!(
        lines_with(&output.stdout, line).len() + lines_with(&output.stderr, line).len(),
        1,
        "the setting is named once{output}"
    );
    for noise in [
        "panicked",
        "stack backtrace",
        "RUST_BACKTRACE",
        "ERROR",
        " ... ",
    ] {
        assert!(
            !output.stdout.contains(noise) && !output.stderr.contains(noise),
            "{noise:?} printed{output}"
        );
    }
    assert!(output.has_no_section(), "{output}");
    assert!(
        fixture.read_lines("bad.log").is_empty(),
        "no body may run with a bad setting"
    );
    assert!(
        !fixture.path("bad.json").exists(),
        "no run was recorded, so no report{output}"
    );
}

#[test]
fn a_bad_runtime_setting_is_one_line_before_any_run() {
    let fixture = Fixture::builder("bad-setting")
        .test("runs", include_str!("../../fixtures/runs.rs"))
        .build();
    let bad = |name: &str, value: &str| {
        fixture.remove("bad.json");
        fixture.remove("bad.log");
        fixture
            .cargo_test(&["--test", "runs"])
            .env(name, value)
            .env("PROB_JSON", "bad.json")
            .env("PT_LOG", fixture.path("bad.log").to_string_lossy())
    };
    let confidence = "probtest: PROB_CONFIDENCE: expected a number strictly between 0 and 1, got `95`; did you mean 0.95?";
    let output = bad("PROB_CONFIDENCE", "95").run();
    // The process stops before any test runs: cargo passes its exit status on.
    output.assert_code(2);
    check_stopped_before_any_run(&output, confidence, &fixture);
    assert!(
        output.stderr.contains("(exit status: 2)"),
        "the process exits non-zero{output}"
    );
    for (name, value, line) in [
        (
            "PROB_DELAY",
            "-1",
            "probtest: PROB_DELAY: expected a number of seconds >= 0, got `-1`",
        ),
        (
            "PROB_TIMEOUT",
            "soon",
            "probtest: PROB_TIMEOUT: expected a duration such as `30s` or `1m30s`, got `soon`",
        ),
        (
            "PROB_LIMIT_OPENAI",
            "0",
            "probtest: PROB_LIMIT_OPENAI: expected a whole number at least 1, got `0`",
        ),
    ] {
        let output = bad(name, value).run();
        output.assert_code(2);
        check_stopped_before_any_run(&output, line, &fixture);
    }

    // Under nextest the binary is listed first: the list fails with the line, and no test
    // process starts.
    fixture.remove("bad.json");
    fixture.remove("bad.log");
    let output = fixture
        .nextest("run", &["--test", "runs"])
        .env("PROB_CONFIDENCE", "95")
        .env("PROB_JSON", "bad.json")
        .env("PT_LOG", fixture.path("bad.log").to_string_lossy())
        .run();
    assert_ne!(output.code, Some(0), "{output}");
    check_stopped_before_any_run(&output, confidence, &fixture);

    // The same value in the config fails the build, naming the file and the key.
    let fixture = Fixture::builder("bad-config-setting")
        .metadata("confidence = 95")
        .test("runs", include_str!("../../fixtures/runs.rs"))
        .build();
    let output = fixture.cargo_test(&["--test", "runs"]).run();
    output.assert_code(101);
    let line = format!(
        "{}: [package.metadata.probtest] confidence = 95: expected a number strictly between 0 and 1, got `95`; did you mean 0.95?",
        fixture.path("Cargo.toml").display()
    );
    assert!(output.stderr.contains(&line), "{output}");
    assert!(output.has_no_section(), "{output}");
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
