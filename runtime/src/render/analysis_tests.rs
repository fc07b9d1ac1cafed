//! The analysis' terminal text checked against pytest-probability's on the same results.

use crate::model::analysis::tests::{compared, qa};

#[test]
fn the_summary_prints_the_peers_lines() {
    let text = crate::render::summary(&qa(), &crate::render::Options::default());
    // pytest-probability's _aggregate_lines on the same aggregate.
    assert!(
        text.contains(
            "\n  qa  N=24 inputs × k=10  46.2%  [33.3%, 59.2%]  ρ=0.38\n      runs ×2 → interval −4%  ·  inputs ×2 → −29%\n"
        ),
        "{text}"
    );
    // One function: the session's line would repeat it.
    assert!(!text.contains("Overall  N="), "{text}");
}

#[test]
fn comparison_lines_are_the_peers() {
    let lines: Vec<String> = crate::render::compare::comparison_lines(&[compared(4)], |c| {
        format!("{}[model]", c.function)
    })
    .into_iter()
    .map(|(line, _)| line)
    .collect();
    // pytest-probability's _comparison_lines on the same pairs: no interval with 4 pairs, so a
    // line per input under the comparison. (The peer prints an input whose Fisher p is 1 in
    // exact arithmetic as 0.99 when its sum rounds below 1; those lines are left out here.)
    assert_eq!(
        lines[0],
        "  triage[model]  large − small  +7.5 pp  p=0.50  4 paired  ≥−5 pp  UNDECIDED"
    );
    assert_eq!(lines[3], "      2  7/10 vs 5/10  +20 pp [−20, +53]  p=0.65");
    assert_eq!(lines.len(), 5);
}

#[test]
fn a_function_over_cases_that_stopped_early_is_a_note_and_its_reading_says_why() {
    let mut report = qa();
    for row in report.rows.iter_mut().take(2) {
        row.stopped = Some(crate::model::stops::Stop::default());
    }
    report.stats_config.stop = crate::types::stats::stopping::StopMode::Curtail;
    report.analyze();
    let text = crate::render::summary(&report, &crate::render::Options::default());
    // pytest-probability's _aggregate_lines for an aggregate whose interval suppress_stopped
    // took away.
    assert!(
        text.contains("\n  qa  N=24 inputs × k=10  interval hidden: 2 cases stopped early\n"),
        "{text}"
    );
    let (aggregate, estimate) = crate::render::analysis::shown(&report)[0];
    let reading = crate::render::analysis::aggregate_reading(&report, aggregate, estimate);
    assert!(
        reading.contains("No interval is shown: 2 of its inputs stopped early"),
        "{reading}"
    );
}
