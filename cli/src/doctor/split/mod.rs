//! Model or harness: a probtest row's failures split between the model's answers and the code
//! around them. The row's runs record their answers with the cassette (`probtest::cached`,
//! `PROB_CACHE=record`) into a directory of the doctor's own; each failing run's answers are
//! replayed: a run that fails every replay failed by its answers (the model's), one that
//! passes a replay failed by the harness; a passing run's answers are replayed too, and a
//! failure there is the harness flaking by itself. A harness that flakes is then diagnosed
//! with the axes, under replay, as any flaky test is. A row whose runs record nothing (no
//! `cached` call) is diagnosed as before; a replay the cassette refuses (a key not recorded, a
//! value that no longer reads) is reported as untrusted, and no verdict is drawn from it.
//!
//! `answers` reads what each run recorded and says a failure as the answer it judged.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use probtest_settings as table;

use crate::doctor::axes::Perturbation;
use crate::doctor::diagnose::{Diagnosis, Doctor, Evidence, Prior, Settings};
use crate::doctor::findings::json::{self, DiagnosisJson};
use crate::doctor::fingerprint::Ending;
use crate::doctor::prior::recorded_fingerprint;
use crate::doctor::runner::{Plan, RunRecord, Runner};

mod answers;

/// The most recordings of the row made to see a failure.
const RECORDINGS: usize = 3;

/// The fewest replays of one run.
const FEWEST_REPLAYS: usize = 10;

/// A failing run whose every replay failed: its failure is carried by its answers.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The run's number in its row.
    pub run: u32,
    /// The failure as the answer it judged ("the model answered `Shipping` where the test
    /// expects `Refund`").
    pub said: String,
    /// What the run recorded: each key with its value as JSON.
    pub values: Vec<(String, String)>,
}

/// How a row's failures split between its answers and its harness.
#[derive(Clone, Debug, PartialEq)]
pub struct Split {
    /// The recorded runs, and how many failed.
    pub recorded: (u64, u64),
    /// The most replays of one run.
    pub replays: u64,
    /// The failures carried by their answers.
    pub model: Vec<Answer>,
    /// The failing runs that passed a replay of their own answers: the harness's.
    pub harness: Vec<u32>,
    /// The passing run replayed: its number, replays and how many failed.
    pub passing: Option<(u32, u64, u64)>,
    /// The harness's own diagnosis's verdict (`flaky-time`), when the harness flakes.
    pub harness_verdict: Option<String>,
    /// Why the replay could not be trusted; then nothing is concluded from it.
    pub problem: Option<String>,
    /// Where the answers are kept, for a repro that replays them.
    pub cassette: PathBuf,
}

impl Split {
    /// Whether the harness failed given answers that pass.
    pub fn harness_flakes(&self) -> bool {
        !self.harness.is_empty() || self.passing.is_some_and(|(_, _, failed)| failed > 0)
    }

    /// `model`, `harness` or `both`; `None` when the replay could not be trusted or nothing
    /// failed, recorded or replayed.
    pub fn verdict(&self) -> Option<&'static str> {
        if self.problem.is_some() {
            return None;
        }
        match (!self.model.is_empty(), self.harness_flakes()) {
            (true, false) => Some("model"),
            (false, true) => Some("harness"),
            (true, true) => Some("both"),
            (false, false) => None,
        }
    }

    /// The harness's axis, from its diagnosis's verdict (`time` for `flaky-time`).
    pub fn axis(&self) -> Option<&str> {
        self.harness_verdict
            .as_deref()
            .and_then(|verdict| verdict.strip_prefix("flaky-"))
    }

    /// The tag a report shows beside the row: `model`, `harness: time`, `model + harness:
    /// time`.
    pub fn tag(&self) -> Option<String> {
        let harness = match self.axis() {
            Some(axis) => format!("harness: {axis}"),
            None => "harness".to_string(),
        };
        Some(match self.verdict()? {
            "model" => "model".to_string(),
            "harness" => harness,
            _ => format!("model + {harness}"),
        })
    }

    /// The split in one sentence: "5 of 6 failures carried by answers; 1 is the harness's:
    /// flaky-time".
    pub fn sentence(&self) -> String {
        if let Some(problem) = &self.problem {
            return format!("The replay of the recorded answers could not be trusted, so nothing is concluded from it: {problem}");
        }
        let (runs, failed) = self.recorded;
        if failed == 0 && !self.harness_flakes() {
            return format!("None of the {runs} recorded runs failed, and a passing run's answers passed every replay: nothing to split");
        }
        let model = self.model.len();
        let harness = self.harness.len();
        let what = self
            .harness_verdict
            .as_deref()
            .map_or(String::new(), |verdict| format!(": {verdict}"));
        let mut sentence = format!(
            "{model} of {failed} failure{} carried by answers",
            if failed == 1 { "" } else { "s" }
        );
        if harness > 0 {
            sentence.push_str(&format!(
                "; {harness} {} the harness's{what}",
                if harness == 1 { "is" } else { "are" }
            ));
        } else if self.harness_flakes() {
            let (run, runs, failed) = self.passing.unwrap_or_default();
            sentence.push_str(&format!(
                "; the harness flakes by itself (run {run}'s passing answers failed {failed} of {runs} replays){what}"
            ));
        }
        sentence
    }
}

/// The variables of a run that records into or replays from `cassette`.
fn cassette_env(mode: &str, cassette: &Path) -> Vec<(&'static str, OsString)> {
    vec![
        (table::CACHE.variable, OsString::from(mode)),
        (table::CACHE_DIR.variable, cassette.as_os_str().to_owned()),
    ]
}

/// The doctor's cassette of a row: under the target directory, so that a repro can replay
/// it after the doctor is gone.
fn cassette_of(runner: &Runner, case: &str) -> PathBuf {
    let name: String = case
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    runner
        .binary
        .target_dir
        .join("probtest")
        .join("doctor")
        .join("cassettes")
        .join(name)
}

/// The variables a repro of a harness diagnosis needs before its command: the cassette it
/// replays.
pub fn replay_prefix(split: &Split) -> String {
    format!(
        "{}=replay {}={} ",
        table::CACHE.variable,
        table::CACHE_DIR.variable,
        shell_word(&split.cassette.display().to_string())
    )
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Replays of `item` (a run item of the runner's row), up to `most`, a core's worth at once;
/// stops after a batch with a pass when `until_pass`. Each replay's ending and message.
fn replay(
    runner: &Runner,
    item: &str,
    most: usize,
    until_pass: bool,
) -> Vec<(Ending, Option<String>)> {
    let plan = Plan::alone(item, Perturbation::none());
    let mut done = Vec::new();
    while done.len() < most {
        let batch = runner.cpus().min(most - done.len()).max(1);
        let next = AtomicUsize::new(0);
        let endings = Mutex::new(Vec::with_capacity(batch));
        std::thread::scope(|scope| {
            for _ in 0..batch {
                scope.spawn(|| {
                    while next.fetch_add(1, Ordering::Relaxed) < batch {
                        let ending = runner.run_item(item, &plan);
                        endings
                            .lock()
                            .unwrap_or_else(|poison| poison.into_inner())
                            .push(ending);
                    }
                });
            }
        });
        let endings = endings
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        let passed = endings.iter().any(|(ending, _)| *ending == Ending::Pass);
        let stopped = endings.iter().any(|(ending, _)| *ending == Ending::NotRun);
        done.extend(endings);
        if stopped || (until_pass && passed) {
            break;
        }
    }
    done
}

/// Why a set of replays says nothing of the answers, if it does not: the cassette refused one
/// (its line names the key and the file), or the budget stopped one.
fn untrusted(replays: &[(Ending, Option<String>)]) -> Option<String> {
    if let Some(message) = replays
        .iter()
        .filter_map(|(_, message)| message.as_deref())
        .find(|message| answers::refused(message))
    {
        return Some(message.lines().next().unwrap_or_default().to_string());
    }
    replays
        .iter()
        .any(|(ending, _)| *ending == Ending::NotRun)
        .then(|| "the budget ran out before the replays ended".to_string())
}

/// Diagnoses the runner's victim; for a probtest row whose model calls go through
/// `probtest::cached`, with its failures split between the answers and the harness first.
/// The runner's victim becomes the run item the harness was diagnosed through, when it was.
pub fn diagnose(
    runner: &mut Runner,
    settings: &Settings,
    tests: &[String],
    mut warnings: Vec<String>,
) -> (Diagnosis, Option<Split>) {
    let started = Instant::now();
    let Some(row) = runner.row.clone() else {
        return (
            Doctor::new(runner, settings, tests, warnings).diagnose(),
            None,
        );
    };
    let cassette = cassette_of(runner, &row.case);
    let _ = std::fs::remove_dir_all(&cassette);
    runner.set_env(cassette_env("record", &cassette));
    progress(&format!(
        "recording the answers of {}'s {} runs",
        row.case,
        row.items.len()
    ));
    // A row that fails rarely may pass every run of one recording: a few more are cheap, one
    // process each, and a failure is what there is to split.
    let mut recording = runner.run_row();
    for _ in 1..RECORDINGS {
        let failed = recording.as_ref().is_ok_and(|records| {
            records
                .iter()
                .any(|record| matches!(record.outcome.as_str(), "fail" | "error"))
        });
        if failed || recording.is_err() || runner.out_of_time() {
            break;
        }
        progress("no run failed: recording the row again");
        let _ = std::fs::remove_dir_all(&cassette);
        recording = runner.run_row();
    }
    let records = match recording {
        Ok(records) => records,
        Err(why) => {
            runner.set_env(Vec::new());
            warnings.push(format!(
                "the row's answers could not be recorded to split its failures: {why}"
            ));
            return (
                Doctor::new(runner, settings, tests, warnings).diagnose(),
                None,
            );
        }
    };
    let recorded = answers::recorded(&cassette);
    if recorded.is_empty() {
        // No `cached` call: the runs recorded nothing to replay.
        runner.set_env(Vec::new());
        let _ = std::fs::remove_dir_all(&cassette);
        return (
            Doctor::new(runner, settings, tests, warnings).diagnose(),
            None,
        );
    }
    runner.set_env(cassette_env("replay", &cassette));
    let item_of = |run: u32| {
        row.items
            .iter()
            .find(|(_, number)| *number == run)
            .map(|(name, _)| name.clone())
    };
    let failing: Vec<&RunRecord> = records
        .iter()
        .filter(|record| matches!(record.outcome.as_str(), "fail" | "error"))
        .collect();
    // At least ten replays: a harness that fails 40% of its runs fails ten in a row once in
    // ten thousand, and would then pass for an answer's failure.
    let runs = settings.runs.max(FEWEST_REPLAYS);
    let mut split = Split {
        recorded: (records.len() as u64, failing.len() as u64),
        replays: runs as u64,
        model: Vec::new(),
        harness: Vec::new(),
        passing: None,
        harness_verdict: None,
        problem: None,
        cassette: cassette.clone(),
    };
    let mut evidence = vec![Evidence {
        label: format!("record: the row's {} runs, answers kept", records.len()),
        runs: records.len() as u64,
        failed: failing.len() as u64,
        note: "one process, as cargo test runs it".into(),
    }];
    progress(&format!(
        "{} of {} runs failed; replaying their answers",
        failing.len(),
        records.len()
    ));
    let (mut replayed, mut replay_failed) = (0, 0);
    // Replays of answers that pass (a harness failure's, a passing run's): the harness's rate.
    let mut harness_replays = (0, 0);
    for record in &failing {
        let Some(item) = item_of(record.run) else {
            continue;
        };
        let replays = replay(runner, &item, runs, true);
        replayed += replays.len() as u64;
        replay_failed += replays.iter().filter(|(ending, _)| ending.failed()).count() as u64;
        if let Some(problem) = untrusted(&replays) {
            split.problem = Some(problem);
            break;
        }
        if replays.iter().any(|(ending, _)| *ending == Ending::Pass) {
            harness_replays.0 += replays.len() as u64;
            harness_replays.1 +=
                replays.iter().filter(|(ending, _)| ending.failed()).count() as u64;
        }
        if replays.iter().all(|(ending, _)| ending.failed()) {
            split.model.push(Answer {
                run: record.run,
                said: answers::phrase(record.message.as_deref().unwrap_or_default()),
                values: recorded.get(&record.run).cloned().unwrap_or_default(),
            });
        } else {
            split.harness.push(record.run);
        }
    }
    if !failing.is_empty() {
        evidence.push(Evidence {
            label: format!("replay: each failing run's answers, up to {runs} times"),
            runs: replayed,
            failed: replay_failed,
            note: format!(
                "{} carried by answers, {} not",
                split.model.len(),
                split.harness.len()
            ),
        });
    }
    let pass = records.iter().find(|record| record.outcome == "pass");
    if let (None, Some(pass)) = (&split.problem, pass) {
        if let Some(item) = item_of(pass.run) {
            let replays = replay(runner, &item, runs, false);
            let failed = replays.iter().filter(|(ending, _)| ending.failed()).count() as u64;
            split.problem = untrusted(&replays);
            split.passing = Some((pass.run, replays.len() as u64, failed));
            harness_replays.0 += replays.len() as u64;
            harness_replays.1 += failed;
            evidence.push(Evidence {
                label: format!("replay: run {}'s answers (it passed)", pass.run),
                runs: replays.len() as u64,
                failed,
                note: if failed == 0 {
                    "✓ harness deterministic given the answers".into()
                } else {
                    "✗ the harness flakes by itself".into()
                },
            });
        }
    }
    if let Some(problem) = &split.problem {
        // What the replay said is no evidence: the row is diagnosed without it.
        runner.set_env(Vec::new());
        warnings.push(format!(
            "the replay of the recorded answers could not be trusted, so the failures are not split: {problem}"
        ));
        let diagnosis = Doctor::new(runner, settings, tests, warnings).diagnose();
        return (diagnosis, Some(split));
    }
    match split.verdict() {
        None => {
            // Nothing failed, recorded or replayed: nothing to split.
            runner.set_env(Vec::new());
            let diagnosis = Doctor::new(runner, settings, tests, warnings).diagnose();
            (diagnosis, Some(split))
        }
        Some("model") => {
            let diagnosis = model_diagnosis(&split, evidence, warnings);
            (diagnosis, Some(split))
        }
        Some(_) => {
            let victim = split
                .harness
                .first()
                .or(split.passing.as_ref().map(|(run, _, _)| run))
                .and_then(|run| item_of(*run))
                .unwrap_or_else(|| runner.victim.clone());
            progress(&format!(
                "the harness fails given answers that pass: diagnosing it through {victim}, its answers replayed"
            ));
            runner.victim = victim;
            let harness_settings = Settings {
                runs: settings.runs,
                axes: settings.axes.clone(),
                budget: settings.budget.saturating_sub(started.elapsed()),
                // The report's rate is the model's and the harness's together: the harness's
                // own is what its replays showed.
                prior: Some(harness_prior(&split, &records, harness_replays)),
            };
            let mut diagnosis = Doctor::new(runner, &harness_settings, tests, warnings).diagnose();
            split.harness_verdict = Some(diagnosis.verdict.clone());
            for row in &mut diagnosis.evidence {
                // Its baseline was sized from the replays, not from the user's report.
                row.note = row.note.replace("the report's", "the replays'");
            }
            diagnosis.explanation = format!(
                "{}. Under replay of its recorded answers (no model call): {}",
                split.sentence(),
                diagnosis.explanation
            );
            evidence.append(&mut diagnosis.evidence);
            diagnosis.evidence = evidence;
            (diagnosis, Some(split))
        }
    }
}

/// What the replays showed of the harness, as the evidence a diagnosis of it starts from: its
/// rate given answers that pass (which sizes its baseline), and how its failures read.
fn harness_prior(split: &Split, records: &[RunRecord], (runs, failed): (u64, u64)) -> Prior {
    let harness: Vec<&RunRecord> = records
        .iter()
        .filter(|record| split.harness.contains(&record.run))
        .collect();
    Prior {
        report: "the replays".to_string(),
        runs,
        failed,
        failing_runs: harness.iter().map(|record| u64::from(record.run)).collect(),
        fingerprints: harness
            .iter()
            .map(|record| recorded_fingerprint(&record.outcome, record.message.as_deref()))
            .collect(),
    }
}

/// The diagnosis of a row whose every failure its answers carry.
fn model_diagnosis(split: &Split, evidence: Vec<Evidence>, warnings: Vec<String>) -> Diagnosis {
    let (runs, failed) = split.recorded;
    let (pass_run, pass_replays, _) = split.passing.unwrap_or_default();
    let passing = if split.passing.is_some() {
        format!(
            " and run {pass_run}'s passing answers passed {pass_replays}/{pass_replays}: the harness is deterministic given the answers"
        )
    } else {
        String::new()
    };
    Diagnosis {
        verdict: "flaky-model".into(),
        claim: Some("observed"),
        headline: "the failures are the model's answers".into(),
        explanation: format!(
            "{}: {} of {runs} failed every replay of its own recorded answers ({} replays each, no model call){passing}. The row's variation is the model's, which its pass rate and gate measure; the answers that failed are listed under ANSWERS.",
            split.sentence(),
            if failed == 1 {
                "the one failing run".to_string()
            } else {
                format!("each of the {failed} failing runs")
            },
            split.replays
        ),
        evidence,
        reproduction: None,
        culprit: None,
        warnings,
        baseline: split.recorded,
        p_value: None,
        also_found: Vec::new(),
        signatures: Vec::new(),
    }
}

/// Saves a row's diagnosis in the doctor's file beside the report at `report`
/// (`evals.doctor.json` beside `evals.json`), replacing the row's earlier one and keeping the
/// other rows', so that `cargo probtest report` shows its split beside the row. A diagnosis of
/// a plain test, or of a row the doctor could not split, is not saved; a file that cannot be
/// written is said in one line, and the diagnosis stands.
pub fn save_beside(report: &Path, json: &DiagnosisJson) {
    let (Some(row), Some(_)) = (&json.row, &json.split) else {
        return;
    };
    let path = probtest::__cli::doctor_file_of(report);
    let mut diagnoses: Vec<DiagnosisJson> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| json::read(&text).ok())
        .unwrap_or_default();
    diagnoses.retain(|earlier| earlier.row.as_ref() != Some(row));
    diagnoses.push(json.clone());
    let text = json::write(&json::SuiteJson {
        format: json::FORMAT.to_string(),
        version: json::VERSION,
        diagnoses,
    });
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, text));
    match written {
        Ok(()) => progress(&format!(
            "the split of {row} is saved in {}",
            path.display()
        )),
        Err(error) => progress(&format!(
            "{}: cannot save the diagnosis beside the report ({error})",
            path.display()
        )),
    }
}

fn progress(text: &str) {
    crate::doctor::progress(text);
}
