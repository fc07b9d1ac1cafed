use probtest::probability;

#[probability(runs = 10, min_rate = 0.5, method = "beta", prior = [1])]
fn bench_bad() {}

fn main() {}
