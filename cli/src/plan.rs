//! `cargo probtest plan`: the plan of the suite without running it. The tests are built, each
//! test binary lists its cases and the statistics settings it resolves (`PROB_ITEMS_OUT`, with
//! `--list`, so no test runs), and the plan is built and rendered by the runtime.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use probtest::planning::{self, Plan, PlanSettings};
use probtest::stats::StatsConfig;
use probtest::CaseInfo;

use crate::doctor::cargo::{self, Selection};
use crate::error::Error;
use crate::ui::Ui;

/// The arguments of `cargo probtest plan`.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct PlanArgs {
    /// The packages to plan (cargo test's `-p`).
    #[arg(short = 'p', long = "package", value_name = "PKG")]
    pub packages: Vec<String>,

    /// Path to the workspace's or package's Cargo.toml (cargo's `--manifest-path`).
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,

    /// One integration test target (cargo test's `--test`).
    #[arg(long = "test", value_name = "TARGET", conflicts_with = "lib")]
    pub target: Option<String>,

    /// The library's unit tests only.
    #[arg(long)]
    pub lib: bool,

    /// The true pass rate to plan for, strictly between 0 and 1.
    #[arg(long, value_name = "RATE", default_value_t = 0.97, value_parser = rate)]
    pub assume: f64,

    /// Failure rates to plan to catch, comma-separated, each strictly between 0 and 1.
    #[arg(long, value_name = "RATES", value_delimiter = ',', default_value = "0.1,0.01", value_parser = rate)]
    pub flake: Vec<f64>,

    /// An earlier JSON report (ours or pytest-probability's) whose cost per run of each case
    /// prices the plan.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,

    /// Also write the plan as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// More `cargo test` arguments (features, profile), after `--`.
    #[arg(last = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

// The rates are finite (checked by `rate`), so equality is total: the command line compares.
impl Eq for PlanArgs {}

/// A rate strictly between 0 and 1.
fn rate(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("expected a rate strictly between 0 and 1, got `{text}`"))?;
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(format!(
            "expected a rate strictly between 0 and 1, got `{text}`"
        ))
    }
}

/// Runs `cargo probtest plan`: 0 with the plan printed.
pub fn plan(args: &PlanArgs, ui: &Ui) -> Result<i32, Error> {
    let prices = match &args.report {
        Some(path) => Some((path.display().to_string(), prices(path)?)),
        None => None,
    };
    let selection = Selection {
        packages: args.packages.clone(),
        test_target: args.target.clone(),
        lib: args.lib,
        extra: args.args.clone(),
        manifest_path: args.manifest_path.clone(),
    };
    let binaries = cargo::build(&selection, ui)?;
    let mut cases: Vec<CaseInfo> = Vec::new();
    let mut config: Option<StatsConfig> = None;
    for binary in &binaries {
        let listing = binary.listing()?;
        if listing["cases"].is_null() {
            // A binary without probtest lists nothing of itself.
            continue;
        }
        if let Some(problem) = listing["problem"].as_str() {
            return Err(Error::about(binary.path.display(), problem));
        }
        let listed: Vec<CaseInfo> =
            serde_json::from_value(listing["cases"].clone()).map_err(|error| {
                Error::about(
                    binary.path.display(),
                    format!("lists cases this cargo-probtest cannot read ({error})"),
                )
            })?;
        if config.is_none() && !listed.is_empty() {
            config = serde_json::from_value(listing["stats_config"].clone()).ok();
        }
        for case in listed {
            // A library's cases are listed by each binary that links it.
            if !cases.iter().any(|seen| seen.key() == case.key()) {
                cases.push(case);
            }
        }
    }
    let settings = PlanSettings {
        assume: args.assume,
        flakes: dedup(&args.flake),
        ..PlanSettings::default()
    };
    let plan = Plan::build(&cases, &config.unwrap_or_default(), settings, prices);
    if let Some(path) = &args.json {
        let mut text =
            serde_json::to_string_pretty(&plan).map_err(|error| Error::new(error.to_string()))?;
        text.push('\n');
        probtest::__cli::store::write_file(path, text.as_bytes())
            .map_err(|error| Error::about(path.display(), format!("cannot write ({error})")))?;
    }
    let mut stdout = std::io::stdout().lock();
    if cases.is_empty() {
        let _ = writeln!(
            stdout,
            "probtest: no #[probability] cases in the selected test targets; nothing to plan"
        );
        return Ok(0);
    }
    let _ = stdout.write_all(planning::render(&plan, ui.color).as_bytes());
    Ok(0)
}

/// The rates without repeats, in the order given.
fn dedup(rates: &[f64]) -> Vec<f64> {
    let mut seen = Vec::new();
    for rate in rates {
        if !seen.contains(rate) {
            seen.push(*rate);
        }
    }
    seen
}

/// Each case's cost per run in an earlier report: its row's `cost` over its `total`, as
/// pytest-probability plans.
fn prices(path: &Path) -> Result<BTreeMap<String, f64>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| Error::about(path.display(), format!("cannot read ({error})")))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|error| Error::about(path.display(), format!("is not JSON ({error})")))?;
    let rows = value["rows"].as_array().ok_or_else(|| {
        Error::about(
            path.display(),
            "is not a probtest or pytest-probability report (no rows)",
        )
    })?;
    let mut prices = BTreeMap::new();
    for row in rows {
        let (Some(case), Some(total)) = (row["case"].as_str(), row["total"].as_u64()) else {
            return Err(Error::about(
                path.display(),
                "has a row without case and total",
            ));
        };
        // A row that spent nothing has no cost (`null`): it is priced at nothing.
        let cost = row["cost"].as_f64().unwrap_or(0.0);
        if total > 0 && cost.is_finite() {
            prices.insert(case.to_string(), cost / total as f64);
        }
    }
    Ok(prices)
}
