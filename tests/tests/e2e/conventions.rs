//! End-to-end: cargo's conventions in `cargo probtest`: `--color` and `CARGO_TERM_COLOR`, `-q`,
//! `-p` and `--manifest-path` without `--`, `report` and `merge` failing a CI job when the
//! report fails, named baselines, and a build outside any crate.

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::support::{shared_target_dir, Fixture, Output};

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        Fixture::builder("conventions")
            .test("pass", include_str!("../../fixtures/pass.rs"))
            .test("fail", include_str!("../../fixtures/fail.rs"))
            .build()
    })
}

/// A key of this process alone: the fixtures share a target directory, and so its sessions.
fn key(name: &str) -> String {
    format!("conventions-{name}-{}", std::process::id())
}

/// Runs `cargo test --test <target>` as session `key`; its exit code is checked.
fn session_of(target: &str, key: &str) {
    let code = if target == "fail" { 101 } else { 0 };
    fixture()
        .cargo_test(&["--test", target])
        .env("PROB_SESSION", key)
        .run()
        .assert_code(code);
}

/// A directory of this test's own outside every crate (no `Cargo.toml` above it).
fn outside_any_crate(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("probtest-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory outside the crates");
    assert!(
        !dir.ancestors().any(|dir| dir.join("Cargo.toml").exists()),
        "{} is inside a crate",
        dir.display()
    );
    dir
}

fn has_ansi(text: &str) -> bool {
    text.contains("\x1b[")
}

#[test]
fn color_follows_the_flag_then_cargo_term_color() {
    let key = key("color");
    session_of("fail", &key);
    let report = |args: &[&str]| {
        let mut all = vec!["report", "--session", &key, "--no-fail"];
        all.extend_from_slice(args);
        fixture().cargo_probtest(&all)
    };
    // The harness sets CARGO_TERM_COLOR=never and pipes stdout: the flag overrides both.
    let always = report(&["--color", "always"]).run();
    always.assert_code(0);
    assert!(always.stdout.contains("FLAKY"), "{always}");
    assert!(has_ansi(&always.stdout), "no colors{always}");
    // Before the subcommand, as cargo takes it.
    let before = fixture()
        .cargo_probtest(&["--color=always", "report", "--session", &key, "--no-fail"])
        .run();
    assert!(has_ansi(&before.stdout), "no colors{before}");

    let never = report(&["--color", "never"])
        .env("CLICOLOR_FORCE", "1")
        .run();
    never.assert_code(0);
    assert!(never.stdout.contains("FLAKY"), "{never}");
    assert!(
        !has_ansi(&never.stdout),
        "colors under --color never{never}"
    );

    let from_cargo = report(&[]).env("CARGO_TERM_COLOR", "always").run();
    from_cargo.assert_code(0);
    assert!(
        has_ansi(&from_cargo.stdout),
        "CARGO_TERM_COLOR=always{from_cargo}"
    );
    let auto = report(&[]).env("CARGO_TERM_COLOR", "auto").run();
    assert!(!has_ansi(&auto.stdout), "auto, and stdout is a pipe{auto}");

    let bad = report(&[]).env("CARGO_TERM_COLOR", "sometimes").run();
    bad.assert_code(2);
    assert_eq!(
        bad.the_error_line(),
        "error: CARGO_TERM_COLOR=\"sometimes\": expected auto, always or never"
    );
}

#[test]
fn report_fails_on_a_failing_session_unless_told_not_to() {
    let (failing, passing) = (key("report-fail"), key("report-pass"));
    session_of("fail", &failing);
    session_of("pass", &passing);
    let report = |key: &str, args: &[&str]| {
        let mut all = vec!["report", "--session", key];
        all.extend_from_slice(args);
        fixture().cargo_probtest(&all).run()
    };
    let failed = report(&failing, &[]);
    // nextest's code for failing tests.
    failed.assert_code(100);
    assert_eq!(
        failed.sections()[0].row("coin"),
        ["1/2", "FLAKY"],
        "{failed}"
    );
    report(&failing, &["--no-fail"]).assert_code(0);
    report(&passing, &[]).assert_code(0);

    // -q: the exit code alone.
    let quiet = report(&failing, &["-q"]);
    quiet.assert_code(100);
    assert!(quiet.has_no_section(), "{quiet}");
    assert_eq!(quiet.stderr, "", "{quiet}");
}

#[test]
fn merge_fails_on_failing_shards_unless_told_not_to() {
    for (target, file) in [("fail", "shard-fail.json"), ("pass", "shard-pass.json")] {
        fixture().remove(file);
        fixture()
            .cargo_test(&["--test", target])
            .env("PROB_SESSION", key(&format!("merge-{target}")))
            .env("PROB_JSON", file)
            .run();
        assert!(fixture().path(file).is_file(), "{file} was not written");
    }
    let merge = |inputs: &[&str], args: &[&str]| {
        let mut all = vec!["merge"];
        all.extend_from_slice(inputs);
        all.extend_from_slice(&["-o", "merged.json"]);
        all.extend_from_slice(args);
        fixture().cargo_probtest(&all).run()
    };
    let failed = merge(&["shard-fail.json", "shard-pass.json"], &[]);
    failed.assert_code(100);
    assert_eq!(
        failed.sections()[0].row("coin"),
        ["1/2", "FLAKY"],
        "{failed}"
    );
    assert!(
        fixture().path("merged.json").is_file(),
        "written all the same"
    );
    merge(&["shard-fail.json", "shard-pass.json"], &["--no-fail"]).assert_code(0);
    merge(&["shard-pass.json"], &[]).assert_code(0);
    // A JSON report read back fails as its session does.
    let report = fixture()
        .cargo_probtest(&["report", "--json", "shard-fail.json"])
        .run();
    report.assert_code(100);
}

#[test]
fn run_takes_packages_and_a_manifest_path_without_the_separator_from_anywhere() {
    let workspace = Fixture::workspace(
        "conventions-ws",
        &[
            ("alpha", "", include_str!("../../fixtures/pass.rs")),
            ("beta", "", include_str!("../../fixtures/fail.rs")),
        ],
    );
    let elsewhere = outside_any_crate("elsewhere");
    let manifest = workspace.path("Cargo.toml");
    let manifest = manifest.to_str().expect("a UTF-8 path");
    let output = workspace
        .cargo_probtest(&[
            "run",
            "--manifest-path",
            manifest,
            "-p",
            "pt-conventions-ws-alpha",
        ])
        .current_dir(&elsewhere)
        .run();
    // alpha's benches pass; beta's failing coin is not run.
    output.assert_code(0);
    let section = output.section();
    assert_eq!(
        section.overall, "Overall: 8/8 passed (100%)",
        "only alpha ran{output}"
    );
    assert!(
        !output.stdout.contains("coin"),
        "beta was not selected{output}"
    );

    // Both packages, -p given twice: beta's coin fails the run.
    let both = workspace
        .cargo_probtest(&[
            "run",
            "--manifest-path",
            manifest,
            "-p",
            "pt-conventions-ws-alpha",
            "-p",
            "pt-conventions-ws-beta",
            "--color",
            "never",
        ])
        .current_dir(&elsewhere)
        .run();
    both.assert_code(101);
    assert_eq!(both.section().row("coin"), ["1/2", "FLAKY"], "{both}");

    // -q: cargo test's own quiet, and no summary.
    let quiet = workspace
        .cargo_probtest(&[
            "run",
            "-q",
            "--manifest-path",
            manifest,
            "-p",
            "pt-conventions-ws-alpha",
        ])
        .current_dir(&elsewhere)
        .run();
    quiet.assert_code(0);
    assert!(quiet.has_no_section(), "{quiet}");
    assert!(!quiet.stdout.contains("... ok"), "libtest's quiet{quiet}");
    let _ = std::fs::remove_dir_all(elsewhere);
}

#[test]
fn run_passes_color_on_to_the_summary_and_to_cargo() {
    let output = fixture()
        .probtest("run", &["--color", "always"], &["--test", "fail"])
        .run();
    output.assert_code(101);
    assert!(output.stdout.contains("FLAKY"), "{output}");
    assert!(has_ansi(&output.stdout), "the summary is colored{output}");
    // Cargo got CARGO_TERM_COLOR=always too, over the harness's never.
    assert!(
        has_ansi(&output.stderr),
        "cargo's status is colored{output}"
    );
}

#[test]
fn a_saved_baseline_is_compared_with_by_name() {
    let name = format!("conv-main-{}", std::process::id());
    let store = outside_any_crate("baseline-store");
    let store = store.to_str().expect("a UTF-8 path");
    // The latest session of a store of this test's own.
    fixture()
        .cargo_test(&["--test", "pass"])
        .env("PROB_STORE", store)
        .run()
        .assert_code(0);
    let saved = fixture()
        .cargo_probtest(&["baseline", "save", &name])
        .env("PROB_STORE", store)
        .run();
    saved.assert_code(0);
    let file = shared_target_dir()
        .join("probtest/baselines")
        .join(format!("{name}.json"));
    assert!(file.is_file(), "{} was not saved{saved}", file.display());
    assert!(
        saved.stderr.contains(&format!("PROB_BASELINE={name}")),
        "{saved}"
    );
    let listed = fixture().cargo_probtest(&["baseline", "list"]).run();
    listed.assert_code(0);
    assert!(
        listed
            .stdout
            .lines()
            .any(|line| line.starts_with(&format!("{name}\t")) && line.contains("\t8 runs\t")),
        "{listed}"
    );

    let compared = fixture()
        .cargo_test(&["--test", "pass"])
        .env("PROB_BASELINE", &name)
        .run();
    compared.assert_code(0);
    assert!(
        compared.stdout.contains("probability: baseline"),
        "no baseline section{compared}"
    );
    assert!(
        compared
            .stdout
            .contains(&format!("against {} (", file.display())),
        "{compared}"
    );

    // The same from a recorded session, by `report --baseline`.
    let session = key("baseline");
    session_of("pass", &session);
    let report = fixture()
        .cargo_probtest(&["report", "--session", &session, "--baseline", &name])
        .run();
    report.assert_code(0);
    assert!(report.stdout.contains("probability: baseline"), "{report}");

    // A name that was never saved: said in the summary, with the names there are; the session
    // fails, which `cargo probtest run` exits with.
    let unknown = format!("conv-nosuch-{}", std::process::id());
    let said = format!(
        "  Warning: PROB_BASELINE: no saved baseline {unknown} in {} (saved: ",
        file.parent().expect("the baselines").display()
    );
    let missing = fixture()
        .probtest("run", &[], &["--test", "pass"])
        .env("PROB_BASELINE", &unknown)
        .run();
    missing.assert_code(101);
    let warning = missing
        .stdout
        .lines()
        .find(|line| line.starts_with(&said))
        .unwrap_or_else(|| panic!("no warning naming the baseline{missing}"));
    assert!(
        warning.contains(&name),
        "the saved baselines are listed{missing}"
    );
    let refused = fixture()
        .cargo_probtest(&["report", "--session", &session, "--baseline", &unknown])
        .run();
    refused.assert_code(2);
    let line = refused.the_error_line();
    assert!(
        line.starts_with(&format!(
            "error: --baseline {unknown}: no saved baseline {unknown} in "
        )) && line.contains(&name),
        "{refused}"
    );

    let bad = fixture()
        .cargo_probtest(&["baseline", "save", "../escape"])
        .run();
    bad.assert_code(2);
    assert!(
        bad.the_error_line()
            .starts_with("error: baseline name \"../escape\": use letters"),
        "{bad}"
    );

    fixture()
        .cargo_probtest(&["baseline", "remove", &name])
        .run()
        .assert_code(0);
    assert!(!file.exists(), "{} was not removed", file.display());
    let gone: Output = fixture()
        .cargo_probtest(&["baseline", "remove", &name])
        .run();
    gone.assert_code(2);
    let _ = std::fs::remove_dir_all(store);
}

#[test]
fn repro_outside_any_crate_says_there_is_no_cargo_toml() {
    let dir = outside_any_crate("no-crate");
    let blob = crate::doctor::repro::blob(&crate::doctor::repro::payload("fails"));
    let output = fixture()
        .cargo_probtest(&["repro", &blob])
        .current_dir(&dir)
        .run();
    output.assert_code(2);
    assert_eq!(
        output.the_error_line(),
        format!(
            "error: repro: no Cargo.toml in {} or any parent directory: run it inside the crate, or give --manifest-path",
            dir.display()
        ),
        "{output}"
    );
    assert!(!output.stderr.contains("do not build"), "{output}");
    let _ = std::fs::remove_dir_all(dir);
}
