use serde::Deserialize;

use super::{arg, Source};

#[derive(Debug, Deserialize, PartialEq)]
enum Label {
    Refund,
    Shipping,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Ticket {
    name: String,
    text: String,
    expected: Label,
    priority: u32,
    note: Option<String>,
}

const JSONL: Source = Source::new("data/tickets.jsonl", false);
const CSV: Source = Source::new("data/tickets.csv", true);

fn message<T: std::fmt::Debug>(result: Result<T, super::RowError>) -> String {
    format!("{:?}", result.expect_err("does not fit"))
}

#[test]
fn a_json_line_reads_into_a_struct() {
    let line = r#"{"name":"a","text":"refund me","expected":"Refund","priority":2}"#;
    let ticket: Ticket = arg(&JSONL, 1, 1, None, line).expect("fits");
    assert_eq!(
        ticket,
        Ticket {
            name: "a".into(),
            text: "refund me".into(),
            expected: Label::Refund,
            priority: 2,
            note: None,
        }
    );
}

#[test]
fn a_csv_row_reads_numbers_enums_and_empty_options_from_text() {
    let row = r#"{"name":"b","text":"where is it","expected":"Shipping","priority":"7","note":""}"#;
    let ticket: Ticket = arg(&CSV, 2, 3, None, row).expect("fits");
    assert_eq!(ticket.expected, Label::Shipping);
    assert_eq!(ticket.priority, 7);
    assert_eq!(ticket.note, None);
    // A cell that holds a number is still a string to a `String`.
    let text: String = arg(&CSV, 2, 3, Some("text"), "\"42\"").expect("fits");
    assert_eq!(text, "42");
    let list: Vec<u8> = arg(&CSV, 2, 3, Some("bytes"), "\"[1, 2]\"").expect("fits");
    assert_eq!(list, [1, 2]);
}

#[test]
fn a_row_that_does_not_fit_names_the_file_row_line_and_field() {
    let line = r#"{"name":"a","text":"t","expected":"Refnd","priority":2}"#;
    let text = message(arg::<Ticket>(&JSONL, 4, 5, None, line));
    assert!(
        text.starts_with("row 4 of `data/tickets.jsonl` (line 5) does not fit the arguments: field `expected`: unknown variant `Refnd`"),
        "{text}"
    );
    let row = r#"{"name":"b","text":"t","expected":"Refund","priority":"high","note":""}"#;
    let text = message(arg::<Ticket>(&CSV, 2, 3, None, row));
    assert_eq!(
        text,
        "row 2 of `data/tickets.csv` (line 3) does not fit the arguments: field `priority`: invalid value: string \"high\", expected u32"
    );
    let text = message(arg::<Ticket>(&JSONL, 1, 1, None, r#"{"name":"a"}"#));
    assert!(text.ends_with("missing field `text`"), "{text}");
    let text = message(arg::<u32>(&CSV, 1, 2, Some("count"), "\"x\""));
    assert!(
        text.ends_with("field `count`: invalid value: string \"x\", expected u32"),
        "{text}"
    );
    let text = message(arg::<Label>(&JSONL, 1, 1, Some("expected"), "3"));
    assert!(
        text.contains("field `expected`: invalid type: integer `3`"),
        "{text}"
    );
}

#[test]
fn a_missing_field_is_none_to_an_option_and_an_error_otherwise() {
    let none: Option<u32> = arg(&JSONL, 1, 1, Some("count"), "").expect("fits");
    assert_eq!(none, None);
    let text = message(arg::<u32>(&JSONL, 3, 3, Some("count"), ""));
    assert_eq!(
        text,
        "row 3 of `data/tickets.jsonl` (line 3) does not fit the arguments: the row has no field `count`"
    );
}
