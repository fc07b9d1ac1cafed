//! The latency quantile's statistics checked against scipy (`scripts/reference_latency.py`).

use super::*;
use serde_json::Value;

const REFERENCE: &str = include_str!("../../../../tests/data/reference_latency.json");

fn reference(part: &str) -> Vec<Value> {
    let all: Value = serde_json::from_str(REFERENCE).expect("reference data parses");
    all[part].as_array().expect("a list").clone()
}

fn rank(value: &Value) -> Option<u64> {
    value.as_u64()
}

fn close(actual: f64, expected: f64, relative: f64) -> bool {
    actual == expected || (actual - expected).abs() <= relative * expected.abs().max(1e-300)
}

#[test]
fn binomial_tails_match_scipy() {
    let cases = reference("tails");
    assert!(cases.len() > 100);
    for case in cases {
        let (k, n, p) = (
            case["k"].as_i64().unwrap(),
            case["n"].as_u64().unwrap(),
            case["p"].as_f64().unwrap(),
        );
        let (cdf, sf) = (case["cdf"].as_f64().unwrap(), case["sf"].as_f64().unwrap());
        // Below 1e-290 a tail is zero to every purpose; scipy and the beta function part ways
        // on underflow alone.
        if cdf > 1e-290 {
            assert!(close(binomial_cdf(k, n, p), cdf, 1e-9), "cdf {case}");
        }
        if sf > 1e-290 {
            assert!(close(binomial_sf(k, n, p), sf, 1e-9), "sf {case}");
        }
    }
}

#[test]
fn ranks_and_coverage_match_scipy() {
    let cases = reference("intervals");
    assert!(cases.len() >= 300);
    let mut open = 0;
    for case in cases {
        let (n, q, level) = (
            case["n"].as_u64().unwrap(),
            case["q"].as_f64().unwrap(),
            case["level"].as_f64().unwrap(),
        );
        let (r, s) = quantile_ranks(n, q, level);
        assert_eq!((r, s), (rank(&case["r"]), rank(&case["s"])), "{case}");
        open += usize::from(r.is_none() || s.is_none());
        let coverage = case["coverage"].as_f64().unwrap();
        assert!(
            close(quantile_coverage(n, q, r, s), coverage, 1e-9),
            "coverage {case}"
        );
    }
    assert!(open > 20, "the grid holds intervals open on a side");
}

#[test]
fn min_runs_match_scipy() {
    for case in reference("min_runs") {
        let (q, level) = (case["q"].as_f64().unwrap(), case["level"].as_f64().unwrap());
        assert_eq!(
            quantile_min_runs(q, level),
            case["n"].as_u64().unwrap(),
            "{case}"
        );
    }
}

#[test]
fn sample_quantiles_match_numpy_inverted_cdf() {
    for case in reference("samples") {
        let times: Vec<f64> = case["times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect();
        let q = case["q"].as_f64().unwrap();
        assert_eq!(
            sample_quantile(&times, q),
            case["quantile"].as_f64(),
            "{case}"
        );
    }
}
