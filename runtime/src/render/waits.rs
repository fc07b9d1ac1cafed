//! The summary's lines about limits and the cassette: the cost replayed rather than spent, and
//! the wait when it took longer than the runs themselves (`waited 41 s for openai`).
//!
//! Layer: render.

use std::fmt::Write;

use crate::model::waits::{waiting, Waiting};
use crate::model::Report;
use crate::render::text::money;

/// `$0.0420 of it from the cassette (12 runs), not spent`, when runs replayed cost: what the
/// summary, the Markdown and the HTML say of the cost that was not spent.
#[cfg(any(feature = "html", feature = "_cli"))]
pub fn replayed_text(report: &Report) -> Option<String> {
    replayed_of(&waiting(&report.records))
}

fn replayed_of(waiting: &Waiting) -> Option<String> {
    let runs = waiting.replayed_runs;
    (runs > 0).then(|| {
        format!(
            "{} of it from the cassette ({runs} run{}), not spent",
            money(waiting.replayed_cost),
            if runs == 1 { "" } else { "s" },
        )
    })
}

/// Appends the lines, if there is anything to say.
pub(crate) fn lines(report: &Report, out: &mut String) {
    let waiting = waiting(&report.records);
    if let Some(replayed) = replayed_of(&waiting) {
        let _ = writeln!(out, "  Replayed: {replayed}");
    }
    if waiting.dominated() {
        let keys: Vec<String> = waiting
            .by_key
            .iter()
            .map(|(key, seconds)| format!("waited {} for {key}", seconds_text(*seconds)))
            .collect();
        let _ = writeln!(
            out,
            "  Limits:  {}; the runs themselves took {}",
            keys.join(", "),
            seconds_text(waiting.run_time)
        );
    }
}

/// Whole seconds from 10 s on, one decimal below.
fn seconds_text(seconds: f64) -> String {
    if seconds >= 10.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{seconds:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::{build, record};
    use crate::types::status::Outcome;

    #[test]
    fn a_wait_longer_than_the_runs_is_said_and_replayed_cost_apart() {
        let mut records: Vec<_> = (1..=3)
            .map(|run| record("triage::a", run, Outcome::Pass, 0.002, vec![]))
            .collect();
        records[0].waited = 40.6;
        records[0].waited_for = Some("openai".into());
        records[1].replayed = Some(0.002);
        let mut out = String::new();
        lines(&build(records.clone()), &mut out);
        assert_eq!(
            out,
            "  Replayed: $0.0020 of it from the cassette (1 run), not spent\n  Limits:  waited 41 s for openai; the runs themselves took 0.0 s\n"
        );
        records[0].waited = 0.0001;
        records[1].replayed = None;
        let mut out = String::new();
        records.iter_mut().for_each(|r| r.elapsed = 1.0);
        lines(&build(records), &mut out);
        assert_eq!(out, "");
    }
}
