use probtest::probability;

#[probability(run = 3, runs = 0, params(text = ["a"], mode = [1]))]
fn bench_many_mistakes(text: &str) {
    let _ = text;
}

fn main() {}
