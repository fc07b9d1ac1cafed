//! `cargo probtest doctor --suite`: what to diagnose, and the overview. The suite runs once, as
//! `cargo test` would; each test that failed is diagnosed, a report row once however many of
//! its run items failed, and so is every row that the report (`--report`, else where each
//! binary writes it) holds as FLAKY, FAIL, ERRORED or ERROR, since a gated row's items pass
//! while its runs fail. The diagnoses share one budget.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use probtest::{Report, Status};

use crate::doctor::cargo::TestBinary;
use crate::doctor::findings::json::DiagnosisJson;
use crate::doctor::runner::{self, Row, Runner};
use crate::doctor::{prior, progress};
use crate::error::Error;

/// A test or a row to diagnose.
pub struct Target {
    /// Its binary.
    pub binary: TestBinary,
    /// The binary's tests.
    pub tests: Vec<String>,
    /// The test item the doctor runs: the test, or one of the row's run items (a failing one).
    pub victim: String,
    /// The row, when the victim is a run item of one.
    pub row: Option<Row>,
    /// Why it is diagnosed: `failed in the suite run`, `FLAKY in target/report.json`.
    pub reason: String,
}

/// Everything the suite mode diagnoses, each test or row once: the tests that failed when the
/// suite ran once, then the rows the report holds as not passing.
pub fn targets(
    binaries: &[TestBinary],
    budget: Duration,
    report: Option<&Path>,
) -> Result<Vec<Target>, Error> {
    let mut targets = Vec::new();
    // A row is one target however many of its run items failed.
    let mut seen: HashSet<(PathBuf, String)> = HashSet::new();
    for (binary, tests, victim) in suite_failures(binaries, budget)? {
        let row = binary.row_of(&victim);
        let name = row.as_ref().map_or(victim.clone(), |row| row.case.clone());
        if seen.insert((binary.path.clone(), name)) {
            targets.push(Target {
                binary,
                tests,
                victim,
                row,
                reason: "failed in the suite run".to_string(),
            });
        }
    }
    for binary in binaries {
        let Some(path) = prior::report_path(binary, report) else {
            continue;
        };
        let Some(rows) = failing_rows(&path, report.is_some())? else {
            continue;
        };
        let mut tests = None;
        for (case, reason) in rows {
            let items = binary.row_items(&case);
            if items.is_empty() || !seen.insert((binary.path.clone(), case.clone())) {
                continue;
            }
            let row = Row { case, items };
            let tests = match &tests {
                Some(tests) => tests,
                None => tests.insert(binary.tests()?),
            };
            let victim = first_failing_item(&row, &path);
            targets.push(Target {
                binary: binary.clone(),
                tests: tests.clone(),
                victim,
                row: Some(row),
                reason: format!("{reason} in {}", path.display()),
            });
        }
    }
    Ok(targets)
}

/// The rows of the report at `path` that did not pass, each with its status word (`FLAKY`),
/// in the report's order. A report that is not there is `None` unless it was `named`.
fn failing_rows(path: &Path, named: bool) -> Result<Option<Vec<(String, String)>>, Error> {
    if !named && !path.exists() {
        return Ok(None);
    }
    let report: Report = crate::report::load_json(path)?;
    Ok(Some(
        report
            .rows
            .iter()
            .filter(|row| row.status != Status::Pass)
            .map(|row| {
                let word = match row.status {
                    Status::Flaky => "FLAKY",
                    Status::Fail => "FAIL",
                    Status::Errored => "ERRORED",
                    _ => "ERROR",
                };
                (row.info.case.clone(), word.to_string())
            })
            .collect(),
    ))
}

/// The run item of `row` whose run failed first in the report, else its first.
fn first_failing_item(row: &Row, report: &Path) -> String {
    let failed =
        prior::prior_of(row, report).and_then(|prior| prior.failing_runs.iter().min().copied());
    failed
        .and_then(|run| {
            row.items
                .iter()
                .find(|(_, item_run)| u64::from(*item_run) == run)
        })
        .or(row.items.first())
        .map(|(name, _)| name.clone())
        .unwrap_or_default()
}

/// The tests that failed when each binary ran its tests once, as `cargo test` would (all of
/// them, libtest's default threads), each with its binary and its binary's tests. The runs are
/// the doctor's: in its scratch directory, read from what the tests cannot forge.
fn suite_failures(
    binaries: &[TestBinary],
    budget: Duration,
) -> Result<Vec<(TestBinary, Vec<String>, String)>, Error> {
    let mut failed = Vec::new();
    let deadline = Instant::now() + budget;
    for binary in binaries {
        let tests = binary.tests()?;
        let Some(first) = tests.first() else {
            continue;
        };
        let setup = runner::Setup {
            binary: binary.clone(),
            victim: first.clone(),
            preload: None,
            row: None,
            timeout: Some(budget),
            deadline,
        };
        let runner = Runner::new(setup).map_err(|error| {
            Error::about(
                std::env::temp_dir().display(),
                format!("cannot make the doctor's scratch directory ({error})"),
            )
        })?;
        let names = runner
            .failures_of_suite()
            .map_err(|problem| Error::about(binary.path.display(), problem))?;
        for name in names {
            if tests.contains(&name) {
                failed.push((binary.clone(), tests.clone(), name));
            }
        }
    }
    let count = failed.len();
    progress(&format!(
        "the suite ran: {count} test(s) failed{}",
        if count == 0 {
            ""
        } else {
            "; each is diagnosed"
        }
    ));
    Ok(failed)
}

/// The share of what is left of the budget for the next of `left` diagnoses.
pub fn share(deadline: Instant, left: usize) -> Duration {
    let remaining = deadline.saturating_duration_since(Instant::now());
    remaining / u32::try_from(left.max(1)).unwrap_or(u32::MAX)
}

const WIDTH: usize = 74;

/// The overview printed before the diagnoses: a line per test or row, its verdict and
/// headline, on one screen.
pub fn overview(diagnoses: &[DiagnosisJson], seconds: f64) -> String {
    let made = diagnoses
        .iter()
        .filter(|diagnosis| diagnosis.verdict.starts_with("flaky-"))
        .count();
    let title = format!(
        "━━━ probtest doctor --suite: {} diagnosed, {made} flaky, in {seconds:.1}s ",
        diagnoses.len()
    );
    let fill = WIDTH.saturating_sub(title.chars().count());
    let mut out = format!("{title}{}\n", "━".repeat(fill));
    if diagnoses.is_empty() {
        out.push_str(" Nothing to diagnose: no test failed, and no report row is flaky.\n");
    }
    for diagnosis in diagnoses {
        let name = match &diagnosis.row {
            Some(row) => format!("row {row}"),
            None => diagnosis.test.clone(),
        };
        let line = format!(" {:<22} {}", diagnosis.verdict, clip(&name, 48));
        out.push_str(&line);
        out.push('\n');
        out.push_str(&format!("   {}\n", clip(&diagnosis.headline, WIDTH - 3)));
    }
    out.push_str(&"━".repeat(WIDTH));
    out.push_str("\n\n");
    out
}

/// `text` cut to `width` characters, with an ellipsis when cut.
fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let cut: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_by_what_is_left() {
        let deadline = Instant::now() + Duration::from_secs(90);
        let third = share(deadline, 3);
        assert!(third <= Duration::from_secs(30) && third > Duration::from_secs(29));
        assert_eq!(share(Instant::now(), 2), Duration::ZERO);
    }

    #[test]
    fn long_names_are_clipped_on_one_line() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
