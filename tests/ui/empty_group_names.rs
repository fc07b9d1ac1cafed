use probtest::probability;

#[probability(params(() = []))]
fn bench_no_names() {}

fn main() {}
