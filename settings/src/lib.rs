//! The one table of probtest's settings, shared by its attribute (which reads the settings that
//! shape the generated tests, at compile time) and its runtime (which reads the rest when a
//! test runs). Each row is a [`Setting`]: its environment variable, its config key, when it is
//! read, its line of documentation and its parser, so that reading a setting is one call
//! ([`Setting::resolve`]) and adding one is a row of [`table`] plus its use. Each is resolved
//! from its environment variable, then the config (`[package.metadata.probtest]`, then
//! `[workspace.metadata.probtest]`), then its default. The documentation's tables of settings
//! are rendered from the table ([`docs_table`]) and checked against it. It also holds the one
//! rule of generated item names that both sides need: how wide a run number is, which the
//! attribute writes and the runtime reads back, and the format of the doctor's repro blob
//! ([`repro`]), which `#[probtest::repro]` checks at compile time and the runtime applies.
//!
//! Use it through the `probtest` crate; this crate has no API of its own to promise.

mod choices;
mod docs;
mod parse;
pub mod repro;
pub mod table;

pub use choices::*;
pub use docs::{docs_table, DOCS_END, DOCS_START};
pub use parse::*;
pub use table::*;

/// When a setting is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// By the attribute, at compile time: the setting shapes the generated tests, and changing
    /// it rebuilds them.
    Compile,
    /// By the runtime, when a test runs; the attribute hands it the config's value as text.
    Run,
}

/// One setting: where it is read from, what it means, and how its text is read.
#[derive(Clone, Copy, Debug)]
pub struct Setting<T: 'static> {
    /// The environment variable: `PROB_RUNS`.
    pub variable: &'static str,
    /// The key in `[package.metadata.probtest]`, if the config can set it.
    pub key: Option<&'static str>,
    /// When it is read.
    pub phase: Phase,
    /// Its row's text in the documentation's tables: what it does, its values and default.
    pub docs: &'static str,
    /// Its parser: the value of a text, or why the text is refused (without where it came
    /// from, which the caller knows).
    pub parse: fn(&str) -> Result<T, String>,
}

impl<T> Setting<T> {
    /// A row of the table.
    pub const fn new(
        variable: &'static str,
        key: Option<&'static str>,
        phase: Phase,
        docs: &'static str,
        parse: fn(&str) -> Result<T, String>,
    ) -> Setting<T> {
        Setting {
            variable,
            key,
            phase,
            docs,
            parse,
        }
    }

    /// `text` read by this setting's parser; a refusal starts with `source`, where the text
    /// came from (`PROB_CONFIDENCE`, ``config `confidence` ``).
    pub fn parse_from(&self, source: &str, text: &str) -> Result<T, String> {
        (self.parse)(text).map_err(|why| format!("{source}: {why}"))
    }

    /// The value of the environment variable, as `env` gives it; `None` when it is unset or
    /// blank.
    pub fn from_env(&self, env: &impl Fn(&str) -> Option<String>) -> Result<Option<T>, String> {
        match env(self.variable).filter(|text| !text.trim().is_empty()) {
            Some(text) => self.parse_from(self.variable, &text).map(Some),
            None => Ok(None),
        }
    }

    /// The value of the config's key among `entries` (key and text, as the attribute hands
    /// them over); `None` when the config does not set it or the setting has no key.
    pub fn from_config(&self, entries: &[(&str, &str)]) -> Result<Option<T>, String> {
        let Some(key) = self.key else {
            return Ok(None);
        };
        match entries.iter().find(|(name, _)| *name == key) {
            Some((_, text)) => self.parse_from(&format!("config `{key}`"), text).map(Some),
            None => Ok(None),
        }
    }

    /// The environment variable's value, else the config's; `None` when neither sets it.
    pub fn resolve(
        &self,
        env: &impl Fn(&str) -> Option<String>,
        entries: &[(&str, &str)],
    ) -> Result<Option<T>, String> {
        match self.from_env(env)? {
            Some(value) => Ok(Some(value)),
            None => self.from_config(entries),
        }
    }
}

/// A row of [`SETTINGS`], whatever its value's type.
pub trait Row {
    /// The environment variable.
    fn variable(&self) -> &'static str;
    /// The config key, if any.
    fn key(&self) -> Option<&'static str>;
    /// When it is read.
    fn phase(&self) -> Phase;
    /// Its row's text in the documentation.
    fn docs(&self) -> &'static str;
    /// Whether its parser takes `text`, and if not, why.
    fn check(&self, text: &str) -> Result<(), String>;
}

impl<T> Row for Setting<T> {
    fn variable(&self) -> &'static str {
        self.variable
    }
    fn key(&self) -> Option<&'static str> {
        self.key
    }
    fn phase(&self) -> Phase {
        self.phase
    }
    fn docs(&self) -> &'static str {
        self.docs
    }
    fn check(&self, text: &str) -> Result<(), String> {
        (self.parse)(text).map(|_| ())
    }
}

impl std::fmt::Debug for dyn Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.variable())
    }
}

/// The variable that sets the concurrency of the limit `key`: `PROB_LIMIT_OPENAI` for
/// `openai`, every character that is not a letter or digit as `_`.
pub fn limit_variable(key: &str) -> String {
    let mut variable = String::from("PROB_LIMIT_");
    for c in key.chars() {
        variable.push(if c.is_ascii_alphanumeric() {
            c.to_ascii_uppercase()
        } else {
            '_'
        });
    }
    variable
}

/// The characters a limit key may not hold: the config hands its limits to the runtime as
/// `key=concurrency/per_minute,...`, where these would split one key into others.
pub const LIMIT_KEY_FORBIDDEN: &[char] = &[',', '=', '/'];

/// Whether `key` can name a limit, and if not, why (without where it came from, which the
/// caller knows): it must not be blank, nor hold a character of [`LIMIT_KEY_FORBIDDEN`].
pub fn check_limit_key(key: &str) -> Result<(), String> {
    if key.trim().is_empty() {
        return Err(format!("a limit key cannot be blank, got {key:?}"));
    }
    match key.chars().find(|c| LIMIT_KEY_FORBIDDEN.contains(c)) {
        Some(c) => Err(format!(
            "the limit key {key:?} holds `{c}`; a limit key cannot hold `,`, `=` or `/` (use letters, digits, `-`, `_` or `.`)"
        )),
        None => Ok(()),
    }
}

/// The row of an environment variable.
///
/// # Panics
///
/// When the table has no such variable: a name spelled wrong in probtest itself.
pub fn by_variable(variable: &str) -> &'static dyn Row {
    SETTINGS
        .iter()
        .copied()
        .find(|setting| setting.variable() == variable)
        .unwrap_or_else(|| panic!("probtest has no setting {variable}"))
}

/// The config keys of the settings read at `phase`.
pub fn keys(phase: Phase) -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .filter(move |setting| setting.phase() == phase)
        .filter_map(|setting| setting.key())
}

/// The most runs per case probtest generates. Each run is a test item; far more than this and
/// the compiler runs out of memory building them, with no word about why.
pub const MAX_RUNS: u32 = 100_000;

/// Why a run count above [`MAX_RUNS`] is refused, after `what`, the words that show the count
/// where it was set (`` `runs = 1000000000` ``), so that every place that sets it says the same.
pub fn more_than_max_runs(what: &str) -> String {
    format!("{what} is more than {MAX_RUNS} runs per case, the most probtest generates")
}

/// How many digits the run number has in a generated item's name (`run07` of 10 runs): as
/// many as the last run's, so that libtest's byte-wise sort starts runs in numeric order, and
/// at least 4 where the run leads the name (run-major order, `PROB_TRANSPOSE`).
pub fn run_digits(runs: u32, leading: bool) -> usize {
    let digits = runs.checked_ilog10().map_or(1, |log| log as usize + 1);
    digits.max(if leading { 4 } else { 1 })
}

#[cfg(test)]
mod tests;
