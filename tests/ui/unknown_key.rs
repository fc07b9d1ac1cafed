use probtest::probability;

#[probability(run = 3)]
fn bench_typo() {}

fn main() {}
