// The return-type check of a `#[probability]` function itself cannot be pinned here: its
// expansion is all `#[cfg(test)]` and trybuild builds without `cfg(test)`. A setup hook goes
// through the same `BenchReturn` trait outside `cfg(test)`, so it pins the message.
#[probtest::setup]
fn setup_returns_number() -> i32 {
    42
}

fn main() {}
