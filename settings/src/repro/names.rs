//! The names a repro blob carries, and the rules they are held to: a package and target name
//! as cargo spells them, a target kind from a fixed list, a test name libtest cannot take for
//! an option. Whatever of a blob reaches a command line is one of these.

/// The longest package or target name: cargo's own limit for a package name.
const LONGEST_NAME: usize = 64;

/// The kind of target a test binary is built from, as `cargo test` selects it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// The library's unit tests (`--lib`).
    Lib,
    /// An integration test (`--test NAME`).
    Test,
    /// A binary's unit tests (`--bin NAME`).
    Bin,
    /// An example's tests (`--example NAME`).
    Example,
    /// A bench target's tests (`--bench NAME`).
    Bench,
}

impl TargetKind {
    /// Every kind, in the blob's spelling order.
    const ALL: [TargetKind; 5] = [
        TargetKind::Lib,
        TargetKind::Test,
        TargetKind::Bin,
        TargetKind::Example,
        TargetKind::Bench,
    ];

    /// The kind's name in the blob, and its `cargo test` flag without `--`.
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::Lib => "lib",
            TargetKind::Test => "test",
            TargetKind::Bin => "bin",
            TargetKind::Example => "example",
            TargetKind::Bench => "bench",
        }
    }

    /// The kind named `name` in a blob.
    pub(super) fn parse(name: &str) -> Option<TargetKind> {
        TargetKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// The kind of a target as cargo's messages name it: every library crate type is `--lib`.
    pub(super) fn of_cargo(kind: &str) -> Option<TargetKind> {
        match kind {
            "lib" | "rlib" | "proc-macro" | "cdylib" | "dylib" | "staticlib" => {
                Some(TargetKind::Lib)
            }
            kind => TargetKind::parse(kind),
        }
    }
}

/// Refuses a package or target name other than cargo's: ASCII letters, digits, `-` and `_`,
/// not starting with `-` (it would be read as an option), at most 64 characters.
pub(super) fn check_name(what: &str, name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= LONGEST_NAME
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the blob's {what} {} is not a cargo {what} name (ASCII letters, digits, `-` and \
             `_`, not starting with `-`, at most {LONGEST_NAME} characters)",
            shown(name)
        ))
    }
}

/// Refuses a test name that libtest would read as an option, or one with a control character;
/// whether the binary has the test is checked once it is built.
pub(super) fn check_test(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.starts_with('-') || name.chars().any(char::is_control) {
        Err(format!(
            "the blob's {what} {} is not a test name (empty, starting with `-`, or holding a \
             control character)",
            shown(name)
        ))
    } else {
        Ok(())
    }
}

/// Text from a blob, quoted and escaped (a control character must not reach the terminal) and
/// cut short: an error names it without printing all it holds.
pub fn shown(text: &str) -> String {
    const LONGEST: usize = 80;
    let mut quoted = format!("{:?}", text.chars().take(LONGEST).collect::<String>());
    if text.chars().count() > LONGEST {
        quoted.insert_str(quoted.len() - 1, "...");
    }
    quoted
}

/// A JSON value from a blob as an error names it: a string as [`shown`] quotes it, anything else
/// as its JSON text (whose strings are escaped already), cut short.
pub fn shown_json(value: &serde_json::Value) -> String {
    const LONGEST: usize = 80;
    match value {
        serde_json::Value::String(text) => shown(text),
        other => {
            let text = other.to_string();
            let mut cut: String = text.chars().take(LONGEST).collect();
            if cut.len() < text.len() {
                cut.push_str("...");
            }
            cut
        }
    }
}
