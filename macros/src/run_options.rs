//! The attribute's keys for how each run is executed: `timeout = "30s"` (a humantime-style
//! duration, checked here so that a bad one is a compile error on its literal) and
//! `limit = "openai"` (a limit, see `probtest::limit`, held around every run's body).

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
}

/// Checks `timeout` and `limit`, pushing an error on the offending literal.
pub(crate) fn check(keys: &[(Ident, Expr)], errors: &mut Vec<syn::Error>) -> RunOptions {
    let mut options = RunOptions::default();
    for (key, value) in keys {
        let name = key.to_string();
        let example = if name == "timeout" { "30s" } else { "openai" };
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
        if name == "timeout" {
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
        } else {
            options.limit = Some(text);
        }
    }
    options
}

/// The builder calls that hand the options to the bench's static.
pub(crate) fn tokens(options: &RunOptions) -> TokenStream {
    let timeout = options.timeout.map(|nanos| quote!(.with_timeout(#nanos)));
    let limit = options.limit.as_ref().map(|key| quote!(.with_limit(#key)));
    quote!(#timeout #limit)
}
