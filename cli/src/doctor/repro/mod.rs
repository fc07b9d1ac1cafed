//! The repro blob as the doctor uses it. Its format is `probtest_settings::repro`'s, shared with
//! `#[probtest::repro]` and the runtime; this module adds what only the doctor knows: the repro
//! of a test binary it built, and what `cargo test` builds for a blob.

pub use probtest_settings::repro::Repro;

use crate::doctor::axes::Axis;
use crate::doctor::cargo::{Selection, TestBinary};
use crate::doctor::runner::Plan;

/// The repro of `test` of `binary`, failing under `plan`; an error when the binary's names or the
/// plan's values are not ones a blob can carry (a blob that would be refused is no repro).
pub fn for_binary(
    binary: &TestBinary,
    test: &str,
    axis: Axis,
    plan: Plan,
) -> Result<Repro, String> {
    Repro::for_target(
        &binary.package,
        &binary.kind,
        &binary.target,
        test,
        axis,
        plan,
    )
}

/// What [`crate::doctor::cargo::build`] builds for `repro`.
pub fn selection(repro: &Repro) -> Selection {
    Selection {
        extra: repro.cargo_args().into_iter().map(Into::into).collect(),
        ..Selection::default()
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::*;
    use crate::doctor::axes::Perturbation;

    #[test]
    fn the_repro_builds_the_binary_the_doctor_diagnosed() {
        for (kind, target) in [("test", "order"), ("bin", "order"), ("lib", "pt_doctor")] {
            let binary = TestBinary {
                path: PathBuf::from("/t/debug/deps/order-1"),
                package: "pt-doctor".into(),
                target: target.into(),
                kind: kind.into(),
                manifest_dir: PathBuf::from("/w/doctor"),
                target_dir: PathBuf::from("/t"),
            };
            let plan = Plan::alone("t", Perturbation::none());
            let repro = for_binary(&binary, "t", Axis::Time, plan).expect(kind);
            // The same binary, so the plain `cargo test` line agrees.
            assert_eq!(repro.cargo_args(), binary.select_args());
            let args: Vec<OsString> = repro.cargo_args().into_iter().map(Into::into).collect();
            assert_eq!(selection(&repro).cargo_args(), args);
        }
    }
}
