//! End-to-end: `PROB_STORE` moves the session store out of the target directory, under
//! `cargo test` and under `cargo nextest run` alike, and `cargo probtest report` reads it there.
//! Nothing lands in `<target>/probtest/sessions` for those runs.

use std::path::Path;

use crate::support::{self, Fixture};

/// The session directories under `store`.
fn sessions(store: &Path) -> Vec<String> {
    std::fs::read_dir(store)
        .map(|entries| {
            entries
                .flatten()
                .filter(|entry| entry.path().is_dir())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_store_of_its_own_holds_the_sessions_of_both_runners() {
    let fixture = Fixture::builder("store")
        .test("pass", include_str!("../../fixtures/pass.rs"))
        .build();
    for (runner, key) in [("test", "store-cargo-test"), ("nextest", "store-nextest")] {
        let store = fixture.path(&format!("store-{runner}"));
        let _ = std::fs::remove_dir_all(&store);
        let store_text = store.to_string_lossy().into_owned();
        let run = match runner {
            "test" => fixture.cargo_test(&["--test", "pass"]),
            _ => fixture.nextest("run", &["--test", "pass"]),
        };
        let output = run
            .env("PROB_STORE", &store_text)
            .env("PROB_SESSION", key)
            .run();
        output.assert_code(0);
        assert_eq!(sessions(&store), [key], "{runner}: {output}");
        let shared = support::shared_target_dir()
            .join("probtest")
            .join("sessions")
            .join(key);
        assert!(!shared.exists(), "{runner} wrote {}", shared.display());
        // The report is rebuilt from the store it names.
        let report = fixture
            .probtest("report", &["--session", key], &[])
            .env("PROB_STORE", &store_text)
            .run();
        report.assert_code(0);
        assert!(report.stdout.contains("roll"), "{runner}: {report}");
    }
}
