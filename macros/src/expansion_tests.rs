//! Snapshots of what the attribute expands to, pretty-printed, so that a change to the
//! generated code shows up in review.

use quote::quote;

use crate::settings::Settings;

fn expand(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
    settings: &Settings,
) -> String {
    let attr = syn::parse2(args).expect("attribute parses");
    let function = syn::parse2(item).expect("function parses");
    let tokens = crate::expand_function(attr, function, settings);
    let file = syn::parse2::<syn::File>(tokens).expect("expansion is valid Rust");
    // A data file is included by its absolute path, which differs between checkouts.
    prettyplease::unparse(&file).replace(env!("CARGO_MANIFEST_DIR"), "$CARGO_MANIFEST_DIR")
}

#[test]
fn parametrized_with_runs() {
    let text = expand(
        quote!(runs = 3, params(
            text = ["refund please", "where is my order"],
            style = [Style::Terse, Style::Verbose => "chatty"],
        )),
        quote! {
            /// Triage sends tickets to the right queue.
            fn bench_triage(text: &str, style: Style) {
                assert_eq!(classify(text, style), "refund");
            }
        },
        &Settings::default(),
    );
    insta::assert_snapshot!(text);
}

#[test]
fn one_run_without_params_is_a_single_item() {
    let text = expand(
        quote!(),
        quote! {
            #[ignore = "slow"]
            fn bench_once() -> Result<(), String> { Ok(()) }
        },
        &Settings::default(),
    );
    insta::assert_snapshot!(text);
}

#[test]
fn async_with_test_attribute_and_zipped_group() {
    let text = expand(
        quote!(runs = 2, params((prompt, expected) = [("2+2", 4), ("3*3", 9) => "square"])),
        quote! {
            #[tokio::test(flavor = "multi_thread")]
            async fn bench_math(prompt: &str, expected: i64) {
                assert_eq!(ask(prompt).await, expected);
            }
        },
        &Settings::default(),
    );
    insta::assert_snapshot!(text);
}

/// The settings of `PROB_TRANSPOSE=1`.
fn transposed() -> Settings {
    Settings {
        transpose: true,
        ..Settings::default()
    }
}

#[test]
fn transposed_items_lead_with_the_run() {
    let settings = transposed();
    let text = expand(
        quote!(runs = 2, params(n = [1, 2])),
        quote!(
            fn bench_n(n: u32) {
                assert!(n > 0);
            }
        ),
        &settings,
    );
    insta::assert_snapshot!(text);
}

#[test]
fn every_transposed_item_keeps_the_functions_cfg() {
    let settings = transposed();
    let text = expand(
        quote!(runs = 2, params(n = [1, 2])),
        quote!(
            #[cfg(feature = "slow")]
            fn bench_n(n: u32) {}
        ),
        &settings,
    );
    // The body, the data module, and each of the 4 items.
    assert_eq!(
        text.matches("#[cfg(feature = \"slow\")]").count(),
        6,
        "{text}"
    );
}

#[test]
fn a_gate_is_a_static_spec_of_the_bench() {
    let text = expand(
        quote!(
            runs = 20,
            min_rate = 0.8,
            confidence = 0.9,
            method = "wilson",
            prior = [0.5, 0.5]
        ),
        quote!(
            fn bench_gated() {}
        ),
        &Settings::default(),
    );
    assert!(
        text.contains("rule: ::probtest::__private::Rule::MinRate(0.8f64)"),
        "{text}"
    );
    assert!(
        text.contains(
            "method: ::core::option::Option::Some(::probtest::__private::Method::Wilson)"
        ),
        "{text}"
    );
    assert!(
        text.contains("level: ::core::option::Option::Some(0.9f64)"),
        "{text}"
    );
    assert!(
        text.contains("a: 0.5f64,") && text.contains("b: 0.5f64,"),
        "{text}"
    );
}

#[test]
fn config_statistics_keys_travel_as_text() {
    let mut settings = Settings::default();
    settings.config.entries = vec![
        ("confidence".into(), "0.9".into()),
        ("metrics".into(), "pass^3,pass@5".into()),
    ];
    let text = expand(
        quote!(),
        quote!(
            fn bench_x() {}
        ),
        &settings,
    );
    assert!(
        text.contains(r#"&[("confidence", "0.9"), ("metrics", "pass^3,pass@5")]"#),
        "{text}"
    );
}

#[test]
fn environment_runs_override_the_attribute() {
    let settings = Settings {
        env_runs: Some(2),
        ..Settings::default()
    };
    let text = expand(
        quote!(runs = 50),
        quote!(
            fn bench_x() {}
        ),
        &settings,
    );
    assert!(
        text.contains("fn run1()") && text.contains("fn run2()"),
        "{text}"
    );
    assert!(!text.contains("fn run3()"), "{text}");
}

#[test]
fn a_gated_case_gets_a_verdict_item_after_its_runs() {
    let settings = Settings {
        gate_items: true,
        ..Settings::default()
    };
    let text = expand(
        quote!(runs = 2, min_rate = 0.8, params(text = ["refund", "order"])),
        quote! {
            fn bench_triage(text: &str) {
                assert_eq!(classify(text), "refund");
            }
        },
        &settings,
    );
    insta::assert_snapshot!(text);
}

#[test]
fn without_a_gate_or_with_gate_items_off_there_is_no_verdict_item() {
    let on = Settings {
        gate_items: true,
        ..Settings::default()
    };
    let ungated = expand(
        quote!(runs = 2),
        quote!(
            fn bench_x() {}
        ),
        &on,
    );
    assert!(!ungated.contains("verdict"), "{ungated}");
    let off = expand(
        quote!(runs = 2, min_rate = 0.5),
        quote!(
            fn bench_x() {}
        ),
        &Settings::default(),
    );
    assert!(!off.contains("verdict"), "{off}");
    // A single run of a single case: the verdict item sits beside the function's item.
    let single = expand(
        quote!(min_passes = 1),
        quote!(
            fn bench_x() {}
        ),
        &on,
    );
    assert!(single.contains("fn bench_x__verdict()"), "{single}");
}

#[test]
fn a_latency_gate_is_part_of_the_bench_and_gets_a_verdict_item() {
    let on = Settings {
        gate_items: true,
        ..Settings::default()
    };
    let gated = expand(
        quote!(runs = 80, latency_quantile = 0.9, max_latency = "1.5s"),
        quote!(
            fn bench_x() {}
        ),
        &on,
    );
    assert!(
        gated.contains(
            ".with_latency(\n            ::core::option::Option::Some(0.9f64),\n            \
             ::core::option::Option::Some(1.5f64),\n            \
             ::core::option::Option::None,\n        )\n        .with_verdict_item();"
        ),
        "{gated}"
    );
    assert!(gated.contains("verdict"), "{gated}");
    // A quantile alone is reported, not gated: no verdict item.
    let reported = expand(
        quote!(runs = 80, latency_quantile = 0.99),
        quote!(
            fn bench_x() {}
        ),
        &on,
    );
    assert!(reported.contains(".with_latency("), "{reported}");
    assert!(!reported.contains("verdict"), "{reported}");
    // A latency gate alone takes the attribute's `confidence` as its own level.
    let confident = expand(
        quote!(runs = 80, max_latency = "2s", confidence = 0.8),
        quote!(
            fn bench_x() {}
        ),
        &on,
    );
    assert!(
        confident.contains("::core::option::Option::Some(0.8f64),\n        )"),
        "{confident}"
    );
}

#[test]
fn a_margin_gets_one_item_after_the_functions_items() {
    let on = Settings {
        gate_items: true,
        ..Settings::default()
    };
    let args = quote!(
        runs = 2,
        compare = "model",
        margin = 0.05,
        params(model = ["a", "b"])
    );
    let text = expand(
        args.clone(),
        quote!(
            fn bench_x(model: &str) {}
        ),
        &on,
    );
    assert!(text.contains("fn bench_x__margins()"), "{text}");
    assert!(
        text.contains("margin_verdict(&__probtest_bench_x::BENCH)"),
        "{text}"
    );
    assert!(text.contains(".with_margin_item()"), "{text}");
    let off = expand(
        args,
        quote!(
            fn bench_x(model: &str) {}
        ),
        &Settings::default(),
    );
    assert!(!off.contains("margins"), "{off}");
    let without = expand(
        quote!(runs = 2, compare = "model", params(model = ["a", "b"])),
        quote!(
            fn bench_x(model: &str) {}
        ),
        &on,
    );
    assert!(!without.contains("margin_verdict"), "{without}");
}

#[test]
fn rows_of_a_data_file_bind_fields_to_arguments() {
    let text = expand(
        quote!(
            runs = 2,
            cases((text, expected) = "testdata/tickets.jsonl", id = "name")
        ),
        quote! {
            fn bench_triage(text: &str, expected: Label) {
                assert_eq!(classify(text), expected);
            }
        },
        &Settings::default(),
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_whole_csv_row_is_one_group_of_the_product() {
    let text = expand(
        quote!(
            params(style = [Style::Terse, Style::Verbose]),
            cases(ticket = "testdata/tickets.csv")
        ),
        quote! {
            #[tokio::test]
            async fn bench_triage(style: Style, ticket: Ticket) {
                assert_eq!(classify(&ticket.text, style).await, ticket.expected);
            }
        },
        &Settings::default(),
    );
    insta::assert_snapshot!(text);
}
