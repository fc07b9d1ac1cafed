//! What the expansion emits for `cases(...)`: the file's name for messages, one function that
//! reads a row's arguments and calls the body, and per case the row's texts and a one-line call.
//!
//! ```text
//! static SOURCE = Source::new("data/tickets.jsonl", false);
//! fn call_row(params, row, line, <params(...) arguments>) -> Result<(), RowError> { read each
//!     bound argument from params[i].1, or return the row's error; call the body }
//! static PARAMS_0 = [("ticket", "{\"name\":..}")];   // also the case's report params
//! fn call_0() { call_row(&PARAMS_0, 1, 1, <exprs>) }
//! ```
//!
//! Per row that is two statics and a call of one line; what deserializes is generated once.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use crate::ast::BenchFn;
use crate::cases::{Case, CaseArg};
use crate::dataset::Dataset;

/// The statics and the reading function of the data module.
pub(crate) fn shared(func: &BenchFn, dataset: &Dataset, body_name: &Ident) -> TokenStream {
    // Spanned on the user's return type, so that an unsupported one is reported there.
    let into_result = match &func.item.sig.output {
        syn::ReturnType::Type(_, ty) => {
            quote_spanned!(ty.span()=> ::probtest::__private::BenchReturn::into_result)
        }
        syn::ReturnType::Default => quote!(::probtest::__private::BenchReturn::into_result),
    };
    let written = &dataset.written;
    let csv = dataset.csv;
    let asyncness = func.item.sig.asyncness;
    let await_ = func.is_async().then(|| quote!(.await));
    let mut inputs = Vec::new();
    let mut reads = Vec::new();
    let mut passed = Vec::new();
    for (index, arg) in func.args.iter().enumerate() {
        let Some(name) = &arg.ident else { continue };
        let value = format_ident!("__probtest_{}", name);
        let ty = &arg.ty;
        match dataset.names.iter().position(|bound| name == bound) {
            None => {
                inputs.push(quote!(#value: #ty));
                passed.push(quote!(#value));
            }
            Some(_) => {
                let field = if dataset.zipped {
                    let field = name.to_string();
                    quote!(::core::option::Option::Some(#field))
                } else {
                    quote!(::core::option::Option::None)
                };
                let (owned, pass) = owned(ty, &value);
                let mutability =
                    matches!(ty, Type::Reference(r) if r.mutability.is_some()).then(|| quote!(mut));
                reads.push(quote! {
                    let #mutability #value: #owned = ::probtest::__private::dataset::arg(
                        &SOURCE, row, line, #field, params[#index].1,
                    )?;
                });
                passed.push(pass);
            }
        }
    }
    quote! {
        static SOURCE: ::probtest::__private::dataset::Source =
            ::probtest::__private::dataset::Source::new(#written, #csv);
        #asyncness fn call_row(
            params: &'static [(&'static str, &'static str)],
            row: u32,
            line: u32,
            #(#inputs),*
        ) -> ::core::result::Result<(), ::probtest::__private::dataset::RowError> {
            #(#reads)*
            ::probtest::__private::dataset::ran(#into_result(super::#body_name(#(#passed),*)#await_))
        }
    }
}

/// The type a row's value is read into, and how it is passed: `&str` from a `String`, `&[T]`
/// from a `Vec<T>`, any other `&T` or `&mut T` from a `T`, like the values of `params(...)`.
fn owned(ty: &Type, value: &Ident) -> (TokenStream, TokenStream) {
    let Type::Reference(reference) = ty else {
        return (quote!(#ty), quote!(#value));
    };
    let pass = match reference.mutability {
        Some(_) => quote!(&mut #value),
        None => quote!(&#value),
    };
    let owned = match &*reference.elem {
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => {
            quote!(::std::string::String)
        }
        Type::Slice(slice) => {
            let elem = &slice.elem;
            quote!(::std::vec::Vec<#elem>)
        }
        elem => quote!(#elem),
    };
    (owned, pass)
}

/// The statics and call of case `index`: its params (what the report shows, and the texts its
/// row's arguments are read from) and a call into `call_row`.
pub(crate) fn case(
    func: &BenchFn,
    case: &Case,
    index: usize,
    returns: &TokenStream,
) -> (TokenStream, TokenStream) {
    let params_static = format_ident!("PARAMS_{}", index);
    let call = format_ident!("call_{}", index);
    let params = case
        .params
        .iter()
        .map(|(name, text)| quote!((#name, #text)));
    let count = case.params.len();
    let exprs = case.args.iter().filter_map(|arg| match arg {
        CaseArg::Expr(expr) => Some(expr),
        CaseArg::Row => None,
    });
    let (number, line) = case.row.map_or((0, 0), |row| (row.number, row.line));
    let asyncness = func.item.sig.asyncness;
    let await_ = func.is_async().then(|| quote!(.await));
    let statics = quote! {
        static #params_static: [(&str, &str); #count] = [#(#params),*];
    };
    let call = quote! {
        pub(super) #asyncness fn #call() -> #returns {
            call_row(&#params_static, #number, #line, #(#exprs),*)#await_
        }
    };
    (quote!(&#params_static), quote!(#statics #call))
}
