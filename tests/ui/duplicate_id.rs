use probtest::probability;

#[probability(params(x = [1 => "one", 2 => "one"]))]
fn bench_ids(x: i32) {
    let _ = x;
}

fn main() {}
