//! The JSON shape of every model and `types` value that a report, a store file or the CLI
//! writes or reads: serde's derived shape of each, kept here so that the model and the plain
//! values (`stats`, `values`) stay plain data, with no serde of their own. Each shape
//! names its model type (`#[serde(remote = ...)]`), and [`shaped!`] gives the model type
//! `Serialize` and `Deserialize` through it, so that nested values and `serde_json` calls on
//! model types work as if the model derived them. A shape that reads checks at compile time
//! that it names every field of its model type; one that only writes (`write`) does not, so a
//! field added to such a model type is added here too.
//!
//! Layer: format. Imports `crate::types` and `crate::model` only.

/// Implements `Serialize` (`write`), `Deserialize` (`read`) or both for a model type through
/// its remote shape.
macro_rules! shaped {
    ($model:ty, $shape:ident, both) => {
        shaped!($model, $shape, write);
        shaped!($model, $shape, read);
    };
    ($model:ty, $shape:ident, write) => {
        impl serde::Serialize for $model {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $shape::serialize(self, serializer)
            }
        }
    };
    ($model:ty, $shape:ident, read) => {
        impl<'de> serde::Deserialize<'de> for $model {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $shape::deserialize(deserializer)
            }
        }
    };
}

mod analysis;
mod case;
mod planning;
mod record;
mod report;
mod stats;
#[cfg(test)]
mod tests;
mod values;
