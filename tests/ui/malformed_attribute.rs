use probtest::probability;

#[probability(runs 3)]
fn bench_missing_equals() {}

fn main() {}
