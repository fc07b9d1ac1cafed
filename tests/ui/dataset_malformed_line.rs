use probtest::probability;

#[probability(cases((text) = "data/malformed.jsonl"))]
fn bench_broken_json(text: &str) {
    assert!(!text.is_empty());
}

#[probability(cases((text) = "data/uneven.csv"))]
fn bench_uneven_csv(text: &str) {
    assert!(!text.is_empty());
}

fn main() {}
