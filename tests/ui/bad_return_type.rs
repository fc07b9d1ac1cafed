use probtest::probability;

#[probability]
fn bench_returns_number() -> i32 {
    42
}

fn main() {}
