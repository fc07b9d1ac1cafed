//! The other report paths of a session: processes of one session can name different reports,
//! each covering the whole session, so the lock file lists every path (in hex, with the
//! statistics settings its rows are judged with) and every change is made to each.
//!
//! Layer: store.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use crate::store::live::file_io::{read_all, write_at};
use crate::store::live::{Handles, ReportFile};
use crate::types::stats::StatsConfig;

impl ReportFile {
    /// This path's line in the lock file: its bytes in hex, and the statistics settings its
    /// rows are judged with when they are not the defaults.
    fn registration(&self) -> io::Result<String> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let bytes = self.path_bytes();
        let mut line = String::with_capacity(bytes.len() * 2 + 2);
        for &byte in bytes {
            line.push(char::from(DIGITS[usize::from(byte >> 4)]));
            line.push(char::from(DIGITS[usize::from(byte & 15)]));
        }
        line.push('\t');
        if self.stats != StatsConfig::default() {
            line.push_str(&serde_json::to_string(&self.stats).map_err(io::Error::other)?);
        }
        line.push('\n');
        Ok(line)
    }

    /// The session's other report paths. Processes of one session can name different reports
    /// (per-package settings), and each report covers the whole session, so every change is
    /// made to every path: the lock file lists them, and a path joins the list at its first
    /// change (which builds its report from the store). A list of one path is read and
    /// compared, never parsed.
    pub(super) fn siblings(&self, handles: &mut Handles, lock: &File) -> io::Result<()> {
        let listed = read_all(lock)?;
        if handles.registered.as_ref() == Some(&listed) {
            return Ok(());
        }
        let own = self.registration()?;
        let own_hex = own.split('\t').next().unwrap_or_default();
        let mut siblings = Vec::new();
        let mut registered = false;
        for line in String::from_utf8_lossy(&listed).lines() {
            let (hex, stats) = line.split_once('\t').unwrap_or((line, ""));
            if hex == own_hex {
                registered = true;
                continue;
            }
            let Some(path) = unhex(hex) else { continue };
            if siblings
                .iter()
                .any(|s: &ReportFile| s.path_bytes() == path.as_slice())
            {
                continue;
            }
            let stats = if stats.is_empty() {
                StatsConfig::default()
            } else {
                serde_json::from_str(stats).unwrap_or_default()
            };
            let path = path_from_bytes(path);
            siblings.push(ReportFile::new(self.session.clone(), path, stats));
        }
        let mut listed = listed;
        if !registered {
            write_at(lock, listed.len() as u64, own.as_bytes())?;
            listed.extend_from_slice(own.as_bytes());
        }
        handles.siblings = siblings;
        handles.registered = Some(listed);
        Ok(())
    }
}

/// Bytes written as two hex digits each, back; `None` if they are not.
fn unhex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(hex.get(at..at + 2)?, 16).ok())
        .collect()
}

/// A path from the bytes of [`ReportFile::path_bytes`], written by a process of this machine.
#[cfg(unix)]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(bytes))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}
