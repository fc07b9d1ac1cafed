#[probtest::setup(once)]
fn setup_with_arguments() {}

#[probtest::setup]
fn setup_with_parameters(path: &str) {
    let _ = path;
}

#[probtest::setup]
async fn setup_async() {}

fn main() {}
