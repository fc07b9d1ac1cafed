//! Early stopping in a test binary (`PROB_STOP`): before a run's body, whether its case's gate
//! is already decided by the runs the session holds, so that the run is recorded as stopped
//! instead of run. Under cargo test a case's runs all run in this process and its counts are
//! here; under nextest each run is a process of its own and the counts are the session store's.

use crate::harness::registry::Case;
use crate::harness::settings::Settings;
use crate::types::key::CaseKey;
use crate::types::stats::stopping::{decided, judged_gate, stoppable};
use crate::types::stats::{Method, Verdict};

/// Why the run must not execute its body, as its record's message says it, when its case is
/// decided; `None` to run it. Only called with `PROB_STOP` set.
pub(crate) fn decision(case: &'static Case, settings: &Settings) -> Option<String> {
    let stats = &settings.stats;
    // A margin against a baseline needs every run too, and `stoppable` refuses it from the
    // settings alone, so the baseline report is never read here.
    let margin = case.bench.needs_every_run();
    let gate = judged_gate(
        crate::model::effective_gate(case.bench.gate(), stats),
        margin,
        stats,
    )?;
    if !stoppable(Some(&gate), margin, stats) {
        return None;
    }
    let (counts, stopped) = if settings.per_test {
        let info = case.info();
        let session = crate::harness::recorder::session_of_process().ok()?;
        let key = CaseKey::new(&info.package, &info.module, &info.case);
        crate::store::case_counts::tally(&session, key).ok()?
    } else {
        case.tally()
    };
    let planned = u64::from(case.bench.runs());
    let ran: u64 = counts.iter().sum();
    // Runs in flight are not finished: they may still go either way, like the runs to come.
    let remaining = planned.saturating_sub(ran + stopped);
    let verdict = decided(&gate, stats, counts, remaining)?;
    let word = match verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Undecided => "UNDECIDED",
    };
    let how = if gate.method == Some(Method::Sequential) {
        ", sequential"
    } else {
        ""
    };
    Some(format!(
        "probability gate: decided after {ran}/{planned} runs ({word}{how})"
    ))
}
