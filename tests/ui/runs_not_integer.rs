use probtest::probability;

#[probability(runs = "10")]
fn bench_string_runs() {}

#[probability(runs = 1.5)]
fn bench_float_runs() {}

fn main() {}
