//! What a run waited for its limits: the keys and their waits, and the wait in progress. The
//! run's state keeps it apart from its usage, since a timeout's watcher reads it while the body
//! runs.
//!
//! Layer: harness.

use std::time::{Duration, Instant};

/// What a run waited for its limits: the keys and their waits, the longest first when shown.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Waits {
    /// Since when the run has been waiting, while it waits.
    pub(super) since: Option<Instant>,
    /// The limit the run is waiting for, while it waits.
    pub(super) waiting_for: Option<String>,
    /// Each key and how long the run waited for it.
    pub(super) by_key: Vec<(String, Duration)>,
}

impl Waits {
    /// Everything waited, the wait in progress included.
    pub(super) fn total(&self, now: Instant) -> Duration {
        let ongoing = self.since.map_or(Duration::ZERO, |since| now - since);
        self.by_key.iter().map(|(_, wait)| *wait).sum::<Duration>() + ongoing
    }

    pub(super) fn add(&mut self, key: &str, wait: Duration) {
        self.since = None;
        self.waiting_for = None;
        match self.by_key.iter_mut().find(|(known, _)| known == key) {
            Some((_, total)) => *total += wait,
            None => self.by_key.push((key.to_string(), wait)),
        }
    }

    /// Ends the wait in progress at `now`, as a wait for its key.
    pub(super) fn end_ongoing(&mut self, now: Instant) {
        if let (Some(since), Some(key)) = (self.since, self.waiting_for.take()) {
            self.add(&key, now - since);
        }
    }

    /// The key waited for longest, if any wait was recorded.
    pub(super) fn longest(&self) -> Option<&str> {
        self.by_key
            .iter()
            .filter(|(_, wait)| !wait.is_zero())
            .max_by_key(|(_, wait)| *wait)
            .map(|(key, _)| key.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_add_up_per_key() {
        let mut waits = Waits::default();
        let start = Instant::now();
        waits.since = Some(start);
        assert!(waits.total(start + Duration::from_secs(2)) >= Duration::from_secs(2));
        waits.add("a", Duration::from_secs(1));
        waits.add("b", Duration::from_secs(3));
        waits.add("a", Duration::from_secs(1));
        assert_eq!(waits.since, None);
        assert_eq!(waits.total(Instant::now()), Duration::from_secs(5));
        assert_eq!(waits.longest(), Some("b"));
    }

    #[test]
    fn a_wait_in_progress_ends_as_a_wait_for_its_key() {
        let mut waits = Waits::default();
        let start = Instant::now();
        waits.since = Some(start);
        waits.waiting_for = Some("solo".to_string());
        waits.end_ongoing(start + Duration::from_millis(300));
        assert_eq!(waits.since, None);
        assert_eq!(waits.waiting_for, None);
        assert_eq!(
            waits.by_key,
            [("solo".to_string(), Duration::from_millis(300))]
        );
        assert_eq!(waits.longest(), Some("solo"));
        waits.end_ongoing(start + Duration::from_secs(5));
        assert_eq!(
            waits.total(start),
            Duration::from_millis(300),
            "nothing in progress"
        );
    }
}
