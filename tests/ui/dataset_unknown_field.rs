use probtest::probability;

#[probability(cases((text, expectd) = "data/tickets.csv"))]
fn bench_misspelled(text: &str, expectd: String) {
    assert!(!text.is_empty() && !expectd.is_empty());
}

// The fields must be arguments, and an argument takes its values from one place.
#[probability(cases((text, label) = "data/tickets.csv"), params(text = ["x"]))]
fn bench_not_an_argument(text: &str) {
    assert!(!text.is_empty());
}

fn main() {}
