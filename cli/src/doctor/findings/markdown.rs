//! The doctor's diagnoses as Markdown, for a CI job's summary page (`GITHUB_STEP_SUMMARY`) or
//! any file (`--markdown PATH`): an overview table, then one section per diagnosed test or
//! row with its verdict, the reason in one line, and the repro. It reads the doctor's JSON
//! shape, so that the page says what `--json` says.

use std::fmt::Write;

use probtest::__cli::shown;

use crate::doctor::findings::json::DiagnosisJson;
use crate::export::markdown::{code, escape as text};

/// The Markdown of `diagnoses`, which took `seconds` in all.
pub fn render(diagnoses: &[DiagnosisJson], seconds: f64) -> String {
    let mut out = String::from("## probtest doctor\n\n");
    if diagnoses.is_empty() {
        out.push_str("Nothing to diagnose: no test failed.\n");
        return out;
    }
    let _ = writeln!(
        out,
        "{} in {:.0} s: {}.\n",
        counted(diagnoses.len(), "diagnosis", "diagnoses"),
        seconds,
        tally(diagnoses)
    );
    out.push_str("| test | verdict | why |\n|---|---|---|\n");
    for diagnosis in diagnoses {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            cell(&code(name(diagnosis))),
            cell(&code(&diagnosis.verdict)),
            cell(&text(&diagnosis.headline))
        );
    }
    for diagnosis in diagnoses {
        section(diagnosis, &mut out);
    }
    out
}

/// One diagnosis's section.
fn section(diagnosis: &DiagnosisJson, out: &mut String) {
    let _ = writeln!(
        out,
        "\n### {}: {}\n",
        code(name(diagnosis)),
        code(&diagnosis.verdict)
    );
    if diagnosis.row.is_some() {
        let _ = writeln!(
            out,
            "Diagnosed through its run item {}.\n",
            code(&diagnosis.test)
        );
    }
    let claim = diagnosis
        .claim
        .as_deref()
        .map_or(String::new(), |claim| format!(" ({claim})"));
    let _ = writeln!(out, "**{}**{claim}\n", text(&diagnosis.headline));
    let _ = writeln!(out, "{}\n", text(&diagnosis.explanation));
    if let Some(culprit) = &diagnosis.culprit {
        let _ = writeln!(out, "Culprit: {}\n", code(culprit));
    }
    if let Some(repro) = &diagnosis.repro {
        match repro.attempts {
            Some(attempts) => {
                let _ = writeln!(
                    out,
                    "Repro (stress: runs until it fails, up to {attempts} times):\n"
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "Repro (fails {}/{}, at least {:.0}% of runs at 95% confidence):\n",
                    repro.failed,
                    repro.runs,
                    repro.lower_bound * 100.0
                );
            }
        }
        for command in repro.command.iter().chain(&repro.plain) {
            let _ = writeln!(out, "```sh\n{}\n```\n", shown(command));
        }
        if let Some(attribute) = &repro.attribute {
            let _ = writeln!(
                out,
                "Paste above the test to fail it on every run until it is fixed:\n\n```rust\n{}\n```\n",
                shown(attribute)
            );
        }
    }
    for warning in &diagnosis.warnings {
        let _ = writeln!(out, "> Warning: {}\n", text(warning));
    }
}

/// What a diagnosis is of: the row, else the test.
fn name(diagnosis: &DiagnosisJson) -> &str {
    diagnosis.row.as_deref().unwrap_or(&diagnosis.test)
}

/// `flaky-time 2, not-flaky 1`, verdicts in first-seen order.
fn tally(diagnoses: &[DiagnosisJson]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for diagnosis in diagnoses {
        match counts
            .iter_mut()
            .find(|(verdict, _)| *verdict == diagnosis.verdict)
        {
            Some((_, count)) => *count += 1,
            None => counts.push((&diagnosis.verdict, 1)),
        }
    }
    counts
        .iter()
        .map(|(verdict, count)| format!("{verdict} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn counted(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// A table cell of Markdown `markdown`, whose `|` cannot end the cell (inside a code span
/// too, where GitHub's tables still split at a bare one).
fn cell(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut escaped = false;
    for c in markdown.chars() {
        if c == '|' && !escaped {
            out.push('\\');
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::findings::json::{ReproJson, StatsJson, FORMAT, VERSION};

    fn diagnosis(test: &str, verdict: &str) -> DiagnosisJson {
        DiagnosisJson {
            format: FORMAT.to_string(),
            version: VERSION,
            test: test.to_string(),
            row: None,
            verdict: verdict.to_string(),
            claim: None,
            headline: "depends on the order".to_string(),
            explanation: "It fails after a_polluter.".to_string(),
            evidence: Vec::new(),
            repro: None,
            signatures: Vec::new(),
            also_found: Vec::new(),
            culprit: None,
            warnings: Vec::new(),
            stats: StatsJson {
                runs: 10,
                seconds: 1.0,
                baseline_runs: 10,
                baseline_failed: 1,
                p_value: None,
            },
            split: None,
        }
    }

    #[test]
    fn an_overview_then_a_section_per_diagnosis() {
        let mut order = diagnosis("b_order_victim", "flaky-order");
        order.culprit = Some("a_polluter".to_string());
        order.repro = Some(ReproJson {
            axis: "order".to_string(),
            value: "after a_polluter".to_string(),
            command: Some("cargo probtest repro pd1:xyz".to_string()),
            plain: Some("cargo test --test order -- --exact a_polluter b_order_victim".to_string()),
            attribute: None,
            runs: 10,
            failed: 10,
            lower_bound: 0.741,
            attempts: None,
        });
        let mut row = diagnosis("triage::bench::refund::run03", "not-flaky");
        row.row = Some("triage::refund".to_string());
        let page = render(&[order, row], 12.4);
        assert_eq!(
            page,
            "## probtest doctor\n\n\
             2 diagnoses in 12 s: flaky-order 1, not-flaky 1.\n\n\
             | test | verdict | why |\n|---|---|---|\n\
             | `b_order_victim` | `flaky-order` | depends on the order |\n\
             | `triage::refund` | `not-flaky` | depends on the order |\n\
             \n### `b_order_victim`: `flaky-order`\n\n\
             **depends on the order**\n\n\
             It fails after a_polluter.\n\n\
             Culprit: `a_polluter`\n\n\
             Repro (fails 10/10, at least 74% of runs at 95% confidence):\n\n\
             ```sh\ncargo probtest repro pd1:xyz\n```\n\n\
             ```sh\ncargo test --test order -- --exact a_polluter b_order_victim\n```\n\n\
             \n### `triage::refund`: `not-flaky`\n\n\
             Diagnosed through its run item `triage::bench::refund::run03`.\n\n\
             **depends on the order**\n\n\
             It fails after a_polluter.\n\n"
        );
    }

    #[test]
    fn a_repro_an_attribute_carries_shows_its_line_to_paste() {
        let mut time = diagnosis("invoice_label", "flaky-time");
        time.repro = Some(ReproJson {
            axis: "time".to_string(),
            value: "clock at 2026-03-10 23:56:40.000 UTC".to_string(),
            command: Some("cargo probtest repro pd1:abc".to_string()),
            plain: None,
            attribute: Some("#[probtest::repro(\"pd1:abc\")]".to_string()),
            runs: 5,
            failed: 5,
            lower_bound: 0.549,
            attempts: None,
        });
        let page = render(&[time], 3.0);
        assert!(
            page.contains(
                "```sh\ncargo probtest repro pd1:abc\n```\n\n\
                 Paste above the test to fail it on every run until it is fixed:\n\n\
                 ```rust\n#[probtest::repro(\"pd1:abc\")]\n```\n"
            ),
            "{page}"
        );
    }

    #[test]
    fn what_a_test_wrote_cannot_break_the_page() {
        let mut hostile = diagnosis("a`b|c", "flaky-entropy");
        hostile.headline = "x | y\n## injected\u{202e}".to_string();
        let page = render(&[hostile], 1.0);
        assert!(
            page.contains("| ``a`b\\|c`` | `flaky-entropy` | x \\| y \\#\\# injected\\\\u{202e} |"),
            "{page}"
        );
        assert!(!page.contains("\n## injected"), "{page}");
        assert_eq!(
            render(&[], 0.0),
            "## probtest doctor\n\nNothing to diagnose: no test failed.\n"
        );
    }
}
