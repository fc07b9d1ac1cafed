use probtest::probability;

#[probability(runs = 80, max_latency = "2")]
fn bench_max_latency_without_unit() {}

#[probability(runs = 80, max_latency = "0s")]
fn bench_max_latency_zero() {}

#[probability(runs = 80, max_latency = 2)]
fn bench_max_latency_not_a_string() {}

#[probability(runs = 80, latency_quantile = 95)]
fn bench_latency_quantile_percent() {}

#[probability(runs = 80, latency_quantile = "0.95")]
fn bench_latency_quantile_not_a_number() {}

#[probability(runs = 80, latency_quantile = 1.0)]
fn bench_latency_quantile_one() {}

fn main() {}
