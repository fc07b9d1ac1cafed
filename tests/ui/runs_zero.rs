use probtest::probability;

#[probability(runs = 0)]
fn bench_never() {}

fn main() {}
