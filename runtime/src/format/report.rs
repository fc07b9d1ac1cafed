//! The JSON report's shapes: the fast writers of what every run patches (a record, a row's
//! tail, the totals, the head) and the header, with serde for reading and as their oracle.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::io;

use crate::format::escape::{serde_or, Num, OptionalStr, Str};
use crate::model::{Aggregate, CaseInfo, Record, Report, Row, Totals, SCHEMA_VERSION};

/// A record, as `serde_json::to_string(record)` writes it, up to number spelling.
pub(crate) fn record(record: &Record) -> io::Result<String> {
    let usage = serde_or(&record.usage, record.usage.is_empty(), "[]")?;
    Ok(format!(
        "{{\"case\":{},\"package\":{},\"module\":{},\"run\":{},\"attempt\":{},\"outcome\":\"{}\",\
         \"message\":{},\"location\":{},\"elapsed\":{},\"cost\":{},\"usage\":{usage}}}",
        Str(&record.case),
        Str(&record.package),
        Str(&record.module),
        record.run,
        record.attempt,
        record.outcome.name(),
        OptionalStr(record.message.as_deref()),
        OptionalStr(record.location.as_deref()),
        Num(record.elapsed),
        Num(record.cost),
    ))
}

/// What follows a row's case fields: `"passes":…}`, as serde_json writes the rest of the row.
pub(crate) fn row_tail(row: &Row) -> io::Result<String> {
    let usage = serde_or(&row.usage, row.usage.is_empty(), "{}")?;
    let gate = serde_or(&row.gate, row.gate.is_none(), "null")?;
    let metrics = serde_or(&row.metrics, row.metrics.is_empty(), "{}")?;
    let counts = format!(
        "\"passes\":{},\"fails\":{},\"errors\":{},\"total\":{},\"pass_rate\":{},\"status\":\"{}\",\
         \"cost\":{},\"usage\":{usage},\"ci\":",
        row.passes,
        row.fails,
        row.errors,
        row.total,
        Num(row.pass_rate),
        row.status.name(),
        Num(row.cost),
    );
    Ok(match &row.ci {
        Some(ci) => format!(
            "{counts}{{\"method\":\"{}\",\"level\":{},\"low\":{},\"high\":{}}},\"gate\":{gate},\
             \"metrics\":{metrics}}}",
            ci.method.name(),
            Num(ci.level),
            Num(ci.low),
            Num(ci.high),
        ),
        None => format!("{counts}null,\"gate\":{gate},\"metrics\":{metrics}}}"),
    })
}

/// Totals, as `serde_json::to_string(totals)` writes them, up to number spelling.
pub(crate) fn totals(totals: &Totals) -> io::Result<String> {
    let usage = serde_or(&totals.usage, totals.usage.is_empty(), "{}")?;
    Ok(format!(
        "{{\"passes\":{},\"fails\":{},\"errors\":{},\"count\":{},\"pass_rate\":{},\"cost\":{},\
         \"usage\":{usage},\"retries\":{}}}",
        totals.passes,
        totals.fails,
        totals.errors,
        totals.count,
        Num(totals.pass_rate),
        Num(totals.cost),
        totals.retries,
    ))
}

/// What the session report's head slot holds, the fields that change with any run:
/// `"runs":…,"exit_status":…,"totals":{…},"aggregates":[…],"warnings":[…]`.
pub(crate) fn head(
    runs: u32,
    exit_status: i32,
    totals: &Totals,
    aggregates: &[Aggregate],
    warnings: &[String],
) -> io::Result<String> {
    let totals = self::totals(totals)?;
    let aggregates = serde_or(aggregates, aggregates.is_empty(), "[]")?;
    let warnings = serde_or(warnings, warnings.is_empty(), "[]")?;
    Ok(format!(
        "\"runs\":{runs},\"exit_status\":{exit_status},\"totals\":{totals},\
         \"aggregates\":{aggregates},\"warnings\":{warnings}"
    ))
}

impl CaseInfo {
    /// The start of the JSON of any row of this case: `{`, the case's fields, and a comma.
    pub(crate) fn row_prefix(&self) -> serde_json::Result<String> {
        let mut text = serde_json::to_string(self)?;
        text.pop();
        text.push(',');
        Ok(text)
    }
}

impl Row {
    /// The rest of the row's JSON after [`CaseInfo::row_prefix`]: its counts and verdict.
    pub(crate) fn tail_json(&self) -> io::Result<String> {
        row_tail(self)
    }
}

impl Report {
    /// Reads a report written by probtest, refusing what it cannot read faithfully: text that
    /// is not a probtest report, or a report of a newer schema than this version knows.
    pub fn from_json(text: &str) -> Result<Report, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        if value.get("tool").and_then(|t| t.as_str()) != Some("probtest") {
            return Err("not a probtest report (no `\"tool\": \"probtest\"`)".to_string());
        }
        let schema = value
            .get("schema")
            .and_then(|s| s.as_u64())
            .ok_or("not a probtest report (no `schema` version)")?;
        if schema > u64::from(SCHEMA_VERSION) {
            return Err(format!(
                "written by a newer probtest (report schema {schema}; this version reads up to {SCHEMA_VERSION})"
            ));
        }
        serde_json::from_value(value).map_err(|e| format!("not a complete probtest report ({e})"))
    }
}
