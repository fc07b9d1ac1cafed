use probtest::probability;

#[probability]
fn bench_generic<T>() {}

fn main() {}
