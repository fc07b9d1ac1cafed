use probtest::probability;

#[probability(runs = 1000000000, params(n = [1, 2]))]
fn bench_huge(n: u32) {
    assert!(n > 0);
}

// Called so that an expansion that dropped the function on error fails with a second error.
fn main() {
    bench_huge(1);
}
