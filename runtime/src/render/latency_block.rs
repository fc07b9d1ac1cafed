//! Latency in the terminal: the `probability: latency` block (`PROB_LATENCY=1`), a latency
//! gate's line in the `probability: gates` block, and a latency line read in plain language
//! (`PROB_EXPLAIN=1`). The lines are pytest-probability's (`_latency_lines`, `_secs`,
//! `latency_reading`), so both tools print the same figures.
//!
//! Layer: render. Imports `crate::types` and `crate::model` only.

use std::fmt::Write;

use crate::model::{Report, Row};
use crate::render::text::{rule, shown};
use crate::types::stats::latency::LatencyResult;
use crate::types::stats::{percent_text, Undecided, Verdict};

/// A duration to three significant figures in s, ms or µs (`2.40s`, `512ms`, `850µs`); `—`
/// for a bound that does not exist yet. Thresholds sit where rounding carries into the next
/// unit, so 0.9996 s is `1.00s`, not `1000ms`.
pub fn seconds(time: Option<f64>) -> String {
    let Some(time) = time else {
        return "—".to_string();
    };
    if time <= 0.0 {
        return "0s".to_string();
    }
    let (value, unit) = if time >= 0.9995 {
        (time, "s")
    } else if time >= 0.000_999_5 {
        (time * 1e3, "ms")
    } else {
        (time * 1e6, "µs")
    };
    let decimals = if value >= 99.95 {
        0
    } else if value >= 9.995 {
        1
    } else {
        2
    };
    // Half up, as the peer rounds, not to even.
    let scale = 10f64.powi(decimals as i32);
    let rounded = (value * scale + 0.5).floor() / scale;
    format!("{rounded:.decimals$}{unit}")
}

/// The limit as the gates block prints it: `≤2s`.
fn bar(limit: f64) -> String {
    format!("≤{}s", number(limit))
}

/// A number as Python's `:g` writes the limits people set (`2`, `0.5`, `1.5`).
fn number(value: f64) -> String {
    let text = format!("{value}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_string)
}

fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Undecided => "UNDECIDED",
    }
}

/// One line per row, columns aligned across them:
/// `classify::slow  40 runs  p95  2.40s  [2.10s, 2.90s]  ≤2s  FAIL`.
fn lines(rows: &[(&Row, &LatencyResult)], name_width: usize) -> Vec<String> {
    let runs: Vec<String> = rows
        .iter()
        .map(|(_, l)| format!("{} run{}", l.total, if l.total == 1 { "" } else { "s" }))
        .collect();
    let labels: Vec<String> = rows.iter().map(|(_, l)| l.label()).collect();
    let estimates: Vec<String> = rows.iter().map(|(_, l)| seconds(l.estimate)).collect();
    let bounds: Vec<(String, String)> = rows
        .iter()
        .map(|(_, l)| {
            let ci = l.ci.as_ref();
            (
                seconds(ci.and_then(|ci| ci.low)),
                seconds(ci.and_then(|ci| ci.high)),
            )
        })
        .collect();
    let bars: Vec<String> = rows
        .iter()
        .map(|(_, l)| l.max_latency.map(bar).unwrap_or_default())
        .collect();
    let width = |texts: &[String]| texts.iter().map(|t| t.chars().count()).max().unwrap_or(0);
    let name_width = rows
        .iter()
        .map(|(row, _)| shown(&row.info.case).chars().count())
        .max()
        .unwrap_or(0)
        .max(name_width);
    let (runs_w, label_w, est_w, bar_w) = (
        width(&runs),
        width(&labels),
        width(&estimates),
        width(&bars),
    );
    let low_w = bounds
        .iter()
        .map(|b| b.0.chars().count())
        .max()
        .unwrap_or(0);
    let high_w = bounds
        .iter()
        .map(|b| b.1.chars().count())
        .max()
        .unwrap_or(0);
    let pad = |text: &str, width: usize| " ".repeat(width - text.chars().count());
    let mut out = Vec::new();
    for (index, (row, latency)) in rows.iter().enumerate() {
        let name = &*shown(&row.info.case);
        let (low, high) = &bounds[index];
        let mut line = format!(
            "  {name}{}  {}{}  {}{}  {}{}  [{}{low}, {}{high}]",
            pad(name, name_width),
            pad(&runs[index], runs_w),
            runs[index],
            labels[index],
            pad(&labels[index], label_w),
            pad(&estimates[index], est_w),
            estimates[index],
            pad(low, low_w),
            pad(high, high_w),
        );
        if let Some(verdict) = latency.verdict {
            let _ = write!(
                line,
                "  {}{}  {}",
                bars[index],
                pad(&bars[index], bar_w),
                verdict_word(verdict)
            );
        }
        if latency.excluded > 0 {
            let _ = write!(line, "  ({} errored, excluded)", latency.excluded);
        }
        out.push(line.trim_end().to_string());
    }
    out
}

fn with_latency(report: &Report) -> impl Iterator<Item = (&Row, &LatencyResult)> {
    report
        .rows
        .iter()
        .filter_map(|row| Some((row, row.latency.as_ref()?)))
}

/// The `probability: latency` block, when `PROB_LATENCY=1`: every row's quantile and interval,
/// with a latency gate's verdict.
pub(crate) fn block(report: &Report, out: &mut String) {
    if !report.stats_config.latency {
        return;
    }
    let rows: Vec<_> = with_latency(report).collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}", rule("probability: latency"));
    for line in lines(&rows, 0) {
        let _ = writeln!(out, "{line}");
    }
}

/// Latency gates that did not pass, under the `probability: gates` block's rule (written here
/// when no rate gate wrote it).
pub(crate) fn gate_lines(report: &Report, out: &mut String) {
    let rows: Vec<_> = with_latency(report)
        .filter(|(_, l)| l.verdict.is_some_and(|v| v != Verdict::Pass))
        .collect();
    if rows.is_empty() {
        return;
    }
    let rate_rows: Vec<&Row> = report
        .rows
        .iter()
        .filter(|row| row.gate.is_some_and(|g| g.verdict != Verdict::Pass))
        .collect();
    if rate_rows.is_empty() {
        let _ = writeln!(out, "{}", rule("probability: gates"));
    }
    // The name column is the whole block's, as the peer aligns rate and latency gates' lines.
    let name_width = rate_rows
        .iter()
        .map(|row| shown(&row.info.case).chars().count())
        .max()
        .unwrap_or(0);
    for line in lines(&rows, name_width) {
        let _ = writeln!(out, "{line}");
    }
}

/// The widest name among latency gates that did not pass, so that the gates block's rate lines
/// align with them.
pub(crate) fn gate_name_width(report: &Report) -> usize {
    with_latency(report)
        .filter(|(_, l)| l.verdict.is_some_and(|v| v != Verdict::Pass))
        .map(|(row, _)| shown(&row.info.case).chars().count())
        .max()
        .unwrap_or(0)
}

/// Every latency gate's verdict, for the `Gates:` tally.
pub(crate) fn verdicts(report: &Report) -> impl Iterator<Item = Verdict> + '_ {
    with_latency(report).filter_map(|(_, l)| l.verdict)
}

/// `95th percentile`, `50th percentile (the median)`.
fn percentile(quantile: f64) -> String {
    let number = percent_text(quantile);
    let whole = number.parse::<u64>().ok();
    let suffix = match whole {
        Some(n) if !(11..=13).contains(&(n % 100)) => match n % 10 {
            1 => "st",
            2 => "nd",
            3 => "rd",
            _ => "th",
        },
        _ => "th",
    };
    if number == "50" {
        format!("{number}{suffix} percentile (the median)")
    } else {
        format!("{number}{suffix} percentile")
    }
}

fn runs(n: u64) -> String {
    format!("{n} run{}", if n == 1 { "" } else { "s" })
}

/// A latency line read in plain language: the quantile, its range and, for a latency gate,
/// the verdict and what would settle it.
pub(crate) fn reading(row: &Row, latency: &LatencyResult, undecided: Undecided) -> String {
    let heading = lines(&[(row, latency)], 0).remove(0);
    let mut text = format!("{}:", heading.trim());
    let what = percentile(latency.quantile);
    let need = latency.min_runs;
    let n = latency.total;
    let undecided_text = match undecided {
        Undecided::Fail => {
            "Until that's settled, the case fails the test session (PROB_UNDECIDED=pass would \
             let it through)."
        }
        Undecided::Pass => {
            "This session lets undecided cases through (PROB_UNDECIDED=pass), so it doesn't \
             fail the test session."
        }
    };
    let Some(ci) = &latency.ci else {
        let _ = write!(
            text,
            " All {} errored, and this case leaves errored runs out (errors = exclude), so there \
             are no run times to measure",
            runs(latency.excluded)
        );
        if latency.verdict.is_some() {
            let _ = write!(text, ": the verdict is UNDECIDED. {undecided_text}");
        } else {
            text.push('.');
        }
        return text;
    };
    let _ = write!(
        text,
        " The {what} of this case's run time, the time {}% of its runs finish within, was {} \
         over {}",
        percent_text(latency.quantile),
        seconds(latency.estimate),
        runs(n)
    );
    if latency.excluded > 0 {
        let _ = write!(
            text,
            ", not counting {} errored (errors = exclude)",
            runs(latency.excluded)
        );
    }
    text.push('.');
    let level = format!("{}% confidence", percent_text(ci.level));
    let few = format!("{} {} too few", runs(n), if n == 1 { "is" } else { "are" });
    match (ci.low, ci.high) {
        (Some(low), Some(high)) if low == high => {
            let _ = write!(
                text,
                " The true {what} is probably {} ({level}).",
                seconds(Some(low))
            );
        }
        (Some(low), Some(high)) => {
            let _ = write!(
                text,
                " The true {what} is probably between {} and {} ({level}).",
                seconds(Some(low)),
                seconds(Some(high))
            );
        }
        (Some(low), None) => {
            let _ = write!(
                text,
                " The true {what} is probably at least {} ({level}), but {few} to put an upper \
                 limit on it: that takes at least {need} runs.",
                seconds(Some(low))
            );
        }
        (None, Some(high)) => {
            let _ = write!(
                text,
                " The true {what} is probably at most {} ({level}), but {few} to put a lower \
                 limit on it: that takes at least {need} runs.",
                seconds(Some(high))
            );
        }
        (None, None) => {
            let _ = write!(
                text,
                " {few} to put any limit on it at {level}: that takes at least {need} runs."
            );
        }
    }
    if let (Some(verdict), Some(limit)) = (latency.verdict, latency.max_latency) {
        let bar = format!("{}s", number(limit));
        let said = match verdict {
            Verdict::Undecided if ci.high.is_none() => format!(
                "Your limit is {bar}. Without an upper limit on the range, the data can't show \
                 yet that this case is fast enough."
            ),
            Verdict::Pass => format!(
                "Your limit is {bar}, and that whole range is below it, so this case is fast \
                 enough."
            ),
            Verdict::Fail => format!(
                "Your limit is {bar}, and that whole range is above it, so this case is too slow."
            ),
            Verdict::Undecided => format!(
                "Your limit is {bar}, and that range has values both below and above it, so \
                 there isn't enough data yet to tell whether this case is fast enough."
            ),
        };
        let _ = write!(text, " {said}");
        if verdict == Verdict::Undecided {
            let _ = write!(text, " {undecided_text}");
        }
    }
    let complete = ci.low.is_some() && ci.high.is_some();
    if !complete && latency.verdict.is_none_or(|v| v == Verdict::Undecided) {
        let _ = write!(
            text,
            " Next: run it at least {need} times (runs = {need} in the attribute, or PROB_RUNS) \
             to get a full range."
        );
    } else if latency.verdict == Some(Verdict::Fail) {
        let _ = write!(
            text,
            " Next: find out what makes the slow runs slow: the JSON report (PROB_JSON) has \
             every run's elapsed time in records[]. If a slower {} is acceptable for this case, \
             raise max_latency.",
            latency.label()
        );
    }
    text
}

/// The readings of the explained section: every latency gate, and every row's latency when
/// `PROB_LATENCY=1` shows them.
pub(crate) fn readings(report: &Report) -> Vec<String> {
    let shown = report.stats_config.latency;
    with_latency(report)
        .filter(|(_, l)| shown || l.verdict.is_some())
        .map(|(row, l)| reading(row, l, report.stats_config.undecided))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{info, record};
    use crate::model::CaseInfo;
    use crate::render::summary::{summary, Options};
    use crate::types::stats::latency::LatencySpec;
    use crate::types::stats::StatsConfig;
    use crate::types::status::Outcome;

    /// `slow` (runs of 2.1 s to 4.0 s) and `fast` (10 ms to 200 ms), both limited to 2 s at
    /// the median; `short` has too few runs for the interval's upper bound.
    fn report(config: &StatsConfig) -> Report {
        let gated = |case: &str, runs: u32| CaseInfo {
            runs,
            latency: Some(LatencySpec {
                quantile: Some(0.5),
                max_latency: Some(2.0),
                level: None,
            }),
            ..info(case)
        };
        let timed = |case: &str, run: u32, elapsed: f64| crate::model::Record {
            elapsed,
            ..record(case, run, Outcome::Pass, 0.0, Vec::new())
        };
        let records = (1..=20)
            .map(|run| timed("slow", run, 2.0 + f64::from(run) / 10.0))
            .chain((1..=20).map(|run| timed("fast", run, f64::from(run) / 100.0)))
            .chain((1..=3).map(|run| timed("short", run, 0.5)))
            .collect();
        Report::build(
            [gated("slow", 20), gated("fast", 20), gated("short", 3)],
            records,
            config,
        )
    }

    #[test]
    fn the_summary_shows_latency_gates_and_the_latency_block() {
        let config = StatsConfig {
            latency: true,
            ..StatsConfig::default()
        };
        let text = summary(&report(&config), &Options::default());
        assert!(
            text.contains("  Gates:   1 passed, 1 failed, 1 undecided\n"),
            "{text}"
        );
        assert!(
            text.contains("short: max_latency=2s (p50) at 95% needs >=6 runs; this case has 3"),
            "{text}"
        );
        let gates = text
            .split("probability: gates")
            .nth(1)
            .expect("a gates block");
        assert!(
            gates.contains("  slow   20 runs  p50  3.00s  [2.60s, 3.50s]  ≤2s  FAIL\n"),
            "{text}"
        );
        assert!(
            gates.contains("  short   3 runs  p50  500ms  [    —,     —]  ≤2s  UNDECIDED"),
            "{text}"
        );
        let block = text
            .split("probability: latency")
            .nth(1)
            .expect("a latency block");
        assert!(
            block.contains("  fast   20 runs  p50  100ms  [60.0ms, 150ms]  ≤2s  PASS\n"),
            "{block}"
        );
    }

    #[test]
    fn rate_and_latency_gates_share_the_name_column() {
        use crate::types::stats::{GateSpec, Rule};
        let config = StatsConfig::default();
        let mut rated = info("r");
        rated.gate = Some(GateSpec {
            rule: Rule::MinRate(0.9),
            method: None,
            level: None,
            prior: None,
        });
        let mut records: Vec<crate::model::Record> = (1..=10)
            .map(|run| record("r", run, Outcome::Fail, 0.0, Vec::new()))
            .collect();
        records.extend(report(&config).records.clone());
        let mut cases: Vec<CaseInfo> = report(&config)
            .rows
            .iter()
            .map(|r| r.info.clone())
            .collect();
        cases.push(rated);
        let text = summary(&Report::build(cases, records, &config), &Options::default());
        let gates = text
            .split("probability: gates")
            .nth(1)
            .expect("a gates block");
        // `short` is the widest name among the gates that did not pass.
        assert!(gates.contains("\n  r       0/10  "), "{text}");
        assert!(gates.contains("\n  short   3 runs"), "{text}");
    }

    #[test]
    fn without_prob_latency_only_gates_show() {
        let text = summary(&report(&StatsConfig::default()), &Options::default());
        assert!(!text.contains("probability: latency"), "{text}");
        assert!(text.contains("Hint:    PROB_EXPLAIN=1"), "{text}");
        assert!(text.contains("probability: gates"), "{text}");
    }

    #[test]
    fn an_explained_failure_says_the_range_and_the_next_step() {
        let config = StatsConfig {
            explain: true,
            ..StatsConfig::default()
        };
        let report = report(&config);
        let slow = &report.rows.iter().find(|r| r.info.case == "slow").unwrap();
        let text = reading(slow, slow.latency.as_ref().unwrap(), Undecided::Fail);
        assert!(
            text.contains(
                "The 50th percentile (the median) of this case's run time, the time 50% of its \
                 runs finish within, was 3.00s over 20 runs. The true 50th percentile (the \
                 median) is probably between 2.60s and 3.50s (95% confidence). Your limit is \
                 2s, and that whole range is above it, so this case is too slow."
            ),
            "{text}"
        );
        let summary = summary(&report, &Options::default());
        assert!(
            summary.contains("raise\n    max_latency.") || summary.contains("raise max_latency."),
            "{summary}"
        );
    }

    /// pytest-probability 0.3.0's `--prob-latency` block for `tests/data/bench_latency.py`
    /// (its report is `tests/data/peer_latency.json`).
    const PEER_LATENCY_BLOCK: [&str; 6] = [
        "  fast        8 runs  p50  6.28µs  [4.50µs, 9.53µs]  ≤0.05s  PASS",
        "  slow        8 runs  p50  60.2ms  [60.2ms, 60.3ms]  ≤0.05s  FAIL",
        "  short       3 runs  p50  7.54µs  [     —,      —]  ≤0.05s  UNDECIDED",
        "  confident  12 runs  p50  1.09ms  [1.09ms, 1.11ms]  ≤0.05s  PASS",
        "  reported   10 runs  p90  2.14ms  [2.13ms,      —]",
        "  default    20 runs  p95  12.4µs  [10.5µs,      —]",
    ];

    #[test]
    fn the_latency_block_says_what_the_peer_says_on_its_run_times() {
        // The peer's records and latency settings, read without the format layer (a sibling).
        let peer: serde_json::Value =
            serde_json::from_str(include_str!("../../tests/data/peer_latency.json")).expect("JSON");
        let records: Vec<crate::model::Record> =
            serde_json::from_value(peer["records"].clone()).expect("records");
        let cases = peer["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .enumerate()
            .map(|(line, row)| {
                let latency = &row["latency"];
                CaseInfo {
                    line: line as u32,
                    latency: Some(LatencySpec {
                        quantile: latency["quantile"].as_f64(),
                        max_latency: latency["max_latency"].as_f64(),
                        level: latency["ci"]["level"].as_f64(),
                    }),
                    ..info(row["case"].as_str().expect("case"))
                }
            });
        let records = records
            .into_iter()
            .map(|record| crate::model::Record {
                package: "fixture".into(),
                module: "evals".into(),
                ..record
            })
            .collect();
        let config = StatsConfig {
            latency: true,
            ..StatsConfig::default()
        };
        let report = Report::build(cases, records, &config);
        let text = summary(&report, &Options::default());
        let block: Vec<&str> = text
            .lines()
            .skip_while(|line| !line.contains("probability: latency"))
            .skip(1)
            .take_while(|line| !line.trim().is_empty() && !line.starts_with("  Hint:"))
            .collect();
        assert_eq!(block, PEER_LATENCY_BLOCK, "{text}");
    }

    #[test]
    fn seconds_round_as_the_peer_rounds() {
        assert_eq!(seconds(None), "—");
        assert_eq!(seconds(Some(2.4)), "2.40s");
        assert_eq!(seconds(Some(0.9996)), "1.00s");
        assert_eq!(seconds(Some(9.996)), "10.0s");
        assert_eq!(seconds(Some(0.512)), "512ms");
        assert_eq!(seconds(Some(0.0123)), "12.3ms");
        assert_eq!(seconds(Some(0.000_85)), "850µs");
        assert_eq!(seconds(Some(123.4)), "123s");
    }

    #[test]
    fn percentiles_are_named_in_words() {
        assert_eq!(percentile(0.95), "95th percentile");
        assert_eq!(percentile(0.5), "50th percentile (the median)");
        assert_eq!(percentile(0.01), "1st percentile");
        assert_eq!(percentile(0.999), "99.9th percentile");
    }
}
