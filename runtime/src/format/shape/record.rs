//! A record's JSON shape in the report: pytest-probability's, plus probtest's fields.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::format::report::{spent, texts};
use crate::model::Record;
use crate::types::status::Outcome;
use crate::types::sum::finite;
use crate::types::usage::TokenUsage;

/// A record as the report holds it, pytest-probability's shape plus probtest's fields: the
/// text of a failed run in `message`, of an errored run in `error`, and a `cost` of `null` for
/// a run that spent nothing. Reading takes reports of schema 1 too, which kept both texts in
/// `message`, and the peer's records, which have no package, module, attempt or location.
#[derive(Serialize, Deserialize)]
struct RecordShape<'a> {
    case: Cow<'a, str>,
    #[serde(default)]
    package: Cow<'a, str>,
    #[serde(default)]
    module: Cow<'a, str>,
    run: u32,
    #[serde(default = "first_attempt")]
    attempt: u32,
    outcome: Outcome,
    #[serde(default)]
    message: Option<Cow<'a, str>>,
    #[serde(default)]
    error: Option<Cow<'a, str>>,
    #[serde(default)]
    location: Option<Cow<'a, str>>,
    #[serde(default)]
    elapsed: f64,
    #[serde(default)]
    cost: Option<f64>,
    #[serde(default)]
    usage: Cow<'a, [TokenUsage]>,
    /// probtest's: seconds waited for limits and for which, when the run waited.
    #[serde(default, skip_serializing_if = "is_zero")]
    waited: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    waited_for: Option<Cow<'a, str>>,
    /// probtest's: the cost replayed from the cassette, when the run replayed anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replayed: Option<f64>,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

fn first_attempt() -> u32 {
    1
}

impl serde::Serialize for Record {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (message, error) = texts(self);
        RecordShape {
            case: Cow::Borrowed(&self.case),
            package: Cow::Borrowed(&self.package),
            module: Cow::Borrowed(&self.module),
            run: self.run,
            attempt: self.attempt,
            outcome: self.outcome,
            message: message.map(Cow::Borrowed),
            error: error.map(Cow::Borrowed),
            location: self.location.as_deref().map(Cow::Borrowed),
            elapsed: self.elapsed,
            cost: spent(self),
            usage: Cow::Borrowed(&self.usage),
            waited: finite(self.waited),
            waited_for: self.waited_for.as_deref().map(Cow::Borrowed),
            replayed: self.replayed.map(finite),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Record {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let shape = RecordShape::deserialize(deserializer)?;
        Ok(Record {
            case: Cow::Owned(shape.case.into_owned()),
            package: Cow::Owned(shape.package.into_owned()),
            module: Cow::Owned(shape.module.into_owned()),
            run: shape.run,
            attempt: shape.attempt,
            outcome: shape.outcome,
            message: shape.error.or(shape.message).map(Cow::into_owned),
            location: shape.location.map(Cow::into_owned),
            elapsed: shape.elapsed,
            cost: shape.cost.unwrap_or(0.0),
            usage: shape.usage.into_owned(),
            waited: shape.waited,
            waited_for: shape.waited_for.map(Cow::into_owned),
            replayed: shape.replayed,
        })
    }
}
