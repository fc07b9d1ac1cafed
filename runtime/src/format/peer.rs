//! Reading reports that pytest-probability writes (`--prob-json`), so that `cargo probtest
//! report` and `merge` take them as they take probtest's own.
//!
//! The peer's report has the same top-level names but no `tool` or `schema`, rows without a
//! package, module or source place, gates described by their settings, and records without an
//! attempt or location. Its rows and records become cases and records of the model, and the
//! report is rebuilt from them: rows, intervals and verdicts are recomputed, never copied.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::Deserialize;
use serde_json::Value;

use crate::model::{CaseInfo, Record, Report};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::{ErrorPolicy, GateSpec, Method, Prior, Rule, StatsConfig};

/// The tool name a report read from the peer carries.
pub(crate) const PEER_TOOL: &str = "pytest-probability";

/// Whether `value` looks like the peer's report: no `tool`, a `rows` and a `records` array.
pub(crate) fn is_peer_report(value: &Value) -> bool {
    value.get("tool").is_none()
        && value.get("rows").is_some_and(Value::is_array)
        && value.get("records").is_some_and(Value::is_array)
}

#[derive(Deserialize)]
struct PeerRow {
    case: String,
    #[serde(default)]
    total: u64,
    #[serde(default)]
    gate: Option<PeerGate>,
    #[serde(default)]
    latency: Option<PeerLatency>,
}

/// A row's latency as the peer writes it: the quantile, the gate's limit and the level.
#[derive(Deserialize)]
struct PeerLatency {
    quantile: f64,
    #[serde(default)]
    max_latency: Option<f64>,
    #[serde(default)]
    ci: Option<PeerLatencyInterval>,
}

#[derive(Deserialize)]
struct PeerLatencyInterval {
    level: f64,
}

impl PeerLatency {
    /// The case's latency settings, so that the rebuilt row is judged as the peer judged it.
    fn spec(&self) -> LatencySpec {
        LatencySpec {
            quantile: Some(self.quantile),
            max_latency: self.max_latency,
            level: self.ci.as_ref().map(|ci| ci.level),
        }
    }
}

#[derive(Deserialize)]
struct PeerGate {
    rule: String,
    #[serde(default)]
    min_rate: Option<f64>,
    #[serde(default)]
    min_passes: Option<u64>,
    #[serde(default)]
    confidence: Option<f64>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    prior: Option<(f64, f64)>,
    #[serde(default)]
    errors: Option<String>,
}

#[derive(Default, Deserialize)]
struct PeerStats {
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    level: Option<f64>,
    #[serde(default)]
    prior: Option<(f64, f64)>,
}

fn method(name: Option<&str>) -> Result<Option<Method>, String> {
    // A gate under `--prob-stop=sequential` names the sequence, which no setting may pick.
    name.map(|name| match name {
        "sequential" => Ok(Method::Sequential),
        name => name.parse(),
    })
    .transpose()
}

fn prior(pair: Option<(f64, f64)>) -> Option<Prior> {
    pair.map(|(a, b)| Prior { a, b })
}

impl PeerGate {
    fn spec(&self, case: &str) -> Result<GateSpec, String> {
        let rule = match (self.rule.as_str(), self.min_rate, self.min_passes) {
            ("rate", Some(bar), _) => Rule::MinRate(bar),
            ("count", _, Some(bar)) => Rule::MinPasses(bar),
            (rule, _, _) => {
                return Err(format!(
                    "rows[{case}].gate: expected rule \"rate\" with min_rate or \"count\" with min_passes, got \"{rule}\""
                ))
            }
        };
        Ok(GateSpec {
            rule,
            method: method(self.method.as_deref())
                .map_err(|why| format!("rows[{case}].gate.method: {why}"))?,
            level: self.confidence,
            prior: prior(self.prior),
        })
    }
}

/// The model of a peer report: its rows as cases (with their gates), its records, and its
/// interval settings; rows and totals rebuilt from the records.
pub(crate) fn from_peer(value: Value) -> Result<Report, String> {
    let field = |name: &str| value.get(name).cloned().unwrap_or(Value::Null);
    let rows: Vec<PeerRow> = serde_json::from_value(field("rows"))
        .map_err(|e| format!("not a complete pytest-probability report: rows ({e})"))?;
    let records: Vec<Record> = serde_json::from_value(field("records"))
        .map_err(|e| format!("not a complete pytest-probability report: records ({e})"))?;
    let stats: PeerStats = serde_json::from_value(field("stats_config")).unwrap_or_default();
    let mut config = StatsConfig::default();
    if let Some(method) =
        method(stats.method.as_deref()).map_err(|why| format!("stats_config.method: {why}"))?
    {
        config.interval.method = method;
    }
    if let Some(level) = stats.level.filter(|level| *level > 0.0 && *level < 1.0) {
        config.interval.level = level;
    }
    if let Some(prior) = prior(stats.prior) {
        config.interval.prior = prior;
    }
    let mut cases: Vec<CaseInfo> = Vec::with_capacity(rows.len());
    for (index, row) in rows.iter().enumerate() {
        if cases.iter().any(|info| info.case == row.case) {
            continue;
        }
        let gate = row.gate.as_ref().map(|g| g.spec(&row.case)).transpose()?;
        if row.gate.as_ref().and_then(|g| g.errors.as_deref()) == Some("exclude") {
            config.errors = ErrorPolicy::Exclude;
        }
        let (short, case_id) = row.case.split_once("::").unwrap_or((&row.case, &row.case));
        cases.push(CaseInfo {
            case: row.case.clone(),
            package: String::new(),
            module: String::new(),
            function: format!("bench_{short}"),
            case_id: case_id.to_string(),
            file: String::new(),
            // The peer's rows come in its source order and carry no line: their position
            // stands in for it, so that rows keep the peer's order.
            line: u32::try_from(index + 1).unwrap_or(u32::MAX),
            index: 0,
            runs: u32::try_from(row.total).unwrap_or(u32::MAX),
            params: OrderedMap::default(),
            gate,
            compare: None,
            latency: row.latency.as_ref().map(PeerLatency::spec),
            parts: Vec::new(),
        });
    }
    let mut report = Report::build(cases, records, &config);
    report.tool = PEER_TOOL.to_string();
    report.version = String::new();
    report.schema = 0;
    if let Some(created) = value.get("created").and_then(Value::as_str) {
        report.created = created.to_string();
    }
    Ok(report)
}
