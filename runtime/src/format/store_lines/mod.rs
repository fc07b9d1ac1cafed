//! The session store's line format (`runs.jsonl`): the serde shape of every line, the writers
//! every run calls, and the one reader of each line: run lines (a start, an end) by hand
//! ([`hand`]), with serde's shape of them as the tests' oracle; the rarer lines (a process, a
//! case, a binary's items) by serde.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

use crate::format::escape::{quoted, serde, Num, OptionalStr, Str};
use crate::model::{CaseInfo, Record};
use crate::types::stats::StatsConfig;
use crate::types::sum::finite;

mod hand;

/// One line of the session file. Written from borrowed data (every run writes two), read back
/// owned.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
pub(crate) enum Line<'a> {
    /// A process joins the session: whether it runs one test (nextest) or many (libtest), and
    /// the session report it keeps, as the user named it.
    Process {
        proc: Cow<'a, str>,
        per_test: bool,
        #[serde(default)]
        report: Option<Cow<'a, str>>,
        /// The report's path as the process resolved it, for a reader that checks it exists.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report_path: Option<Cow<'a, str>>,
        /// The statistics settings the process judges with; left out when they are the
        /// defaults.
        #[serde(default, skip_serializing_if = "is_default_stats")]
        stats: Cow<'a, StatsConfig>,
    },
    /// A case a process runs, written before its first start. A process that records its
    /// runs in slots (see `store::slots`) numbers its cases: `proc` and `ref` name the case in
    /// its slots.
    Case {
        info: Cow<'a, CaseInfo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proc: Option<Cow<'a, str>>,
        #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
        case_ref: Option<u32>,
    },
    /// The generated test items of a test binary (`binary`, nextest's binary id), written
    /// when nextest lists it and the session will be reconciled with what nextest ran: each
    /// item's name, and the case (an index into `cases`) and run it holds.
    Items {
        binary: Cow<'a, str>,
        cases: Vec<CaseInfo>,
        items: Vec<(String, u32, u32)>,
    },
    /// The tests of a test binary (`binary`, nextest's binary id) that the session's runner
    /// was to run, by name, as `cargo probtest run` listed them before running: the generated
    /// items among them (`Items` says which) that never start are counted as not run. `label`
    /// names the binary to a reader.
    Expected {
        binary: Cow<'a, str>,
        label: Cow<'a, str>,
        names: Vec<String>,
    },
    /// A run is about to execute; `seq` numbers the runs of process `proc`.
    Start {
        proc: Cow<'a, str>,
        seq: u64,
        package: Cow<'a, str>,
        module: Cow<'a, str>,
        case: Cow<'a, str>,
        run: u32,
        attempt: u32,
    },
    /// The run `seq` of process `proc` finished; who and which run it was is on its start, so
    /// `record` names no case until the reader joins the two.
    End {
        proc: Cow<'a, str>,
        seq: u64,
        #[serde(flatten, with = "end_fields")]
        record: Record,
    },
}

/// The fields of an end line after `seq`: how the run ended, every field written (as `null`,
/// `[]` or `0` when empty) by serde, read with the optional ones defaulted.
mod end_fields {
    use std::borrow::Cow;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::model::Record;
    use crate::types::status::Outcome;
    use crate::types::usage::TokenUsage;

    #[derive(Serialize, Deserialize)]
    struct EndFields<'a> {
        outcome: Outcome,
        #[serde(default)]
        message: Option<Cow<'a, str>>,
        #[serde(default)]
        location: Option<Cow<'a, str>>,
        elapsed: f64,
        cost: f64,
        #[serde(default)]
        usage: Cow<'a, [TokenUsage]>,
        /// Seconds waited for limits, and for which, when the run waited.
        #[serde(default)]
        waited: f64,
        #[serde(default)]
        waited_for: Option<Cow<'a, str>>,
        /// The cost replayed from the cassette, when the run replayed anything.
        #[serde(default)]
        replayed: Option<f64>,
    }

    pub(super) fn serialize<S: Serializer>(
        record: &Record,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        EndFields {
            outcome: record.outcome,
            message: record.message.as_deref().map(Cow::Borrowed),
            location: record.location.as_deref().map(Cow::Borrowed),
            elapsed: record.elapsed,
            cost: record.cost,
            usage: Cow::Borrowed(&record.usage),
            waited: record.waited,
            waited_for: record.waited_for.as_deref().map(Cow::Borrowed),
            replayed: record.replayed,
        }
        .serialize(serializer)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Record, D::Error> {
        let fields = EndFields::deserialize(deserializer)?;
        Ok(Record {
            outcome: fields.outcome,
            message: fields.message.map(Cow::into_owned),
            location: fields.location.map(Cow::into_owned),
            elapsed: fields.elapsed,
            cost: fields.cost,
            usage: fields.usage.into_owned(),
            waited: fields.waited,
            waited_for: fields.waited_for.map(Cow::into_owned),
            replayed: fields.replayed,
            ..Record::default()
        })
    }
}

impl Line<'static> {
    /// One line of a session file; `None` for a blank separator or a line torn by a process
    /// killed mid-write. Run lines (a start, an end) are read by hand, and only that way: a
    /// report's folding reads every line of the session, and serde in an unoptimized build
    /// takes some ten times as long (serde's derived reading of them is the tests' oracle).
    /// The other lines, one a process or a case, go through serde.
    pub(crate) fn parse(bytes: &[u8]) -> Option<Line<'static>> {
        if bytes.starts_with(b"{\"t\":\"start\"") {
            hand::start(bytes)
        } else if bytes.starts_with(b"{\"t\":\"end\"") {
            hand::end(bytes)
        } else {
            serde_json::from_slice(bytes).ok()
        }
    }
}

fn is_default_stats(stats: &impl std::ops::Deref<Target = StatsConfig>) -> bool {
    **stats == StatsConfig::default()
}

/// The identity fields of a start line, escaped once per case: every run writes them.
pub(crate) fn identity_fragment(package: &str, module: &str, case: &str) -> String {
    format!(
        "\"package\":{},\"module\":{},\"case\":{}",
        quoted(package),
        quoted(module),
        quoted(case)
    )
}

/// The store line a process starts with (`store::Line::Process`), as serde_json writes it:
/// every nextest process writes one. The statistics settings are left out when they are the
/// defaults.
pub(crate) fn process_line(
    proc: &str,
    per_test: bool,
    report: Option<(&str, &str)>,
    stats: &StatsConfig,
) -> io::Result<String> {
    let stats = if *stats == StatsConfig::default() {
        String::new()
    } else {
        format!(",\"stats\":{}", serde(stats)?)
    };
    let report_path = match report {
        Some((_, path)) => format!(",\"report_path\":{}", Str(path)),
        None => String::new(),
    };
    Ok(format!(
        "{{\"t\":\"process\",\"proc\":{},\"per_test\":{per_test},\"report\":{}{report_path}{stats}}}",
        Str(proc),
        OptionalStr(report.map(|(named, _)| named)),
    ))
}

/// A run's start line (`store::Line::Start`), with a newline before it, from the case's
/// identity fields already escaped (`store::identity_fragment`): every run writes one.
///
/// `proc` is a process id of digits and `-` (see `ProcessFile`), written as it is: escaping it
/// byte by byte twice a run cost more, unoptimized, than the rest of the line.
pub(crate) fn start_line(proc: &str, seq: u64, identity: &str, run: u32, attempt: u32) -> String {
    format!(
        "\n{{\"t\":\"start\",\"proc\":\"{proc}\",\"seq\":{seq},{identity},\"run\":{run},\"attempt\":{attempt}}}"
    )
}

/// A run's end line (`store::Line::End`), with a newline before it: every run writes one.
/// The message, location and usage are left out when there are none. `proc` is written as it
/// is, as in [`start_line`].
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
    // Rare; spelled as the report's records spell them, in the order `hand::end` reads them.
    let extras = crate::format::report::record_extras(record);
    Ok(format!(
        "\n{{\"t\":\"end\",\"proc\":\"{proc}\",\"seq\":{seq},\"outcome\":\"{}\",\"elapsed\":{},\"cost\":{}{}{}{usage}{extras}}}",
        record.outcome.name(),
        // JSON has no infinity: the line would be unreadable, its run counted as died.
        Num(finite(record.elapsed)),
        Num(finite(record.cost)),
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
///
/// `slot_ref` is the process and the case's number in its slots, for a process that records
/// runs in slots.
pub(crate) fn case_line(info: &CaseInfo, slot_ref: Option<(&str, u32)>) -> io::Result<String> {
    let info = case_info(info)?;
    Ok(match slot_ref {
        Some((proc, case_ref)) => {
            format!("{{\"t\":\"case\",\"info\":{info},\"proc\":\"{proc}\",\"ref\":{case_ref}}}")
        }
        None => format!("{{\"t\":\"case\",\"info\":{info}}}"),
    })
}

/// A case's description, as `serde_json::to_string(info)` writes it, up to number spelling:
/// the store's case lines and the report's rows both start with it.
pub(crate) fn case_info(info: &CaseInfo) -> io::Result<String> {
    let mut gate = match &info.gate {
        Some(gate) => format!(",\"gate_spec\":{}", serde(gate)?),
        None => String::new(),
    };
    // Rare and small: a comparison's spec and the groups' values, as serde writes them.
    if let Some(compare) = &info.compare {
        gate.push_str(&format!(",\"compare_spec\":{}", serde(compare)?));
    }
    if let Some(latency) = &info.latency {
        gate.push_str(&format!(",\"latency_spec\":{}", serde(latency)?));
    }
    if !info.parts.is_empty() {
        gate.push_str(&format!(",\"parts\":{}", serde(&info.parts)?));
    }
    Ok(format!(
        "{{\"case\":{},\"package\":{},\"module\":{},\"function\":{},\
         \"case_id\":{},\"file\":{},\"line\":{},\"index\":{},\"runs\":{},\"params\":{}{gate}}}",
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
