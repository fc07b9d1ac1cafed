//! The blob's payload as it is on the wire: one struct whose fields are the payload's, refusing
//! any other (`deny_unknown_fields`). Each value is read as JSON and checked into its type by a
//! reader of its own, so that a refusal names its field as the blob spells it; a missing field
//! reads as `null`, as it always has.

use serde::de::{self, Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::names::shown;
use super::Perturbation;

/// The most threads a blob may ask for.
pub(super) const MOST_THREADS: usize = 1024;
/// The most runs a stress repro may ask for.
pub(super) const MOST_ATTEMPTS: u64 = 100_000;

pub(super) const THREADS_RANGE: &str = "the blob's thread count is not a number from 1 to 1024";

/// The payload, version 2. Its fields are in the order serde_json sorted them when the payload
/// was built as a map, so that a repro's blob is the same text it always was.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Payload {
    /// A stress repro's most runs.
    #[serde(default, deserialize_with = "attempts")]
    pub attempts: Option<u64>,
    /// The axis's name.
    #[serde(default, deserialize_with = "axis")]
    pub axis: Option<String>,
    /// The target's kind.
    #[serde(default, deserialize_with = "kind")]
    pub kind: Option<String>,
    /// The package's name.
    #[serde(default, deserialize_with = "package")]
    pub package: Option<String>,
    /// What the run changes.
    #[serde(
        default,
        serialize_with = "perturbation_out",
        deserialize_with = "perturbation"
    )]
    pub perturbation: Option<Perturbation>,
    /// The target's name; `None` for the library.
    #[serde(default, deserialize_with = "target")]
    pub target: Option<String>,
    /// The test that fails.
    #[serde(default, deserialize_with = "test")]
    pub test: Option<String>,
    /// The tests the run runs.
    #[serde(default, deserialize_with = "tests")]
    pub tests: Option<Vec<String>>,
    /// libtest's thread count.
    #[serde(default, deserialize_with = "threads")]
    pub threads: Option<usize>,
    /// The payload's version, checked before the rest is read.
    pub v: u64,
}

/// A field's JSON value; `None` for `null`.
fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Ok(Option::<Value>::deserialize(deserializer)?.filter(|value| !value.is_null()))
}

/// A string field: anything but a string (or `null`) is refused by its name.
fn text<'de, D: Deserializer<'de>>(deserializer: D, key: &str) -> Result<Option<String>, D::Error> {
    match value(deserializer)? {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(D::Error::custom(format!("the blob has no `{key}` string"))),
    }
}

macro_rules! text_fields {
    ($($key:ident),*) => {$(
        fn $key<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
            text(deserializer, stringify!($key))
        }
    )*};
}

text_fields!(axis, kind, package, target, test);

fn tests<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    let Some(Value::Array(items)) = value(deserializer)? else {
        return Err(D::Error::custom("the blob has no `tests` list"));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::String(name) => Ok(name),
            _ => Err(D::Error::custom("the blob's `tests` holds a non-string")),
        })
        .collect::<Result<_, _>>()
        .map(Some)
}

fn threads<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    value(deserializer)?
        .map(|threads| {
            threads
                .as_u64()
                .and_then(|threads| usize::try_from(threads).ok())
                .ok_or(D::Error::custom(THREADS_RANGE))
        })
        .transpose()
}

fn attempts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    value(deserializer)?
        .map(|attempts| {
            attempts
                .as_u64()
                .filter(|attempts| (1..=MOST_ATTEMPTS).contains(attempts))
                .ok_or(D::Error::custom(format!(
                    "the blob's `attempts` is not a whole number from 1 to {MOST_ATTEMPTS}"
                )))
        })
        .transpose()
}

fn perturbation<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Perturbation>, D::Error> {
    // `null` is refused by the perturbation's own reader, as not an object.
    Perturbation::from_json(&Value::deserialize(deserializer)?)
        .map(Some)
        .map_err(D::Error::custom)
}

fn perturbation_out<S: serde::Serializer>(
    perturbation: &Option<Perturbation>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    perturbation
        .as_ref()
        .map(Perturbation::to_json)
        .serialize(serializer)
}

/// The first key of `object` that is not a field of `T`, quoted with [`shown`] (serde's own
/// refusal would print it raw, control characters and all).
pub fn unknown_field<'de, T: Deserialize<'de>>(
    object: &serde_json::Map<String, Value>,
    what: &str,
) -> Result<(), String> {
    let fields = fields_of::<T>();
    match object.keys().find(|key| !fields.contains(&key.as_str())) {
        Some(key) => Err(format!("{what} {}", shown(key))),
        None => Ok(()),
    }
}

/// The field names serde's derive gives `T`: the list it hands `deserialize_struct`.
pub fn fields_of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames {
        fields: &mut fields,
    });
    fields
}

/// A deserializer that only takes note of the fields a struct asks for.
struct FieldNames<'a> {
    fields: &'a mut &'static [&'static str],
}

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(Self::Error::custom("not a struct"))
    }

    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.fields = fields;
        Err(Self::Error::custom("only the fields were asked for"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}
