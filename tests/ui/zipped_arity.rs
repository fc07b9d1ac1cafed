use probtest::probability;

#[probability(params((a, b) = [(1, 2), (1, 2, 3)]))]
fn bench_too_many(a: i32, b: i32) {
    let _ = (a, b);
}

#[probability(params((a, b) = [(1, 2), 3]))]
fn bench_not_a_tuple(a: i32, b: i32) {
    let _ = (a, b);
}

fn main() {}
