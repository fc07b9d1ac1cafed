//! What the session store holds of one case, for early stopping (`PROB_STOP`) in a process of
//! one run (nextest's): the case's other runs are other processes', so the decision reads them
//! here. A run still open (in flight, or its process died) is not finished: it counts among the
//! runs that could still change the verdict.
//!
//! Layer: store.

use std::io;

use crate::store::Session;
use crate::types::key::CaseKey;
use crate::types::status::Outcome;

/// The case's finished first attempts in the session: passes, fails and errors, and the runs
/// stopped.
pub(crate) fn tally(session: &Session, key: CaseKey<&str>) -> io::Result<([u64; 3], u64)> {
    let data = session.load()?;
    let mut counts = [0u64; 3];
    let mut stopped = 0;
    for (record, open) in data.records.iter().zip(&data.open) {
        if open.is_some() || record.is_retry() || record.key() != key {
            continue;
        }
        match record.outcome {
            Outcome::Pass => counts[0] += 1,
            Outcome::Fail => counts[1] += 1,
            Outcome::Error => counts[2] += 1,
            Outcome::Stopped => stopped += 1,
        }
    }
    Ok((counts, stopped))
}
