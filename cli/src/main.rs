//! `cargo probtest`: run a probtest suite as one session and print its summary once, render the
//! summary of a recorded session or a JSON report, and merge shard reports.
//!
//! Cargo runs it as `cargo-probtest probtest <subcommand> ...`; `cargo-probtest <subcommand>
//! ...` works too. Errors of its own (a missing file, a file that is not a probtest report, an
//! unknown session) print one `error: ...` line on stderr and exit with 2; `report` and `merge`
//! exit with 100 when the report fails.

mod baseline;
mod doctor;
mod error;
mod expected;
mod export;
mod merge;
mod outputs;
mod plan;
mod report;
mod run;
mod target;
mod ui;

use std::ffi::OsString;
use std::io::Write;

use clap::{Args, Parser, Subcommand};

use crate::baseline::BaselineArgs;
use crate::doctor::{DoctorArgs, ReproArgs};
use crate::error::{Error, EXIT_ERROR};
use crate::merge::MergeArgs;
use crate::plan::PlanArgs;
use crate::report::ReportArgs;
use crate::run::RunArgs;
use crate::ui::{Ui, UiArgs};

/// The command line as cargo passes it: `cargo-probtest probtest <subcommand> ...`.
#[derive(Parser, Clone, Debug, PartialEq, Eq)]
#[command(name = "cargo", bin_name = "cargo")]
pub enum Cli {
    /// Run probtest suites as one session; render and merge probtest reports.
    Probtest(ProbtestArgs),
}

/// The arguments after `cargo probtest`.
#[derive(Args, Clone, Debug, PartialEq, Eq)]
#[command(version, about, long_about = None)]
#[command(
    after_help = "Exit codes: 0 when everything passed; `run` passes on the runner's \
    (101 for cargo test, 100 for nextest, when a test or a gate failed); `report` and `merge` \
    exit 100 when the report fails (a gate's verdict, a failed or errored run of an ungated \
    case), 0 with --no-fail; 2 for bad input."
)]
pub struct ProbtestArgs {
    /// `--color`, `-q`, `-v`: on any subcommand.
    #[command(flatten)]
    pub ui: UiArgs,

    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `cargo probtest`.
#[derive(Subcommand, Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Run `cargo test` (or `cargo nextest run`) as one session and print its summary once.
    ///
    /// The summary covers every test process of the run: each records into the fresh session
    /// `run-<pid>-<nanos>` (passed as PROB_SESSION; with PROB_SESSION set, that session), read
    /// back once the runner exits. Under --nextest, a test nextest ran that left no record (its
    /// process died before probtest's start-up) is an error in the summary. With
    /// PROB_JSON set, the `Report:` line shows it. The exit code is the runner's: 0 when
    /// everything passed, its own nonzero code otherwise, 1 when a signal ended it.
    ///
    /// Every run runs: the runner gets --no-fail-fast unless its arguments say --fail-fast,
    /// --no-fail-fast or (nextest) --max-fail. Before running, each test binary lists the
    /// tests the arguments select; a run among them that never starts (a --fail-fast stop, a
    /// binary that never ran) is counted as not run, on its row ("3/5  5 not run"), in the
    /// JSON (`not_run`, `binaries_not_run`) and in every report file, and fails the session.
    #[command(after_help = "Examples:\n  \
        cargo probtest run -- --test evals\n  \
        cargo probtest run --nextest -- --partition count:1/2\n  \
        cargo probtest run -- --test evals -- --test-threads=1\n  \
        cargo probtest run -- --fail-fast")]
    Run(RunArgs),

    /// Print the summary of the latest session, of a given session, or of a JSON report.
    ///
    /// Sessions live in `<target>/probtest/sessions/`: one per `cargo test`, `cargo nextest run`
    /// or `cargo probtest run`, the oldest pruned. Rows are always recomputed from the runs'
    /// records, also those of a JSON report. Exit 100 when the report fails: a gate's verdict
    /// failed (or was undecided, as PROB_UNDECIDED says), a run of an ungated case failed or
    /// errored, a comparison's margin failed; 0 with --no-fail; 2 for bad input.
    #[command(after_help = "Examples:\n  \
        cargo probtest report --markdown summary.md\n  \
        cargo probtest report --json all.json --no-fail\n  \
        cargo probtest report --baseline main")]
    Report(ReportArgs),

    /// Merge shard reports into one, write it to -o, and print the merged summary.
    ///
    /// For sharded runs such as nextest's `--partition count:1/2` and `count:2/2`, each with
    /// its own PROB_JSON. The merged report holds every shard's records; its rows and totals are
    /// recomputed from them, never added up from the shards' rounded numbers. The same run of
    /// the same case in two shards is an error. Exit 100 when the merged report fails, as
    /// `report`'s; 0 with --no-fail; 2 for bad input.
    #[command(after_help = "Example:\n  \
        cargo probtest merge shard1.json shard2.json -o all.json")]
    Merge(MergeArgs),

    /// Say why a test is flaky, and print a command that makes it fail every time.
    ///
    /// Builds the tests once, then runs the test's binary directly, one fresh process per run:
    /// a baseline, then the wall clock, the OS's entropy and scheduling pinned and provoked, the
    /// network blocked, a fresh home and a scrubbed environment, the tests before it in one
    /// thread, the tests beside it in parallel. A diagnosis is verified n/n,
    /// checked against a benign value (the counterfactual) and against the baseline's rate
    /// (Fisher's exact test). Exit 0 when a diagnosis was made, 1 when the test is not flaky or
    /// nothing could be attributed, 2 for bad input.
    #[command(after_help = "Examples:\n  \
        cargo probtest doctor billing::invoice_ids_stable\n  \
        cargo probtest doctor racy_victim -p evals --test parallel --json doctor.json")]
    Doctor(DoctorArgs),

    /// Plan the suite without running it: what each gate needs, and how likely the planned runs
    /// are to pass it and to catch a rare failure.
    ///
    /// Builds the tests, has each test binary list its cases and the statistics settings it
    /// resolves (no test runs), and prints per case: the fewest runs its gate can pass with, the
    /// runs that pass it 80% of the time at the assumed true rate, the chance the planned runs
    /// do, the chance they show a failure of each rate in --flake, and, with --report, their
    /// cost at an earlier report's price.
    #[command(after_help = "Examples:\n  \
        cargo probtest plan -p evals\n  \
        cargo probtest plan --assume 0.9 --flake 0.05 --report target/probtest/evals.json")]
    Plan(PlanArgs),

    /// Run the repro the doctor printed: the test under the diagnosed perturbation.
    ///
    /// Exit 101 when the test failed (reproduced), 1 with DID NOT REPRODUCE when it passed, 2
    /// for a blob that is not valid, of a newer version, or for a test that is not there.
    Repro(ReproArgs),

    /// Save a session's report as a named baseline, list and remove them.
    ///
    /// Baselines live in `<target>/probtest/baselines/NAME.json`. PROB_BASELINE=NAME (a value
    /// that is no file and reads as a name) and `report --baseline NAME` compare with one.
    Baseline(BaselineArgs),
}

/// The arguments cargo passes, or the direct invocation's with the `probtest` cargo would have
/// put first: `cargo-probtest report` reads as `cargo-probtest probtest report`.
pub fn normalize_args(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().collect();
    if args.get(1).is_none_or(|first| first != "probtest") {
        args.insert(args.len().min(1), OsString::from("probtest"));
    }
    args
}

/// Parses a command line, with or without the leading `probtest`.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(normalize_args(args))
}

/// Runs a parsed command; the exit code on success.
pub fn dispatch(cli: &Cli) -> Result<i32, Error> {
    let Cli::Probtest(args) = cli;
    let ui = Ui::new(&args.ui)?;
    match &args.command {
        Command::Run(args) => run::run(args, &ui),
        Command::Report(args) => report::report(args, &ui),
        Command::Merge(args) => merge::merge_command(args, &ui),
        Command::Doctor(args) => doctor::doctor(args, &ui),
        Command::Repro(args) => doctor::repro(args, &ui),
        Command::Plan(args) => plan::plan(args, &ui),
        Command::Baseline(args) => baseline::baseline(args, &ui),
    }
}

fn main() {
    let cli = parse(std::env::args_os()).unwrap_or_else(|error| error.exit());
    let code = match dispatch(&cli) {
        Ok(code) => code,
        Err(error) => {
            let _ = writeln!(std::io::stderr().lock(), "error: {error}");
            EXIT_ERROR
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::PackageArgs;
    use crate::ui::ColorChoice;
    use std::path::PathBuf;

    fn ui_of(args: &[&str]) -> UiArgs {
        let Cli::Probtest(args) =
            parse(args.iter().map(OsString::from)).unwrap_or_else(|e| panic!("{e}"));
        args.ui
    }

    fn parsed(args: &[&str]) -> Command {
        let Cli::Probtest(args) =
            parse(args.iter().map(OsString::from)).unwrap_or_else(|e| panic!("{e}"));
        args.command
    }

    fn rejected(args: &[&str]) -> clap::Error {
        match parse(args.iter().map(OsString::from)) {
            Ok(cli) => panic!("{args:?} parsed as {cli:?}"),
            Err(error) => error,
        }
    }

    #[test]
    fn cargo_passes_the_subcommand_name_first() {
        let expected = Command::Run(RunArgs {
            nextest: true,
            packages: PackageArgs::default(),
            args: vec!["--test".into(), "evals".into()],
        });
        // As cargo runs it (`cargo probtest run`), and run directly, without the name.
        for prefix in [&["cargo-probtest", "probtest"][..], &["cargo-probtest"][..]] {
            let args = [prefix, &["run", "--nextest", "--", "--test", "evals"]].concat();
            assert_eq!(parsed(&args), expected, "{args:?}");
        }
    }

    #[test]
    fn run_passes_everything_after_the_separator_on() {
        assert_eq!(
            parsed(&["cargo-probtest", "probtest", "run"]),
            Command::Run(RunArgs {
                nextest: false,
                packages: PackageArgs::default(),
                args: vec![],
            })
        );
        let Command::Run(run) = parsed(&[
            "cargo-probtest",
            "probtest",
            "run",
            "--",
            "--nextest",
            "--target-dir",
            "t",
            "--",
            "--test-threads=1",
        ]) else {
            panic!("not run");
        };
        assert!(!run.nextest, "--nextest after -- belongs to cargo");
        assert_eq!(
            run.args,
            ["--nextest", "--target-dir", "t", "--", "--test-threads=1"].map(OsString::from)
        );
        // Runner arguments must come after `--`.
        let error = rejected(&["cargo-probtest", "probtest", "run", "--test", "evals"]);
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
    }

    #[test]
    fn report_takes_a_session_or_a_json_file() {
        assert_eq!(
            parsed(&["cargo-probtest", "probtest", "report"]),
            Command::Report(ReportArgs {
                session: None,
                json: None,
                json_out: None,
                markdown: None,
                junit: None,
                html: None,
                target_dir: None,
                manifest_path: None,
                baseline: None,
                no_fail: false,
                history: None,
            })
        );
        assert_eq!(
            parsed(&[
                "cargo-probtest",
                "report",
                "--session",
                "nextest-1",
                "--json-out",
                "out.json",
                "--target-dir",
                "tgt"
            ]),
            Command::Report(ReportArgs {
                session: Some("nextest-1".into()),
                json: None,
                json_out: Some(PathBuf::from("out.json")),
                markdown: None,
                junit: None,
                html: None,
                target_dir: Some(PathBuf::from("tgt")),
                manifest_path: None,
                baseline: None,
                no_fail: false,
                history: None,
            })
        );
        assert_eq!(
            parsed(&["cargo-probtest", "probtest", "report", "--json", "r.json"]),
            Command::Report(ReportArgs {
                session: None,
                json: Some(PathBuf::from("r.json")),
                json_out: None,
                markdown: None,
                junit: None,
                html: None,
                target_dir: None,
                manifest_path: None,
                baseline: None,
                no_fail: false,
                history: None,
            })
        );
        let Command::Report(history) = parsed(&["cargo-probtest", "report", "--history"]) else {
            panic!("report");
        };
        assert_eq!(history.history, Some(10));
        let Command::Report(five) = parsed(&["cargo-probtest", "report", "--history", "5"]) else {
            panic!("report");
        };
        assert_eq!(five.history, Some(5));
        assert!(rejected(&["cargo-probtest", "report", "--history", "0"])
            .to_string()
            .contains("--history"));
        assert!(
            rejected(&["cargo-probtest", "report", "--history", "--json", "r.json"])
                .to_string()
                .contains("cannot be used with")
        );
        let error = rejected(&[
            "cargo-probtest",
            "probtest",
            "report",
            "--json",
            "r.json",
            "--session",
            "s",
        ]);
        assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
    }

    #[test]
    fn merge_needs_inputs_and_an_output() {
        assert_eq!(
            parsed(&[
                "cargo-probtest",
                "probtest",
                "merge",
                "a.json",
                "b.json",
                "-o",
                "all.json"
            ]),
            Command::Merge(MergeArgs {
                inputs: vec![PathBuf::from("a.json"), PathBuf::from("b.json")],
                output: PathBuf::from("all.json"),
                no_fail: false,
            })
        );
        assert_eq!(
            parsed(&["cargo-probtest", "merge", "--output", "all.json", "a.json"]),
            Command::Merge(MergeArgs {
                inputs: vec![PathBuf::from("a.json")],
                output: PathBuf::from("all.json"),
                no_fail: false,
            })
        );
        let error = rejected(&["cargo-probtest", "probtest", "merge", "a.json", "b.json"]);
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        let error = rejected(&["cargo-probtest", "probtest", "merge", "-o", "all.json"]);
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
    }

    #[test]
    fn color_quiet_and_verbose_go_before_or_after_the_subcommand() {
        for args in [
            &["cargo-probtest", "probtest", "--color", "always", "report"][..],
            &["cargo-probtest", "probtest", "report", "--color", "always"][..],
            &["cargo-probtest", "report", "--color=always"][..],
        ] {
            assert_eq!(ui_of(args).color, Some(ColorChoice::Always), "{args:?}");
        }
        assert_eq!(
            ui_of(&["cargo-probtest", "merge", "a.json", "-o", "b.json", "-q"]),
            UiArgs {
                quiet: true,
                ..UiArgs::default()
            }
        );
        assert_eq!(ui_of(&["cargo-probtest", "-v", "run"]).verbose, 1);
        assert_eq!(ui_of(&["cargo-probtest", "run", "-vv"]).verbose, 2);
        assert_eq!(ui_of(&["cargo-probtest", "plan"]), UiArgs::default());
        let error = rejected(&["cargo-probtest", "report", "--color", "sometimes"]);
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidValue);
        let error = rejected(&["cargo-probtest", "report", "-q", "-v"]);
        assert_eq!(error.kind(), clap::error::ErrorKind::ArgumentConflict);
        // After `--`, they are cargo's own.
        let Command::Run(run) = parsed(&["cargo-probtest", "run", "--", "-q", "--color", "never"])
        else {
            panic!("run");
        };
        assert_eq!(run.args, ["-q", "--color", "never"].map(OsString::from));
    }

    #[test]
    fn run_takes_packages_and_a_manifest_path_without_the_separator() {
        let Command::Run(run) = parsed(&[
            "cargo-probtest",
            "probtest",
            "run",
            "-p",
            "evals",
            "--package=more",
            "--manifest-path",
            "ws/Cargo.toml",
            "--",
            "--test",
            "t",
        ]) else {
            panic!("run");
        };
        assert_eq!(
            run.packages,
            PackageArgs {
                manifest_path: Some(PathBuf::from("ws/Cargo.toml")),
                packages: vec!["evals".into(), "more".into()],
            }
        );
        assert_eq!(run.args, ["--test", "t"].map(OsString::from));
        let Command::Doctor(doctor) = parsed(&[
            "cargo-probtest",
            "doctor",
            "t",
            "--manifest-path",
            "ws/Cargo.toml",
            "-p",
            "evals",
        ]) else {
            panic!("doctor");
        };
        assert_eq!(doctor.manifest_path, Some(PathBuf::from("ws/Cargo.toml")));
        assert_eq!(doctor.packages, ["evals"]);
        let Command::Repro(repro) = parsed(&[
            "cargo-probtest",
            "repro",
            "pd1:x",
            "--manifest-path",
            "a/Cargo.toml",
        ]) else {
            panic!("repro");
        };
        assert_eq!(repro.manifest_path, Some(PathBuf::from("a/Cargo.toml")));
        let Command::Plan(plan) = parsed(&["cargo-probtest", "plan", "--manifest-path", "p"])
        else {
            panic!("plan");
        };
        assert_eq!(plan.manifest_path, Some(PathBuf::from("p")));
    }

    #[test]
    fn repro_prints_or_runs_under_a_debugger_with_its_arguments() {
        let Command::Repro(repro) = parsed(&[
            "cargo-probtest",
            "repro",
            "pd1:x",
            "--debugger",
            "gdb",
            "--",
            "-batch",
            "-ex",
            "run",
        ]) else {
            panic!("repro");
        };
        assert_eq!(repro.debugger, Some(crate::doctor::Debugger::Gdb));
        assert_eq!(
            repro.debugger_args,
            ["-batch", "-ex", "run"].map(OsString::from)
        );
        assert!(!repro.print);
        let Command::Repro(repro) = parsed(&["cargo-probtest", "repro", "pd1:x", "--print"]) else {
            panic!("repro");
        };
        assert!(repro.print && repro.debugger.is_none());
        for args in [
            &[
                "cargo-probtest",
                "repro",
                "pd1:x",
                "--print",
                "--debugger",
                "rr",
            ][..],
            &["cargo-probtest", "repro", "pd1:x", "--debugger", "ddd"],
            &["cargo-probtest", "repro", "pd1:x", "--", "-batch"],
        ] {
            rejected(args);
        }
    }

    #[test]
    fn report_and_merge_take_no_fail_and_report_a_baseline() {
        let Command::Report(report) = parsed(&[
            "cargo-probtest",
            "report",
            "--no-fail",
            "--baseline",
            "main",
            "--manifest-path",
            "ws/Cargo.toml",
        ]) else {
            panic!("report");
        };
        assert!(report.no_fail);
        assert_eq!(report.baseline.as_deref(), Some("main"));
        assert_eq!(report.manifest_path, Some(PathBuf::from("ws/Cargo.toml")));
        let Command::Merge(merge) = parsed(&[
            "cargo-probtest",
            "merge",
            "a.json",
            "-o",
            "b.json",
            "--no-fail",
        ]) else {
            panic!("merge");
        };
        assert!(merge.no_fail);
        assert_eq!(
            rejected(&[
                "cargo-probtest",
                "report",
                "--history",
                "--baseline",
                "main"
            ])
            .kind(),
            clap::error::ErrorKind::ArgumentConflict
        );
    }

    #[test]
    fn baseline_saves_lists_and_removes_by_name() {
        use crate::baseline::{Action, Place};
        let Command::Baseline(baseline) = parsed(&[
            "cargo-probtest",
            "probtest",
            "baseline",
            "save",
            "main",
            "--session",
            "s1",
            "--target-dir",
            "t",
        ]) else {
            panic!("baseline");
        };
        let Action::Save(save) = baseline.action else {
            panic!("save");
        };
        assert_eq!(save.name, "main");
        assert_eq!(save.session.as_deref(), Some("s1"));
        assert_eq!(save.place.target_dir, Some(PathBuf::from("t")));
        let Command::Baseline(baseline) = parsed(&["cargo-probtest", "baseline", "list"]) else {
            panic!("baseline");
        };
        assert_eq!(baseline.action, Action::List(Place::default()));
        let Command::Baseline(baseline) = parsed(&["cargo-probtest", "baseline", "remove", "x"])
        else {
            panic!("baseline");
        };
        assert!(matches!(baseline.action, Action::Remove(remove) if remove.name == "x"));
        assert_eq!(
            rejected(&["cargo-probtest", "baseline", "save"]).kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        assert_eq!(
            rejected(&[
                "cargo-probtest",
                "baseline",
                "save",
                "a",
                "--session",
                "s",
                "--json",
                "r"
            ])
            .kind(),
            clap::error::ErrorKind::ArgumentConflict
        );
    }

    #[test]
    fn a_missing_subcommand_or_an_unknown_one_is_a_usage_error() {
        assert_eq!(rejected(&["cargo-probtest", "probtest"]).exit_code(), 2);
        assert_eq!(rejected(&["cargo-probtest"]).exit_code(), 2);
        let error = rejected(&["cargo-probtest", "probtest", "frobnicate"]);
        assert_eq!(error.kind(), clap::error::ErrorKind::InvalidSubcommand);
        assert_eq!(error.exit_code(), 2);
    }

    #[test]
    fn the_command_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
