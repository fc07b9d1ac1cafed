//! The runtime's layers import only downward: this test reads every source file under
//! `src/<layer>/` and fails on a `crate::<layer>` path that names a layer above its own (or a
//! sibling of its own rank), or on `store` importing `render` outside the modules that
//! ARCHITECTURE.md's `store` row names. ARCHITECTURE.md explains the layers.

use std::fs;
use std::path::{Path, PathBuf};

/// Each layer and its rank, bottom first. Layers of one rank are siblings and must not import
/// each other.
const LAYERS: &[(&str, u32)] = &[
    ("types", 0),
    ("model", 1),
    ("format", 2),
    ("render", 2),
    ("store", 3),
    ("export", 3),
    ("harness", 4),
];

fn rank(layer: &str) -> Option<u32> {
    LAYERS
        .iter()
        .find(|(name, _)| *name == layer)
        .map(|(_, rank)| *rank)
}

fn sources(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries =
        fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            found.push(path);
        }
    }
}

/// Every `crate::<name>` in the code of `text` (comments left out), with its line number.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut paths = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let boundary = rest[..at]
                .chars()
                .last()
                .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '$'));
            if boundary && !name.is_empty() {
                paths.push((number + 1, name));
            }
            rest = after;
        }
    }
    paths
}

/// The modules of `store` that may import `render`, as ARCHITECTURE.md's `store` row names
/// them: the backquoted names after "`render` only in" in its last cell (`live/rebuild` is
/// `src/store/live/rebuild.rs`). None when the file or the phrase is missing.
fn store_render_modules(architecture: &str) -> Vec<String> {
    let Some(row) = architecture
        .lines()
        .find(|line| line.starts_with("| 3 | `store/` |"))
    else {
        return Vec::new();
    };
    let cell = row.trim_end_matches('|').rsplit('|').next().unwrap_or("");
    let Some((_, allowed)) = cell.split_once("`render` only in") else {
        return Vec::new();
    };
    allowed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The layer folders found under `src`, and the violations in them. `store_render` lists the
/// modules of `store` that may import `render`.
fn check(src: &Path, store_render: &[String]) -> (Vec<String>, Vec<String>) {
    let mut layers = Vec::new();
    let mut violations = Vec::new();
    for entry in fs::read_dir(src).expect("src is listable") {
        let dir = entry.expect("directory entry").path();
        if !dir.is_dir() {
            continue;
        }
        let layer = dir
            .file_name()
            .and_then(|name| name.to_str())
            .expect("a folder name")
            .to_string();
        let Some(own) = rank(&layer) else {
            violations.push(format!(
                "src/{layer}/ is not a known layer; add it to LAYERS here and to ARCHITECTURE.md"
            ));
            continue;
        };
        let mut files = Vec::new();
        sources(&dir, &mut files);
        for file in files {
            let text = fs::read_to_string(&file).expect("source is readable");
            let module = file
                .strip_prefix(&dir)
                .unwrap_or(&file)
                .with_extension("")
                .to_string_lossy()
                .replace('\\', "/");
            for (line, name) in crate_paths(&text) {
                let Some(theirs) = rank(&name) else { continue };
                if layer == "store" && name == "render" && !store_render.contains(&module) {
                    violations.push(format!(
                        "src/store/{module}.rs:{line}: `store` imports `crate::render` outside \
                         the modules ARCHITECTURE.md's `store` row allows"
                    ));
                } else if name != layer && theirs >= own {
                    violations.push(format!(
                        "{}:{line}: layer `{layer}` imports `crate::{name}`, which is not below it",
                        file.strip_prefix(src.parent().expect("crate root"))
                            .unwrap_or(&file)
                            .display()
                    ));
                }
            }
        }
        layers.push(layer);
    }
    layers.sort();
    (layers, violations)
}

#[test]
fn every_layer_imports_only_from_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let architecture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ARCHITECTURE.md");
    let architecture = fs::read_to_string(&architecture).expect("ARCHITECTURE.md is readable");
    let store_render = store_render_modules(&architecture);
    assert!(
        !store_render.is_empty(),
        "ARCHITECTURE.md's `store` row says where `store` may import `render`"
    );
    let (layers, violations) = check(&src, &store_render);
    let mut expected: Vec<String> = LAYERS.iter().map(|(name, _)| name.to_string()).collect();
    expected.sort();
    assert_eq!(layers, expected, "every layer has its folder under src/");
    assert!(violations.is_empty(), "\n{}", violations.join("\n"));
}

#[test]
fn an_upward_import_is_caught() {
    let root = std::env::temp_dir().join(format!("probtest-layers-{}", std::process::id()));
    let src = root.join("src");
    let _ = fs::remove_dir_all(&root);
    for (layer, _) in LAYERS {
        fs::create_dir_all(src.join(layer)).expect("layer folder");
    }
    fs::write(
        src.join("model").join("leak.rs"),
        "// crate::harness in a comment is fine\nuse crate::types::stats;\nuse crate::store::Session;\n",
    )
    .expect("written");
    fs::write(
        src.join("render").join("x.rs"),
        "fn f() { crate::format::y(); }\n",
    )
    .expect("written");
    fs::write(
        src.join("store").join("allowed.rs"),
        "fn f() { crate::render::y(); }\n",
    )
    .expect("written");
    fs::write(
        src.join("store").join("other.rs"),
        "fn f() { crate::render::y(); }\n",
    )
    .expect("written");
    let (_, violations) = check(&src, &["allowed".to_string()]);
    let _ = fs::remove_dir_all(&root);
    assert_eq!(violations.len(), 3, "{violations:?}");
    assert!(violations.iter().any(|v| v.contains("store/other.rs:1")));
    assert!(violations[0].contains("model/leak.rs:3") || violations[1].contains("model/leak.rs:3"));
    assert!(violations.iter().any(|v| v.contains("render/x.rs:1")));
}

#[test]
fn the_store_row_names_the_modules_that_may_use_render() {
    let row = "| 3 | `store/` | files | `types`, `model`, `format`; `render` only in `report_file` and `live/rebuild`, for text a report carries |";
    assert_eq!(
        store_render_modules(row),
        vec!["report_file".to_string(), "live/rebuild".to_string()]
    );
    assert!(store_render_modules("| 3 | `store/` | files | `types` |").is_empty());
}
