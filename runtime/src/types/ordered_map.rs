//! A map that keeps insertion order: usage per model, params, metrics. The report writes it as
//! a JSON object in that order (`format::shape::values`).
//!
//! Layer: types (pure). Imports nothing from the crate.

/// A map that keeps insertion order.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderedMap<V>(pub Vec<(String, V)>);

impl<V> Default for OrderedMap<V> {
    fn default() -> Self {
        OrderedMap(Vec::new())
    }
}

impl<V: Default> OrderedMap<V> {
    pub(crate) fn entry(&mut self, key: &str) -> &mut V {
        let position = match self.0.iter().position(|(k, _)| k == key) {
            Some(position) => position,
            None => {
                self.0.push((key.to_string(), V::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[position].1
    }
}

impl<V> OrderedMap<V> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
