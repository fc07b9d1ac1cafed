//! The statistics that tell signal from noise: intervals on a case's pass probability, gates
//! that judge a case by its interval, and the pass^k / pass@k metrics; in submodules, what
//! goes beyond one case: resampling (`resample`), runs clustered by input (`cluster`) and
//! differences between two arms (`paired`).
//!
//! Quantiles of the Beta and normal distributions come from `quantile`; `tests/data` holds
//! reference values computed with scipy and statsmodels (by `scripts/reference_stats.py`) that
//! the tests check every method against.

use std::fmt;
use std::str::FromStr;

pub mod cluster;
pub mod latency;
pub mod paired;
pub mod plan;
mod quantile;
pub mod resample;
pub mod sequence;
mod sort;
pub mod stopping;

use quantile::{beta_quantile, normal_quantile};
pub(crate) use sort::sort_total;

/// How an interval on a pass probability is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// Clopper-Pearson: exact, never narrower than it should be. The default.
    #[default]
    Exact,
    /// Wilson score interval: approximate, narrower, good coverage on average.
    Wilson,
    /// Equal-tailed Bayesian credible interval under a Beta prior.
    Bayes,
    /// The anytime-valid confidence sequence (`sequence`), with the prior as its mixing
    /// distribution: not a method a user picks, but what a rate gate is judged by under
    /// `PROB_STOP=sequential`.
    Sequential,
}

impl Method {
    /// The method's name as settings spell it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Wilson => "wilson",
            Method::Bayes => "bayes",
            Method::Sequential => "sequential",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = String;

    fn from_str(text: &str) -> Result<Method, String> {
        // The settings table's parser, so that the variable and the config accept the same
        // names.
        probtest_settings::parse_method(text).map(Method::from)
    }
}

impl From<probtest_settings::Method> for Method {
    fn from(method: probtest_settings::Method) -> Method {
        match method {
            probtest_settings::Method::Exact => Method::Exact,
            probtest_settings::Method::Wilson => Method::Wilson,
            probtest_settings::Method::Bayes => Method::Bayes,
        }
    }
}

/// The Beta(a, b) prior of the Bayes method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prior {
    /// Prior successes plus one: `a` in Beta(a, b).
    pub a: f64,
    /// Prior failures plus one: `b` in Beta(a, b).
    pub b: f64,
}

impl Default for Prior {
    fn default() -> Prior {
        Prior { a: 1.0, b: 1.0 }
    }
}

/// How to compute an interval: method, confidence level and, for Bayes, the prior.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IntervalSpec {
    /// The method.
    pub method: Method,
    /// The confidence (or credibility) level, strictly between 0 and 1.
    pub level: f64,
    /// The prior, used by the Bayes method only.
    pub prior: Prior,
}

impl Default for IntervalSpec {
    fn default() -> IntervalSpec {
        IntervalSpec {
            method: Method::Exact,
            level: 0.95,
            prior: Prior::default(),
        }
    }
}

/// An interval on a pass probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// How it was computed.
    pub method: Method,
    /// Its confidence level.
    pub level: f64,
    /// Lower bound, in [0, 1].
    pub low: f64,
    /// Upper bound, in [0, 1].
    pub high: f64,
}

/// Parses a confidence level: a number strictly between 0 and 1. A percentage is refused with
/// the fraction it probably meant.
pub fn parse_level(text: &str) -> Result<f64, String> {
    probtest_settings::parse_level(text)
}

impl IntervalSpec {
    /// The interval on the pass probability after `passes` passes in `runs` runs; `None` for no
    /// runs.
    pub fn interval(&self, passes: u64, runs: u64) -> Option<Interval> {
        if runs == 0 {
            return None;
        }
        let (low, high) = self.bounds_memoized(passes, runs);
        Some(Interval {
            method: self.method,
            level: self.level,
            low,
            high,
        })
    }

    /// Bounds are memoized: quantiles are iterative (and unoptimized in test builds), and the
    /// rows of a session repeat the same few fractions (10/10, 9/10, ...).
    fn bounds_memoized(&self, passes: u64, runs: u64) -> (f64, f64) {
        use std::collections::BTreeMap;
        use std::sync::Mutex;
        type Key = (&'static str, u64, u64, u64, u64, u64);
        static MEMO: Mutex<BTreeMap<Key, (f64, f64)>> = Mutex::new(BTreeMap::new());
        let key = (
            self.method.name(),
            self.level.to_bits(),
            self.prior.a.to_bits(),
            self.prior.b.to_bits(),
            passes,
            runs,
        );
        if let Some(bounds) = MEMO.lock().ok().and_then(|memo| memo.get(&key).copied()) {
            return bounds;
        }
        let bounds = self.bounds(passes, runs);
        if let Ok(mut memo) = MEMO.lock() {
            memo.insert(key, bounds);
        }
        bounds
    }

    fn bounds(&self, passes: u64, runs: u64) -> (f64, f64) {
        let (c, n) = (passes as f64, runs as f64);
        let alpha = 1.0 - self.level;
        match self.method {
            Method::Exact => (
                if passes == 0 {
                    0.0
                } else {
                    beta_quantile(c, n - c + 1.0, alpha / 2.0)
                },
                if passes == runs {
                    1.0
                } else {
                    beta_quantile(c + 1.0, n - c, 1.0 - alpha / 2.0)
                },
            ),
            Method::Wilson => {
                let z = normal_quantile(1.0 - alpha / 2.0);
                let p = c / n;
                let z2 = z * z;
                let denominator = 1.0 + z2 / n;
                let center = (p + z2 / (2.0 * n)) / denominator;
                let half = z / denominator * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
                ((center - half).max(0.0), (center + half).min(1.0))
            }
            Method::Bayes => {
                let a = self.prior.a + c;
                let b = self.prior.b + n - c;
                (
                    beta_quantile(a, b, alpha / 2.0),
                    beta_quantile(a, b, 1.0 - alpha / 2.0),
                )
            }
            Method::Sequential => sequence::confidence_sequence(
                passes,
                runs,
                self.level,
                (self.prior.a, self.prior.b),
            ),
        }
    }
}

/// A confidence level as a percent without trailing zeros: 0.95 as `95`, 0.999 as `99.9`.
pub(crate) fn percent_text(level: f64) -> String {
    let text = format!("{:.4}", level * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// What an UNDECIDED gate means for the session's exit status (`PROB_UNDECIDED`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Undecided {
    /// An undecided gate fails the session: not enough evidence is not a pass. The default.
    #[default]
    Fail,
    /// An undecided gate lets the session pass.
    Pass,
}

impl From<probtest_settings::Undecided> for Undecided {
    fn from(undecided: probtest_settings::Undecided) -> Undecided {
        match undecided {
            probtest_settings::Undecided::Fail => Undecided::Fail,
            probtest_settings::Undecided::Pass => Undecided::Pass,
        }
    }
}

/// How errored runs enter a gate's sample (config `errors`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorPolicy {
    /// Errors are non-passes in the sample, and an errored run still fails. The default.
    #[default]
    Count,
    /// Errors leave the sample and do not fail: the gate judges answers, not the harness.
    Exclude,
}

impl From<probtest_settings::Errors> for ErrorPolicy {
    fn from(errors: probtest_settings::Errors) -> ErrorPolicy {
        match errors {
            probtest_settings::Errors::Count => ErrorPolicy::Count,
            probtest_settings::Errors::Exclude => ErrorPolicy::Exclude,
        }
    }
}

/// A metric over a case's runs (`PROB_METRIC=pass^3,pass@5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    /// pass^k: the chance that k runs all pass.
    PassAll(u64),
    /// pass@k: the chance that at least one of k runs passes.
    PassAny(u64),
}

impl Metric {
    /// `pass^3` or `pass@5`.
    pub fn name(self) -> String {
        match self {
            Metric::PassAll(k) => format!("pass^{k}"),
            Metric::PassAny(k) => format!("pass@{k}"),
        }
    }

    /// Its k: the runs of one input it looks at.
    pub fn k(self) -> u64 {
        match self {
            Metric::PassAll(k) | Metric::PassAny(k) => k,
        }
    }

    /// The metric of `passes` in `runs`, `None` when there are fewer than k runs.
    pub fn value(self, passes: u64, runs: u64) -> Option<f64> {
        match self {
            Metric::PassAll(k) => pass_all(passes, runs, k),
            Metric::PassAny(k) => pass_any(passes, runs, k),
        }
    }

    /// Parses `pass^3` or `pass@5`.
    pub fn parse(text: &str) -> Result<Metric, String> {
        probtest_settings::parse_pass_k(text).map(Metric::from)
    }
}

impl From<probtest_settings::PassK> for Metric {
    fn from(metric: probtest_settings::PassK) -> Metric {
        match metric {
            probtest_settings::PassK::All(k) => Metric::PassAll(k),
            probtest_settings::PassK::Any(k) => Metric::PassAny(k),
        }
    }
}

/// Every statistics setting of a session; the report keeps them as `stats_config`.
#[derive(Clone, Debug, PartialEq)]
pub struct StatsConfig {
    /// Method, level and prior of every row's interval and of gates without their own.
    pub interval: IntervalSpec,
    /// Whether the summary shows the interval column (`PROB_INTERVALS`, config `intervals`).
    pub intervals: bool,
    /// A `min_rate` gate for every case without a gate of its own (`PROB_MIN_RATE`).
    pub min_rate: Option<f64>,
    /// What an UNDECIDED verdict means (`PROB_UNDECIDED`).
    pub undecided: Undecided,
    /// How errored runs enter gates (config `errors`).
    pub errors: ErrorPolicy,
    /// Metrics to compute (`PROB_METRIC`, config `metrics`).
    pub metrics: Vec<Metric>,
    /// Whether to print the `probability: explained` section (`PROB_EXPLAIN`).
    pub explain: bool,
    /// Bootstrap resamples behind function-level intervals and comparisons (`PROB_BOOTSTRAP`).
    pub resamples: u64,
    /// The seed of every resampling procedure, so that a report is reproducible (`PROB_SEED`).
    pub seed: u64,
    /// The fewest inputs (cases, or paired inputs) an interval over inputs needs
    /// (`PROB_MIN_INPUTS`).
    pub min_inputs: u64,
    /// The argument whose values are compared in every function that has it (`PROB_COMPARE`).
    pub compare: Option<String>,
    /// How comparisons' p-values are adjusted for their number (`PROB_ADJUST`).
    pub adjust: paired::Adjustment,
    /// An earlier report to compare every function with (`PROB_BASELINE`), resolved.
    pub baseline: Option<String>,
    /// The drop from the baseline that fails a function (`PROB_MARGIN`); none: report only.
    pub margin: Option<f64>,
    /// Early stopping (`PROB_STOP`); left out of reports that stop nothing.
    pub stop: stopping::StopMode,
    /// Whether the summary shows each case's latency quantile (`PROB_LATENCY`).
    pub latency: bool,
    /// The latency quantile of cases whose attribute sets none (`PROB_LATENCY_QUANTILE`).
    pub latency_quantile: f64,
}

impl Default for StatsConfig {
    fn default() -> StatsConfig {
        StatsConfig {
            interval: IntervalSpec::default(),
            intervals: true,
            min_rate: None,
            undecided: Undecided::Fail,
            errors: ErrorPolicy::Count,
            metrics: Vec::new(),
            explain: false,
            resamples: 5000,
            seed: 0,
            min_inputs: 10,
            compare: None,
            adjust: paired::Adjustment::None,
            baseline: None,
            margin: None,
            stop: stopping::StopMode::Off,
            latency: false,
            latency_quantile: latency::default_quantile(),
        }
    }
}

/// A gate's rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// PASS when the whole interval lies above the bar, FAIL when it lies wholly below,
    /// UNDECIDED when it straddles the bar.
    MinRate(f64),
    /// PASS when at least this many runs passed; never UNDECIDED.
    MinPasses(u64),
}

/// A case's own gate, as `#[probability(min_rate = .., confidence = ..)]` writes it: overrides
/// left out fall back to the session's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateSpec {
    /// The rule and its bar.
    pub rule: Rule,
    /// The gate's own method, if any.
    pub method: Option<Method>,
    /// The gate's own confidence level, if any.
    pub level: Option<f64>,
    /// The gate's own prior, if any.
    pub prior: Option<Prior>,
}

/// A gate's verdict. The report spells it in lower case, as pytest-probability does (the
/// terminal upper-cases it); reports of schema 1 spelled it in upper case and still read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The evidence clears the bar.
    Pass,
    /// The evidence is below the bar.
    Fail,
    /// The interval straddles the bar: more runs would settle it.
    Undecided,
}

/// A gate applied to a case's runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateResult {
    /// The rule and its bar.
    pub rule: Rule,
    /// The interval settings the gate used.
    pub method: Method,
    /// The confidence level the gate used.
    pub level: f64,
    /// The prior the gate used (Bayes only matters).
    pub prior: Prior,
    /// How errored runs entered the sample.
    pub errors: ErrorPolicy,
    /// Passes in the sample.
    pub passes: u64,
    /// Runs in the sample: all runs, or passes and fails with errors excluded.
    pub sample: u64,
    /// The interval's lower bound on the sample.
    pub low: f64,
    /// The interval's upper bound on the sample.
    pub high: f64,
    /// The verdict.
    pub verdict: Verdict,
}

impl GateSpec {
    /// The interval settings of this gate under the session's `config`.
    pub fn interval(&self, config: &StatsConfig) -> IntervalSpec {
        IntervalSpec {
            method: self.method.unwrap_or(config.interval.method),
            level: self.level.unwrap_or(config.interval.level),
            prior: self.prior.unwrap_or(config.interval.prior),
        }
    }

    /// The gate applied to a case's counts.
    pub fn judge(&self, config: &StatsConfig, passes: u64, fails: u64, errors: u64) -> GateResult {
        let spec = self.interval(config);
        let sample = match config.errors {
            ErrorPolicy::Count => passes + fails + errors,
            ErrorPolicy::Exclude => passes + fails,
        };
        let (low, high) = spec
            .interval(passes, sample)
            .map_or((0.0, 1.0), |interval| (interval.low, interval.high));
        let verdict = match self.rule {
            Rule::MinPasses(bar) if passes >= bar => Verdict::Pass,
            Rule::MinPasses(_) => Verdict::Fail,
            Rule::MinRate(bar) if sample > 0 && low > bar => Verdict::Pass,
            Rule::MinRate(bar) if sample > 0 && high < bar => Verdict::Fail,
            Rule::MinRate(_) => Verdict::Undecided,
        };
        GateResult {
            rule: self.rule,
            method: spec.method,
            level: spec.level,
            prior: spec.prior,
            errors: config.errors,
            passes,
            sample,
            low,
            high,
            verdict,
        }
    }

    /// The runs a case needs before this gate can pass at all, even with every run passing;
    /// `None` when it can never pass (a bar of 1, or more than a million runs).
    pub fn runs_needed(&self, config: &StatsConfig) -> Option<u64> {
        match self.rule {
            Rule::MinPasses(bar) => Some(bar),
            Rule::MinRate(bar) => {
                let spec = self.interval(config);
                smallest_runs(1, |n| spec.interval(n, n).is_some_and(|i| i.low > bar))
            }
        }
    }
}

/// The smallest number of runs from `start` on at which `enough` holds, for a condition that
/// keeps holding once it does (doubling, then bisecting); `None` past a million runs.
pub(crate) fn smallest_runs(start: u64, enough: impl Fn(u64) -> bool) -> Option<u64> {
    let mut high = start.max(1);
    while !enough(high) {
        high *= 2;
        if high > 1 << 20 {
            return None;
        }
    }
    let mut low = high / 2;
    while low + 1 < high {
        let middle = (low + high) / 2;
        if enough(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    Some(high)
}

impl GateResult {
    /// Whether this verdict fails the session under `undecided`.
    pub fn fails(&self, undecided: Undecided) -> bool {
        match self.verdict {
            Verdict::Pass => false,
            Verdict::Fail => true,
            Verdict::Undecided => undecided == Undecided::Fail,
        }
    }
}

/// The unbiased estimate of pass^k, the chance that k runs all pass: C(c, k) / C(n, k) for c
/// passes in n runs. `None` when n < k.
pub fn pass_all(passes: u64, runs: u64, k: u64) -> Option<f64> {
    if k == 0 || runs < k {
        return None;
    }
    let passes = passes.min(runs);
    if let Some(value) = exact_ratio(comb(passes, k), comb(runs, k)) {
        return Some(value);
    }
    // C(c,k)/C(n,k) = prod_{i<k} (c-i)/(n-i): each factor is exact, the product has no
    // intermediate overflow.
    let mut value = 1.0;
    for i in 0..k {
        if passes < i + 1 {
            return Some(0.0);
        }
        value *= (passes - i) as f64 / (runs - i) as f64;
    }
    Some(value)
}

/// The unbiased estimate of pass@k, the chance that at least one of k runs passes:
/// 1 - C(n-c, k) / C(n, k). `None` when n < k.
pub fn pass_any(passes: u64, runs: u64, k: u64) -> Option<f64> {
    if k == 0 || runs < k {
        return None;
    }
    let total = comb(runs, k);
    let none_pass = comb(runs - passes.min(runs), k);
    if let Some(value) = exact_ratio(total.zip(none_pass).map(|(t, n)| t - n), total) {
        return Some(value);
    }
    pass_all(runs - passes.min(runs), runs, k).map(|none_pass| 1.0 - none_pass)
}

/// C(n, k) in whole numbers; `None` past `u128`.
fn comb(n: u64, k: u64) -> Option<u128> {
    if k > n {
        return Some(0);
    }
    let k = k.min(n - k);
    let mut value: u128 = 1;
    for i in 0..k {
        // C(n, i + 1) = C(n, i) · (n − i) / (i + 1), a whole number at every step.
        value = value.checked_mul(u128::from(n - i))? / u128::from(i + 1);
    }
    Some(value)
}

/// `numerator / denominator` correctly rounded, as pytest-probability divides its whole
/// numbers, when both are exact as `f64` (at most 2^53); `None` otherwise.
fn exact_ratio(numerator: Option<u128>, denominator: Option<u128>) -> Option<f64> {
    const EXACT: u128 = 1 << 53;
    let (numerator, denominator) = (numerator?, denominator?);
    (numerator <= EXACT && denominator <= EXACT && denominator > 0)
        .then(|| numerator as f64 / denominator as f64)
}

#[cfg(test)]
mod analysis_tests;
#[cfg(test)]
mod tests;
