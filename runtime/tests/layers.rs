//! The runtime's layers import only downward: this test reads every source file under
//! `src/<layer>/` and fails on a path that names a layer above its own (or a sibling of its own
//! rank), written from the crate (`crate::render`) or relative to the file (`super::super::render`,
//! resolved against the file's module path), or on `store` importing `render` outside the
//! modules that ARCHITECTURE.md's `store` row names. The model and the plain values carry no
//! serde: their JSON shapes are `format`'s. Inside the harness, the run context
//! (`harness/context/`) is a leaf its features build on: it imports none of them, and nothing
//! in the harness but the runner itself imports `harness::runner`. ARCHITECTURE.md explains the
//! layers.

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
            let module_path = module_of(file.strip_prefix(src).unwrap_or(&file));
            let mut named: Vec<(usize, String)> = Vec::new();
            for path in named_paths(&text, &module_path) {
                let (name, line) = path[0].clone();
                // `crate::render::{a, b}` names the layer once.
                if !named.contains(&(line, name.clone())) {
                    named.push((line, name));
                }
            }
            for (line, name) in named {
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
fn relative_paths_resolve_against_the_files_module() {
    let module = ["format".to_string(), "report".to_string()];
    let text = "use super::super::render::text;\n// super::super::harness in a comment\nfn f() {\n    self::x::y();\n    crate::types::a();\n}\nuse super::{shape, super::store::{Session, sessions}};\nlet _ = $crate::render::z;\n";
    let paths: Vec<(Vec<String>, usize)> = named_paths(text, &module)
        .into_iter()
        .map(|path| {
            let line = path[0].1;
            (path.into_iter().map(|(name, _)| name).collect(), line)
        })
        .collect();
    let expected: Vec<(Vec<&str>, usize)> = vec![
        (vec!["render", "text"], 1),
        (vec!["format", "report", "x", "y"], 4),
        (vec!["types", "a"], 5),
        (vec!["format", "shape"], 7),
        (vec!["store", "Session"], 7),
        (vec!["store", "sessions"], 7),
    ];
    let expected: Vec<(Vec<String>, usize)> = expected
        .into_iter()
        .map(|(path, line)| (path.into_iter().map(str::to_string).collect(), line))
        .collect();
    assert_eq!(paths, expected);
    // A module's own file: `super` of `format/mod.rs` is the crate.
    let paths = named_paths("use super::render;\n", &["format".to_string()]);
    assert_eq!(paths, vec![vec![("render".to_string(), 1)]]);
}

#[test]
fn a_relative_upward_import_is_caught() {
    let root = std::env::temp_dir().join(format!("probtest-relative-{}", std::process::id()));
    let src = root.join("src");
    let _ = fs::remove_dir_all(&root);
    for (layer, _) in LAYERS {
        fs::create_dir_all(src.join(layer)).expect("layer folder");
    }
    fs::create_dir_all(src.join("format/shape")).expect("folder");
    let files = [
        (
            "format/report.rs",
            "use super::super::render::text;\nuse super::shape;\n",
        ),
        (
            "format/shape/stats.rs",
            "use super::super::super::{types::stats, store::Session};\nuse super::super::render;\n",
        ),
        (
            "model/mod.rs",
            "use super::types;\nfn f() { self::build::x(); super::format::y(); }\n",
        ),
    ];
    for (path, text) in files {
        fs::write(src.join(path), text).expect("written");
    }
    let (_, mut violations) = check(&src, &[]);
    let _ = fs::remove_dir_all(&root);
    violations.sort();
    assert_eq!(violations.len(), 3, "{violations:?}");
    assert!(
        violations[0].contains("src/format/report.rs:1")
            && violations[0].contains("`crate::render`"),
        "{violations:?}"
    );
    assert!(
        violations[1].contains("src/format/shape/stats.rs:1")
            && violations[1].contains("`crate::store`"),
        "{violations:?}"
    );
    assert!(
        violations[2].contains("src/model/mod.rs:2") && violations[2].contains("`crate::format`"),
        "{violations:?}"
    );
}

/// Where a file of `types` or `model` uses serde: a derive, a `#[serde(...)]` attribute or a
/// `serde` import, comments left out. Test files are left out: they read reference data.
fn serde_in_plain_layers(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for layer in ["types", "model"] {
        let mut files = Vec::new();
        sources(&src.join(layer), &mut files);
        files.sort();
        for file in files {
            let name = file_name(&file);
            if name == "tests.rs" || name.ends_with("_tests.rs") {
                continue;
            }
            let text = fs::read_to_string(&file).expect("source is readable");
            for (number, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                let words: Vec<&str> = code.split(|c: char| !is_ident(c)).collect();
                let uses_serde = words.iter().any(|word| {
                    matches!(
                        *word,
                        "Serialize" | "Deserialize" | "Serializer" | "Deserializer"
                    )
                }) || code.contains("serde::")
                    || code.contains("serde(");
                if uses_serde {
                    let relative = file.strip_prefix(src).unwrap_or(&file);
                    found.push(format!("src/{}:{}", relative.display(), number + 1));
                }
            }
        }
    }
    found
}

#[test]
fn the_model_and_the_plain_values_carry_no_serde() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = serde_in_plain_layers(&src);
    assert!(
        found.is_empty(),
        "these use serde; a JSON shape is `format/shape/`'s (a remote shape and `shaped!`):\n{}",
        found.join("\n")
    );
}

#[test]
fn serde_in_the_model_is_caught() {
    let root = std::env::temp_dir().join(format!("probtest-serde-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("types")).expect("folder");
    fs::create_dir_all(root.join("model")).expect("folder");
    let files = [
        (
            "types/status.rs",
            "/// Serialize in a doc is fine\n#[derive(Clone, serde::Serialize)]\n#[serde(rename_all = \"lowercase\")]\npub enum Status {}\n",
        ),
        ("model/report.rs", "use serde::Deserialize;\nstruct Deserializing;\n"),
        ("model/tests.rs", "use serde::Deserialize;\n"),
    ];
    for (path, text) in files {
        fs::write(root.join(path), text).expect("written");
    }
    let found = serde_in_plain_layers(&root);
    let _ = fs::remove_dir_all(&root);
    assert_eq!(
        found,
        [
            "src/types/status.rs:2",
            "src/types/status.rs:3",
            "src/model/report.rs:1"
        ]
    );
}

/// The one module of the harness the run context may import: the registry, for the case a run
/// belongs to.
const CONTEXT_MAY_IMPORT: &[&str] = &["context", "registry"];

/// The module path of the source file `relative` (to `src/`): `harness/limits.rs` is
/// `harness::limits`, `harness/context/mod.rs` is `harness::context`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut segments: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if segments.last().is_some_and(|last| last == "mod") {
        segments.pop();
    }
    segments
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// A path's segments, each with where it is written (or, for those of the file's own module path,
/// where the path starts).
type Segments = Vec<(String, usize)>;

/// The paths a `use` or an expression names from `code[at..]`, each from `prefix`: a path's
/// segments, `super` and `self` resolved, every branch of a `{...}` group followed. Returns them
/// and where the path ends.
fn paths_from(code: &[char], mut at: usize, mut prefix: Segments) -> (Vec<Segments>, usize) {
    loop {
        while at < code.len() && code[at].is_whitespace() {
            at += 1;
        }
        if code.get(at) == Some(&'{') {
            at += 1;
            let mut found = Vec::new();
            loop {
                let (paths, end) = paths_from(code, at, prefix.clone());
                found.extend(paths);
                at = end;
                while at < code.len() && code[at].is_whitespace() {
                    at += 1;
                }
                match code.get(at) {
                    Some(',') => at += 1,
                    Some('}') => return (found, at + 1),
                    _ => return (found, at),
                }
            }
        }
        let start = at;
        while at < code.len() && is_ident(code[at]) {
            at += 1;
        }
        let ident: String = code[start..at].iter().collect();
        match ident.as_str() {
            "" => return (vec![prefix], at),
            "super" => {
                prefix.pop();
            }
            "self" => {}
            _ => prefix.push((ident, start)),
        }
        if code.get(at) == Some(&':') && code.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// Every path the code of `text` names from the crate's root (comments left out), each segment
/// with the line it is written on (a segment of the file's own module path: the path's line): `crate::` paths as written, and `super::` and `self::` paths resolved
/// from `module`, the file's own module path, so that `super::super::render` in
/// `format/report.rs` is `render`. A `super` in an inline module (a test module's
/// `use super::*`) is resolved from the file's module, one level up: it lands in the file's own
/// layer all the same.
fn named_paths(text: &str, module: &[String]) -> Vec<Vec<(String, usize)>> {
    let mut code = Vec::new();
    let mut line_of = Vec::new();
    for (number, line) in text.lines().enumerate() {
        for c in line.split("//").next().unwrap_or("").chars().chain(['\n']) {
            code.push(c);
            line_of.push(number + 1);
        }
    }
    let mut found = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let starts_path = (at == 0
            || !(is_ident(code[at - 1]) || matches!(code[at - 1], ':' | '$')))
            && is_ident(code[at]);
        if !starts_path {
            at += 1;
            continue;
        }
        let word_end = (at..code.len())
            .find(|&i| !is_ident(code[i]))
            .unwrap_or(code.len());
        let word: String = code[at..word_end].iter().collect();
        let followed_by_path =
            code.get(word_end) == Some(&':') && code.get(word_end + 1) == Some(&':');
        let (paths, end) = match word.as_str() {
            "crate" if followed_by_path => paths_from(&code, word_end + 2, Vec::new()),
            "super" | "self" if followed_by_path => {
                let own = module.iter().map(|name| (name.clone(), at)).collect();
                paths_from(&code, at, own)
            }
            _ => {
                at = word_end;
                continue;
            }
        };
        for path in paths.into_iter().filter(|path| !path.is_empty()) {
            found.push(
                path.into_iter()
                    .map(|(name, at)| (name, line_of[at]))
                    .collect(),
            );
        }
        at = end.max(word_end);
    }
    found
}

/// Every module of the harness the code of `text` names, with its line number: through
/// `crate::harness::<module>`, or `super::` and `self::` paths that reach it from `module`.
fn harness_modules(text: &str, module: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for path in named_paths(text, module) {
        if path.len() >= 2 && path[0].0 == "harness" {
            // `runner::{self, RunState}` names the module once.
            let named = (path[1].1, path[1].0.clone());
            if !found.contains(&named) {
                found.push(named);
            }
        }
    }
    found
}

/// The lines of `text` that open an `impl` of the run context's `RunState` (`impl RunState`,
/// `impl runner::RunState`, `impl Trait for RunState`).
fn impls_of_run_state(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("").trim_start();
        let Some(header) = code.strip_prefix("impl") else {
            continue;
        };
        let header = header.split('{').next().unwrap_or(header);
        let names_it = header
            .split(|c: char| !(is_ident(c)))
            .any(|word| word == "RunState");
        if names_it && header.starts_with([' ', '<']) {
            lines.push(number + 1);
        }
    }
    lines
}

/// The imports inside the harness that tangle the run context with what builds on it.
fn harness_violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    sources(&src.join("harness"), &mut files);
    let mut violations = Vec::new();
    for file in files {
        let relative = file.strip_prefix(src).expect("under src");
        let module = module_of(relative);
        let own = module.get(1).map(String::as_str).unwrap_or("");
        let text = fs::read_to_string(&file).expect("source is readable");
        let shown = relative.display();
        if own != "context" {
            for line in impls_of_run_state(&text) {
                violations.push(format!(
                    "src/{shown}:{line}: `harness::{own}` adds an `impl` to `RunState`; the run context's methods live with it, and a feature keeps its data in a type of its own"
                ));
            }
        }
        for (line, name) in harness_modules(&text, &module) {
            if own == "context" && !CONTEXT_MAY_IMPORT.contains(&name.as_str()) {
                violations.push(format!(
                    "src/{shown}:{line}: the run context imports `harness::{name}`; it is the leaf the harness's features build on, and takes only the registry's case"
                ));
            }
            if own != "runner" && name == "runner" {
                violations.push(format!(
                    "src/{shown}:{line}: `harness::{own}` imports `harness::runner`; what a feature needs of a run is in `harness::context`, and only `__private` calls the runner"
                ));
            }
        }
    }
    violations
}

#[test]
fn the_run_context_is_a_leaf_and_nothing_in_the_harness_imports_the_runner() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let violations = harness_violations(&src);
    assert!(violations.is_empty(), "\n{}", violations.join("\n"));
}

#[test]
fn a_tangled_run_context_is_caught() {
    let root = std::env::temp_dir().join(format!("probtest-context-{}", std::process::id()));
    let src = root.join("src");
    let _ = fs::remove_dir_all(&root);
    for dir in ["harness/context", "harness/runner"] {
        fs::create_dir_all(src.join(dir)).expect("folder");
    }
    let files = [
        (
            "harness/context/mod.rs",
            "// crate::harness::runner in a comment is fine\nuse crate::harness::{registry::Case, limits::Waits};\nfn f() { super::cache::note(); }\n",
        ),
        ("harness/context/waits.rs", "use super::RunState;\nuse super::super::registry;\n"),
        (
            "harness/limits.rs",
            "use crate::harness::{context,\n    runner::{self, RunState}};\nimpl runner::RunState {}\n",
        ),
        ("harness/runner/mod.rs", "use crate::harness::{context, limits};\nuse super::recorder;\n"),
    ];
    for (path, text) in files {
        fs::write(src.join(path), text).expect("written");
    }
    let mut violations = harness_violations(&src);
    let _ = fs::remove_dir_all(&root);
    violations.sort();
    assert_eq!(violations.len(), 4, "{violations:?}");
    assert!(
        violations[0].starts_with("src/harness/context/mod.rs:2:")
            && violations[0].contains("`harness::limits`")
    );
    assert!(
        violations[1].starts_with("src/harness/context/mod.rs:3:")
            && violations[1].contains("`harness::cache`")
    );
    assert!(
        violations[2].starts_with("src/harness/limits.rs:2:")
            && violations[2].contains("`harness::runner`")
    );
    assert!(
        violations[3].starts_with("src/harness/limits.rs:3:") && violations[3].contains("`impl`")
    );
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

/// The modules of `src/<layer>/` that ARCHITECTURE.md does not name (as `` `name` ``,
/// `` `name/` `` or `` `layer/name.rs` ``), so that the map cannot drift from the tree. Test
/// modules (`tests`, `*_tests`) are the rule's, not the map's.
fn unmapped_modules(src: &Path, architecture: &str) -> Vec<String> {
    let mut unmapped = Vec::new();
    for (layer, _) in LAYERS {
        let Ok(entries) = fs::read_dir(src.join(layer)) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let path = entry.path();
                if path.is_dir() {
                    return path.join("mod.rs").exists().then(|| file_name(&path));
                }
                let name = file_name(&path);
                name.strip_suffix(".rs").map(str::to_string)
            })
            .filter(|name| name != "mod" && name != "tests" && !name.ends_with("_tests"))
            .collect();
        names.sort();
        for name in names {
            let named = [
                format!("`{name}`"),
                format!("`{name}/`"),
                format!("`{layer}/{name}.rs`"),
            ]
            .iter()
            .any(|form| architecture.contains(form.as_str()));
            if !named {
                unmapped.push(format!("src/{layer}/{name}"));
            }
        }
    }
    unmapped
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn architecture_md_names_every_module_of_every_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let architecture =
        fs::read_to_string(root.join("../ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable");
    let unmapped = unmapped_modules(&root.join("src"), &architecture);
    assert!(
        unmapped.is_empty(),
        "ARCHITECTURE.md does not name these modules; add each where its layer's modules are listed:\n{}",
        unmapped.join("\n")
    );
}

#[test]
fn an_unmapped_module_is_caught() {
    let root = std::env::temp_dir().join(format!("probtest-map-{}", std::process::id()));
    let _ = fs::remove_dir_all(&root);
    fs::create_dir_all(root.join("render/fresh")).expect("folder");
    for file in [
        "render/mod.rs",
        "render/summary.rs",
        "render/orphan.rs",
        "render/fresh/mod.rs",
        "render/tests.rs",
        "render/x_tests.rs",
    ] {
        fs::write(root.join(file), "").expect("written");
    }
    let unmapped = unmapped_modules(&root, "`summary`, `fresh/`");
    let _ = fs::remove_dir_all(&root);
    assert_eq!(unmapped, ["src/render/orphan"]);
}
