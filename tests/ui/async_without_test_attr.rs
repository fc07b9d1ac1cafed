use probtest::probability;

#[probability(runs = 2)]
async fn bench_async() {}

fn main() {}
