//! Splitting a data file into rows: JSON Lines (one object a line) and CSV with a header. Each
//! row keeps its line and, per field, the field's JSON text, which is what the runtime
//! deserializes and the report shows.

use std::collections::BTreeMap;

use serde_json::value::RawValue;

/// One row of a data file.
pub(crate) struct RawRow {
    /// The file's line the row starts on, from 1.
    pub(crate) line: u32,
    /// The whole row as a JSON object: the line itself for JSON Lines, an object of strings
    /// for CSV.
    pub(crate) whole: String,
    /// Each field and its value's JSON text, in the file's order (CSV) or by name (JSON Lines).
    pub(crate) fields: Vec<(String, String)>,
}

impl RawRow {
    /// The JSON text of `field`, if the row has it.
    pub(crate) fn field(&self, field: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(name, _)| name == field)
            .map(|(_, text)| text.as_str())
    }
}

/// The rows of a file and the fields a row may have (the CSV header, or every key of any line).
pub(crate) struct Table {
    pub(crate) rows: Vec<RawRow>,
    pub(crate) fields: Vec<String>,
}

/// Every non-blank line of `text` as a JSON object, or the first line that is not one.
pub(crate) fn json_lines(text: &str, file: &str) -> Result<Table, String> {
    let mut rows = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_number = index as u32 + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let object: BTreeMap<String, &RawValue> = serde_json::from_str(trimmed).map_err(|error| {
            format!(
                "`{file}` line {line_number} is not a JSON object: {}; each line of a JSON Lines file holds one object",
                without_position(&error)
            )
        })?;
        let row_fields: Vec<(String, String)> = object
            .into_iter()
            .map(|(name, value)| (name, value.get().to_string()))
            .collect();
        for (name, _) in &row_fields {
            if !fields.contains(name) {
                fields.push(name.clone());
            }
        }
        rows.push(RawRow {
            line: line_number,
            whole: trimmed.to_string(),
            fields: row_fields,
        });
    }
    Ok(Table { rows, fields })
}

/// serde_json's message with its position inside the one line turned into a column.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rsplit_once(" at line ") {
        Some((message, _)) if error.line() == 1 => {
            format!("{message} (column {})", error.column())
        }
        _ => text,
    }
}

/// Every record of a CSV file with a header line; each cell becomes a JSON string.
pub(crate) fn csv(bytes: &[u8], file: &str) -> Result<Table, String> {
    let mut reader = csv::ReaderBuilder::new().from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|error| csv_error(&error, file))?
        .clone();
    let fields: Vec<String> = headers.iter().map(str::to_string).collect();
    if let Some(duplicate) = fields
        .iter()
        .enumerate()
        .find(|(at, name)| fields[..*at].contains(name))
        .map(|(_, name)| name)
    {
        return Err(format!(
            "`{file}` line 1: the header names `{duplicate}` twice"
        ));
    }
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|error| csv_error(&error, file))?;
        let line = record.position().map_or(0, |position| position.line()) as u32;
        let row_fields: Vec<(String, String)> = fields
            .iter()
            .zip(record.iter())
            .map(|(name, cell)| (name.clone(), json_string(cell)))
            .collect();
        let whole = format!(
            "{{{}}}",
            row_fields
                .iter()
                .map(|(name, text)| format!("{}:{text}", json_string(name)))
                .collect::<Vec<_>>()
                .join(",")
        );
        rows.push(RawRow {
            line,
            whole,
            fields: row_fields,
        });
    }
    Ok(Table { rows, fields })
}

fn json_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

fn csv_error(error: &csv::Error, file: &str) -> String {
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            format!("`{file}` line {line} has {len} fields where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { pos, .. } => {
            let line = pos.as_ref().map_or(0, csv::Position::line);
            format!("`{file}` line {line} is not valid UTF-8")
        }
        _ => format!("`{file}` is not a CSV file probtest can read: {error}"),
    }
}
