//! What a row's recorded runs answered: the cassette's values of each run, read back from the
//! doctor's own cassette directory, and a failing run's message said as the answer it judged
//! ("the model answered `Shipping` where the test expects `Refund`").

use std::collections::BTreeMap;
use std::path::Path;

/// The longest value shown for one key; the rest is cut with `…`.
const SHOWN_VALUE: usize = 80;

/// The values each run recorded, by run number: each key with its value as compact JSON, in
/// key order. Only entries of the row's runs are there: the doctor's cassette directory is its
/// own, and one process of the row's items recorded into it.
pub fn recorded(cassette: &Path) -> BTreeMap<u32, Vec<(String, String)>> {
    let mut runs: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
    let mut stack = vec![cassette.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(run) = run_of(&path) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let (Some(key), Some(recorded)) = (value["key"].as_str(), value.get("value")) else {
                continue;
            };
            runs.entry(run)
                .or_default()
                .push((key.to_string(), shown(&recorded.to_string())));
        }
    }
    for values in runs.values_mut() {
        values.sort();
    }
    runs
}

/// The run number of a cassette file: its directory is `run<N>`.
fn run_of(path: &Path) -> Option<u32> {
    path.parent()?
        .file_name()?
        .to_str()?
        .strip_prefix("run")?
        .parse()
        .ok()
}

/// `text` cut to [`SHOWN_VALUE`] characters.
fn shown(text: &str) -> String {
    if text.chars().count() <= SHOWN_VALUE {
        return text.to_string();
    }
    let cut: String = text.chars().take(SHOWN_VALUE - 1).collect();
    format!("{cut}…")
}

/// A failing run's message as the answer it judged: an `assert_eq!`'s two sides as "the model
/// answered `left` where the test expects `right`" (its first argument the answer, as
/// `assert_eq!(answer, expected)` is written), else the message's first line.
pub fn phrase(message: &str) -> String {
    let side = |name: &str| {
        message
            .lines()
            .find_map(|line| line.trim_start().strip_prefix(name))
            .map(str::trim)
            // A string's `Debug` quotes are not part of what it says.
            .map(|side| {
                side.strip_prefix('"')
                    .and_then(|side| side.strip_suffix('"'))
                    .unwrap_or(side)
            })
            .map(shown)
    };
    match (side("left:"), side("right:")) {
        (Some(left), Some(right)) => {
            format!("the model answered `{left}` where the test expects `{right}`")
        }
        _ => shown(message.lines().next().unwrap_or_default().trim()),
    }
}

/// Whether a run's message is the cassette refusing a replay (a key not recorded, a value
/// that no longer reads as its type, an entry that is not a file): then the replay says
/// nothing about the answers.
pub fn refused(message: &str) -> bool {
    message.contains("probtest::cached")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assert_eq_reads_as_the_answer_and_the_expectation() {
        let message = "assertion `left == right` failed: ticket: refund please\n  left: Shipping\n right: Refund";
        assert_eq!(
            phrase(message),
            "the model answered `Shipping` where the test expects `Refund`"
        );
        assert_eq!(phrase("the answer is empty\nmore"), "the answer is empty");
        assert_eq!(
            phrase("assertion `left == right` failed\n  left: \"shipping\"\n right: \"refund\""),
            "the model answered `shipping` where the test expects `refund`"
        );
        assert!(refused(
            "probtest::cached: nothing recorded under the key `a` for r run 2: no /x/a.json"
        ));
        assert!(!refused("assertion failed"));
    }

    #[test]
    fn each_runs_values_are_read_from_its_directory() {
        let dir = std::env::temp_dir().join(format!("probtest-answers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (run, key, value) in [
            (2, "b", "\"x\""),
            (2, "a", "{\"Ok\":\"refund\"}"),
            (7, "a", "1"),
        ] {
            let run_dir = dir.join("pkg/module/case").join(format!("run{run}"));
            std::fs::create_dir_all(&run_dir).expect("a directory");
            let entry =
                format!("{{\"key\": \"{key}\", \"value\": {value}, \"usage\": [], \"cost\": 0.0}}");
            std::fs::write(run_dir.join(format!("{key}.json")), entry).expect("an entry");
        }
        std::fs::write(dir.join("pkg/stray.json"), "{}").expect("a stray file");
        let runs = recorded(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            runs,
            BTreeMap::from([
                (
                    2,
                    vec![
                        ("a".to_string(), "{\"Ok\":\"refund\"}".to_string()),
                        ("b".to_string(), "\"x\"".to_string())
                    ]
                ),
                (7, vec![("a".to_string(), "1".to_string())]),
            ])
        );
    }
}
