use probtest::probability;

#[probability(params(x = []))]
fn bench_no_values(x: i32) {
    let _ = x;
}

fn main() {}
