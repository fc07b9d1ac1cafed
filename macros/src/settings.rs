//! Settings that shape the generated items, resolved at expansion time: environment variable,
//! then `[package.metadata.probtest]`, then `[workspace.metadata.probtest]`, then the default.
//!
//! Runtime-only settings (`json`, `delay`) are read from the same config here and handed to the
//! runtime inside the expansion, so the config file is parsed in one place only. The expansion
//! also names every input it read (`option_env!`, `include_bytes!`), so that cargo rebuilds
//! when one of them changes.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use probtest_settings::{
    more_than_max_runs, Phase, GATE_ITEMS, MAX_RUNS, RUNS, SETTINGS, TRANSPOSE,
};

/// Config keys read here as typed values: they shape the items (`runs`, `transpose`) or reach
/// the runtime typed (`json`, `delay`). Every other key of the table reaches it as text, parsed
/// there like its environment variable.
const TYPED_KEYS: &[&str] = &["runs", "json", "delay", "transpose", "gate_items"];

/// Environment variables read at expansion time: the settings that shape the items.
pub(crate) fn tracked_env() -> impl Iterator<Item = &'static str> {
    SETTINGS
        .iter()
        .filter(|setting| setting.phase() == Phase::Compile)
        .map(|setting| setting.variable())
}

/// Everything expansion needs from the environment and the config files.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Settings {
    /// `PROB_RUNS`, already clamped to at least 1 and checked against the cap.
    pub(crate) env_runs: Option<u32>,
    /// `PROB_TRANSPOSE`, else config, else off.
    pub(crate) transpose: bool,
    /// `PROB_GATE_ITEMS`, else config, else on.
    pub(crate) gate_items: bool,
    pub(crate) config: Config,
    /// Config files that were read, to be tracked for rebuilds.
    pub(crate) files: Vec<PathBuf>,
    /// The workspace root (the package's directory when it is not in a workspace): relative
    /// report paths resolve against it, whichever package's test process writes them.
    pub(crate) workspace_root: Option<PathBuf>,
}

/// Values from the config tables, the package's keys winning over the workspace's.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Config {
    pub(crate) runs: Option<u32>,
    /// Absolute path: a relative `json` is taken relative to the manifest that declares it.
    pub(crate) json: Option<String>,
    pub(crate) delay: Option<f64>,
    pub(crate) transpose: Option<bool>,
    pub(crate) gate_items: Option<bool>,
    /// The statistics keys as text, for the runtime to parse like their environment variables.
    pub(crate) entries: Vec<(String, String)>,
}

impl Settings {
    /// Runs per case: `PROB_RUNS`, then the attribute's `runs`, then config, then 1.
    pub(crate) fn runs(&self, attribute: Option<u32>) -> u32 {
        self.env_runs
            .or(attribute)
            .or(self.config.runs)
            .unwrap_or(1)
    }
}

/// Loads the settings for the crate being compiled, once per manifest directory.
pub(crate) fn load() -> Result<Settings, String> {
    /// Settings per manifest directory: one compiler process expands many functions.
    type Cache = Vec<(Option<String>, Result<Settings, String>)>;
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").ok();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some((_, hit)) = cache.iter().find(|(dir, _)| *dir == manifest_dir) {
        return hit.clone();
    }
    let loaded = load_uncached(manifest_dir.as_deref().map(Path::new), |name| {
        std::env::var(name).ok()
    });
    cache.push((manifest_dir, loaded.clone()));
    loaded
}

/// Whether `message`, an error of [`load`], is reported for the first time in this compiler
/// process (which compiles one crate).
pub(crate) fn first_report(message: &str) -> bool {
    static REPORTED: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut reported = REPORTED.lock().unwrap_or_else(|poison| poison.into_inner());
    if reported.iter().any(|known| known == message) {
        return false;
    }
    reported.push(message.to_string());
    true
}

pub(crate) fn load_uncached(
    manifest_dir: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Settings, String> {
    let mut settings = Settings::default();
    if let Some(dir) = manifest_dir {
        read_config(dir, &mut settings)?;
    }
    settings.env_runs = RUNS.from_env(&env)?;
    settings.transpose = TRANSPOSE
        .from_env(&env)?
        .unwrap_or(settings.config.transpose.unwrap_or(false));
    settings.gate_items = GATE_ITEMS
        .from_env(&env)?
        .unwrap_or(settings.config.gate_items.unwrap_or(true));
    Ok(settings)
}

/// Whether the table has a config key `key`.
fn is_config_key(key: &str) -> bool {
    SETTINGS.iter().any(|setting| setting.key() == Some(key))
}

fn read_config(manifest_dir: &Path, settings: &mut Settings) -> Result<(), String> {
    let package_manifest = manifest_dir.join("Cargo.toml");
    let Some(package) = read_toml(&package_manifest)? else {
        return Ok(());
    };
    settings.files.push(package_manifest.clone());
    settings.workspace_root = Some(manifest_dir.to_path_buf());
    let mut tables = Vec::new();
    if let Some(table) = metadata_table(&package, "package") {
        tables.push((
            table,
            manifest_dir.to_path_buf(),
            package_manifest.clone(),
            "package",
        ));
    }
    let workspace = if package.get("workspace").is_some() {
        Some((package.clone(), package_manifest.clone()))
    } else {
        find_workspace_manifest(manifest_dir)?
    };
    if let Some((root, path)) = workspace {
        if path != package_manifest {
            settings.files.push(path.clone());
        }
        settings.workspace_root = path.parent().map(Path::to_path_buf);
        if let Some(table) = metadata_table(&root, "workspace") {
            let dir = path.parent().unwrap_or(manifest_dir).to_path_buf();
            tables.push((table, dir, path, "workspace"));
        }
    }
    // Package keys come first, so the first table that has a key wins.
    for (table, dir, path, section) in tables.iter().rev() {
        apply_table(table, dir, path, section, &mut settings.config)?;
    }
    Ok(())
}

fn read_toml(path: &Path) -> Result<Option<toml::Table>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => text
            .parse::<toml::Table>()
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(_) => Ok(None),
    }
}

fn metadata_table(root: &toml::Table, section: &str) -> Option<toml::Table> {
    root.get(section)?
        .get("metadata")?
        .get("probtest")?
        .as_table()
        .cloned()
}

fn find_workspace_manifest(start: &Path) -> Result<Option<(toml::Table, PathBuf)>, String> {
    for dir in start.ancestors().skip(1) {
        let path = dir.join("Cargo.toml");
        if let Some(table) = read_toml(&path)? {
            if table.get("workspace").is_some() {
                return Ok(Some((table, path)));
            }
        }
    }
    Ok(None)
}

fn apply_table(
    table: &toml::Table,
    dir: &Path,
    path: &Path,
    section: &str,
    config: &mut Config,
) -> Result<(), String> {
    let at = |key: &str| format!("{}: [{section}.metadata.probtest] {key}", path.display());
    for (key, value) in table {
        match key.as_str() {
            "runs" => {
                let runs = value
                    .as_integer()
                    .ok_or_else(|| format!("{} must be a whole number, got {value}", at(key)))?;
                config.runs = Some(
                    u32::try_from(runs.max(1))
                        .ok()
                        .filter(|runs| *runs <= MAX_RUNS)
                        .ok_or_else(|| more_than_max_runs(&format!("{} = {runs}", at(key))))?,
                );
            }
            "json" => {
                let json = value
                    .as_str()
                    .ok_or_else(|| format!("{} must be a path string, got {value}", at(key)))?;
                config.json = Some(normalize(&dir.join(json)).to_string_lossy().into_owned());
            }
            "delay" => {
                let delay = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64))
                    .filter(|d| d.is_finite() && *d >= 0.0)
                    .ok_or_else(|| {
                        format!("{} must be a number of seconds >= 0, got {value}", at(key))
                    })?;
                config.delay = Some(delay);
            }
            "transpose" => {
                config.transpose =
                    Some(value.as_bool().ok_or_else(|| {
                        format!("{} must be true or false, got {value}", at(key))
                    })?);
            }
            "gate_items" => {
                config.gate_items =
                    Some(value.as_bool().ok_or_else(|| {
                        format!("{} must be true or false, got {value}", at(key))
                    })?);
            }
            "limits" => {
                let text = limits_text(value).map_err(|why| format!("{}{why}", at(key)))?;
                config.entries.retain(|(known, _)| known != key);
                config.entries.push((key.to_string(), text));
            }
            key if is_config_key(key) && !TYPED_KEYS.contains(&key) => {
                let text = match value {
                    toml::Value::String(text) => text.clone(),
                    toml::Value::Integer(number) => number.to_string(),
                    toml::Value::Float(number) => number.to_string(),
                    toml::Value::Boolean(flag) => flag.to_string(),
                    toml::Value::Array(items) => items
                        .iter()
                        .map(|item| match item {
                            toml::Value::String(text) => text.clone(),
                            other => other.to_string(),
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                    other => {
                        return Err(format!(
                            "{} must be a string, number, boolean or list, got {other}",
                            at(key)
                        ))
                    }
                };
                // Checked here with the row's own parser, so that a bad value fails the build
                // naming its file and key instead of erroring every run; the runtime parses
                // it again (the variable may override it).
                if let Some(row) = SETTINGS.iter().find(|row| row.key() == Some(key)) {
                    row.check(&text)
                        .map_err(|why| format!("{} = {value}: {why}", at(key)))?;
                }
                // The package's table is applied last and wins.
                config.entries.retain(|(known, _)| known != key);
                config.entries.push((key.to_string(), text));
            }
            other => {
                return Err(format!(
                "{}: unknown key `{other}` in [{section}.metadata.probtest]; expected one of: {}",
                path.display(),
                SETTINGS
                    .iter()
                    .filter_map(|setting| setting.key())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            }
        }
    }
    Ok(())
}

/// `[..metadata.probtest.limits]` as the runtime reads it: `openai=4/60,local=2/`, each key's
/// concurrency and per-minute limit (either may be empty). A key given as a number is its
/// concurrency.
fn limits_text(value: &toml::Value) -> Result<String, String> {
    let table = value
        .as_table()
        .ok_or_else(|| format!(" must be a table of limits, got {value}"))?;
    let count = |name: &str, field: &str, value: Option<&toml::Value>| match value {
        None => Ok(String::new()),
        Some(value) => value
            .as_integer()
            .filter(|n| *n >= 1 && *n <= i64::from(u32::MAX))
            .map(|n| n.to_string())
            .ok_or_else(|| {
                format!(".{name}.{field} must be a whole number at least 1, got {value}")
            }),
    };
    let mut parts = Vec::new();
    for (name, limit) in table {
        // The text below splits on these: `"a,b=1/2"` would set another key's limits.
        probtest_settings::check_limit_key(name).map_err(|why| format!(": {why}"))?;
        let (concurrency, per_minute) = match limit {
            toml::Value::Integer(_) => (count(name, "concurrency", Some(limit))?, String::new()),
            toml::Value::Table(fields) => {
                if let Some(other) = fields
                    .keys()
                    .find(|field| *field != "concurrency" && *field != "per_minute")
                {
                    return Err(format!(
                        ".{name}: unknown key `{other}`; expected concurrency, per_minute"
                    ));
                }
                (
                    count(name, "concurrency", fields.get("concurrency"))?,
                    count(name, "per_minute", fields.get("per_minute"))?,
                )
            }
            other => {
                return Err(format!(
                    ".{name} must be {{ concurrency = N, per_minute = M }}, got {other}"
                ))
            }
        };
        parts.push(format!("{name}={concurrency}/{per_minute}"));
    }
    Ok(parts.join(","))
}

/// Removes `.` and `..` components without touching the file system, so that the report path
/// reads cleanly in the summary.
fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("probtest-settings-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn report_paths_are_normalized() {
        assert_eq!(
            normalize(Path::new("/ws/member/../target/./r.json")),
            PathBuf::from("/ws/target/r.json")
        );
        assert_eq!(
            normalize(Path::new("../x.json")),
            PathBuf::from("../x.json")
        );
    }

    #[test]
    fn runs_precedence_is_env_then_attribute_then_config() {
        let mut settings = Settings::default();
        assert_eq!(settings.runs(None), 1);
        settings.config.runs = Some(4);
        assert_eq!(settings.runs(None), 4);
        assert_eq!(settings.runs(Some(7)), 7);
        settings.env_runs = Some(2);
        assert_eq!(settings.runs(Some(7)), 2);
    }

    #[test]
    fn bad_environment_values_name_the_variable_and_value() {
        let err = load_uncached(None, env_of(&[("PROB_RUNS", "ten")])).unwrap_err();
        assert_eq!(err, "PROB_RUNS: expected a whole number of runs, got `ten`");
        let err = load_uncached(None, env_of(&[("PROB_TRANSPOSE", "maybe")])).unwrap_err();
        assert!(err.starts_with("PROB_TRANSPOSE: expected"), "{err}");
        assert!(err.ends_with("got `maybe`"), "{err}");
    }

    #[test]
    fn run_counts_over_the_cap_name_their_setting() {
        let err = load_uncached(None, env_of(&[("PROB_RUNS", "1000000000")])).unwrap_err();
        assert_eq!(
            err,
            "PROB_RUNS: `1000000000` is more than 100000 runs per case, the most probtest generates"
        );
        let settings = load_uncached(None, env_of(&[("PROB_RUNS", "100000")])).expect("valid");
        assert_eq!(settings.env_runs, Some(probtest_settings::MAX_RUNS));

        let dir = temp_dir("cap");
        let manifest = dir.join("Cargo.toml");
        for runs in ["1000000000", "10000000000000"] {
            std::fs::write(
                &manifest,
                format!("[package]\nname = \"m\"\n[package.metadata.probtest]\nruns = {runs}\n"),
            )
            .expect("write");
            let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
            assert_eq!(
                err,
                format!(
                    "{}: [package.metadata.probtest] runs = {runs} is more than 100000 runs per case, the most probtest generates",
                    manifest.display()
                )
            );
        }
        std::fs::write(
            &manifest,
            "[package]\nname = \"m\"\n[package.metadata.probtest]\nruns = 100000\n",
        )
        .expect("write");
        let settings = load_uncached(Some(&dir), env_of(&[])).expect("valid");
        assert_eq!(settings.config.runs, Some(probtest_settings::MAX_RUNS));
    }

    #[test]
    fn low_run_counts_clamp_to_one() {
        for value in ["0", "-3"] {
            let settings = load_uncached(None, env_of(&[("PROB_RUNS", value)])).expect("valid");
            assert_eq!(settings.env_runs, Some(1));
        }
        let settings = load_uncached(None, env_of(&[("PROB_RUNS", " 12 ")])).expect("valid");
        assert_eq!(settings.env_runs, Some(12));
    }

    #[test]
    fn package_keys_win_over_workspace_keys() {
        let root = temp_dir("layers");
        std::fs::write(
            root.join("Cargo.toml"),
            "[workspace]\n[workspace.metadata.probtest]\nruns = 3\ndelay = 0.5\njson = \"out/all.json\"\n",
        )
        .expect("write");
        let member = root.join("member");
        std::fs::create_dir_all(&member).expect("dir");
        std::fs::write(
            member.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest]\nruns = 5\ntranspose = true\n",
        )
        .expect("write");
        let settings = load_uncached(Some(&member), env_of(&[])).expect("valid");
        assert_eq!(settings.config.runs, Some(5));
        assert_eq!(settings.config.delay, Some(0.5));
        assert!(settings.transpose);
        assert_eq!(
            settings.config.json.as_deref(),
            Some(root.join("out/all.json").to_string_lossy().as_ref())
        );
        assert_eq!(
            settings.files,
            [member.join("Cargo.toml"), root.join("Cargo.toml")]
        );
        assert_eq!(settings.workspace_root.as_deref(), Some(root.as_path()));
        // The environment still wins over config.
        let settings =
            load_uncached(Some(&member), env_of(&[("PROB_TRANSPOSE", "0")])).expect("valid");
        assert!(!settings.transpose);
    }

    /// The text a config key is kept as for the runtime.
    fn config_text(settings: &Settings, key: &str) -> Option<String> {
        settings
            .config
            .entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn statistics_keys_are_kept_as_text_for_the_runtime() {
        let dir = temp_dir("stats");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest]\nconfidence = 0.9\nprior = [1, 2]\nmetrics = [\"pass^3\", \"pass@5\"]\nexplain = true\n",
        )
        .expect("write");
        let settings = load_uncached(Some(&dir), env_of(&[])).expect("valid");
        let text = |key: &str| config_text(&settings, key);
        assert_eq!(text("confidence").as_deref(), Some("0.9"));
        assert_eq!(text("prior").as_deref(), Some("1,2"));
        assert_eq!(text("metrics").as_deref(), Some("pass^3,pass@5"));
        assert_eq!(text("explain").as_deref(), Some("true"));
    }

    #[test]
    fn limits_are_kept_as_text_for_the_runtime() {
        let dir = temp_dir("limits");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest]\ntimeout = \"30s\"\n[package.metadata.probtest.limits]\nopenai = { concurrency = 4, per_minute = 60 }\nlocal = 2\nslow = { per_minute = 6 }\n",
        )
        .expect("write");
        let settings = load_uncached(Some(&dir), env_of(&[])).expect("valid");
        let text = |key: &str| config_text(&settings, key);
        assert_eq!(text("timeout").as_deref(), Some("30s"));
        assert_eq!(
            text("limits").as_deref(),
            Some("local=2/,openai=4/60,slow=/6")
        );
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest.limits]\nopenai = { concurrency = 0 }\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert!(
            err.ends_with("[package.metadata.probtest] limits.openai.concurrency must be a whole number at least 1, got 0"),
            "{err}"
        );
    }

    #[test]
    fn a_bad_runtime_value_in_the_config_fails_the_build_naming_file_and_key() {
        let dir = temp_dir("bad-runtime");
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"m\"\n[package.metadata.probtest]\nconfidence = 95\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert_eq!(
            err,
            format!(
                "{}: [package.metadata.probtest] confidence = 95: expected a number strictly between 0 and 1, got `95`; did you mean 0.95?",
                manifest.display()
            )
        );
        std::fs::write(
            &manifest,
            "[package]\nname = \"m\"\n[package.metadata.probtest]\ntimeout = \"soon\"\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert!(
            err.ends_with("[package.metadata.probtest] timeout = \"soon\": expected a duration such as `30s` or `1m30s`, got `soon`"),
            "{err}"
        );
    }

    #[test]
    fn a_limit_key_that_would_split_the_limits_text_is_refused() {
        let dir = temp_dir("limit-key");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest.limits]\n\"zz,weird=1/2,yy\" = 3\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert!(
            err.ends_with("[package.metadata.probtest] limits: the limit key \"zz,weird=1/2,yy\" holds `,`; a limit key cannot hold `,`, `=` or `/` (use letters, digits, `-`, `_` or `.`)"),
            "{err}"
        );
    }

    #[test]
    fn bad_config_values_name_file_key_and_value() {
        let dir = temp_dir("bad");
        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest]\ndelay = -1\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert!(
            err.contains(
                "[package.metadata.probtest] delay must be a number of seconds >= 0, got -1"
            ),
            "{err}"
        );

        std::fs::write(
            dir.join("Cargo.toml"),
            "[package]\nname = \"m\"\n[package.metadata.probtest]\nrun = 3\n",
        )
        .expect("write");
        let err = load_uncached(Some(&dir), env_of(&[])).unwrap_err();
        assert!(err.contains("unknown key `run`"), "{err}");
        assert!(
            err.contains("expected one of: runs, json, delay, transpose, gate_items, method,"),
            "{err}"
        );
    }
}
