use probtest::probability;

#[probability(runs = 10, timeout = "30")]
fn bench_timeout_without_unit() {}

#[probability(runs = 10, timeout = "soon")]
fn bench_timeout_not_a_duration() {}

#[probability(runs = 10, timeout = 30)]
fn bench_timeout_not_a_string() {}

#[probability(runs = 10, timeout = "0s")]
fn bench_timeout_zero() {}

#[probability(runs = 10, limit = "")]
fn bench_limit_empty() {}

#[probability(runs = 10, limit = openai)]
fn bench_limit_not_a_string() {}

fn main() {}
