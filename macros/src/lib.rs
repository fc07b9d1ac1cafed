//! Procedural macros of probtest. Use them through the `probtest` crate, which re-exports them
//! and documents them.
//!
//! The attribute is handled in stages, one module each: `attr.rs` parses the arguments into a
//! model that keeps spans, `ast.rs` reads the function, `valid.rs` checks both and builds the
//! cases (collecting every error; `cases.rs` is their product, `dataset/` reads the data file of
//! `cases(...)`), `expand.rs` generates the code.

use proc_macro::TokenStream;
use quote::quote;

mod ast;
mod attr;
mod cases;
mod compare;
mod dataset;
mod expand;
mod ids;
mod repro;
mod run_options;
mod settings;
mod valid;

#[cfg(test)]
mod expansion_tests;

/// Turns one function into per-case, per-run test items. See the `probtest` crate.
#[proc_macro_attribute]
pub fn probability(args: TokenStream, item: TokenStream) -> TokenStream {
    probability_impl(args.into(), item.into()).into()
}

/// Runs a test under the perturbation of the doctor's repro blob. See the `probtest` crate.
#[proc_macro_attribute]
pub fn repro(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_item(error.to_compile_error(), item).into(),
    };
    match repro::expand(args.into(), function) {
        Ok(tokens) => tokens.into(),
        Err(error) => with_item(error.to_compile_error(), item).into(),
    }
}

/// Registers a function to run once before the first bench run of its module.
#[proc_macro_attribute]
pub fn setup(args: TokenStream, item: TokenStream) -> TokenStream {
    hook_impl(args.into(), item.into(), "setup").into()
}

/// Registers a function to run once after the last bench run of its module.
#[proc_macro_attribute]
pub fn teardown(args: TokenStream, item: TokenStream) -> TokenStream {
    hook_impl(args.into(), item.into(), "teardown").into()
}

fn probability_impl(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_item(error.to_compile_error(), item),
    };
    let attr: attr::Attr = match syn::parse2(args) {
        Ok(attr) => attr,
        Err(error) => return with_item(error.to_compile_error(), item),
    };
    let settings = match settings::load() {
        Ok(settings) => settings,
        // Said at the first function only: every function of the crate would say the same,
        // and one bad key is then one line, not one per function.
        Err(message) if !settings::first_report(&message) => {
            return with_item(proc_macro2::TokenStream::new(), item);
        }
        Err(message) => {
            let error = syn::Error::new(proc_macro2::Span::call_site(), message);
            return with_item(error.to_compile_error(), item);
        }
    };
    expand_function(attr, function, &settings)
}

fn expand_function(
    attr: attr::Attr,
    function: syn::ItemFn,
    settings: &settings::Settings,
) -> proc_macro2::TokenStream {
    // On error the function is emitted without its repro attribute, which would only say again
    // what is said here.
    let mut plain = function.clone();
    plain.attrs.retain(|attr| !repro::is_repro_attr(attr));
    let item = quote!(#plain);
    let bench = ast::BenchFn::from_item(function);
    let repro = bench
        .repro
        .as_ref()
        .and_then(|attr| repro::blob_in(std::slice::from_ref(attr)));
    let repro = match repro.transpose() {
        Ok(repro) => repro,
        Err(error) => return with_item(error.to_compile_error(), item),
    };
    match valid::validate(attr, &bench, settings) {
        Ok(model) => expand::expand(&bench, &model, settings, repro.as_ref()),
        Err(errors) => {
            let errors = errors.iter().map(syn::Error::to_compile_error);
            with_item(quote!(#(#errors)*), item)
        }
    }
}

fn hook_impl(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    kind: &str,
) -> proc_macro2::TokenStream {
    let function: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(error) => return with_item(error.to_compile_error(), item),
    };
    let mut errors = Vec::new();
    if let Err(error) = attr::parse_no_args(args, kind) {
        errors.push(error);
    }
    let sig = &function.sig;
    if let Some(asyncness) = sig.asyncness {
        errors.push(syn::Error::new(
            asyncness.span,
            format!(
                "a `#[probtest::{kind}]` function cannot be `async`; start a runtime inside it"
            ),
        ));
    }
    if !sig.inputs.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            format!("a `#[probtest::{kind}]` function takes no arguments"),
        ));
    }
    if !sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(
            &sig.generics,
            format!("a `#[probtest::{kind}]` function cannot be generic"),
        ));
    }
    if errors.is_empty() {
        expand::expand_hook(&function, kind)
    } else {
        let errors = errors.iter().map(syn::Error::to_compile_error);
        with_item(quote!(#(#errors)*), item)
    }
}

/// Errors plus the user's item unchanged, so that IDEs keep resolving the function.
fn with_item(
    errors: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    quote! {
        #errors
        #[allow(dead_code)]
        #item
    }
}
