//! Compile-fail UI tests: pin the message and span of every compile error of `#[probability]`,
//! `#[probtest::setup]` and the bench return-type check (files in `tests/ui/`).

use std::path::{Path, PathBuf};

#[test]
fn ui() {
    copy_data_files();
    trybuild::TestCases::new().compile_fail("ui/*.rs");
}

/// The data files of the `cases(...)` tests (`tests/ui/data/`), copied to where trybuild builds
/// them: a data file is read relative to the package being compiled, and trybuild's package is
/// `<target>/tests/trybuild/probtest-e2e/`.
fn copy_data_files() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/data");
    let project = target_dir()
        .join("tests/trybuild")
        .join(env!("CARGO_PKG_NAME"));
    let destination = project.join("data");
    std::fs::create_dir_all(&destination)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", destination.display()));
    let entries = std::fs::read_dir(&source)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", source.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let to = destination.join(path.file_name().expect("a file name"));
        std::fs::copy(&path, &to)
            .unwrap_or_else(|e| panic!("cannot copy {} to {}: {e}", path.display(), to.display()));
    }
}

/// Cargo's target directory, which trybuild builds under: the parent of the directory cargo
/// gives integration tests for scratch files (`<target>/tmp`). A marker file such as
/// `CACHEDIR.TAG` is not enough: cargo writes it only when it creates the directory itself.
fn target_dir() -> PathBuf {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    scratch
        .parent()
        .unwrap_or_else(|| panic!("no target directory above {}", scratch.display()))
        .to_path_buf()
}
