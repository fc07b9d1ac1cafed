//! The doctor's findings as it reports them, from one [`Findings`]: the terminal text (header,
//! DIAGNOSIS, EVIDENCE, REPRO, after the seed's anatomy), the JSON (`json`: `probtest-doctor`,
//! version 1), and Markdown for CI pages (`markdown`).

pub mod json;
pub mod markdown;

use crate::doctor::diagnose::Diagnosis;
use crate::doctor::split::Split;
use json::{DiagnosisJson, EvidenceJson, LatentJson, ReproJson, SignatureJson, StatsJson};

/// A diagnosis with what the report says around it.
pub struct Findings<'a> {
    pub test: &'a str,
    /// The report row the test is a run item of, if it is one.
    pub row: Option<&'a str>,
    pub diagnosis: &'a Diagnosis,
    /// `rustc --version`, when known.
    pub rustc: Option<String>,
    pub runs: u64,
    pub seconds: f64,
    /// The command that reproduces the failure, and a plain `cargo test` one where there is one.
    pub command: Option<String>,
    pub plain: Option<String>,
    /// The `#[probtest::repro("pd1:...")]` line to paste above the test, where an attribute can
    /// carry the repro (not the order, parallel and scheduling axes).
    pub attribute: Option<String>,
    /// A row's failures split between its answers and its harness, when they were.
    pub split: Option<&'a Split>,
}

const WIDTH: usize = 74;

impl Findings<'_> {
    /// The terminal text.
    pub fn text(&self) -> String {
        let diagnosis = self.diagnosis;
        let mut out = String::new();
        out.push_str(&format!("━━━ probtest doctor {}\n", "━".repeat(WIDTH - 20)));
        match self.row {
            Some(row) => out.push_str(&format!(" row {row} (through {})\n", self.test)),
            None => out.push_str(&format!(" {}\n", self.test)),
        }
        let mut header = Vec::new();
        if let Some(rustc) = &self.rustc {
            header.push(rustc.clone());
        }
        header.push(std::env::consts::OS.to_string());
        header.push(format!("{} runs", self.runs));
        header.push(format!("{:.1}s", self.seconds));
        out.push_str(&format!(" {}\n\n", header.join(" · ")));
        let claim = diagnosis
            .claim
            .map_or(String::new(), |claim| format!(" [{claim}]"));
        out.push_str(&format!(
            " DIAGNOSIS  {}: {}{claim}\n",
            diagnosis.verdict, diagnosis.headline
        ));
        for line in wrap(&diagnosis.explanation, WIDTH - 3) {
            out.push_str(&format!("   {line}\n"));
        }
        if let Some(culprit) = &diagnosis.culprit {
            out.push_str(&format!("   Culprit: {culprit}\n"));
        }
        out.push_str(&format!(
            "\n {:<56}{:>6}{:>8}\n",
            "EVIDENCE", "runs", "failed"
        ));
        for row in &diagnosis.evidence {
            let label = if row.label.chars().count() > 54 {
                let cut: String = row.label.chars().take(53).collect();
                format!("{cut}…")
            } else {
                row.label.clone()
            };
            let note = if row.note.is_empty() {
                String::new()
            } else {
                format!("   {}", row.note)
            };
            out.push_str(&format!(
                "   {label:<54}{:>6}{:>8}{note}\n",
                row.runs, row.failed
            ));
        }
        if let Some(split) = self.split {
            out.push_str(&split_text(split));
        }
        if !diagnosis.signatures.is_empty() {
            out.push_str(&format!(
                "\n FAILS {} WAYS (unperturbed runs, by fingerprint)\n",
                diagnosis.signatures.len()
            ));
            for signature in &diagnosis.signatures {
                let line = format!(
                    "{}× {} ← {}",
                    signature.seen,
                    signature.fingerprint,
                    signature.cause.as_deref().unwrap_or("not attributed")
                );
                for line in wrap(&line, WIDTH - 3) {
                    out.push_str(&format!("   {line}\n"));
                }
            }
        }
        if !diagnosis.also_found.is_empty() {
            out.push_str("\n ALSO FOUND (latent: provoked, not the failure seen)\n");
            for latent in &diagnosis.also_found {
                let line = format!("{}: {} ({})", latent.verdict, latent.headline, latent.value);
                for line in wrap(&line, WIDTH - 3) {
                    out.push_str(&format!("   {line}\n"));
                }
            }
        }
        if let Some(reproduction) = &diagnosis.reproduction {
            match reproduction.attempts {
                Some(attempts) => out.push_str(&format!(
                    "\n REPRO (stress: runs until it fails, up to {attempts} times; fails within them with probability ≥ 99%, at a third of the rate measured)\n"
                )),
                None => out.push_str(&format!(
                    "\n REPRO (fails {}/{}; ≥{:.0}% repro rate at 95% confidence)\n",
                    reproduction.failed,
                    reproduction.runs,
                    reproduction.lower_bound * 100.0
                )),
            }
            if let Some(command) = &self.command {
                out.push_str(&format!("   {command}\n"));
            }
            if let Some(plain) = &self.plain {
                out.push_str(&format!("   or: {plain}\n"));
            }
            if let Some(attribute) = &self.attribute {
                out.push_str(&format!(
                    "\n Paste above the test to fail it on every run until it is fixed:\n   {attribute}\n"
                ));
            }
        }
        for warning in &diagnosis.warnings {
            out.push_str(&format!("\n Warning: {warning}\n"));
        }
        out.push_str(&"━".repeat(WIDTH));
        out.push('\n');
        out
    }

    /// The diagnosis as the doctor's JSON writes it.
    pub fn to_json(&self) -> DiagnosisJson {
        let diagnosis = self.diagnosis;
        DiagnosisJson {
            format: json::FORMAT.to_string(),
            version: json::VERSION,
            test: self.test.to_string(),
            row: self.row.map(str::to_string),
            verdict: diagnosis.verdict.clone(),
            claim: diagnosis.claim.map(str::to_string),
            headline: diagnosis.headline.clone(),
            explanation: diagnosis.explanation.clone(),
            evidence: diagnosis
                .evidence
                .iter()
                .map(|row| EvidenceJson {
                    label: row.label.clone(),
                    runs: row.runs,
                    failed: row.failed,
                    note: row.note.clone(),
                })
                .collect(),
            repro: diagnosis
                .reproduction
                .as_ref()
                .map(|reproduction| ReproJson {
                    axis: reproduction.axis.name().to_string(),
                    value: reproduction.value.clone(),
                    command: self.command.clone(),
                    plain: self.plain.clone(),
                    attribute: self.attribute.clone(),
                    runs: reproduction.runs,
                    failed: reproduction.failed,
                    lower_bound: reproduction.lower_bound,
                    attempts: reproduction.attempts,
                }),
            signatures: diagnosis
                .signatures
                .iter()
                .map(|signature| SignatureJson {
                    fingerprint: signature.fingerprint.clone(),
                    seen: signature.seen,
                    cause: signature.cause.clone(),
                })
                .collect(),
            also_found: diagnosis
                .also_found
                .iter()
                .map(|latent| LatentJson {
                    verdict: latent.verdict.clone(),
                    headline: latent.headline.clone(),
                    value: latent.value.clone(),
                })
                .collect(),
            culprit: diagnosis.culprit.clone(),
            warnings: diagnosis.warnings.clone(),
            stats: StatsJson {
                runs: self.runs,
                seconds: self.seconds,
                baseline_runs: diagnosis.baseline.0,
                baseline_failed: diagnosis.baseline.1,
                p_value: diagnosis.p_value,
            },
            split: self.split.map(split_json),
        }
    }
}

/// The split's section of the text: MODEL OR HARNESS, its sentence, and the answers that
/// failed.
fn split_text(split: &Split) -> String {
    let mut out = String::new();
    let tag = split.tag().unwrap_or_else(|| "not split".to_string());
    out.push_str(&format!("\n MODEL OR HARNESS  {tag}\n"));
    for line in wrap(&split.sentence(), WIDTH - 3) {
        out.push_str(&format!("   {line}\n"));
    }
    if !split.model.is_empty() {
        out.push_str("\n ANSWERS (failing runs, each failing every replay of its answers)\n");
        for answer in &split.model {
            let values: Vec<String> = answer
                .values
                .iter()
                .map(|(key, value)| format!("{key} = {value}"))
                .collect();
            let line = format!(
                "run {}: {} (recorded: {})",
                answer.run,
                answer.said,
                values.join(", ")
            );
            for (index, line) in wrap(&line, WIDTH - 5).into_iter().enumerate() {
                let indent = if index == 0 { "   " } else { "     " };
                out.push_str(&format!("{indent}{line}\n"));
            }
        }
    }
    out
}

/// The split as the doctor's JSON holds it.
fn split_json(split: &Split) -> probtest::__cli::DoctorSplit {
    probtest::__cli::DoctorSplit {
        verdict: split.verdict().map(str::to_string),
        tag: split.tag(),
        runs: split.recorded.0,
        failed: split.recorded.1,
        model: split.model.len() as u64,
        harness: split.harness.len() as u64,
        harness_flakes: split.harness_flakes(),
        harness_verdict: split.harness_verdict.clone(),
        replays: split.replays,
        answers: split
            .model
            .iter()
            .map(|answer| probtest::__cli::DoctorAnswer {
                run: answer.run,
                said: answer.said.clone(),
                values: answer.values.iter().cloned().collect(),
            })
            .collect(),
        harness_runs: split.harness.clone(),
        problem: split.problem.clone(),
        cassette: split.cassette.display().to_string(),
    }
}

/// `text` in lines of at most `width` characters, broken at spaces.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_wraps_at_spaces() {
        assert_eq!(wrap("one two three four", 9), ["one two", "three", "four"]);
        assert!(wrap("", 10).is_empty());
    }
}
