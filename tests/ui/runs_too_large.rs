use probtest::probability;

#[probability(runs = 5000000000)]
fn bench_forever() {}

fn main() {}
