//! The shapes of the plain values every record and row holds: a run's outcome, a row's status,
//! token usage and its totals, and the ordered maps (usage per model, params, metrics) as JSON
//! objects in their order.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::types::ordered_map::OrderedMap;
use crate::types::usage::TokenUsage;

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::status::Outcome", rename_all = "lowercase")]
enum OutcomeShape {
    Pass,
    Fail,
    Error,
    Stopped,
}
shaped!(crate::types::status::Outcome, OutcomeShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::status::Status", rename_all = "lowercase")]
enum StatusShape {
    Pass,
    Flaky,
    Errored,
    Fail,
    Error,
}
shaped!(crate::types::status::Status, StatusShape, both);

/// Every field defaults: a usage entry names only what the caller recorded.
#[derive(Serialize, Deserialize)]
#[serde(
    remote = "crate::types::usage::TokenUsage",
    default = "TokenUsage::default"
)]
struct TokenUsageShape {
    model: String,
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    cost: f64,
}
shaped!(crate::types::usage::TokenUsage, TokenUsageShape, both);

#[derive(Serialize, Deserialize)]
#[serde(remote = "crate::types::usage::UsageTotals")]
struct UsageTotalsShape {
    input_tokens: u64,
    output_tokens: u64,
    cached_input_tokens: u64,
    cost: f64,
}
shaped!(crate::types::usage::UsageTotals, UsageTotalsShape, both);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OrderedVisitor<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for OrderedVisitor<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = access.next_entry()? {
                    entries.push(entry);
                }
                Ok(OrderedMap(entries))
            }
        }
        deserializer.deserialize_map(OrderedVisitor(std::marker::PhantomData))
    }
}
