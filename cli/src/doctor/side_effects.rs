//! The look for side effects the doctor makes before it repeats a test: one run of the victim
//! under the preload library logging each change its processes make to the file system by path,
//! and the changes outside what a run may change (its own temporary directory and the rest of
//! the doctor's scratch directory, the target directory, the kernel's `/dev`, `/proc` and
//! `/sys`). A test that writes elsewhere (into its package, the home directory, a database)
//! would do it again on every one of the dozens of runs of a diagnosis, so the doctor lists what
//! it changed and stops unless `--allow-side-effects` is given.
//!
//! Runs are not moved into a mount namespace of their own instead: an unprivileged one needs
//! user namespaces, which containers and hardened kernels often refuse, and a copy-on-write view
//! of the whole file system needs overlayfs over `/`, which an unprivileged user cannot mount on
//! most kernels; a check that works only sometimes would make the same test stopped on one
//! machine and run on another.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use crate::doctor::runner::Runner;
use crate::error::Error;

/// A path a run changed outside where it may, and what it did to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideEffect {
    pub path: PathBuf,
    /// What was done to it, as words (`removed`, `written`), in alphabetical order.
    pub done: BTreeSet<&'static str>,
}

/// The most paths named; the rest are counted.
const NAMED: usize = 20;

/// The kernel's file systems: writing there (`/dev/null`, a terminal) changes no file.
const KERNEL: [&str; 3] = ["/dev", "/proc", "/sys"];

/// What a `write <op>` of the preload library's log did, in a word.
fn done(op: &str) -> &'static str {
    match op {
        "open" => "written",
        "unlink" | "rmdir" => "removed",
        "rename" => "renamed",
        "mkdir" => "created",
        "link" => "linked",
        "truncate" => "truncated",
        _ => "changed",
    }
}

/// `path` without `.` and with each `..` taking its parent away, as the kernel would resolve it
/// were no component a symbolic link: the log has the path as the test wrote it.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match normal.components().next_back() {
                Some(Component::Normal(_)) => {
                    normal.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => normal.push(".."),
            },
            other => normal.push(other),
        }
    }
    normal
}

/// The changes in `lines` (the log's `write <op> <path>` lines) to paths under none of
/// `allowed` nor the kernel's file systems, a path once, in the order first changed.
pub fn side_effects(lines: &[String], allowed: &[PathBuf]) -> Vec<SideEffect> {
    let mut effects: Vec<SideEffect> = Vec::new();
    for line in lines {
        let Some((op, path)) = line
            .strip_prefix("write ")
            .and_then(|rest| rest.split_once(' '))
        else {
            continue;
        };
        let path = normalize(Path::new(path));
        let kernel = KERNEL.iter().any(|root| path.starts_with(root));
        if kernel || allowed.iter().any(|root| path.starts_with(root)) {
            continue;
        }
        match effects.iter_mut().find(|effect| effect.path == path) {
            Some(effect) => {
                effect.done.insert(done(op));
            }
            None => effects.push(SideEffect {
                path,
                done: BTreeSet::from([done(op)]),
            }),
        }
    }
    effects
}

/// The effects as lines, `/path (removed, written)`, the first [`NAMED`] of them and then how
/// many more there are.
pub fn listing(effects: &[SideEffect]) -> Vec<String> {
    let mut lines: Vec<String> = effects
        .iter()
        .take(NAMED)
        .map(|effect| {
            let done: Vec<&str> = effect.done.iter().copied().collect();
            format!("{} ({})", effect.path.display(), done.join(", "))
        })
        .collect();
    if effects.len() > NAMED {
        lines.push(format!("and {} more", effects.len() - NAMED));
    }
    lines
}

/// The directories a run may change: the scratch directory (its `TMPDIR`, session store and
/// report are there), the target directory, each also as its canonical path, since a test may
/// reach them through either.
fn allowed(runner: &Runner, target_dir: &Path) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for root in [runner.scratch_dir(), target_dir] {
        roots.push(normalize(root));
        if let Ok(canonical) = root.canonicalize() {
            roots.push(canonical);
        }
    }
    roots
}

/// One run of the victim watched for side effects, before any other run: `Ok(None)` when it
/// changed nothing it may not; `Ok(Some(warning))` when it did and `allow` is set, or when it
/// could not be watched (`library` says why); otherwise the list goes to stderr and the error
/// stops the doctor.
pub fn check(
    runner: &Runner,
    library: Result<&Path, &str>,
    target_dir: &Path,
    allow: bool,
) -> Result<Option<String>, Error> {
    let library = match library {
        Ok(library) => library,
        Err(why) => {
            return Ok(Some(format!(
                "writes outside its temporary directory were not looked for: {why}"
            )))
        }
    };
    let (_, writes) = runner.run_watching_writes(library);
    let effects = side_effects(&writes, &allowed(runner, target_dir));
    if effects.is_empty() {
        return Ok(None);
    }
    let listed = listing(&effects);
    if allow {
        return Ok(Some(format!(
            "it changes files outside its temporary directory, and every run changed them again \
             (--allow-side-effects): {}",
            listed.join(", ")
        )));
    }
    let victim = &runner.victim;
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "doctor: {victim} changed these outside its temporary directory in its one run:"
    );
    for line in &listed {
        let _ = writeln!(stderr, "doctor:   {line}");
    }
    let count = match effects.len() {
        1 => "1 path".to_string(),
        many => format!("{many} paths"),
    };
    Err(Error::about(
        victim,
        format!(
            "changes {count} outside its temporary directory (listed above), which each of the \
             diagnosis's runs would change again; --allow-side-effects diagnoses it anyway"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|line| line.to_string()).collect()
    }

    fn paths(effects: &[SideEffect]) -> Vec<&str> {
        effects
            .iter()
            .map(|effect| effect.path.to_str().unwrap())
            .collect()
    }

    #[test]
    fn writes_under_the_allowed_directories_and_the_kernel_are_not_side_effects() {
        let allowed = [
            PathBuf::from("/tmp/doctor-1"),
            PathBuf::from("/work/pkg/target"),
        ];
        let log = lines(&[
            "write open /tmp/doctor-1/run-0/report.json",
            "write mkdir /tmp/doctor-1/run-0/sessions",
            "write open /work/pkg/target/probtest/cache",
            "write open /dev/null",
            "write open /proc/self/oom_score_adj",
            "write open /sys/fs/cgroup/x",
            "write open /work/pkg/output.txt",
        ]);
        assert_eq!(
            paths(&side_effects(&log, &allowed)),
            ["/work/pkg/output.txt"]
        );
    }

    #[test]
    fn a_directory_only_sharing_a_prefix_with_an_allowed_one_is_not_allowed() {
        let allowed = [PathBuf::from("/tmp/doctor-1")];
        let log = lines(&[
            "write open /tmp/doctor-10/file",
            "write open /tmp/doctor-1.bak",
            "write open /tmp/doctor-1",
            "write open /devices/x",
        ]);
        assert_eq!(
            paths(&side_effects(&log, &allowed)),
            ["/tmp/doctor-10/file", "/tmp/doctor-1.bak", "/devices/x"]
        );
    }

    #[test]
    fn dot_dot_leaving_an_allowed_directory_is_seen() {
        let allowed = [PathBuf::from("/tmp/doctor-1/run-0")];
        let log = lines(&[
            "write open /tmp/doctor-1/run-0/../../escaped",
            "write open /tmp/doctor-1/run-0/./sub/../kept",
            "write open /tmp/doctor-1/./run-0/kept-too",
            "write open /../../tmp/doctor-1/run-0/kept-as-well",
        ]);
        assert_eq!(paths(&side_effects(&log, &allowed)), ["/tmp/escaped"]);
        assert_eq!(normalize(Path::new("../a/../../b")), Path::new("../../b"));
    }

    #[test]
    fn each_path_is_listed_once_with_everything_done_to_it() {
        let log = lines(&[
            "write open /home/u/.count",
            "write rename /work/pkg/a.tmp",
            "write rename /work/pkg/a",
            "write open /home/u/.count",
            "write unlink /home/u/.count",
            "write mkdir /work/pkg/out dir",
            "write truncate /work/pkg/a",
            "write link /work/pkg/l",
            "write rmdir /work/pkg/gone",
            "write frobnicate /work/pkg/odd",
            "not a write line",
            "entropy hash",
        ]);
        let effects = side_effects(&log, &[]);
        assert_eq!(
            listing(&effects),
            [
                "/home/u/.count (removed, written)",
                "/work/pkg/a.tmp (renamed)",
                "/work/pkg/a (renamed, truncated)",
                "/work/pkg/out dir (created)",
                "/work/pkg/l (linked)",
                "/work/pkg/gone (removed)",
                "/work/pkg/odd (changed)",
            ]
        );
    }

    #[test]
    fn a_path_the_library_could_not_make_absolute_is_still_listed() {
        let effects = side_effects(&lines(&["write open ?/relative.txt"]), &[]);
        assert_eq!(paths(&effects), ["?/relative.txt"]);
    }

    #[test]
    fn a_long_list_names_twenty_and_counts_the_rest() {
        let log: Vec<String> = (0..25)
            .map(|index| format!("write open /work/pkg/file-{index}"))
            .collect();
        let listed = listing(&side_effects(&log, &[]));
        assert_eq!(listed.len(), 21);
        assert_eq!(listed[0], "/work/pkg/file-0 (written)");
        assert_eq!(listed[19], "/work/pkg/file-19 (written)");
        assert_eq!(listed[20], "and 5 more");
    }
}
