//! The generated items a test binary lists when nextest lists it, appended to the session's
//! log: which case and run each test holds, for reconciling the session with what nextest ran.
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
    pub(crate) fn append_items(
        &self,
        binary: &str,
        cases: Vec<CaseInfo>,
        items: Vec<(String, u32, u32)>,
    ) -> io::Result<()> {
        if !self.exists() {
            self.create()?;
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.runs_file())?;
        }
        self.append_lines(&[Line::Items {
            binary: Cow::Borrowed(binary),
            cases,
            items,
        }])
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
