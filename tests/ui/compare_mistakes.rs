use probtest::probability;

#[probability(runs = 10, compare = "style", params(model = ["a", "b"]))]
fn bench_not_an_argument(model: &str) {
    let _ = model;
}

#[probability(runs = 10, compare = "model", params(model = ["a"]))]
fn bench_one_value(model: &str) {
    let _ = model;
}

#[probability(runs = 10, compare = "model", baseline = "c", params(model = ["a", "b"]))]
fn bench_unknown_baseline(model: &str) {
    let _ = model;
}

#[probability(runs = 10, margin = 0.05, params(model = ["a", "b"]))]
fn bench_margin_without_compare(model: &str) {
    let _ = model;
}

#[probability(runs = 10, compare = "model", equivalence = true, params(model = ["a", "b"]))]
fn bench_equivalence_without_margin(model: &str) {
    let _ = model;
}

#[probability(runs = 10, compare = "model", margin = 5.0, params(model = ["a", "b"]))]
fn bench_margin_in_points(model: &str) {
    let _ = model;
}

fn main() {}
