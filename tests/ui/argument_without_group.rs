use probtest::probability;

#[probability(params(text = ["a", "b"]))]
fn bench_partial(text: &str, mode: u8) {
    let _ = (text, mode);
}

#[probability(runs = 2)]
fn bench_no_params(count: usize) {
    let _ = count;
}

fn main() {}
