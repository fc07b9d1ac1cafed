//! Where the store is: the target directory a test binary was built in.
//!
//! Layer: store.

use std::path::{Path, PathBuf};

/// The target directory a test binary was built in: the nearest ancestor holding cargo's
/// `CACHEDIR.TAG`, else the directory above the profile directory.
pub(crate) fn target_dir_of(executable: &Path) -> Option<PathBuf> {
    tagged_target_dir_of(executable)
        .or_else(|| profile_dir_of(executable)?.parent().map(Path::to_path_buf))
}

/// The nearest ancestor of `executable` holding cargo's `CACHEDIR.TAG`. The directory above
/// the profile directory, where cargo puts the tag, is looked at first: one system call for
/// the usual layout, in every nextest process.
pub(crate) fn tagged_target_dir_of(executable: &Path) -> Option<PathBuf> {
    let tagged = |dir: &Path| dir.join("CACHEDIR.TAG").is_file();
    let usual = profile_dir_of(executable)?.parent();
    if let Some(usual) = usual.filter(|dir| tagged(dir)) {
        return Some(usual.to_path_buf());
    }
    executable
        .ancestors()
        .skip(1)
        .find(|&dir| Some(dir) != usual && tagged(dir))
        .map(Path::to_path_buf)
}

/// The profile directory of a test binary (`target/debug` for `target/debug/deps/t-0123`).
fn profile_dir_of(executable: &Path) -> Option<&Path> {
    let deps = executable.parent()?;
    if deps.file_name()? == "deps" {
        deps.parent()
    } else {
        Some(deps)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::store::test_support::temp_sessions;

    #[test]
    fn target_dir_is_found_from_the_test_binary() {
        let root = temp_sessions("target");
        let deps = root.join("debug").join("deps");
        fs::create_dir_all(&deps).expect("dirs");
        assert_eq!(target_dir_of(&deps.join("evals-0123")), Some(root.clone()));
        assert_eq!(tagged_target_dir_of(&deps.join("evals-0123")), None);
        let cross = root
            .join("x86_64-unknown-linux-gnu")
            .join("debug")
            .join("deps");
        fs::create_dir_all(&cross).expect("dirs");
        fs::write(
            root.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .expect("tag");
        assert_eq!(target_dir_of(&cross.join("evals-0123")), Some(root.clone()));
        assert_eq!(target_dir_of(&deps.join("evals-0123")), Some(root.clone()));
        // The usual place is looked at first; elsewhere, the nearest tag.
        let nested = root.join("debug").join("CACHEDIR.TAG");
        fs::write(&nested, "Signature: 8a477f597d28d172789f06886806bc55").expect("tag");
        assert_eq!(
            tagged_target_dir_of(&deps.join("evals-0123")),
            Some(root.clone())
        );
        let loose = root.join("debug").join("tools").join("bin");
        fs::create_dir_all(&loose).expect("dirs");
        assert_eq!(
            tagged_target_dir_of(&loose.join("evals-0123")),
            Some(root.join("debug"))
        );
        let _ = fs::remove_dir_all(root);
    }
}
