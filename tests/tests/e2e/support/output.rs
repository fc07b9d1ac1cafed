//! What a command printed: its exit code and output, the tests libtest failed, the
//! `probability` sections parsed into rows and lines, and panic locations in a fixture's source.

use std::fmt;
use std::time::Duration;

/// What a cargo command did. Its `Display` shows everything, for assertion messages.
pub struct Output {
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "\n--- command: {}\n--- exit code: {:?} after {:.1?}\n--- stdout:\n{}\n--- stderr:\n{}\n---",
            self.command, self.code, self.elapsed, self.stdout, self.stderr
        )
    }
}

impl Output {
    /// The tests libtest reported as failed (`test <name> ... FAILED`), sorted.
    pub fn failed_tests(&self) -> Vec<String> {
        let mut failed: Vec<String> = self
            .stdout
            .lines()
            .filter_map(|line| line.strip_prefix("test ")?.strip_suffix(" ... FAILED"))
            .map(str::to_string)
            .collect();
        failed.sort();
        failed
    }

    /// Panics unless the command exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code{self}");
        self
    }

    /// The one error line on stderr, which must be its last line: what a command that fails
    /// after cargo's build progress says. Panics when there is none, or more than one.
    #[track_caller]
    pub fn the_error_line(&self) -> &str {
        let errors: Vec<&str> = self
            .stderr
            .lines()
            .filter(|line| line.starts_with("error"))
            .collect();
        assert_eq!(errors.len(), 1, "not one error line{self}");
        assert_eq!(self.stderr.lines().last(), Some(errors[0]), "{self}");
        errors[0]
    }

    /// Every `probability` section printed on stdout.
    pub fn sections(&self) -> Vec<Section> {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let mut sections = Vec::new();
        let mut index = 0;
        while index < lines.len() {
            if is_rule(lines[index]) {
                let (section, next) = Section::parse(&lines, index)
                    .unwrap_or_else(|why| panic!("malformed probability section: {why}{self}"));
                sections.push(section);
                index = next;
            } else {
                index += 1;
            }
        }
        sections
    }

    /// The one `probability` section on stdout, checked to come after libtest's result line.
    #[track_caller]
    pub fn section(&self) -> Section {
        let mut sections = self.sections();
        assert_eq!(sections.len(), 1, "expected one probability section{self}");
        let rule = self
            .stdout
            .find(&sections[0].rule)
            .expect("the rule line is on stdout");
        let result = self.stdout.find("test result:");
        assert!(
            result.is_some_and(|result| result < rule),
            "the section must follow libtest's `test result:` line{self}"
        );
        sections.remove(0)
    }

    /// Whether stdout has no `probability` section at all.
    pub fn has_no_section(&self) -> bool {
        !self.stdout.lines().any(is_rule) && !self.stdout.contains("Overall:")
    }
}

/// The section's title line: `=== probability ===`, 80 columns.
fn is_rule(line: &str) -> bool {
    line.starts_with('=') && line.trim_matches('=') == " probability "
}

/// A parsed `probability` section. Lines are split into columns at runs of two or more spaces,
/// so that assertions check content, not alignment (the renderer's unit tests check that).
#[derive(Clone, Debug)]
pub struct Section {
    /// The section as printed.
    pub text: String,
    /// The title line.
    pub rule: String,
    /// One entry per row: case id, fraction, cost (when shown), status (when not a pass).
    pub rows: Vec<Vec<String>>,
    /// Each row's interval cell (`[35%, 93%]`, inner padding folded), when the column is shown
    /// and the row has one.
    pub intervals: Vec<Option<String>>,
    /// The `Gates:` line's text, and the `Warning:` lines, without their labels.
    pub gates: Option<String>,
    pub warnings: Vec<String>,
    /// `Overall: ...` without the leading spaces.
    pub overall: String,
    /// The amount of the `Cost:` line.
    pub cost: Option<String>,
    /// One entry per model: name, token text, cost (when shown).
    pub tokens: Vec<Vec<String>>,
    /// The path of the `Report:` line.
    pub report: Option<String>,
}

fn columns(text: &str) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for part in text
        .trim()
        .split("  ")
        .map(str::trim)
        .filter(|part| !part.is_empty())
    {
        // An interval cell (`[35%,  93%]`) pads inside its brackets: it is one column.
        match columns.last_mut() {
            Some(open) if open.starts_with('[') && !open.ends_with(']') => {
                open.push(' ');
                open.push_str(part);
            }
            _ => columns.push(part.to_string()),
        }
    }
    columns
}

impl Section {
    fn parse(lines: &[&str], start: usize) -> Result<(Section, usize), String> {
        let rule = lines[start].to_string();
        if rule.len() != 80 {
            return Err(format!("the rule line is {} columns wide", rule.len()));
        }
        let mut index = start + 1;
        let mut rows = Vec::new();
        let mut intervals = Vec::new();
        while index < lines.len() && !lines[index].is_empty() {
            let line = lines[index];
            if !line.starts_with("  ") || line.starts_with("   ") {
                return Err(format!("row line not indented by two spaces: {line:?}"));
            }
            let mut row = columns(line);
            let interval = row
                .iter()
                .position(|column| column.starts_with('['))
                .map(|position| row.remove(position));
            rows.push(row);
            intervals.push(interval);
            index += 1;
        }
        index += 1;
        // Function-level lines, when a function has enough cases: a block of their own, skipped.
        if lines
            .get(index)
            .is_some_and(|line| !line.starts_with("  Overall: "))
        {
            while index < lines.len() && !lines[index].is_empty() {
                index += 1;
            }
            index += 1;
        }
        let overall = lines
            .get(index)
            .and_then(|line| line.strip_prefix("  Overall: "))
            .ok_or("no `Overall:` line after the rows and a blank line")?;
        let overall = format!("Overall: {overall}");
        index += 1;
        let mut cost = None;
        let mut tokens = Vec::new();
        let mut report = None;
        let (mut gates, mut warnings) = (None, Vec::new());
        while let Some(line) = lines.get(index) {
            if let Some(text) = line.strip_prefix("  Gates:   ") {
                gates = Some(text.to_string());
            } else if let Some(text) = line.strip_prefix("  Warning: ") {
                warnings.push(text.to_string());
            } else if let Some(amount) = line.strip_prefix("  Cost:    ") {
                cost = Some(amount.to_string());
            } else if let Some(text) = line.strip_prefix("  Tokens:  ") {
                tokens.push(columns(text));
            } else if !tokens.is_empty() && line.starts_with(&" ".repeat(11)) {
                tokens.push(columns(line));
            } else if let Some(path) = line.strip_prefix("  Report:  ") {
                report = Some(path.to_string());
            } else {
                break;
            }
            index += 1;
        }
        let text = lines[start..index].join("\n");
        Ok((
            Section {
                text,
                rule,
                rows,
                intervals,
                gates,
                warnings,
                overall,
                cost,
                tokens,
                report,
            },
            index,
        ))
    }

    /// The columns of the row for `case`, without the case id.
    #[track_caller]
    pub fn row(&self, case: &str) -> Vec<&str> {
        let row = self
            .rows
            .iter()
            .find(|row| row[0] == case)
            .unwrap_or_else(|| panic!("no row `{case}` in\n{}", self.text));
        row[1..].iter().map(String::as_str).collect()
    }

    /// The case ids of the rows, in printed order.
    pub fn case_ids(&self) -> Vec<&str> {
        self.rows.iter().map(|row| row[0].as_str()).collect()
    }

    /// The columns of the `Tokens` line for `model`, without the model name.
    #[track_caller]
    pub fn tokens(&self, model: &str) -> Vec<&str> {
        let line = self
            .tokens
            .iter()
            .find(|line| line[0] == model)
            .unwrap_or_else(|| panic!("no Tokens line for `{model}` in\n{}", self.text));
        line[1..].iter().map(String::as_str).collect()
    }
}

/// `<file>:<line>:<column>` of `token` on the line of `source` that ends with the comment
/// `// @loc:<marker>`, as a panic location reads: line and column 1-based.
#[track_caller]
pub fn location(file: &str, source: &str, marker: &str, token: &str) -> String {
    let comment = format!("// @loc:{marker}");
    let (index, line) = source
        .lines()
        .enumerate()
        .find(|(_, line)| line.trim_end().ends_with(&comment))
        .unwrap_or_else(|| panic!("no line ending with `{comment}` in {file}"));
    let column = line
        .find(token)
        .unwrap_or_else(|| panic!("no {token} on the {marker} line of {file}"));
    format!("{file}:{}:{}", index + 1, column + 1)
}
