//! The statistics that tell signal from noise: intervals on a case's pass probability, gates
//! that judge a case by its interval, and the pass^k / pass@k metrics.
//!
//! Quantiles of the Beta and normal distributions come from `statrs`; `tests/data` holds
//! reference values computed with scipy and statsmodels (by `scripts/reference_stats.py`) that
//! the tests check every method against.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use statrs::distribution::{Beta, ContinuousCDF, Normal};

/// How an interval on a pass probability is computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Clopper-Pearson: exact, never narrower than it should be. The default.
    #[default]
    Exact,
    /// Wilson score interval: approximate, narrower, good coverage on average.
    Wilson,
    /// Equal-tailed Bayesian credible interval under a Beta prior.
    Bayes,
}

impl Method {
    /// The method's name as settings spell it.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Wilson => "wilson",
            Method::Bayes => "bayes",
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
        match text.trim().to_ascii_lowercase().as_str() {
            "exact" | "clopper-pearson" => Ok(Method::Exact),
            "wilson" => Ok(Method::Wilson),
            "bayes" => Ok(Method::Bayes),
            _ => Err(format!("expected exact, wilson or bayes, got `{text}`")),
        }
    }
}

/// The Beta(a, b) prior of the Bayes method.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
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
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a number strictly between 0 and 1, got `{text}`"))?;
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else if value > 1.0 && value < 100.0 {
        Err(format!(
            "expected a number strictly between 0 and 1, got `{text}`; did you mean {}?",
            value / 100.0
        ))
    } else {
        Err(format!(
            "expected a number strictly between 0 and 1, got `{text}`"
        ))
    }
}

/// The `p` quantile of Beta(a, b), with the degenerate ends handled exactly.
fn beta_quantile(a: f64, b: f64, p: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    match Beta::new(a, b) {
        Ok(beta) => beta.inverse_cdf(p).clamp(0.0, 1.0),
        // Only reachable with a non-positive shape, which callers never pass.
        Err(_) => f64::NAN,
    }
}

fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

impl IntervalSpec {
    /// The interval on the pass probability after `passes` passes in `runs` runs; `None` for no
    /// runs.
    pub fn interval(&self, passes: u64, runs: u64) -> Option<Interval> {
        if runs == 0 {
            return None;
        }
        let (c, n) = (passes as f64, runs as f64);
        let alpha = 1.0 - self.level;
        let (low, high) = match self.method {
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
        };
        Some(Interval {
            method: self.method,
            level: self.level,
            low,
            high,
        })
    }
}

/// The unbiased estimate of pass^k, the chance that k runs all pass: C(c, k) / C(n, k) for c
/// passes in n runs. `None` when n < k.
pub fn pass_all(passes: u64, runs: u64, k: u64) -> Option<f64> {
    if k == 0 || runs < k {
        return None;
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
    pass_all(runs - passes.min(runs), runs, k).map(|none_pass| 1.0 - none_pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Reference values from scipy/statsmodels, generated by `scripts/reference_stats.py`.
    const REFERENCE: &str = include_str!("../tests/data/reference_stats.json");

    #[test]
    fn intervals_match_scipy_and_statsmodels() {
        let reference: Value = serde_json::from_str(REFERENCE).expect("reference data parses");
        let cases = reference["intervals"].as_array().expect("interval cases");
        assert!(
            cases.len() > 500,
            "the grid covers the edges and the middle"
        );
        let mut worst: f64 = 0.0;
        for case in cases {
            let method: Method = case["method"]
                .as_str()
                .expect("method")
                .parse()
                .expect("known");
            let spec = IntervalSpec {
                method,
                level: case["level"].as_f64().expect("level"),
                prior: Prior {
                    a: case["a"].as_f64().unwrap_or(1.0),
                    b: case["b"].as_f64().unwrap_or(1.0),
                },
            };
            let (c, n) = (
                case["passes"].as_u64().expect("passes"),
                case["runs"].as_u64().expect("runs"),
            );
            let interval = spec.interval(c, n).expect("runs > 0");
            for (ours, theirs) in [(interval.low, &case["low"]), (interval.high, &case["high"])] {
                let theirs = theirs.as_f64().expect("bound");
                let error = (ours - theirs).abs();
                worst = worst.max(error);
                assert!(
                    error < 1e-9,
                    "{method} {c}/{n} at {}: {ours} vs {theirs}",
                    spec.level
                );
            }
        }
        // Recorded so that a regression in accuracy shows in the test output.
        println!("largest difference from the reference: {worst:e}");
    }

    #[test]
    fn metrics_match_the_combinatorial_definition() {
        let reference: Value = serde_json::from_str(REFERENCE).expect("reference data parses");
        for case in reference["metrics"].as_array().expect("metric cases") {
            let (c, n, k) = (
                case["passes"].as_u64().expect("passes"),
                case["runs"].as_u64().expect("runs"),
                case["k"].as_u64().expect("k"),
            );
            let all = pass_all(c, n, k).expect("n >= k");
            let any = pass_any(c, n, k).expect("n >= k");
            assert!(
                (all - case["pass_all"].as_f64().expect("value")).abs() < 1e-12,
                "pass^{k} {c}/{n}"
            );
            assert!(
                (any - case["pass_any"].as_f64().expect("value")).abs() < 1e-12,
                "pass@{k} {c}/{n}"
            );
        }
        assert_eq!(pass_all(3, 2, 3), None);
        assert_eq!(pass_any(1, 2, 3), None);
    }

    #[test]
    fn edges_are_exact() {
        let exact = IntervalSpec::default();
        let none = exact.interval(0, 10).expect("interval");
        assert_eq!(none.low, 0.0);
        let all = exact.interval(10, 10).expect("interval");
        assert_eq!(all.high, 1.0);
        // All n runs passing: the lower bound is (alpha/2)^(1/n).
        assert!((all.low - 0.025f64.powf(0.1)).abs() < 1e-12);
        assert_eq!(exact.interval(0, 0), None);
    }

    #[test]
    fn levels_refuse_percentages_with_a_suggestion() {
        assert_eq!(parse_level("0.9"), Ok(0.9));
        assert_eq!(
            parse_level("95"),
            Err(
                "expected a number strictly between 0 and 1, got `95`; did you mean 0.95?"
                    .to_string()
            )
        );
        assert!(parse_level("1").is_err());
        assert!(parse_level("0").is_err());
        assert!(parse_level("high").is_err());
        assert_eq!("WILSON".parse::<Method>(), Ok(Method::Wilson));
        assert!("beta"
            .parse::<Method>()
            .unwrap_err()
            .contains("exact, wilson or bayes"));
    }
}
