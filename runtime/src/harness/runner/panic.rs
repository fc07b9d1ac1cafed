//! The panic hook: notes each run's panic (message, place, whether it was a failed assertion,
//! the user's frames with `PROB_BACKTRACE`) in the run context, for the runner to classify the
//! run by; and how a panic's text reads as a failed assertion.
//!
//! Layer: harness.

use std::sync::Once;

use crate::harness::context::{self, PanicNote};

/// Installs the panic hook that notes each run's panic message and location, then defers to
/// the hook that was there before (so libtest still prints the panic as usual).
pub(super) fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let assertion = context::take_assertion();
            if let Some(state) = context::current() {
                let message = context::panic_message(info.payload());
                let location = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let frames = crate::harness::frames::capture();
                state.note_panic(PanicNote {
                    assertion: assertion || is_std_assertion(&message),
                    message,
                    location,
                    frames,
                });
            }
            previous(info);
        }));
    });
}

/// Whether a panic message is one of std's assertion messages (raised from a helper function,
/// outside the bench body's own assertion macros), or pretty_assertions'.
pub(super) fn is_std_assertion(message: &str) -> bool {
    message.starts_with("assertion failed: ") || message.starts_with("assertion `left ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_assertion_messages_are_recognised() {
        assert!(is_std_assertion("assertion failed: x > 1"));
        assert!(is_std_assertion(
            "assertion `left == right` failed\n  left: 1\n right: 2"
        ));
        assert!(is_std_assertion("assertion `left != right` failed: custom"));
        assert!(!is_std_assertion(
            "called `Option::unwrap()` on a `None` value"
        ));
        assert!(!is_std_assertion("index out of bounds"));
    }
}
