use probtest::probability;

#[probability(runs = 20, min_rate = 0.8, min_passes = 15)]
fn bench_both() {}

fn main() {}
