//! JSON written by hand for what every run writes to the session report: its record, its row's
//! counts and verdict, and the session's totals; and for the store lines every nextest process
//! writes.
//!
//! Test builds compile probtest and serde_json without optimizations, and there encoding these
//! through serde_json took longer than a short test; so did appending them piece by piece to a
//! `String`, a call chain with debug checks per piece. Each text here is one `format!`: std
//! comes precompiled with optimizations, and `format!` runs in it from start to end, calling
//! back here only for strings to escape and numbers JSON cannot hold. Usage, gates, metrics and
//! non-default settings go through serde_json, and only when present. The tests check that
//! every form here reads back as the same JSON value that serde_json writes (the texts differ
//! only in how a large exponent is spelled: `1e21` here, `1e+21` there).

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::Serialize;

use crate::model::{Aggregate, CaseInfo, Record, Row, Totals};
use crate::stats::StatsConfig;

/// A JSON string, escaped as serde_json escapes it, quotes included.
struct Str<'a>(&'a str);

impl fmt::Display for Str<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let bytes = text.as_bytes();
        out.write_str("\"")?;
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
            out.write_str(&text[plain_from..at - 1])?;
            plain_from = at;
            if escape.is_empty() {
                write!(out, "\\u{byte:04x}")?;
            } else {
                out.write_str(escape)?;
            }
        }
        out.write_str(&text[plain_from..])?;
        out.write_str("\"")
    }
}

/// An optional string: the string, or `null`.
struct OptionalStr<'a>(Option<&'a str>);

impl fmt::Display for OptionalStr<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(text) => Str(text).fmt(out),
            None => out.write_str("null"),
        }
    }
}

/// A number: the shortest text that reads back as it (`0.5`, `1e-7`), or `null` for a value
/// JSON cannot hold, as serde_json writes it.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            fmt::Debug::fmt(&self.0, out)
        } else {
            out.write_str("null")
        }
    }
}

/// A value through serde_json: unit enum variants, and what is usually empty.
fn serde<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    serde_json::to_string(value).map_err(io::Error::other)
}

/// `empty` when the value is empty (without calling serde_json), else the value.
fn serde_or<'a, T: Serialize + ?Sized>(
    value: &T,
    is_empty: bool,
    empty: &'a str,
) -> io::Result<Cow<'a, str>> {
    if is_empty {
        Ok(Cow::Borrowed(empty))
    } else {
        serde(value).map(Cow::Owned)
    }
}

/// A JSON string of `text`, quotes included.
pub(crate) fn quoted(text: &str) -> String {
    Str(text).to_string()
}

/// A record, as `serde_json::to_string(record)` writes it, up to number spelling.
pub(crate) fn record(record: &Record) -> io::Result<String> {
    let usage = serde_or(&record.usage, record.usage.is_empty(), "[]")?;
    Ok(format!(
        "{{\"case\":{},\"package\":{},\"module\":{},\"run\":{},\"attempt\":{},\"outcome\":\"{}\",\
         \"message\":{},\"location\":{},\"elapsed\":{},\"cost\":{},\"usage\":{usage}}}",
        Str(&record.case),
        Str(&record.package),
        Str(&record.module),
        record.run,
        record.attempt,
        record.outcome.name(),
        OptionalStr(record.message.as_deref()),
        OptionalStr(record.location.as_deref()),
        Num(record.elapsed),
        Num(record.cost),
    ))
}

/// What follows a row's case fields: `"passes":…}`, as serde_json writes the rest of the row.
pub(crate) fn row_tail(row: &Row) -> io::Result<String> {
    let usage = serde_or(&row.usage, row.usage.is_empty(), "{}")?;
    let gate = serde_or(&row.gate, row.gate.is_none(), "null")?;
    let metrics = serde_or(&row.metrics, row.metrics.is_empty(), "{}")?;
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
    Ok(match &row.ci {
        Some(ci) => format!(
            "{counts}{{\"method\":\"{}\",\"level\":{},\"low\":{},\"high\":{}}},\"gate\":{gate},\
             \"metrics\":{metrics}}}",
            ci.method.name(),
            Num(ci.level),
            Num(ci.low),
            Num(ci.high),
        ),
        None => format!("{counts}null,\"gate\":{gate},\"metrics\":{metrics}}}"),
    })
}

/// Totals, as `serde_json::to_string(totals)` writes them, up to number spelling.
pub(crate) fn totals(totals: &Totals) -> io::Result<String> {
    let usage = serde_or(&totals.usage, totals.usage.is_empty(), "{}")?;
    Ok(format!(
        "{{\"passes\":{},\"fails\":{},\"errors\":{},\"count\":{},\"pass_rate\":{},\"cost\":{},\
         \"usage\":{usage},\"retries\":{}}}",
        totals.passes,
        totals.fails,
        totals.errors,
        totals.count,
        Num(totals.pass_rate),
        Num(totals.cost),
        totals.retries,
    ))
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
    let totals = self::totals(totals)?;
    let aggregates = serde_or(aggregates, aggregates.is_empty(), "[]")?;
    let warnings = serde_or(warnings, warnings.is_empty(), "[]")?;
    Ok(format!(
        "\"runs\":{runs},\"exit_status\":{exit_status},\"totals\":{totals},\
         \"aggregates\":{aggregates},\"warnings\":{warnings}"
    ))
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
    let stats = if *stats == StatsConfig::default() {
        String::new()
    } else {
        format!(",\"stats\":{}", serde(stats)?)
    };
    Ok(format!(
        "{{\"t\":\"process\",\"proc\":{},\"per_test\":{per_test},\"report\":{}{stats}}}",
        Str(proc),
        OptionalStr(report),
    ))
}

/// A run's start line (`store::Line::Start`), with a newline before it, from the case's
/// identity fields already escaped (`store::identity_fragment`): every run writes one.
pub(crate) fn start_line(proc: &str, seq: u64, identity: &str, run: u32, attempt: u32) -> String {
    format!(
        "\n{{\"t\":\"start\",\"proc\":{},\"seq\":{seq},{identity},\"run\":{run},\"attempt\":{attempt}}}",
        Str(proc)
    )
}

/// A run's end line (`store::Line::End`), with a newline before it: every run writes one.
/// The message, location and usage are left out when there are none.
pub(crate) fn end_line(proc: &str, seq: u64, record: &Record) -> io::Result<String> {
    let optional = |key: &str, text: &Option<String>| match text {
        Some(text) => format!(",\"{key}\":{}", Str(text)),
        None => String::new(),
    };
    let usage = if record.usage.is_empty() {
        String::new()
    } else {
        format!(",\"usage\":{}", serde(&record.usage)?)
    };
    Ok(format!(
        "\n{{\"t\":\"end\",\"proc\":{},\"seq\":{seq},\"outcome\":\"{}\",\"elapsed\":{},\"cost\":{}{}{}{usage}}}",
        Str(proc),
        record.outcome.name(),
        Num(record.elapsed),
        Num(record.cost),
        optional("message", &record.message),
        optional("location", &record.location),
    ))
}

/// A case's parameters as a JSON object.
struct Params<'a>(&'a [(String, String)]);

impl fmt::Display for Params<'_> {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str("{")?;
        for (position, (name, value)) in self.0.iter().enumerate() {
            if position > 0 {
                out.write_str(",")?;
            }
            write!(out, "{}:{}", Str(name), Str(value))?;
        }
        out.write_str("}")
    }
}

/// The store line describing a case (`store::Line::Case`), as serde_json writes it: a nextest
/// process describes the case it runs, so every process writes one.
pub(crate) fn case_line(info: &CaseInfo) -> io::Result<String> {
    let gate = match &info.gate {
        Some(gate) => format!(",\"gate_spec\":{}", serde(gate)?),
        None => String::new(),
    };
    Ok(format!(
        "{{\"t\":\"case\",\"info\":{{\"case\":{},\"package\":{},\"module\":{},\"function\":{},\
         \"case_id\":{},\"file\":{},\"line\":{},\"index\":{},\"runs\":{},\"params\":{}{gate}}}}}",
        Str(&info.case),
        Str(&info.package),
        Str(&info.module),
        Str(&info.function),
        Str(&info.case_id),
        Str(&info.file),
        info.line,
        info.index,
        info.runs,
        Params(&info.params.0),
    ))
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
