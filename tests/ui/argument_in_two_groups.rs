use probtest::probability;

#[probability(params(text = ["a"], (text, mode) = [("b", 1)]))]
fn bench_overlap(text: &str, mode: u8) {
    let _ = (text, mode);
}

fn main() {}
