//! End-to-end: the report files of a real session. `cargo probtest report --markdown` and
//! `--junit` on a fixture's session, the JUnit XML validated against the schema CI systems use
//! (`tests/schemas/junit-10.xsd`, with `xmllint`), the job summary `cargo probtest run` appends
//! to `GITHUB_STEP_SUMMARY`, and bad input refused in one line. And failure messages in every
//! file: an `assert_eq!`'s wrong answer kept whole and grouped across runs, and control
//! characters in ids, messages and model names shown escaped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::support::{
    location, report_records, shared_target_dir, unavailable, workspace_root, Fixture, Output,
};

/// The session every test here renders, fresh for each run of this file: a session key given
/// again would add its runs to the earlier ones'.
fn session() -> &'static str {
    static SESSION: OnceLock<String> = OnceLock::new();
    SESSION.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        format!("e2e-export-{}-{nanos}", std::process::id())
    })
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let fixture = Fixture::builder("export")
            .test("export", include_str!("../../fixtures/export.rs"))
            .build();
        let output = fixture
            .cargo_test(&["--test", "export"])
            .env("PROB_SESSION", session())
            .run();
        assert_eq!(output.code, Some(101), "some runs fail{output}");
        fixture
    })
}

/// `cargo probtest report` of the fixture's session, with `args`.
fn report(args: &[&str]) -> Output {
    let target = shared_target_dir();
    let mut all = vec![
        "--session",
        session(),
        "--target-dir",
        target.to_str().expect("a UTF-8 path"),
    ];
    all.extend(args);
    fixture().probtest("report", &all, &[]).run()
}

fn out_dir(name: &str) -> PathBuf {
    let dir = fixture().path("out").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("an output directory");
    dir
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn markdown_lists_the_cases_that_are_not_clean_first() {
    let dir = out_dir("markdown");
    let path = dir.join("summary.md");
    let output = report(&["--markdown", path_str(&path)]);
    // The session has failing rows: `report` exits 100 after writing the file.
    output.assert_code(100);
    let text = std::fs::read_to_string(&path).expect("the Markdown was written");
    let (first, all) = text.split_once("<details>").expect("a collapsed table");
    assert!(first.contains("**Not clean: 4 of 5 cases**"), "{text}");
    for (case, status) in [
        ("triage::chatty", "FLAKY"),
        ("triage::broken", "1 ERRORED"),
        ("wrong", "FAIL"),
        ("gated", "FLAKY; gate FAIL"),
    ] {
        let line = first
            .lines()
            .find(|line| line.starts_with(&format!("{case} ")))
            .unwrap_or_else(|| panic!("{case} among the cases that are not clean:\n{text}"));
        assert!(line.trim_end().ends_with(status), "{line}");
        // The status words are the terminal's.
        assert!(output
            .stdout
            .contains(status.split(';').next().unwrap_or(status)));
    }
    assert!(!first.contains("triage::refund "), "a clean pass: {text}");
    assert!(all.contains("triage::refund "), "{text}");
    assert!(
        text.contains("m-small | 1,200 |     60 | $0.0120"),
        "{text}"
    );
}

/// The XSD validation, or `None` when `xmllint` is missing (an error under `CI=true`).
fn xmllint(xml: &Path) -> Option<std::process::Output> {
    let schema = workspace_root().join("tests/schemas/junit-10.xsd");
    match Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(&schema)
        .arg(xml)
        .output()
    {
        Ok(output) => Some(output),
        Err(error) => {
            unavailable(
                "validating JUnit XML with xmllint (apt-get install libxml2-utils)",
                &error.to_string(),
            );
            None
        }
    }
}

#[test]
fn junit_validates_against_the_junit_schema_ci_systems_use() {
    let dir = out_dir("junit");
    let path = dir.join("junit.xml");
    // The session has failing rows: `report` exits 100 after writing the file.
    report(&["--junit", path_str(&path)]).assert_code(100);
    let xml = std::fs::read_to_string(&path).expect("the JUnit XML was written");
    assert_eq!(xml.matches("<testsuite ").count(), 3, "{xml}");
    // Five cases, and the gate as a case of its own.
    assert_eq!(xml.matches("<testcase ").count(), 6, "{xml}");
    assert!(
        xml.contains("<failure message=\"FLAKY: 3/4 passed [19%, 99%]\""),
        "{xml}"
    );
    assert!(xml.contains("answered &lt;chatty&gt; &amp; wrong"), "{xml}");
    assert!(
        xml.contains("why: cargo probtest doctor -p pt-export triage::chatty"),
        "{xml}"
    );
    assert!(
        xml.contains("<error message=\"1 ERRORED: 3/4 passed"),
        "{xml}"
    );
    assert!(xml.contains("name=\"gated gate min_rate 0.8\""), "{xml}");
    assert!(
        xml.contains("<property name=\"triage::chatty tokens m-small input\" value=\"400\"/>"),
        "{xml}"
    );
    let Some(validated) = xmllint(&path) else {
        return;
    };
    assert!(
        validated.status.success(),
        "{}",
        String::from_utf8_lossy(&validated.stderr)
    );
    // The check can fail: a testsuite without its required `name` does not validate.
    let broken = dir.join("broken.xml");
    std::fs::write(
        &broken,
        xml.replacen("<testsuite name=", "<testsuite label=", 1),
    )
    .expect("written");
    let refused = xmllint(&broken).expect("xmllint ran before");
    assert!(!refused.status.success(), "a broken file validated");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = out_dir("bad");
    // An unwritable path: a directory where the file should be, and a file as a parent.
    std::fs::write(dir.join("file"), "").expect("a file");
    for (flag, path) in [
        ("--markdown", dir.clone()),
        ("--junit", dir.join("file").join("junit.xml")),
        ("--html", dir.join("file").join("report.html")),
    ] {
        let output = report(&[flag, path_str(&path)]);
        output.assert_code(2);
        let lines: Vec<&str> = output.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{output}");
        assert!(lines[0].starts_with("error: "), "{output}");
        assert!(lines[0].contains(path_str(&path)), "{output}");
    }
    // A report of a newer schema than this version reads.
    let newer = dir.join("newer.json");
    std::fs::write(
        &newer,
        r#"{"schema": 99, "tool": "probtest", "rows": [], "records": []}"#,
    )
    .expect("written");
    let output = fixture()
        .probtest(
            "report",
            &["--json", path_str(&newer), "--markdown", "x.md"],
            &[],
        )
        .run();
    output.assert_code(2);
    assert_eq!(
        output.stderr.trim_end(),
        format!(
            "error: {}: written by a newer probtest (report schema 99; this version reads up to {})",
            newer.display(),
            probtest::SCHEMA_VERSION
        ),
        "{output}"
    );
    assert!(!fixture().path("x.md").exists());
}

#[test]
fn run_appends_the_markdown_to_the_github_step_summary() {
    let dir = out_dir("step-summary");
    let path = dir.join("step_summary.md");
    std::fs::write(&path, "# Earlier step\n\n").expect("written");
    let output = fixture()
        .probtest("run", &[], &["--test", "export"])
        .env("GITHUB_STEP_SUMMARY", path_str(&path))
        .run();
    output.assert_code(101);
    let text = std::fs::read_to_string(&path).expect("the job summary");
    assert!(
        text.starts_with("# Earlier step\n\n## probability\n"),
        "{text}"
    );
    assert!(text.contains("**Not clean: 4 of 5 cases**"), "{text}");
    // A job summary that cannot be written fails the run, in one line.
    let output = fixture()
        .probtest("run", &[], &["--test", "export"])
        .env("GITHUB_STEP_SUMMARY", path_str(&dir))
        .run();
    output.assert_code(101);
    assert!(
        output.stderr.lines().any(|line| line.starts_with(&format!(
            "error: GITHUB_STEP_SUMMARY={}: cannot append the Markdown summary",
            dir.display()
        ))),
        "{output}"
    );
}

const MESSAGES: &str = include_str!("../../fixtures/messages.rs");

/// The `messages` fixture's run, with its own session, and the report files of that session:
/// the run's output, and the Markdown, JUnit XML and HTML `cargo probtest report` wrote.
fn messages() -> &'static (Fixture, Output, [String; 3]) {
    static MESSAGES_RUN: OnceLock<(Fixture, Output, [String; 3])> = OnceLock::new();
    MESSAGES_RUN.get_or_init(|| {
        let fixture = Fixture::builder("messages")
            .test("messages", MESSAGES)
            .build();
        let session = format!("{}-messages", session());
        fixture.remove("messages.json");
        let output = fixture
            .cargo_test(&["--test", "messages"])
            .env("PROB_SESSION", &session)
            .env("PROB_JSON", "messages.json")
            .run();
        assert_eq!(output.code, Some(101), "some runs fail{output}");
        let dir = fixture.path("out/messages");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("an output directory");
        let target = shared_target_dir();
        let paths = ["report.md", "junit.xml", "report.html"].map(|name| dir.join(name));
        fixture
            .probtest(
                "report",
                &[
                    "--session",
                    &session,
                    "--target-dir",
                    path_str(&target),
                    "--markdown",
                    path_str(&paths[0]),
                    "--junit",
                    path_str(&paths[1]),
                    "--html",
                    path_str(&paths[2]),
                ],
                &[],
            )
            .run()
            // The session has failing runs: `report` fails, as nextest does.
            .assert_code(100);
        let files = paths.map(|path| std::fs::read_to_string(&path).expect("a report file"));
        (fixture, output, files)
    })
}

/// The message of the wrong answer, as `assert_eq!` writes it.
const WRONG: &str = "assertion `left == right` failed: the label of a refund request\n  \
                     left: \"shipping\"\n right: \"refund\"";

#[test]
fn a_wrong_answer_is_kept_whole_and_grouped_in_every_file() {
    let (fixture, output, [markdown, junit, html]) = messages();
    let at = location("tests/messages.rs", MESSAGES, "label", "assert_eq!");
    let report = fixture.read_json("messages.json");
    let records = report_records(&report, "label");
    let failed: Vec<u64> = records
        .iter()
        .filter(|record| record["outcome"] == "fail")
        .map(|record| record["run"].as_u64().expect("a run"))
        .collect();
    assert_eq!(failed, [1, 3, 4, 5], "{output}");
    for record in records.iter().filter(|record| record["outcome"] == "fail") {
        assert_eq!(record["message"], WRONG, "{record}");
        assert_eq!(record["location"], at.as_str(), "{record}");
    }
    let heading = format!("4 runs (1, 3-5) failed at {at}");
    // The Markdown: the heading once, then the message whole in a code block.
    let block = format!(
        "- {heading}\n  ```text\n  {}\n  ```\n",
        WRONG.replace('\n', "\n  ")
    );
    assert_eq!(markdown.matches(&block).count(), 1, "{markdown}");
    // The HTML: one list item for the four runs, each run's number once.
    let quoted = WRONG.replace('"', "&#34;");
    let item = format!("<li class=\"run fail\">{heading}<pre>{quoted}</pre></li>");
    assert_eq!(html.matches(&item).count(), 1, "{html}");
    assert_eq!(html.matches("right: &#34;refund&#34;").count(), 1, "{html}");
    // JUnit: the whole message in the failure's text.
    let text = WRONG.replace('"', "&quot;").replace('\n', "\n  ");
    assert!(
        junit.contains(&format!("{heading}:\n  {text}\n")),
        "{junit}"
    );
}

#[test]
fn control_characters_are_shown_escaped_and_entities_as_typed() {
    let (_, output, [markdown, _, html]) = messages();
    let section = output.section();
    let red = "hostile::red\\u{1b}[31mtext";
    let rtl = "hostile::rtl\\u{202e}txt";
    for raw in ['\u{1b}', '\u{202e}'] {
        assert!(!section.text.contains(raw), "{raw:?} in\n{}", section.text);
        assert!(!markdown.contains(raw), "{raw:?} in\n{markdown}");
        assert!(!html.contains(raw), "{raw:?} in the page");
    }
    assert_eq!(section.row(red), ["0/2", "FAIL"]);
    assert_eq!(section.row(rtl), ["2/2"]);
    assert_eq!(section.tokens("m\\u{1b}[7m")[0], "60 in / 6 out");
    // The Markdown: in tables, escaped as Markdown too, so that `&amp;` reads as typed.
    assert!(
        markdown.contains("\nhostile::red\\\\u{1b}\\[31mtext "),
        "{markdown}"
    );
    assert!(
        markdown.contains("\nhostile::rtl\\\\u{202e}txt "),
        "{markdown}"
    );
    assert!(markdown.contains("\nhostile::a\\&amp;b "), "{markdown}");
    assert!(markdown.contains("\nm\\\\u{1b}\\[7m "), "{markdown}");
    let message = "saw\\u{1b}[2J red\\u{1b}[31mtext\\u{202e} end";
    assert!(
        markdown.contains(&format!("`{red}`:\n\n- 2 runs (1, 2) failed")),
        "{markdown}"
    );
    assert!(markdown.contains(&format!("  {message}\n")), "{markdown}");
    // The HTML.
    assert!(
        html.contains(&format!("<td class=\"id\">{red}</td>")),
        "{html}"
    );
    assert!(
        html.contains(&format!("<td class=\"id\">{rtl}</td>")),
        "{html}"
    );
    assert!(
        html.contains("<td class=\"id\">hostile::a&#38;amp;b</td>"),
        "{html}"
    );
    assert!(html.contains(&format!("<pre>{message}</pre>")), "{html}");
    assert!(html.contains("<td>m\\u{1b}[7m</td>"), "{html}");
}

/// The `reports` fixture's session (cheap runs, float sums, a FLAKY case whose gate passes, a
/// long id), fresh for each run of this file, and what its `cargo test` printed.
fn reports() -> &'static (Fixture, String, Output) {
    static REPORTS: OnceLock<(Fixture, String, Output)> = OnceLock::new();
    REPORTS.get_or_init(|| {
        let fixture = Fixture::builder("reports")
            .test("reports", include_str!("../../fixtures/reports.rs"))
            .build();
        let session = format!("{}-reports", session());
        let output = fixture
            .cargo_test(&["--test", "reports"])
            .env("PROB_SESSION", &session)
            .run();
        output.assert_code(0);
        (fixture, session, output)
    })
}

/// `cargo probtest report` of the `reports` session into `name`'s directory, with `flag` and
/// the file it writes; the file's text.
fn reports_file(name: &str, flag: &str, file: &str) -> String {
    let (fixture, session, _) = reports();
    let dir = fixture.path("out").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("an output directory");
    let path = dir.join(file);
    let target = shared_target_dir();
    fixture
        .probtest(
            "report",
            &[
                "--session",
                session,
                "--target-dir",
                path_str(&target),
                flag,
                path_str(&path),
            ],
            &[],
        )
        .run()
        .assert_code(0);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `text` shows a cost of `$0.0000` (a cost that is not zero shown as none).
fn shows_no_cost_as_zero(text: &str) -> bool {
    text.match_indices("$0.0000")
        .all(|(at, found)| text[at + found.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

#[test]
fn junit_properties_are_round_and_a_flaky_case_whose_gate_passed_says_so() {
    let xml = reports_file("junit-round", "--junit", "junit.xml");
    // Twenty runs of 0.1 sum to 2.0000000000000004.
    assert!(
        xml.contains("<property name=\"mostly cost\" value=\"2\"/>"),
        "{xml}"
    );
    assert!(
        xml.contains("<property name=\"cheap cost\" value=\"0.00004\"/>"),
        "{xml}"
    );
    let case = xml
        .split("<testcase ")
        .find(|case| case.starts_with("name=\"mostly\""))
        .unwrap_or_else(|| panic!("the FLAKY case's testcase: {xml}"));
    assert!(!case.contains("<failure"), "its gate passed: {case}");
    let out = case
        .split_once("<system-out>")
        .and_then(|(_, rest)| rest.split_once("</system-out>"))
        .map(|(out, _)| out)
        .unwrap_or_else(|| panic!("the case says what it is: {case}"));
    assert!(out.starts_with("FLAKY: 19/20 passed ["), "{out}");
    assert!(
        out.lines()
            .next()
            .is_some_and(|line| line.ends_with("]; gate PASS (min_rate 0.5), so the case passes")),
        "{out}"
    );
    assert!(out.contains("run 3 failed at tests/reports.rs:"), "{out}");
    assert!(out.contains("  the third run is wrong\n"), "{out}");
    assert!(
        out.contains("why: cargo probtest doctor -p pt-reports mostly"),
        "{out}"
    );
    let path = reports().0.path("out/junit-round/junit.xml");
    if let Some(validated) = xmllint(&path) {
        assert!(
            validated.status.success(),
            "{}",
            String::from_utf8_lossy(&validated.stderr)
        );
    }
}

#[test]
fn cheap_runs_keep_their_digits_in_the_summary_and_every_file() {
    let (_, _, output) = reports();
    let row = output
        .stdout
        .lines()
        .find(|line| line.trim_start().starts_with("cheap "))
        .unwrap_or_else(|| panic!("the cheap row{output}"));
    assert!(row.trim_end().ends_with("$0.000040"), "{row}");
    assert!(shows_no_cost_as_zero(&output.stdout), "{output}");

    let page = reports_file("html-cheap", "--html", "report.html");
    let body = page
        .split("<tbody ")
        .find(|body| body.starts_with("data-id=\"cheap\""))
        .unwrap_or_else(|| panic!("the cheap case: {page}"));
    // Its cost, and what a pass of it cost.
    assert!(
        body.contains("<td class=\"num\">$0.000040</td><td class=\"num\">$0.000010</td>"),
        "{body}"
    );
    assert!(shows_no_cost_as_zero(&page), "{page}");

    let text = reports_file("markdown-cheap", "--markdown", "summary.md");
    assert!(text.contains("| $0.000040 |"), "{text}");
    assert!(shows_no_cost_as_zero(&text), "{text}");
}

#[test]
fn markdown_keeps_to_80_columns_beside_a_long_case_id() {
    let text = reports_file("markdown-width", "--markdown", "summary.md");
    // Padded to the long id, the FLAKY case's row would be 89 columns wide.
    assert!(
        text.contains("refund_requests_described_at_length |"),
        "{text}"
    );
    assert!(text.contains("FLAKY; gate PASS"), "{text}");
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}\n{text}",
            line.chars().count()
        );
    }
}
