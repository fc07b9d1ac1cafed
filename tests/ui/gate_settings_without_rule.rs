use probtest::probability;

#[probability(runs = 10, confidence = 0.9, method = "wilson")]
fn bench_no_rule() {}

fn main() {}
