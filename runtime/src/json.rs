//! JSON written by hand for what every run writes to the session report: its record, its row's
//! counts and verdict, and the session's totals.
//!
//! Test builds compile serde_json without optimizations, and there encoding these took longer
//! than a short test. The standard library comes precompiled with optimizations, so numbers
//! go through its formatting. Strings are escaped here, as serde_json escapes them. Usage,
//! gates, metrics and non-default settings go through serde_json, and only when present. The
//! tests check
//! that every form here reads back as the same JSON value that serde_json writes (the texts
//! differ only in how a large exponent is spelled: `1e21` here, `1e+21` there).

use std::fmt::Write as _;
use std::io;

use serde::Serialize;

use crate::model::{Aggregate, CaseInfo, Record, Row, Totals};
use crate::stats::StatsConfig;

/// A JSON text being written.
pub(crate) struct JsonText(String);

impl JsonText {
    pub(crate) fn with_capacity(capacity: usize) -> JsonText {
        JsonText(String::with_capacity(capacity))
    }

    pub(crate) fn into_string(self) -> String {
        self.0
    }

    fn raw(&mut self, text: &str) -> &mut JsonText {
        self.0.push_str(text);
        self
    }

    /// A key with its punctuation, spelled out by the caller (`,"fails":`): one copy.
    fn key(&mut self, key: &'static str) -> &mut JsonText {
        self.0.push_str(key);
        self
    }

    fn i64(&mut self, value: i64) -> &mut JsonText {
        let _ = write!(self.0, "{value}");
        self
    }

    fn u64(&mut self, value: u64) -> &mut JsonText {
        let _ = write!(self.0, "{value}");
        self
    }

    /// The shortest text that reads back as `value` (`0.5`, `1e-7`), or `null` for a value
    /// JSON cannot hold, as serde_json writes it.
    fn f64(&mut self, value: f64) -> &mut JsonText {
        if value.is_finite() {
            let _ = write!(self.0, "{value:?}");
        } else {
            self.0.push_str("null");
        }
        self
    }

    /// A string, escaped as serde_json escapes it.
    fn string(&mut self, text: &str) -> &mut JsonText {
        self.0.push('"');
        let bytes = text.as_bytes();
        let mut plain_from = 0;
        // An index loop: iterator adapters cost several calls a byte in unoptimized builds.
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            at += 1;
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0c => "\\f",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.push_str(&text[plain_from..at - 1]);
            plain_from = at;
            if escape.is_empty() {
                let _ = write!(self.0, "\\u{:04x}", byte);
            } else {
                self.0.push_str(escape);
            }
        }
        self.0.push_str(&text[plain_from..]);
        self.0.push('"');
        self
    }

    /// A name known to need no escaping, such as an enum variant's.
    fn name(&mut self, name: &'static str) -> &mut JsonText {
        self.0.push('"');
        self.0.push_str(name);
        self.0.push('"');
        self
    }

    fn optional_string(&mut self, text: Option<&str>) -> &mut JsonText {
        match text {
            Some(text) => self.string(text),
            None => self.raw("null"),
        }
    }

    /// The object's opening counts, shared by rows and totals: passes, fails, errors, the
    /// runs counted (under the key each gives) and the pass rate.
    fn counts(
        &mut self,
        [passes, fails, errors]: [u64; 3],
        counted: (&'static str, u64),
        rate: f64,
    ) {
        self.key("{\"passes\":").u64(passes);
        self.key(",\"fails\":").u64(fails);
        self.key(",\"errors\":").u64(errors);
        self.key(counted.0).u64(counted.1);
        self.key(",\"pass_rate\":").f64(rate);
    }

    /// A value through serde_json: unit enum variants, and what is usually empty.
    fn serde<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<&mut JsonText> {
        let text = serde_json::to_string(value).map_err(io::Error::other)?;
        self.0.push_str(&text);
        Ok(self)
    }

    /// `empty` when the value is empty (without calling serde_json), else the value.
    fn serde_or<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
        is_empty: bool,
        empty: &str,
    ) -> io::Result<&mut JsonText> {
        if is_empty {
            Ok(self.raw(empty))
        } else {
            self.serde(value)
        }
    }
}

/// A JSON string of `text`, quotes included.
pub(crate) fn quoted(text: &str) -> String {
    let mut json = JsonText::with_capacity(text.len() + 2);
    json.string(text);
    json.into_string()
}

/// A record, as `serde_json::to_string(record)` writes it, up to number spelling.
pub(crate) fn record(record: &Record) -> io::Result<String> {
    let mut json = JsonText::with_capacity(256);
    json.key("{\"case\":").string(&record.case);
    json.key(",\"package\":").string(&record.package);
    json.key(",\"module\":").string(&record.module);
    json.key(",\"run\":").u64(u64::from(record.run));
    json.key(",\"attempt\":").u64(u64::from(record.attempt));
    json.key(",\"outcome\":").name(record.outcome.name());
    json.key(",\"message\":")
        .optional_string(record.message.as_deref());
    json.key(",\"location\":")
        .optional_string(record.location.as_deref());
    json.key(",\"elapsed\":").f64(record.elapsed);
    json.key(",\"cost\":").f64(record.cost);
    json.key(",\"usage\":")
        .serde_or(&record.usage, record.usage.is_empty(), "[]")?;
    json.raw("}");
    Ok(json.into_string())
}

/// What follows a row's case fields: `"passes":…}`, as serde_json writes the rest of the row.
pub(crate) fn row_tail(row: &Row) -> io::Result<String> {
    let mut json = JsonText::with_capacity(320);
    json.counts(
        [row.passes, row.fails, row.errors],
        (",\"total\":", row.total),
        row.pass_rate,
    );
    json.key(",\"status\":").name(row.status.name());
    json.key(",\"cost\":").f64(row.cost);
    json.key(",\"usage\":")
        .serde_or(&row.usage, row.usage.is_empty(), "{}")?;
    json.key(",\"ci\":");
    match &row.ci {
        Some(ci) => {
            json.key("{\"method\":").name(ci.method.name());
            json.key(",\"level\":").f64(ci.level);
            json.key(",\"low\":").f64(ci.low);
            json.key(",\"high\":").f64(ci.high);
            json.raw("}");
        }
        None => {
            json.raw("null");
        }
    }
    json.key(",\"gate\":")
        .serde_or(&row.gate, row.gate.is_none(), "null")?;
    json.key(",\"metrics\":")
        .serde_or(&row.metrics, row.metrics.is_empty(), "{}")?;
    json.raw("}");
    let mut text = json.into_string();
    text.remove(0);
    Ok(text)
}

/// Totals, as `serde_json::to_string(totals)` writes them, up to number spelling.
pub(crate) fn totals(totals: &Totals) -> io::Result<String> {
    let mut json = JsonText::with_capacity(200);
    json.counts(
        [totals.passes, totals.fails, totals.errors],
        (",\"count\":", totals.count),
        totals.pass_rate,
    );
    json.key(",\"cost\":").f64(totals.cost);
    json.key(",\"usage\":")
        .serde_or(&totals.usage, totals.usage.is_empty(), "{}")?;
    json.key(",\"retries\":").u64(totals.retries);
    json.raw("}");
    Ok(json.into_string())
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
    let mut json = JsonText::with_capacity(320);
    json.key("\"runs\":").u64(u64::from(runs));
    json.key(",\"exit_status\":").i64(i64::from(exit_status));
    json.key(",\"totals\":").raw(&self::totals(totals)?);
    json.key(",\"aggregates\":")
        .serde_or(aggregates, aggregates.is_empty(), "[]")?;
    json.key(",\"warnings\":")
        .serde_or(warnings, warnings.is_empty(), "[]")?;
    Ok(json.into_string())
}

/// The store line a process starts with (`store::Line::Process`), as serde_json writes it:
/// every nextest process writes one. The statistics settings are left out when they are the
/// defaults.
pub(crate) fn process_line(
    proc: &str,
    per_test: bool,
    report: Option<&str>,
    stats: &StatsConfig,
) -> io::Result<String> {
    let mut json = JsonText::with_capacity(128);
    json.key("{\"t\":\"process\",\"proc\":").string(proc);
    json.key(",\"per_test\":")
        .raw(if per_test { "true" } else { "false" });
    json.key(",\"report\":").optional_string(report);
    if *stats != StatsConfig::default() {
        json.key(",\"stats\":").serde(stats)?;
    }
    json.raw("}");
    Ok(json.into_string())
}

/// The store line describing a case (`store::Line::Case`), as serde_json writes it: a nextest
/// process describes the case it runs, so every process writes one.
pub(crate) fn case_line(info: &CaseInfo) -> io::Result<String> {
    let mut json = JsonText::with_capacity(256);
    json.key("{\"t\":\"case\",\"info\":{\"case\":")
        .string(&info.case);
    json.key(",\"package\":").string(&info.package);
    json.key(",\"module\":").string(&info.module);
    json.key(",\"function\":").string(&info.function);
    json.key(",\"case_id\":").string(&info.case_id);
    json.key(",\"file\":").string(&info.file);
    json.key(",\"line\":").u64(u64::from(info.line));
    json.key(",\"index\":").u64(u64::from(info.index));
    json.key(",\"runs\":").u64(u64::from(info.runs));
    json.key(",\"params\":{");
    for (position, (name, value)) in info.params.0.iter().enumerate() {
        if position > 0 {
            json.raw(",");
        }
        json.string(name).raw(":").string(value);
    }
    json.raw("}");
    if let Some(gate) = &info.gate {
        json.key(",\"gate_spec\":").serde(gate)?;
    }
    json.raw("}}");
    Ok(json.into_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{info, record as sample_record};
    use crate::model::{OrderedMap, Report};
    use crate::stats::{GateSpec, Method, Metric, Rule, StatsConfig};
    use crate::status::Outcome;
    use crate::usage::TokenUsage;

    fn usage(model: &str) -> TokenUsage {
        TokenUsage {
            model: model.into(),
            input_tokens: 1200,
            output_tokens: 34,
            cached_input_tokens: 5,
            cost: 0.000_012_5,
        }
    }

    /// Two JSON texts hold the same value.
    fn assert_same_json(ours: &str, serde: &str) {
        let parse = |text: &str| {
            serde_json::from_str::<serde_json::Value>(text)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {text}"))
        };
        assert_eq!(parse(ours), parse(serde), "\n ours: {ours}\nserde: {serde}");
    }

    /// Records with every field set and unset, odd strings and awkward numbers.
    fn records() -> Vec<Record> {
        let mut records = vec![
            sample_record("classify::plain", 1, Outcome::Pass, 0.0, vec![]),
            sample_record("classify::b", 2, Outcome::Fail, 1e-7, vec![usage("m")]),
            sample_record(
                "classify::\"quoted\" \\ tab\t é ✓",
                3,
                Outcome::Error,
                12345.678,
                vec![usage("gpt \"4\""), usage("other")],
            ),
        ];
        records[1].message = Some("assertion `left == right` failed\n  left: 1".into());
        records[1].location = Some("tests/evals.rs:10:5".into());
        records[1].elapsed = 1.5e-9;
        records[2].attempt = 2;
        records[2].elapsed = 3.0;
        records[0].elapsed = 0.1 + 0.2;
        records[0].cost = 1e21;
        records
    }

    #[test]
    fn records_read_as_serde_writes_them() {
        for record in records() {
            let expected = serde_json::to_string(&record).expect("serde writes it");
            assert_same_json(&super::record(&record).expect("written"), &expected);
        }
    }

    #[test]
    fn row_tails_and_totals_read_as_serde_writes_them() {
        for method in [Method::Exact, Method::Wilson, Method::Bayes] {
            let mut stats = StatsConfig {
                min_rate: Some(0.5),
                metrics: vec![Metric::PassAll(2), Metric::PassAny(2)],
                ..StatsConfig::default()
            };
            stats.interval.method = method;
            let records = records();
            let mut infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
            infos[0].gate = Some(GateSpec {
                rule: Rule::MinPasses(1),
                method: None,
                level: None,
                prior: None,
            });
            let report = Report::build(infos, records, &stats);
            for row in &report.rows {
                let whole = serde_json::to_string(row).expect("serde writes it");
                let parts = row.info.row_prefix().expect("prefix") + &row_tail(row).expect("tail");
                assert_same_json(&parts, &whole);
            }
            let expected = serde_json::to_string(&report.totals).expect("serde writes it");
            assert_same_json(&totals(&report.totals).expect("written"), &expected);
        }
        let empty = Totals {
            usage: OrderedMap::default(),
            ..Totals::default()
        };
        assert_same_json(
            &totals(&empty).expect("written"),
            &serde_json::to_string(&empty).expect("serde writes it"),
        );
    }

    #[test]
    fn the_head_holds_the_reports_changing_fields() {
        let stats = StatsConfig {
            metrics: vec![Metric::PassAll(2)],
            ..StatsConfig::default()
        };
        let records = records();
        let infos: Vec<_> = records.iter().map(|r| info(&r.case)).collect();
        let mut report = Report::build(infos, records, &stats);
        report.warnings = vec!["a \"quoted\" warning".into()];
        assert!(!report.aggregates.is_empty());
        for (aggregates, warnings) in [
            (&report.aggregates[..], &report.warnings[..]),
            (&[][..], &[][..]),
        ] {
            let head = head(10, 1, &report.totals, aggregates, warnings).expect("written");
            let expected = serde_json::json!({
                "runs": 10,
                "exit_status": 1,
                "totals": report.totals,
                "aggregates": aggregates,
                "warnings": warnings,
            });
            assert_same_json(&format!("{{{head}}}"), &expected.to_string());
        }
    }

    #[test]
    fn strings_are_escaped_as_serde_escapes_them() {
        let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
        for text in [
            "",
            "plain",
            "é ✓ \u{2028}",
            "\"\\\"",
            "\u{7f}\u{0}x",
            &every_ascii,
        ] {
            assert_eq!(
                quoted(text),
                serde_json::to_string(text).expect("serde writes it")
            );
        }
    }

    #[test]
    fn process_lines_read_as_serde_writes_them() {
        use crate::store::Line;
        use std::borrow::Cow;
        let judging = StatsConfig {
            min_rate: Some(0.8),
            ..StatsConfig::default()
        };
        for stats in [StatsConfig::default(), judging] {
            for report in [None, Some("out/report \"1\".json")] {
                for per_test in [true, false] {
                    let ours = process_line("123-456", per_test, report, &stats).expect("written");
                    let line = Line::Process {
                        proc: Cow::Borrowed("123-456"),
                        per_test,
                        report: report.map(Cow::Borrowed),
                        stats: Cow::Borrowed(&stats),
                    };
                    let expected = serde_json::to_string(&line).expect("serde writes it");
                    assert_same_json(&ours, &expected);
                }
            }
        }
    }

    #[test]
    fn case_lines_read_as_serde_writes_them() {
        use crate::store::Line;
        use std::borrow::Cow;
        let plain = info("classify::plain");
        let mut odd = info("classify::\"odd\" ✓");
        odd.params = OrderedMap(vec![
            ("prompt".into(), "\"say \\\"hi\\\"\"\n".into()),
            ("n".into(), "3".into()),
        ]);
        odd.gate = Some(GateSpec {
            rule: Rule::MinRate(0.8),
            method: Some(Method::Wilson),
            level: Some(0.9),
            prior: None,
        });
        for info in [plain, odd] {
            let ours = case_line(&info).expect("written");
            let expected = serde_json::to_string(&Line::Case {
                info: Cow::Borrowed(&info),
            })
            .expect("serde writes it");
            assert_same_json(&ours, &expected);
        }
    }

    #[test]
    fn numbers_json_cannot_hold_are_null() {
        let mut record = sample_record("classify::a", 1, Outcome::Pass, f64::NAN, vec![]);
        record.elapsed = f64::INFINITY;
        assert_same_json(
            &super::record(&record).expect("written"),
            &serde_json::to_string(&record).expect("serde writes it"),
        );
    }
}
