//! The attribute's comparison keys: `compare = "model"` compares the values of one argument of
//! `params(...)`, each against a baseline value (`baseline = "small"`, else the first), paired
//! by the other arguments' values; `margin = 0.05` makes it a gate (non-inferiority, or with
//! `equivalence = true` equivalence). The keys are pytest-probability's mark arguments.

use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit};

use crate::attr::Group;
use crate::cases::group_choices;

/// A validated comparison.
pub(crate) struct Compare {
    pub(crate) axis: String,
    pub(crate) baseline: Option<String>,
    pub(crate) margin: Option<f64>,
    pub(crate) equivalence: bool,
}

fn string(value: &Expr, key: &str, errors: &mut Vec<syn::Error>) -> Option<String> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Some(text.value()),
        other => {
            errors.push(syn::Error::new(
                other.span(),
                format!("`{key}` expects a string literal such as `{key} = \"model\"`"),
            ));
            None
        }
    }
}

/// Checks the comparison's keys against the groups of `params(...)`.
pub(crate) fn check(
    keys: &[(Ident, Expr)],
    groups: &[Group],
    errors: &mut Vec<syn::Error>,
) -> Option<Compare> {
    let get = |name: &str| keys.iter().find(|(key, _)| key == name);
    let Some((compare_key, axis_expr)) = get("compare") else {
        for (key, _) in keys {
            errors.push(syn::Error::new(
                key.span(),
                format!("`{key}` needs `compare = \"<argument>\"` on the same function"),
            ));
        }
        return None;
    };
    let axis = string(axis_expr, "compare", errors)?;
    let Some(group) = groups
        .iter()
        .find(|group| group.names.iter().any(|name| *name == axis))
    else {
        let names: Vec<String> = groups
            .iter()
            .flat_map(|group| group.names.iter().map(|name| format!("`{name}`")))
            .collect();
        let has = if names.is_empty() {
            "it has none".to_string()
        } else {
            format!("its arguments are {}", names.join(", "))
        };
        errors.push(syn::Error::new(
            axis_expr.span(),
            format!("compare = \"{axis}\" is not an argument of `params(...)` ({has})"),
        ));
        return None;
    };
    let ids: Vec<String> = group_choices(group).into_iter().map(|c| c.id).collect();
    if ids.len() < 2 {
        errors.push(syn::Error::new(
            compare_key.span(),
            format!("compare = \"{axis}\" needs at least two values to compare"),
        ));
        return None;
    }
    let baseline = match get("baseline") {
        Some((_, value)) => {
            let baseline = string(value, "baseline", errors)?;
            if !ids.contains(&baseline) {
                errors.push(syn::Error::new(
                    value.span(),
                    format!(
                        "baseline = \"{baseline}\" is not a value of `{axis}`; expected one of: {}",
                        ids.join(", ")
                    ),
                ));
                return None;
            }
            Some(baseline)
        }
        None => None,
    };
    let margin = match get("margin") {
        Some((_, value)) => {
            let parsed = match value {
                Expr::Lit(ExprLit {
                    lit: Lit::Float(f), ..
                }) => f.base10_parse::<f64>().ok(),
                _ => None,
            };
            match parsed {
                Some(margin) if margin > 0.0 && margin < 1.0 => Some(margin),
                _ => {
                    errors.push(syn::Error::new(
                        value.span(),
                        "`margin` expects a number strictly between 0 and 1, such as `margin = 0.05`",
                    ));
                    return None;
                }
            }
        }
        None => None,
    };
    let equivalence = match get("equivalence") {
        Some((key, value)) => {
            let Expr::Lit(ExprLit {
                lit: Lit::Bool(flag),
                ..
            }) = value
            else {
                errors.push(syn::Error::new(
                    value.span(),
                    "`equivalence` expects `true` or `false`",
                ));
                return None;
            };
            if flag.value && margin.is_none() {
                errors.push(syn::Error::new(
                    key.span(),
                    "`equivalence = true` needs a `margin`",
                ));
                return None;
            }
            flag.value
        }
        None => false,
    };
    Some(Compare {
        axis,
        baseline,
        margin,
        equivalence,
    })
}
