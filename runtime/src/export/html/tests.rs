//! The HTML page of a report with every kind of row: one case body per row with the terminal's
//! status words, escaped ids, no reference outside the file, failing runs grouped by their
//! message, history in the sparklines, and the size of a large session.

use crate::export::fixture::{fixture, WRONG_ANSWER};
use crate::export::html::{html, History, HistorySession};
use crate::model::Report;
use crate::render::analysis::pct1;
use crate::types::stats::StatsConfig;

#[test]
fn one_case_body_per_row_with_the_summarys_status_words() {
    let report = fixture();
    let page = html(&report, &History::default());
    assert_eq!(page.matches("<tbody data-id=").count(), report.rows.len());
    for row in &report.rows {
        let status = Report::row_status_text(row);
        if !status.is_empty() {
            assert!(
                page.contains(&format!(">{status}</td>")),
                "{status} in a status cell"
            );
        }
    }
    assert!(
        page.contains("Overall: 35/64 passed (55%), 7 errored"),
        "{page}"
    );
    assert!(page.contains("FAIL (min_rate 0.7)"), "{page}");
}

#[test]
fn the_page_is_self_contained_and_escapes_what_it_shows() {
    let page = html(&fixture(), &History::default());
    for external in ["http://", "https://", "<link", " src=", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
    assert!(page.contains("triage::a|b &#60;c&#62;"), "{page}");
    assert!(!page.contains("<c>"));
}

#[test]
fn failing_runs_are_listed_with_the_doctor_command_for_a_flaky_case() {
    let page = html(&fixture(), &History::default());
    let body = page
        .split("<tbody ")
        .find(|body| body.starts_with("data-id=\"triage::refund please-chatty\""))
        .expect("the flaky case");
    assert!(body.contains("<summary>3 failed</summary>"), "{body}");
    // The template escapes the quotes; a browser shows them as typed.
    assert!(
        body.contains("cargo probtest doctor -p fixture &#39;triage::refund please-chatty&#39;"),
        "{body}"
    );
    // Three messages, three groups of one run each, each run's number once.
    assert_eq!(body.matches("<li class=\"run fail\">").count(), 3, "{body}");
    assert!(
        !body.contains("value="),
        "a list number beside the run's: {body}"
    );
    assert!(
        body.contains("run 8 failed at tests/evals.rs:48:9<pre>Fail in run 8</pre>"),
        "{body}"
    );
    let clean = page
        .split("<tbody ")
        .find(|body| body.starts_with("data-id=\"triage::refund please-Terse\""))
        .expect("the clean case");
    assert!(!clean.contains("<details>"), "{clean}");
}

#[test]
fn identical_failures_are_one_group_with_the_whole_message() {
    let page = html(&fixture(), &History::default());
    let body = page
        .split("<tbody ")
        .find(|body| body.starts_with("data-id=\"triage::a|b &#60;c&#62;\""))
        .expect("the failing case");
    assert_eq!(body.matches("<li ").count(), 1, "{body}");
    let message = WRONG_ANSWER.replace('"', "&#34;");
    assert!(
        body.contains(&format!(
            "<li class=\"run fail\">10 runs (1-10) failed at tests/evals.rs:30:9<pre>{message}</pre></li>"
        )),
        "{body}"
    );
}

#[test]
fn control_characters_in_ids_messages_and_models_are_shown_escaped() {
    use crate::model::tests::{info, record};
    use crate::types::status::Outcome;
    use crate::types::usage::TokenUsage;
    let case = "evil\u{1b}[2J\u{202e}txt";
    let usage = TokenUsage {
        model: "m\u{1b}]0;title\u{7}".into(),
        input_tokens: 1,
        output_tokens: 1,
        cached_input_tokens: 0,
        cost: 0.5,
    };
    let mut failed = record(case, 1, Outcome::Fail, 0.5, vec![usage]);
    failed.message = Some("wrong\n  left: \"\u{1b}[31mred\u{2066}\"\n\tright: \"\u{9b}x\"".into());
    let mut report = Report::build(vec![info(case)], vec![failed], &StatsConfig::default());
    report.warnings.push(format!("{case}: a warning"));
    let page = html(&report, &History::default());
    for raw in ['\u{1b}', '\u{202e}', '\u{2066}', '\u{9b}', '\u{7}'] {
        assert!(!page.contains(raw), "{raw:?} in the page");
    }
    let id = "evil\\u{1b}[2J\\u{202e}txt";
    assert!(
        page.contains(&format!("<td class=\"id\">{id}</td>")),
        "{page}"
    );
    assert!(
        page.contains(&format!("Warning: {id}: a warning")),
        "{page}"
    );
    assert!(page.contains("<td>m\\u{1b}]0;title\\u{7}</td>"), "{page}");
    // A message keeps its lines and tabs.
    assert!(
        page.contains(
            "<pre>wrong\n  left: &#34;\\u{1b}[31mred\\u{2066}&#34;\n\tright: &#34;\\u{9b}x&#34;</pre>"
        ),
        "{page}"
    );
}

#[test]
fn history_draws_a_sparkline_of_the_earlier_sessions_and_this_one() {
    let report = fixture();
    let mut earlier = HistorySession::of("run-0", &report);
    for rate in earlier.rates.values_mut() {
        *rate = 100.0;
    }
    let mut baseline = earlier.clone();
    // Another package's report, matched by row id alone.
    baseline.rates = baseline
        .rates
        .into_keys()
        .map(|mut key| {
            key.package = "elsewhere".to_string();
            (key, 50.0)
        })
        .collect();
    let history = History {
        sessions: vec![earlier.clone(), earlier],
        baseline: Some(baseline),
        ..History::default()
    };
    let page = html(&report, &history);
    assert!(page.contains("history over 3 sessions"), "{page}");
    assert!(
        page.contains("aria-label=\"pass rate over 3 sessions: 100%, 100%, 70%; baseline 50%\""),
        "{page}"
    );
    assert!(
        page.contains("<path class=\"base\" d=\"M0 10H100\"/>"),
        "{page}"
    );
    // Without history there is one point and no line.
    assert!(!html(&report, &History::default()).contains("<polyline"));
}

#[test]
fn a_thousand_case_session_is_under_two_megabytes() {
    let (cases, records) = crate::model::synthetic_records(1_000, 10);
    let report = Report::build(cases, records, &StatsConfig::default());
    let page = html(&report, &History::default());
    assert_eq!(page.matches("<tbody data-id=").count(), 1_000);
    assert!(page.len() < 2_000_000, "{} bytes", page.len());
}

#[test]
fn functions_show_their_estimates_as_the_summary_does() {
    let report = crate::model::analysis::tests::qa();
    let page = html(&report, &History::default());
    let section = page
        .split("<table id=\"functions\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .expect("the functions");
    let terminal = crate::render::summary(&report, &crate::render::Options::default());
    for aggregate in &report.aggregates {
        let estimate = aggregate.estimate.as_ref().expect("an estimate");
        let ci = estimate.ci.as_ref().expect("24 cases are enough");
        let interval = format!("[{}, {}]", pct1(ci.low), pct1(ci.high));
        assert!(section.contains(&interval), "{interval}: {section}");
        // The terminal prints the same numbers.
        assert!(terminal.contains(&interval), "{interval}: {terminal}");
        assert!(section.contains(&format!(">{}</td>", pct1(estimate.estimate))));
    }
}

#[test]
fn comparisons_are_a_forest_plot_on_one_scale() {
    let mut report = fixture();
    report.comparisons = vec![
        crate::model::analysis::tests::compared(12),
        crate::model::analysis::tests::compared(4),
    ];
    let page = html(&report, &History::default());
    let section = page
        .split("<table id=\"comparisons\">")
        .nth(1)
        .and_then(|rest| rest.split("</table>").next())
        .expect("the comparisons");
    assert_eq!(
        section.matches("<svg class=\"forest\"").count(),
        2,
        "{section}"
    );
    // The margin of 0.05 on a scale of 0.2: its line at 50 - 50 * 0.05 / 0.2.
    assert_eq!(section.matches("d=\"M37.5 0V12\"").count(), 2, "{section}");
    assert!(section.contains("model: large vs small"), "{section}");
    assert!(section.contains("+10.0 pp"), "{section}");
    assert!(
        section.contains(">PASS</td>") && section.contains(">UNDECIDED</td>"),
        "{section}"
    );
    // The baseline's comparisons join the plot, on the same scale.
    let mut against = crate::model::analysis::tests::compared(12);
    against.axis = None;
    against.baseline = "baseline".to_string();
    against.arm = "current".to_string();
    report.baseline = Some(crate::model::analysis::BaselineResult {
        path: "old.json".to_string(),
        created: None,
        margin: Some(0.05),
        paired: 12,
        only_current: Vec::new(),
        only_baseline: Vec::new(),
        comparisons: vec![against],
    });
    let page = html(&report, &History::default());
    assert_eq!(page.matches("<svg class=\"forest\"").count(), 3);
    assert!(page.contains(">current vs baseline</td>"), "{page}");
    // Without comparisons, no section.
    assert!(!html(&fixture(), &History::default()).contains("id=\"comparisons\""));
}

#[test]
fn runs_that_never_started_are_on_the_page() {
    use crate::model::not_run::ExpectedBinary;
    use crate::model::tests::{build, info, record};
    use crate::types::status::Outcome;
    let mut report = build(vec![record("a::x", 1, Outcome::Pass, 0.0, Vec::new())]);
    report.count_not_run(&[ExpectedBinary {
        binary: "fixture::evals".into(),
        label: "tests/evals.rs (evals-1a2b)".into(),
        runs: (1..=3)
            .map(|run| (info("a::x"), run))
            .chain((1..=2).map(|run| (info("b::y"), run)))
            .collect(),
    }]);
    let page = html(&report, &History::default());
    assert!(
        page.contains("Overall: 1/1 passed (100%), 4 not run"),
        "{page}"
    );
    assert!(page.contains("Not run: 4 runs in 2 cases"), "{page}");
    assert!(page.contains(">2 not run</td>"), "{page}");
    assert_eq!(page.matches("<tbody data-id=").count(), 2);
}

#[test]
fn the_title_names_the_packages_and_the_minute_not_the_session() {
    let mut report = fixture();
    report.session = Some("run-1-2".to_string());
    let page = html(&report, &History::default());
    assert!(
        page.contains("<title>probtest — fixture — 2026-01-02 03:04 UTC</title>"),
        "{page}"
    );
    for (index, row) in report.rows.iter_mut().enumerate() {
        row.info.package = format!("evals-{}", index % 5);
    }
    report.created = "2026-01-02T03:04:05.25+02:00".to_string();
    let page = html(&report, &History::default());
    assert!(
        page.contains(
            "<title>probtest — evals-0, evals-1 and 3 more — 2026-01-02 03:04 +02:00</title>"
        ),
        "{page}"
    );
}

#[test]
fn the_metrics_column_is_there_only_when_a_metric_was_asked_for() {
    let report = crate::model::analysis::tests::qa();
    assert!(report.stats_config.metrics.is_empty());
    let page = html(&report, &History::default());
    assert!(page.contains("<table id=\"functions\">"), "{page}");
    assert!(!page.contains("metrics (mean)"), "{page}");
    let mut asked = report.clone();
    asked.stats_config.metrics = vec![crate::types::stats::Metric::PassAll(3)];
    assert!(html(&asked, &History::default()).contains("<th>metrics (mean)</th>"));
}
