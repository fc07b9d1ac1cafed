//! Which case a row, a record or a store line belongs to: its package, its module and its row
//! id. Two cases of one session never share a key; the same case run in two processes always
//! does.
//!
//! Layer: types (pure). Imports nothing from the crate.

use std::cmp::Ordering;
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

    /// Whether `self` and `other` are the same key, as `==` says, pointers first: the records
    /// a process keeps of one case borrow the same static strs from the generated code, so
    /// that most keys a report compares settle without reading a byte. The row id, which tells
    /// two cases of one function apart, is compared first.
    pub(crate) fn same(&self, other: &CaseKey<&str>) -> bool {
        same_str(self.case, other.case)
            && same_str(self.module, other.module)
            && same_str(self.package, other.package)
    }

    /// `self` against `other`, as `Ord` orders them, pointers first (see [`CaseKey::same`]).
    pub(crate) fn compare(&self, other: &CaseKey<&str>) -> Ordering {
        match compare_str(self.package, other.package) {
            Ordering::Equal => match compare_str(self.module, other.module) {
                Ordering::Equal => compare_str(self.case, other.case),
                unequal => unequal,
            },
            unequal => unequal,
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

/// Whether `a` and `b` hold the same text: the same pointer and length say so without reading
/// it (in a test binary built without optimizations each byte comparison is calls deep).
pub(crate) fn same_str(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// `a` against `b`, with [`same_str`]'s shortcut for equal ones.
pub(crate) fn compare_str(a: &str, b: &str) -> Ordering {
    if std::ptr::eq(a, b) {
        Ordering::Equal
    } else {
        a.cmp(b)
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

    #[test]
    fn the_pointer_shortcut_agrees_with_the_text() {
        // The same text at two addresses, and at one.
        let (one, other) = (String::from("evals"), String::from("evals"));
        assert!(!std::ptr::eq(one.as_str(), other.as_str()));
        assert!(same_str(&one, &other) && same_str(&one, &one));
        assert!(!same_str(&one[..4], &one) && !same_str("evalt", &one));
        assert_eq!(compare_str(&one, &other), Ordering::Equal);
        assert_eq!(compare_str(&one[..4], &one), Ordering::Less);
        let keys = [
            CaseKey::new("a", "a", "a"),
            CaseKey::new("a", "a", "b"),
            CaseKey::new("a", "b", "a"),
            CaseKey::new("b", "a", "a"),
        ];
        let copies: Vec<(String, String, String)> = keys
            .iter()
            .map(|k| {
                (
                    k.package.to_string(),
                    k.module.to_string(),
                    k.case.to_string(),
                )
            })
            .collect();
        for (key, copy) in keys.iter().zip(&copies) {
            let copy = CaseKey::new(&copy.0, &copy.1, &copy.2);
            for other in &keys {
                assert_eq!(key.same(other), key == other);
                assert_eq!(copy.same(other), copy == *other);
                assert_eq!(key.compare(other), key.cmp(other));
                assert_eq!(copy.compare(other), copy.cmp(other));
            }
        }
    }
}
