use probtest::probability;

struct Bench;

impl Bench {
    #[probability]
    fn bench_method(&self) {}
}

fn main() {
    let _ = Bench;
}
