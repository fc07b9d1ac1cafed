use probtest::probability;

#[probability]
fn bench_pattern((a, b): (i32, i32)) {
    let _ = (a, b);
}

fn main() {}
