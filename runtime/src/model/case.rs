//! Who a case is: its description as the store and the report carry it, its gate, and the
//! warning for a gate its runs cannot satisfy.
//!
//! Layer: model. Imports only `crate::types`.

use crate::model::record::Record;
use crate::types::key::CaseKey;
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::{percent_text, GateSpec, Rule, StatsConfig};

/// Who a case is: where its function lives and which values it runs with.
#[derive(Clone, Debug, PartialEq)]
pub struct CaseInfo {
    /// The row id: `<short>::<case-id>`, or the short name for an unparametrized function.
    pub case: String,
    /// The package the function belongs to.
    pub package: String,
    /// The module path the function is written in.
    pub module: String,
    /// The bench function's full name.
    pub function: String,
    /// The case id alone, without the function's short name.
    pub case_id: String,
    /// The source file, as `file!()` gives it.
    pub file: String,
    /// The line of the function's name.
    pub line: u32,
    /// The case's position among its function's cases.
    pub index: u32,
    /// Runs configured for the case.
    pub runs: u32,
    /// Each argument's value as written in `params(...)`.
    pub params: OrderedMap<String>,
    /// The case's own gate, from its attribute (a row's `gate` holds the verdict).
    pub gate: Option<GateSpec>,
    /// The function's comparison of one argument's values, from its attribute.
    pub compare: Option<CompareSpec>,
    /// The case's latency quantile and latency gate, from its attribute; none: the session's
    /// quantile, ungated.
    pub latency: Option<LatencySpec>,
    /// Per group of `params(...)`, in written order, the value this case takes: what pairs
    /// cases in a comparison.
    pub parts: Vec<Part>,
}

/// A comparison as `#[probability(compare = "model", baseline = .., margin = .., equivalence
/// = ..)]` writes it (pytest-probability's mark arguments).
#[derive(Clone, Debug, PartialEq)]
pub struct CompareSpec {
    /// The argument whose values (the arms) are compared.
    pub axis: String,
    /// The arm the others are compared with; none: the first value.
    pub baseline: Option<String>,
    /// With a margin the comparison is a gate: non-inferiority, or equivalence.
    pub margin: Option<f64>,
    /// Whether the margin asks for equivalence (|Δ| ≤ margin) rather than non-inferiority.
    pub equivalence: bool,
}

/// One group of `params(...)` as a case takes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// The group's argument names (several for a zipped group).
    pub names: Vec<String>,
    /// The id of the case's value.
    pub id: String,
    /// The value's position in the group.
    pub index: u32,
}

/// A case's own gate, else the session's `min_rate` for every case without one.
pub(crate) fn effective_gate(own: Option<GateSpec>, config: &StatsConfig) -> Option<GateSpec> {
    own.or_else(|| {
        config.min_rate.map(|bar| GateSpec {
            rule: Rule::MinRate(bar),
            method: None,
            level: None,
            prior: None,
        })
    })
}

impl CaseInfo {
    /// What identifies a case across processes and reports: package, module and row id.
    pub fn key(&self) -> CaseKey<&str> {
        CaseKey::new(&self.package, &self.module, &self.case)
    }

    /// Source order: package, module, line, function, then the case's position.
    pub(crate) fn order_key(&self) -> (&str, &str, u32, &str, u32, &str) {
        (
            &self.package,
            &self.module,
            self.line,
            &self.function,
            self.index,
            &self.case,
        )
    }

    /// The stand-in for a record whose case is not described anywhere.
    pub(crate) fn unknown(record: &Record) -> CaseInfo {
        CaseInfo {
            case: record.case.to_string(),
            package: record.package.to_string(),
            module: record.module.to_string(),
            function: String::new(),
            case_id: record.case.to_string(),
            file: String::new(),
            line: 0,
            index: 0,
            runs: 0,
            params: OrderedMap::default(),
            gate: None,
            compare: None,
            latency: None,
            parts: Vec::new(),
        }
    }
}

/// The warning for a gate that cannot pass with the case's runs even if every run passes:
/// `classify::x: min_rate=0.9 at 95% needs >=36 runs; this case has 10`.
pub(crate) fn infeasible(info: &CaseInfo, config: &StatsConfig) -> Option<String> {
    if info.runs == 0 {
        return None;
    }
    // Under PROB_STOP=sequential, the confidence sequence needs more runs to pass.
    let margin = info.compare.as_ref().is_some_and(|c| c.margin.is_some())
        || info.latency.is_some_and(|l| l.max_latency.is_some());
    let gate = crate::types::stats::stopping::judged_gate(
        effective_gate(info.gate, config),
        margin,
        config,
    )?;
    let needed = gate.runs_needed(config);
    if needed.is_some_and(|needed| needed <= u64::from(info.runs)) {
        return None;
    }
    let needs = needed.map_or("can never pass".to_string(), |n| {
        format!("needs >={n} runs")
    });
    Some(match gate.rule {
        Rule::MinRate(bar) => format!(
            "{}: min_rate={bar} at {}% {needs}; this case has {}",
            info.case,
            percent_text(gate.interval(config).level),
            info.runs
        ),
        Rule::MinPasses(bar) => format!(
            "{}: min_passes={bar} needs >={bar} runs; this case has {}",
            info.case, info.runs
        ),
    })
}
