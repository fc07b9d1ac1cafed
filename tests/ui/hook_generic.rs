#[probtest::teardown]
fn teardown_generic<T>() {}

fn main() {}
