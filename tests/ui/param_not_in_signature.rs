use probtest::probability;

#[probability(params(text = ["a", "b"], mode = [1, 2]))]
fn bench_lookup(text: &str) {
    let _ = text;
}

fn main() {}
