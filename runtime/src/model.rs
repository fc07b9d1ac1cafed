//! The model of a session's results: records in, rows and totals out. The terminal summary and
//! the JSON report are both rendered from a [`Report`], never recomputed separately.
//!
//! Field names follow the Python plugin's report (`created`, `runs`, `exit_status`, `totals`,
//! `rows`, `records`), so the two tools can read each other's reports.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::Path;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::{ErrorPolicy, GateResult, GateSpec, Interval, Rule, StatsConfig};
use crate::status::{status_text, Outcome, Status};
use crate::usage::TokenUsage;

/// The version of the report layout; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole report: what the JSON file holds and what the summary shows.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// Layout version, [`SCHEMA_VERSION`] when written by this version.
    pub schema: u32,
    /// Always `"probtest"`.
    pub tool: String,
    /// The probtest version that wrote the report.
    pub version: String,
    /// When the report was built, RFC 3339 in UTC.
    pub created: String,
    /// The largest number of runs configured for any case.
    pub runs: u32,
    /// 0 when the session passes, 1 when it fails: an ungated case with a failed or errored
    /// run, or a gate that FAILs (or is UNDECIDED under the `fail` policy).
    pub exit_status: i32,
    /// The statistics settings the rows were judged with.
    #[serde(default)]
    pub stats_config: StatsConfig,
    /// Counts, cost and usage over every run.
    pub totals: Totals,
    /// One row per case, in source order.
    pub rows: Vec<Row>,
    /// Per-function means of the metrics.
    #[serde(default)]
    pub aggregates: Vec<Aggregate>,
    /// Gates that cannot pass even if every run passes, one line each.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// Every run, in row order then run order.
    pub records: Vec<Record>,
}

/// A function's metrics: the mean over its cases that have enough runs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Aggregate {
    /// The bench function.
    pub function: String,
    /// Its module.
    pub module: String,
    /// Mean of each metric over the cases that have at least k runs.
    pub metrics: OrderedMap<f64>,
    /// Per metric, the cases left out for having fewer than k runs.
    pub left_out: OrderedMap<u64>,
}

/// Counts, cost and usage over a set of runs.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    /// Runs that passed.
    pub passes: u64,
    /// Runs whose assertion failed.
    pub fails: u64,
    /// Runs that errored.
    pub errors: u64,
    /// All runs.
    pub count: u64,
    /// Passes as a percentage of all runs (`70.0`).
    pub pass_rate: f64,
    /// Total cost: `record_cost` amounts plus every usage entry's cost.
    pub cost: f64,
    /// Token usage per model, in order of first appearance.
    pub usage: OrderedMap<UsageTotals>,
    /// Runs that were retries of an earlier attempt (nextest `--retries`): kept in `records`,
    /// left out of every count so that a retried flake does not bias its case's rate.
    #[serde(default)]
    pub retries: u64,
}

/// Who a case is: where its function lives and which values it runs with.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
    #[serde(default, rename = "gate_spec", skip_serializing_if = "Option::is_none")]
    pub gate: Option<GateSpec>,
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
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.package, &self.module, &self.case)
    }

    /// Source order: package, module, line, function, then the case's position.
    fn order_key(&self) -> (&str, &str, u32, &str, u32, &str) {
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
    fn unknown(record: &Record) -> CaseInfo {
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
        }
    }
}

/// One case: its identity, its counts and its verdict.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Who the case is.
    #[serde(flatten)]
    pub info: CaseInfo,
    /// Runs that passed.
    pub passes: u64,
    /// Runs whose assertion failed.
    pub fails: u64,
    /// Runs that errored.
    pub errors: u64,
    /// Runs reported.
    pub total: u64,
    /// Passes as a percentage of `total`.
    pub pass_rate: f64,
    /// The verdict word.
    pub status: Status,
    /// Total cost of the case's runs.
    pub cost: f64,
    /// Token usage per model.
    pub usage: OrderedMap<UsageTotals>,
    /// The interval on the case's pass probability, unrounded.
    #[serde(default)]
    pub ci: Option<Interval>,
    /// The case's gate and its verdict, when it has one.
    #[serde(default)]
    pub gate: Option<GateResult>,
    /// The metrics asked for; a case with fewer than k runs has none for k.
    #[serde(default)]
    pub metrics: OrderedMap<f64>,
}

/// Aggregated token usage of one model.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct UsageTotals {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Input tokens served from cache.
    pub cached_input_tokens: u64,
    /// What the calls cost.
    pub cost: f64,
}

/// One run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// The row id of the run's case. Borrowed from the generated code in the process that ran
    /// it, so that recording a run allocates no strings for its identity.
    pub case: Cow<'static, str>,
    /// The package of the run's case.
    pub package: Cow<'static, str>,
    /// The module of the run's case.
    pub module: Cow<'static, str>,
    /// 1-based run number.
    pub run: u32,
    /// 1 for the first attempt; 2 and up for nextest retries, which rows do not count.
    #[serde(default = "first_attempt")]
    pub attempt: u32,
    /// How the run ended.
    pub outcome: Outcome,
    /// First line of the failure or error message.
    pub message: Option<String>,
    /// `file:line:column` of the panic, when there was one.
    pub location: Option<String>,
    /// Seconds the body took.
    pub elapsed: f64,
    /// The run's total cost, usage included.
    pub cost: f64,
    /// Every usage entry recorded in the run.
    pub usage: Vec<TokenUsage>,
}

fn first_attempt() -> u32 {
    1
}

impl Record {
    /// The key of the record's case, as [`CaseInfo::key`] gives it.
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.package, &self.module, &self.case)
    }

    /// Whether the run is a retry, which rows and totals do not count.
    pub fn is_retry(&self) -> bool {
        self.attempt > 1
    }
}

/// The running counts rows and totals share, borrowed from either.
struct Tally<'a> {
    passes: &'a mut u64,
    fails: &'a mut u64,
    errors: &'a mut u64,
    count: &'a mut u64,
    cost: &'a mut f64,
    usage: &'a mut OrderedMap<UsageTotals>,
}

impl Tally<'_> {
    fn add(self, record: &Record) {
        match record.outcome {
            Outcome::Pass => *self.passes += 1,
            Outcome::Fail => *self.fails += 1,
            Outcome::Error => *self.errors += 1,
        }
        *self.count += 1;
        *self.cost += record.cost;
        for usage in &record.usage {
            self.usage.entry(&usage.model).add(usage);
        }
    }

    /// A provisional record is an error with no cost or usage.
    fn retract_provisional(self) {
        *self.errors = self.errors.saturating_sub(1);
        *self.count = self.count.saturating_sub(1);
    }
}

impl Row {
    /// An empty row for `info`.
    pub(crate) fn new(info: CaseInfo) -> Row {
        Row {
            info,
            passes: 0,
            fails: 0,
            errors: 0,
            total: 0,
            pass_rate: 0.0,
            status: Status::Error,
            cost: 0.0,
            usage: OrderedMap::default(),
            ci: None,
            gate: None,
            metrics: OrderedMap::default(),
        }
    }

    fn tally(&mut self) -> Tally<'_> {
        Tally {
            passes: &mut self.passes,
            fails: &mut self.fails,
            errors: &mut self.errors,
            count: &mut self.total,
            cost: &mut self.cost,
            usage: &mut self.usage,
        }
    }

    /// Counts a first-attempt record; retries are not counted. Call [`Row::settle`] after.
    pub(crate) fn add(&mut self, record: &Record) {
        if !record.is_retry() {
            self.tally().add(record);
        }
    }

    /// Takes back a provisional record: an error with no cost or usage, counted while its run
    /// was in flight. Call [`Row::settle`] after.
    pub(crate) fn retract_provisional(&mut self) {
        self.tally().retract_provisional();
    }

    /// Recomputes everything that derives from the counts: rate, status, interval, gate and
    /// metrics.
    pub(crate) fn settle(&mut self, config: &StatsConfig) {
        self.pass_rate = pass_rate(self.passes, self.total);
        self.status = Status::from_counts(self.passes, self.fails, self.errors);
        self.ci = config.interval.interval(self.passes, self.total);
        self.gate = self
            .effective_gate(config)
            .map(|gate| gate.judge(config, self.passes, self.fails, self.errors));
        self.metrics = OrderedMap(
            config
                .metrics
                .iter()
                .filter_map(|metric| Some((metric.name(), metric.value(self.passes, self.total)?)))
                .collect(),
        );
    }

    /// The case's own gate, else the session's `min_rate`.
    pub(crate) fn effective_gate(&self, config: &StatsConfig) -> Option<GateSpec> {
        effective_gate(self.info.gate, config)
    }

    /// Whether this row fails the session: a failed or errored run of an ungated case; for a
    /// gated case, a failing verdict, or errors counted as the harness breaking.
    pub fn fails_session(&self, config: &StatsConfig) -> bool {
        match &self.gate {
            Some(gate) => {
                gate.fails(config.undecided)
                    || (self.errors > 0 && config.errors == ErrorPolicy::Count)
            }
            None => self.fails + self.errors > 0,
        }
    }
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
        crate::json::row_tail(self)
    }
}

impl Totals {
    fn tally(&mut self) -> Tally<'_> {
        Tally {
            passes: &mut self.passes,
            fails: &mut self.fails,
            errors: &mut self.errors,
            count: &mut self.count,
            cost: &mut self.cost,
            usage: &mut self.usage,
        }
    }

    /// Counts a record; a retry only increments `retries`.
    pub(crate) fn add(&mut self, record: &Record) {
        if record.is_retry() {
            self.retries += 1;
        } else {
            self.tally().add(record);
            self.pass_rate = pass_rate(self.passes, self.count);
        }
    }

    /// Takes back a provisional record, as [`Row::retract_provisional`] does.
    pub(crate) fn retract_provisional(&mut self) {
        self.tally().retract_provisional();
        self.pass_rate = pass_rate(self.passes, self.count);
    }
}

impl UsageTotals {
    pub(crate) fn add(&mut self, usage: &TokenUsage) {
        self.input_tokens += usage.input_tokens;
        self.output_tokens += usage.output_tokens;
        self.cached_input_tokens += usage.cached_input_tokens;
        self.cost += usage.cost;
    }
}

fn pass_rate(passes: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * passes as f64 / total as f64
    }
}

impl Report {
    /// Builds rows and totals from records. `cases` describes the cases the records belong to;
    /// a case without records gets no row, and a record of a case missing from `cases` still
    /// counts, under a row that knows only its id.
    pub fn build(
        cases: impl IntoIterator<Item = CaseInfo>,
        records: Vec<Record>,
        config: &StatsConfig,
    ) -> Report {
        let with_nothing = records.into_iter().map(|record| (record, ())).collect();
        Report::build_with(cases, with_nothing, config).0
    }

    /// [`Report::build`] for records that each carry a value along, returned in the order the
    /// report lists the records.
    pub(crate) fn build_with<T>(
        cases: impl IntoIterator<Item = CaseInfo>,
        mut records: Vec<(Record, T)>,
        config: &StatsConfig,
    ) -> (Report, Vec<T>) {
        let cases: Vec<CaseInfo> = cases.into_iter().collect();
        let known: HashMap<(&str, &str, &str), &CaseInfo> =
            cases.iter().map(|info| (info.key(), info)).collect();
        let mut rows: Vec<Row> = Vec::new();
        {
            // Keys borrow from the records: nothing is allocated per record.
            let mut row_of: HashMap<(&str, &str, &str), usize> = HashMap::new();
            for (record, _) in &records {
                let key = record.key();
                let index = *row_of.entry(key).or_insert_with(|| {
                    let info = known
                        .get(&key)
                        .map_or_else(|| CaseInfo::unknown(record), |info| (*info).clone());
                    rows.push(Row::new(info));
                    rows.len() - 1
                });
                rows[index].add(record);
            }
        }
        rows.sort_by(|a, b| a.info.order_key().cmp(&b.info.order_key()));
        for row in &mut rows {
            row.settle(config);
        }
        let position: HashMap<(&str, &str, &str), usize> = rows
            .iter()
            .enumerate()
            .map(|(position, row)| (row.info.key(), position))
            .collect();
        records.sort_by_cached_key(|(record, _)| {
            (position[&record.key()], record.run, record.attempt)
        });
        // Totals follow the sorted records, so models are listed in the order rows first use them.
        let mut totals = Totals::default();
        for (record, _) in &records {
            totals.add(record);
        }
        let (records, carried) = records.into_iter().unzip();
        let report = Report {
            schema: SCHEMA_VERSION,
            tool: "probtest".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            created: rfc3339_now(),
            runs: rows.iter().map(|row| row.info.runs).max().unwrap_or(0),
            exit_status: i32::from(rows.iter().any(|row| row.fails_session(config))),
            stats_config: config.clone(),
            totals,
            aggregates: aggregates(&rows, config),
            warnings: rows
                .iter()
                .filter_map(|row| infeasible(&row.info, config))
                .collect(),
            rows,
            records,
        };
        (report, carried)
    }

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

    /// The cases described by the rows, for rebuilding a report from its records.
    pub fn cases(&self) -> impl Iterator<Item = &CaseInfo> {
        self.rows.iter().map(|row| &row.info)
    }

    /// The status text of a row (`FLAKY (1 errored)`), empty for a clean pass.
    pub fn row_status_text(row: &Row) -> String {
        status_text(row.passes, row.fails, row.errors)
    }

    /// Writes the report as pretty JSON: parent directories created, a temporary file renamed
    /// into place so that readers never see half a report.
    pub fn write_atomically(&self, path: &Path) -> io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        text.push('\n');
        crate::report_file::write_atomically(path, text.as_bytes())
    }
}

/// `cases` cases of `runs` runs each, with mixed outcomes, cost and usage on every run.
pub(crate) fn synthetic_records(cases: usize, runs: u32) -> (Vec<CaseInfo>, Vec<Record>) {
    let mut infos = Vec::with_capacity(cases);
    let mut records = Vec::with_capacity(cases * runs as usize);
    for case in 0..cases {
        let info = CaseInfo {
            case: format!("triage::ticket {case}-Terse"),
            package: "evals".to_string(),
            function: "bench_triage".to_string(),
            module: format!("evals::suite{}", case % 7),
            file: "tests/evals.rs".to_string(),
            line: 10 + (case % 50) as u32,
            case_id: format!("ticket {case}-Terse"),
            index: case as u32,
            runs,
            params: OrderedMap(vec![("text".to_string(), format!("\"ticket {case}\""))]),
            gate: None,
        };
        for run in 1..=runs {
            let outcome = match (case as u32 + run) % 10 {
                0 => Outcome::Fail,
                7 => Outcome::Error,
                _ => Outcome::Pass,
            };
            let usage = TokenUsage {
                model: ["m-small", "m-large"][case % 2].to_string(),
                input_tokens: 1_200,
                output_tokens: 80,
                cached_input_tokens: 640,
                cost: 0.0002,
            };
            records.push(Record {
                case: info.case.clone().into(),
                package: info.package.clone().into(),
                module: info.module.clone().into(),
                run,
                attempt: 1,
                outcome,
                message: (outcome != Outcome::Pass)
                    .then(|| "assertion `left == right` failed".to_string()),
                location: (outcome != Outcome::Pass).then(|| "tests/evals.rs:42:5".to_string()),
                elapsed: 0.012,
                cost: 0.0002,
                usage: vec![usage],
            });
        }
        infos.push(info);
    }
    (infos, records)
}

/// The per-function means of the metrics, for functions with at least one case.
fn aggregates(rows: &[Row], config: &StatsConfig) -> Vec<Aggregate> {
    if config.metrics.is_empty() {
        return Vec::new();
    }
    let mut functions: Vec<(&str, &str, Vec<&Row>)> = Vec::new();
    for row in rows {
        match functions.iter_mut().find(|(function, module, _)| {
            *function == row.info.function && *module == row.info.module
        }) {
            Some((_, _, members)) => members.push(row),
            None => functions.push((&row.info.function, &row.info.module, vec![row])),
        }
    }
    functions
        .into_iter()
        .map(|(function, module, members)| {
            let mut metrics = OrderedMap::default();
            let mut left_out = OrderedMap::default();
            for metric in &config.metrics {
                let name = metric.name();
                let values: Vec<f64> = members
                    .iter()
                    .filter_map(|row| row.metrics.get(&name).copied())
                    .collect();
                if !values.is_empty() {
                    metrics.0.push((
                        name.clone(),
                        values.iter().sum::<f64>() / values.len() as f64,
                    ));
                }
                left_out
                    .0
                    .push((name, (members.len() - values.len()) as u64));
            }
            Aggregate {
                function: function.to_string(),
                module: module.to_string(),
                metrics,
                left_out,
            }
        })
        .collect()
}

/// The warning for a gate that cannot pass with the case's runs even if every run passes:
/// `classify::x: min_rate=0.9 at 95% needs >=36 runs; this case has 10`.
pub(crate) fn infeasible(info: &CaseInfo, config: &StatsConfig) -> Option<String> {
    if info.runs == 0 {
        return None;
    }
    let gate = effective_gate(info.gate, config)?;
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
            crate::render::percent_text(gate.interval(config).level),
            info.runs
        ),
        Rule::MinPasses(bar) => format!(
            "{}: min_passes={bar} needs >={bar} runs; this case has {}",
            info.case, info.runs
        ),
    })
}

/// A map that keeps insertion order, serialized as a JSON object.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V: Default> OrderedMap<V> {
    pub(crate) fn entry(&mut self, key: &str) -> &mut V {
        let position = match self.0.iter().position(|(k, _)| k == key) {
            Some(position) => position,
            None => {
                self.0.push((key.to_string(), V::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[position].1
    }
}

impl<V> OrderedMap<V> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = access.next_entry()? {
                    entries.push(entry);
                }
                Ok(OrderedMap(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}

/// The current time as `2026-11-29T09:31:48Z`.
pub(crate) fn rfc3339_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339(seconds)
}

fn rfc3339(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let seconds_of_day = unix_seconds % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn info(case: &str) -> CaseInfo {
        let (short, case_id) = case.split_once("::").unwrap_or((case, case));
        CaseInfo {
            case: case.to_string(),
            package: "fixture".into(),
            module: "evals".into(),
            function: format!("bench_{short}"),
            case_id: case_id.to_string(),
            file: "tests/evals.rs".to_string(),
            line: if short == "classify" { 10 } else { 20 },
            index: u32::from(case_id.as_bytes().first().copied().unwrap_or(0)),
            runs: 10,
            params: OrderedMap(vec![("text".to_string(), format!("{case_id:?}"))]),
            gate: None,
        }
    }

    pub(crate) fn record(
        case: &str,
        run: u32,
        outcome: Outcome,
        cost: f64,
        usage: Vec<TokenUsage>,
    ) -> Record {
        Record {
            case: case.to_string().into(),
            package: "fixture".into(),
            module: "evals".into(),
            run,
            attempt: 1,
            outcome,
            message: (outcome != Outcome::Pass).then(|| format!("{outcome:?} in run {run}")),
            location: None,
            elapsed: 0.001,
            cost,
            usage,
        }
    }

    /// A report over `records`, every case described.
    pub(crate) fn build(records: Vec<Record>) -> Report {
        let infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
        Report::build(infos, records, &StatsConfig::default())
    }

    #[test]
    fn a_row_is_its_case_prefix_followed_by_its_tail() {
        use crate::stats::Metric;
        let usage = TokenUsage {
            model: "gpt \"mini\"".into(),
            input_tokens: 12,
            cost: 0.25,
            ..Default::default()
        };
        let mut records = vec![
            record("classify::\"quoted\" é", 1, Outcome::Pass, 0.5, vec![usage]),
            record("classify::\"quoted\" é", 2, Outcome::Fail, 0.0, vec![]),
        ];
        records.push(record("plain", 1, Outcome::Error, 0.0, vec![]));
        let stats = StatsConfig {
            min_rate: Some(0.5),
            metrics: vec![Metric::PassAll(2)],
            ..StatsConfig::default()
        };
        let mut infos: Vec<CaseInfo> = records.iter().map(|r| info(&r.case)).collect();
        for info in infos.iter_mut().filter(|info| info.case != "plain") {
            info.gate = Some(GateSpec {
                rule: Rule::MinPasses(1),
                method: None,
                level: Some(0.9),
                prior: None,
            });
        }
        let report = Report::build(infos, records, &stats);
        assert!(report.rows.iter().any(|row| row.info.gate.is_some()));
        for row in &report.rows {
            let whole: serde_json::Value = serde_json::to_value(row).expect("row serializes");
            let parts = row.info.row_prefix().expect("prefix") + &row.tail_json().expect("tail");
            let parts: serde_json::Value = serde_json::from_str(&parts).expect("parts are JSON");
            assert_eq!(parts, whole);
        }
    }

    #[test]
    fn rows_and_totals_come_from_records() {
        let mut records = Vec::new();
        for run in 1..=4 {
            let outcome = if run <= 3 {
                Outcome::Pass
            } else {
                Outcome::Fail
            };
            records.push(record("classify::b", run, outcome, 0.5, vec![]));
        }
        records.push(record("classify::a", 1, Outcome::Error, 0.0, vec![]));
        records.push(record("classify::a", 2, Outcome::Pass, 0.0, vec![]));
        let report = build(records);
        assert_eq!(report.rows.len(), 2);
        // Rows follow source order (line, then case index), not completion order.
        assert_eq!(report.rows[0].info.case, "classify::a");
        let b = &report.rows[1];
        assert_eq!((b.passes, b.fails, b.errors, b.total), (3, 1, 0, 4));
        assert_eq!(b.pass_rate, 75.0);
        assert_eq!(b.status, Status::Flaky);
        assert_eq!(b.cost, 2.0);
        assert_eq!(report.rows[0].status, Status::Errored);
        assert_eq!((report.totals.passes, report.totals.count), (4, 6));
        assert_eq!(report.exit_status, 1);
        let cases: Vec<(&str, u32)> = report
            .records
            .iter()
            .map(|r| (r.case.as_ref(), r.run))
            .collect();
        assert_eq!(cases[0], ("classify::a", 1));
        assert_eq!(cases[5], ("classify::b", 4));
    }

    #[test]
    fn only_probtest_reports_of_a_known_schema_are_read() {
        let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
        let text = serde_json::to_string(&report).expect("serializes");
        assert_eq!(Report::from_json(&text), Ok(report));
        let newer = text.replacen("\"schema\":1", "\"schema\":99", 1);
        assert_eq!(
            Report::from_json(&newer).unwrap_err(),
            "written by a newer probtest (report schema 99; this version reads up to 1)"
        );
        assert!(Report::from_json("{\"rows\": []}")
            .unwrap_err()
            .starts_with("not a probtest report"));
        assert!(Report::from_json("[1, 2")
            .unwrap_err()
            .starts_with("not valid JSON"));
        let partial = r#"{"tool": "probtest", "schema": 1}"#;
        assert!(Report::from_json(partial)
            .unwrap_err()
            .starts_with("not a complete probtest report"));
    }

    #[test]
    fn retries_are_kept_but_not_counted() {
        let mut retry = record("classify::a", 1, Outcome::Pass, 0.5, vec![]);
        retry.attempt = 2;
        let report = build(vec![
            record("classify::a", 1, Outcome::Fail, 0.0, vec![]),
            retry,
        ]);
        let row = &report.rows[0];
        assert_eq!((row.passes, row.fails, row.total, row.cost), (0, 1, 1, 0.0));
        assert_eq!(report.totals.retries, 1);
        assert_eq!(report.totals.count, 1);
        assert_eq!(report.records.len(), 2);
        assert_eq!(report.records[1].attempt, 2);
        let text = crate::render::summary(&report, &crate::render::Options::default());
        assert!(
            text.contains("Overall: 0/1 passed (0%), 1 retry not counted"),
            "{text}"
        );
    }

    #[test]
    fn a_provisional_record_can_be_taken_back() {
        let mut row = Row::new(info("classify::a"));
        let mut totals = Totals::default();
        let provisional = record("classify::a", 1, Outcome::Error, 0.0, vec![]);
        let config = StatsConfig::default();
        row.add(&provisional);
        row.settle(&config);
        totals.add(&provisional);
        assert_eq!(row.status, Status::Error);
        row.retract_provisional();
        totals.retract_provisional();
        let done = record("classify::a", 1, Outcome::Pass, 0.25, vec![]);
        row.add(&done);
        row.settle(&config);
        totals.add(&done);
        assert_eq!(
            (row.passes, row.errors, row.total, row.status),
            (1, 0, 1, Status::Pass)
        );
        assert_eq!((totals.passes, totals.errors, totals.count), (1, 0, 1));
    }

    #[test]
    fn json_round_trips_and_keeps_the_peer_field_names() {
        let usage = TokenUsage {
            model: "m-small".into(),
            input_tokens: 5,
            cost: 0.25,
            ..Default::default()
        };
        let report = build(vec![record(
            "classify::a",
            1,
            Outcome::Pass,
            0.25,
            vec![usage],
        )]);
        let json = serde_json::to_value(&report).expect("serializes");
        for key in [
            "schema",
            "created",
            "runs",
            "exit_status",
            "totals",
            "rows",
            "records",
        ] {
            assert!(json.get(key).is_some(), "missing {key}");
        }
        for key in [
            "case",
            "passes",
            "fails",
            "errors",
            "total",
            "pass_rate",
            "status",
            "cost",
            "usage",
            "params",
        ] {
            assert!(json["rows"][0].get(key).is_some(), "missing rows[].{key}");
        }
        assert_eq!(json["totals"]["usage"]["m-small"]["input_tokens"], 5);
        assert_eq!(json["rows"][0]["params"]["text"], "\"a\"");
        let back: Report = serde_json::from_value(json).expect("deserializes");
        assert_eq!(back, report);
    }

    #[test]
    fn timestamps_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_858_308), "2026-11-28T09:31:48Z");
    }

    #[test]
    fn atomic_write_creates_parents_and_leaves_no_temp_file() {
        let dir = std::env::temp_dir().join(format!("probtest-model-{}", std::process::id()));
        let path = dir.join("nested/deeper/report.json");
        let report = build(vec![record("classify::a", 1, Outcome::Pass, 0.0, vec![])]);
        report.write_atomically(&path).expect("written");
        let text = std::fs::read_to_string(&path).expect("readable");
        assert!(text.ends_with("}\n"));
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("parent"))
            .expect("listable")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        let _ = std::fs::remove_dir_all(dir);
    }
}
