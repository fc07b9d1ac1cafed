//! The session model: records in, rows and totals out. The terminal summary, the JSON report
//! and every later sink are rendered from one [`Report`], never recomputed separately.
//!
//! Layer: model. Imports only `crate::types`; no I/O, no JSON, no terminal text.
//!
//! Field names follow the Python plugin's report (`created`, `runs`, `exit_status`, `totals`,
//! `rows`, `records`), so the two tools can read each other's reports.

use crate::model::analysis::{BaselineResult, Comparison, Estimate, MetricAggregate};
use crate::model::case::{effective_gate, CaseInfo};
use crate::model::not_run::BinaryNotRun;
use crate::model::record::Record;
use crate::model::stops::{Stop, Stopping};
use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencyResult;
use crate::types::stats::stopping::judged_gate;
use crate::types::stats::{ErrorPolicy, GateResult, GateSpec, Interval, StatsConfig};
use crate::types::status::{status_text, Outcome, Status};
use crate::types::sum::{is_saturated, saturating_add};
use crate::types::usage::UsageTotals;

/// The version of the report layout; bumped on incompatible changes. 2: gate verdicts in lower
/// case, an errored run's text in `error`, `cost: null` on a record that spent nothing. 3:
/// `aggregates[]` as pytest-probability writes them (one per function and `Overall`, with the
/// function-level estimate), `comparisons[]` and `baseline`. 4: each aggregate's `metrics` as
/// pytest-probability writes them, an object per metric (`k`, `inputs`, `left_out`, `estimate`,
/// `ci`, `normal_ci`, `suppressed`, `stopped`) in place of a bare mean and the `left_out` map.
pub const SCHEMA_VERSION: u32 = 4;

/// A whole report: what the JSON file holds and what the summary shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Layout version, [`SCHEMA_VERSION`] when written by this version.
    pub schema: u32,
    /// Always `"probtest"`.
    pub tool: String,
    /// The probtest version that wrote the report.
    pub version: String,
    /// When the report was built, RFC 3339 in UTC.
    pub created: String,
    /// The session the report covers, when it was kept for a session (`PROB_JSON`); a report
    /// built from records alone has none.
    pub session: Option<String>,
    /// The largest number of runs configured for any case.
    pub runs: u32,
    /// 0 when the session passes, 1 when it fails: an ungated case with a failed or errored
    /// run, or a gate that FAILs (or is UNDECIDED under the `fail` policy).
    pub exit_status: i32,
    /// The statistics settings the rows were judged with.
    pub stats_config: StatsConfig,
    /// Counts, cost and usage over every run.
    pub totals: Totals,
    /// One row per case, in source order.
    pub rows: Vec<Row>,
    /// Per-function means of the metrics.
    pub aggregates: Vec<Aggregate>,
    /// Each compared argument's arms against its baseline arm (`PROB_COMPARE`, `compare`).
    pub comparisons: Vec<Comparison>,
    /// This session against an earlier report (`PROB_BASELINE`).
    pub baseline: Option<BaselineResult>,
    /// What early stopping saved (`PROB_STOP`); none when it is off.
    pub stopping: Option<Stopping>,
    /// One line each: gates that cannot pass even if every run passes, and totals that
    /// overflowed and stopped at the largest number.
    pub warnings: Vec<String>,
    /// The test binaries none of whose expected runs started (`cargo probtest run`).
    pub binaries_not_run: Vec<BinaryNotRun>,
    /// Every run, in row order then run order.
    pub records: Vec<Record>,
}

/// A function's (or the session's) figures over its cases: its metrics and, once the session is
/// analysed, the function-level estimate. Fields are pytest-probability's `aggregates[]`;
/// reports of schema 2 held the metric means alone, and those up to schema 3 a bare mean per
/// metric: both still read (`format::report` reads every schema).
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregate {
    /// `function`, or `overall` for the session's.
    pub scope: String,
    /// The function's short name (the row id before `::`), or `Overall`.
    pub name: String,
    /// The bench function.
    pub function: String,
    /// Its module.
    pub module: String,
    /// Each metric over the cases that have at least k runs: its mean, interval and the cases
    /// left out.
    pub metrics: OrderedMap<MetricAggregate>,
    /// The mean pass fraction over the cases, its interval and the runs' correlation.
    pub estimate: Option<Estimate>,
}

/// Counts, cost and usage over a set of runs.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// Total cost: `record_cost` amounts plus every usage entry's cost. A sum that overflows
    /// stays at the largest finite number, with a warning.
    pub cost: f64,
    /// Token usage per model, in order of first appearance.
    pub usage: OrderedMap<UsageTotals>,
    /// Runs that were retries of an earlier attempt (nextest `--retries`): kept in `records`,
    /// left out of every count so that a retried flake does not bias its case's rate.
    pub retries: u64,
    /// Runs the session expected and never started (`cargo probtest run` lists them): in no
    /// count, and never a pass.
    pub not_run: u64,
}

/// One case: its identity, its counts and its verdict.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Who the case is.
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
    pub ci: Option<Interval>,
    /// The case's gate and its verdict, when it has one.
    pub gate: Option<GateResult>,
    /// The metrics asked for; a case with fewer than k runs has none for k.
    pub metrics: OrderedMap<f64>,
    /// How the case stopped early, when `PROB_STOP` skipped runs of it.
    pub stopped: Option<Stop>,
    /// The latency quantile of the case's run times, its interval and the latency gate's
    /// verdict (`max_latency`); reports before it have none.
    pub latency: Option<LatencyResult>,
    /// Runs of the case the session expected and never started (`cargo probtest run` lists
    /// them): not in `total`.
    pub not_run: u64,
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
            // A skipped run is neither a sample nor spent anything: rows note it apart.
            Outcome::Stopped => return,
        }
        *self.count += 1;
        *self.cost = saturating_add(*self.cost, record.cost);
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
            stopped: None,
            latency: None,
            not_run: 0,
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
        if record.is_retry() {
            return;
        }
        if record.outcome == Outcome::Stopped {
            Stop::note(&mut self.stopped);
        } else {
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
        Stop::settle(self);
    }

    /// The case's own gate, else the session's `min_rate`.
    pub(crate) fn effective_gate(&self, config: &StatsConfig) -> Option<GateSpec> {
        // A latency gate needs every run's time, as a margin needs every run.
        let latency_gated = self.info.latency.is_some_and(|l| l.max_latency.is_some());
        judged_gate(
            effective_gate(self.info.gate, config),
            self.judged_by_margin() || latency_gated,
            config,
        )
    }

    /// Whether this row fails the session: a failed or errored run of an ungated case; for a
    /// gated case, a failing verdict, or errors counted as the harness breaking.
    pub fn fails_session(&self, config: &StatsConfig) -> bool {
        if crate::model::latency_gate::fails(self, config.undecided) {
            return true;
        }
        match &self.gate {
            Some(gate) => {
                gate.fails(config.undecided)
                    || (self.errors > 0 && config.errors == ErrorPolicy::Count)
            }
            // A margin judges the function's cases together: a failed run is a sample of it.
            None if self.judged_by_margin() => {
                self.errors > 0 && config.errors == ErrorPolicy::Count
            }
            None => self.fails + self.errors > 0,
        }
    }

    /// Whether the case is in a comparison with a margin, whose verdict judges it.
    pub fn judged_by_margin(&self) -> bool {
        self.info
            .compare
            .as_ref()
            .is_some_and(|c| c.margin.is_some())
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

    /// The totals of `records`, counted in their order.
    pub(crate) fn of_records(records: &[Record]) -> Totals {
        let mut totals = Totals::default();
        for record in records {
            if record.is_retry() {
                totals.retries += 1;
            } else {
                totals.tally().add(record);
            }
        }
        // The rate of the final counts: what `add` leaves after the last record.
        totals.pass_rate = pass_rate(totals.passes, totals.count);
        totals
    }

    /// Takes back a provisional record, as [`Row::retract_provisional`] does.
    pub(crate) fn retract_provisional(&mut self) {
        self.tally().retract_provisional();
        self.pass_rate = pass_rate(self.passes, self.count);
    }

    /// One line for each total that overflowed and stopped at the largest number: the cost, and
    /// each model's tokens. Rows are sums of the same records, so a row that overflowed makes
    /// its totals overflow too.
    pub(crate) fn overflow_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if is_saturated(self.cost) || self.usage.0.iter().any(|(_, u)| u.cost_saturated()) {
            warnings.push(format!(
                "the cost total overflowed and is shown as the largest number ({:e})",
                f64::MAX
            ));
        }
        for (model, usage) in &self.usage.0 {
            if usage.tokens_saturated() {
                warnings.push(format!(
                    "the token total of model {model:?} overflowed and is shown as the largest count ({})",
                    u64::MAX
                ));
            }
        }
        warnings
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
    /// The cases described by the rows, for rebuilding a report from its records.
    pub fn cases(&self) -> impl Iterator<Item = &CaseInfo> {
        self.rows.iter().map(|row| &row.info)
    }

    /// The status text of a row (`FLAKY (1 errored)`), empty for a clean pass.
    pub fn row_status_text(row: &Row) -> String {
        status_text(row.passes, row.fails, row.errors)
    }
}
