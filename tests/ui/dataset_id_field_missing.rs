use probtest::probability;

// No row has the field.
#[probability(cases((text) = "data/tickets.csv", id = "nme"))]
fn bench_misspelled(text: &str) {
    assert!(!text.is_empty());
}

// One row lacks it, another's is not a scalar.
#[probability(cases((text) = "data/id_problems.jsonl", id = "name"))]
fn bench_some_rows(text: &str) {
    assert!(!text.is_empty());
}

fn main() {}
