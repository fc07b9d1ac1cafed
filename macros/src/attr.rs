//! Parsing of the `#[probability(...)]` arguments into a model that keeps every span.
//!
//! Parsing is forgiving on purpose: an unknown or malformed key is recorded as an error and
//! parsing goes on, so that one compile run reports every mistake at once.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{bracketed, parenthesized, Expr, Ident, LitStr, Token};

/// The keys `#[probability(...)]` accepts, in the order error messages list them.
pub(crate) const ACCEPTED_KEYS: &[&str] = &[
    "runs",
    "params",
    "cases",
    "min_rate",
    "min_passes",
    "confidence",
    "method",
    "prior",
    "compare",
    "baseline",
    "margin",
    "equivalence",
    "timeout",
    "limit",
    "latency_quantile",
    "max_latency",
];

/// Everything written inside `#[probability(...)]`.
#[derive(Default)]
pub(crate) struct Attr {
    pub(crate) runs: Option<RunsArg>,
    pub(crate) params: Option<Vec<Group>>,
    /// `cases(...)`: the rows of a data file as one more group of the product.
    pub(crate) cases: Option<CasesArg>,
    /// The gate's keys (`min_rate`, `min_passes`, `confidence`, `method`, `prior`) in written
    /// order, with the key's identifier for errors.
    pub(crate) gate: Vec<(Ident, Expr)>,
    /// The comparison's keys (`compare`, `baseline`, `margin`, `equivalence`) in written order.
    pub(crate) compare: Vec<(Ident, Expr)>,
    /// How each run is executed and timed (`timeout`, `limit`, `latency_quantile`,
    /// `max_latency`), in written order.
    pub(crate) run_options: Vec<(Ident, Expr)>,
    /// Problems found while parsing; validation adds its own later.
    pub(crate) errors: Vec<syn::Error>,
}

/// `runs = <expr>`, kept as written so validation can point at a bad value.
pub(crate) struct RunsArg {
    pub(crate) value: Expr,
}

/// One group of `params(...)`: `name = [..]` or `(a, b) = [..]`.
pub(crate) struct Group {
    pub(crate) names: Vec<Ident>,
    /// Whether the names were written as a tuple, even a one-element one.
    pub(crate) zipped: bool,
    pub(crate) values: Vec<Value>,
    /// The span of the `[...]` list, for errors about the values as a whole.
    pub(crate) values_span: Span,
}

/// `cases(ticket = "data/tickets.jsonl", id = "name")`: each row of the file is a value of
/// `ticket`, or, with `(text, expected) = ...`, gives each named argument its field.
pub(crate) struct CasesArg {
    pub(crate) names: Vec<Ident>,
    /// Whether the names were written as a tuple: arguments bound to fields by name.
    pub(crate) zipped: bool,
    /// The file, relative to the package's manifest directory.
    pub(crate) path: LitStr,
    /// The field whose value is each row's id; without it, the row number is.
    pub(crate) id: Option<LitStr>,
    /// Whether `cases` was written before `params`, so that its rows vary slowest.
    pub(crate) first: bool,
}

/// One value of a group, with its optional `=> "id"` override.
pub(crate) struct Value {
    pub(crate) expr: Expr,
    pub(crate) id: Option<LitStr>,
}

impl Parse for Attr {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut attr = Attr::default();
        let mut seen: Vec<String> = Vec::new();
        while !input.is_empty() {
            let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
            let name = key.to_string();
            if seen.contains(&name) && ACCEPTED_KEYS.contains(&name.as_str()) {
                attr.errors.push(syn::Error::new(
                    key.span(),
                    format!("`{name}` is given more than once"),
                ));
            }
            seen.push(name.clone());
            match name.as_str() {
                "runs" => {
                    input.parse::<Token![=]>()?;
                    let value: Expr = input.parse()?;
                    if attr.runs.is_none() {
                        attr.runs = Some(RunsArg { value });
                    }
                }
                "params" => {
                    let content;
                    parenthesized!(content in input);
                    let groups = parse_groups(&content, &mut attr.errors)?;
                    if attr.params.is_none() {
                        attr.params = Some(groups);
                    }
                }
                "cases" => {
                    let content;
                    parenthesized!(content in input);
                    let mut cases = parse_cases(&content, &mut attr.errors)?;
                    cases.first = attr.params.is_none();
                    if attr.cases.is_none() {
                        attr.cases = Some(cases);
                    }
                }
                "min_rate" | "min_passes" | "confidence" | "method" | "prior" => {
                    input.parse::<Token![=]>()?;
                    let value: Expr = input.parse()?;
                    if !attr.gate.iter().any(|(known, _)| *known == key) {
                        attr.gate.push((key, value));
                    }
                }
                "compare" | "baseline" | "margin" | "equivalence" => {
                    input.parse::<Token![=]>()?;
                    let value: Expr = input.parse()?;
                    if !attr.compare.iter().any(|(known, _)| *known == key) {
                        attr.compare.push((key, value));
                    }
                }
                "timeout" | "limit" | "latency_quantile" | "max_latency" => {
                    input.parse::<Token![=]>()?;
                    let value: Expr = input.parse()?;
                    if !attr.run_options.iter().any(|(known, _)| *known == key) {
                        attr.run_options.push((key, value));
                    }
                }
                _ => {
                    attr.errors.push(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown key `{name}`; expected one of: {}",
                            ACCEPTED_KEYS
                                .iter()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                    skip_value(input)?;
                }
            }
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(attr)
    }
}

/// Skips what follows an unknown key (`= tokens` or `(tokens)`) up to the next top-level comma.
fn skip_value(input: ParseStream<'_>) -> syn::Result<()> {
    while !input.is_empty() && !input.peek(Token![,]) {
        input.parse::<TokenTree>()?;
    }
    Ok(())
}

fn parse_groups(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<Vec<Group>> {
    let mut groups = Vec::new();
    while !input.is_empty() {
        let (names, zipped) = if input.peek(syn::token::Paren) {
            let content;
            let parens = parenthesized!(content in input);
            let names = content.parse_terminated(Ident::parse, Token![,])?;
            if names.is_empty() {
                errors.push(syn::Error::new(
                    parens.span.join(),
                    "a group needs at least one argument name",
                ));
            }
            (names.into_iter().collect::<Vec<_>>(), true)
        } else {
            (vec![input.parse::<Ident>()?], false)
        };
        input.parse::<Token![=]>()?;
        let content;
        let brackets = bracketed!(content in input);
        let mut values = Vec::new();
        while !content.is_empty() {
            let expr: Expr = content.parse()?;
            let id = if content.peek(Token![=>]) {
                content.parse::<Token![=>]>()?;
                Some(content.parse::<LitStr>()?)
            } else {
                None
            };
            values.push(Value { expr, id });
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        groups.push(Group {
            names,
            zipped,
            values,
            values_span: brackets.span.join(),
        });
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok(groups)
}

/// `names = "path"` then, optionally, `id = "field"`.
fn parse_cases(input: ParseStream<'_>, errors: &mut Vec<syn::Error>) -> syn::Result<CasesArg> {
    let (names, zipped) = if input.peek(syn::token::Paren) {
        let content;
        let parens = parenthesized!(content in input);
        let names = content.parse_terminated(Ident::parse, Token![,])?;
        if names.is_empty() {
            errors.push(syn::Error::new(
                parens.span.join(),
                "name at least one argument to bind the rows' fields to",
            ));
        }
        (names.into_iter().collect::<Vec<_>>(), true)
    } else {
        (vec![input.parse::<Ident>()?], false)
    };
    input.parse::<Token![=]>()?;
    let path: LitStr = input.parse()?;
    let mut id = None;
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        let key: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        input.parse::<Token![=]>()?;
        if key == "id" {
            let field: LitStr = input.parse()?;
            if id.is_some() {
                errors.push(syn::Error::new(key.span(), "`id` is given more than once"));
            }
            id = Some(field);
        } else {
            errors.push(syn::Error::new(
                key.span(),
                format!("unknown key `{key}` in `cases(...)`; expected `id`"),
            ));
            skip_value(input)?;
        }
    }
    Ok(CasesArg {
        names,
        zipped,
        path,
        id,
        first: true,
    })
}

/// Parses the (empty) arguments of `#[probtest::setup]` / `#[probtest::teardown]`.
pub(crate) fn parse_no_args(args: TokenStream, macro_name: &str) -> syn::Result<()> {
    if let Some(first) = args.into_iter().next() {
        return Err(syn::Error::new(
            first.span(),
            format!("`#[probtest::{macro_name}]` takes no arguments"),
        ));
    }
    Ok(())
}

impl Value {
    /// The span to point at when this value is wrong.
    pub(crate) fn span(&self) -> Span {
        self.expr.span()
    }
}
