//! The JSON a run writes: reading a file, a report's rows, records and counts, and amounts
//! compared to within rounding.

use std::path::Path;

use serde_json::Value;

/// Reads and parses a JSON file, saying which one on failure.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The report's row for `case`.
#[track_caller]
pub fn report_row<'a>(report: &'a Value, case: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .expect("rows is an array")
        .iter()
        .find(|row| row["case"] == case)
        .unwrap_or_else(|| panic!("no row `{case}` in the report"))
}

/// The report's records of `case`, by run number: checks of their content should not depend on
/// the report's order, which has a test of its own.
pub fn report_records<'a>(report: &'a Value, case: &str) -> Vec<&'a Value> {
    let mut records: Vec<&Value> = report["records"]
        .as_array()
        .expect("records is an array")
        .iter()
        .filter(|record| record["case"] == case)
        .collect();
    records.sort_by_key(|record| record["run"].as_u64());
    records
}

/// `[passes, fails, errors, total]` of a report row or totals object (`count` for totals).
pub fn counts(object: &Value) -> [u64; 4] {
    let total = object.get("total").unwrap_or(&object["count"]);
    [
        object["passes"].as_u64().expect("passes"),
        object["fails"].as_u64().expect("fails"),
        object["errors"].as_u64().expect("errors"),
        total.as_u64().expect("total or count"),
    ]
}

/// Asserts that a JSON number is `expected`, to within rounding of sums of decimal amounts.
#[track_caller]
pub fn assert_amount(value: &Value, expected: f64) {
    let actual = value
        .as_f64()
        .unwrap_or_else(|| panic!("{value} is not a number"));
    assert!(
        (actual - expected).abs() < 1e-9,
        "expected {expected}, got {actual}"
    );
}
