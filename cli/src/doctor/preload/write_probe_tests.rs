//! The preload library's write log seen from Rust code: the crate's test binary runs itself
//! again (its `write_probe` test alone) under the library, in a directory of its own, making
//! each kind of change std and libc make by path (files created, appended to, renamed, linked,
//! removed; a directory made and removed whole through a directory descriptor; `fopen` and
//! `truncate`), and the tests check that the log names each change once with its absolute path,
//! names no read and no failed call, and stays silent when not asked.

use std::ffi::CString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{library as write_library, ENV_LOG, ENV_WRITES};

/// Set in the probe's process to the directory it works in.
const PROBE_DIR: &str = "PROBTEST_WRITE_PROBE_DIR";

// libc's own entry points (fopen, truncate) are called as C code calls them: std has neither.
#[allow(unsafe_code)]
#[test]
fn write_probe() {
    let Some(dir) = std::env::var_os(PROBE_DIR) else {
        return;
    };
    let dir = PathBuf::from(dir);
    // Relative paths from here on resolve against the working directory, which is `dir`.
    fs::write("created.txt", "one").expect("create");
    fs::read("created.txt").expect("read back");
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("appended.txt"))
        .and_then(|mut file| file.write_all(b"two"))
        .expect("append");
    fs::rename("created.txt", "renamed.txt").expect("rename");
    fs::create_dir("sub").expect("mkdir");
    fs::hard_link("renamed.txt", "sub/hard").expect("hard link");
    std::os::unix::fs::symlink("renamed.txt", "sym").expect("symlink");
    fs::remove_file("sym").expect("unlink");
    // std removes a tree through descriptors: unlinkat() relative to the directory's own.
    fs::remove_dir_all("sub").expect("remove the tree");
    assert!(fs::remove_file("never-there").is_err());
    let path = CString::new("fopened.txt").expect("a C string");
    for mode in ["a", "r"] {
        let mode = CString::new(mode).expect("a C string");
        // SAFETY: both are NUL-terminated; the stream is closed at once.
        unsafe {
            let file = libc::fopen(path.as_ptr(), mode.as_ptr());
            assert!(!file.is_null(), "fopen");
            libc::fclose(file);
        }
    }
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::truncate(path.as_ptr(), 0) }, 0, "truncate");
}

/// The probe's name as libtest lists it: its module path without the crate's name.
fn probe_name() -> String {
    let module = module_path!();
    let module = module.split_once("::").map_or(module, |(_, rest)| rest);
    format!("{module}::write_probe")
}

/// A fresh directory beside the test binary, in the target directory.
fn fresh_dir(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary");
    let dir = exe
        .parent()
        .expect("its directory")
        .join("preload-probe")
        .join(format!("writes-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("the probe's directory");
    dir.canonicalize().expect("a canonical path")
}

/// Runs the probe in `dir` under the library with `env`: the log's lines and the probe's
/// stderr.
fn probe_in(dir: &Path, env: &[(&str, &str)]) -> (Vec<String>, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let log = dir.with_extension("log");
    let _ = fs::remove_file(&log);
    let library = write_library(dir.parent().expect("a parent")).expect("the library");
    let output = Command::new(&exe)
        .args(["--exact", &probe_name(), "--nocapture", "--test-threads=1"])
        .current_dir(dir)
        .env(PROBE_DIR, dir)
        .env("LD_PRELOAD", library)
        .env(ENV_LOG, &log)
        .env_remove(ENV_WRITES)
        .envs(env.iter().copied())
        .output()
        .expect("the probe runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the probe failed ({}):\n{}\n{stderr}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
    let lines = fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    (lines, stderr)
}

#[test]
fn every_change_by_path_is_logged_once_with_its_absolute_path() {
    let dir = fresh_dir("logged");
    let (lines, _) = probe_in(&dir, &[(ENV_WRITES, "1")]);
    let shown = dir.display().to_string();
    let in_dir: Vec<String> = lines
        .iter()
        .filter(|line| line.contains(&shown))
        .map(|line| line.replace(&shown, "D"))
        .collect();
    assert_eq!(
        in_dir,
        [
            "write open D/created.txt",
            "write open D/appended.txt",
            "write rename D/created.txt",
            "write rename D/renamed.txt",
            "write mkdir D/sub",
            "write link D/sub/hard",
            "write link D/sym",
            "write unlink D/sym",
            "write unlink D/sub/hard",
            "write rmdir D/sub",
            "write open D/fopened.txt",
            "write truncate D/fopened.txt",
        ],
        "{lines:#?}"
    );
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn nothing_is_logged_unless_asked_and_a_malformed_value_is_named() {
    let dir = fresh_dir("silent");
    let (lines, stderr) = probe_in(&dir, &[]);
    assert!(
        lines.iter().all(|line| !line.starts_with("write ")),
        "{lines:#?}"
    );
    assert!(dir.join("renamed.txt").exists(), "the calls went through");

    let _ = fs::remove_dir_all(&dir);
    let dir = fresh_dir("malformed");
    let (lines, stderr_malformed) = probe_in(&dir, &[(ENV_WRITES, "yes")]);
    assert!(
        lines.iter().all(|line| !line.starts_with("write ")),
        "{lines:#?}"
    );
    assert!(!stderr.contains(ENV_WRITES), "{stderr}");
    assert_eq!(
        stderr_malformed
            .matches(&format!("ignoring {ENV_WRITES}=\"yes\""))
            .count(),
        1,
        "{stderr_malformed}"
    );
    let _ = fs::remove_dir_all(&dir);
}
