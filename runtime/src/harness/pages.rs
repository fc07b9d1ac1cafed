//! The HTML report a test process writes at exit when `PROB_HTML` names a file: the whole
//! session as the store holds it so far (every test binary of a `cargo test` rewrites it, the
//! last one with every run), with the earlier sessions' pass fractions for its history.
//!
//! Layer: harness.

use std::io::Write;

use crate::harness::settings::Settings;
use crate::model::Report;

/// Writes the HTML report `PROB_HTML` names, if it names one; a failure is one line on stderr,
/// naming the variable and its value. `joined` says whether this process recorded into the
/// session store; without it, `report` (this process's runs) is all there is.
pub(crate) fn write_html(settings: &Settings, joined: bool, report: &Report) {
    let Some(path) = &settings.html else {
        return;
    };
    let written = render(settings, joined, report).and_then(|page| {
        crate::store::write_file(&path.resolved, page.as_bytes()).map_err(|e| e.to_string())
    });
    if let Err(error) = written {
        let _ = writeln!(
            std::io::stderr().lock(),
            "probtest: PROB_HTML={}: cannot write the HTML report ({error})",
            path.display
        );
    }
}

#[cfg(feature = "html")]
fn render(settings: &Settings, joined: bool, report: &Report) -> Result<String, String> {
    use crate::export::{History, HistorySession};
    use crate::store::{self, Session};
    let sessions = crate::harness::recorder::target_dir()
        .ok()
        .filter(|_| joined)
        .map(|target| store::sessions_dir(&target));
    let Some(sessions) = sessions else {
        return Ok(crate::export::html(report, &History::default()));
    };
    let session = Session::new(&sessions, &settings.session_key);
    let mut whole = match session.load() {
        Ok(data) => data.into_report(),
        // The store could not be read back: this process's runs still make a page.
        Err(_) => report.clone(),
    };
    whole.session = Some(session.key().to_string());
    let history = History {
        sessions: store::earlier_reports(&sessions, session.key())
            .iter()
            .map(|(key, report)| HistorySession::of(key, report))
            .collect(),
        baseline: store::baseline_report(&whole.stats_config)
            .map(|baseline| HistorySession::of("baseline", &baseline)),
    };
    Ok(crate::export::html(&whole, &history))
}

#[cfg(not(feature = "html"))]
fn render(_: &Settings, _: bool, _: &Report) -> Result<String, String> {
    Err("this build of probtest leaves out its `html` feature".to_string())
}
