use probtest::probability;

#[probability]
fn bench_pattern((a, b): (i32, i32)) {
    let _ = (a, b);
}

#[probability(params(name = ["a"]))]
fn bench_ref_pattern(ref name: String) {
    let _ = name;
}

fn main() {}
