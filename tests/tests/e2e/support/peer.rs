//! The peer, pytest-probability: a Python that has it, for the side-by-side tests.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A Python that has pytest-probability 0.3 (`PROBTEST_PEER_PYTHON`, else `python3`), or `None`
/// with the reason printed, so that a side-by-side test skips; under `CI` the peer must be there.
pub fn peer_python() -> Option<&'static Path> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let python = std::env::var_os("PROBTEST_PEER_PYTHON")
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from);
            let has_peer = std::process::Command::new(&python)
                .args(["-c", "import pytest_probability"])
                .output()
                .is_ok_and(|output| output.status.success());
            if has_peer {
                return Some(python);
            }
            let why = "pytest-probability is not installed (pip install pytest-probability==0.3.0, or point PROBTEST_PEER_PYTHON at a Python that has it)";
            assert!(std::env::var_os("CI").is_none(), "{why}; CI must have it");
            eprintln!("skipping the side-by-side test: {why}");
            None
        })
        .as_deref()
}
