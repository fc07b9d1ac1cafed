//! The shapes of a case's description: the store's case lines and the start of every row.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::{Deserialize, Serialize};

use crate::model::{CompareSpec, Part};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::GateSpec;

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::case::CaseInfo")]
struct CaseInfoShape {
    case: String,
    package: String,
    module: String,
    function: String,
    case_id: String,
    file: String,
    line: u32,
    index: u32,
    runs: u32,
    params: OrderedMap<String>,
    #[serde(default, rename = "gate_spec", skip_serializing_if = "Option::is_none")]
    gate: Option<GateSpec>,
    #[serde(
        default,
        rename = "compare_spec",
        skip_serializing_if = "Option::is_none"
    )]
    compare: Option<CompareSpec>,
    #[serde(
        default,
        rename = "latency_spec",
        skip_serializing_if = "Option::is_none"
    )]
    latency: Option<LatencySpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    parts: Vec<Part>,
}
shaped!(crate::model::case::CaseInfo, CaseInfoShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::case::CompareSpec")]
struct CompareSpecShape {
    axis: String,
    baseline: Option<String>,
    margin: Option<f64>,
    #[serde(default)]
    equivalence: bool,
}
shaped!(crate::model::case::CompareSpec, CompareSpecShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::model::case::Part")]
struct PartShape {
    names: Vec<String>,
    id: String,
    index: u32,
}
shaped!(crate::model::case::Part, PartShape, both);
