//! Compiles the preload library, `preload/probtest_preload.c`, into a shared object in
//! `OUT_DIR`, which `src/harness/repro/preload.rs` embeds; `cfg(probtest_preload)` tells the Rust
//! side that it is there. The C source ships inside this crate, so a test build that uses
//! `#[probtest::repro]` (and `cargo-probtest`, which takes the library from here) needs no
//! download: only the C compiler that links Rust programs on Linux already.
//!
//! The library interposes glibc, so it is built for Linux glibc targets only, and only with the
//! default `preload` feature; elsewhere nothing is built and the cfg stays unset. cc's compiler discovery (`CC`, `CFLAGS`, the target's
//! cross compiler) picks the compiler, but cc builds only static archives, so the shared object
//! is linked here with that compiler.

use std::env;
use std::path::PathBuf;

const SOURCE: &str = "preload/probtest_preload.c";
const LIBRARY: &str = "probtest_preload.so";

fn main() {
    println!("cargo::rerun-if-changed={SOURCE}");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(probtest_preload)");

    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let wanted = env::var_os("CARGO_FEATURE_PRELOAD").is_some();
    if !wanted || target_os != "linux" || target_env != "gnu" {
        return;
    }

    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let library = out_dir.join(LIBRARY);
    let compiler = cc::Build::new()
        .opt_level(2)
        .pic(true)
        // The bytes end up inside test binaries and cargo-probtest; debug info would only make
        // them bigger.
        .debug(false)
        .get_compiler();
    let mut command = compiler.to_command();
    command
        .args(["-shared", "-fPIC", "-O2", "-fvisibility=hidden", "-o"])
        .arg(&library)
        .arg(SOURCE)
        // glibc before 2.34 keeps dlsym in libdl; later ones keep an empty libdl for this.
        .arg("-ldl");
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run the C compiler {command:?}: {error}"));
    let diagnostics = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        panic!(
            "the C compiler failed to build {SOURCE} ({}):\n{command:?}\n{diagnostics}",
            output.status
        );
    }
    for line in diagnostics.lines().filter(|line| !line.trim().is_empty()) {
        println!("cargo::warning={line}");
    }
    println!("cargo::rustc-cfg=probtest_preload");
}
