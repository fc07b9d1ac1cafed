//! The annotated function, split into what expansion needs: arguments, test attribute and the
//! attributes that carry over to generated items.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, FnArg, Ident, ItemFn, Pat, Type};

/// The function under `#[probability]`.
pub(crate) struct BenchFn {
    /// The user's function, with the test attribute taken out.
    pub(crate) item: ItemFn,
    /// A following test attribute (`#[tokio::test]`, `#[test]`, ...), put on every generated item.
    pub(crate) test_attr: Option<Attribute>,
    pub(crate) args: Vec<Arg>,
    /// The `self` parameter, which a bench function cannot have.
    pub(crate) receiver: Option<TokenStream>,
    /// A `#[probtest::repro]` attribute below `#[probability]`, taken out.
    pub(crate) repro: Option<Attribute>,
}

/// One argument of the function.
pub(crate) struct Arg {
    /// The name params refer to it by: the identifier of an identifier pattern (even `ref x`),
    /// else `None`.
    pub(crate) ident: Option<Ident>,
    /// Whether the pattern is a plain identifier, the only kind the generated calls can bind.
    pub(crate) plain: bool,
    /// The pattern's tokens, for errors that cover all of it.
    pub(crate) pattern: TokenStream,
    /// The argument's type, which a row's field is read into.
    pub(crate) ty: Type,
}

/// Whether `attr` is a test attribute: any path whose last segment is `test`.
pub(crate) fn is_test_attr(attr: &Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "test")
}

/// Attributes that also belong on every generated test item.
pub(crate) fn is_item_attr(attr: &Attribute) -> bool {
    ["ignore", "cfg", "allow", "warn", "deny", "expect", "forbid"]
        .iter()
        .any(|name| attr.path().is_ident(name))
}

impl BenchFn {
    pub(crate) fn from_item(mut item: ItemFn) -> Self {
        let position = item.attrs.iter().position(is_test_attr);
        let test_attr = position.map(|index| item.attrs.remove(index));
        let repro = item
            .attrs
            .iter()
            .position(crate::repro::is_repro_attr)
            .map(|index| item.attrs.remove(index));
        let mut receiver = None;
        let args = item
            .sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Receiver(r) => {
                    receiver = Some(r.to_token_stream());
                    None
                }
                FnArg::Typed(typed) => Some(match &*typed.pat {
                    Pat::Ident(pat) => Arg {
                        ident: Some(pat.ident.clone()),
                        plain: pat.by_ref.is_none() && pat.subpat.is_none(),
                        pattern: pat.to_token_stream(),
                        ty: (*typed.ty).clone(),
                    },
                    other => Arg {
                        ident: None,
                        plain: false,
                        pattern: other.to_token_stream(),
                        ty: (*typed.ty).clone(),
                    },
                }),
            })
            .collect();
        BenchFn {
            item,
            test_attr,
            args,
            receiver,
            repro,
        }
    }

    /// `#[cfg]` and lint attributes, which belong on every generated item (`#[ignore]` goes on
    /// test items only).
    pub(crate) fn carried_attrs(&self) -> Vec<&Attribute> {
        self.attrs_where(|attr| is_item_attr(attr) && !attr.path().is_ident("ignore"))
    }

    /// The function's attributes that `keep` selects.
    pub(crate) fn attrs_where(&self, keep: impl Fn(&Attribute) -> bool) -> Vec<&Attribute> {
        self.item.attrs.iter().filter(|attr| keep(attr)).collect()
    }

    pub(crate) fn name(&self) -> &Ident {
        &self.item.sig.ident
    }

    pub(crate) fn is_async(&self) -> bool {
        self.item.sig.asyncness.is_some()
    }

    /// The short name of the summary rows: the function name without a leading `bench_`.
    pub(crate) fn short_name(&self) -> String {
        let name = self.name().to_string();
        let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
        match name.strip_prefix("bench_") {
            Some(rest) if !rest.is_empty() => rest.to_string(),
            _ => name,
        }
    }
}
