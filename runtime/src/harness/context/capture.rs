//! What a thread records while a call on it listens: the usage and cost recorded on this thread
//! meanwhile, apart from what other threads of the same run record. The cassette
//! (`probtest::cached`) listens while it records a call, to store what the call recorded.
//!
//! Layer: harness.

use std::cell::RefCell;

use crate::types::usage::TokenUsage;

thread_local! {
    /// The usage and cost recorded on this thread while a call listens.
    static CAPTURE: RefCell<Option<(Vec<TokenUsage>, f64)>> = const { RefCell::new(None) };
}

/// Calls `call`, and collects the usage and cost recorded on this thread meanwhile: calls of
/// one run recorded at once on other threads keep theirs apart.
pub(crate) fn capturing<T>(call: impl FnOnce() -> T) -> (T, (Vec<TokenUsage>, f64)) {
    struct Restore(Option<(Vec<TokenUsage>, f64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let outer = self.0.take();
            let _ = CAPTURE.try_with(|capture| *capture.borrow_mut() = outer);
        }
    }
    let outer = CAPTURE.with(|capture| capture.borrow_mut().replace((Vec::new(), 0.0)));
    let restore = Restore(outer);
    let value = call();
    let captured = CAPTURE
        .with(|capture| capture.borrow_mut().take())
        .unwrap_or_default();
    drop(restore);
    // A call recorded inside another's is part of the outer one's too.
    for usage in &captured.0 {
        note_usage(usage);
    }
    note_cost(captured.1);
    (value, captured)
}

/// Notes usage recorded on this thread, when a call listens here.
pub(super) fn note_usage(usage: &TokenUsage) {
    let _ = CAPTURE.try_with(|capture| {
        if let Some((entries, _)) = capture.borrow_mut().as_mut() {
            entries.push(usage.clone());
        }
    });
}

/// Notes a cost recorded on this thread, when a call listens here.
pub(super) fn note_cost(amount: f64) {
    let _ = CAPTURE.try_with(|capture| {
        if let Some((_, cost)) = capture.borrow_mut().as_mut() {
            *cost += amount;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(model: &str) -> TokenUsage {
        TokenUsage {
            model: model.to_string(),
            input_tokens: 10,
            ..TokenUsage::default()
        }
    }

    #[test]
    fn a_recorded_call_takes_what_its_own_thread_recorded_and_an_outer_call_too() {
        note_usage(&usage("outside"));
        let (value, (outer_usage, outer_cost)) = capturing(|| {
            note_cost(0.5);
            let other = std::thread::spawn(|| {
                capturing(|| {
                    note_usage(&usage("other thread"));
                })
                .1
            });
            let ((), inner) = capturing(|| note_usage(&usage("inner")));
            assert_eq!(inner.0, [usage("inner")]);
            let other = other.join().expect("join");
            assert_eq!(other.0, [usage("other thread")]);
            7
        });
        assert_eq!(value, 7);
        assert_eq!(outer_usage, [usage("inner")]);
        assert_eq!(outer_cost, 0.5);
        CAPTURE.with(|capture| assert!(capture.borrow().is_none()));
    }
}
