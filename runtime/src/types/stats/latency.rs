//! Latency quantiles: the sample quantile of a case's run times and its distribution-free
//! order-statistic interval, the fewest runs for which that interval has both bounds, and the
//! verdict of a latency gate (`max_latency`) on it. The methods are pytest-probability's
//! (`stats.quantile_ranks`, `quantile_coverage`, `quantile_min_n`, `sample_quantile`), so the
//! two give the same ranks, bounds and verdicts on the same times.

use crate::types::stats::quantile::regularized_beta;
use crate::types::stats::Verdict;

/// Relative slack when a tail probability is compared with α/2, so that a tie (`(1 − q)ⁿ`
/// exactly α/2) counts as within it whatever the last bit of rounding says; the peer uses the
/// same slack, which keeps the two tools' ranks equal at ties.
const TAIL_SLACK: f64 = 1e-12;

/// `P(B ≤ k)` for `B ~ Binomial(n, p)`, summed on its own side so that a small tail keeps its
/// relative precision (the ranks compare it with α/2).
pub fn binomial_cdf(k: i64, n: u64, p: f64) -> f64 {
    if k < 0 {
        return 0.0;
    }
    let k = k as u64;
    if k >= n || p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    regularized_beta((n - k) as f64, (k + 1) as f64, 1.0 - p)
}

/// `P(B > k)` for `B ~ Binomial(n, p)`, scipy's `binom.sf`: strictly greater than `k`.
pub fn binomial_sf(k: i64, n: u64, p: f64) -> f64 {
    if k < 0 {
        return 1.0;
    }
    let k = k as u64;
    if k >= n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    regularized_beta((k + 1) as f64, (n - k) as f64, p)
}

fn tail(level: f64) -> f64 {
    (1.0 - level) / 2.0 * (1.0 + TAIL_SLACK)
}

/// The 1-based ranks `(r, s)` of the order statistics `X₍ᵣ₎ ≤ X₍ₛ₎` that bound the
/// `q`-quantile of `n` independent draws at `level`: `r` the largest rank with
/// `P(B ≤ r − 1) ≤ α/2`, `s` the smallest with `P(B ≥ s) ≤ α/2`, for `B ~ Binomial(n, q)`.
/// A rank that would fall outside `1..=n` is `None`: the interval is open on that side.
pub fn quantile_ranks(n: u64, q: f64, level: f64) -> (Option<u64>, Option<u64>) {
    if n == 0 {
        return (None, None);
    }
    let tail = tail(level);
    // P(B ≤ k) grows with k: bisect for the largest k = r − 1 with P(B ≤ k) ≤ tail.
    let low_rank = (binomial_cdf(0, n, q) <= tail).then(|| {
        let (mut low, mut high) = (0u64, n);
        while high - low > 1 {
            let mid = (low + high) / 2;
            if binomial_cdf(mid as i64, n, q) <= tail {
                low = mid;
            } else {
                high = mid;
            }
        }
        low + 1
    });
    // P(B ≥ s) shrinks as s grows: bisect for the smallest s with P(B > s − 1) ≤ tail.
    let high_rank = (binomial_sf(n as i64 - 1, n, q) <= tail).then(|| {
        let (mut low, mut high) = (0u64, n);
        while high - low > 1 {
            let mid = (low + high) / 2;
            if binomial_sf(mid as i64 - 1, n, q) <= tail {
                high = mid;
            } else {
                low = mid;
            }
        }
        high
    });
    (low_rank, high_rank)
}

/// The chance that `[X₍ᵣ₎, X₍ₛ₎]` covers the `q`-quantile of a continuous distribution,
/// `P(r ≤ B ≤ s − 1)`; a `None` rank leaves its side open. Ties only raise it.
pub fn quantile_coverage(n: u64, q: f64, r: Option<u64>, s: Option<u64>) -> f64 {
    let miss_low = r.map_or(0.0, |r| binomial_cdf(r as i64 - 1, n, q));
    let miss_high = s.map_or(0.0, |s| binomial_sf(s as i64 - 1, n, q));
    (1.0 - miss_low - miss_high).max(0.0)
}

/// The fewest runs for which both bounds of the interval exist at `level`: the smallest `n`
/// with `(1 − q)ⁿ ≤ α/2` and `qⁿ ≤ α/2` (72 for the 95th percentile at 95%, 6 for the
/// median). Below it a latency gate cannot pass.
pub fn quantile_min_runs(q: f64, level: f64) -> u64 {
    let tail = tail(level);
    let guess = (tail.ln() / q.max(1.0 - q).ln()).ceil();
    let mut n = if guess.is_finite() && guess >= 1.0 {
        guess as u64
    } else {
        1
    };
    // Settle rounding on the terms `quantile_ranks` uses, so that the two always agree.
    let complete = |n: u64| matches!(quantile_ranks(n, q, level), (Some(_), Some(_)));
    while n > 1 && complete(n - 1) {
        n -= 1;
    }
    while !complete(n) {
        n += 1;
    }
    n
}

/// `⌈n·q⌉`, clamped to `1..=n`, with an `n·q` that is whole up to rounding (0.95 · 20) taken
/// as that whole number.
fn ceil_rank(n: u64, q: f64) -> u64 {
    let nq = n as f64 * q;
    let mut rank = nq.ceil();
    if rank - nq > 1.0 - 1e-9 {
        rank -= 1.0;
    }
    (rank as u64).clamp(1, n)
}

/// The sample `q`-quantile of sorted `times`: the `⌈n·q⌉`-th smallest (Hyndman and Fan's
/// type 1), always an observed time and always inside the interval. `None` for no times.
pub fn sample_quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[ceil_rank(sorted.len() as u64, q) as usize - 1])
}

/// A latency gate's verdict: lower is better, so PASS when the whole interval lies below
/// `max_latency`, FAIL when it lies wholly above, UNDECIDED otherwise. A missing bound is open
/// on its side: with no upper bound the gate cannot pass, with no lower bound it cannot fail.
pub fn latency_verdict(low: Option<f64>, high: Option<f64>, max_latency: f64) -> Verdict {
    if high.is_some_and(|high| high < max_latency) {
        Verdict::Pass
    } else if low.is_some_and(|low| low > max_latency) {
        Verdict::Fail
    } else {
        Verdict::Undecided
    }
}

/// The latency quantile reported when nothing sets one: the 95th percentile.
pub fn default_quantile() -> f64 {
    0.95
}

/// Parses a latency quantile: a number strictly between 0 and 1 (`0.99`); a percentage is
/// refused with the fraction it probably meant.
pub fn parse_quantile(text: &str) -> Result<f64, String> {
    probtest_settings::parse_quantile(text)
}

/// A case's latency settings as `#[probability(latency_quantile = 0.99, max_latency = "2s")]`
/// writes them: what is left out falls back to the session's (`PROB_LATENCY_QUANTILE`, the
/// gate's level).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LatencySpec {
    /// The quantile of run times reported; none: the session's.
    pub quantile: Option<f64>,
    /// The latency gate's limit in seconds; none: no latency gate.
    pub max_latency: Option<f64>,
    /// The latency gate's own confidence level, when the attribute sets one without a rate
    /// gate (with one, the rate gate's `confidence` serves both).
    pub level: Option<f64>,
}

/// The order-statistic interval on a latency quantile, as pytest-probability's report writes
/// it (`ci` of a row's `latency`): a missing bound (`null`) is open on its side.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyInterval {
    /// Always `"order-statistic"`.
    pub method: String,
    /// The interval's confidence level.
    pub level: f64,
    /// The lower bound in seconds, when it exists.
    pub low: Option<f64>,
    /// The upper bound in seconds, when it exists.
    pub high: Option<f64>,
    /// The 1-based ranks of the bounds among the sorted times.
    pub ranks: [Option<u64>; 2],
    /// The interval's guaranteed coverage for a continuous distribution.
    pub coverage: f64,
}

/// A case's latency quantile over its timed runs, with its interval and, for a latency gate,
/// the verdict: a row's `latency` in the report, under pytest-probability's field names.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyResult {
    /// The quantile reported (0.95: p95).
    pub quantile: f64,
    /// Runs whose times entered.
    pub total: u64,
    /// Errored runs left out (`errors = exclude` on a gated case).
    pub excluded: u64,
    /// The sample quantile in seconds; none without timed runs.
    pub estimate: Option<f64>,
    /// The interval; none without timed runs.
    pub ci: Option<LatencyInterval>,
    /// The fewest timed runs for which both bounds exist.
    pub min_runs: u64,
    /// The latency gate's limit in seconds, when the case has one.
    pub max_latency: Option<f64>,
    /// The latency gate's verdict; none when ungated.
    pub verdict: Option<Verdict>,
}

/// What the order-statistic interval of `n` runs at a quantile and level takes from the
/// binomial distribution: its ranks, their coverage, and the fewest runs with both ranks.
#[derive(Clone, Copy)]
struct RankTerms {
    ranks: (Option<u64>, Option<u64>),
    coverage: f64,
    min_runs: u64,
}

impl RankTerms {
    /// Remembered by `(n, quantile, level)`: a session's rows mostly share their number of
    /// runs, and each search evaluates incomplete beta functions, which a test binary built
    /// without optimizations pays for at exit, row by row.
    fn of(n: u64, quantile: f64, level: f64) -> RankTerms {
        use std::sync::Mutex;
        type Entry = ((u64, u64, u64), RankTerms);
        static MEMO: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
        const KEPT: usize = 32;
        let key = (n, quantile.to_bits(), level.to_bits());
        if let Some(found) = MEMO
            .lock()
            .ok()
            .and_then(|memo| memo.iter().find(|(k, _)| *k == key).map(|(_, v)| *v))
        {
            return found;
        }
        let ranks = if n > 0 {
            quantile_ranks(n, quantile, level)
        } else {
            (None, None)
        };
        let terms = RankTerms {
            ranks,
            coverage: if n > 0 {
                quantile_coverage(n, quantile, ranks.0, ranks.1)
            } else {
                0.0
            },
            min_runs: quantile_min_runs(quantile, level),
        };
        if let Ok(mut memo) = MEMO.lock() {
            if memo.len() >= KEPT {
                memo.remove(0);
            }
            memo.push((key, terms));
        }
        terms
    }
}

impl LatencyResult {
    /// The quantile and its interval over `times` (any order) at `level`, judged against
    /// `max_latency` when given; `excluded` errored runs were left out of `times`.
    pub fn of(
        mut times: Vec<f64>,
        excluded: u64,
        quantile: f64,
        level: f64,
        max_latency: Option<f64>,
    ) -> LatencyResult {
        // Sorted first, so that the order runs arrived in (processes, threads) cannot matter.
        crate::types::stats::sort_total(&mut times);
        let n = times.len() as u64;
        let terms = RankTerms::of(n, quantile, level);
        let ci = (n > 0).then(|| {
            let (r, s) = terms.ranks;
            let at = |rank: Option<u64>| rank.map(|rank| times[rank as usize - 1]);
            LatencyInterval {
                method: "order-statistic".to_string(),
                level,
                low: at(r),
                high: at(s),
                ranks: [r, s],
                coverage: terms.coverage,
            }
        });
        let verdict = max_latency.map(|limit| match &ci {
            Some(ci) => latency_verdict(ci.low, ci.high, limit),
            None => Verdict::Undecided,
        });
        LatencyResult {
            quantile,
            total: n,
            excluded,
            estimate: sample_quantile(&times, quantile),
            ci,
            min_runs: terms.min_runs,
            max_latency,
            verdict,
        }
    }

    /// `p95`, `p99.9`.
    pub fn label(&self) -> String {
        format!("p{}", crate::types::stats::percent_text(self.quantile))
    }
}

#[cfg(test)]
mod reference_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_bracket_the_sample_quantile_once_complete() {
        for n in 1..200 {
            for &q in &[0.5, 0.9, 0.95, 0.99] {
                if let (Some(r), Some(s)) = quantile_ranks(n, q, 0.95) {
                    assert!(
                        r <= ceil_rank(n, q) && ceil_rank(n, q) <= s && r < s,
                        "{n} {q}"
                    );
                    assert!(quantile_coverage(n, q, Some(r), Some(s)) >= 0.95 - 1e-12);
                }
            }
        }
    }

    #[test]
    fn min_runs_is_where_both_bounds_first_exist() {
        assert_eq!(quantile_min_runs(0.95, 0.95), 72);
        assert_eq!(quantile_min_runs(0.5, 0.95), 6);
        let n = quantile_min_runs(0.9, 0.9);
        assert!(quantile_ranks(n - 1, 0.9, 0.9).1.is_none());
        assert!(quantile_ranks(n, 0.9, 0.9).1.is_some());
    }

    #[test]
    fn sample_quantile_takes_whole_ranks_as_whole() {
        let times: Vec<f64> = (1..=20).map(f64::from).collect();
        // 0.95 · 20 is 19.000000000000004 in floating point: still the 19th.
        assert_eq!(sample_quantile(&times, 0.95), Some(19.0));
        assert_eq!(sample_quantile(&times, 0.5), Some(10.0));
        assert_eq!(sample_quantile(&[], 0.5), None);
    }

    #[test]
    fn an_open_bound_can_neither_pass_nor_fail_on_its_side() {
        assert_eq!(latency_verdict(Some(1.0), Some(1.5), 2.0), Verdict::Pass);
        assert_eq!(latency_verdict(Some(2.5), Some(3.0), 2.0), Verdict::Fail);
        assert_eq!(
            latency_verdict(Some(1.0), Some(3.0), 2.0),
            Verdict::Undecided
        );
        assert_eq!(latency_verdict(Some(1.0), None, 2.0), Verdict::Undecided);
        assert_eq!(latency_verdict(None, Some(1.0), 2.0), Verdict::Pass);
        assert_eq!(
            latency_verdict(Some(2.0), Some(2.0), 2.0),
            Verdict::Undecided
        );
    }
}
