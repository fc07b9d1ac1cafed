//! The documentation's table of settings, rendered from the table. The README and the runtime's
//! crate documentation each hold a copy between [`DOCS_START`] and [`DOCS_END`], which this
//! crate's tests keep equal to [`docs_table`].

use crate::SETTINGS;

/// The line before a copy of the table in a document.
pub const DOCS_START: &str = "<!-- settings:start -->";

/// The line after a copy of the table in a document.
pub const DOCS_END: &str = "<!-- settings:end -->";

/// The Markdown table of every setting: its variable, config key and documentation, a row
/// each, in the table's order.
pub fn docs_table() -> String {
    let mut table = String::from("| variable | config key | meaning |\n|---|---|---|\n");
    for setting in SETTINGS {
        // An empty cell is one space, as Markdown tables are usually written.
        let key = setting
            .key()
            .map(|key| format!(" `{key}` "))
            .unwrap_or(" ".into());
        table.push_str(&format!(
            "| `{}` |{key}| {} |\n",
            setting.variable(),
            setting.docs()
        ));
    }
    table
}
