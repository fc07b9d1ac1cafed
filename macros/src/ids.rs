//! Case ids (the text users see in the summary and report) and the test item names made from
//! them.
//!
//! The rules follow pytest's parametrize ids, so reports read the same in both ecosystems.

use syn::{Expr, ExprLit, ExprUnary, Lit, UnOp};

/// The id of a scalar value, or `None` when the value has no natural text.
///
/// String contents, literal text for numbers, booleans and chars, `-` for negated literals,
/// and the last segment of a path (`Style::Terse` gives `Terse`).
pub(crate) fn scalar_id(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => literal_id(lit),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            Expr::Lit(ExprLit {
                lit: lit @ (Lit::Int(_) | Lit::Float(_)),
                ..
            }) => literal_id(lit).map(|text| format!("-{text}")),
            _ => None,
        },
        Expr::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .filter(|segment| segment.arguments.is_none())
            .map(|segment| segment.ident.to_string()),
        Expr::Group(group) => scalar_id(&group.expr),
        Expr::Paren(paren) => scalar_id(&paren.expr),
        _ => None,
    }
}

fn literal_id(lit: &Lit) -> Option<String> {
    match lit {
        Lit::Str(s) => Some(s.value()),
        Lit::Char(c) => Some(c.value().to_string()),
        Lit::Int(i) => Some(i.to_string()),
        Lit::Float(f) => Some(f.to_string()),
        Lit::Bool(b) => Some(b.value.to_string()),
        _ => None,
    }
}

/// The id of one value at `index` of its group, for the argument `arg_name`.
pub(crate) fn value_id(expr: &Expr, arg_name: &str, index: usize) -> String {
    scalar_id(expr).unwrap_or_else(|| format!("{arg_name}{index}"))
}

/// Makes repeated ids unique the way pytest does: `a, a` becomes `a0, a1`, and an id that ends in
/// a digit gets an underscore first (`v1, v1` becomes `v1_0, v1_1`).
pub(crate) fn make_unique(ids: &mut [String]) {
    use std::collections::{HashMap, HashSet};
    let mut counts: HashMap<String, usize> = HashMap::new();
    for id in ids.iter() {
        *counts.entry(id.clone()).or_default() += 1;
    }
    if counts.values().all(|&count| count == 1) {
        return;
    }
    let mut taken: HashSet<String> = ids.iter().cloned().collect();
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    for id in ids.iter_mut() {
        if counts[id.as_str()] < 2 {
            continue;
        }
        let separator = if id.ends_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        };
        let suffix = next_suffix.entry(id.clone()).or_default();
        let mut candidate = format!("{id}{separator}{suffix}");
        while taken.contains(&candidate) {
            *suffix += 1;
            candidate = format!("{id}{separator}{suffix}");
        }
        *suffix += 1;
        taken.insert(candidate.clone());
        *id = candidate;
    }
}

/// Turns case ids into distinct snake-case identifiers for test items.
///
/// Runs of anything but ASCII letters and digits become `_`; a name that would start with a
/// digit or be empty gets a `case_` prefix; a keyword gets a trailing `_`; collisions get
/// `_2`, `_3`, ...
pub(crate) fn item_names(ids: &[String]) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(ids.len());
    // A set beside the list: a data file's thousands of rows are as many names.
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    for id in ids {
        let mut name = String::with_capacity(id.len());
        for c in id.chars() {
            if c.is_ascii_alphanumeric() {
                name.push(c.to_ascii_lowercase());
            } else if !name.ends_with('_') {
                name.push('_');
            }
        }
        let trimmed = name.trim_matches('_');
        let mut name = if trimmed.is_empty() {
            "case".to_string()
        } else if trimmed.starts_with(|c: char| c.is_ascii_digit()) {
            format!("case_{trimmed}")
        } else {
            trimmed.to_string()
        };
        if is_reserved(&name) {
            name.push('_');
        }
        let base = name.clone();
        let mut counter = 2;
        while taken.contains(&name) {
            name = format!("{base}_{counter}");
            counter += 1;
        }
        taken.insert(name.clone());
        names.push(name);
    }
    names
}

/// Names that cannot be plain identifiers, or that would clash with the generated items.
fn is_reserved(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod",
        "move", "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
    ];
    RESERVED.contains(&name)
        || (name.starts_with("run") && name[3..].chars().all(|c| c.is_ascii_digit()))
}

/// The name of run `run` out of `runs` (`run02` of 10), zero-padded as
/// [`probtest_settings::run_digits`] says, which the runtime reads back; `leading` when the run
/// leads the item's name (run-major order).
pub(crate) fn run_name(run: u32, runs: u32, leading: bool) -> String {
    let width = probtest_settings::run_digits(runs, leading);
    format!("run{run:0width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(src: &str) -> Option<String> {
        scalar_id(&syn::parse_str(src).expect("test input parses"))
    }

    #[test]
    fn scalars_use_their_text() {
        assert_eq!(id(r#""refund please""#).as_deref(), Some("refund please"));
        assert_eq!(id("4").as_deref(), Some("4"));
        assert_eq!(id("4u8").as_deref(), Some("4u8"));
        assert_eq!(id("1.5").as_deref(), Some("1.5"));
        assert_eq!(id("-1").as_deref(), Some("-1"));
        assert_eq!(id("-0.25").as_deref(), Some("-0.25"));
        assert_eq!(id("true").as_deref(), Some("true"));
        assert_eq!(id("'x'").as_deref(), Some("x"));
        assert_eq!(id("Style::Terse").as_deref(), Some("Terse"));
        assert_eq!(id("crate::a::Mode::Fast").as_deref(), Some("Fast"));
        assert_eq!(id("NONE").as_deref(), Some("NONE"));
        assert_eq!(id("(7)").as_deref(), Some("7"));
        assert_eq!(id("Vec::<u8>::new").as_deref(), Some("new"));
    }

    #[test]
    fn other_expressions_have_no_scalar_id() {
        for src in [
            "Config::default()",
            "vec![1, 2]",
            "(1, 2)",
            "&x",
            "-x",
            "b\"bytes\"",
        ] {
            assert_eq!(id(src), None, "{src}");
        }
        let expr = syn::parse_str("Config::default()").expect("parses");
        assert_eq!(value_id(&expr, "cfg", 0), "cfg0");
        assert_eq!(value_id(&expr, "cfg", 3), "cfg3");
    }

    #[test]
    fn duplicates_become_unique_like_pytest() {
        let mut ids = vec!["a".to_string(), "b".into(), "a".into()];
        make_unique(&mut ids);
        assert_eq!(ids, ["a0", "b", "a1"]);

        let mut ids = vec!["v1".to_string(), "v1".into()];
        make_unique(&mut ids);
        assert_eq!(ids, ["v1_0", "v1_1"]);

        // A generated suffix never collides with an id that already exists.
        let mut ids = vec!["a".to_string(), "a".into(), "a0".into()];
        make_unique(&mut ids);
        assert_eq!(ids, ["a1", "a2", "a0"]);

        let mut ids = vec!["x".to_string(), "y".into()];
        make_unique(&mut ids);
        assert_eq!(ids, ["x", "y"]);
    }

    #[test]
    fn item_names_are_identifiers_and_distinct() {
        let ids: Vec<String> = [
            "refund please-Terse-2+2",
            "Refund Please-terse-2*2",
            "2+2",
            "",
            "++",
            "type",
            "run3",
            "héllo wörld",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            item_names(&ids),
            [
                "refund_please_terse_2_2",
                "refund_please_terse_2_2_2",
                "case_2_2",
                "case",
                "case_2",
                "type_",
                "run3_",
                "h_llo_w_rld",
            ]
        );
    }

    #[test]
    fn run_names_sort_numerically() {
        let names: Vec<String> = (1..=12).map(|run| run_name(run, 12, false)).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(run_name(3, 9, false), "run3");
        assert_eq!(run_name(3, 100, false), "run003");
        assert_eq!(run_name(3, 9, true), "run0003");
    }
}
