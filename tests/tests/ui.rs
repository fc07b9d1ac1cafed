//! Compile-fail UI tests: pin the message and span of every compile error of `#[probability]`,
//! `#[probtest::setup]` and the bench return-type check (files in `tests/ui/`).

#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("ui/*.rs");
}
