use probtest::probability;

#[probability(cases((text) = "data/empty_id.csv", id = "name"))]
fn bench_blank(text: &str) {
    assert!(!text.is_empty());
}

fn main() {}
