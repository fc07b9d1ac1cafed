use probtest::probability;

#[probability(cases((text) = "data/duplicate_ids.jsonl", id = "name"))]
fn bench_twice(text: &str) {
    assert!(!text.is_empty());
}

fn main() {}
