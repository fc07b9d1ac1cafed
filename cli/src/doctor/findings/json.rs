//! The doctor's JSON (`probtest-doctor`, version 1): its shape as serde structs, the one
//! writer and the one reader of it. A single diagnosis is one [`DiagnosisJson`]; `--suite`
//! writes a [`SuiteJson`] holding one per test or row.

use serde::{Deserialize, Serialize};

/// The `format` field of every doctor file.
pub const FORMAT: &str = "probtest-doctor";
/// The version this doctor writes and reads.
pub const VERSION: u32 = 1;

/// One diagnosis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiagnosisJson {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The test item the doctor ran (for a row, the run item it was diagnosed through).
    pub test: String,
    /// The report row diagnosed, when the test is a run item of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
    /// `flaky-entropy`, `not-flaky`, ...
    pub verdict: String,
    /// `observed` or `latent`, for a flaky verdict.
    pub claim: Option<String>,
    /// The verdict in one line.
    pub headline: String,
    /// Why, in words.
    pub explanation: String,
    /// The runs that back the verdict.
    pub evidence: Vec<EvidenceJson>,
    /// How to make it fail.
    pub repro: Option<ReproJson>,
    /// The ways the test failed unperturbed, each with its cause.
    pub signatures: Vec<SignatureJson>,
    /// Bugs the doctor provoked that are not the failure seen.
    pub also_found: Vec<LatentJson>,
    /// The sibling test that breaks the victim.
    pub culprit: Option<String>,
    /// What limited the diagnosis.
    pub warnings: Vec<String>,
    /// What the diagnosis cost and the baseline it was judged against.
    pub stats: StatsJson,
    /// For a row whose model calls go through `probtest::cached`: its failures split between
    /// the model's answers and the harness (the shape is the runtime's, which reads it back
    /// for the report's tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<probtest::__cli::DoctorSplit>,
}

/// One row of the evidence table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceJson {
    /// What was run.
    pub label: String,
    /// How many times.
    pub runs: u64,
    /// How many failed.
    pub failed: u64,
    /// A remark (`← provoked`).
    pub note: String,
}

/// The reproduction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReproJson {
    /// The axis whose perturbation makes it fail.
    pub axis: String,
    /// The perturbation, as the report shows it.
    pub value: String,
    /// `cargo probtest repro pd1:...`, when a blob can carry it.
    pub command: Option<String>,
    /// A plain `cargo test` command, where the failure needs no preload library.
    pub plain: Option<String>,
    /// `#[probtest::repro("pd1:...")]`, where an attribute can carry the repro; absent from the
    /// files of earlier doctors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// Verifying runs of the repro.
    pub runs: u64,
    /// How many of them failed.
    pub failed: u64,
    /// The lower bound, at 95%, on the repro's failure rate per run.
    pub lower_bound: f64,
    /// For a stress repro: the most runs to make until one fails.
    pub attempts: Option<u64>,
}

/// One way the test failed unperturbed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignatureJson {
    /// How it failed.
    pub fingerprint: String,
    /// Unperturbed runs that failed this way.
    pub seen: u64,
    /// What makes it fail this way, if anything found does.
    pub cause: Option<String>,
}

/// A latent finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatentJson {
    /// Its verdict.
    pub verdict: String,
    /// Its headline.
    pub headline: String,
    /// The value that provoked it.
    pub value: String,
}

/// What a diagnosis cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatsJson {
    /// The doctor's runs of the test.
    pub runs: u64,
    /// Seconds from the first run to the verdict.
    pub seconds: f64,
    /// Runs of the unperturbed baseline.
    pub baseline_runs: u64,
    /// How many of them failed.
    pub baseline_failed: u64,
    /// The significance test's p-value, when one was made.
    pub p_value: Option<f64>,
}

/// The diagnoses of `cargo probtest doctor --suite`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteJson {
    /// [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// One per test or row, in the order they were diagnosed.
    pub diagnoses: Vec<DiagnosisJson>,
}

/// The text of a doctor file: pretty JSON and a final newline.
pub fn write<T: Serialize>(value: &T) -> String {
    // The structs hold strings, numbers and options only: serializing them cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The diagnoses in a doctor file, single or suite; an error in one line says what is wrong.
/// The tests' oracle of the writer, and the reader of a saved diagnosis.
pub fn read(text: &str) -> Result<Vec<DiagnosisJson>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|error| format!("not JSON ({error})"))?;
    if value["format"] != FORMAT {
        return Err(format!(
            "not a {FORMAT} file (its format is {})",
            value["format"]
        ));
    }
    match value["version"].as_u64() {
        Some(version) if version == u64::from(VERSION) => {}
        Some(version) => {
            return Err(format!(
                "version {version}, which this cargo-probtest does not read (it reads {VERSION})"
            ))
        }
        None => return Err("no version".to_string()),
    }
    if value.get("diagnoses").is_some() {
        serde_json::from_value::<SuiteJson>(value)
            .map(|suite| suite.diagnoses)
            .map_err(|error| error.to_string())
    } else {
        serde_json::from_value::<DiagnosisJson>(value)
            .map(|one| vec![one])
            .map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnosis() -> DiagnosisJson {
        DiagnosisJson {
            format: FORMAT.to_string(),
            version: VERSION,
            test: "triage::bench_triage::refund::run03".to_string(),
            row: Some("triage::refund".to_string()),
            verdict: "flaky-time".to_string(),
            claim: Some("observed".to_string()),
            headline: "depends on the wall clock".to_string(),
            explanation: "It fails at a day boundary.".to_string(),
            evidence: vec![EvidenceJson {
                label: "baseline".to_string(),
                runs: 10,
                failed: 2,
                note: String::new(),
            }],
            repro: Some(ReproJson {
                axis: "time".to_string(),
                value: "2026-01-01T23:59:59Z".to_string(),
                command: Some("cargo probtest repro pd1:abc".to_string()),
                plain: None,
                attribute: Some("#[probtest::repro(\"pd1:abc\")]".to_string()),
                runs: 5,
                failed: 5,
                lower_bound: 0.549,
                attempts: None,
            }),
            signatures: Vec::new(),
            also_found: Vec::new(),
            culprit: None,
            warnings: Vec::new(),
            stats: StatsJson {
                runs: 40,
                seconds: 1.5,
                baseline_runs: 10,
                baseline_failed: 2,
                p_value: Some(0.001),
            },
            split: None,
        }
    }

    #[test]
    fn a_diagnosis_and_a_suite_read_back_as_written() {
        let one = diagnosis();
        assert_eq!(read(&write(&one)), Ok(vec![one.clone()]));
        let suite = SuiteJson {
            format: FORMAT.to_string(),
            version: VERSION,
            diagnoses: vec![one.clone(), DiagnosisJson { row: None, ..one }],
        };
        assert_eq!(read(&write(&suite)), Ok(suite.diagnoses));
    }

    #[test]
    fn other_files_are_refused_in_one_line() {
        assert!(read("{").unwrap_err().starts_with("not JSON"));
        assert_eq!(
            read(r#"{"format": "probtest", "version": 1}"#),
            Err("not a probtest-doctor file (its format is \"probtest\")".to_string())
        );
        assert_eq!(
            read(r#"{"format": "probtest-doctor", "version": 9}"#),
            Err("version 9, which this cargo-probtest does not read (it reads 1)".to_string())
        );
        let mut value = serde_json::to_value(diagnosis()).expect("a value");
        value["surprise"] = serde_json::json!(1);
        assert!(read(&value.to_string())
            .unwrap_err()
            .contains("unknown field `surprise`"));
    }
}
