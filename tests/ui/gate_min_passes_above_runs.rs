use probtest::probability;

#[probability(runs = 10, min_passes = 12)]
fn bench_impossible() {}

fn main() {}
