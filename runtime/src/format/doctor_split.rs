//! The split of a row's failures in the doctor's JSON (`probtest-doctor`, its `split` field):
//! how many the model's answers carry and how many the harness's, the answers that failed, and
//! the tag a report shows beside the row (`model`, `harness: time`). The doctor writes it; the
//! HTML page and the CLI's Markdown read the tags back from the doctor's file saved beside the
//! report ([`tags`]), which needs nothing else of that file.
//!
//! Layer: format.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A row's failures split between its answers and its harness.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorSplit {
    /// `model`, `harness` or `both`; `None` when the replay could not be trusted, or nothing
    /// failed to split.
    pub verdict: Option<String>,
    /// What a report shows beside the row: `model`, `harness: time`, `model + harness: time`.
    pub tag: Option<String>,
    /// The row's runs the doctor recorded.
    pub runs: u64,
    /// How many of them failed.
    pub failed: u64,
    /// The failures carried by their answers.
    pub model: u64,
    /// The failures the harness made, given answers that pass.
    pub harness: u64,
    /// Whether the harness failed given answers that pass (a failing run's, or a passing
    /// run's, replayed).
    pub harness_flakes: bool,
    /// The harness's own diagnosis (`flaky-time`), when it flakes.
    pub harness_verdict: Option<String>,
    /// The most replays of one run.
    pub replays: u64,
    /// The failing runs their answers carry, each with what it answered.
    pub answers: Vec<DoctorAnswer>,
    /// The failing runs that passed a replay of their own answers.
    pub harness_runs: Vec<u32>,
    /// Why the replay could not be trusted; then no verdict is drawn from it.
    pub problem: Option<String>,
    /// The cassette the doctor recorded, which a repro replays.
    pub cassette: String,
}

/// A failing run whose every replay failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorAnswer {
    /// The run's number in its row.
    pub run: u32,
    /// The failure as the answer it judged.
    pub said: String,
    /// What the run recorded: each key's value as JSON.
    pub values: BTreeMap<String, String>,
}

/// The file of the doctor's diagnoses beside the report at `report`: `evals.json` has
/// `evals.doctor.json`.
pub fn doctor_file_of(report: &std::path::Path) -> std::path::PathBuf {
    let stem = report
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".to_string());
    report.with_file_name(format!("{stem}.doctor.json"))
}

/// Each diagnosed row's tag in a doctor file (one diagnosis, or `--suite`'s), by row id; rows
/// with no split, or none that could be trusted, are left out. An error says in one line what
/// is wrong with the file.
pub fn tags(text: &str) -> Result<BTreeMap<String, String>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|error| format!("not JSON ({error})"))?;
    if value["format"] != "probtest-doctor" {
        return Err("not a probtest-doctor file".to_string());
    }
    let diagnoses = match value.get("diagnoses") {
        Some(serde_json::Value::Array(diagnoses)) => diagnoses.iter().collect(),
        Some(_) => return Err("its `diagnoses` is not a list".to_string()),
        None => vec![&value],
    };
    let mut tags = BTreeMap::new();
    for diagnosis in diagnoses {
        let (Some(row), Some(split)) = (diagnosis["row"].as_str(), diagnosis.get("split")) else {
            continue;
        };
        if split.is_null() {
            continue;
        }
        let split: DoctorSplit = serde_json::from_value(split.clone())
            .map_err(|error| format!("the split of row `{row}`: {error}"))?;
        if let Some(tag) = split.tag {
            tags.insert(row.to_string(), tag);
        }
    }
    Ok(tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(tag: Option<&str>) -> DoctorSplit {
        DoctorSplit {
            verdict: tag.map(|_| "model".to_string()),
            tag: tag.map(str::to_string),
            runs: 40,
            failed: 3,
            model: 3,
            harness: 0,
            harness_flakes: false,
            harness_verdict: None,
            replays: 10,
            answers: vec![DoctorAnswer {
                run: 7,
                said: "the model answered `Shipping` where the test expects `Refund`".into(),
                values: BTreeMap::from([("triage".to_string(), "{\"Ok\":\"shipping\"}".into())]),
            }],
            harness_runs: Vec::new(),
            problem: None,
            cassette: "/t/probtest/doctor/cassettes/r".into(),
        }
    }

    #[test]
    fn the_tags_of_one_diagnosis_and_of_a_suite_are_read_by_row() {
        let one = serde_json::json!({
            "format": "probtest-doctor", "version": 1, "row": "triage::refund",
            "split": split(Some("model")),
        });
        assert_eq!(
            tags(&one.to_string()),
            Ok(BTreeMap::from([(
                "triage::refund".to_string(),
                "model".to_string()
            )]))
        );
        let suite = serde_json::json!({
            "format": "probtest-doctor", "version": 1, "diagnoses": [
                {"row": "a", "split": split(Some("harness: time"))},
                {"row": "b", "split": split(None)},
                {"row": "c"},
                {"test": "plain", "split": null},
            ],
        });
        assert_eq!(
            tags(&suite.to_string()),
            Ok(BTreeMap::from([(
                "a".to_string(),
                "harness: time".to_string()
            )]))
        );
        assert_eq!(
            tags("{\"format\": \"probtest\"}"),
            Err("not a probtest-doctor file".to_string())
        );
        let mut bad = serde_json::to_value(split(Some("model"))).expect("a value");
        bad["model"] = serde_json::json!("three");
        let file = serde_json::json!({"format": "probtest-doctor", "row": "r", "split": bad});
        assert!(tags(&file.to_string())
            .expect_err("a bad split")
            .starts_with("the split of row `r`"));
        assert_eq!(
            doctor_file_of(std::path::Path::new("target/probtest/evals.json")),
            std::path::Path::new("target/probtest/evals.doctor.json")
        );
    }
}
