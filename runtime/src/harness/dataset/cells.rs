//! A row as a serde map whose errors name the field they are in, and a CSV cell as a serde
//! value read from its text: `"3"` is a number to a `u32` and a string to a `String`.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};
use serde::forward_to_deserialize_any;

/// A message, as serde's error type of a row.
#[derive(Debug)]
pub(super) struct Problem(String);

impl Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Problem {}

impl de::Error for Problem {
    fn custom<T: Display>(message: T) -> Problem {
        Problem(message.to_string())
    }
}

/// A whole CSV row (a JSON object of strings) read into `T`, each cell as a [`Cell`].
pub(super) fn row<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let cells: BTreeMap<String, String> =
        serde_json::from_str(text).map_err(|error| error.to_string())?;
    let fields = cells.iter().map(|(name, cell)| (name.as_str(), Cell(cell)));
    T::deserialize(Row(fields)).map_err(|problem| problem.0)
}

/// A whole JSON Lines row (one object) read into `T`.
pub(super) fn json_row<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|error| error.to_string())?;
    let fields = object.into_iter().collect::<Vec<_>>();
    let fields = fields.iter().map(|(name, value)| (name.as_str(), value));
    T::deserialize(Row(fields)).map_err(|problem| problem.0)
}

/// A row's fields, deserialized as a map; a value's error is prefixed with its field.
struct Row<I>(I);

impl<'de, 'a, I, D> de::Deserializer<'de> for Row<I>
where
    I: Iterator<Item = (&'a str, D)>,
    D: de::Deserializer<'de>,
    D::Error: Display,
{
    type Error = Problem;

    fn deserialize_any<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        visitor.visit_map(Fields {
            fields: self.0,
            value: None,
        })
    }

    fn deserialize_newtype_struct<W: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: W,
    ) -> Result<W::Value, Problem> {
        visitor.visit_newtype_struct(self)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Fields<'a, I, V> {
    fields: I,
    value: Option<(&'a str, V)>,
}

impl<'de, 'a, I, V> MapAccess<'de> for Fields<'a, I, V>
where
    I: Iterator<Item = (&'a str, V)>,
    V: de::Deserializer<'de>,
    V::Error: Display,
{
    type Error = Problem;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Problem> {
        let Some((name, value)) = self.fields.next() else {
            return Ok(None);
        };
        self.value = Some((name, value));
        seed.deserialize(IntoDeserializer::<Problem>::into_deserializer(name))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Problem> {
        let (name, value) = self
            .value
            .take()
            .ok_or_else(|| Problem("a value was asked for before its field".into()))?;
        seed.deserialize(value)
            .map_err(|error| Problem(format!("field `{name}`: {error}")))
    }
}

/// A CSV cell: text, read as whatever the argument's type asks for.
pub(super) struct Cell<'a>(pub(super) &'a str);

impl Cell<'_> {
    fn invalid<'de, W: Visitor<'de>>(&self, visitor: &W) -> Problem {
        de::Error::invalid_value(de::Unexpected::Str(self.0), visitor)
    }

    /// The cell as JSON, for a type that wants a list or a map: `[1, 2]`, `{"a": 1}`.
    fn json<'de, W: Visitor<'de>>(&self, visitor: W) -> Result<W::Value, Problem> {
        let value: serde_json::Value = serde_json::from_str(self.0).map_err(|_| {
            Problem(format!(
                "{}, and it is not JSON either",
                self.invalid(&visitor)
            ))
        })?;
        de::Deserializer::deserialize_any(value, visitor)
            .map_err(|error| Problem(error.to_string()))
    }
}

macro_rules! parsed {
    ($($method:ident => $visit:ident as $ty:ty),* $(,)?) => {$(
        fn $method<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
            match self.0.trim().parse::<$ty>() {
                Ok(value) => visitor.$visit(value),
                Err(_) => Err(self.invalid(&visitor)),
            }
        }
    )*};
}

impl<'de> de::Deserializer<'de> for Cell<'_> {
    type Error = Problem;

    fn deserialize_any<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        visitor.visit_str(self.0)
    }

    parsed! {
        deserialize_bool => visit_bool as bool,
        deserialize_i8 => visit_i64 as i64,
        deserialize_i16 => visit_i64 as i64,
        deserialize_i32 => visit_i64 as i64,
        deserialize_i64 => visit_i64 as i64,
        deserialize_i128 => visit_i128 as i128,
        deserialize_u8 => visit_u64 as u64,
        deserialize_u16 => visit_u64 as u64,
        deserialize_u32 => visit_u64 as u64,
        deserialize_u64 => visit_u64 as u64,
        deserialize_u128 => visit_u128 as u128,
        deserialize_f32 => visit_f64 as f64,
        deserialize_f64 => visit_f64 as f64,
    }

    fn deserialize_option<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        if self.0.is_empty() {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_unit<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        if self.0.is_empty() {
            visitor.visit_unit()
        } else {
            Err(self.invalid(&visitor))
        }
    }

    fn deserialize_unit_struct<W: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: W,
    ) -> Result<W::Value, Problem> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<W: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: W,
    ) -> Result<W::Value, Problem> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<W: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: W,
    ) -> Result<W::Value, Problem> {
        if self.0.trim_start().starts_with('{') {
            return self.json(visitor);
        }
        visitor.visit_enum(IntoDeserializer::<Problem>::into_deserializer(self.0))
    }

    fn deserialize_seq<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        self.json(visitor)
    }

    fn deserialize_tuple<W: Visitor<'de>>(
        self,
        _len: usize,
        visitor: W,
    ) -> Result<W::Value, Problem> {
        self.json(visitor)
    }

    fn deserialize_tuple_struct<W: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: W,
    ) -> Result<W::Value, Problem> {
        self.json(visitor)
    }

    fn deserialize_map<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        self.json(visitor)
    }

    fn deserialize_struct<W: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: W,
    ) -> Result<W::Value, Problem> {
        self.json(visitor)
    }

    fn deserialize_ignored_any<W: Visitor<'de>>(self, visitor: W) -> Result<W::Value, Problem> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf identifier
    }
}
