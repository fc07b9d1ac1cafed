//! The generated items a test binary lists when nextest lists it, appended to the session's
//! log: which case and run each test holds, for reconciling the session with what nextest ran;
//! and the tests a runner is to run, as `cargo probtest run` lists them before running, so that
//! runs that never start are counted as not run.
//!
//! Layer: store.

use std::borrow::Cow;
use std::fs::OpenOptions;
use std::io::{self, Write};

use crate::format::store_lines::Line;
use crate::model::CaseInfo;
use crate::store::session_dir::Session;

impl Session {
    /// Writes the generated items of test binary `binary` (nextest's binary id): `items` are
    /// each a test's name, and the case (an index into `cases`) and run it holds. Creates the
    /// session when it does not exist yet (nextest lists binaries before it runs tests).
    pub fn append_items(
        &self,
        binary: &str,
        cases: Vec<CaseInfo>,
        items: Vec<(String, u32, u32)>,
    ) -> io::Result<()> {
        self.create_log()?;
        self.append_lines(&[Line::Items {
            binary: Cow::Borrowed(binary),
            cases,
            items,
        }])
    }

    /// Writes the tests of test binary `binary` (its id, as nextest names it) that the runner
    /// is to run, by `names`, before it runs them (`cargo probtest run`): the generated items
    /// among them that never start are counted as not run. `label` names the binary to a
    /// reader. Creates the session when it does not exist yet.
    #[cfg(feature = "_cli")]
    pub fn expect_items(&self, binary: &str, label: &str, names: Vec<String>) -> io::Result<()> {
        self.create_log()?;
        self.append_lines(&[Line::Expected {
            binary: Cow::Borrowed(binary),
            label: Cow::Borrowed(label),
            names,
        }])
    }

    /// Creates the session and its log when they do not exist yet.
    fn create_log(&self) -> io::Result<()> {
        if !self.exists() {
            self.create()?;
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.runs_file())?;
        }
        Ok(())
    }

    /// Appends `lines` to the session's log in one write, under its lock.
    fn append_lines(&self, lines: &[Line<'_>]) -> io::Result<()> {
        let mut bytes = Vec::new();
        for line in lines {
            bytes.push(b'\n');
            serde_json::to_writer(&mut bytes, line).map_err(io::Error::other)?;
        }
        self.append_text(&bytes)
    }

    /// Appends `bytes`, lines each after a newline, to the session's log in one write, under
    /// its lock.
    pub(super) fn append_text(&self, bytes: &[u8]) -> io::Result<()> {
        let file = OpenOptions::new().append(true).open(self.runs_file())?;
        file.lock()?;
        let written = (&file).write_all(bytes);
        let unlocked = file.unlock();
        written.and(unlocked)
    }
}
