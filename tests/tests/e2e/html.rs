//! End-to-end: the HTML report of a real session, opened in a real browser. A fixture crate
//! runs under `cargo test`, `cargo probtest report --html` renders its session, and headless
//! Chromium loads the page: a screenshot, and the DOM asserted through the browser (the row
//! count, the status words, a click on a sort header, the filter box) by a probe script that
//! runs after the page's own and writes what it saw into the DOM Chromium dumps. Without
//! Chromium (Debian's `chromium`) the tests say they skip; under `CI=true` they fail.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::support::{shared_target_dir, unavailable, Fixture};
use serde_json::Value;

/// The session every test here renders, fresh for each run of this file.
fn session() -> &'static str {
    static SESSION: OnceLock<String> = OnceLock::new();
    SESSION.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        format!("e2e-html-{}-{nanos}", std::process::id())
    })
}

/// The fixture crate of `export.rs`, with its own session; the page of that session.
fn page() -> &'static (Fixture, PathBuf) {
    static PAGE: OnceLock<(Fixture, PathBuf)> = OnceLock::new();
    PAGE.get_or_init(|| {
        let fixture = Fixture::builder("export")
            .test("export", include_str!("../../fixtures/export.rs"))
            .build();
        let output = fixture
            .cargo_test(&["--test", "export"])
            .env("PROB_SESSION", session())
            .run();
        assert_eq!(output.code, Some(101), "some runs fail{output}");
        let dir = fixture.path("out/html");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("an output directory");
        let path = dir.join("report.html");
        let target = shared_target_dir();
        // The session has failing rows: `report` exits 100 after writing the page.
        fixture
            .probtest(
                "report",
                &[
                    "--session",
                    session(),
                    "--target-dir",
                    target.to_str().expect("a UTF-8 path"),
                    "--html",
                    path.to_str().expect("a UTF-8 path"),
                ],
                &[],
            )
            .run()
            .assert_code(100);
        (fixture, path)
    })
}

/// The browser, or `None` (a skip, an error under `CI=true`) when it is not installed.
fn chromium() -> Option<&'static str> {
    match Command::new("chromium").arg("--version").output() {
        Ok(output) if output.status.success() => Some("chromium"),
        Ok(output) => {
            unavailable(
                "opening the HTML report in Chromium",
                &String::from_utf8_lossy(&output.stderr),
            );
            None
        }
        Err(error) => {
            unavailable(
                "opening the HTML report in Chromium (apt-get install chromium)",
                &error.to_string(),
            );
            None
        }
    }
}

/// Headless Chromium on `page` with `args`; its stdout.
fn headless(browser: &str, page: &Path, args: &[&str]) -> String {
    let profile = page.with_extension("profile");
    let output = Command::new(browser)
        .args([
            "--headless",
            // Root (as on CI) cannot use Chromium's sandbox.
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1300,900",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Clicks and reads the page the way a person would, after the page's own script has run, and
/// leaves what it saw as JSON in `<pre id="probe">`.
const PROBE: &str = r#"<script>
(function () {
  var table = document.getElementById("cases");
  var ids = function () {
    return Array.prototype.map.call(table.tBodies, function (b) { return b.dataset.id; });
  };
  var seen = {};
  seen.rows = table.querySelectorAll("tbody > tr.case").length;
  seen.statuses = Array.prototype.map.call(
    table.querySelectorAll("tr.case td.status:nth-child(5)"),
    function (td) { return td.textContent; });
  seen.overall = document.getElementById("overall").textContent;
  seen.before = ids();
  var rate = table.querySelector("th[data-sort=rate]");
  rate.click();
  seen.ascending = ids();
  seen.sorted = rate.getAttribute("aria-sort");
  rate.click();
  seen.descending = ids();
  var filter = document.getElementById("filter");
  filter.value = "FLAKY";
  filter.dispatchEvent(new Event("input"));
  seen.filtered = ids().filter(function (id, i) { return !table.tBodies[i].hidden; });
  seen.shown = document.getElementById("shown").textContent;
  var probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify(seen);
  document.body.appendChild(probe);
})();
</script>"#;

#[test]
fn the_page_renders_sorts_and_filters_in_a_real_browser() {
    let (_, path) = page();
    let Some(browser) = chromium() else {
        return;
    };
    let page = std::fs::read_to_string(path).expect("the page");
    let probed = path.with_file_name("probed.html");
    std::fs::write(&probed, page.replace("</body>", &format!("{PROBE}</body>"))).expect("written");
    let dom = headless(
        browser,
        &probed,
        &["--dump-dom", "--virtual-time-budget=5000"],
    );
    let text = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("the probe ran: {dom}"));
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let seen: Value = serde_json::from_str(&text).expect("the probe's JSON");
    assert_eq!(seen["rows"], 5, "{seen}");
    assert_eq!(
        seen["overall"], "Overall: 11/19 passed (58%), 1 errored",
        "{seen}"
    );
    let statuses: Vec<&str> = seen["statuses"]
        .as_array()
        .expect("statuses")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        statuses,
        ["", "FLAKY", "1 ERRORED", "FAIL", "FLAKY"],
        "{seen}"
    );
    assert_eq!(
        seen["before"],
        serde_json::json!([
            "triage::refund",
            "triage::chatty",
            "triage::broken",
            "wrong",
            "gated"
        ])
    );
    // By pass rate: 0/2, 1/5, 3/4 twice (kept in their order), 4/4; then the other way.
    assert_eq!(seen["sorted"], "ascending", "{seen}");
    assert_eq!(
        seen["ascending"],
        serde_json::json!([
            "wrong",
            "gated",
            "triage::chatty",
            "triage::broken",
            "triage::refund"
        ])
    );
    assert_eq!(
        seen["descending"],
        serde_json::json!([
            "triage::refund",
            "triage::chatty",
            "triage::broken",
            "gated",
            "wrong"
        ])
    );
    assert_eq!(
        seen["filtered"],
        serde_json::json!(["triage::chatty", "gated"])
    );
    assert_eq!(seen["shown"], "2", "{seen}");
}

#[test]
fn a_screenshot_of_the_page() {
    let (_, path) = page();
    let Some(browser) = chromium() else {
        return;
    };
    let shot = path.with_file_name("report.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        browser,
        path,
        &[&format!("--screenshot={}", shot.display())],
    );
    let png = std::fs::read(&shot).expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // A blank page compresses to a few kilobytes; this one has rows, bars and text.
    assert!(png.len() > 20_000, "{} bytes", png.len());
}

#[test]
fn the_page_is_one_file_with_the_sessions_runs() {
    let (_, path) = page();
    let page = std::fs::read_to_string(path).expect("the page");
    for external in ["http://", "https://", "<link", " src=", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
    assert!(
        page.contains(&format!("<code>{}</code>", session())),
        "the session is named"
    );
    assert!(
        page.contains("answered &#60;chatty&#62; &#38; wrong"),
        "the message escaped"
    );
}

#[test]
fn prob_html_is_written_at_session_end_and_a_bad_path_is_one_line() {
    let (fixture, path) = page();
    let dir = path.parent().expect("the output directory");
    let written = dir.join("from-tests.html");
    let output = fixture
        .cargo_test(&["--test", "export"])
        .env("PROB_HTML", written.to_str().expect("a UTF-8 path"))
        .run();
    assert_eq!(output.code, Some(101), "{output}");
    let page = std::fs::read_to_string(&written).expect("PROB_HTML was written");
    assert_eq!(page.matches("<tr class=\"case\">").count(), 5);
    // Under cargo probtest run, the session's end: a directory where the file should be.
    let output = fixture
        .probtest("run", &[], &["--test", "export"])
        .env("PROB_HTML", dir.to_str().expect("a UTF-8 path"))
        .run();
    output.assert_code(101);
    let lines: Vec<&str> = output
        .stderr
        .lines()
        .filter(|line| line.contains("PROB_HTML="))
        .collect();
    assert!(!lines.is_empty(), "{output}");
    for line in &lines {
        assert!(
            line.contains(&format!("PROB_HTML={}", dir.display())),
            "{line}"
        );
        assert!(line.contains("is a directory"), "{line}");
    }
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with("error: PROB_HTML=")),
        "cargo probtest run says it: {output}"
    );
}

#[test]
fn under_nextest_cargo_probtest_run_writes_the_whole_sessions_page() {
    // Each nextest process holds one run and writes no page; the run's end does.
    let (fixture, path) = page();
    let written = path.with_file_name("nextest.html");
    let _ = std::fs::remove_file(&written);
    let output = fixture
        .probtest(
            "run",
            &["--nextest"],
            &["--test", "export", "--no-fail-fast"],
        )
        .env("PROB_HTML", written.to_str().expect("a UTF-8 path"))
        .run();
    output.assert_code(100);
    let page = std::fs::read_to_string(&written).expect("PROB_HTML was written");
    assert_eq!(page.matches("<tr class=\"case\">").count(), 5, "{output}");
    assert!(
        page.contains("Overall: 11/19 passed (58%), 1 errored"),
        "{output}"
    );
}

#[test]
fn the_title_names_the_package_and_the_time_not_the_session() {
    let (_, path) = page();
    let page = std::fs::read_to_string(path).expect("the page");
    let title = page
        .split_once("<title>")
        .and_then(|(_, rest)| rest.split_once("</title>"))
        .map(|(title, _)| title)
        .expect("a title");
    assert!(!title.contains(session()), "{title}");
    let parts: Vec<&str> = title.split(" — ").collect();
    assert_eq!(parts[..2], ["probtest", "pt-export"], "{title}");
    // `2026-12-07 01:30 UTC`
    let when = parts.get(2).copied().unwrap_or_default();
    let shape: String = when
        .chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect();
    assert_eq!(shape, "0000-00-00 00:00 UTC", "{title}");
    assert!(page.contains(&format!("<h1>{title}</h1>")), "{page}");
}

/// The functions table's header of a page.
fn functions_header(page: &str) -> &str {
    page.split_once("<table id=\"functions\">")
        .and_then(|(_, rest)| rest.split_once("</thead>"))
        .map(|(head, _)| head)
        .unwrap_or_else(|| panic!("a functions table: {page}"))
}

#[test]
fn the_metrics_column_is_there_only_when_a_metric_was_asked_for() {
    let (fixture, path) = page();
    let page = std::fs::read_to_string(path).expect("the page");
    assert!(
        !functions_header(&page).contains("metrics"),
        "{}",
        functions_header(&page)
    );
    let asked = path.with_file_name("metrics.html");
    let _ = std::fs::remove_file(&asked);
    let output = fixture
        .cargo_test(&["--test", "export"])
        .env("PROB_METRIC", "pass^2")
        .env("PROB_HTML", path_text(&asked))
        .run();
    assert_eq!(output.code, Some(101), "{output}");
    let page = std::fs::read_to_string(&asked).expect("PROB_HTML was written");
    assert!(
        functions_header(&page).contains("<th>metrics (mean)</th>"),
        "{}",
        functions_header(&page)
    );
}

fn path_text(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

#[test]
fn the_summary_says_where_the_html_was_written() {
    let (fixture, path) = page();
    let written = path.with_file_name("named.html");
    let output = fixture
        .cargo_test(&["--test", "export"])
        .env("PROB_HTML", path_text(&written))
        .run();
    assert_eq!(output.code, Some(101), "{output}");
    assert!(written.is_file(), "{output}");
    let line = format!("  HTML:    {}", written.display());
    assert!(
        output.stdout.lines().any(|l| l == line),
        "`{line}` in the summary{output}"
    );
    // And `cargo probtest report --html`'s.
    let target = shared_target_dir();
    let again = path.with_file_name("again.html");
    let output = fixture
        .probtest(
            "report",
            &[
                "--session",
                session(),
                "--target-dir",
                path_text(&target),
                "--html",
                path_text(&again),
            ],
            &[],
        )
        .run();
    // The session has a failing gate: `report` fails, as nextest does.
    output.assert_code(100);
    let line = format!("  HTML:    {}", again.display());
    assert!(
        output.stdout.lines().any(|l| l == line),
        "`{line}` in the summary{output}"
    );
}
