//! `#[probtest::repro("pd1:...")]`, in the attribute's stages: the one string argument, the blob
//! checked at compile time (its format, version and fields, an axis an attribute can carry, the
//! test it names), and the test's body wrapped so that the runtime runs it again under the
//! blob's perturbation. Above a `#[probability]` function, the attribute moves below it and that
//! expansion wraps the one item the blob names.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{Attribute, ItemFn, LitStr};

use probtest_settings::repro::Repro;

/// Whether `attr` is `#[probtest::repro]` (or `#[repro]`, imported).
pub(crate) fn is_repro_attr(attr: &Attribute) -> bool {
    is_probtest_attr(attr, "repro")
}

/// Whether `attr` is `#[probability]` or `#[probtest::probability]`.
fn is_probability_attr(attr: &Attribute) -> bool {
    is_probtest_attr(attr, "probability")
}

fn is_probtest_attr(attr: &Attribute, name: &str) -> bool {
    let segments = &attr.path().segments;
    match segments.len() {
        1 => segments[0].ident == name,
        2 => segments[0].ident == "probtest" && segments[1].ident == name,
        _ => false,
    }
}

/// The blob of a repro attribute's arguments, checked: one string literal that decodes to a repro
/// an attribute can carry.
pub(crate) fn blob(args: TokenStream) -> syn::Result<(LitStr, Repro)> {
    let literal: LitStr = syn::parse2(args).map_err(|error| {
        syn::Error::new(
            error.span(),
            "expected the doctor's repro blob: `#[probtest::repro(\"pd1:...\")]`",
        )
    })?;
    let repro = Repro::decode(&literal.value())
        .and_then(|repro| repro.carried_by_attribute().map(|()| repro))
        .map_err(|problem| syn::Error::new(literal.span(), problem))?;
    Ok((literal, repro))
}

/// The blob of the repro attribute in `attrs`, checked; `None` when there is none.
pub(crate) fn blob_in(attrs: &[Attribute]) -> Option<syn::Result<(LitStr, Repro)>> {
    let attr = attrs.iter().find(|attr| is_repro_attr(attr))?;
    Some(match &attr.meta {
        syn::Meta::List(list) => blob(list.tokens.clone()),
        _ => Err(syn::Error::new_spanned(
            attr,
            "expected the doctor's repro blob: `#[probtest::repro(\"pd1:...\")]`",
        )),
    })
}

/// The attribute on `item`. Above `#[probability]`, it goes below that attribute, which reads
/// it; above any other test, the body is wrapped.
pub(crate) fn expand(args: TokenStream, mut item: ItemFn) -> syn::Result<TokenStream> {
    if let Some(position) = item.attrs.iter().position(is_probability_attr) {
        // Checked once, where `#[probability]` knows which item the blob names.
        let attr: Attribute = syn::parse_quote!(#[::probtest::repro(#args)]);
        item.attrs.insert(position + 1, attr);
        return Ok(quote!(#item));
    }
    let (literal, repro) = blob(args)?;
    if !item.attrs.iter().any(crate::ast::is_test_attr) {
        return Err(syn::Error::new_spanned(
            &item.sig.ident,
            "#[probtest::repro] goes above a test: a `#[test]` (or `#[tokio::test]`, ...) or a \
             `#[probability]` function",
        ));
    }
    let name = item.sig.ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
    let recorded = repro.test.rsplit("::").next().unwrap_or(&repro.test);
    if recorded != name {
        return Err(syn::Error::new(
            literal.span(),
            format!(
                "the blob was recorded for the test `{}`, not for `{name}`",
                repro.test
            ),
        ));
    }
    let block = &item.block;
    let span = literal.span();
    let wrapped = if item.sig.asyncness.is_some() {
        quote_spanned! {span=>
            ::probtest::__private::repro::run(
                #literal, ::core::module_path!(), #name, move || async move #block,
            ).await
        }
    } else {
        quote_spanned! {span=>
            ::probtest::__private::repro::run(
                #literal, ::core::module_path!(), #name, move || #block,
            )
        }
    };
    *item.block = syn::parse_quote!({ #wrapped });
    Ok(quote!(#item))
}

/// Whether the blob's test is the item at `path` from the function's module: the same name, or
/// the same name under the modules the function is in.
pub(crate) fn names_item(repro: &Repro, path: &str) -> bool {
    repro.test == path || repro.test.ends_with(&format!("::{path}"))
}

/// The prefix of the function a `#[probability]` item the blob names calls instead of its case's
/// body: `__probtest_repro_<function>`.
pub(crate) const WRAPPER: &str = "__probtest_repro_";

/// The repro of a `#[probability]` function: which item (case index, run) the blob names, and
/// the function that item calls (or the error when the blob names none of its items).
pub(crate) struct ItemRepro {
    pub(crate) item: Option<(usize, u32)>,
    pub(crate) tokens: TokenStream,
}

/// The item of `func` the blob names, and the wrapper it calls.
pub(crate) fn for_item(
    func: &crate::ast::BenchFn,
    model: &crate::valid::Model,
    layout: crate::expand::Layout,
    (literal, repro): &(LitStr, Repro),
    data_name: &syn::Ident,
) -> ItemRepro {
    let name = func.name().to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
    let mut paths = Vec::new();
    for (index, case) in model.cases.iter().enumerate() {
        let case_item = if model.parametrized() {
            case.item.as_str()
        } else {
            ""
        };
        for run in 1..=model.runs {
            paths.push((
                index,
                run,
                layout.item_path(&name, case_item, run, model.runs),
            ));
        }
    }
    let Some((index, run, path)) = paths.iter().find(|(_, _, path)| names_item(repro, path)) else {
        let first = paths
            .first()
            .map_or(String::new(), |(_, _, path)| path.clone());
        let error = syn::Error::new(
            literal.span(),
            format!(
                "the blob was recorded for the test `{}`, which is none of `{name}`'s items \
                 (such as `{first}`)",
                repro.test
            ),
        );
        return ItemRepro {
            item: None,
            tokens: error.to_compile_error(),
        };
    };
    let span = literal.span();
    let wrapper = quote::format_ident!("{}{}", WRAPPER, func.name(), span = span);
    let call = quote::format_ident!("call_{}", index);
    let returns = crate::expand::return_bound(&func.item.sig);
    let asyncness = func.item.sig.asyncness;
    let await_ = func.is_async().then(|| quote!(.await));
    let tokens = quote_spanned! {span=>
        #[cfg(test)]
        #[doc(hidden)]
        #[allow(non_snake_case)]
        #asyncness fn #wrapper() -> #returns {
            ::probtest::__private::repro::run(
                #literal, ::core::module_path!(), #path, #data_name::#call,
            )#await_
        }
    };
    ItemRepro {
        item: Some((*index, *run)),
        tokens,
    }
}
