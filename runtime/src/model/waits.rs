//! What a session's runs waited for limits and replayed from the cassette, summed from its
//! records: the summary says when waiting, not calling, took the time, and which cost was
//! replayed rather than spent.
//!
//! Layer: model. Imports only `crate::types` (and the model's records).

use crate::model::record::Record;
use crate::types::sum::saturating_add;

/// The waits and replays of a session's counted runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Waiting {
    /// Seconds waited per limit, the longest first; a run's wait goes to the limit it waited
    /// for longest.
    pub(crate) by_key: Vec<(String, f64)>,
    /// Seconds waited in all.
    pub(crate) waited: f64,
    /// Seconds the runs themselves took (their `elapsed`, which leaves waits out).
    pub(crate) run_time: f64,
    /// Runs that replayed something from the cassette, and the cost they replayed.
    pub(crate) replayed_runs: u64,
    pub(crate) replayed_cost: f64,
}

impl Waiting {
    /// Whether waiting took longer than the runs themselves: then the limit, not the service,
    /// set the pace.
    pub(crate) fn dominated(&self) -> bool {
        self.waited > self.run_time && self.waited > 0.0
    }
}

/// Sums the waits and replays of `records`, retries left out as the rows leave them out.
pub(crate) fn waiting(records: &[Record]) -> Waiting {
    let mut waiting = Waiting::default();
    // A plain loop: an iterator adapter costs several calls a record in unoptimized builds, and
    // every summary looks at every record.
    for record in records {
        if record.is_retry() {
            continue;
        }
        waiting.run_time = saturating_add(waiting.run_time, record.elapsed);
        if record.waited > 0.0 {
            waiting.waited = saturating_add(waiting.waited, record.waited);
            let key = record.waited_for.as_deref().unwrap_or("a limit");
            match waiting.by_key.iter_mut().find(|(known, _)| known == key) {
                Some((_, total)) => *total = saturating_add(*total, record.waited),
                None => waiting.by_key.push((key.to_string(), record.waited)),
            }
        }
        if let Some(replayed) = record.replayed {
            waiting.replayed_runs += 1;
            waiting.replayed_cost = saturating_add(waiting.replayed_cost, replayed);
        }
    }
    waiting
        .by_key
        .sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    waiting
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::record;
    use crate::types::status::Outcome;

    #[test]
    fn waits_sum_per_limit_and_replays_apart() {
        let mut records: Vec<Record> = (1..=4)
            .map(|run| record("triage::a", run, Outcome::Pass, 0.5, vec![]))
            .collect();
        records[0].waited = 20.0;
        records[0].waited_for = Some("openai".into());
        records[1].waited = 21.0;
        records[1].waited_for = Some("openai".into());
        records[2].waited = 1.0;
        records[2].waited_for = Some("local".into());
        records[3].replayed = Some(0.5);
        records[3].attempt = 1;
        let waiting = waiting(&records);
        assert_eq!(
            waiting.by_key,
            [("openai".to_string(), 41.0), ("local".to_string(), 1.0)]
        );
        assert_eq!(waiting.waited, 42.0);
        assert!((waiting.run_time - 0.004).abs() < 1e-12);
        assert!(waiting.dominated());
        assert_eq!((waiting.replayed_runs, waiting.replayed_cost), (1, 0.5));
        // A retry is not counted, as rows do not count it.
        records[0].attempt = 2;
        assert_eq!(super::waiting(&records).waited, 22.0);
        assert!(!super::waiting(&records[3..]).dominated());
    }
}
