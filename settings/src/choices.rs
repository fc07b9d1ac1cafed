//! The settings whose value is one of a few names, each read once into an enum of its own, so
//! that no reader compares the name again: the runtime maps each to its own type (`Method`,
//! `Undecided`, `ErrorPolicy`, `Adjustment`, `StopMode`, the cassette's mode).

/// One of `choices`' names, in any case, as the value it stands for.
pub fn parse_choice<T: Copy>(text: &str, choices: &[(&'static str, T)]) -> Result<T, String> {
    let wanted = text.trim().to_ascii_lowercase();
    choices
        .iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, value)| *value)
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(name, _)| *name).collect();
            let (last, first) = names.split_last().unwrap_or((&"", &[]));
            let listed = if first.is_empty() {
                last.to_string()
            } else {
                format!("{} or {last}", first.join(", "))
            };
            format!("expected {listed}, got `{text}`")
        })
}

/// An interval method a user picks (`PROB_METHOD`, config `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `exact`, or `clopper-pearson`.
    Exact,
    /// `wilson`.
    Wilson,
    /// `bayes`.
    Bayes,
}

/// `exact`, `wilson` or `bayes`, in any case, or `clopper-pearson` for `exact`.
pub fn parse_method(text: &str) -> Result<Method, String> {
    if text.trim().eq_ignore_ascii_case("clopper-pearson") {
        return Ok(Method::Exact);
    }
    parse_choice(
        text,
        &[
            ("exact", Method::Exact),
            ("wilson", Method::Wilson),
            ("bayes", Method::Bayes),
        ],
    )
}

/// What an UNDECIDED gate does to the session (`PROB_UNDECIDED`, config `undecided`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undecided {
    /// `fail`: it fails the session.
    Fail,
    /// `pass`: it lets the session pass.
    Pass,
}

/// `fail` or `pass`.
pub fn parse_undecided(text: &str) -> Result<Undecided, String> {
    parse_choice(
        text,
        &[("fail", Undecided::Fail), ("pass", Undecided::Pass)],
    )
}

/// How errored runs enter gates (`PROB_ERRORS`, config `errors`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errors {
    /// `count`: as non-passes.
    Count,
    /// `exclude`: out of the sample.
    Exclude,
}

/// `count` or `exclude`.
pub fn parse_errors(text: &str) -> Result<Errors, String> {
    parse_choice(
        text,
        &[("count", Errors::Count), ("exclude", Errors::Exclude)],
    )
}

/// The comparisons' p-value adjustment (`PROB_ADJUST`, config `adjust`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjustment {
    /// `none`.
    None,
    /// `holm`.
    Holm,
    /// `bonferroni`.
    Bonferroni,
    /// `bh`: Benjamini-Hochberg.
    Bh,
}

/// `none`, `holm`, `bonferroni` or `bh`. Case counts, as it always has for this setting.
pub fn parse_adjustment(text: &str) -> Result<Adjustment, String> {
    const ADJUSTMENTS: [(&str, Adjustment); 4] = [
        ("none", Adjustment::None),
        ("holm", Adjustment::Holm),
        ("bonferroni", Adjustment::Bonferroni),
        ("bh", Adjustment::Bh),
    ];
    ADJUSTMENTS
        .into_iter()
        .find(|(name, _)| *name == text.trim())
        .map(|(_, adjustment)| adjustment)
        .ok_or_else(|| format!("expected none, holm, bonferroni or bh, got `{text}`"))
}

/// When a gated case's remaining runs are skipped (`PROB_STOP`, config `stop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `off`: never.
    Off,
    /// `curtail`: once its verdict can no longer change.
    Curtail,
    /// `sequential`: once the confidence sequence decides it.
    Sequential,
}

/// `off`, `curtail` or `sequential`.
pub fn parse_stop(text: &str) -> Result<Stop, String> {
    parse_choice(
        text,
        &[
            ("off", Stop::Off),
            ("curtail", Stop::Curtail),
            ("sequential", Stop::Sequential),
        ],
    )
}

/// What `probtest::cached` does (`PROB_CACHE`, config `cache`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// `record`: call, and store the value.
    Record,
    /// `replay`: return the stored value without calling.
    Replay,
    /// `off`: call.
    Off,
}

/// `record`, `replay` or `off`.
pub fn parse_cache(text: &str) -> Result<Cache, String> {
    parse_choice(
        text,
        &[
            ("record", Cache::Record),
            ("replay", Cache::Replay),
            ("off", Cache::Off),
        ],
    )
}
