//! Reconciling a session with what the runner says it ran (`cargo probtest run --nextest`):
//! for each executed item that left no record, an error, so that a test process killed before
//! probtest's start-up is counted all the same. The items come from `listed_items`.
//!
//! Layer: store.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::io;

use crate::format::store_lines::{case_line, end_line, identity_fragment, start_line};
use crate::model::record::died_record;
use crate::model::Record;
use crate::store::key::now_nanos;
use crate::store::session_dir::{Session, SessionData};
use crate::types::count::thousands;
use crate::types::key::CaseKey;

/// A test the runner says it executed, for [`Session::reconcile`].
#[derive(Clone, Debug, PartialEq)]
pub struct Executed {
    /// `<binary id>$<test name>`, as nextest names tests in its machine-readable output.
    pub name: String,
    /// How long the runner says it ran, in seconds.
    pub elapsed: f64,
    /// Whether its output says its run could not be recorded in the session store.
    pub unrecorded: bool,
}

/// The message of a run that nextest executed and that left no trace in the session: its
/// process died before probtest's start-up.
pub const DIED_BEFORE_SEEN: &str = "the test process died before probtest saw it";

/// The message of a run that nextest executed and whose process could not record it.
pub const NOT_RECORDED: &str = "the test process could not record the run in the session store";

impl Session {
    /// Everything the session recorded, and an error for every generated item the runner
    /// executed that left no record in it. The runner's word is `executed`; which tests are
    /// generated items, and which case and run each holds, the session learned when nextest
    /// listed its binaries (under `cargo probtest run --nextest`). The errors are also
    /// appended to the store, so that later readers see them; when that fails (a full disk),
    /// the data says so among its warnings.
    pub fn reconcile(&self, executed: &[Executed]) -> io::Result<SessionData> {
        let mut data = self.load()?;
        let seen: std::collections::HashSet<(CaseKey, u32)> = data
            .records
            .iter()
            .map(|record| (record.key().to_owned_key(), record.run))
            .collect();
        let mut described: BTreeSet<CaseKey> = data
            .cases
            .iter()
            .map(|info| info.key().to_owned_key())
            .collect();
        let proc = format!("reconciled-{}-{}", std::process::id(), now_nanos());
        let mut lines = String::new();
        let mut added = 0u64;
        for (seq, item) in executed.iter().enumerate() {
            let Some((info, run)) = data.items.get(&item.name) else {
                continue;
            };
            if seen.contains(&(info.key().to_owned_key(), *run)) {
                continue;
            }
            let info = info.clone();
            let record = Record {
                message: Some(
                    if item.unrecorded {
                        NOT_RECORDED
                    } else {
                        DIED_BEFORE_SEEN
                    }
                    .to_string(),
                ),
                elapsed: item.elapsed,
                ..died_record(
                    Cow::Owned(info.package.clone()),
                    Cow::Owned(info.module.clone()),
                    Cow::Owned(info.case.clone()),
                    *run,
                    1,
                )
            };
            let seq = seq as u64;
            if described.insert(info.key().to_owned_key()) {
                lines.push('\n');
                lines.push_str(&case_line(&info, None)?);
                data.cases.push(info);
            }
            // Through the writers every run's lines go through, so that the log's reader
            // reads these as it reads the others.
            let identity = identity_fragment(&record.package, &record.module, &record.case);
            lines.push_str(&start_line(
                &proc,
                seq,
                &identity,
                record.run,
                record.attempt,
            ));
            lines.push_str(&end_line(&proc, seq, &record)?);
            data.records.push(record);
            data.open.push(None);
            added += 1;
        }
        data.reconciled = added;
        if added == 0 {
            return Ok(data);
        }
        let noun = if added == 1 { "test" } else { "tests" };
        data.warnings.push(format!(
            "nextest ran {} {noun} that left no record in the session; each is counted as an error",
            thousands(added)
        ));
        if let Err(error) = self.append_text(lines.as_bytes()) {
            data.warnings.push(format!(
                "the errors of those tests could not be saved in the session store ({}: {error})",
                self.runs_file().display()
            ));
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::store::test_support::session_of_two_runs;

    #[test]
    fn executed_items_without_a_record_are_reconciled_as_errors() {
        use crate::model::tests::info;
        let (sessions, session) = session_of_two_runs("reconcile");
        let mut other = info("classify::b");
        other.runs = 2;
        session
            .append_items(
                "fixture::evals",
                vec![info("classify::a"), other],
                vec![
                    ("a::run1".into(), 0, 1),
                    ("a::run2".into(), 0, 2),
                    ("b::run1".into(), 1, 1),
                    ("b::run2".into(), 1, 2),
                ],
            )
            .expect("listed");
        let executed = |name: &str, unrecorded: bool| Executed {
            name: format!("fixture::evals${name}"),
            elapsed: 0.5,
            unrecorded,
        };
        let ran = [
            executed("a::run1", false),
            executed("a::run2", false),
            executed("b::run1", false),
            executed("b::run2", true),
            // Not a generated item: not probtest's to count.
            executed("plain_test", false),
        ];
        let data = session.reconcile(&ran).expect("reconciled");
        let errors: Vec<(&str, u32, Option<&str>)> = data
            .records
            .iter()
            .filter(|r| r.outcome == crate::types::status::Outcome::Error)
            .map(|r| (&*r.case, r.run, r.message.as_deref()))
            .collect();
        assert_eq!(
            errors,
            [
                ("classify::b", 1, Some(DIED_BEFORE_SEEN)),
                ("classify::b", 2, Some(NOT_RECORDED))
            ]
        );
        assert_eq!(data.records.len(), 4);
        assert!(data.warnings[0].starts_with("nextest ran 2 tests that left no record"));
        // Saved in the store: a later reader sees them, and reconciling again adds nothing.
        let again = session.reconcile(&ran).expect("reconciled");
        assert_eq!(again.records.len(), 4);
        assert!(again.warnings.is_empty());
        let _ = fs::remove_dir_all(sessions);
    }
}
