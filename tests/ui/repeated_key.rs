use probtest::probability;

#[probability(runs = 2, runs = 3)]
fn bench_twice() {}

fn main() {}
