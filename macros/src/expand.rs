//! Code generation: the user's body once, one data module with a static per case, and one tiny
//! test item per run.
//!
//! Layout for `fn bench_x` with cases `a`, `b` and 3 runs:
//!
//! ```text
//! fn __probtest_body_bench_x(..) { <body> }      // the user's body, emitted once
//! mod __probtest_bench_x { BENCH, CASES, CASE_0, call_0, CASE_1, call_1 }
//! mod bench_x { mod a { fn run1() fn run2() fn run3() }  mod b { ... } }
//! ```
//!
//! The body keeps its original place so every path in it resolves as the user wrote it; the
//! case arguments are evaluated in the data module, which glob-imports the user's module.
//! Each run item is one call into the runtime. `BENCH` lists its cases and names the items'
//! layout, so that the runtime can tell from a test's name alone which case and run it is
//! (under nextest, before `main`, when no item has run yet).

use probtest_settings::repro::Repro;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, LitStr};

use crate::ast::BenchFn;
use crate::cases::CaseArg;
use crate::ids::run_name;
use crate::settings::{tracked_env, Settings};
use crate::valid::{GateRule, Model};

/// The assertion macros that are routed through probtest so that a failed assertion is told
/// apart from any other panic.
const ASSERTIONS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
];

pub(crate) fn expand(
    func: &BenchFn,
    model: &Model,
    settings: &Settings,
    repro: Option<&(LitStr, Repro)>,
) -> TokenStream {
    let name = func.name();
    let span = name.span();
    let body_name = format_ident!("__probtest_body_{}", name, span = span);
    let data_name = format_ident!("__probtest_{}", name, span = span);
    let layout = Layout::of(model);
    let repro = repro.map(|blob| crate::repro::for_item(func, model, layout, blob, &data_name));
    let repro_item = repro.as_ref().and_then(|repro| repro.item);
    let carried = func.carried_attrs();
    let docs = func.attrs_where(|a| a.path().is_ident("doc"));
    let ignore = func.attrs_where(|a| a.path().is_ident("ignore"));

    let body = body_fn(func, &body_name);
    let data = data_module(func, model, settings, &body_name, &data_name);
    let test_attr = match &func.test_attr {
        Some(attr) => quote!(#attr),
        None => quote!(#[test]),
    };
    let item = |depth: usize, case: usize, run: u32| -> (TokenStream, TokenStream) {
        let prefix = (0..depth).map(|_| quote!(super::));
        let prefix = quote!(#(#prefix)* #data_name);
        let case_static = format_ident!("CASE_{}", case);
        let call = format_ident!("call_{}", case);
        if repro_item == Some((case, run)) {
            // The item the repro blob names runs again under its perturbation.
            let supers = (0..depth).map(|_| quote!(super::));
            let wrapper = format_ident!("{}{}", crate::repro::WRAPPER, name, span = span);
            return (
                quote!(&#prefix::#case_static, #run),
                quote!(#(#supers)* #wrapper),
            );
        }
        (quote!(&#prefix::#case_static, #run), quote!(#prefix::#call))
    };
    let test_fn = |fn_name: &Ident, (run, call): (TokenStream, TokenStream)| {
        if !func.is_async() {
            return quote_spanned! {span=>
                #test_attr
                #(#ignore)*
                fn #fn_name() { ::probtest::__private::run(#run, #call) }
            };
        }
        // The test attribute's runtime goes on an inner function, which the item calls: with a
        // timeout, on a thread that a body that never yields can be left behind on. libtest
        // does not collect the inner function as a test of its own.
        quote_spanned! {span=>
            #[test]
            #(#ignore)*
            #[allow(unnameable_test_items)]
            fn #fn_name() {
                #test_attr
                async fn __probtest_item() {
                    ::probtest::__private::run_async(#run, #call()).await
                }
                ::probtest::__private::run_async_item(#run, __probtest_item)
            }
        }
    };

    // A test item per gated case that passes or fails with the gate's verdict, named to sort
    // after the case's runs (libtest and nextest start items in name order).
    let verdicts = has_verdict_items(model, settings);
    let verdict_fn = |fn_name: &Ident, depth: usize, case: usize| -> TokenStream {
        if !verdicts {
            return quote!();
        }
        let prefix = (0..depth).map(|_| quote!(super::));
        let case_static = format_ident!("CASE_{}", case);
        quote_spanned! {span=>
            #[test]
            #(#ignore)*
            #[allow(non_snake_case)]
            fn #fn_name() { ::probtest::__private::verdict(&#(#prefix)* #data_name::#case_static) }
        }
    };
    let runs = model.runs;
    // Each outer item carries the function's `cfg`, lints and docs: transposed items stand side
    // by side, and one left without the `cfg` would name a data module that is not there.
    let outer = quote!(#[cfg(test)] #(#carried)* #(#docs)*);
    let runs_of = |depth: usize, index: usize| -> Vec<TokenStream> {
        (1..=runs)
            .map(|run| {
                let fn_name = format_ident!("{}", run_name(run, runs, false), span = span);
                test_fn(&fn_name, item(depth, index, run))
            })
            .collect()
    };
    // A margin item per function whose comparison has a margin: its name sorts after every
    // item of the function (`bench_x__margins` after `bench_x::...`; in run-major order, after
    // the runs).
    let margin_item = has_margin_item(model, settings).then(|| {
        let fn_name = if layout == Layout::Transposed {
            format_ident!("verdict__{}__margins", name, span = span)
        } else {
            format_ident!("{}__margins", name, span = span)
        };
        quote_spanned! {span=>
            #[test]
            #(#ignore)*
            #[allow(non_snake_case)]
            fn #fn_name() { ::probtest::__private::margin_verdict(&#data_name::BENCH) }
        }
    });
    let tests: Vec<TokenStream> = match layout {
        Layout::Single => vec![
            test_fn(name, item(0, 0, 1)),
            verdict_fn(&format_ident!("{}__verdict", name, span = span), 0, 0),
        ],
        Layout::Runs => {
            let runs = runs_of(1, 0);
            let verdict = verdict_fn(&format_ident!("verdict", span = span), 1, 0);
            vec![quote_spanned!(span=> mod #name { #(#runs)* #verdict })]
        }
        Layout::Cases => {
            let cases = model.cases.iter().enumerate().map(|(index, case)| {
                let test = test_fn(
                    &format_ident!("{}", case.item, span = span),
                    item(1, index, 1),
                );
                let verdict = verdict_fn(
                    &format_ident!("{}__verdict", case.item, span = span),
                    1,
                    index,
                );
                quote!(#test #verdict)
            });
            vec![quote_spanned!(span=> mod #name { #(#cases)* })]
        }
        Layout::CaseRuns => {
            let cases = model.cases.iter().enumerate().map(|(index, case)| {
                let case_mod = format_ident!("{}", case.item, span = span);
                let runs = runs_of(2, index);
                let verdict = verdict_fn(&format_ident!("verdict", span = span), 2, index);
                quote_spanned!(span=> mod #case_mod { #(#runs)* #verdict })
            });
            vec![quote_spanned!(span=> mod #name { #(#cases)* })]
        }
        Layout::Transposed => {
            // Run-major order: libtest sorts by name, so the run number leads the item name.
            let mut items = Vec::new();
            for run in 1..=runs {
                let run_segment = run_name(run, runs, true);
                for (index, case) in model.cases.iter().enumerate() {
                    let fn_name = if model.parametrized() {
                        format_ident!("{}__{}__{}", run_segment, name, case.item, span = span)
                    } else {
                        format_ident!("{}__{}", run_segment, name, span = span)
                    };
                    let test = test_fn(&fn_name, item(0, index, run));
                    // The double underscores that set the run apart are not snake case.
                    items.push(quote!(#[allow(non_snake_case)] #test));
                }
            }
            for (index, case) in model.cases.iter().enumerate() {
                let fn_name = if model.parametrized() {
                    format_ident!("verdict__{}__{}", name, case.item, span = span)
                } else {
                    format_ident!("verdict__{}", name, span = span)
                };
                items.push(verdict_fn(&fn_name, 0, index));
            }
            items
        }
    };
    // Without verdict items, their slots are empty: no outer attributes for nothing.
    let tests = tests
        .into_iter()
        .chain(margin_item)
        .filter(|test| !test.is_empty());
    let repro = repro.map(|repro| repro.tokens);
    quote! {
        #body
        #data
        #repro
        #(#outer #tests)*
    }
}

/// Whether the function's gated cases get a verdict item: `PROB_GATE_ITEMS` (else the config's
/// `gate_items`) is on, and the attribute or the config sets a gate. A gate set only by
/// `PROB_MIN_RATE` at run time is judged by each case's last run instead.
fn has_verdict_items(model: &Model, settings: &Settings) -> bool {
    settings.gate_items
        && (model.gate.is_some()
            || model.run_options.max_latency.is_some()
            || settings
                .config
                .entries
                .iter()
                .any(|(key, _)| key == "min_rate"))
}

/// Whether the function gets a margin item: `PROB_GATE_ITEMS` is on and its comparison has a
/// `margin`. A margin set only by `PROB_MARGIN` against a baseline is judged by the last run.
fn has_margin_item(model: &Model, settings: &Settings) -> bool {
    settings.gate_items
        && model
            .compare
            .as_ref()
            .is_some_and(|compare| compare.margin.is_some())
}

/// How a function's test items are named and nested. The runtime's `Layout` gets the same tag,
/// to read a test's name back into its case and run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// One case of one run: the function's own name.
    Single,
    /// One case, several runs: `bench_x::run2`.
    Runs,
    /// Parametrized cases of one run: `bench_x::refund`.
    Cases,
    /// Parametrized cases of several runs: `bench_x::refund::run2`.
    CaseRuns,
    /// Run-major order: `run0002__bench_x__refund` (or `run0002__bench_x`) beside the function.
    Transposed,
}

impl Layout {
    fn of(model: &Model) -> Layout {
        match (model.transpose, model.parametrized(), model.runs > 1) {
            (true, _, true) => Layout::Transposed,
            (_, false, false) => Layout::Single,
            (_, false, true) => Layout::Runs,
            (_, true, false) => Layout::Cases,
            (_, true, true) => Layout::CaseRuns,
        }
    }

    /// The path of the item of `case` (its item segment) and `run` from the function's
    /// module, as the expansion names it.
    pub(crate) fn item_path(self, name: &str, case: &str, run: u32, runs: u32) -> String {
        match self {
            Layout::Single => name.to_string(),
            Layout::Runs => format!("{name}::{}", run_name(run, runs, false)),
            Layout::Cases => format!("{name}::{case}"),
            Layout::CaseRuns => format!("{name}::{case}::{}", run_name(run, runs, false)),
            Layout::Transposed if case.is_empty() => {
                format!("{}__{name}", run_name(run, runs, true))
            }
            Layout::Transposed => format!("{}__{name}__{case}", run_name(run, runs, true)),
        }
    }

    /// The runtime's value of the same name.
    fn runtime_value(self) -> TokenStream {
        let variant = format_ident!("{}", format!("{self:?}"));
        quote!(::probtest::__private::Layout::#variant)
    }
}

/// The user's function under a hidden name, with the assertion macros routed through probtest.
fn body_fn(func: &BenchFn, body_name: &Ident) -> TokenStream {
    let mut item = func.item.clone();
    item.sig.ident = body_name.clone();
    item.attrs.retain(|attr| !attr.path().is_ident("ignore"));
    let block = &item.block;
    let assertions = ASSERTIONS
        .iter()
        .map(|name| Ident::new(name, Span::call_site()));
    let new_block: syn::Block = syn::parse_quote! {{
        #[allow(unused_imports)]
        use ::probtest::__private::assertions::{#(#assertions),*};
        #block
    }};
    *item.block = new_block;
    quote! {
        #[cfg(test)]
        #[doc(hidden)]
        #[allow(dead_code, non_snake_case)]
        #item
    }
}

fn data_module(
    func: &BenchFn,
    model: &Model,
    settings: &Settings,
    body_name: &Ident,
    data_name: &Ident,
) -> TokenStream {
    let name = func.name();
    let function = name.to_string();
    let short = func.short_name();
    let runs = model.runs;
    let case_count = model.cases.len();
    let layout = Layout::of(model).runtime_value();
    let parametrized = model.parametrized();
    let json = match &settings.config.json {
        Some(path) => quote!(::core::option::Option::Some(#path)),
        None => quote!(::core::option::Option::None),
    };
    let root = match &settings.workspace_root {
        Some(root) => {
            let root = root.to_string_lossy();
            quote!(::core::option::Option::Some(#root))
        }
        None => quote!(::core::option::Option::None),
    };
    let delay = match settings.config.delay {
        Some(delay) => quote!(::core::option::Option::Some(#delay)),
        None => quote!(::core::option::Option::None),
    };
    let tracked_env = tracked_env();
    // The data file too: editing it rebuilds the tests, as `include_str!` would.
    let tracked_files = settings
        .files
        .iter()
        .chain(model.dataset.iter().map(|dataset| &dataset.absolute))
        .map(|path| path.to_string_lossy().into_owned());
    let carried = func.carried_attrs();
    let await_ = func.is_async().then(|| quote!(.await));
    let returns = return_bound(&func.item.sig);
    let asyncness = func.item.sig.asyncness;
    let case_statics: Vec<Ident> = (0..case_count)
        .map(|index| format_ident!("CASE_{}", index))
        .collect();
    let cases = model.cases.iter().enumerate().map(|(index, case)| {
        let case_static = &case_statics[index];
        let call = format_ident!("call_{}", index);
        let id = &case.id;
        let row = if parametrized {
            format!("{short}::{id}")
        } else {
            short.clone()
        };
        let params = case
            .params
            .iter()
            .map(|(name, text)| quote!((#name, #text)));
        let parts = case
            .parts
            .iter()
            .map(|(names, id, index)| quote!((&[#(#names),*], #id, #index)));
        // The item's segment that names the case, which the runtime reads back.
        let item = if parametrized { case.item.as_str() } else { "" };
        let (params, call) = match &model.dataset {
            Some(_) => crate::dataset::tokens::case(func, case, index, &returns),
            None => {
                let args = case.args.iter().map(|arg| match arg {
                    CaseArg::Expr(expr) => quote!(#expr),
                    // Without a data file no argument is read from a row.
                    CaseArg::Row => quote!(::core::unreachable!()),
                });
                let call = quote! {
                    pub(super) #asyncness fn #call() -> #returns {
                        super::#body_name(#(#args),*)#await_
                    }
                };
                (quote!(&[#(#params),*]), call)
            }
        };
        let index = index as u32;
        quote! {
            pub(super) static #case_static: ::probtest::__private::Case =
                ::probtest::__private::Case::new(&BENCH, #index, #id, #row, #item, #params)
                    .with_parts(&[#(#parts),*]);
            #call
        }
    });
    let rows = model
        .dataset
        .as_ref()
        .map(|dataset| crate::dataset::tokens::shared(func, dataset, body_name));
    let span = name.span();
    let line = quote_spanned!(span=> ::core::line!());
    let gate = match &model.gate {
        Some(gate) => {
            let some = |value: Option<TokenStream>| match value {
                Some(value) => quote!(::core::option::Option::Some(#value)),
                None => quote!(::core::option::Option::None),
            };
            let rule = match gate.rule {
                GateRule::MinRate(bar) => quote!(::probtest::__private::Rule::MinRate(#bar)),
                GateRule::MinPasses(bar) => quote!(::probtest::__private::Rule::MinPasses(#bar)),
            };
            let method = some(gate.method.map(|method| {
                let variant = format_ident!(
                    "{}",
                    match method {
                        probtest_settings::Method::Exact => "Exact",
                        probtest_settings::Method::Wilson => "Wilson",
                        probtest_settings::Method::Bayes => "Bayes",
                    }
                );
                quote!(::probtest::__private::Method::#variant)
            }));
            let level = some(gate.level.map(|level| quote!(#level)));
            let prior = some(
                gate.prior
                    .map(|(a, b)| quote!(::probtest::__private::Prior { a: #a, b: #b })),
            );
            quote!(::core::option::Option::Some(::probtest::__private::GateSpec {
                rule: #rule, method: #method, level: #level, prior: #prior,
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    let compare = match &model.compare {
        Some(compare) => {
            let axis = &compare.axis;
            let baseline = match &compare.baseline {
                Some(baseline) => quote!(::core::option::Option::Some(#baseline)),
                None => quote!(::core::option::Option::None),
            };
            let margin = match compare.margin {
                Some(margin) => quote!(::core::option::Option::Some(#margin)),
                None => quote!(::core::option::Option::None),
            };
            let equivalence = compare.equivalence;
            quote!(.with_compare(#axis, #baseline, #margin, #equivalence))
        }
        None => quote!(),
    };
    let run_options = crate::run_options::tokens(&model.run_options);
    let verdict_item = has_verdict_items(model, settings).then(|| quote!(.with_verdict_item()));
    let margin_item = has_margin_item(model, settings).then(|| quote!(.with_margin_item()));
    let entries = settings
        .config
        .entries
        .iter()
        .map(|(key, value)| quote!((#key, #value)));
    quote! {
        #[cfg(test)]
        #[doc(hidden)]
        #(#carried)*
        #[allow(unused_imports, non_snake_case, clippy::all)]
        mod #data_name {
            use super::*;
            // Named here so that cargo rebuilds when a setting that shapes the items changes.
            const _: () = {
                #(let _ = ::core::option_env!(#tracked_env);)*
                #(let _ = ::core::include_bytes!(#tracked_files);)*
            };
            pub(super) static BENCH: ::probtest::__private::Bench = ::probtest::__private::Bench::new(
                ::core::env!("CARGO_PKG_NAME"), #function, ::core::module_path!(), ::core::file!(), #line, #runs,
                &CASES, #layout,
                ::probtest::__private::Config::new(#json, #delay, #root, &[#(#entries),*]),
                #gate,
            )#compare #run_options #verdict_item #margin_item;
            static CASES: [&::probtest::__private::Case; #case_count] = [#(&#case_statics),*];
            #[::probtest::__private::linkme::distributed_slice(::probtest::__private::BENCHES)]
            #[linkme(crate = ::probtest::__private::linkme)]
            static LISTED: &::probtest::__private::Bench = &BENCH;
            #rows
            #(#cases)*
        }
    }
}

/// `impl BenchReturn`, spanned on the user's return type so that an unsupported one is
/// reported there.
pub(crate) fn return_bound(sig: &syn::Signature) -> TokenStream {
    match &sig.output {
        syn::ReturnType::Type(_, ty) => {
            quote_spanned!(syn::spanned::Spanned::span(&**ty)=> impl ::probtest::__private::BenchReturn)
        }
        syn::ReturnType::Default => quote!(impl ::probtest::__private::BenchReturn),
    }
}

/// `#[probtest::setup]` / `#[probtest::teardown]`: the function as written plus, in test
/// builds, its registration for the module it is defined in.
pub(crate) fn expand_hook(item: &syn::ItemFn, kind: &str) -> TokenStream {
    let name = &item.sig.ident;
    let text = name.to_string();
    let constructor = format_ident!("{}", kind);
    let returns = return_bound(&item.sig);
    quote! {
        #[allow(dead_code)]
        #item
        #[cfg(test)]
        const _: () = {
            fn call() -> #returns {
                #name()
            }
            ::probtest::__private::ctor::declarative::ctor! {
                #[ctor(unsafe, anonymous)]
                fn register() {
                    ::probtest::__private::register_hook(::probtest::__private::Hook::#constructor(
                        ::core::module_path!(),
                        #text,
                        || ::probtest::__private::BenchReturn::into_result(call()),
                    ));
                }
            }
        };
    }
}
