//! The shapes the CLI writes of a plan and of a history of sessions.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::Serialize;

use crate::model::planning::{PlanRow, PlanSettings};
use crate::model::trend::{CaseHistory, Change};
use crate::types::stats::GateSpec;

#[derive(Serialize)]
#[serde(remote = "crate::model::trend::CaseHistory")]
struct CaseHistoryShape {
    case: String,
    package: String,
    module: String,
    sessions: Vec<Option<(u64, u64)>>,
    change: Option<Change>,
}
shaped!(crate::model::trend::CaseHistory, CaseHistoryShape, write);

#[derive(Serialize)]
#[serde(remote = "crate::model::trend::Change")]
struct ChangeShape {
    from: usize,
    to: usize,
    difference: f64,
    low: f64,
    high: f64,
    p_value: f64,
    significant: bool,
}
shaped!(crate::model::trend::Change, ChangeShape, write);

#[derive(Serialize)]
#[serde(remote = "crate::model::trend::History")]
struct HistoryShape {
    sessions: Vec<String>,
    level: f64,
    cases: Vec<CaseHistory>,
}
shaped!(crate::model::trend::History, HistoryShape, write);

#[derive(Serialize)]
#[serde(remote = "crate::model::planning::PlanSettings")]
struct PlanSettingsShape {
    assume: f64,
    flakes: Vec<f64>,
    power: f64,
    cap: u64,
}
shaped!(
    crate::model::planning::PlanSettings,
    PlanSettingsShape,
    write
);

#[derive(Serialize)]
#[serde(remote = "crate::model::planning::PlanRow")]
struct PlanRowShape {
    case: String,
    runs: u64,
    gate: Option<GateSpec>,
    min_runs: Option<u64>,
    runs_for_power: Option<u64>,
    chance: Option<f64>,
    catch: Vec<f64>,
    cost_per_run: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_latency: Option<f64>,
}
shaped!(crate::model::planning::PlanRow, PlanRowShape, write);

#[derive(Serialize)]
#[serde(remote = "crate::model::planning::Plan")]
struct PlanShape {
    settings: PlanSettings,
    level: f64,
    runs_to_catch: Vec<Option<u64>>,
    report: Option<String>,
    rows: Vec<PlanRow>,
}
shaped!(crate::model::planning::Plan, PlanShape, write);
