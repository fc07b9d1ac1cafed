//! Validation: checks the parsed attribute against the function and builds the list of cases.
//! Every problem is collected with its span, so one compile run reports all of them.

use std::collections::HashSet;

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit};

use crate::ast::BenchFn;
use crate::attr::{Attr, Group};
use crate::cases::Case;
use crate::dataset::Dataset;
use crate::settings::Settings;

/// A validated bench function, ready for expansion.
pub(crate) struct Model {
    /// The case's own gate, if the attribute gives one.
    pub(crate) gate: Option<Gate>,
    /// The function's comparison of one argument's values, if the attribute asks for one.
    pub(crate) compare: Option<crate::compare::Compare>,
    /// `timeout` and `limit`.
    pub(crate) run_options: crate::run_options::RunOptions,
    pub(crate) runs: u32,
    pub(crate) transpose: bool,
    pub(crate) cases: Vec<Case>,
    /// The data file of `cases(...)`, whose rows the cases take.
    pub(crate) dataset: Option<Dataset>,
}

/// A gate as the attribute writes it; what it leaves out falls back to the session's settings.
pub(crate) struct Gate {
    pub(crate) rule: GateRule,
    pub(crate) method: Option<probtest_settings::Method>,
    pub(crate) level: Option<f64>,
    pub(crate) prior: Option<(f64, f64)>,
}

pub(crate) enum GateRule {
    MinRate(f64),
    MinPasses(u64),
}

impl Model {
    /// Whether the function has parameters, so that rows and items carry a case level.
    pub(crate) fn parametrized(&self) -> bool {
        self.cases
            .first()
            .is_some_and(|case| !case.params.is_empty())
    }
}

/// Checks everything, collecting all errors.
pub(crate) fn validate(
    attr: Attr,
    func: &BenchFn,
    settings: &Settings,
) -> Result<Model, Vec<syn::Error>> {
    let mut errors = attr.errors;
    let attribute_runs = attr.runs.and_then(|runs| match check_runs(&runs.value) {
        Ok(runs) => Some(runs),
        Err(error) => {
            errors.push(error);
            None
        }
    });
    check_signature(func, &mut errors);
    let groups = attr.params.unwrap_or_default();
    let dataset_names = attr
        .cases
        .as_ref()
        .map_or(&[][..], |cases| &cases.names[..]);
    check_groups(&groups, dataset_names, func, &mut errors);
    let dataset = attr
        .cases
        .as_ref()
        .and_then(|cases| crate::dataset::load(cases, &mut errors));
    let runs = settings.runs(attribute_runs);
    // A latency gate alone may set its own `confidence`, as pytest-probability's mark does.
    let latency_gated = attr.run_options.iter().any(|(key, _)| key == "max_latency");
    let gate = check_gate(&attr.gate, runs, latency_gated, &mut errors);
    let compare = crate::compare::check(&attr.compare, &groups, &mut errors);
    let mut run_options = crate::run_options::check(&attr.run_options, &mut errors);
    if gate.is_none() && latency_gated {
        // Checked (and any error reported) by `check_gate`.
        run_options.latency_level = attr
            .gate
            .iter()
            .find(|(key, _)| key == "confidence")
            .and_then(|(_, value)| fraction(value, "confidence", &mut Vec::new()));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Model {
        gate,
        compare,
        run_options,
        runs,
        transpose: settings.transpose,
        cases: crate::cases::build(&groups, dataset.as_ref(), func),
        dataset,
    })
}

fn check_runs(value: &Expr) -> Result<u32, syn::Error> {
    let expected = "`runs` expects a whole number literal such as `runs = 10`";
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => match int.base10_parse::<u32>() {
            Ok(0) => Err(syn::Error::new(int.span(), "`runs` must be at least 1")),
            Ok(runs) if runs <= probtest_settings::MAX_RUNS => Ok(runs),
            // The literal is a whole number, so the only way it fails to parse is by overflow.
            _ => Err(syn::Error::new(
                int.span(),
                probtest_settings::more_than_max_runs(&format!("`runs = {int}`")),
            )),
        },
        other => Err(syn::Error::new(other.span(), expected)),
    }
}

/// A number literal (`0.9`, `1`), or `None` with an error on anything else.
fn number(value: &Expr, key: &str, errors: &mut Vec<syn::Error>) -> Option<f64> {
    let parsed = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Float(f), ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse::<f64>().ok(),
        _ => None,
    };
    if parsed.is_none() {
        errors.push(syn::Error::new_spanned(
            value,
            format!("`{key}` expects a number literal"),
        ));
    }
    parsed
}

/// A fraction strictly between 0 and 1; a percentage gets the fraction it probably meant.
fn fraction(value: &Expr, key: &str, errors: &mut Vec<syn::Error>) -> Option<f64> {
    let number = number(value, key, errors)?;
    if probtest_settings::is_fraction(number) {
        return Some(number);
    }
    let hint = match probtest_settings::meant_fraction(number) {
        Some(meant) => format!("; did you mean `{key} = {meant}`?"),
        None => String::new(),
    };
    errors.push(syn::Error::new_spanned(
        value,
        format!("`{key}` must be strictly between 0 and 1{hint}"),
    ));
    None
}

/// The methods a gate's `method` names, spelled exactly.
const METHODS: [(&str, probtest_settings::Method); 3] = [
    ("exact", probtest_settings::Method::Exact),
    ("wilson", probtest_settings::Method::Wilson),
    ("bayes", probtest_settings::Method::Bayes),
];

fn check_gate(
    keys: &[(Ident, Expr)],
    runs: u32,
    latency_gated: bool,
    errors: &mut Vec<syn::Error>,
) -> Option<Gate> {
    let mut rule: Option<(String, GateRule)> = None;
    let (mut method, mut level, mut prior) = (None, None, None);
    for (key, value) in keys {
        let name = key.to_string();
        match name.as_str() {
            "min_rate" | "min_passes" => {
                if let Some((first, _)) = &rule {
                    errors.push(syn::Error::new(
                        key.span(),
                        format!(
                            "`{name}` and `{first}` cannot be used together: a gate has one rule"
                        ),
                    ));
                    continue;
                }
                let parsed = if name == "min_rate" {
                    fraction(value, "min_rate", errors).map(GateRule::MinRate)
                } else {
                    match value {
                        Expr::Lit(ExprLit {
                            lit: Lit::Int(int), ..
                        }) => match int.base10_parse::<u64>() {
                            Ok(0) | Err(_) => {
                                errors.push(syn::Error::new_spanned(
                                    value,
                                    "`min_passes` must be a whole number of at least 1",
                                ));
                                None
                            }
                            Ok(bar) if bar > u64::from(runs) => {
                                errors.push(syn::Error::new_spanned(
                                    value,
                                    format!("`min_passes = {bar}` can never pass: each case has {runs} runs"),
                                ));
                                None
                            }
                            Ok(bar) => Some(GateRule::MinPasses(bar)),
                        },
                        _ => {
                            errors.push(syn::Error::new_spanned(value, "`min_passes` expects a whole number literal such as `min_passes = 8`"));
                            None
                        }
                    }
                };
                if let Some(parsed) = parsed {
                    rule = Some((name, parsed));
                }
            }
            "confidence" => level = fraction(value, "confidence", errors),
            "method" => {
                // The attribute's names are exact, unlike the variable's, which take any case.
                let parsed = match value {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(text),
                        ..
                    }) => METHODS
                        .into_iter()
                        .find(|(name, _)| *name == text.value())
                        .map(|(_, method)| method),
                    _ => None,
                };
                match parsed {
                    Some(parsed) => method = Some(parsed),
                    None => errors.push(syn::Error::new_spanned(
                        value,
                        "`method` expects \"exact\", \"wilson\" or \"bayes\"",
                    )),
                }
            }
            "prior" => {
                let elements: Vec<&Expr> = match value {
                    Expr::Array(array) => array.elems.iter().collect(),
                    Expr::Tuple(tuple) => tuple.elems.iter().collect(),
                    _ => Vec::new(),
                };
                let mut ignored = Vec::new();
                let numbers: Vec<f64> = elements
                    .iter()
                    .filter_map(|e| number(e, "prior", &mut ignored))
                    .collect();
                match numbers[..] {
                    [a, b] if elements.len() == 2 && a > 0.0 && b > 0.0 => prior = Some((a, b)),
                    _ => errors.push(syn::Error::new_spanned(
                        value,
                        "`prior` expects two positive numbers, `prior = [a, b]` for a Beta(a, b) prior",
                    )),
                }
            }
            _ => {}
        }
    }
    if rule.is_none() {
        for (key, _) in keys
            .iter()
            .filter(|(key, _)| !(*key == "min_rate" || *key == "min_passes"))
            .filter(|(key, _)| !(latency_gated && *key == "confidence"))
        {
            errors.push(syn::Error::new(
                key.span(),
                format!("`{key}` sets how a gate judges; add `min_rate` or `min_passes`"),
            ));
        }
    }
    rule.map(|(_, rule)| Gate {
        rule,
        method,
        level,
        prior,
    })
}

fn check_signature(func: &BenchFn, errors: &mut Vec<syn::Error>) {
    let sig = &func.item.sig;
    if let Some(receiver) = &func.receiver {
        errors.push(syn::Error::new_spanned(
            receiver,
            "a `#[probability]` function cannot take `self`; make it a free function",
        ));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            "a `#[probability]` function cannot be generic; pass concrete values in `params(...)`",
        ));
    }
    if let Some(asyncness) = sig.asyncness {
        if func.test_attr.is_none() {
            errors.push(syn::Error::new(
                asyncness.span,
                "an `async fn` needs a test attribute after `#[probability]`, such as `#[tokio::test]`",
            ));
        }
    }
    for arg in &func.args {
        if !arg.plain {
            errors.push(syn::Error::new_spanned(
                &arg.pattern,
                "`#[probability]` arguments must be plain names such as `text: &str`",
            ));
        }
    }
}

fn check_groups(groups: &[Group], dataset: &[Ident], func: &BenchFn, errors: &mut Vec<syn::Error>) {
    let fn_name = func.name();
    let mut covered: HashSet<String> = HashSet::new();
    for name in dataset {
        let key = name.to_string();
        if !func.args.iter().any(|arg| arg.ident.as_ref() == Some(name)) {
            errors.push(syn::Error::new(
                name.span(),
                format!("`{key}` is not an argument of `{fn_name}`"),
            ));
        } else if !covered.insert(key.clone()) {
            errors.push(syn::Error::new(
                name.span(),
                format!("`{key}` is named twice in `cases(...)`"),
            ));
        }
    }
    for group in groups {
        for name in &group.names {
            let key = name.to_string();
            if !func.args.iter().any(|arg| arg.ident.as_ref() == Some(name)) {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{key}` is not an argument of `{fn_name}`"),
                ));
            } else if dataset.iter().any(|bound| bound == name) {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{key}` already takes its values from `cases(...)`; give each argument one group"),
                ));
            } else if !covered.insert(key.clone()) {
                errors.push(syn::Error::new(
                    name.span(),
                    format!("`{key}` already has values in an earlier group; give each argument one group"),
                ));
            }
        }
        if group.values.is_empty() {
            errors.push(syn::Error::new(
                group.values_span,
                "this group has no values",
            ));
        }
        let mut explicit_ids: Vec<String> = Vec::new();
        for value in &group.values {
            if group.zipped {
                let arity = group.names.len();
                let found = match &value.expr {
                    Expr::Tuple(tuple) => Some(tuple.elems.len()),
                    _ => None,
                };
                if found != Some(arity) {
                    let found =
                        found.map_or("a single value".to_string(), |n| format!("a tuple of {n}"));
                    errors.push(syn::Error::new(
                        value.span(),
                        format!(
                            "expected a tuple of {arity} values for `({})`, found {found}",
                            group
                                .names
                                .iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            if let Some(id) = &value.id {
                let text = id.value();
                if explicit_ids.contains(&text) {
                    errors.push(syn::Error::new(
                        id.span(),
                        format!("the id \"{text}\" is given to another value of this group"),
                    ));
                }
                explicit_ids.push(text);
            }
        }
    }
    for arg in &func.args {
        if let Some(ident) = &arg.ident {
            if !covered.contains(&ident.to_string()) {
                errors.push(syn::Error::new_spanned(
                    &arg.pattern,
                    format!(
                        "argument `{ident}` has no values; add `{ident} = [...]` to `params(...)`, or name it in `cases(...)`"
                    ),
                ));
            }
        }
    }
}

/// The value as the user wrote it, for the report's `params`: the token text with the spacing
/// that `to_string` adds between tokens taken out where Rust code has none.
pub(crate) fn written_text(expr: &Expr) -> String {
    let mut text = expr.to_token_stream().to_string();
    for (spaced, tight) in [
        (" :: ", "::"),
        (" . ", "."),
        (" ,", ","),
        ("( ", "("),
        (" )", ")"),
        ("[ ", "["),
        (" ]", "]"),
        (" ! (", "!("),
        (" ! [", "!["),
        (" ?", "?"),
        (" : ", ": "),
        ("::< ", "::<"),
        (" >::", ">::"),
        (" >(", ">("),
    ] {
        text = text.replace(spaced, tight);
    }
    // A call's parentheses follow the callee directly: `Config::default ()`.
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' '
            && chars.peek() == Some(&'(')
            && out.ends_with(|p: char| p.is_alphanumeric() || p == '_' || p == '>')
        {
            continue;
        }
        out.push(c);
    }
    if let Some(rest) = out.strip_prefix("- ") {
        out = format!("-{rest}");
    }
    if let Some(rest) = out.strip_prefix("& ") {
        out = format!("&{rest}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{check_runs, written_text};

    #[test]
    fn run_counts_stop_at_the_cap_and_quote_the_literal() {
        let runs = |src: &str| check_runs(&syn::parse_str(src).expect("parses"));
        assert_eq!(
            runs("100000").expect("at the cap"),
            probtest_settings::MAX_RUNS
        );
        for (src, written) in [
            ("100001", "100001"),
            ("1_000_000_000", "1_000_000_000"),
            ("5000000000", "5000000000"),
            ("100001u32", "100001u32"),
        ] {
            let error = runs(src).expect_err(src);
            assert_eq!(
                error.to_string(),
                format!(
                    "`runs = {written}` is more than 100000 runs per case, the most probtest generates"
                )
            );
        }
        assert_eq!(
            runs("0").expect_err("zero").to_string(),
            "`runs` must be at least 1"
        );
    }

    #[test]
    fn written_text_reads_like_source() {
        for src in [
            "Style::Terse",
            "\"2+2\"",
            "-1",
            "Config::default()",
            "vec![1, 2, 3]",
            "(\"a\", 4)",
            "&[1, 2]",
            "Mode::Fast { retries: 3 }",
            "x.len()",
            "Vec::<u8>::new()",
        ] {
            let expr: syn::Expr = syn::parse_str(src).expect("parses");
            assert_eq!(written_text(&expr), src);
        }
    }
}
