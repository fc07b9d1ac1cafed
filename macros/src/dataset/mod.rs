//! `cases(...)`: the rows of a data file (JSON Lines or CSV with a header), read when the
//! attribute expands. The file is split into rows, each row's id is found and checked, and the
//! JSON text each bound argument gets is kept; the rows are deserialized into the arguments'
//! types only when a run starts, by `probtest::__private::dataset`.

use std::path::{Path, PathBuf};

use crate::attr::CasesArg;

mod read;
pub(crate) mod tokens;

/// A checked data file, one value of its group per row.
pub(crate) struct Dataset {
    /// The arguments the rows give values to.
    pub(crate) names: Vec<String>,
    /// Whether the arguments take the fields named like them (else the one argument takes the
    /// whole row).
    pub(crate) zipped: bool,
    /// The path as the attribute writes it, for messages.
    pub(crate) written: String,
    /// The file's absolute path, which the expansion includes so that editing it rebuilds.
    pub(crate) absolute: PathBuf,
    pub(crate) csv: bool,
    /// Whether its rows vary slowest (`cases` written before `params`).
    pub(crate) first: bool,
    pub(crate) rows: Vec<Row>,
}

/// One row: where it is, its id, and the JSON text of each bound argument.
pub(crate) struct Row {
    pub(crate) line: u32,
    /// Its position among the file's rows, from 1.
    pub(crate) number: u32,
    pub(crate) id: String,
    /// Per name of [`Dataset::names`]: the JSON text it is read from, empty when the row has
    /// no such field (an `Option` argument then gets `None`).
    pub(crate) texts: Vec<String>,
}

/// Reads and checks the file of `cases`, relative to the package's manifest directory.
pub(crate) fn load(cases: &CasesArg, errors: &mut Vec<syn::Error>) -> Option<Dataset> {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    load_in(cases, manifest_dir.as_deref(), errors)
}

pub(crate) fn load_in(
    cases: &CasesArg,
    manifest_dir: Option<&Path>,
    errors: &mut Vec<syn::Error>,
) -> Option<Dataset> {
    let written = cases.path.value();
    let at_path = |message: String| syn::Error::new(cases.path.span(), message);
    let csv = if written.ends_with(".csv") {
        true
    } else if written.ends_with(".jsonl") || written.ends_with(".ndjson") {
        false
    } else {
        errors.push(at_path(format!(
            "`{written}` is neither JSON Lines (`.jsonl`, `.ndjson`) nor CSV (`.csv`)"
        )));
        return None;
    };
    let absolute = match manifest_dir {
        Some(dir) => dir.join(&written),
        None => PathBuf::from(&written),
    };
    let bytes = match std::fs::read(&absolute) {
        Ok(bytes) => bytes,
        Err(error) => {
            errors.push(at_path(format!(
                "cannot read `{written}` (relative to the package's manifest directory): {error}"
            )));
            return None;
        }
    };
    let table = if csv {
        read::csv(&bytes, &written)
    } else {
        match std::str::from_utf8(&bytes) {
            Ok(text) => read::json_lines(text, &written),
            Err(error) => {
                let line = bytes[..error.valid_up_to()]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
                    + 1;
                Err(format!("`{written}` line {line} is not valid UTF-8"))
            }
        }
    };
    let table = match table {
        Ok(table) => table,
        Err(message) => {
            errors.push(at_path(message));
            return None;
        }
    };
    if table.rows.is_empty() {
        let shape = if csv {
            "a header line and a line per row"
        } else {
            "a JSON object per line"
        };
        errors.push(at_path(format!(
            "`{written}` has no rows; it needs {shape}"
        )));
        return None;
    }
    let before = errors.len();
    let names: Vec<String> = cases.names.iter().map(ToString::to_string).collect();
    if cases.zipped {
        for name in &cases.names {
            let key = name.to_string();
            if !table.fields.contains(&key) {
                errors.push(syn::Error::new(
                    name.span(),
                    format!(
                        "`{key}` is not a field of `{written}`; its fields: {}",
                        listed(&table.fields)
                    ),
                ));
            }
        }
    }
    let ids = row_ids(&table, cases, &written, errors);
    if errors.len() > before {
        return None;
    }
    let rows = table
        .rows
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(index, (row, id))| Row {
            line: row.line,
            number: index as u32 + 1,
            id,
            texts: if cases.zipped {
                names
                    .iter()
                    .map(|name| row.field(name).unwrap_or_default().to_string())
                    .collect()
            } else {
                vec![row.whole.clone()]
            },
        })
        .collect();
    Some(Dataset {
        names,
        zipped: cases.zipped,
        written,
        absolute,
        csv,
        first: cases.first,
        rows,
    })
}

/// At most this many rows' id errors are listed, so that a wrong `id` does not print one error
/// per row of a large file.
const MAX_ROW_ERRORS: usize = 10;

/// Each row's id: its `id` field's value, else `row<N>`. A missing, empty, non-scalar or
/// repeated id is an error at the `id` literal naming the row and the file.
fn row_ids(
    table: &read::Table,
    cases: &CasesArg,
    written: &str,
    errors: &mut Vec<syn::Error>,
) -> Vec<String> {
    let Some(id) = &cases.id else {
        return (1..=table.rows.len()).map(|n| format!("row{n}")).collect();
    };
    let field = id.value();
    if !table.fields.contains(&field) {
        errors.push(syn::Error::new(
            id.span(),
            format!(
                "no row of `{written}` has the id field `{field}`; its fields: {}",
                listed(&table.fields)
            ),
        ));
        return Vec::new();
    }
    let mut problems: Vec<String> = Vec::new();
    let mut ids: Vec<String> = Vec::with_capacity(table.rows.len());
    let mut seen: std::collections::HashMap<String, (u32, u32)> = Default::default();
    for (index, row) in table.rows.iter().enumerate() {
        let number = index as u32 + 1;
        let place = format!("row {number} (line {}) of `{written}`", row.line);
        let value = match row.field(&field).map(scalar_text) {
            None => {
                problems.push(format!("{place} has no id field `{field}`"));
                String::new()
            }
            Some(None) => {
                problems.push(format!(
                    "{place}: its id field `{field}` is not a string, number or boolean"
                ));
                String::new()
            }
            Some(Some(text)) if text.trim().is_empty() => {
                problems.push(format!("{place} has an empty id (field `{field}`)"));
                String::new()
            }
            Some(Some(text)) => {
                if let Some((first, first_line)) = seen.get(&text) {
                    problems.push(format!(
                        "{place} has the id \"{text}\" of row {first} (line {first_line}); ids must be unique"
                    ));
                } else {
                    seen.insert(text.clone(), (number, row.line));
                }
                text
            }
        };
        ids.push(value);
    }
    let more = problems.len().saturating_sub(MAX_ROW_ERRORS);
    for (index, problem) in problems.iter().take(MAX_ROW_ERRORS).enumerate() {
        let problem = if more > 0 && index + 1 == MAX_ROW_ERRORS {
            format!("{problem} (and {more} more rows with id problems)")
        } else {
            problem.clone()
        };
        errors.push(syn::Error::new(id.span(), problem));
    }
    ids
}

/// The text of a JSON scalar: a string's contents, a number's or boolean's literal text.
fn scalar_text(json: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(json).ok()? {
        serde_json::Value::String(text) => Some(text),
        serde_json::Value::Number(_) | serde_json::Value::Bool(_) => Some(json.trim().to_string()),
        _ => None,
    }
}

fn listed(fields: &[String]) -> String {
    if fields.is_empty() {
        return "none".to_string();
    }
    fields
        .iter()
        .map(|field| format!("`{field}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
