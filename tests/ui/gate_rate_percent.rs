use probtest::probability;

// A percentage where a fraction belongs.
#[probability(runs = 40, min_rate = 90)]
fn bench_percent() {}

#[probability(runs = 40, min_rate = 0.9, confidence = 95)]
fn bench_confidence_percent() {}

fn main() {}
