//! The JSON report: the fast writers of what every run patches (a record, a row's tail, the
//! totals, the head), the header, the whole file ([`whole`]), and the reader
//! ([`Report::from_json`]). serde's shapes (`format::shape`) read it and are the fast writers'
//! oracle.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;
use std::io;

use crate::format::escape::{serde, serde_or, Num, OptionalStr, Str};
use serde::Serialize;

use crate::format::explained::{
    explained_aggregates, explained_baseline, explained_list, explained_row, AggregateView,
    BaselineView, Explained, RowView,
};
use crate::model::analysis::Comparison;
use crate::model::explanations::{Explanations, RowExplanations};
use crate::model::stops::Stopping;
use crate::model::{
    Aggregate, BinaryNotRun, CaseInfo, Record, Report, Row, Totals, SCHEMA_VERSION,
};
use crate::types::stats::latency::LatencyResult;
use crate::types::stats::{StatsConfig, Verdict};
use crate::types::status::Outcome;
use crate::types::sum::finite;

/// The fields a record has only when the run waited for a limit or replayed from the cassette,
/// as serde writes them: `,"waited":…,"waited_for":…,"replayed":…`.
pub(crate) fn record_extras(record: &Record) -> String {
    let mut extras = String::new();
    if record.waited != 0.0 {
        extras.push_str(&format!(",\"waited\":{}", Num(finite(record.waited))));
    }
    if let Some(key) = &record.waited_for {
        extras.push_str(&format!(",\"waited_for\":{}", Str(key)));
    }
    if let Some(replayed) = record.replayed {
        extras.push_str(&format!(",\"replayed\":{}", Num(finite(replayed))));
    }
    extras
}

/// Where a record's text goes: `(message, error)`.
pub(crate) fn texts(record: &Record) -> (Option<&str>, Option<&str>) {
    let text = record.message.as_deref();
    match record.outcome {
        Outcome::Error => (None, text),
        Outcome::Pass | Outcome::Fail | Outcome::Stopped => (text, None),
    }
}

/// The cost as the report writes it: `null` when the run spent nothing; a cost past the largest
/// number (amounts that overflowed within one run) as that number, since JSON has no infinity
/// and `null` would read back as nothing spent.
pub(crate) fn spent(record: &Record) -> Option<f64> {
    (record.cost != 0.0).then(|| finite(record.cost))
}

/// A record, as `serde_json::to_string(record)` writes it, up to number spelling.
pub(crate) fn record(record: &Record) -> io::Result<String> {
    record_of(&record_identity(record), record)
}

/// The identity fields a record starts with, escaped: `"case":…,"package":…,"module":…`. The
/// records of one case share it, and escaping costs more than the rest of a record.
pub(crate) fn record_identity(record: &Record) -> String {
    format!(
        "\"case\":{},\"package\":{},\"module\":{}",
        Str(&record.case),
        Str(&record.package),
        Str(&record.module),
    )
}

/// The text of `records` in a report's `records` array, each on a line of its own after a
/// comma (`first` says whether the first of them opens the array, with no comma). Records come
/// grouped by case: each case's identity is escaped once.
pub(crate) fn records_text(records: &[Record], first: bool) -> io::Result<String> {
    let mut text = String::with_capacity(records_capacity(records.len()));
    let mut identities = Identities::default();
    for (position, record) in records.iter().enumerate() {
        text.push_str(if position == 0 && first { "\n" } else { ",\n" });
        push_record(&mut text, identities.of(record), record)?;
    }
    Ok(text)
}

/// Bytes to reserve for `records` records at once (a record takes some 250 bytes): a text
/// grown by doubling copies itself each time, some megabytes in all for a large report.
pub(crate) fn records_capacity(records: usize) -> usize {
    records * 288
}

/// The identity fields ([`record_identity`]) of records that come grouped by case, escaped
/// once per case: the last case's are kept until a record of another case comes.
#[derive(Default)]
pub(crate) struct Identities<'a> {
    last: Option<(&'a Record, String)>,
}

impl<'a> Identities<'a> {
    /// The identity fields of `record`.
    pub(crate) fn of(&mut self, record: &'a Record) -> &str {
        let same_case = self
            .last
            .as_ref()
            .is_some_and(|(same, _)| same.key() == record.key());
        if !same_case {
            self.last = None;
        }
        &self
            .last
            .get_or_insert_with(|| (record, record_identity(record)))
            .1
    }
}

/// [`record`] with its identity fields already written by [`record_identity`].
pub(crate) fn record_of(identity: &str, record: &Record) -> io::Result<String> {
    let mut text = String::new();
    push_record(&mut text, identity, record)?;
    Ok(text)
}

/// Appends [`record_of`]'s text to `out`: a report writes thousands.
///
/// Formatted by `format!`, then appended once: `format!` runs in std's precompiled, optimized
/// code from start to end, where `write!` into `out` would call back into this crate's
/// unoptimized `String` writer for every piece (twice the instructions, in a test binary).
pub(crate) fn push_record(out: &mut String, identity: &str, record: &Record) -> io::Result<()> {
    let usage = serde_or(&record.usage, record.usage.is_empty(), "[]")?;
    let (message, error) = texts(record);
    let extras = if record.waited != 0.0 || record.waited_for.is_some() || record.replayed.is_some()
    {
        Cow::Owned(record_extras(record))
    } else {
        Cow::Borrowed("")
    };
    out.push_str(&format!(
        "{{{identity},\"run\":{},\"attempt\":{},\"outcome\":\"{}\",\
         \"message\":{},\"error\":{},\"location\":{},\"elapsed\":{},\"cost\":{},\"usage\":{usage}{extras}}}",
        record.run,
        record.attempt,
        record.outcome.name(),
        OptionalStr(message),
        OptionalStr(error),
        OptionalStr(record.location.as_deref()),
        Num(record.elapsed),
        Spent(spent(record)),
    ));
    Ok(())
}

/// A record's cost as [`spent`] gives it: a number, or `null`.
struct Spent(Option<f64>);

impl std::fmt::Display for Spent {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(cost) => Num(cost).fmt(out),
            None => out.write_str("null"),
        }
    }
}

/// What follows a row's case fields: `"passes":…}`, as serde_json writes the rest of the row,
/// with the row's, its gate's and its latency's `explanation` when `texts` has them.
pub(crate) fn row_tail(row: &Row, texts: Option<&RowExplanations>) -> io::Result<String> {
    let usage = serde_or(&row.usage, row.usage.is_empty(), "{}")?;
    let gate = serde_or(&row.gate, row.gate.is_none(), "null")?;
    let gate = explained(gate.into_owned(), texts.and_then(|t| t.gate.as_deref()));
    let metrics = serde_or(&row.metrics, row.metrics.is_empty(), "{}")?;
    // Only a row that stopped early has `stopped`, as serde leaves it out otherwise.
    let metrics = match &row.stopped {
        Some(stop) => format!("{metrics},\"stopped\":{}", serde(stop)?),
        None => metrics.into_owned(),
    };
    // Rows of a report kept run by run have none until it is rebuilt; serde leaves it out too.
    let metrics = match &row.latency {
        Some(latency) => format!(
            "{metrics},\"latency\":{}",
            explained(
                latency_json(latency),
                texts.and_then(|t| t.latency.as_deref())
            )
        ),
        None => metrics,
    };
    // Only a row with runs that never started has `not_run`, as serde leaves it out otherwise.
    let metrics = match row.not_run {
        0 => metrics,
        count => format!("{metrics},\"not_run\":{count}"),
    };
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
    let tail = match &row.ci {
        Some(ci) => format!(
            "{counts}{{\"method\":\"{}\",\"level\":{},\"low\":{},\"high\":{}}},\"gate\":{gate},\
             \"metrics\":{metrics}}}",
            ci.method.name(),
            Num(ci.level),
            Num(ci.low),
            Num(ci.high),
        ),
        None => format!("{counts}null,\"gate\":{gate},\"metrics\":{metrics}}}"),
    };
    Ok(explained(tail, texts.map(|t| t.row.as_str())))
}

/// `object` (a JSON object's text) with an `explanation` field last, when there is a text.
fn explained(object: String, text: Option<&str>) -> String {
    let Some(text) = text else {
        return object;
    };
    let mut object = object;
    object.pop();
    let separator = if object.trim_end().ends_with('{') {
        ""
    } else {
        ","
    };
    format!("{object}{separator}\"explanation\":{}}}", Str(text))
}

/// A row's latency, as `serde_json::to_string(latency)` writes it, up to number spelling: every
/// row has one, and serde's derived writer is the slowest part of a report's rows in a test
/// binary built without optimizations.
fn latency_json(latency: &LatencyResult) -> String {
    let optional = |value: Option<f64>| {
        value.map_or(Cow::Borrowed("null"), |v| Cow::Owned(Num(v).to_string()))
    };
    let rank =
        |rank: Option<u64>| rank.map_or(Cow::Borrowed("null"), |r| Cow::Owned(r.to_string()));
    let ci = match &latency.ci {
        Some(ci) => format!(
            "{{\"method\":{},\"level\":{},\"low\":{},\"high\":{},\"ranks\":[{},{}],\"coverage\":{}}}",
            Str(&ci.method),
            Num(ci.level),
            optional(ci.low),
            optional(ci.high),
            rank(ci.ranks[0]),
            rank(ci.ranks[1]),
            Num(ci.coverage),
        ),
        None => "null".to_string(),
    };
    let verdict = match latency.verdict {
        Some(Verdict::Pass) => "\"pass\"",
        Some(Verdict::Fail) => "\"fail\"",
        Some(Verdict::Undecided) => "\"undecided\"",
        None => "null",
    };
    format!(
        "{{\"quantile\":{},\"total\":{},\"excluded\":{},\"estimate\":{},\"ci\":{ci},\"min_runs\":{},\"max_latency\":{},\"verdict\":{verdict}}}",
        Num(latency.quantile),
        latency.total,
        latency.excluded,
        optional(latency.estimate),
        latency.min_runs,
        optional(latency.max_latency),
    )
}

/// Totals, as `serde_json::to_string(totals)` writes them, up to number spelling.
pub(crate) fn totals(totals: &Totals) -> io::Result<String> {
    let usage = serde_or(&totals.usage, totals.usage.is_empty(), "{}")?;
    // Only totals with runs that never started have `not_run`, as serde leaves it out.
    let not_run = match totals.not_run {
        0 => String::new(),
        count => format!(",\"not_run\":{count}"),
    };
    Ok(format!(
        "{{\"passes\":{},\"fails\":{},\"errors\":{},\"count\":{},\"pass_rate\":{},\"cost\":{},\
         \"usage\":{usage},\"retries\":{}{not_run}}}",
        totals.passes,
        totals.fails,
        totals.errors,
        totals.count,
        Num(totals.pass_rate),
        Num(totals.cost),
        totals.retries,
    ))
}

/// The start of the session report, up to its head slot: `{"schema":…,"tool":"probtest",
/// "version":…,"created":…,"session":…,"stats_config":{…},` and a newline.
pub(crate) fn header(created: &str, session: &str, stats: &StatsConfig) -> io::Result<String> {
    Ok(format!(
        "{{\"schema\":{SCHEMA_VERSION},\"tool\":\"probtest\",\"version\":{},\"created\":{},\"session\":{},\"stats_config\":{},\n",
        Str(env!("CARGO_PKG_VERSION")),
        Str(created),
        Str(session),
        serde_json::to_string(stats).map_err(io::Error::other)?,
    ))
}

/// What the session report's head slot holds, the fields that change with any run:
/// `"runs":…,"exit_status":…,"totals":{…},"aggregates":[…],"warnings":[…]`. The warnings of
/// totals that overflowed are added when `warnings` lacks them: they follow the totals, and a
/// head patched in place gets its other warnings from where they were kept.
pub(crate) fn head(
    runs: u32,
    exit_status: i32,
    totals: &Totals,
    aggregates: &[Aggregate],
    texts: Option<&Explanations>,
    analysis: &str,
    warnings: &[String],
) -> io::Result<String> {
    let overflowed: Vec<String> = totals
        .overflow_warnings()
        .into_iter()
        .filter(|warning| !warnings.contains(warning))
        .collect();
    let warnings: Cow<'_, [String]> = if overflowed.is_empty() {
        Cow::Borrowed(warnings)
    } else {
        Cow::Owned(warnings.iter().cloned().chain(overflowed).collect())
    };
    let totals = self::totals(totals)?;
    let aggregates: String = match texts {
        Some(texts) => serde(&explained_aggregates(aggregates, texts))?,
        None => crate::format::aggregate::aggregates_json(aggregates),
    };
    let warnings = serde_or(&warnings[..], warnings.is_empty(), "[]")?;
    Ok(format!(
        "\"runs\":{runs},\"exit_status\":{exit_status},\"totals\":{totals},\
         \"aggregates\":{aggregates}{analysis},\"warnings\":{warnings}"
    ))
}

/// The analysis' fields of a report's head after its aggregates, `,"comparisons":[…],
/// "baseline":…`, for a
/// report that was analysed; empty for one kept run by run, which has none yet. Either way
/// `,"stopping":{…}` follows when `PROB_STOP` is set.
pub(crate) fn analysis(
    report: &Report,
    analysed: bool,
    texts: Option<&Explanations>,
) -> io::Result<String> {
    // What early stopping saved follows every result too, but needs no analysis.
    let stopping = match &report.stopping {
        Some(stopping) => format!(",\"stopping\":{}", serde(stopping)?),
        None => String::new(),
    };
    if !analysed {
        return Ok(stopping);
    }
    let Some(texts) = texts else {
        return Ok(format!(
            ",\"comparisons\":{},\"baseline\":{}{stopping}",
            serde(&report.comparisons)?,
            serde(&report.baseline)?
        ));
    };
    Ok(format!(
        ",\"comparisons\":{},\"baseline\":{}{stopping}",
        serde(&explained_list(&report.comparisons, &texts.comparisons))?,
        serde(&explained_baseline(report.baseline.as_ref(), texts))?
    ))
}

/// The whole report as the model writes it, with every text of an [`Explanations`].
#[derive(Serialize)]
struct ReportView<'a> {
    schema: u32,
    tool: &'a str,
    version: &'a str,
    created: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session: &'a Option<String>,
    runs: u32,
    exit_status: i32,
    stats_config: &'a StatsConfig,
    totals: &'a Totals,
    rows: Vec<RowView<'a>>,
    aggregates: Vec<AggregateView<'a>>,
    comparisons: Vec<Explained<'a, Comparison>>,
    baseline: Option<BaselineView<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopping: &'a Option<Stopping>,
    warnings: &'a [String],
    #[serde(skip_serializing_if = "<[BinaryNotRun]>::is_empty")]
    binaries_not_run: &'a [BinaryNotRun],
    records: &'a [Record],
}

/// The whole report file: pretty JSON and a newline, with the texts of `texts` when there are
/// any. `store::write_report` writes it, and a live report's rebuild when it is final.
pub(crate) fn whole(report: &Report, texts: Option<&Explanations>) -> io::Result<String> {
    let mut text = match texts {
        None => serde_json::to_string_pretty(report),
        Some(texts) => serde_json::to_string_pretty(&ReportView {
            schema: report.schema,
            tool: &report.tool,
            version: &report.version,
            created: &report.created,
            session: &report.session,
            runs: report.runs,
            exit_status: report.exit_status,
            stats_config: &report.stats_config,
            totals: &report.totals,
            rows: report
                .rows
                .iter()
                .enumerate()
                .map(|(index, row)| explained_row(row, texts.rows.get(index)))
                .collect(),
            aggregates: explained_aggregates(&report.aggregates, texts),
            comparisons: explained_list(&report.comparisons, &texts.comparisons),
            baseline: explained_baseline(report.baseline.as_ref(), texts),
            stopping: &report.stopping,
            warnings: &report.warnings,
            binaries_not_run: &report.binaries_not_run,
            records: &report.records,
        }),
    }
    .map_err(io::Error::other)?;
    text.push('\n');
    Ok(text)
}

impl CaseInfo {
    /// The start of the JSON of any row of this case: `{`, the case's fields, and a comma.
    pub(crate) fn row_prefix(&self) -> io::Result<String> {
        let mut text = crate::format::store_lines::case_info(self)?;
        text.pop();
        text.push(',');
        Ok(text)
    }
}

impl Row {
    /// The rest of the row's JSON after [`CaseInfo::row_prefix`]: its counts and verdict.
    pub(crate) fn tail_json(&self) -> io::Result<String> {
        row_tail(self, None)
    }

    /// [`Row::tail_json`] with the row's explanations.
    pub(crate) fn tail_json_explained(
        &self,
        texts: Option<&RowExplanations>,
    ) -> io::Result<String> {
        row_tail(self, texts)
    }
}

impl Report {
    /// Reads a report written by probtest (any schema up to [`SCHEMA_VERSION`]) or by
    /// pytest-probability (`--prob-json`), refusing what it cannot read faithfully: text that is
    /// neither, or a report of a newer schema than this version knows. A peer's report is
    /// rebuilt from its records, with its rows' gates and its interval settings.
    pub fn from_json(text: &str) -> Result<Report, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
        if crate::format::peer::is_peer_report(&value) {
            return crate::format::peer::from_peer(value);
        }
        if value.get("tool").and_then(|t| t.as_str()) != Some("probtest") {
            return Err(
                "not a probtest report (no `\"tool\": \"probtest\"`) nor a pytest-probability one (no `rows` and `records`)"
                    .to_string(),
            );
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
        let mut report: Report = serde_json::from_value(value)
            .map_err(|e| format!("not a complete probtest report ({e})"))?;
        if schema <= 3 {
            crate::format::aggregate::count_legacy_inputs(&mut report);
        }
        Ok(report)
    }
}

#[cfg(test)]
mod header_tests {
    use super::*;

    #[test]
    fn the_header_and_head_read_as_a_report_start() {
        let stats = StatsConfig {
            min_rate: Some(0.5),
            ..StatsConfig::default()
        };
        let header = header("2024-01-02T03:04:05Z", "nextest \"a\"\\b", &stats).expect("header");
        assert!(header.ends_with(",\n"), "{header}");
        let head = head(0, 0, &Totals::default(), &[], None, "", &[]).expect("head");
        let text = format!("{header}{head},\"rows\":[],\"records\":[]}}");
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON: {e}\n{text}"));
        assert_eq!(value["schema"], serde_json::json!(SCHEMA_VERSION));
        assert_eq!(value["tool"], "probtest");
        assert_eq!(value["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(value["created"], "2024-01-02T03:04:05Z");
        assert_eq!(value["session"], "nextest \"a\"\\b");
        assert_eq!(
            value["stats_config"],
            serde_json::to_value(&stats).expect("stats")
        );
        // The session survives reading the report back.
        let report = Report::from_json(&text).expect("a report");
        assert_eq!(report.session.as_deref(), Some("nextest \"a\"\\b"));
    }
}
