//! The attribute's keys for how each run is executed: `timeout = "30s"` (a humantime-style
//! duration, checked here so that a bad one is a compile error on its literal) and
//! `limit = "openai"` (a limit, see `probtest::limit`, held around every run's body); and how
//! its run times are judged: `latency_quantile = 0.99` (the quantile reported) and
//! `max_latency = "2s"` (a latency gate on it), checked here for the same reason.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit};

/// The validated run options.
#[derive(Default)]
pub(crate) struct RunOptions {
    /// The timeout in nanoseconds.
    pub(crate) timeout: Option<u64>,
    pub(crate) limit: Option<String>,
    /// The latency quantile, strictly between 0 and 1.
    pub(crate) latency_quantile: Option<f64>,
    /// The latency gate's limit in seconds.
    pub(crate) max_latency: Option<f64>,
    /// A latency gate's own `confidence`, when no rate gate takes it.
    pub(crate) latency_level: Option<f64>,
}

/// Checks `timeout` and `limit`, pushing an error on the offending literal.
pub(crate) fn check(keys: &[(Ident, Expr)], errors: &mut Vec<syn::Error>) -> RunOptions {
    let mut options = RunOptions::default();
    for (key, value) in keys {
        let name = key.to_string();
        if name == "latency_quantile" {
            options.latency_quantile = quantile(value, errors);
            continue;
        }
        let example = match name.as_str() {
            "timeout" => "30s",
            "max_latency" => "2s",
            _ => "openai",
        };
        let text = match value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(text),
                ..
            }) => text.value(),
            other => {
                errors.push(syn::Error::new(
                    other.span(),
                    format!("`{name}` expects a string literal such as `{name} = \"{example}\"`"),
                ));
                continue;
            }
        };
        if name == "max_latency" {
            // parse_duration refuses zero, which no run time could be under.
            match probtest_settings::parse_duration(&text) {
                Ok(duration) => options.max_latency = Some(duration.as_secs_f64()),
                Err(why) => errors.push(syn::Error::new(
                    value.span(),
                    format!("`max_latency`: {why}"),
                )),
            }
        } else if name == "timeout" {
            match probtest_settings::parse_duration(&text) {
                Ok(duration) => {
                    options.timeout = Some(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX))
                }
                Err(why) => errors.push(syn::Error::new(value.span(), format!("`timeout`: {why}"))),
            }
        } else if text.trim().is_empty() {
            errors.push(syn::Error::new(
                value.span(),
                "`limit` expects the name of a limit such as `limit = \"openai\"`",
            ));
        } else if let Err(why) = probtest_settings::check_limit_key(&text) {
            errors.push(syn::Error::new(value.span(), format!("`limit`: {why}")));
        } else {
            options.limit = Some(text);
        }
    }
    options
}

/// `latency_quantile = 0.99`: a number literal strictly between 0 and 1.
fn quantile(value: &Expr, errors: &mut Vec<syn::Error>) -> Option<f64> {
    let text = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Float(number),
            ..
        }) => number.base10_digits().to_string(),
        Expr::Lit(ExprLit {
            lit: Lit::Int(number),
            ..
        }) => number.base10_digits().to_string(),
        other => {
            errors.push(syn::Error::new(
                other.span(),
                "`latency_quantile` expects a number literal such as `latency_quantile = 0.99`",
            ));
            return None;
        }
    };
    match probtest_settings::parse_fraction("a quantile", &text) {
        Ok(quantile) => Some(quantile),
        Err(why) => {
            errors.push(syn::Error::new(
                value.span(),
                format!("`latency_quantile`: {why}"),
            ));
            None
        }
    }
}

/// The builder calls that hand the options to the bench's static.
pub(crate) fn tokens(options: &RunOptions) -> TokenStream {
    let timeout = options.timeout.map(|nanos| quote!(.with_timeout(#nanos)));
    let limit = options.limit.as_ref().map(|key| quote!(.with_limit(#key)));
    let optional = |value: Option<f64>| match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    };
    let latency =
        (options.latency_quantile.is_some() || options.max_latency.is_some()).then(|| {
            let (quantile, limit, level) = (
                optional(options.latency_quantile),
                optional(options.max_latency),
                optional(options.latency_level),
            );
            quote!(.with_latency(#quantile, #limit, #level))
        });
    quote!(#timeout #limit #latency)
}
