//! The session store's line format (`runs.jsonl`): the serde shape of every line, for reading
//! and as the oracle, and the writers every run calls.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;
use std::fmt;
use std::io;

use serde::{Deserialize, Serialize};

use crate::format::escape::{quoted, serde, Num, OptionalStr, Str};
use crate::model::{CaseInfo, Record};
use crate::types::stats::StatsConfig;
use crate::types::status::Outcome;
use crate::types::usage::TokenUsage;

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
        /// The statistics settings the process judges with; left out when they are the
        /// defaults.
        #[serde(default, skip_serializing_if = "is_default_stats")]
        stats: Cow<'a, StatsConfig>,
    },
    /// A case a process runs, written before its first start.
    Case { info: Cow<'a, CaseInfo> },
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
    /// The run `seq` of process `proc` finished; who and which run it was is on its start.
    End {
        proc: Cow<'a, str>,
        seq: u64,
        outcome: Outcome,
        #[serde(default)]
        message: Option<Cow<'a, str>>,
        #[serde(default)]
        location: Option<Cow<'a, str>>,
        elapsed: f64,
        cost: f64,
        #[serde(default)]
        usage: Cow<'a, [TokenUsage]>,
    },
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
