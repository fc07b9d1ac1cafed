//! The rows of `#[probability(cases(...))]`, read into the arguments' types when a run starts.
//!
//! The attribute split the data file into rows at compile time and embedded, per case, the JSON
//! text of each bound argument (a JSON Lines field or line, a CSV cell or row as strings). Here
//! that text is deserialized with serde into the argument's type; a row that does not fit is
//! that run's error, naming the file, the row, its line and the field.
//!
//! A CSV cell is text whatever it holds, so CSV values go through [`cells`], which reads a
//! number, a boolean, an enum's variant or an empty `Option` from a cell's text.

use serde::de::DeserializeOwned;

mod cells;

/// The data file a bench's rows come from, as the attribute writes it.
#[doc(hidden)]
pub struct Source {
    path: &'static str,
    csv: bool,
}

impl Source {
    #[doc(hidden)]
    pub const fn new(path: &'static str, csv: bool) -> Source {
        Source { path, csv }
    }
}

/// Why a row's arguments could not be read: a run's error, its message shown as written.
#[doc(hidden)]
pub struct RowError(String);

impl std::fmt::Debug for RowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A bench's error is reported by its `Debug` text: the message, unquoted.
        f.write_str(&self.0)
    }
}

/// The body's own result, as the run's: its error text unchanged.
#[doc(hidden)]
pub fn ran(result: Result<(), String>) -> Result<(), RowError> {
    result.map_err(RowError)
}

/// Reads one argument of row `row` (at `line`) from `text`: the whole row when `field` is
/// `None`, else that field's value (empty text when the row has no such field).
#[doc(hidden)]
pub fn arg<T: DeserializeOwned>(
    source: &Source,
    row: u32,
    line: u32,
    field: Option<&str>,
    text: &str,
) -> Result<T, RowError> {
    read(source.csv, field, text).map_err(|problem| {
        RowError(format!(
            "row {row} of `{}` (line {line}) does not fit the arguments: {problem}",
            source.path
        ))
    })
}

fn read<T: DeserializeOwned>(csv: bool, field: Option<&str>, text: &str) -> Result<T, String> {
    let Some(field) = field else {
        return if csv {
            cells::row(text)
        } else {
            cells::json_row(text)
        };
    };
    let in_field = |error: String| format!("field `{field}`: {error}");
    if text.is_empty() {
        // The row has no such field: an `Option` reads `None`, anything else says so.
        return T::deserialize(serde_json::Value::Null)
            .map_err(|_| format!("the row has no field `{field}`"));
    }
    if csv {
        let cell: String = serde_json::from_str(text).map_err(|e| in_field(e.to_string()))?;
        T::deserialize(cells::Cell(&cell)).map_err(|e| in_field(e.to_string()))
    } else {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| in_field(e.to_string()))?;
        T::deserialize(value).map_err(|e| in_field(e.to_string()))
    }
}

#[cfg(test)]
mod tests;
