//! The shapes' own checks: the spellings and the fields left out that the report gives the
//! plain values and the statistics, pinned as text, so that moving a shape cannot change a
//! report.

use crate::types::ordered_map::OrderedMap;
use crate::types::stats::latency::LatencySpec;
use crate::types::stats::paired::Adjustment;
use crate::types::stats::stopping::StopMode;
use crate::types::stats::{
    ErrorPolicy, GateSpec, IntervalSpec, Method, Metric, Prior, Rule, StatsConfig, Undecided,
    Verdict,
};
use crate::types::status::{Outcome, Status};
use crate::types::usage::TokenUsage;

#[test]
fn names_are_the_serialized_spellings() {
    for outcome in [
        Outcome::Pass,
        Outcome::Fail,
        Outcome::Error,
        Outcome::Stopped,
    ] {
        assert_eq!(
            serde_json::to_string(&outcome).expect("serde writes it"),
            format!("\"{}\"", outcome.name())
        );
    }
    let statuses = [
        Status::Pass,
        Status::Flaky,
        Status::Errored,
        Status::Fail,
        Status::Error,
    ];
    for status in statuses {
        assert_eq!(
            serde_json::to_string(&status).expect("serde writes it"),
            format!("\"{}\"", status.name())
        );
    }
}

#[test]
fn the_settings_a_report_keeps_are_spelled_as_the_settings_spell_them() {
    for method in [
        Method::Exact,
        Method::Wilson,
        Method::Bayes,
        Method::Sequential,
    ] {
        let written = serde_json::to_string(&method).expect("serde writes it");
        assert_eq!(written, format!("\"{}\"", method.name()));
        assert_eq!(serde_json::from_str::<Method>(&written).ok(), Some(method));
    }
    for stop in [StopMode::Off, StopMode::Curtail, StopMode::Sequential] {
        let written = serde_json::to_string(&stop).expect("serde writes it");
        assert_eq!(written, format!("\"{}\"", stop.name()));
    }
    for adjustment in [
        Adjustment::None,
        Adjustment::Holm,
        Adjustment::Bonferroni,
        Adjustment::Bh,
    ] {
        let written = serde_json::to_string(&adjustment).expect("serde writes it");
        assert_eq!(written, format!("\"{}\"", adjustment.name()));
    }
}

#[test]
fn stats_config_keeps_its_shape_and_leaves_out_what_is_off() {
    let default = StatsConfig::default();
    assert_eq!(
        serde_json::to_string(&default).expect("serde writes it"),
        concat!(
            r#"{"method":"exact","level":0.95,"prior":{"a":1.0,"b":1.0},"intervals":true,"#,
            r#""min_rate":null,"undecided":"fail","errors":"count","metrics":[],"explain":false,"#,
            r#""resamples":5000,"seed":0,"min_inputs":10,"adjust":"none"}"#
        )
    );
    // A report written before the later settings existed reads them as their defaults.
    let oldest = r#"{"method":"exact","level":0.95,"prior":{"a":1.0,"b":1.0}}"#;
    assert_eq!(
        serde_json::from_str::<StatsConfig>(oldest).expect("serde reads it"),
        default
    );
    let every = StatsConfig {
        interval: IntervalSpec {
            method: Method::Bayes,
            level: 0.9,
            prior: Prior { a: 2.0, b: 3.0 },
        },
        intervals: false,
        min_rate: Some(0.8),
        undecided: Undecided::Pass,
        errors: ErrorPolicy::Exclude,
        metrics: vec![Metric::PassAll(3), Metric::PassAny(5)],
        explain: true,
        resamples: 100,
        seed: 7,
        min_inputs: 4,
        compare: Some("model".into()),
        adjust: Adjustment::Holm,
        baseline: Some("old.json".into()),
        margin: Some(0.05),
        stop: StopMode::Sequential,
        latency: true,
        latency_quantile: 0.99,
    };
    let written = serde_json::to_string(&every).expect("serde writes it");
    assert_eq!(
        written,
        concat!(
            r#"{"method":"bayes","level":0.9,"prior":{"a":2.0,"b":3.0},"intervals":false,"#,
            r#""min_rate":0.8,"undecided":"pass","errors":"exclude","#,
            r#""metrics":[{"PassAll":3},{"PassAny":5}],"explain":true,"resamples":100,"seed":7,"#,
            r#""min_inputs":4,"compare":"model","adjust":"holm","baseline":"old.json","#,
            r#""margin":0.05,"stop":"sequential","latency":true,"latency_quantile":0.99}"#
        )
    );
    assert_eq!(
        serde_json::from_str::<StatsConfig>(&written).expect("serde reads it"),
        every
    );
}

#[test]
fn gates_flatten_their_rule_and_verdicts_of_schema_1_still_read() {
    let spec = GateSpec {
        rule: Rule::MinRate(0.9),
        method: None,
        level: Some(0.99),
        prior: None,
    };
    let written = serde_json::to_string(&spec).expect("serde writes it");
    assert_eq!(
        written,
        r#"{"rule":"min_rate","bar":0.9,"method":null,"level":0.99,"prior":null}"#
    );
    assert_eq!(
        serde_json::from_str::<GateSpec>(&written).expect("serde reads it"),
        spec
    );
    let passes = serde_json::to_string(&Rule::MinPasses(8)).expect("serde writes it");
    assert_eq!(passes, r#"{"rule":"min_passes","bar":8}"#);
    for (text, verdict) in [
        ("\"pass\"", Verdict::Pass),
        ("\"FAIL\"", Verdict::Fail),
        ("\"UNDECIDED\"", Verdict::Undecided),
    ] {
        assert_eq!(serde_json::from_str::<Verdict>(text).ok(), Some(verdict));
    }
    assert_eq!(
        serde_json::to_string(&Verdict::Undecided).expect("serde writes it"),
        "\"undecided\""
    );
}

#[test]
fn usage_reads_what_the_caller_left_out_and_a_latency_spec_writes_only_what_is_set() {
    let usage: TokenUsage =
        serde_json::from_str(r#"{"model":"m","input_tokens":3}"#).expect("serde reads it");
    assert_eq!(
        usage,
        TokenUsage {
            model: "m".into(),
            input_tokens: 3,
            ..TokenUsage::default()
        }
    );
    assert_eq!(
        serde_json::to_string(&usage).expect("serde writes it"),
        r#"{"model":"m","input_tokens":3,"output_tokens":0,"cached_input_tokens":0,"cost":0.0}"#
    );
    let spec = LatencySpec {
        max_latency: Some(2.0),
        ..LatencySpec::default()
    };
    assert_eq!(
        serde_json::to_string(&spec).expect("serde writes it"),
        r#"{"max_latency":2.0}"#
    );
    assert_eq!(
        serde_json::from_str::<LatencySpec>("{}").expect("serde reads it"),
        LatencySpec::default()
    );
    let params = OrderedMap(vec![("z".to_string(), 1), ("a".to_string(), 2)]);
    let written = serde_json::to_string(&params).expect("serde writes it");
    assert_eq!(written, r#"{"z":1,"a":2}"#);
    assert_eq!(
        serde_json::from_str::<OrderedMap<i32>>(&written).expect("serde reads it"),
        params
    );
}
