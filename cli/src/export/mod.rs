//! The report files only `cargo probtest` writes, each a sink of the runtime's reporter:
//! Markdown for CI pages and the job summary, JUnit XML for CI test tabs. They read a
//! [`Report`] and use the runtime's text pieces (`probtest::__cli`) so that every file says
//! what the terminal says.

pub mod junit;
pub mod markdown;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use probtest::Report;

pub use junit::Junit;
pub use markdown::{Diagnosed, Markdown, StepSummary};

/// A bench function and its rows, in the order the report lists them.
pub struct Function {
    /// `module::function`, or the module alone for rows whose function is not described.
    pub name: String,
    /// Positions in `report.rows`.
    pub rows: Vec<usize>,
}

/// The report's rows grouped by their function, in first-row order.
pub fn functions(report: &Report) -> Vec<Function> {
    let mut functions: Vec<Function> = Vec::new();
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for (position, row) in report.rows.iter().enumerate() {
        let info = &row.info;
        let key = (
            info.package.as_str(),
            info.module.as_str(),
            info.function.as_str(),
        );
        let at = *seen.entry(key).or_insert_with(|| {
            let name = if info.function.is_empty() {
                info.module.clone()
            } else {
                format!("{}::{}", info.module, info.function)
            };
            functions.push(Function {
                name,
                rows: Vec::new(),
            });
            functions.len() - 1
        });
        functions[at].rows.push(position);
    }
    functions
}
