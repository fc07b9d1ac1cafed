//! Which case a row, a record or a store line belongs to: its package, its module and its row
//! id. Two cases of one session never share a key; the same case run in two processes always
//! does.
//!
//! Layer: types (pure). Imports nothing from the crate.

use std::fmt;

/// A case's identity across processes and reports: package, module and row id. Borrowed
/// (`CaseKey<&str>`, what [`CaseInfo::key`](crate::CaseInfo::key) and
/// [`Record::key`](crate::Record::key) give) or owned (`CaseKey`, for sets and maps). Keys
/// order by package, then module, then row id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CaseKey<S = String> {
    /// The package the case's function belongs to.
    pub package: S,
    /// The module path the function is written in.
    pub module: S,
    /// The row id: `<short>::<case-id>`, or the short name for an unparametrized function.
    pub case: S,
}

impl<'a> CaseKey<&'a str> {
    /// The key of `case` in `module` of `package`.
    pub fn new(package: &'a str, module: &'a str, case: &'a str) -> CaseKey<&'a str> {
        CaseKey {
            package,
            module,
            case,
        }
    }

    /// The same key, owning its strings.
    pub fn to_owned_key(&self) -> CaseKey {
        CaseKey {
            package: self.package.to_string(),
            module: self.module.to_string(),
            case: self.case.to_string(),
        }
    }
}

impl CaseKey {
    /// The same key, borrowing its strings.
    pub fn borrowed(&self) -> CaseKey<&str> {
        CaseKey::new(&self.package, &self.module, &self.case)
    }
}

impl<S: fmt::Display> fmt::Display for CaseKey<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}::{}", self.package, self.module, self.case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_by_package_module_then_row() {
        let mut keys = [
            CaseKey::new("b", "a", "a"),
            CaseKey::new("a", "b", "a"),
            CaseKey::new("a", "a", "b"),
            CaseKey::new("a", "a", "a"),
        ];
        keys.sort();
        let rows: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(rows, ["a a::a", "a a::b", "a b::a", "b a::a"]);
        let owned = keys[1].to_owned_key();
        assert_eq!(owned.borrowed(), keys[1]);
    }
}
