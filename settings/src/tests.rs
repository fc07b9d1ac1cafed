//! The table's own checks: unique names, parsers' messages, and the documentation's copies of
//! the table.

use super::*;

#[test]
fn variables_and_keys_are_unique_and_spelled_alike() {
    for (index, setting) in SETTINGS.iter().enumerate() {
        assert!(setting.variable().starts_with("PROB_"), "{setting:?}");
        assert!(
            !setting.docs().contains('|'),
            "{setting:?}: a `|` splits its row"
        );
        for other in &SETTINGS[index + 1..] {
            assert_ne!(setting.variable(), other.variable());
            assert!(
                setting.key().is_none() || setting.key() != other.key(),
                "{setting:?}"
            );
        }
    }
    assert_eq!(by_variable("PROB_METRIC").key(), Some("metrics"));
    assert_eq!(
        keys(Phase::Compile).collect::<Vec<_>>(),
        ["runs", "transpose", "gate_items"]
    );
}

#[test]
fn parsers_name_the_value_they_refuse() {
    assert_eq!(parse_switch(" On "), Ok(true));
    assert_eq!(
        parse_switch("loud"),
        Err("expected 1/0, true/false, yes/no or on/off, got `loud`".to_string())
    );
    assert_eq!(
        parse_runs("ten"),
        Err("expected a whole number of runs, got `ten`".to_string())
    );
    assert_eq!(parse_seconds("0.25"), Ok(0.25));
    assert!(parse_seconds("-1").is_err() && parse_seconds("inf").is_err());
    assert_eq!(
        parse_fraction("a rate", "90"),
        Err("expected a rate strictly between 0 and 1, got `90`; did you mean 0.9?".to_string())
    );
    assert_eq!(parse_choice("PASS", &[("fail", 0), ("pass", 1)]), Ok(1));
    assert_eq!(parse_undecided(" Pass "), Ok(Undecided::Pass));
    assert_eq!(
        parse_choice("maybe", &[("fail", 0), ("pass", 1)]),
        Err("expected fail or pass, got `maybe`".to_string())
    );
}

#[test]
fn run_counts_clamp_to_one_and_stop_at_the_cap() {
    for (text, runs) in [
        ("0", 1),
        ("-3", 1),
        ("-99999999999999999999", 1),
        (" 12 ", 12),
        ("+7", 7),
        ("100000", MAX_RUNS),
    ] {
        assert_eq!(parse_runs(text), Ok(runs), "{text}");
    }
    for text in ["100001", "1000000000", "4294967296", "99999999999999999999"] {
        assert_eq!(
            parse_runs(text),
            Err(format!(
                "`{text}` is more than 100000 runs per case, the most probtest generates"
            )),
            "{text}"
        );
    }
    for text in ["", "-", "1.5", "1e3", "1_000", "--1"] {
        assert_eq!(
            parse_runs(text),
            Err(format!("expected a whole number of runs, got `{text}`")),
            "{text:?}"
        );
    }
}

#[test]
fn durations_read_and_write_as_humantime_does() {
    use std::time::Duration;
    for (text, duration) in [
        ("30s", Duration::from_secs(30)),
        (" 1m30s ", Duration::from_secs(90)),
        ("1m 30s", Duration::from_secs(90)),
        ("500ms", Duration::from_millis(500)),
        ("1.5h", Duration::from_secs(5400)),
        ("2 minutes", Duration::from_secs(120)),
    ] {
        assert_eq!(parse_duration(text), Ok(duration), "{text}");
    }
    assert_eq!(
        parse_duration("30"),
        Err(
            "expected a duration such as `30s` or `1m30s` (a number needs its unit), got `30`"
                .to_string()
        )
    );
    for bad in ["", "soon", "3 fortnights", "0s", "1e20s", "-1s"] {
        assert!(parse_duration(bad).is_err(), "{bad}");
    }
    for (duration, text) in [
        (Duration::from_secs(30), "30s"),
        (Duration::from_secs(120), "2m"),
        (Duration::from_secs(90), "90s"),
        (Duration::from_millis(250), "250ms"),
        (Duration::from_millis(1500), "1500ms"),
    ] {
        assert_eq!(format_duration(duration), text);
        assert_eq!(parse_duration(text), Ok(duration));
    }
    assert_eq!(limit_variable("open-ai.v2"), "PROB_LIMIT_OPEN_AI_V2");
}

#[test]
fn a_limit_key_that_would_split_in_the_config_text_is_refused() {
    for key in ["openai", "open-ai.v2", "local_model", "a b"] {
        assert_eq!(check_limit_key(key), Ok(()), "{key}");
    }
    for (key, c) in [("zz,weird=1/2,yy", ','), ("a=b", '='), ("api/v1", '/')] {
        let refused = check_limit_key(key).expect_err(key);
        assert!(
            refused.starts_with(&format!("the limit key {key:?} holds `{c}`;")),
            "{refused}"
        );
    }
    assert_eq!(
        check_limit_key(" "),
        Err("a limit key cannot be blank, got \" \"".to_string())
    );
}

#[test]
fn run_numbers_are_as_wide_as_the_last_run() {
    for (runs, nested, leading) in [
        (0, 1, 4),
        (1, 1, 4),
        (9, 1, 4),
        (10, 2, 4),
        (100, 3, 4),
        (MAX_RUNS, 6, 6),
    ] {
        assert_eq!(run_digits(runs, false), nested, "{runs}");
        assert_eq!(run_digits(runs, true), leading, "{runs}");
    }
}

#[test]
fn a_variable_wins_over_the_config_and_a_refusal_names_its_source() {
    let env = |name: &str| (name == "PROB_CONFIDENCE").then(|| "0.9".to_string());
    let entries = [("confidence", "0.8"), ("seed", "7")];
    assert_eq!(CONFIDENCE.resolve(&env, &entries), Ok(Some(0.9)));
    assert_eq!(SEED.resolve(&env, &entries), Ok(Some(7)));
    assert_eq!(BOOTSTRAP.resolve(&env, &entries), Ok(None));
    // A blank variable is unset; a setting without a key never reads the config.
    let blank = |_: &str| Some("  ".to_string());
    assert_eq!(CONFIDENCE.resolve(&blank, &entries), Ok(Some(0.8)));
    assert_eq!(MARGIN.resolve(&blank, &[("margin", "0.1")]), Ok(None));
    assert_eq!(
        CONFIDENCE.resolve(&|_: &str| None, &[("confidence", "95")]),
        Err("config `confidence`: expected a number strictly between 0 and 1, got `95`; did you mean 0.95?".to_string())
    );
    assert_eq!(
        STOP.from_env(&|_: &str| Some("soon".to_string())),
        Err("PROB_STOP: expected off, curtail or sequential, got `soon`".to_string())
    );
}

#[test]
fn every_row_refuses_what_its_parser_refuses() {
    for (variable, text) in [
        ("PROB_RUNS", "ten"),
        ("PROB_METHOD", "guess"),
        ("PROB_PRIOR", "1"),
        ("PROB_METRIC", "pass^0"),
        ("PROB_ADJUST", "HOLM"),
        ("PROB_MARGIN", "5"),
        ("PROB_TIMEOUT", "30"),
        ("PROB_LIMIT_<KEY>", "0"),
        ("PROB_CACHE", "tape"),
    ] {
        assert!(
            by_variable(variable).check(text).is_err(),
            "{variable}={text}"
        );
    }
    assert_eq!(
        METHOD.resolve(&|_: &str| Some("Clopper-Pearson".into()), &[]),
        Ok(Some(Method::Exact))
    );
    assert_eq!(
        parse_margin("5"),
        Err("expected a margin at least 0 and below 1, got `5` (did you mean 0.05?)".to_string())
    );
    assert_eq!(
        parse_metrics("pass^3, ,pass@5"),
        Ok(vec![PassK::All(3), PassK::Any(5)])
    );
}

#[test]
fn a_row_of_names_reads_into_its_value() {
    let env = |name: &str| {
        Some(
            match name {
                "PROB_METHOD" => "Wilson",
                "PROB_UNDECIDED" => "pass",
                "PROB_ERRORS" => "EXCLUDE",
                "PROB_ADJUST" => "bh",
                "PROB_STOP" => " sequential ",
                _ => "replay",
            }
            .to_string(),
        )
    };
    assert_eq!(METHOD.resolve(&env, &[]), Ok(Some(Method::Wilson)));
    assert_eq!(UNDECIDED.resolve(&env, &[]), Ok(Some(Undecided::Pass)));
    assert_eq!(ERRORS.resolve(&env, &[]), Ok(Some(Errors::Exclude)));
    assert_eq!(ADJUST.resolve(&env, &[]), Ok(Some(Adjustment::Bh)));
    assert_eq!(STOP.resolve(&env, &[]), Ok(Some(Stop::Sequential)));
    assert_eq!(CACHE.resolve(&env, &[]), Ok(Some(Cache::Replay)));
    let none = |_: &str| None;
    assert_eq!(
        ERRORS.resolve(&none, &[("errors", "drop")]),
        Err("config `errors`: expected count or exclude, got `drop`".to_string())
    );
    assert_eq!(
        CACHE.resolve(&none, &[("cache", "tape")]),
        Err("config `cache`: expected record, replay or off, got `tape`".to_string())
    );
}

/// The documents that hold a copy of the table, from the workspace's root, and the text that
/// starts each of their lines there (the crate documentation's `//! `).
const DOCUMENTS: [(&str, &str); 2] = [("README.md", ""), ("runtime/src/lib.rs", "//! ")];

/// Set to rewrite the documents' copies from the table instead of failing on a difference.
const UPDATE: &str = "UPDATE_DOCS";

/// The README's and the crate documentation's tables are the one the table renders.
#[test]
fn the_documentation_holds_the_rendered_table() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let table = docs_table();
    let rendered: Vec<&str> = table.lines().collect();
    let mut drifted = Vec::new();
    for (document, prefix) in DOCUMENTS {
        let path = root.join(document);
        let Ok(text) = std::fs::read_to_string(&path) else {
            // Outside the workspace (a packaged crate): nothing to compare with.
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        let marker = |marker: &str| {
            lines
                .iter()
                .position(|line| line.trim_end() == format!("{prefix}{marker}"))
                .unwrap_or_else(|| panic!("{document}: no line `{prefix}{marker}`"))
        };
        let (start, end) = (marker(DOCS_START) + 1, marker(DOCS_END));
        assert!(
            start <= end,
            "{document}: `{DOCS_END}` before `{DOCS_START}`"
        );
        let copy: Vec<&str> = lines[start..end]
            .iter()
            .map(|line| line.strip_prefix(prefix).unwrap_or(line))
            .collect();
        if copy == rendered {
            continue;
        }
        if std::env::var_os(UPDATE).is_some() {
            let mut updated: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
            updated.extend(rendered.iter().map(|line| format!("{prefix}{line}")));
            updated.extend(lines[end..].iter().map(|l| l.to_string()));
            let ending = if text.ends_with('\n') { "\n" } else { "" };
            std::fs::write(&path, updated.join("\n") + ending)
                .unwrap_or_else(|error| panic!("{document}: cannot rewrite it: {error}"));
            continue;
        }
        drifted.push(format!(
            "{document}: the settings table between `{DOCS_START}` and `{DOCS_END}` is not the \
             one rendered from probtest-settings' table:\n{}",
            difference(&copy, &rendered, start + 1)
        ));
    }
    assert!(
        drifted.is_empty(),
        "{}\nRun `{UPDATE}=1 cargo test -p probtest-settings` to rewrite the copies.",
        drifted.join("\n")
    );
}

/// The lines that differ, as `-` (the document's, at its line number) and `+` (the rendered
/// table's), the first ten of them.
fn difference(copy: &[&str], rendered: &[&str], first_line: usize) -> String {
    let mut shown = Vec::new();
    for index in 0..copy.len().max(rendered.len()) {
        let (old, new) = (copy.get(index), rendered.get(index));
        if old == new {
            continue;
        }
        if shown.len() >= 10 {
            shown.push("  ...".to_string());
            break;
        }
        let line = first_line + index;
        if let Some(old) = old {
            shown.push(format!("  line {line}: - {old}"));
        }
        if let Some(new) = new {
            shown.push(format!("  line {line}: + {new}"));
        }
    }
    shown.join("\n")
}
